/**
 * Why a render failed. `template`: the template's own error (syntax, raise_exception);
 * `time`, `memory`, `size`: it went past a bound; `quarantined`: it went past the time or
 * memory bound a short while ago and is refused without a render (template-quarantine.ts);
 * `unavailable`: the sandbox could not take it.
 */
export class TemplateError extends Error {
  constructor(
    readonly kind: "template" | "time" | "memory" | "size" | "quarantined" | "unavailable",
    message: string,
  ) {
    super(message);
    this.name = "TemplateError";
  }

  /** True when the template went past one of the sandbox's bounds, now or a short while ago. */
  get outOfBounds(): boolean {
    return this.kind === "time" || this.kind === "memory" || this.kind === "size" || this.kind === "quarantined";
  }
}
