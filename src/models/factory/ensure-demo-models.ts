import fs from "node:fs/promises";
import path from "node:path";
import type { Config } from "../../config.js";
import type { Logger } from "../../logger.js";
import { buildDemoModels } from "./demo-models.js";

/** Builds the demo models into the model directory on first start (when enabled and absent). */
export async function ensureDemoModels(
  config: Pick<Config, "buildDemoModels" | "modelDir">,
  log: Logger,
): Promise<void> {
  if (!config.buildDemoModels) return;
  const present = await fs.access(path.join(config.modelDir, "hearth-tiny.gguf")).then(
    () => true,
    () => false,
  );
  if (present) return;
  log.info(`building the demo models in ${config.modelDir}`);
  const started = performance.now();
  const built = await buildDemoModels(config.modelDir, {
    onStep: ({ index, total, what }) => log.info(`building the demo models: ${index}/${total} ${what}`),
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log.info(`built the demo models in ${seconds} s (${built.written.length} written)`);
}
