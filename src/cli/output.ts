import { Option } from "commander";

/**
 * How commands print. stdout carries the result: text for people, exactly one JSON document
 * with --output json, only the essentials with --quiet. Notes and progress go to stderr,
 * progress only on a terminal. Color (plain ANSI) only on a terminal, never with
 * --no-color or NO_COLOR.
 */

export type OutputFormat = "text" | "json";

/** `--output`, as the `hearth` CLI and `npm run admin` both take it. */
export function outputOption(): Option {
  return new Option("--output <format>", "text for people, json for programs (one JSON document on stdout)")
    .choices(["text", "json"])
    .default("text");
}

export interface OutputOptions {
  format: OutputFormat;
  quiet: boolean;
  color: boolean;
}

type Stream = NodeJS.WritableStream & { isTTY?: boolean };

const ANSI = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 } as const;
export type Style = keyof typeof ANSI;

export class Output {
  constructor(
    readonly options: OutputOptions,
    readonly stdout: Stream = process.stdout,
    readonly stderr: Stream = process.stderr,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get json(): boolean {
    return this.options.format === "json";
  }

  /** Notes and progress are for a person watching: not with --quiet or --output json. */
  get chatty(): boolean {
    return !this.json && !this.options.quiet;
  }

  /** Live progress (bars, a rewritten status line): only when stderr is a terminal. */
  get live(): boolean {
    return this.chatty && this.stderr.isTTY === true;
  }

  /**
   * The command's result: `doc` as JSON, else `quiet()` with --quiet (nothing if absent),
   * else `text()`.
   */
  result(doc: unknown, text: () => string | string[], quiet?: () => string | string[]): void {
    if (this.json) return this.write(this.stdout, JSON.stringify(doc, null, 2));
    const lines = this.options.quiet ? quiet?.() : text();
    if (lines !== undefined) this.write(this.stdout, lines);
  }

  /** A remark on stderr (what was skipped, what happens next), for people only. */
  note(text: string | string[]): void {
    if (this.chatty) this.write(this.stderr, text);
  }

  /** The one-line error on stderr. */
  error(message: string): void {
    this.write(this.stderr, `${this.paint("error:", "red", this.stderr)} ${message.replace(/\s*\n\s*/g, " ")}`);
  }

  paint(text: string, style: Style, stream: Stream = this.stdout): string {
    if (!this.colorOn(stream)) return text;
    return `\u001b[${ANSI[style]}m${text}\u001b[0m`;
  }

  /** A model or deployment state, colored by how it is going. */
  state(state: string | null | undefined, stream: Stream = this.stdout): string {
    if (!state) return "-";
    const style: Style = /^(READY|DEPLOYED)$/.test(state) ? "green" : state === "FAILED" ? "red" : "yellow";
    return this.paint(state, style, stream);
  }

  private colorOn(stream: Stream): boolean {
    return this.options.color && !this.env.NO_COLOR && stream.isTTY === true;
  }

  private write(stream: Stream, text: string | string[]): void {
    stream.write(`${Array.isArray(text) ? text.join("\n") : text}\n`);
  }
}

/** Columns padded to their widest cell (ANSI colors do not count); the header in bold. */
export function table(out: Output, headers: string[], rows: string[][]): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI colour codes it strips.
  const visible = (s: string) => s.replace(/\u001b\[\d+m/g, "").length;
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - visible(c))))
      .join("  ")
      .trimEnd();
  return [out.paint(line(headers), "bold"), ...rows.map(line)];
}

/** `label: value` lines with the values aligned. */
export function details(pairs: [string, string][]): string[] {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 2;
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`);
}

/** 2026-01-02T03:04:05.000Z → 2026-01-02 03:04 UTC. */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return "-";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
