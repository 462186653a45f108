/**
 * Long generations (to the context's end) that keep a context's sequences busy: resolves once
 * each has its first token; `running()` counts those not ended yet, `ended` waits for them all.
 */
export async function startLongGenerations(
  prompts: string[],
  generate: (prompt: string, onText: (text: string) => void) => Promise<unknown>,
): Promise<{ running: () => number; ended: Promise<unknown[]> }> {
  let running = prompts.length;
  let seen = 0;
  let started!: () => void;
  const allStarted = new Promise<void>((resolve) => (started = resolve));
  const ended = prompts.map((p) => {
    let first = true;
    return generate(p, () => {
      if (!first) return;
      first = false;
      if (++seen === prompts.length) started();
    }).finally(() => running--);
  });
  await allStarted;
  return { running: () => running, ended: Promise.all(ended) };
}
