import type { Llama } from "node-llama-cpp";
import { beforeAll, describe, expect, it } from "vitest";
import { checkGbnf } from "../../../src/domain/gbnf/check-gbnf.js";
import { checkAmbiguity } from "../../../src/domain/gbnf/gbnf-ambiguity.js";
import { GbnfError, parseGbnf } from "../../../src/domain/gbnf/gbnf-rules.js";
import { GbnfStacks } from "../../../src/domain/gbnf/gbnf-stacks.js";

/** Grammars people write: each must pass. */
const USEFUL: Record<string, string> = {
  choice: 'root ::= "yes" | "no" | "maybe"',
  list: 'root ::= item+\nitem ::= "- " [^\\n]+ "\\n"',
  json: String.raw`root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}`,
  arithmetic: String.raw`root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*`,
  date: 'root ::= [0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" [0-3] [0-9]  # a comment',
  csv: 'root ::= row{1,20}\nrow ::= cell ("," cell){0,7} "\\n"\ncell ::= [^,\\n"]{1,32} | "\\"" [^"]{0,64} "\\""',
  unicode: 'root ::= "\\u00e9t\\u00E9 " [\\u4e00-\\u9fff]{1,8} "\\U0001F600"? .',
};

/** Each of these costs llama.cpp seconds per token within a few tokens (measured: docs/security.md). */
const AMBIGUOUS: Record<string, string> = {
  "nested bounded repetitions": 'root ::= (("a"{0,30}){0,30}){0,30}',
  "ambiguous centre recursion": 'root ::= r\nr ::= "a" r "b" | "a" r "c" | "a" r "d" | "x"',
  "optional items in a loop": 'root ::= [0-9] (a? a? a? a? a? [0-9])*\na ::= "a"',
  "words with an optional separator": 'root ::= (word " "?)*\nword ::= [a-z]+',
};

describe("checkGbnf", () => {
  it.each(Object.entries(USEFUL))("passes a useful grammar: %s", (_, grammar) => {
    expect(checkGbnf(grammar)).toEqual({ ok: true });
  });

  it.each(Object.entries(AMBIGUOUS))("refuses %s as too ambiguous, saying after which text", (_, grammar) => {
    const check = checkGbnf(grammar);
    expect(check.ok).toBe(false);
    expect(check.ok === false && check.reason).toMatch(/too ambiguous: after ".*" it keeps \d+ parses/);
  });

  it("refuses left recursion, naming the rule the user wrote", () => {
    expect(checkGbnf('root ::= expr\nexpr ::= (ws expr "+" num) | num\nws ::= " "?\nnum ::= [0-9]')).toEqual({
      ok: false,
      reason: expect.stringContaining('The rule "expr" can begin with itself'),
    });
    expect(checkGbnf('root ::= ("a"? root "b") | "c"')).toMatchObject({ ok: false, reason: /"root" can begin/ });
  });

  it("refuses what does not parse, saying where", () => {
    const cases: [string, RegExp][] = [
      ["root ::= missing", /"missing" is used but never defined/],
      ['item ::= "a"', /no rule named "root"/],
      ['root ::= "open', /not closed/],
      ["root ::= [a-", /not closed/],
      ['root ::= ("a"', /Expected "\)"/],
      ['root ::= "a"{3,1}', /below its lower bound/],
      ['root ::= "a"{2001}', /more than 2000 copies/],
      ['root ::= "\\q"', /Unknown escape/],
      ['root ::= "\\x4"', /exactly 2 hex digits/],
      ['root ::= "a"\nroot ::= "b"', /defined twice/],
      ["root ::= <[42]>", /Token references/],
      ['root ::= "a"\n  "b" ::= x', /line 2, column 3/],
      [`root ::= ${"(".repeat(65)}"a"${")".repeat(65)}`, /nested more than 64 deep/],
      ['root ::= ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"{2000}){60}', /too large/],
    ];
    for (const [grammar, reason] of cases) {
      expect(checkGbnf(grammar), grammar).toEqual({ ok: false, reason: expect.stringMatching(reason) });
    }
  });

  it("keeps the parse stacks llama.cpp keeps: one per way of reading", () => {
    const machine = new GbnfStacks(parseGbnf('root ::= "a"? "a"? "b"'), 100);
    expect(machine.initial().size).toBe(3); // at the first "a", the second "a", or "b"
    const [afterNothing] = [...machine.initial().values()];
    expect(machine.accept(afterNothing!, "a".codePointAt(0)!).size).toBe(2);
    expect(machine.accept(afterNothing!, "c".codePointAt(0)!).size).toBe(0);
    expect(checkAmbiguity(parseGbnf('root ::= "x"{100} "y"'))).toEqual({ ok: true, complete: false });
    expect(checkAmbiguity(parseGbnf('root ::= "x"{10} "y"'))).toEqual({ ok: true, complete: true });
  });

  it("matches classes as llama.cpp does: ranges, negation, any character", () => {
    const machine = new GbnfStacks(parseGbnf("root ::= [a-cx] [^0-9\\n] ."), 10);
    const [start] = [...machine.initial().values()];
    const code = (c: string) => c.codePointAt(0)!;
    for (const c of "abcx") expect(machine.matches(start!.at(-1)!, code(c)), c).toBe(true);
    for (const c of "dw") expect(machine.matches(start!.at(-1)!, code(c)), c).toBe(false);
    const [second] = [...machine.accept(start!, code("b")).values()];
    expect(machine.matches(second!.at(-1)!, code("é"))).toBe(true);
    expect(machine.matches(second!.at(-1)!, code("5"))).toBe(false);
    expect(machine.matches(second!.at(-1)!, code("\n"))).toBe(false);
    const [third] = [...machine.accept(second!, code("z")).values()];
    expect(machine.matches(third!.at(-1)!, code("🙂"))).toBe(true);
  });
});

// Hearth's parser must read a grammar as llama.cpp's does: what one refuses, the other refuses
// (but for Hearth's own limits, above), so that a 400 is never the only sign of a grammar llama.cpp takes.
describe("parseGbnf against llama.cpp's parser", () => {
  let llama: Llama;
  beforeAll(async () => {
    const { getLlama } = await import("node-llama-cpp");
    llama = await getLlama({ build: "never", gpu: false, progressLogs: false });
  });

  const grammars = [
    ...Object.values(USEFUL),
    ...Object.values(AMBIGUOUS),
    'root ::= "a" | "b"\n\n# trailing comment',
    "root ::= [\\]\\[] [-a] [a-]",
    'root ::= ("a" |\n  "b")',
    'root ::= "a"{2,}',
    'root ::= "a"{,3}',
    'root ::= "a"{ 1 , 3 }',
    "root ::= missing",
    'root ::= "open',
    'root ::= "a" ::= "b"',
    'root ::= "a")',
    "root ::= *",
    'root ::= "\\x4"',
    'root ::= "\\q"',
    'root\n::= "a"',
    'root ::= "a"\r\nnext ::= "b"',
  ];

  it.each(grammars)("agrees on %j", async (grammar) => {
    let ours: string;
    try {
      parseGbnf(grammar);
      ours = "parses";
    } catch (error) {
      if (!(error instanceof GbnfError)) throw error;
      ours = "refused";
    }
    const theirs = await llama.createGrammar({ grammar }).then(
      () => "parses",
      () => "refused",
    );
    expect(ours).toBe(theirs);
  });
});
