import type { Logger } from "../logger.js";

/**
 * Runs a service until SIGINT or SIGTERM, then closes it in order. A failure to
 * start, or a second signal, exits at once with a non-zero code.
 *
 * Started by `npm start` (src/main.ts), a service has an IPC channel to it and takes its
 * orders from it: it ignores SIGINT (a terminal's Ctrl-C reaches the whole process group, and
 * the supervisor then stops each service in turn with SIGTERM; were the service to stop on the
 * SIGINT too, that SIGTERM would be a second signal and cut its drain short). Should the
 * supervisor die without stopping it (SIGKILL, the OOM killer), the channel closes and the
 * service stops as on SIGTERM (at once, if it is still starting): nothing outlives it.
 */
export async function runUntilSignalled(log: Logger, start: () => Promise<{ close(): Promise<void> }>) {
  const supervised = Boolean(process.channel);
  let service: { close(): Promise<void> } | undefined;
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) process.exit(130);
    stopping = true;
    log.info("shutting down", { signal: reason });
    if (!service) process.exit(1);
    try {
      await service.close();
      process.exit(0);
    } catch (err) {
      log.error("shutdown failed", { error: (err as Error).message });
      process.exit(1);
    }
  };
  if (supervised) {
    process.on("SIGINT", () => {});
    process.once("disconnect", () => {
      if (!stopping) void stop("supervisor gone");
    });
  }
  try {
    service = await start();
  } catch (err) {
    log.error((err as Error).message);
    process.exit(1);
  }
  if (!supervised) process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
