import type { Logger } from "../logger.js";

/**
 * Runs a service until SIGINT or SIGTERM, then closes it in order. A failure to
 * start, or a second signal, exits at once with a non-zero code.
 */
export async function runUntilSignalled(log: Logger, start: () => Promise<{ close(): Promise<void> }>) {
  let service: { close(): Promise<void> };
  try {
    service = await start();
  } catch (err) {
    log.error((err as Error).message);
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(130);
    stopping = true;
    log.info("shutting down", { signal });
    try {
      await service.close();
      process.exit(0);
    } catch (err) {
      log.error("shutdown failed", { error: (err as Error).message });
      process.exit(1);
    }
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
