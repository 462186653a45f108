import cliProgress from "cli-progress";
import { bytes, type Output } from "./output.js";

/**
 * The upload's progress over all files: a bar with bytes, rate and ETA on a terminal
 * (cli-progress), one line per finished file otherwise, nothing with --quiet or --output json.
 */
export class UploadProgress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private done = 0;
  private readonly started = Date.now();

  constructor(
    private readonly out: Output,
    private readonly totalBytes: number,
  ) {
    if (!out.live) return;
    this.bar = new cliProgress.SingleBar(
      {
        stream: out.stderr,
        format: "{file} [{bar}] {percentage}% | {sent} / {size} | {rate} | ETA {eta_formatted}",
        barsize: 30,
        hideCursor: true,
        etaBuffer: 50,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(Math.max(totalBytes, 1), 0, this.payload("", 0));
  }

  /** `sentBytes` of the current file, named `file`, have gone out. */
  update(file: string, sentBytes: number): void {
    const value = this.done + sentBytes;
    this.bar?.update(value, this.payload(file, value));
  }

  fileDone(file: string, size: number): void {
    this.done += size;
    this.bar?.update(this.done, this.payload(file, this.done));
    if (!this.bar) this.out.note(`Uploaded ${file} (${bytes(size)})`);
  }

  stop(): void {
    this.bar?.stop();
  }

  private payload(file: string, value: number) {
    const seconds = (Date.now() - this.started) / 1000;
    return {
      file: file.padEnd(25),
      sent: bytes(value),
      size: bytes(this.totalBytes),
      rate: seconds > 0 ? `${bytes(Math.round(value / seconds))}/s` : "-",
    };
  }
}
