/**
 * Polls until `check` passes (or throws its last failure after `timeoutMs`): for what
 * another process or a queue does a moment later, instead of sleeping and hoping.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
