import { readdirSync, readFileSync } from "node:fs";
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
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** file → the src files it imports (relative specifiers) and the packages (bare ones). */
function importGraph() {
  const graph = new Map<string, { files: string[]; packages: string[] }>();
  for (const file of sourceFiles(SRC)) {
    const files: string[] = [];
    const packages: string[] = [];
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".")) files.push(path.resolve(path.dirname(file), spec).replace(/\.js$/, ".ts"));
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

/** Everything a room's files load, with the chain that first reached it. */
function reach(roomName: string): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const queue: string[][] = [...graph.keys()].filter((f) => inRoom(f, roomName)).map((f) => [f]);
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
const rules: { from: string; notRooms: string[]; notPackages: string[] }[] = [
  {
    from: "domain",
    notRooms: ["api", "auth", "cli", "control", "db", "models", "queues", "storage", "workers"],
    notPackages: [],
  },
  {
    from: "api/contract",
    notRooms: ["db", "queues", "workers", "control", "storage", "auth"],
    notPackages: [...CLIENT_PACKAGES, "@huggingface/jinja"],
  },
  {
    from: "cli",
    notRooms: ["db", "queues", "workers", "control", "admin", "api/services", "api/openai", "api/management"],
    notPackages: [...CLIENT_PACKAGES, "@huggingface/jinja"],
  },
  {
    from: "db",
    notRooms: ["auth", "api", "workers", "control", "cli", "queues", "storage", "models"],
    notPackages: [],
  },
  { from: "queues", notRooms: ["api", "workers", "control", "db", "cli"], notPackages: ["drizzle-orm"] },
  { from: "workers", notRooms: ["api", "control", "db", "cli", "admin"], notPackages: ["drizzle-orm"] },
  { from: "control", notRooms: ["api", "workers", "cli"], notPackages: ["node-llama-cpp"] },
  {
    from: "models",
    notRooms: ["api", "queues", "workers", "control", "db", "cli", "storage"],
    notPackages: ["drizzle-orm"],
  },
  {
    from: "images",
    notRooms: ["api", "queues", "workers", "control", "db", "cli", "storage"],
    notPackages: ["drizzle-orm", "bullmq"],
  },
  // Users' chat templates render only in the sandbox's threads (templates/template-thread.ts,
  // loaded by URL, not imported): nothing the API or the control plane runs reaches a renderer.
  { from: "api", notRooms: ["workers"], notPackages: ["@huggingface/jinja", "node-llama-cpp"] },
  {
    from: "templates",
    notRooms: ["api", "queues", "workers", "control", "db", "cli", "storage", "auth"],
    notPackages: ["drizzle-orm", "bullmq"],
  },
  { from: "limits", notRooms: ["api", "workers", "control", "db", "cli", "storage"], notPackages: ["drizzle-orm"] },
  { from: "storage", notRooms: ["api", "queues", "workers", "control", "db", "cli"], notPackages: ["drizzle-orm"] },
];

describe("imports between rooms", () => {
  it("reads the graph", () => {
    expect(graph.size).toBeGreaterThan(100);
    // The scanner sees the CLI's own imports, so an empty reach is not a pass by accident.
    expect(reach("cli").size).toBeGreaterThan(10);
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
