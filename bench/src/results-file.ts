import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { machineClass } from "./machine.js";
import type { BenchReport } from "./run-bench.js";
import type { ScenarioId } from "./scenario.js";

/**
 * Writes the latest result of each scenario the run measured (or failed) to
 * <dir>/<scenario>-<machine class>[-large].json, replacing the previous run's on the same class of
 * machine (git history keeps the earlier ones), and the whole run to <dir>/latest.json (not
 * committed). Each scenario's file has the run's shape, narrowed to that scenario, so that one
 * reader reads both. Returns the scenario files.
 */
export async function writeResults(dir: string, report: BenchReport): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const ids = [
    ...new Set<ScenarioId>([...report.scenarios.map((s) => s.id), ...report.failures.map((f) => f.scenario)]),
  ];
  const files: string[] = [];
  for (const id of ids) {
    const file = path.join(dir, resultFileName(id, report));
    await writeAtomically(file, scenarioReport(report, id));
    files.push(file);
  }
  await writeAtomically(path.join(dir, "latest.json"), report);
  return files;
}

/**
 * <scenario>-<machine class>.json, e.g. fairness-cpu-2cores.json; a run of the large shape
 * (--large) gets -large after the class, so that it does not replace the default shape's.
 */
export function resultFileName(id: ScenarioId, report: Pick<BenchReport, "machine" | "settings">): string {
  return `${id}-${machineClass(report.machine)}${report.settings.large ? "-large" : ""}.json`;
}

/** The run, narrowed to one scenario: its result, its targets, its failure. */
export function scenarioReport(report: BenchReport, id: ScenarioId): BenchReport {
  return {
    ...report,
    settings: { ...report.settings, scenarios: [id] },
    scenarios: report.scenarios.filter((s) => s.id === id),
    targets: report.targets.filter((t) => t.scenario === id),
    failures: report.failures.filter((f) => f.scenario === id),
  };
}

async function writeAtomically(file: string, value: unknown) {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(tmp, file);
}
