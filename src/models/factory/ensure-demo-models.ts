import fs from "node:fs/promises";
import path from "node:path";
import type { Config } from "../../config.js";
import type { Logger } from "../../logger.js";
import { buildDemoModels } from "./demo-models.js";
import { HEARTH_DEMO_ID, buildHearthDemo } from "./hearth-demo.js";

/** Builds the demo models (hearth-tiny and its LoRA, hearth-demo) into the model directory when enabled and absent. */
export async function ensureDemoModels(
  config: Pick<Config, "buildDemoModels" | "modelDir">,
  log: Logger,
): Promise<void> {
  if (!config.buildDemoModels) return;
  const present = await fs.access(path.join(config.modelDir, "hearth-tiny.gguf")).then(
    () => true,
    () => false,
  );
  if (!present) {
    log.info(`building the demo models in ${config.modelDir}`);
    const started = performance.now();
    const built = await buildDemoModels(config.modelDir, {
      onStep: ({ index, total, what }) => log.info(`building the demo models: ${index}/${total} ${what}`),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    log.info(`built the demo models in ${seconds} s (${built.written.length} written)`);
  }
  const demoFile = path.join(config.modelDir, `${HEARTH_DEMO_ID}.gguf`);
  if (
    await fs.access(demoFile).then(
      () => true,
      () => false,
    )
  )
    return;
  log.info(`building ${HEARTH_DEMO_ID}.gguf, the demo model that writes words (a word 4-gram in llama weights)`);
  const started = performance.now();
  await buildHearthDemo(config.modelDir);
  log.info(`built ${HEARTH_DEMO_ID}.gguf in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
