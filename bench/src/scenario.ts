import type { AdapterDeployments } from "./adapter-deployments.js";
import type { HearthCluster, WorkerSettings } from "./hearth-cluster.js";
import type { BenchHttp } from "./http-client.js";
import type { InProcessModel } from "./in-process.js";
import type { Progress } from "./progress.js";
import type { BenchSizes } from "./sizes.js";

/** The contract every scenario follows: what it is given, and what it reports. */

export const SCENARIO_IDS = [
  "overhead",
  "floor",
  "concurrency",
  "cold-adapter",
  "memory",
  "scale-out",
  "images",
  "load",
  "fairness",
  "batching",
  "threads",
  "placement",
  "structured",
  "cli",
  "prefix",
  "metering",
  "batch",
] as const;

/**
 * Scenarios outside the default set, each run only when asked for with what it needs:
 * `versus` compares Hearth with llama.cpp's own server, whose binary `--versus
 * llama-server=PATH` names (no machine has one by default, CI included: docs/bench-versus.md).
 */
export const OPT_IN_SCENARIO_IDS = ["versus"] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number] | (typeof OPT_IN_SCENARIO_IDS)[number];
/** Every scenario, in the order a run takes them. */
export const ALL_SCENARIO_IDS: readonly ScenarioId[] = [...SCENARIO_IDS, ...OPT_IN_SCENARIO_IDS];

export interface BenchContext {
  cluster: HearthCluster;
  http: BenchHttp;
  deployments: AdapterDeployments;
  sizes: BenchSizes;
  progress: Progress;
  /** The benchmark model (e.g. the SmolLM-135M shape): its name and file. */
  bench: { name: string; path: string };
  /** hearth-tiny, for the queue floor: its name, and its file (for llama-server). */
  tiny: { name: string; path: string };
  /** The llama-server binary the versus scenario runs beside Hearth (`--versus llama-server=PATH`). */
  llamaServer?: string;
  /** Deployed adapters of the bench model, by model name (distinct weights each). */
  adapters: string[];
  /** READY adapters of the bench model that are not deployed yet (the cold-adapter scenario deploys them). */
  coldAdapters: { modelId: string; name: string }[];
  /** The worker configuration every scenario starts from. */
  workerSettings: WorkerSettings;
  /** Where the workers compute, from /readyz (e.g. {"cuda": 1}); {} when none reported. */
  backends: Record<string, number>;
  /** The in-process baseline on the bench model (loaded on first use). */
  inProcess(): Promise<InProcessModel>;
  prompt: string;
}

/** One number a scenario measured. */
export interface Figure {
  label: string;
  value: number;
  unit: string;
  /** How the table shows it, when not "value unit" (e.g. "12.1 / 30.4 ms"). */
  display?: string;
}

/** One target of the issue, checked against a measured figure. */
export interface TargetCheck {
  label: string;
  measured: number;
  op: "<=" | ">=";
  limit: number;
  unit: string;
  pass: boolean;
}

export interface ScenarioResult {
  id: ScenarioId;
  title: string;
  figures: Figure[];
  targets: TargetCheck[];
  /** What limits or qualifies the figures (configuration, sample sizes). */
  notes: string[];
  /** The raw measurements, for the JSON file. */
  details: Record<string, unknown>;
  durationS?: number;
}

export type Scenario = (ctx: BenchContext) => Promise<ScenarioResult>;

export function figure(label: string, value: number, unit: string, display?: string): Figure {
  return display === undefined ? { label, value, unit } : { label, value, unit, display };
}

export function target(label: string, measured: number, op: "<=" | ">=", limit: number, unit: string): TargetCheck {
  const pass = Number.isFinite(measured) && (op === "<=" ? measured <= limit : measured >= limit);
  return { label, measured, op, limit, unit, pass };
}
