import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { freePort } from "../../bench/src/free-port.js";
import { eventually } from "./eventually.js";
import { deleteRedisKeys } from "./redis.js";
import { S3_CREDENTIALS, type S3Server } from "./s3-server.js";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "./test-databases.js";
import { testModelDir } from "./test-models.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
}

export interface ComposeDeployment {
  /** Each API replica's URL, and the round-robin proxy's in front of them. */
  apis: string[];
  proxy: string;
  adminKey: string;
  workers: number;
  /** The storage the processes share: the S3 bucket, or a directory. */
  storageEnv: Record<string, string>;
  close(): Promise<void>;
}

export interface ComposeOptions {
  apis: number;
  workers: number;
  /** The S3 server standing in for the compose file's MinIO; without it, a shared directory (a volume). */
  s3?: S3Server;
}

/**
 * docker-compose.yml run without Docker: each api and worker replica is its service's command,
 * run as a local process with its service's environment. Only what names the compose
 * network changes: the database (a fresh one on the local PostgreSQL), Redis (the local one,
 * under a fresh prefix), MinIO (the test's S3 server and its credentials), each replica's data
 * directory and port; and the models are the test models, built once for the suite.
 */
export async function startComposeDeployment(options: ComposeOptions): Promise<ComposeDeployment> {
  const compose = parse(await fs.readFile(path.join(ROOT, "docker-compose.yml"), "utf8")) as {
    services: Record<string, ComposeService>;
  };
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-compose-"));
  const database: TestPostgresDatabase = await createTestPostgresDatabase();
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `hearth-compose-${crypto.randomBytes(4).toString("hex")}`;
  const adminKey = `hth_compose_${crypto.randomBytes(20).toString("base64url")}`;
  let storageEnv: Record<string, string>;
  if (options.s3) {
    const bucket = `compose-${crypto.randomBytes(4).toString("hex")}`;
    await options.s3.createBucket(bucket);
    storageEnv = {
      HEARTH_STORAGE_URL: `s3://${bucket}/hearth`,
      AWS_ENDPOINT_URL_S3: options.s3.endpoint,
      ...S3_CREDENTIALS,
    };
  } else {
    storageEnv = { HEARTH_STORAGE_URL: "", HEARTH_STORAGE_DIR: path.join(scratch, "shared-volume") };
  }
  const interpolate = (value: string) =>
    value.replace(/\$\{([A-Z0-9_]+):-([^}]*)\}/g, (_, name: string, fallback: string) =>
      name === "HEARTH_ADMIN_KEY" ? adminKey : fallback,
    );
  const envOf = (service: string, replica: number, port?: number): NodeJS.ProcessEnv => {
    const declared = Object.fromEntries(
      Object.entries(compose.services[service]?.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
    );
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...declared,
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      HEARTH_REDIS_PREFIX: prefix,
      HEARTH_DATA_DIR: path.join(scratch, `${service}-${replica}`),
      ...(port === undefined ? {} : { PORT: String(port), HOST: "127.0.0.1" }),
      ...storageEnv,
      HEARTH_MODEL_DIR: testModelDir,
      HEARTH_BUILD_DEMO_MODELS: "false",
      HEARTH_WORKER_THREADS: "1",
      HEARTH_LOG_LEVEL: "warn",
    };
  };

  const children: { role: string; child: ChildProcess; output: () => string }[] = [];
  const run = (service: string, replica: number, port?: number) => {
    const command = compose.services[service]?.command;
    if (!command) throw new Error(`docker-compose.yml has no command for ${service}`);
    // Its own process group, so that stopping npm stops what it started.
    const child = spawn(command[0]!, command.slice(1), {
      cwd: ROOT,
      env: envOf(service, replica, port),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    children.push({ role: `${service} ${replica}`, child, output: () => output });
    return child;
  };

  const close = async () => {
    await Promise.all(
      children.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        try {
          process.kill(-child.pid!, "SIGTERM");
        } catch {
          return;
        }
        const killed = setTimeout(() => {
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch {
            // gone already
          }
        }, 20_000);
        await exited;
        clearTimeout(killed);
      }),
    );
    proxyServer?.close();
    await deleteRedisKeys(redisUrl, `${prefix}:*`);
    await database.drop();
    await fs.rm(scratch, { recursive: true, force: true });
  };

  let proxyServer: http.Server | undefined;
  try {
    const apis: string[] = [];
    // The first API migrates the database; the others start once it is up.
    for (let i = 0; i < options.apis; i++) {
      const port = await freePort();
      const child = run("api", i + 1, port);
      const url = `http://127.0.0.1:${port}`;
      await eventually(async () => {
        if (child.exitCode !== null) throw new Error(`api ${i + 1} exited: ${children.at(-1)!.output()}`);
        const status = await fetch(`${url}/healthz`).then((r) => r.status);
        if (status !== 200) throw new Error(`api ${i + 1} answers /healthz with ${status}`);
      }, 90_000);
      apis.push(url);
    }
    for (let i = 0; i < options.workers; i++) run("worker", i + 1);
    await eventually(async () => {
      const dead = children.find((c) => c.child.exitCode !== null);
      if (dead) throw new Error(`${dead.role} exited: ${dead.output()}`);
      const ready = (await (await fetch(`${apis[0]}/readyz`)).json()) as { workers?: number };
      if (ready.workers !== options.workers) throw new Error(`${ready.workers} of ${options.workers} workers ready`);
    }, 120_000);
    proxyServer = await roundRobinProxy(apis);
    const proxy = `http://127.0.0.1:${(proxyServer.address() as AddressInfo).port}`;
    return { apis, proxy, adminKey, workers: options.workers, storageEnv, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A load balancer as small as can be: each request to the next API replica in turn, streamed both ways. */
async function roundRobinProxy(targets: string[]): Promise<http.Server> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = new URL(req.url ?? "/", targets[next++ % targets.length]);
    const upstream = http.request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}
