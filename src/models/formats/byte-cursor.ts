import { fileProblem } from "./model-file-error.js";

/** Signals that the prefix read so far ends before the header does. */
export class NeedMoreBytes extends Error {
  constructor(readonly needed: number) {
    super("need more bytes");
  }
}

const utf8 = new TextDecoder("utf-8");

/** A bounds-checked little-endian cursor over the prefix of a file. */
export class Cursor {
  position = 0;
  private readonly data: DataView;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly fileSize: number,
    readonly label: string,
  ) {
    this.data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  view(size: number, what: string): DataView {
    const end = this.position + size;
    if (end > this.fileSize) throw fileProblem(this.label, `file is truncated (ends inside ${what})`);
    if (end > this.bytes.length) throw new NeedMoreBytes(end);
    const v = new DataView(this.data.buffer, this.data.byteOffset + this.position, size);
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
