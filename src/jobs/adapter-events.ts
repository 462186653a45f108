import type { RedisClient } from "../redis/connection.js";
import { publishInOrder, waitForRedis } from "../redis/connection.js";

/**
 * Deploy and undeploy news, from the control loop to every worker. A worker that
 * serves `baseModelId` may load a newly deployed adapter ahead of its first request (the
 * one placement chose, when it chose one),
 * and frees an undeployed one once its in-flight generations end (unless another
 * deployed model shares the same adapter file: `stillDeployed`).
 */
export type AdapterEvent =
  /** `workerId`: the worker placement chose to load it (docs/architecture.md); absent, every worker of the base may. */
  | { type: "deployed"; model: string; baseModelId: string; adapterKey: string; workerId?: string }
  | { type: "undeployed"; model: string; baseModelId: string; adapterKey: string; stillDeployed: boolean };

export const adapterChannel = (prefix: string) => `${prefix}:adapters`;

export async function publishAdapterEvent(redis: RedisClient, prefix: string, event: AdapterEvent): Promise<void> {
  // In order: an undeploy published right after a deploy must not overtake it.
  await publishInOrder(redis, adapterChannel(prefix), adapterChannel(prefix), JSON.stringify(event));
}

/** Calls `onEvent` for every adapter event published; resolves once subscribed. */
export async function subscribeAdapterEvents(
  subscriber: RedisClient,
  prefix: string,
  onEvent: (event: AdapterEvent) => void,
): Promise<void> {
  const channel = adapterChannel(prefix);
  subscriber.on("message", (ch: string, message: string) => {
    if (ch !== channel) return;
    const event = decodeAdapterEvent(message);
    if (event) onEvent(event);
  });
  await waitForRedis(subscriber, 10_000);
  await subscriber.subscribe(channel);
}

function decodeAdapterEvent(message: string): AdapterEvent | undefined {
  try {
    const e = JSON.parse(message) as AdapterEvent;
    const ok =
      (e?.type === "deployed" || e?.type === "undeployed") &&
      typeof e.model === "string" &&
      typeof e.baseModelId === "string" &&
      typeof e.adapterKey === "string" &&
      (e.type !== "deployed" || e.workerId === undefined || typeof e.workerId === "string");
    return ok ? e : undefined;
  } catch {
    return undefined;
  }
}
