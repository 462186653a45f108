import { randomInt } from "node:crypto";
import net from "node:net";

/**
 * Ports handed to child processes come from below Linux's ephemeral range (32768–60999), in
 * blocks: one per test worker (VITEST_POOL_ID), block 0 for any other process (a bench run).
 * A port the kernel picks for listen(0) comes from the ephemeral range, where any process's
 * listen(0) or outgoing connection may take it again in the seconds before the child binds it:
 * a test's `npm start` once found another test's Hearth on the port it had been given.
 */
const FIRST_PORT = 20_000;
const BLOCK_SIZE = 500;
const BLOCKS = 25;

const block = Number(process.env.VITEST_POOL_ID ?? 0) % BLOCKS;
/** Where this process goes on in its block: a random start, so that a child process (which inherits the pool ID) seldom meets its parent. */
let offset = randomInt(BLOCK_SIZE);

/** A TCP port nothing listens on right now, not handed out before by this process (for child processes started on their own port). */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < BLOCK_SIZE; tries++) {
    const port = FIRST_PORT + block * BLOCK_SIZE + (offset++ % BLOCK_SIZE);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${FIRST_PORT + block * BLOCK_SIZE}–${FIRST_PORT + (block + 1) * BLOCK_SIZE - 1}`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
