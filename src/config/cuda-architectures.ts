/**
 * CUDA architectures as CMake's CMAKE_CUDA_ARCHITECTURES takes them (`80;86;90`), for
 * `npm run build:cuda` (--arch, HEARTH_CUDA_ARCHITECTURES): a GPU generation's number, with
 * CMake's optional suffixes (`90a`, `90-real`, `90-virtual`), or one of its words.
 */

const ARCHITECTURE = /^\d{2,3}[af]?(-real|-virtual)?$/;
const CMAKE_WORDS = ["native", "all", "all-major"];

/** A list separated by semicolons, commas or spaces: the architectures, or a problem the config reports. */
export function parseCudaArchitectures(text: string): { architectures: string[] } | { problem: string } {
  const items = text
    .split(/[;,\s]+/)
    .map((item) => item.trim())
    .filter((item) => item !== "");
  if (items.length === 0) return { problem: "no architecture named: give one or more, e.g. 80;90" };
  const bad = items.filter((item) => !ARCHITECTURE.test(item) && !CMAKE_WORDS.includes(item));
  if (bad.length > 0) {
    return {
      problem: `${bad.join(", ")}: an architecture is a number like 80 or 90 (compute capability 9.0 is 90), or native, all, all-major`,
    };
  }
  return { architectures: [...new Set(items)] };
}

/** A compute capability as nvidia-smi reports it (`8.9`, `12.0`) as an architecture number (`89`, `120`). */
export function architectureOfComputeCapability(capability: string): string {
  const match = /^(\d+)\.(\d)$/.exec(capability.trim());
  if (!match) throw new Error(`"${capability}" is not a compute capability (major.minor, e.g. 8.9)`);
  return `${Number(match[1])}${match[2]}`;
}
