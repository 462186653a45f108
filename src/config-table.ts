import { type VariableSpec, variables } from "./config-variables.js";

/** The README's table of variables, generated from the declarations above. */
export function configTable(): string {
  const rows = Object.entries(variables as Record<string, VariableSpec>).map(
    ([name, spec]) =>
      `| \`${name}\` | ${spec.default === undefined ? "(unset)" : `\`${spec.default}\``} | ${spec.description} |`,
  );
  return ["| Variable | Default | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
