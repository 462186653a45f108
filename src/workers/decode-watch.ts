import type { Logger } from "../logger.js";
import type { WorkerMetrics } from "../metrics/worker-metrics.js";
import { DecodeSlowdown, type DecodeSlowdownOptions } from "./decode-slowdown.js";
import type { DecodeSample } from "./engine/engine.js";

/**
 * What a worker does with each decode of a base model's contexts: batch sizes, step times, the
 * passes llama.cpp made over each step and the time between steps on /metrics, and a warning in the log (and a gauge) while steps run
 * far slower than the model's own figure, which is what llama.cpp's spinning threads do when
 * the cores are oversubscribed.
 *
 * The express context's steps go on the metrics but are not compared: they run beside the
 * shared context's decodes, only while those are busy, and share the cores and the memory
 * bandwidth with them, so they run several times slower than a one-sequence step alone;
 * compared, they flagged the model as oversubscribed again and again, each time with a
 * warning to lower the threads.
 */
export function watchDecodes(
  model: string,
  threads: number,
  metrics: WorkerMetrics,
  log: Logger,
  options?: DecodeSlowdownOptions,
): (sample: DecodeSample) => void {
  const slowdown = new DecodeSlowdown(options);
  metrics.oversubscribed.labels(model).set(0);
  return (sample) => {
    metrics.decodeBatchTokens.labels(model).observe(sample.tokens);
    if (sample.tokens !== sample.sequences) return;
    metrics.decodeStepSequences.labels(model).observe(sample.sequences);
    if (sample.passes !== undefined) metrics.decodeStepPasses.labels(model).observe(sample.passes);
    metrics.decodeStep.labels(model).observe(sample.ms / 1000);
    if (sample.between) {
      const { beforeSamplingMs, samplingMs, afterSamplingMs } = sample.between;
      metrics.stepBetween.labels(model, "before_sampling").observe(beforeSamplingMs / 1000);
      metrics.stepBetween.labels(model, "sampling").observe(samplingMs / 1000);
      metrics.stepBetween.labels(model, "after_sampling").observe(afterSamplingMs / 1000);
    }
    if (sample.express) return;
    const change = slowdown.record(sample);
    metrics.decodeSlowdown.labels(model).set(slowdown.ratio);
    if (!change) return;
    metrics.oversubscribed.labels(model).set(change.oversubscribed ? 1 : 0);
    const figures = {
      model,
      ratio: Math.round(change.ratio * 10) / 10,
      stepMs: Math.round(change.stepMs * 10) / 10,
      bestMs: Math.round(change.bestMs * 10) / 10,
      sequences: change.sequences,
      threads,
    };
    if (change.oversubscribed) {
      // Fewer threads is advice only while there is more than one to give up.
      const advice =
        threads > 1
          ? `Lower HEARTH_WORKER_THREADS (now ${threads}), or give the worker cores of its own.`
          : "Give the worker a core of its own: fewer other processes on this machine, or a machine with more cores.";
      log.warn(
        `decoding runs ${figures.ratio}x slower than this model's own figure (a step of up to ${change.sequences} ` +
          `sequences takes ${figures.stepMs} ms, at best ${figures.bestMs} ms): llama.cpp's ${threads} thread(s) ` +
          `per context are waiting for the CPU, which other processes are using. ${advice}`,
        figures,
      );
    } else {
      log.info("decoding is back near this model's own figure", figures);
    }
  };
}
