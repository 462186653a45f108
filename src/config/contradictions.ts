/**
 * Settings each valid alone that contradict each other: config.ts refuses them at start,
 * each with a message naming every variable involved, rather than run with one of them ignored.
 */

/** The parsed values the checks read. */
export interface CheckedSettings {
  /** HEARTH_WORKER_CONCURRENCY as given; undefined when config derives it. */
  concurrency: number | undefined;
  contextsPerModel: number;
  sequencesPerContext: number;
  maxAdapters: number;
  adapterLoadsPerModel: number;
  expressSequences: number;
  placement: boolean;
}

/** Variables the environment sets (blank counts as unset, as everywhere in config). */
export type Given = (name: string) => boolean;

export function contradictions(s: CheckedSettings, given: Given): string[] {
  const problems: string[] = [];
  const baseSequences = s.contextsPerModel * s.sequencesPerContext;
  // A model's base-model requests come from its shared queue only, at most `concurrency` at a time.
  if (s.concurrency !== undefined && s.concurrency < baseSequences) {
    problems.push(
      `HEARTH_WORKER_CONCURRENCY=${s.concurrency} is below HEARTH_CONTEXTS_PER_MODEL × HEARTH_SEQUENCES_PER_CONTEXT ` +
        `(${s.contextsPerModel} × ${s.sequencesPerContext}): a worker never takes enough jobs to use those sequences, ` +
        "and each reserves its KV cache; raise HEARTH_WORKER_CONCURRENCY, or leave it unset to derive it",
    );
  }
  // The model object is re-created after that many loads, with none loaded: the LRU never fills.
  if (s.maxAdapters > s.adapterLoadsPerModel) {
    problems.push(
      `HEARTH_WORKER_MAX_ADAPTERS=${s.maxAdapters} is above HEARTH_WORKER_ADAPTER_LOADS_PER_MODEL=${s.adapterLoadsPerModel}: ` +
        "the base model object is re-created, with no adapter loaded, before that many adapters are",
    );
  }
  if (s.expressSequences === 0 && given("HEARTH_EXPRESS_WAIT_MS")) {
    problems.push("HEARTH_EXPRESS_WAIT_MS is set but HEARTH_EXPRESS_SEQUENCES=0 turns the express lane off");
  }
  if (!s.placement && given("HEARTH_PLACEMENT_WAIT_MS")) {
    problems.push("HEARTH_PLACEMENT_WAIT_MS is set but HEARTH_PLACEMENT=false turns placement off");
  }
  return problems;
}
