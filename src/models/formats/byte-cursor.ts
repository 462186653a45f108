import { readSync } from "node:fs";
import { fileProblem } from "./model-file-error.js";

/** Where a cursor's bytes come from: read forward, a window at a time. */
export interface ByteSource {
  /** Up to `length` bytes from `position` (fewer only at the end of the data). */
  read(position: number, length: number): Uint8Array;
}

/** Bytes already in memory. */
export const memorySource = (bytes: Uint8Array): ByteSource => ({
  read: (position, length) => bytes.subarray(position, position + length),
});

/**
 * An open file, read synchronously a window at a time: a header parse never holds more
 * than the window and the value it is reading, whatever the header's size.
 */
export const fileSource = (fd: number): ByteSource => ({
  read(position, length) {
    const buffer = new Uint8Array(length);
    const read = readSync(fd, buffer, 0, length, position);
    return buffer.subarray(0, read);
  },
});

const WINDOW_BYTES = 64 * 1024;
const utf8 = new TextDecoder("utf-8");

/**
 * A bounds-checked little-endian cursor that streams a file's header: it reads forward through
 * a window of the source, so memory is bounded by the window and the largest single value;
 * past `maxBytes` of header it stops with a problem rather than read on.
 */
export class Cursor {
  position = 0;
  private window: Uint8Array = new Uint8Array(0);
  private windowStart = 0;

  constructor(
    private readonly source: ByteSource,
    private readonly fileSize: number,
    readonly label: string,
    private readonly maxBytes = Number.MAX_SAFE_INTEGER,
  ) {}

  view(size: number, what: string): DataView {
    const end = this.position + size;
    if (end > this.fileSize) throw fileProblem(this.label, `file is truncated (ends inside ${what})`);
    if (end > this.maxBytes) throw fileProblem(this.label, `header is larger than ${this.maxBytes} bytes`);
    if (end > this.windowStart + this.window.length) {
      this.windowStart = this.position;
      this.window = this.source.read(this.position, Math.max(size, WINDOW_BYTES));
      if (this.window.length < size) throw fileProblem(this.label, `file is truncated (ends inside ${what})`);
    }
    const at = this.position - this.windowStart;
    const v = new DataView(this.window.buffer, this.window.byteOffset + at, size);
    this.position = end;
    return v;
  }

  u32(what: string): number {
    return this.view(4, what).getUint32(0, true);
  }

  u64(what: string): bigint {
    return this.view(8, what).getBigUint64(0, true);
  }

  /** A uint64 count, bounded by a limit and by the bytes left in the file at `minItemBytes` each. */
  count(what: string, limit: number, minItemBytes: number): number {
    const n = this.u64(what);
    if (n > BigInt(limit)) throw fileProblem(this.label, `${what} ${n} exceeds the limit of ${limit}`);
    const left = this.fileSize - this.position;
    if (n * BigInt(minItemBytes) > BigInt(left))
      throw fileProblem(this.label, `${what} ${n} cannot fit in the ${left} bytes left in the file`);
    return Number(n);
  }

  string(what: string, maxBytes: number): string {
    const n = this.u64(`length of ${what}`);
    if (n > BigInt(maxBytes)) throw fileProblem(this.label, `${what} is ${n} bytes long (limit ${maxBytes})`);
    const v = this.view(Number(n), what);
    return utf8.decode(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  }
}
