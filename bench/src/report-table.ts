import type { BenchReport } from "./run-bench.js";
import type { Figure, TargetCheck } from "./scenario.js";

/** The terminal table: each scenario's figures, then its targets with PASS or MISS. */
export function renderReport(report: BenchReport): string {
  const m = report.machine;
  const lines = [
    `Hearth ${m.hearth} bench (${report.mode}) on ${m.cpuModel}, ${m.cores} cores, ${(m.totalMemoryBytes / 2 ** 30).toFixed(0)} GiB; ` +
      `Node ${m.node}, node-llama-cpp ${m.nodeLlamaCpp} (llama.cpp ${m.llamaCpp.llamaCppRelease}, ${Object.keys(m.backends ?? {}).join("+") || "backend unknown"}), Redis ${m.redis}, ${report.settings.db}`,
    `model ${report.settings.benchModel}; worker: ${describeWorker(report.settings.worker)}; ` +
      `load average before ${m.loadAverageBefore.join(" ")}, after ${m.loadAverageAfter?.join(" ") ?? "?"}`,
  ];
  const labelWidth = Math.max(
    40,
    ...report.scenarios.flatMap((s) => [
      ...s.figures.map((f) => f.label.length),
      ...s.targets.map((t) => t.label.length + 8),
    ]),
  );
  for (const scenario of report.scenarios) {
    lines.push(
      "",
      `${scenario.title}${scenario.durationS === undefined ? "" : `  [${scenario.durationS.toFixed(0)} s]`}`,
    );
    for (const f of scenario.figures) lines.push(`  ${f.label.padEnd(labelWidth)}  ${showFigure(f)}`);
    for (const t of scenario.targets) lines.push(`  ${`target: ${t.label}`.padEnd(labelWidth)}  ${showTarget(t)}`);
    for (const note of scenario.notes) lines.push(`  (${note})`);
  }
  for (const failure of report.failures) lines.push("", `${failure.scenario}: FAILED: ${failure.error}`);
  const targets = report.scenarios.flatMap((s) => s.targets);
  const passed = targets.filter((t) => t.pass).length;
  lines.push("", `Targets met: ${passed} of ${targets.length}.`);
  return lines.join("\n");
}

function describeWorker(w: BenchReport["settings"]["worker"]): string {
  return `${w.threads} thread(s), ${w.contexts} context(s) of ${w.sequences} sequences (adapters: ${w.adapterContexts} shared × ${w.adapterSequences}), concurrency ${w.concurrency}, express ${w.expressSequences}, context ${w.contextSize}`;
}

function showFigure(f: Figure): string {
  return f.display ?? `${f.value} ${f.unit}`;
}

function showTarget(t: TargetCheck): string {
  return `${t.measured} ${t.op === "<=" ? "≤" : "≥"} ${t.limit} ${t.unit}: ${t.pass ? "PASS" : "MISS"}`;
}
