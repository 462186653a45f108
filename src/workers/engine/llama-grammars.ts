import type { Llama, LlamaGrammar } from "node-llama-cpp";
import { checkGbnf } from "../../domain/gbnf/check-gbnf.js";
import { checkJsonSchema, INTEGER_DIGITS } from "../../domain/json-schema-subset.js";
import type { OutputConstraint } from "../../domain/generation.js";
import { AppError } from "../../errors.js";

/** Compiled grammars kept per engine: a request with the same schema or GBNF reuses one. */
const CAPACITY = 64;

/**
 * Compiles output constraints into llama.cpp grammars, once each: a bounded cache keyed by the
 * constraint's text, least recently used out first. A compiled grammar holds no state of a
 * generation (each request takes a fresh LlamaGrammarEvaluationState), so requests share it.
 */
export class LlamaGrammars {
  private readonly cache = new Map<string, Promise<LlamaGrammar>>();

  constructor(private readonly llama: Llama) {}

  /** The grammar of `constraint`; one that does not compile is a 400 naming `response_format`. */
  get(constraint: OutputConstraint): Promise<LlamaGrammar> {
    const key =
      constraint.type === "gbnf" ? `gbnf\u0000${constraint.grammar}` : `json\u0000${JSON.stringify(constraint.schema)}`;
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const compiling =
      constraint.type === "gbnf" ? this.compileGbnf(constraint.grammar) : this.compileSchema(constraint.schema);
    this.cache.set(key, compiling);
    // A constraint that failed is not kept: its refusal is cheap to repeat, and it must not evict others.
    compiling.catch(() => this.cache.delete(key));
    while (this.cache.size > CAPACITY) this.cache.delete(this.cache.keys().next().value!);
    return compiling;
  }

  private async compileGbnf(grammar: string): Promise<LlamaGrammar> {
    // The API refused it already; a job from elsewhere must not reach llama.cpp unchecked.
    const check = checkGbnf(grammar);
    if (!check.ok) throw new AppError("invalid_request", check.reason, { param: "response_format" });
    try {
      return await this.llama.createGrammar({ grammar });
    } catch (cause) {
      throw new AppError(
        "invalid_request",
        "The grammar does not parse: it must be GBNF (llama.cpp's grammar format) with a rule named root, and no rule may be left-recursive.",
        { param: "response_format", cause },
      );
    }
  }

  private async compileSchema(schema: unknown): Promise<LlamaGrammar> {
    const check = checkJsonSchema(schema);
    if (!check.ok) {
      throw new AppError("invalid_request", `${check.reason} (at ${check.at} in the schema)`, {
        param: "response_format",
      });
    }
    try {
      const built = await this.llama.createGrammarForJsonSchema(check.schema as never);
      return await this.llama.createGrammar({ grammar: jsonGrammarText(built.grammar) });
    } catch (cause) {
      throw new AppError(
        "invalid_request",
        "The schema's grammar is too large for llama.cpp: lower its lengths and counts (maxLength, maxItems…) or its nesting.",
        { param: "response_format", cause },
      );
    }
  }
}

/**
 * node-llama-cpp's grammar for a JSON schema, changed where its output could fail the schema or
 * never end:
 * - it ends the value with four newlines and any more (its chat session stops on those): cut,
 *   so that the grammar is complete at the value's end and llama.cpp then allows only the
 *   end-of-generation token;
 * - its integers take an exponent, and 1e-5 is not an integer: integers are written plainly,
 *   with at most INTEGER_DIGITS digits (json-schema-subset.ts accepts bounds as wide as that);
 * - its numbers take exponents of up to 16 digits, which overflow a double: two at most;
 * - its strings take \u escapes of UTF-16 surrogates: a pair counts as one character for
 *   JSON Schema's lengths, so escapes are those of non-surrogates (other characters are
 *   written as themselves).
 * A version of node-llama-cpp that writes these rules differently fails here, loudly
 * (json-schema-grammar tests), rather than generating what the schema refuses.
 */
export function jsonGrammarText(grammar: string): string {
  const lines = grammar.split("\n");
  const tail = ' "\\n\\n\\n\\n" [\\n]*';
  if (!lines[0]?.startsWith("root ::= ") || !lines[0].endsWith(tail)) {
    throw new Error("node-llama-cpp's JSON schema grammar changed its ending: llama-grammars.ts needs updating");
  }
  lines[0] = lines[0].slice(0, -tail.length);
  const digits = '("0" | [1-9] [0-9]{0,15})';
  const integerDigits = `("0" | [1-9] [0-9]{0,${INTEGER_DIGITS - 1}})`;
  const rules: Record<string, string> = {
    "integer-number-rule": `"-"? ${integerDigits}`,
    "fractional-number-rule": `"-"? ${digits} ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})?`,
    "string-char-rule":
      '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt] | "\\\\u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2})',
  };
  const expected: Record<string, string> = {
    "integer-number-rule": `"-"? ${digits} ([eE] [-+]? ${digits})?`,
    "fractional-number-rule": `"-"? ${digits} ("." [0-9]{1,16})? ([eE] [-+]? ${digits})?`,
    "string-char-rule": '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt] | "\\\\u" [0-9a-fA-F]{4}',
  };
  return lines
    .map((line) => {
      const name = line.slice(0, line.indexOf(" ::= "));
      const body = rules[name];
      if (body === undefined) return line;
      if (line !== `${name} ::= ${expected[name]}`) {
        throw new Error(`node-llama-cpp's ${name} changed: llama-grammars.ts needs updating`);
      }
      return `${name} ::= ${body}`;
    })
    .join("\n");
}
