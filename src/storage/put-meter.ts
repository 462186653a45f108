import { createHash } from "node:crypto";
import { Transform } from "node:stream";
import { AppError } from "../errors.js";
import type { PutOptions } from "./blob-store.js";

/**
 * What every backend's put streams its body through: the bytes are counted and hashed on
 * their way, and a body past `maxBytes` fails the stream (413). Once the body is through,
 * `finish` gives its size and SHA-256, refusing (400) one other than `expectedSha256`.
 */
export interface PutMeter {
  stream: Transform;
  finish(): { size: number; sha256: string };
}

export function putMeter(key: string, options: PutOptions): PutMeter {
  const hash = createHash("sha256");
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (options.maxBytes !== undefined && size > options.maxBytes) {
        done(new AppError("payload_too_large", `${key} is larger than ${options.maxBytes} bytes.`));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const finish = () => {
    const sha256 = hash.digest("hex");
    if (options.expectedSha256 && options.expectedSha256.toLowerCase() !== sha256) {
      throw new AppError(
        "invalid_request",
        `${key}: the content's SHA-256 is ${sha256}, not ${options.expectedSha256}.`,
      );
    }
    return { size, sha256 };
  };
  return { stream, finish };
}
