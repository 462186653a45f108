import { SketchBackend } from "../../../src/images/backends/sketch-backend.js";
import type { ImageRequest } from "../../../src/images/image-backend.js";
import { figure, target, type BenchContext, type ScenarioResult } from "../scenario.js";
import { pairedDifferences, round, summarize } from "../stats.js";

const PATH = "/v1/image_generation/accounts/hearth/models/hearth-sketch";

/**
 * Images: hearth-sketch through the API (JSON answer, the images in base64) against the same
 * renderer in this process, interleaved request by request; then 4 requests at once. The
 * worker renders one image at a time per model, so images/s at 4 concurrent shows queueing,
 * not parallel rendering.
 */
export async function imagesScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const { sizes, progress } = ctx;
  const size = sizes.imageSize;
  const local = new SketchBackend({ maxInputPixels: 4096 * 4096 });
  const request = (seed: number) => ({
    prompt: "a house, three trees and a yellow sun, two stars at night",
    width: size,
    height: size,
    steps: 30,
    cfg_scale: 7,
    seed,
  });
  const asLocal = (seed: number): ImageRequest => ({ ...request(seed), cfgScale: 7, samples: 1 });
  const viaApi = async (seed: number) => {
    const reply = await ctx.http.postJson(PATH, request(seed));
    if (reply.status !== 200)
      throw new Error(`image request failed: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.ms;
  };
  const inProcess = async (seed: number) => {
    const started = performance.now();
    await local.generate(asLocal(seed));
    return performance.now() - started;
  };

  for (let i = 0; i < sizes.warmup; i++) {
    progress.step(`images: warm-up ${i + 1}/${sizes.warmup}`);
    await viaApi(1000 + i);
    await inProcess(1000 + i);
  }
  const api: number[] = [];
  const local1: number[] = [];
  for (let i = 0; i < sizes.imagePairs; i++) {
    progress.step(`images: pair ${i + 1}/${sizes.imagePairs} (${size}×${size}, API then in-process)`);
    api.push(await viaApi(i + 1));
    local1.push(await inProcess(i + 1));
  }
  let concurrentImages = 0;
  let concurrentMs = 0;
  for (let r = 0; r < sizes.imageRounds; r++) {
    progress.step(`images: 4 at once, round ${r + 1}/${sizes.imageRounds}`);
    const started = performance.now();
    await Promise.all([0, 1, 2, 3].map((k) => viaApi(2000 + r * 4 + k)));
    concurrentMs += performance.now() - started;
    concurrentImages += 4;
  }

  const a = summarize(api);
  const p = summarize(local1);
  const paired = summarize(pairedDifferences(api, local1));
  const overheadPercent = (paired.p50 / p.p50) * 100;
  return {
    id: "images",
    title: `Images: hearth-sketch ${size}×${size}, 30 steps, through the queue vs in-process`,
    figures: [
      figure("images/s, 1 at a time, API", round(1000 / a.p50), "img/s"),
      figure("images/s, 1 at a time, in-process", round(1000 / p.p50), "img/s"),
      figure("images/s, 4 concurrent, API", round((concurrentImages / concurrentMs) * 1000), "img/s"),
      figure("latency p50 API / in-process", round(a.p50), "ms", `${round(a.p50)} / ${round(p.p50)} ms`),
      figure("queue overhead, median of paired differences", round(paired.p50), "ms"),
      figure("queue overhead ÷ rendering", round(overheadPercent), "%"),
    ],
    targets: [target("queue overhead at 512×512 ≤ 5 % of rendering", round(overheadPercent), "<=", 5, "%")],
    notes: [
      `${sizes.imagePairs} interleaved pairs; ${sizes.imageRounds} rounds of 4 concurrent requests; the API answers ` +
        "JSON (base64 PNG), so the overhead includes the PNG's trip through Redis and its base64 encoding",
    ],
    details: { apiMs: api, inProcessMs: local1, concurrentImages, concurrentMs },
  };
}
