import type { RedisClient } from "../redis/connection.js";
import type { Logger } from "../logger.js";
import { waitForRedis } from "../redis/connection.js";

/**
 * Told by whatever changes what a model name resolves to (deploy, undeploy, delete,
 * PATCH), once the change is in the database.
 */
export interface ModelChangeNotifier {
  changed(model: string): Promise<void>;
}

export const modelChangesChannel = (prefix: string) => `${prefix}:model-changes`;

/**
 * Model changes between API processes, so that none goes on using what it cached about
 * a model: a change made here is applied here at once, then published for the other API
 * processes. A publish that fails is logged, not thrown (the change itself is done);
 * the others then catch up within their cache's TTL.
 */
export class ModelChanges implements ModelChangeNotifier {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly apply: (model: string) => void,
    private readonly log: Logger,
  ) {}

  async changed(model: string): Promise<void> {
    this.apply(model);
    await this.redis
      .publish(modelChangesChannel(this.prefix), JSON.stringify({ model }))
      .catch((err: unknown) => this.log.warn("could not announce a model change", { model, error: String(err) }));
  }

  /** Applies the changes other processes publish (and this one's, again); resolves once subscribed. */
  async listen(subscriber: RedisClient): Promise<void> {
    const channel = modelChangesChannel(this.prefix);
    subscriber.on("message", (ch: string, message: string) => {
      if (ch !== channel) return;
      const model = decodeModelChange(message);
      if (model !== undefined) this.apply(model);
    });
    await waitForRedis(subscriber, 10_000);
    await subscriber.subscribe(channel);
  }
}

function decodeModelChange(message: string): string | undefined {
  try {
    const change = JSON.parse(message) as { model?: unknown };
    return typeof change?.model === "string" ? change.model : undefined;
  } catch {
    return undefined;
  }
}
