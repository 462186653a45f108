import { SCENARIO_IDS, type ScenarioId } from "./scenario.js";

/**
 * How much work each scenario does. `quick` fits in under three minutes on a 2-core
 * machine; `full` takes longer for steadier percentiles; tests pass tiny sizes.
 */
export interface BenchSizes {
  /** Requests per side before measuring (JIT, caches, first allocations). */
  warmup: number;
  /** Tokens each request of the overhead scenario generates. */
  overheadTokens: number;
  /** Interleaved pairs (Hearth, in-process) of `overheadTokens`-token requests. */
  overheadPairs: number;
  /** Extra interleaved pairs of short requests, for time to first token only. */
  overheadTtftPairs: number;
  /** Sequential 1-token requests. */
  floorSequential: number;
  floorClients: number;
  floorRequestsPerClient: number;
  /** Sequential requests timed stage by stage under Redis MONITOR (0: skip). */
  stageProbeRequests: number;
  concurrencyLevels: number[];
  /** Requests each stream makes at each level, one after the other. */
  concurrencyRounds: number;
  concurrencyTokens: number;
  /** The concurrency scenario's in-process measure of an adapter switch: tokens per request, alternating rounds. */
  switchCostTokens: number;
  switchCostRounds: number;
  /** Distinct adapters the adapter runs spread their streams over. */
  adapterSpread: number;
  /** Adapters deployed (and first queried) by the cold-adapter scenario. */
  coldAdapters: number;
  /** Adapters loaded when the worker's memory is read. */
  memoryLevels: number[];
  scaleOutStreams: number;
  scaleOutRounds: number;
  scaleOutTokens: number;
  /** Interleaved pairs (API, in-process) of image requests, and their side in pixels. */
  imagePairs: number;
  imageSize: number;
  /** Rounds of 4 concurrent image requests. */
  imageRounds: number;
  /** Concurrent streams on hearth-tiny, each sending request after request for `loadSeconds`. */
  loadStreams: number;
  loadSeconds: number;
  loadTokens: number;
  /** Fairness: account A's requests at once, B's requests timed alone, and rounds (A alone, then A with B beside). */
  fairnessFlood: number;
  fairnessProbes: number;
  fairnessRounds: number;
  /** Batching: N concurrent streams (Hearth) and sequences (in-process) per level, rounds, tokens each. */
  batchingLevels: number[];
  batchingRounds: number;
  batchingTokens: number;
  /** Threads: requests one after another per run (thread count × quiet or busy), tokens each. */
  threadsRequests: number;
  threadsTokens: number;
  /** Structured output: requests per stream per level (1 and 16 streams), tokens each. */
  structuredRounds: number;
  structuredTokens: number;
  /**
   * Placement: rounds (each runs placement off, then on), workers, deployed adapters (Zipf-popular),
   * concurrent streams, requests before and while measuring, tokens each, adapters each worker keeps.
   */
  placementRounds: number;
  placementWorkers: number;
  placementAdapters: number;
  placementStreams: number;
  placementWarmup: number;
  placementRequests: number;
  placementTokens: number;
  placementMaxAdapters: number;
  /** CLI start: runs of `hearth whoami` one after another (and as many through npx). */
  cliRuns: number;
  /**
   * Prompt caching: conversations per round (a system prompt of `prefixSystemTokens` tokens and a
   * short user turn each, one after another), rounds (shared system prompt, then unique ones), and
   * tokens each answer; two-worker runs of each placement mode (off, then on).
   */
  prefixConversations: number;
  prefixRounds: number;
  prefixSystemTokens: number;
  prefixTokens: number;
  prefixPlacementRounds: number;
  /** Prompt caching with nothing to share: concurrent streams, requests each, tokens each, rounds (cache on, then off). */
  prefixStreams: number;
  prefixStreamRequests: number;
  prefixStreamTokens: number;
  prefixStreamRounds: number;
  /**
   * Metering's cost: rounds (each a turn with metering on, then off), the overhead workload's
   * requests per turn (`overheadTokens` each), and the load workload's seconds per turn
   * (`loadStreams` streams of `loadTokens`-token requests); records the meter alone writes.
   */
  meteringRounds: number;
  meteringOverheadRequests: number;
  meteringLoadSeconds: number;
  meteringProbeRecords: number;
  /**
   * Batches: lines of the batch (chat requests on hearth-tiny), tokens each, rounds (the batch and
   * the same requests sent directly; the interactive client alone and beside the batch), and how
   * often the interactive client sends a request.
   */
  batchLines: number;
  batchTokens: number;
  batchRounds: number;
  batchInteractiveMs: number;
  /**
   * Versus llama-server: N concurrent streams on each side per level, rounds (each side at each
   * level, alternating which goes first), tokens each.
   */
  versusLevels: number[];
  versusRounds: number;
  versusTokens: number;
}

export const quickSizes: BenchSizes = {
  warmup: 1,
  overheadTokens: 128,
  overheadPairs: 5,
  overheadTtftPairs: 15,
  floorSequential: 100,
  floorClients: 16,
  floorRequestsPerClient: 10,
  stageProbeRequests: 20,
  concurrencyLevels: [1, 2, 4, 8, 16],
  concurrencyRounds: 1,
  concurrencyTokens: 24,
  switchCostTokens: 48,
  switchCostRounds: 3,
  adapterSpread: 8,
  coldAdapters: 3,
  memoryLevels: [1, 8, 32],
  scaleOutStreams: 16,
  scaleOutRounds: 1,
  scaleOutTokens: 32,
  imagePairs: 5,
  imageSize: 512,
  imageRounds: 2,
  loadStreams: 256,
  loadSeconds: 15,
  loadTokens: 32,
  fairnessFlood: 500,
  fairnessProbes: 5,
  fairnessRounds: 3,
  batchingLevels: [1, 4, 16],
  batchingRounds: 2,
  batchingTokens: 32,
  threadsRequests: 3,
  threadsTokens: 48,
  structuredRounds: 2,
  structuredTokens: 64,
  placementRounds: 1,
  placementWorkers: 3,
  placementAdapters: 50,
  placementStreams: 6,
  placementWarmup: 100,
  placementRequests: 300,
  placementTokens: 8,
  placementMaxAdapters: 24,
  cliRuns: 20,
  prefixConversations: 4,
  prefixRounds: 1,
  prefixSystemTokens: 1500,
  prefixTokens: 4,
  prefixPlacementRounds: 1,
  prefixStreams: 4,
  prefixStreamRequests: 5,
  prefixStreamTokens: 16,
  prefixStreamRounds: 1,
  meteringRounds: 2,
  meteringOverheadRequests: 2,
  meteringLoadSeconds: 5,
  meteringProbeRecords: 2000,
  batchLines: 1000,
  batchTokens: 16,
  batchRounds: 2,
  batchInteractiveMs: 250,
  versusLevels: [1, 4, 16, 64],
  versusRounds: 3,
  versusTokens: 64,
};

/** The full run: the quick one with more repetitions and longer generations. */
export const fullSizes: BenchSizes = {
  ...quickSizes,
  warmup: 3,
  overheadPairs: 20,
  overheadTtftPairs: 60,
  floorSequential: 500,
  floorRequestsPerClient: 50,
  stageProbeRequests: 50,
  concurrencyRounds: 3,
  concurrencyTokens: 128,
  switchCostTokens: 128,
  switchCostRounds: 4,
  coldAdapters: 8,
  scaleOutRounds: 3,
  scaleOutTokens: 128,
  imagePairs: 15,
  imageRounds: 5,
  loadSeconds: 60,
  fairnessProbes: 20,
  fairnessRounds: 10,
  batchingRounds: 4,
  batchingTokens: 128,
  threadsRequests: 5,
  threadsTokens: 128,
  structuredRounds: 3,
  structuredTokens: 128,
  placementRounds: 2,
  placementWarmup: 200,
  placementRequests: 600,
  cliRuns: 50,
  prefixConversations: 20,
  prefixRounds: 3,
  prefixPlacementRounds: 2,
  prefixStreamRequests: 16,
  prefixStreamTokens: 48,
  prefixStreamRounds: 3,
  meteringRounds: 4,
  meteringOverheadRequests: 5,
  meteringLoadSeconds: 15,
  meteringProbeRecords: 5000,
  batchLines: 2000,
  versusRounds: 6,
  versusTokens: 128,
};

/** Adapters the chosen scenarios need: deployed ones (concurrency, memory, placement) and cold ones (cold-adapter). */
export function adapterNeeds(
  sizes: BenchSizes,
  chosen: readonly ScenarioId[] = SCENARIO_IDS,
): { deployed: number; cold: number } {
  const spread = chosen.some((id) => id === "concurrency" || id === "memory");
  return {
    deployed: Math.max(
      spread ? Math.max(sizes.adapterSpread, ...sizes.memoryLevels) : 0,
      // The concurrency scenario's switch cost shares a context between two adapters.
      chosen.includes("concurrency") ? 2 : 0,
      chosen.includes("placement") ? sizes.placementAdapters : 0,
    ),
    cold: chosen.includes("cold-adapter") ? sizes.coldAdapters : 0,
  };
}
