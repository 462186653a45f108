import { loadConfig } from "../config.js";
import { createLogger } from "../logger.js";
import { ensureDemoModels } from "../models/factory/ensure-demo-models.js";
import { runUntilSignalled } from "../process/lifecycle.js";
import { LlamaEngine } from "./engine/llama-engine.js";
import { HearthWorker } from "./worker.js";

const config = loadConfig(process.env);
const log = createLogger(config.logLevel, "worker");
await runUntilSignalled(log, async () => {
  // The engine (and the demo models) only for the text role: an image-only worker loads no llama.cpp.
  const text = config.worker.roles.includes("text");
  if (text) await ensureDemoModels(config, log);
  const engine = text
    ? await LlamaEngine.create({
        logLevel: config.logLevel,
        templateLimits: config.templates,
        gpu: config.worker.gpu,
        gpuLayers: config.worker.gpuLayers,
        gpuCheck: config.worker.gpuCheck,
        nativeSampler: config.worker.nativeSampler,
        log: log.child("engine"),
      })
    : undefined;
  const worker = await HearthWorker.start(config, engine, log);
  return {
    async close() {
      await worker.close(config.drain.workerMs);
      await engine?.close();
    },
  };
});
