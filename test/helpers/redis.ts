/** Leaves the shared Redis as it was: removes every key a test instance made. */
export { deleteRedisKeys } from "../../src/queues/redis-keys.js";
