import { type GbnfRules, Kind } from "./gbnf-rules.js";

/**
 * The name of a rule that can start with itself (directly, or after rules that may match
 * nothing), or undefined. llama.cpp refuses such grammars; following their stacks would not end.
 */
export function leftRecursiveRule(grammar: GbnfRules): string | undefined {
  const { rules } = grammar;
  const alternativesOf = (rule: number) => {
    const alts: { kind: number; value: number }[][] = [[]];
    for (const e of rules[rule]!) {
      if (e.kind === Kind.End) break;
      if (e.kind === Kind.Alt) alts.push([]);
      else alts[alts.length - 1]!.push(e);
    }
    return alts;
  };
  const alternatives = rules.map((_, i) => alternativesOf(i));

  // Rules that may match nothing, to a fixed point.
  const nullable = new Set<number>();
  for (let changed = true; changed; ) {
    changed = false;
    alternatives.forEach((alts, rule) => {
      if (nullable.has(rule)) return;
      if (alts.some((alt) => alt.every((e) => e.kind === Kind.RuleRef && nullable.has(e.value)))) {
        nullable.add(rule);
        changed = true;
      }
    });
  }

  // Edges to the rules each rule may start with; a cycle among them is left recursion.
  const starts = alternatives.map((alts) => {
    const firsts = new Set<number>();
    for (const alt of alts) {
      for (const e of alt) {
        if (e.kind !== Kind.RuleRef) break;
        firsts.add(e.value);
        if (!nullable.has(e.value)) break;
      }
    }
    return [...firsts];
  });
  const state = new Uint8Array(rules.length); // 0 new, 1 on the path, 2 done
  for (let root = 0; root < rules.length; root++) {
    if (state[root] !== 0) continue;
    const path: { rule: number; next: number }[] = [{ rule: root, next: 0 }];
    state[root] = 1;
    while (path.length > 0) {
      const frame = path[path.length - 1]!;
      const to = starts[frame.rule]![frame.next++];
      if (to === undefined) {
        state[frame.rule] = 2;
        path.pop();
      } else if (state[to] === 1) {
        return grammar.names[to];
      } else if (state[to] === 0) {
        state[to] = 1;
        path.push({ rule: to, next: 0 });
      }
    }
  }
  return undefined;
}
