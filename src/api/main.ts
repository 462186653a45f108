import { loadConfig } from "../config.js";
import { createLogger } from "../logger.js";
import { ensureDemoModels } from "../models/factory/ensure-demo-models.js";
import { runUntilSignalled } from "../process/lifecycle.js";
import { tellSupervisorListening } from "../process/ready-announcement.js";
import { startApi } from "./server.js";

const config = loadConfig(process.env);
const log = createLogger(config.logLevel, "api");
await runUntilSignalled(log, async () => {
  await ensureDemoModels(config, log);
  const api = await startApi(config, log);
  tellSupervisorListening(api.port);
  return { close: () => api.close(config.drain.apiMs) };
});
