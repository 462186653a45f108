/**
 * GBNF text → rules in the form llama.cpp's grammar parser builds (llama-grammar.cpp): each rule a
 * flat list of elements, alternatives separated by ALT, ended by END; a group becomes a rule of its
 * own; `x*`, `x+`, `x?` and `x{m,n}` are written out as llama.cpp writes them (m copies of x, then
 * a chain of optional rules, or a right-recursive rule for no upper bound). Built the same way,
 * the rules reach the same parse stacks as llama.cpp's, which is what gbnf-ambiguity.ts counts.
 *
 * Token references (`<...>`, `!<...>`) are not taken: they name tokens of one vocabulary, and a
 * request's grammar must mean the same on every model. Limits keep the parse itself bounded.
 */

export const Kind = {
  End: 0,
  Alt: 1,
  RuleRef: 2,
  /** A character, or the first of a class: CharAlt and CharRangeUpper elements follow it. */
  Char: 3,
  CharNot: 4,
  CharRangeUpper: 5,
  CharAlt: 6,
  CharAny: 7,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export interface Element {
  readonly kind: Kind;
  /** A code point, or a rule's index for RuleRef. */
  readonly value: number;
}

export interface GbnfRules {
  /** Rule i's elements; every rule ends with End. */
  readonly rules: readonly (readonly Element[])[];
  readonly names: readonly string[];
  readonly root: number;
}

/** A grammar llama.cpp would refuse, or one past Hearth's limits; `at` is a character offset. */
export class GbnfError extends Error {
  constructor(
    message: string,
    readonly at?: number,
  ) {
    super(message);
  }
}

/** Deepest nesting of parenthesised groups (llama.cpp's parser recurses once per level). */
export const MAX_GROUP_NESTING = 64;
/** Most elements once repetitions are written out. */
export const MAX_ELEMENTS = 100_000;
/** llama.cpp's bound on one repetition's count (MAX_REPETITION_THRESHOLD). */
const MAX_REPETITION = 2000;

const isWordChar = (c: string) => /[A-Za-z0-9-]/.test(c);
const isDigit = (c: string) => c >= "0" && c <= "9";

/** Parses `text`; throws GbnfError. */
export function parseGbnf(text: string): GbnfRules {
  return new Parser(text).parse();
}

class Parser {
  private readonly ids = new Map<string, number>();
  private readonly rules: Element[][] = [];
  private readonly defined = new Set<number>();
  private elements = 0;
  private depth = 0;

  constructor(private readonly src: string) {}

  parse(): GbnfRules {
    let pos = this.space(0, true);
    while (pos < this.src.length) pos = this.rule(pos);
    for (const [name, id] of this.ids) {
      if (!this.defined.has(id)) throw new GbnfError(`The rule "${name}" is used but never defined.`);
    }
    const root = this.ids.get("root");
    if (root === undefined || !this.defined.has(root)) throw new GbnfError('The grammar has no rule named "root".');
    const names: string[] = [];
    for (const [name, id] of this.ids) names[id] = name;
    return { rules: this.rules, names, root };
  }

  private symbol(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(name, id);
    }
    return id;
  }

  private generated(base: string): number {
    const id = this.ids.size;
    this.ids.set(`${base}_${id}`, id);
    this.defined.add(id);
    return id;
  }

  private add(id: number, rule: Element[]): void {
    this.elements += rule.length;
    if (this.elements > MAX_ELEMENTS) {
      throw new GbnfError(
        `The grammar is too large once its repetitions are written out (over ${MAX_ELEMENTS} elements).`,
      );
    }
    this.rules[id] = rule;
  }

  private rule(start: number): number {
    const nameEnd = this.name(start);
    const name = this.src.slice(start, nameEnd);
    let pos = this.space(nameEnd, false);
    if (!this.src.startsWith("::=", pos)) throw new GbnfError(`Expected "::=" after the rule name "${name}".`, pos);
    const id = this.symbol(name);
    if (this.defined.has(id)) throw new GbnfError(`The rule "${name}" is defined twice.`, start);
    this.defined.add(id);
    pos = this.alternates(this.space(pos + 3, true), name, id, false);
    if (this.src[pos] === "\r") pos += this.src[pos + 1] === "\n" ? 2 : 1;
    else if (this.src[pos] === "\n") pos++;
    else if (pos < this.src.length) throw new GbnfError("Expected the end of the rule (a newline).", pos);
    return this.space(pos, true);
  }

  private alternates(start: number, name: string, id: number, nested: boolean): number {
    const rule: Element[] = [];
    let pos = this.sequence(start, name, rule, nested);
    while (this.src[pos] === "|") {
      rule.push({ kind: Kind.Alt, value: 0 });
      pos = this.sequence(this.space(pos + 1, true), name, rule, nested);
    }
    rule.push({ kind: Kind.End, value: 0 });
    this.add(id, rule);
    return pos;
  }

  private sequence(start: number, name: string, rule: Element[], nested: boolean): number {
    let pos = start;
    let last = rule.length;
    const src = this.src;
    while (pos < src.length) {
      const c = src[pos]!;
      if (c === '"') {
        pos++;
        last = rule.length;
        while (src[pos] !== '"') {
          if (pos >= src.length) throw new GbnfError("A string literal is not closed.", start);
          const [code, next] = this.char(pos);
          rule.push({ kind: Kind.Char, value: code });
          pos = next;
        }
        pos = this.space(pos + 1, nested);
      } else if (c === "[") {
        pos++;
        let first: Kind = Kind.Char;
        if (src[pos] === "^") {
          pos++;
          first = Kind.CharNot;
        }
        last = rule.length;
        while (src[pos] !== "]") {
          if (pos >= src.length) throw new GbnfError("A character class is not closed.", start);
          const [code, next] = this.char(pos);
          rule.push({ kind: last < rule.length ? Kind.CharAlt : first, value: code });
          pos = next;
          if (src[pos] === "-" && src[pos + 1] !== "]") {
            if (pos + 1 >= src.length) throw new GbnfError("A character class is not closed.", start);
            const [upper, after] = this.char(pos + 1);
            rule.push({ kind: Kind.CharRangeUpper, value: upper });
            pos = after;
          }
        }
        pos = this.space(pos + 1, nested);
      } else if (c === "<" || c === "!") {
        throw new GbnfError(
          "Token references (<...>) are not taken: they would mean other text on another model.",
          pos,
        );
      } else if (isWordChar(c)) {
        const end = this.name(pos);
        last = rule.length;
        rule.push({ kind: Kind.RuleRef, value: this.symbol(src.slice(pos, end)) });
        pos = this.space(end, nested);
      } else if (c === "(") {
        if (++this.depth > MAX_GROUP_NESTING) {
          throw new GbnfError(`Groups are nested more than ${MAX_GROUP_NESTING} deep.`, pos);
        }
        const sub = this.generated(name);
        pos = this.alternates(this.space(pos + 1, true), name, sub, true);
        this.depth--;
        last = rule.length;
        rule.push({ kind: Kind.RuleRef, value: sub });
        if (src[pos] !== ")") throw new GbnfError('Expected ")".', pos);
        pos = this.space(pos + 1, nested);
      } else if (c === ".") {
        last = rule.length;
        rule.push({ kind: Kind.CharAny, value: 0 });
        pos = this.space(pos + 1, nested);
      } else if (c === "*" || c === "+" || c === "?") {
        pos = this.space(pos + 1, nested);
        this.repeat(rule, last, name, c === "+" ? 1 : 0, c === "?" ? 1 : Number.POSITIVE_INFINITY, pos);
      } else if (c === "{") {
        pos = this.space(pos + 1, nested);
        const [min, afterMin] = this.int(pos);
        pos = this.space(afterMin, nested);
        let max = Number.POSITIVE_INFINITY;
        if (src[pos] === "}") {
          max = min;
        } else if (src[pos] === ",") {
          pos = this.space(pos + 1, nested);
          if (isDigit(src[pos] ?? "")) {
            const [upper, afterMax] = this.int(pos);
            max = upper;
            pos = this.space(afterMax, nested);
          }
          if (src[pos] !== "}") throw new GbnfError('Expected "}".', pos);
        } else {
          throw new GbnfError('Expected "," or "}" in a repetition.', pos);
        }
        pos = this.space(pos + 1, nested);
        if (min > MAX_REPETITION) throw new GbnfError(`A repetition asks for more than ${MAX_REPETITION} copies.`, pos);
        if (max > MAX_REPETITION) max = Number.POSITIVE_INFINITY;
        if (max < min) throw new GbnfError("A repetition's upper bound is below its lower bound.", pos);
        this.repeat(rule, last, name, min, max, pos);
      } else {
        break;
      }
    }
    return pos;
  }

  /** Writes out the item rule[last..] repeated min to max times, as llama.cpp's handle_repetitions does. */
  private repeat(rule: Element[], last: number, name: string, min: number, max: number, at: number): void {
    if (last === rule.length) throw new GbnfError("A repetition (*, +, ?, {}) follows nothing.", at);
    const item = rule.slice(last);
    const unbounded = max === Number.POSITIVE_INFINITY;
    if (this.elements + rule.length + item.length * Math.max(0, min - 1) > MAX_ELEMENTS) {
      throw new GbnfError(
        `The grammar is too large once its repetitions are written out (over ${MAX_ELEMENTS} elements).`,
        at,
      );
    }
    if (min === 0) rule.length = last;
    else for (let i = 1; i < min; i++) rule.push(...item);
    const optional = unbounded ? 1 : max - min;
    let previous = 0;
    for (let i = 0; i < optional; i++) {
      const id = this.generated(name);
      const rec = [...item];
      if (i > 0 || unbounded) rec.push({ kind: Kind.RuleRef, value: unbounded ? id : previous });
      rec.push({ kind: Kind.Alt, value: 0 }, { kind: Kind.End, value: 0 });
      this.add(id, rec);
      previous = id;
    }
    if (optional > 0) rule.push({ kind: Kind.RuleRef, value: previous });
  }

  private name(start: number): number {
    let pos = start;
    while (pos < this.src.length && isWordChar(this.src[pos]!)) pos++;
    if (pos === start) throw new GbnfError("Expected a rule name.", start);
    return pos;
  }

  private int(start: number): [number, number] {
    let pos = start;
    while (isDigit(this.src[pos] ?? "")) pos++;
    if (pos === start) throw new GbnfError("Expected a number in a repetition.", start);
    return [Number(this.src.slice(start, pos)), pos];
  }

  /** Skips blanks and comments; newlines too where `newlines` (inside groups, after "::=" and "|"). */
  private space(start: number, newlines: boolean): number {
    let pos = start;
    const src = this.src;
    while (pos < src.length) {
      const c = src[pos]!;
      if (c === " " || c === "\t" || (newlines && (c === "\r" || c === "\n"))) pos++;
      else if (c === "#") while (pos < src.length && src[pos] !== "\r" && src[pos] !== "\n") pos++;
      else break;
    }
    return pos;
  }

  /** One character of a literal or class, escapes read: [code point, next offset]. */
  private char(pos: number): [number, number] {
    const src = this.src;
    if (src[pos] !== "\\") {
      const code = src.codePointAt(pos)!;
      return [code, pos + (code > 0xffff ? 2 : 1)];
    }
    const e = src[pos + 1];
    const hex = { x: 2, u: 4, U: 8 }[e as "x" | "u" | "U"];
    if (hex !== undefined) {
      const digits = src.slice(pos + 2, pos + 2 + hex);
      if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) {
        throw new GbnfError(`\\${e} takes exactly ${hex} hex digits.`, pos);
      }
      return [Number.parseInt(digits, 16), pos + 2 + hex];
    }
    const simple: Record<string, number> = { t: 9, r: 13, n: 10, "\\": 92, '"': 34, "[": 91, "]": 93 };
    const code = e === undefined ? undefined : simple[e];
    if (code === undefined) throw new GbnfError(`Unknown escape "\\${e ?? ""}".`, pos);
    return [code, pos + 2];
  }
}
