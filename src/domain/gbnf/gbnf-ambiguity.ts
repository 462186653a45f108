import { type GbnfRules, Kind } from "./gbnf-rules.js";
import { GbnfStacks, type Stack, stackKey, TooManyStacks } from "./gbnf-stacks.js";

/**
 * How many parses of one text a grammar can keep at once, found by reading texts through the
 * grammar's stacks as llama.cpp would.
 *
 * llama.cpp applies a grammar to every token of the vocabulary at every step, against every
 * stack: an ambiguous grammar, whose stacks multiply as text is read (`("a"{0,30}){0,30}`,
 * `r ::= "a" r "b" | "a" r "c" | "x"`, `(a? a? [0-9])*`), costs seconds per token within a few
 * tokens, and more at each one after. Within one token llama.cpp follows each stack's successors
 * apart (it keeps one copy of each only between tokens), so the work of a token's characters
 * grows with the number of ways to read them: `paths` below.
 *
 * The search reads texts breadth first, one character of each class the grammar distinguishes,
 * and fails the grammar on the first text after which the stacks or the paths pass their bounds.
 * States already met (their stacks, cut to their top frames, and their paths) are not read
 * again; the search stops, passing the grammar, after a bounded amount of work: an ambiguity
 * that only a long or deeply nested text reaches can be missed. Deterministic grammars keep one
 * stack and one path, and pass.
 */

/** Stacks llama.cpp may hold at once. */
export const MAX_STACKS = 64;
/** Ways of reading one text. */
export const MAX_PATHS = 512;
/** Longest text read. */
const MAX_DEPTH = 64;
/**
 * Characters over which ways of reading are counted: about a long token's length. Between tokens
 * llama.cpp keeps one copy of each stack, so paths start again at one every WINDOW characters.
 */
const WINDOW = 24;
/** Stack frames that tell states apart: deeper nesting reads as the same state. */
const SIGNATURE_FRAMES = 6;
/** Stack steps the search may take (about 25 ms on a 2-core VM). */
const WORK_BUDGET = 60_000;

export type AmbiguityCheck =
  | { ok: true; complete: boolean }
  | { ok: false; text: string; stacks: number; paths: number };

interface State {
  text: string;
  stacks: Map<string, { stack: Stack; paths: number }>;
}

export function checkAmbiguity(grammar: GbnfRules): AmbiguityCheck {
  const machine = new GbnfStacks(grammar, MAX_STACKS * 4);
  const classes = characterClasses(grammar);
  const first = step(() => [...machine.initial()].map(([key, stack]) => [key, stack, 1] as const), "");
  if (!("stacks" in first) || first.stacks.size > MAX_STACKS) return tooMany(first);
  const seen = new Set([signature(first)]);
  const budget = { work: WORK_BUDGET };
  let queue: State[] = [first];
  for (let depth = 1; depth <= MAX_DEPTH && queue.length > 0; depth++) {
    const next: State[] = [];
    for (const state of queue) {
      const tops = new Set<number>();
      for (const { stack } of state.stacks.values()) if (stack.length > 0) tops.add(stack[stack.length - 1]!);
      for (const code of classes) {
        if (![...tops].some((top) => machine.matches(top, code))) continue;
        const after = step(() => successors(machine, state, code, budget), state.text + String.fromCodePoint(code));
        if (!("stacks" in after) || after.stacks.size > MAX_STACKS || after.paths > MAX_PATHS) return tooMany(after);
        if (budget.work < 0) return { ok: true, complete: false };
        // Between tokens llama.cpp keeps one copy of each stack: ways of reading start again.
        if (depth % WINDOW === 0) for (const entry of after.stacks.values()) entry.paths = 1;
        const sig = signature(after);
        if (after.stacks.size > 0 && !seen.has(sig)) {
          seen.add(sig);
          next.push(after);
        }
      }
    }
    queue = next;
  }
  return { ok: true, complete: queue.length === 0 };
}

type Successor = readonly [key: string, stack: Stack, paths: number];

/** The stacks after `code`, each with the ways of reaching it, counting the work done. */
function* successors(machine: GbnfStacks, state: State, code: number, budget: { work: number }) {
  for (const { stack, paths } of state.stacks.values()) {
    budget.work -= 1 + stack.length;
    for (const [key, s] of machine.accept(stack, code)) yield [key, s, paths] as Successor;
  }
}

/** A state from its stacks, merging the ways of reaching each; TooManyStacks as `{text}` alone. */
function step(stacks: () => Iterable<Successor>, text: string): (State & { paths: number }) | { text: string } {
  const state = { text, stacks: new Map<string, { stack: Stack; paths: number }>(), paths: 0 };
  try {
    for (const [key, stack, paths] of stacks()) {
      const entry = state.stacks.get(key);
      if (entry) entry.paths += paths;
      else state.stacks.set(key, { stack, paths });
      state.paths += paths;
    }
  } catch (error) {
    if (!(error instanceof TooManyStacks)) throw error;
    return { text };
  }
  return state;
}

function tooMany(state: (State & { paths: number }) | { text: string }): AmbiguityCheck {
  if (!("stacks" in state)) return { ok: false, text: state.text, stacks: MAX_STACKS * 4, paths: MAX_STACKS * 4 };
  return { ok: false, text: state.text, stacks: state.stacks.size, paths: state.paths };
}

function signature(state: State): string {
  return [...state.stacks.values()]
    .map(({ stack, paths }) => `${stackKey(stack.slice(-SIGNATURE_FRAMES))}:${paths}`)
    .sort()
    .join("|");
}

/**
 * One code point of each run of characters the grammar cannot tell apart: the characters and
 * range ends it names split the code points into runs that every element takes whole or not at
 * all. NUL is left out (llama.cpp never matches it).
 */
function characterClasses(grammar: GbnfRules): number[] {
  const cuts = new Set<number>([1, 0xd800, 0xe000]);
  for (const rule of grammar.rules) {
    rule.forEach((e, i) => {
      if (e.kind === Kind.Char || e.kind === Kind.CharNot || e.kind === Kind.CharAlt) {
        const upper = rule[i + 1];
        const last = upper?.kind === Kind.CharRangeUpper ? upper.value : e.value;
        cuts.add(e.value);
        cuts.add(last + 1);
      }
    });
  }
  return [...cuts].filter((c) => c >= 1 && c <= 0x10ffff && (c < 0xd800 || c > 0xdfff)).sort((a, b) => a - b);
}
