/**
 * The progress line on stderr while the bench runs: rewritten in place on a terminal,
 * silent otherwise (so redirected output stays clean).
 */
export interface Progress {
  /** Names the step now running. */
  step(text: string): void;
  /** Writes a line that stays (a warning, a finished scenario). */
  note(text: string): void;
  done(): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, enabled = stream.isTTY === true): Progress {
  const started = performance.now();
  let current = "";
  let shown = false;
  let drawnAt = 0;
  const elapsed = () => {
    const s = Math.floor((performance.now() - started) / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  const draw = () => {
    if (!enabled) return;
    const width = (stream.columns || 100) - 1;
    stream.write(`\r\x1b[2K${`[${elapsed()}] ${current}`.slice(0, width)}`);
    shown = true;
    drawnAt = performance.now();
  };
  const timer = enabled ? setInterval(draw, 1000) : undefined;
  timer?.unref();
  const clear = () => {
    if (shown) stream.write("\r\x1b[2K");
    shown = false;
  };
  return {
    step(text) {
      current = text;
      // At most ten writes a second: the line must not cost the measurements anything.
      if (performance.now() - drawnAt >= 100) draw();
    },
    note(text) {
      clear();
      stream.write(`${text}\n`);
      draw();
    },
    done() {
      clearInterval(timer);
      clear();
    },
  };
}

/** A progress that shows nothing (tests, --no-progress). */
export const silentProgress: Progress = { step() {}, note() {}, done() {} };
