import { type Element, type GbnfRules, Kind } from "./gbnf-rules.js";

/**
 * The parse stacks llama.cpp keeps for a grammar (llama_grammar_advance_stack and
 * llama_grammar_accept, restated): a stack is the positions still to be matched, innermost last,
 * and its top is always a character element. Reading a character replaces each stack whose top
 * matches by the stacks that follow; llama.cpp keeps one copy of each, and applying the grammar
 * to a token costs in proportion to how many there are.
 */

/** A position: rule `p >> SHIFT`, element `p & MASK`. */
const SHIFT = 17;
const MASK = (1 << SHIFT) - 1;
const at = (rule: number, index: number) => rule * (MASK + 1) + index;

export type Stack = readonly number[];

export const stackKey = (stack: Stack): string => stack.join(",");

/** Raised when following one step would make more than `limit` stacks. */
export class TooManyStacks extends Error {}

export class GbnfStacks {
  constructor(
    private readonly grammar: GbnfRules,
    /** The most stacks one step may make before it gives up (TooManyStacks). */
    private readonly limit: number,
  ) {}

  element(position: number): Element {
    return this.grammar.rules[Math.floor(position / (MASK + 1))]![position & MASK]!;
  }

  /** The stacks before any character: one per way into the root rule. */
  initial(): Map<string, Stack> {
    const out = new Map<string, Stack>();
    for (const start of this.alternatives(this.grammar.root)) this.advance(this.isEnd(start) ? [] : [start], out);
    return out;
  }

  /** The stacks after reading `code` from `stack`, each once. */
  accept(stack: Stack, code: number): Map<string, Stack> {
    const out = new Map<string, Stack>();
    const top = stack[stack.length - 1];
    if (top === undefined || !this.matches(top, code)) return out;
    const rest = stack.slice(0, -1);
    const next = this.afterChar(top);
    this.advance(this.isEnd(next) ? rest : [...rest, next], out);
    return out;
  }

  /** Whether the character element at `position` (with its class) takes `code`. */
  matches(position: number, code: number): boolean {
    let p = position;
    const first = this.element(p);
    if (first.kind === Kind.CharAny) return true;
    const positive = first.kind === Kind.Char;
    let found = false;
    for (;;) {
      const e = this.element(p);
      const upper = this.element(p + 1);
      if (upper.kind === Kind.CharRangeUpper) {
        found ||= e.value <= code && code <= upper.value;
        p += 2;
      } else {
        found ||= e.value === code;
        p += 1;
      }
      if (this.element(p).kind !== Kind.CharAlt) break;
    }
    return found === positive;
  }

  /** The position after the character element (class) at `position`. */
  private afterChar(position: number): number {
    let p = position;
    if (this.element(p).kind === Kind.CharAny) return p + 1;
    do p += this.element(p + 1).kind === Kind.CharRangeUpper ? 2 : 1;
    while (this.element(p).kind === Kind.CharAlt);
    return p;
  }

  private isEnd(position: number): boolean {
    const kind = this.element(position).kind;
    return kind === Kind.End || kind === Kind.Alt;
  }

  /** The first position of each alternative of `rule`. */
  private alternatives(rule: number): number[] {
    const elements = this.grammar.rules[rule]!;
    const starts = [at(rule, 0)];
    elements.forEach((e, i) => {
      if (e.kind === Kind.Alt) starts.push(at(rule, i + 1));
    });
    return starts;
  }

  /** Expands rule references at the top until every stack's top is a character (or it is empty). */
  private advance(stack: Stack, out: Map<string, Stack>): void {
    const top = stack[stack.length - 1];
    if (top === undefined || this.element(top).kind !== Kind.RuleRef) {
      const key = stackKey(stack);
      if (!out.has(key)) {
        if (out.size >= this.limit) throw new TooManyStacks();
        out.set(key, stack);
      }
      return;
    }
    const rest = stack.slice(0, -1);
    const next = top + 1;
    const base = this.isEnd(next) ? rest : [...rest, next];
    for (const start of this.alternatives(this.element(top).value)) {
      this.advance(this.isEnd(start) ? base : [...base, start], out);
    }
  }
}
