import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";

/**
 * The machine's NVIDIA GPUs, as the driver reports them: nvidia-smi's name, compute
 * capability and driver version of each, and whether the kernel driver lists any GPU at all
 * (/proc/driver/nvidia/gpus, there even where nvidia-smi is not). Cheap where there is none:
 * a directory that does not exist and a command that is not found.
 */
export interface NvidiaGpu {
  name: string;
  /** As nvidia-smi writes it: `9.0`, `8.9`. */
  computeCapability: string;
  driverVersion: string;
}

export interface NvidiaGpus {
  /** Some NVIDIA GPU is here: nvidia-smi listed one, or the kernel driver did. */
  present: boolean;
  gpus: NvidiaGpu[];
  /** Why nvidia-smi listed none, when it did not answer. */
  smiError?: string;
}

const QUERY = ["--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"];

/** One GPU a line: `NVIDIA H200, 9.0, 580.95.05`; the name is everything before the last two fields. */
export function parseNvidiaSmiGpus(csv: string): NvidiaGpu[] {
  const gpus: NvidiaGpu[] = [];
  for (const line of csv.split("\n")) {
    const fields = /^(.+),\s*(\d+\.\d+)\s*,\s*([^,]+)$/.exec(line.trim());
    if (!fields) continue;
    gpus.push({ name: fields[1]!.trim(), computeCapability: fields[2]!, driverVersion: fields[3]!.trim() });
  }
  return gpus;
}

export async function findNvidiaGpus(): Promise<NvidiaGpus> {
  const [smi, driverListed] = await Promise.all([
    runNvidiaSmi().then(
      (out) => ({ gpus: parseNvidiaSmiGpus(out) }),
      (error: NodeJS.ErrnoException) => ({
        gpus: [] as NvidiaGpu[],
        error: error.code === "ENOENT" ? "nvidia-smi not found" : `nvidia-smi: ${error.message.split("\n")[0]}`,
      }),
    ),
    readdir("/proc/driver/nvidia/gpus").then(
      (entries) => entries.length,
      () => 0,
    ),
  ]);
  return {
    present: smi.gpus.length > 0 || driverListed > 0,
    gpus: smi.gpus,
    ...("error" in smi ? { smiError: smi.error } : {}),
  };
}

/** The GPUs in a line: `NVIDIA H200 (compute capability 9.0, driver 580.95.05)`. */
export function describeGpus(found: NvidiaGpus): string {
  if (found.gpus.length === 0) {
    return found.present
      ? `an NVIDIA GPU the driver lists, which nvidia-smi did not describe${found.smiError ? ` (${found.smiError})` : ""}`
      : "no NVIDIA GPU found";
  }
  return found.gpus
    .map((gpu) => `${gpu.name} (compute capability ${gpu.computeCapability}, driver ${gpu.driverVersion})`)
    .join("; ");
}

function runNvidiaSmi(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("nvidia-smi", QUERY, { timeout: 15_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}
