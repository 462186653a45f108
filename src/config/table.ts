import type { VariableSpec } from "./spec.js";

/** A markdown table of variables: name, default, the one-line meaning (README and docs/configuration.md). */
export function configTable(specs: Record<string, VariableSpec>): string {
  const rows = Object.entries(specs).map(
    ([name, spec]) =>
      `| \`${name}\` | ${spec.default === undefined ? "(unset)" : `\`${spec.default}\``} | ${spec.description} |`,
  );
  return ["| Variable | Default | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
