/**
 * The bounds of the sandbox users' chat templates render in (src/templates), set by
 * HEARTH_TEMPLATE_*: config reads them, the sandbox takes them.
 */
export interface TemplateLimits {
  /** Threads rendering at once; a slow template holds one of them up to timeoutMs. */
  threads: number;
  timeoutMs: number;
  /** Heap of each thread (V8's old generation), in MB. */
  memoryMb: number;
  /** How long a template that went past the time or memory bound is refused; 0: never. */
  quarantineMs: number;
}

/** The defaults of HEARTH_TEMPLATE_*. */
export const DEFAULT_TEMPLATE_LIMITS: TemplateLimits = Object.freeze({
  threads: 2,
  timeoutMs: 1000,
  memoryMb: 64,
  quarantineMs: 10 * 60_000,
});
