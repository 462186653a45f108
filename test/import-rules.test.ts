import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Which way imports run between the rooms of src/ (docs/architecture.md). A rule names a
 * room and what it may not reach, directly or through any chain of imports: the CLI, say,
 * must not load the database layer even by way of a shared module.
 */

const SRC = path.resolve(import.meta.dirname, "../src");

/** Every import, export-from and dynamic import of a file, as written. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const match of source.matchAll(pattern)) found.push((match[1] ?? match[2])!);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The source file an import names: `./x.js` is `x.ts`, or `x.tsx` for a page. */
function sourceOf(imported: string): string {
  const ts = imported.replace(/\.js$/, ".ts");
  return existsSync(ts) ? ts : imported.replace(/\.js$/, ".tsx");
}

/** file → the src files it imports (relative specifiers) and the packages (bare ones). */
function importGraph() {
  const graph = new Map<string, { files: string[]; packages: string[] }>();
  for (const file of sourceFiles(SRC)) {
    const files: string[] = [];
    const packages: string[] = [];
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".")) files.push(sourceOf(path.resolve(path.dirname(file), spec)));
      else if (!spec.startsWith("node:"))
        packages.push(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
    }
    graph.set(file, { files, packages });
  }
  return graph;
}

const graph = importGraph();
const room = (file: string) => path.relative(SRC, file).split(path.sep).slice(0, -1).join("/");
const inRoom = (file: string, name: string) => room(file) === name || room(file).startsWith(`${name}/`);

/** A room's files: those under its folder, and the root file of its name (config.ts beside config/). */
const ofRoom = (file: string, name: string) => inRoom(file, name) || file === path.join(SRC, `${name}.ts`);

/** Everything a room's files load, with the chain that first reached it. */
function reach(roomName: string): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const queue: string[][] = [...graph.keys()].filter((f) => ofRoom(f, roomName)).map((f) => [f]);
  for (const chain of queue) chains.set(chain[0]!, chain);
  while (queue.length > 0) {
    const chain = queue.shift()!;
    const file = chain[chain.length - 1]!;
    for (const next of graph.get(file)?.files ?? []) {
      if (chains.has(next)) continue;
      const longer = [...chain, next];
      chains.set(next, longer);
      queue.push(longer);
    }
  }
  return chains;
}

const show = (chain: string[]) => chain.map((f) => path.relative(SRC, f)).join(" → ");

const CLIENT_PACKAGES = ["drizzle-orm", "postgres", "@electric-sql/pglite", "bullmq", "ioredis", "node-llama-cpp"];

/** The rooms of docs/architecture.md and what none of their files may load, however indirectly. */
const ROOMS = [
  "admin",
  "api",
  "auth",
  "cli",
  "config",
  "control",
  "db",
  "domain",
  "images",
  "jobs",
  "limits",
  "metrics",
  "models",
  "packaging",
  "process",
  "redis",
  "requests",
  "storage",
  "templates",
  "workers",
];
/** Every room but these. */
const allBut = (...allowed: string[]) => ROOMS.filter((r) => !allowed.includes(r));

const rules: { from: string; notRooms: string[]; notPackages: string[] }[] = [
  // A leaf: the specs, their parsers and defaults; other rooms take their defaults from it.
  {
    from: "config",
    notRooms: allBut("config", "domain", "process"),
    notPackages: [...CLIENT_PACKAGES, "@huggingface/jinja"],
  },
  { from: "domain", notRooms: allBut("domain"), notPackages: [] },
  {
    from: "api/contract",
    notRooms: ["db", "redis", "jobs", "requests", "workers", "control", "storage", "auth"],
    notPackages: [...CLIENT_PACKAGES, "@huggingface/jinja"],
  },
  {
    from: "cli",
    notRooms: [
      "db",
      "redis",
      "jobs",
      "requests",
      "workers",
      "control",
      "admin",
      "api/services",
      "api/openai",
      "api/management",
    ],
    notPackages: [...CLIENT_PACKAGES, "@huggingface/jinja"],
  },
  {
    from: "db",
    notRooms: ["auth", "api", "workers", "control", "cli", "redis", "jobs", "requests", "storage", "models"],
    notPackages: [],
  },
  // Redis plumbing: connections, timeouts, locks, key sweeps; nothing of what they carry.
  { from: "redis", notRooms: allBut("redis", "config", "domain", "process"), notPackages: ["bullmq", "drizzle-orm"] },
  // The job registry and the fleet's coordination: no request path, no HTTP, no engine.
  {
    from: "jobs",
    notRooms: ["api", "requests", "workers", "control", "db", "cli", "admin"],
    notPackages: ["drizzle-orm"],
  },
  // One request's path between the API and a worker: neither side's code.
  { from: "requests", notRooms: ["api", "workers", "control", "db", "cli", "admin"], notPackages: ["drizzle-orm"] },
  { from: "workers", notRooms: ["api", "control", "db", "cli", "admin"], notPackages: ["drizzle-orm"] },
  { from: "control", notRooms: ["api", "workers", "cli", "admin"], notPackages: ["node-llama-cpp"] },
  {
    from: "models",
    notRooms: ["api", "redis", "jobs", "requests", "workers", "control", "db", "cli", "storage"],
    notPackages: ["drizzle-orm"],
  },
  {
    from: "images",
    notRooms: ["api", "redis", "jobs", "requests", "workers", "control", "db", "cli", "storage"],
    notPackages: ["drizzle-orm", "bullmq"],
  },
  // Users' chat templates render only in the sandbox's threads (templates/template-thread.ts,
  // loaded by URL, not imported): nothing the API or the control plane runs reaches a renderer.
  { from: "api", notRooms: ["workers", "cli", "admin"], notPackages: ["@huggingface/jinja", "node-llama-cpp"] },
  // Services hold no HTTP: no route, middleware or page, no Hono.
  {
    from: "api/services",
    notRooms: ["api/openai", "api/management", "api/middleware", "api/web", "api/admin", "api/images"],
    notPackages: ["hono"],
  },
  {
    from: "templates",
    notRooms: ["api", "redis", "jobs", "requests", "workers", "control", "db", "cli", "storage", "auth"],
    notPackages: ["drizzle-orm", "bullmq"],
  },
  {
    from: "limits",
    notRooms: ["api", "workers", "control", "db", "cli", "storage", "admin"],
    notPackages: ["drizzle-orm"],
  },
  {
    from: "storage",
    notRooms: ["api", "redis", "jobs", "requests", "workers", "control", "db", "cli"],
    notPackages: ["drizzle-orm"],
  },
  { from: "auth", notRooms: ["api", "jobs", "requests", "workers", "control", "cli", "admin"], notPackages: [] },
  { from: "metrics", notRooms: ["api", "workers", "control", "db", "cli", "admin"], notPackages: ["drizzle-orm"] },
  { from: "admin", notRooms: ["workers", "control", "api/openai", "api/web"], notPackages: ["node-llama-cpp"] },
];

/** The import cycles among src's files: each strongly connected component of two files or more. */
function cycles(): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    order.set(file, index);
    low.set(file, index++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file)?.files ?? []) {
      if (!graph.has(next)) continue;
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, order.get(next)!));
    }
    if (low.get(file) !== order.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(path.relative(SRC, member));
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  return found;
}

describe("imports between rooms", () => {
  // The bench (bench/src/), the test helpers and the scripts are tools around the product:
  // they import src/, never the other way round.
  it("src/ imports nothing outside src/", () => {
    const outside: string[] = [];
    for (const [file, { files }] of graph) {
      for (const target of files) {
        if (path.relative(SRC, target).startsWith(".."))
          outside.push(`${show([file])} → ${path.relative(SRC, target)}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it("reads the graph", () => {
    expect(graph.size).toBeGreaterThan(100);
    // The scanner sees the CLI's own imports, so an empty reach is not a pass by accident.
    expect(reach("cli").size).toBeGreaterThan(10);
  });

  it("has no import cycle", () => {
    expect(cycles()).toEqual([]);
  });

  it("knows every room of src/", () => {
    const rooms = new Set([...graph.keys()].map((f) => room(f).split("/")[0]!).filter((r) => r !== ""));
    expect([...rooms].filter((r) => !ROOMS.includes(r) && r !== "bench")).toEqual([]);
  });

  for (const rule of rules) {
    it(`${rule.from}/ reaches none of ${[...rule.notRooms, ...rule.notPackages].join(", ")}`, () => {
      const bad: string[] = [];
      for (const [file, chain] of reach(rule.from)) {
        if (rule.notRooms.some((r) => inRoom(file, r))) bad.push(show(chain));
        for (const pkg of graph.get(file)?.packages ?? []) {
          if (rule.notPackages.includes(pkg)) bad.push(`${show(chain)} → ${pkg}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});
