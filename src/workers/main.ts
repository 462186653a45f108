import { loadConfig } from "../config.js";
import { createLogger } from "../logger.js";
import { ensureDemoModels } from "../models/factory/ensure-demo-models.js";
import { runUntilSignalled } from "../process/lifecycle.js";
import { LlamaEngine } from "./engine/llama-engine.js";
import { HearthWorker } from "./worker.js";

const config = loadConfig(process.env);
const log = createLogger(config.logLevel, "worker");
await runUntilSignalled(log, async () => {
  await ensureDemoModels(config, log);
  const engine = await LlamaEngine.create({ logLevel: config.logLevel });
  const worker = await HearthWorker.start(config, engine, log);
  return {
    async close() {
      await worker.close();
      await engine.close();
    },
  };
});
