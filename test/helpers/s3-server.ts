import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { freePort } from "../../bench/src/free-port.js";

/** s3rver's fixed credentials (it checks the signatures made with them). */
export const S3_CREDENTIALS = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

/** A real S3-protocol server (s3rver, from npm) in a process of its own, on a loopback port. */
export interface S3Server {
  endpoint: string;
  /** The environment a Hearth process needs to use `bucket` on it. */
  env(bucket: string, prefix?: string): Record<string, string>;
  createBucket(name: string): Promise<void>;
  pid: number;
  close(): Promise<void>;
}

export async function startS3Server(): Promise<S3Server> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-s3-"));
  const port = await freePort();
  const bin = path.join(process.cwd(), "node_modules", "s3rver", "bin", "s3rver.js");
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, "-d", dir, "-a", "127.0.0.1", "-p", String(port), "--silent", "--no-vhost-buckets"],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(endpoint).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`s3rver did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: {
      accessKeyId: S3_CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    },
  });
  return {
    endpoint,
    pid: child.pid!,
    env: (bucket, prefix = "") => ({
      HEARTH_STORAGE_URL: `s3://${bucket}/${prefix}`,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: "us-east-1",
      ...S3_CREDENTIALS,
    }),
    createBucket: async (name) => {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    close: async () => {
      client.destroy();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
