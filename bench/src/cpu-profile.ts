import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/**
 * Reads the CPU profiles `--profile DIR` makes (node --cpu-prof of the API and worker
 * processes) and says where each process spent its time: self time per function, and
 * per package (or per Hearth source directory).
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  pid: number;
  totalMs: number;
  /** Sampled time not idle (program, GC, native code). */
  busyMs: number;
  functions: { name: string; selfMs: number }[];
  places: { name: string; selfMs: number }[];
}

/** The main-thread profiles in `dir` of the given processes; `skipMs(pid)` leaves out each one's start-up. */
export async function summarizeProfiles(
  dir: string,
  skipMs: (pid: number) => number | undefined,
  top = 12,
): Promise<ProfileSummary[]> {
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (tsx's loader runs in another).
  const files = (await readdir(dir)).filter((f) => f.endsWith(".cpuprofile") && f.split(".")[4] === "0").sort();
  const summaries: ProfileSummary[] = [];
  for (const file of files) {
    const skip = skipMs(Number(file.split(".")[3]));
    if (skip !== undefined) summaries.push(await summarizeProfile(path.join(dir, file), skip, top));
  }
  return summaries;
}

export async function summarizeProfile(file: string, skipMs = 0, top = 12): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at >= skipMs * 1000) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const functions = new Map<string, number>();
  const places = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") continue;
    busy += us;
    const where = frame.url ? `${placeOf(frame.url)}:${frame.lineNumber + 1}` : "";
    const fn = `${frame.functionName || "(anonymous)"}${where ? ` ${where}` : ""}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    const place = frame.url ? placeOf(frame.url) : frame.functionName;
    places.set(place, (places.get(place) ?? 0) + us);
  }
  const ranked = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000 }));
  return {
    file,
    pid: Number(path.basename(file).split(".")[3]) || 0,
    totalMs: Math.max(0, (profile.endTime - profile.startTime) / 1000 - skipMs),
    busyMs: busy / 1000,
    functions: ranked(functions),
    places: ranked(places),
  };
}

/** A package name (node_modules/<pkg>), a node: builtin, or a path inside the repository. */
function placeOf(url: string): string {
  const modules = url.lastIndexOf("node_modules/");
  if (modules !== -1) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith("node:")) return url;
  const src = url.indexOf("/src/");
  return src !== -1 ? url.slice(src + 1) : url;
}

export function renderProfiles(summaries: ProfileSummary[], roles: Map<number, string>): string {
  const lines: string[] = [];
  for (const s of summaries) {
    const pct = (ms: number) => `${((ms / s.busyMs) * 100).toFixed(1)}%`.padStart(6);
    lines.push(
      "",
      `${roles.get(s.pid) ?? "process"} (pid ${s.pid}): ${(s.busyMs / 1000).toFixed(1)} s busy of ${(s.totalMs / 1000).toFixed(1)} s — ${path.basename(s.file)}`,
      "  by place:",
      ...s.places.map((p) => `    ${pct(p.selfMs)}  ${p.name}`),
      "  by function (self time):",
      ...s.functions.map((f) => `    ${pct(f.selfMs)}  ${f.name}`),
    );
  }
  return lines.join("\n");
}
