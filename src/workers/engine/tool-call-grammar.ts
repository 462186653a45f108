import type { Llama, LlamaGrammar } from "node-llama-cpp";
import type { ToolFunction, ToolUse } from "../../domain/generation.js";
import { checkJsonSchema } from "../../domain/json-schema-subset.js";
import { AppError } from "../../errors.js";
import { jsonGrammarText } from "./llama-grammars.js";
import type { ToolCallFormat } from "../../templates/template-protocol.js";

/**
 * The GBNF grammar of an answer made of tool calls, in the model's own call format:
 *
 *   root ::= start call (between prefix call)*        (the repetition only with parallel calls)
 *   call ::= ("name" paramsPrefix <its arguments' JSON schema> | …) suffix
 *
 * `start` is the whole prefix when the answer must be calls from its first token (`required`,
 * a named function), or what follows the trigger when the model has just written it (`auto`).
 * Each function's arguments grammar is response_format's for its JSON schema, its rules renamed
 * into a namespace of their own so that several live in one grammar. A finished grammar leaves
 * the model nothing but its end-of-generation token: the answer ends with its calls.
 */
export async function toolCallGrammar(
  llama: Llama,
  use: ToolUse,
  format: ToolCallFormat,
  from: "prefix" | "trigger",
): Promise<LlamaGrammar> {
  const callable =
    typeof use.choice === "object"
      ? use.tools.filter((t) => t.name === (use.choice as { name: string }).name)
      : use.tools;
  const rules: string[] = [];
  const alternatives: string[] = [];
  for (const [i, tool] of callable.entries()) {
    const argumentsRoot = `f${i}-root`;
    rules.push(...namespaced(await argumentsGrammar(llama, tool), `f${i}-`));
    alternatives.push(`${literal(tool.name)} ${literal(format.paramsPrefix)} ${argumentsRoot}`);
  }
  const afterTrigger = format.prefix.startsWith(format.trigger)
    ? format.prefix.slice(format.trigger.length)
    : format.prefix;
  const start = from === "prefix" ? format.prefix : afterTrigger;
  const more = use.parallel ? ` (${literal(format.between + format.prefix)} call)*` : "";
  const grammar = [
    `root ::= ${literal(start)} call${more}`,
    `call ::= (${alternatives.join(" | ")}) ${literal(format.suffix)}`,
    ...rules,
  ].join("\n");
  return llama.createGrammar({ grammar });
}

/**
 * A tool's arguments grammar (an object with no properties when it states no parameters): the
 * same JSON-schema subset and grammar as response_format's (llama-grammars.ts), so that the
 * arguments validate against the schema.
 */
async function argumentsGrammar(llama: Llama, tool: ToolFunction): Promise<string> {
  const check = checkJsonSchema(tool.parameters ?? { type: "object", properties: {} });
  if (!check.ok) {
    throw new AppError("invalid_request", `The parameters of tool ${tool.name}: ${check.reason} (at ${check.at})`, {
      param: "tools",
    });
  }
  try {
    return jsonGrammarText((await llama.createGrammarForJsonSchema(check.schema as never)).grammar);
  } catch (cause) {
    throw new AppError(
      "invalid_request",
      `The parameters of tool ${tool.name} make a grammar too large for llama.cpp: lower their lengths and counts or nesting.`,
      { param: "tools", cause },
    );
  }
}

/** A GBNF string literal of `text` (JSON's escapes are GBNF's). Empty text is the empty sequence. */
function literal(text: string): string {
  return text === "" ? '""' : JSON.stringify(text);
}

/** The rules of a grammar with every rule name prefixed by `prefix`. */
function namespaced(grammar: string, prefix: string): string[] {
  const lines = grammar.split("\n").filter((line) => line.trim() !== "");
  const defined = new Set(lines.map((line) => line.slice(0, line.indexOf("::=")).trim()));
  return lines.map((line) => {
    const at = line.indexOf("::=");
    const name = line.slice(0, at).trim();
    const body = renameRules(line.slice(at + 3), defined, prefix);
    return `${prefix}${name} ::=${body}`;
  });
}

/** `body` with each reference to a rule in `defined` prefixed; string literals and character classes left as they are. */
function renameRules(body: string, defined: ReadonlySet<string>, prefix: string): string {
  let out = "";
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '"' || c === "[") {
      const close = c === '"' ? '"' : "]";
      let j = i + 1;
      while (j < body.length && body[j] !== close) j += body[j] === "\\" ? 2 : 1;
      out += body.slice(i, j + 1);
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < body.length && /[A-Za-z0-9_-]/.test(body[j]!)) j++;
      const word = body.slice(i, j);
      out += defined.has(word) ? prefix + word : word;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
