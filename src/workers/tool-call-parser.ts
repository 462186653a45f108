import { randomBytes } from "node:crypto";
import type { ToolCallFormat } from "./engine/engine.js";

/** What a piece of an answer is, once tool calls are told from text. */
export type AnswerPart =
  | { kind: "text"; text: string }
  /** A call begins: its ID (made here) and the function's name. */
  | { kind: "call"; call: number; id: string; name: string }
  /** The next characters of call `call`'s arguments (JSON text). */
  | { kind: "arguments"; call: number; text: string };

type State = "text" | "prefix" | "name" | "arguments" | "between" | "after";

/**
 * Tells the tool calls in an answer from its text, piece by piece, in the model's call format
 * (`prefix name paramsPrefix arguments suffix`, calls joined by `between`): text before the
 * first call's trigger is the message's content; each call yields its name once the name is
 * whole, then its arguments as they come. Text that may be the start of a marker (trigger,
 * suffix) is held back until it is known not to be, so no marker reaches the client. The
 * grammar the engine generates calls under (tool-call-grammar.ts) makes the calls well formed;
 * an answer cut short (max_tokens) ends with a call whose arguments are incomplete.
 */
export class ToolCallParser {
  private state: State = "text";
  private pending = "";
  private calls = 0;

  constructor(private readonly format: ToolCallFormat) {}

  /** Calls begun so far. */
  get callCount(): number {
    return this.calls;
  }

  push(text: string): AnswerPart[] {
    this.pending += text;
    const parts: AnswerPart[] = [];
    for (;;) {
      const before = this.state;
      const length = this.pending.length;
      this.step(parts);
      if (this.state === before && this.pending.length === length) return parts;
    }
  }

  /** The answer has ended: what was held back, as what it would have been. */
  flush(): AnswerPart[] {
    const rest = this.pending;
    this.pending = "";
    if (rest === "") return [];
    if (this.state === "arguments") return [{ kind: "arguments", call: this.calls - 1, text: rest }];
    if (this.state === "text" || this.state === "after") return [{ kind: "text", text: rest }];
    return [];
  }

  private step(parts: AnswerPart[]): void {
    const f = this.format;
    switch (this.state) {
      case "text":
      case "after": {
        if (this.state === "text") {
          const at = this.pending.indexOf(f.trigger);
          if (at !== -1) {
            this.emitText(parts, this.pending.slice(0, at));
            this.pending = this.pending.slice(at);
            this.state = "prefix";
            return;
          }
        }
        const keep = this.state === "text" ? heldBack(this.pending, f.trigger) : 0;
        this.emitText(parts, this.pending.slice(0, this.pending.length - keep));
        this.pending = this.pending.slice(this.pending.length - keep);
        return;
      }
      case "prefix":
      case "between": {
        const marker = this.state === "prefix" ? f.prefix : f.between + f.prefix;
        if (this.pending.startsWith(marker)) {
          this.pending = this.pending.slice(marker.length);
          this.state = "name";
        } else if (!marker.startsWith(this.pending)) {
          // Not a call after all (only possible without the grammar): the rest is text.
          this.state = "after";
        }
        return;
      }
      case "name": {
        const at = this.pending.indexOf(f.paramsPrefix);
        if (at === -1) return;
        const name = this.pending.slice(0, at);
        this.pending = this.pending.slice(at + f.paramsPrefix.length);
        parts.push({ kind: "call", call: this.calls++, id: newCallId(), name });
        this.state = "arguments";
        return;
      }
      case "arguments": {
        const at = this.pending.indexOf(f.suffix);
        const end = at === -1 ? this.pending.length - heldBack(this.pending, f.suffix) : at;
        if (end > 0) parts.push({ kind: "arguments", call: this.calls - 1, text: this.pending.slice(0, end) });
        this.pending = this.pending.slice(at === -1 ? end : at + f.suffix.length);
        if (at !== -1) this.state = "between";
        return;
      }
    }
  }

  private emitText(parts: AnswerPart[], text: string): void {
    if (text === "") return;
    const last = parts.at(-1);
    if (last?.kind === "text") last.text += text;
    else parts.push({ kind: "text", text });
  }
}

/** How many characters at the end of `text` could begin `marker` (a proper prefix of it). */
function heldBack(text: string, marker: string): number {
  for (let n = Math.min(text.length, marker.length - 1); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/** OpenAI's shape of a tool call's ID. */
function newCallId(): string {
  return `call_${randomBytes(12).toString("base64url")}`;
}
