import type { Redis } from "ioredis";
import type { Db } from "../db/client.js";
import type { Logger } from "../logger.js";
import type { ModelChangeNotifier } from "../queues/model-changes.js";
import type { BlobStore } from "../storage/blob-store.js";

/** What deploy and undeploy work with: they run where the database is (the API processes). */
export interface ControlDeps {
  db: Db;
  storage: BlobStore;
  /** A connection to publish adapter events on. */
  redis: Redis;
  redisPrefix: string;
  /** Told once a deploy or undeploy is done, so that no API process serves a stale resolution. */
  modelChanges: ModelChangeNotifier;
  maxLoraRank: number;
  log: Logger;
}
