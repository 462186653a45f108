import { checkAmbiguity, MAX_PATHS, MAX_STACKS } from "./gbnf-ambiguity.js";
import { GbnfError, parseGbnf } from "./gbnf-rules.js";
import { leftRecursiveRule } from "./left-recursion.js";

export type GbnfCheck = { ok: true } | { ok: false; reason: string };

/**
 * Whether a request's GBNF grammar may run: it parses as llama.cpp parses it, within Hearth's
 * limits, no rule can begin with itself, and no text read through it multiplies its parses past
 * what a step can afford (gbnf-ambiguity.ts). docs/api.md ("Structured output") and
 * docs/security.md ("Grammars") say what is refused and why.
 */
export function checkGbnf(text: string): GbnfCheck {
  let rules: ReturnType<typeof parseGbnf>;
  try {
    rules = parseGbnf(text);
  } catch (error) {
    if (!(error instanceof GbnfError)) throw error;
    const where = error.at === undefined ? "" : ` (at ${lineAndColumn(text, error.at)})`;
    return { ok: false, reason: `The grammar does not parse: ${error.message}${where}` };
  }
  const recursive = leftRecursiveRule(rules);
  if (recursive !== undefined) {
    return {
      ok: false,
      reason: `The rule "${userName(recursive)}" can begin with itself (left recursion), which llama.cpp cannot follow: recurse on the right instead.`,
    };
  }
  const ambiguity = checkAmbiguity(rules);
  if (!ambiguity.ok) {
    return {
      ok: false,
      reason:
        `The grammar is too ambiguous: after ${JSON.stringify(ambiguity.text)} it keeps ${ambiguity.stacks} parses ` +
        `(${ambiguity.paths} ways of reading that text) at once, past the ${MAX_STACKS} parses and ${MAX_PATHS} ways ` +
        "a step can afford; each token would cost seconds. Make each choice decidable from the next character " +
        "(no optional or repeated item that can match what follows it), and avoid nested bounded repetitions.",
    };
  }
  return { ok: true };
}

/** A group's or repetition's rule is named after its rule (llama.cpp's `name_N`); names have no "_" otherwise. */
const userName = (name: string) => name.replace(/_\d+$/, "");

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}
