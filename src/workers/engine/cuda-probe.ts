/**
 * The CUDA probe (a child process of the worker, cuda-check.ts): loads node-llama-cpp's CUDA
 * backend as the worker would, a tiny model with every layer on the GPU, and evaluates a few
 * tokens, so that kernels run. It says how far it got on stdout; a kernel that cannot run
 * aborts it (ggml), and its CUDA error line is what the worker reports.
 *
 *   node [--import tsx] cuda-probe.ts <empty directory> [getLlama's cmakeOptions as JSON]
 */
import path from "node:path";
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import { BYTE_VOCAB_SIZE } from "../../models/factory/bigram.js";
import { writeTinyLlama } from "../../models/factory/tiny-llama.js";
import { PROBE_FAILED, PROBE_LOADED, PROBE_PASSED } from "./cuda-check.js";

const [dir, options] = process.argv.slice(2);
if (!dir) {
  console.error("usage: cuda-probe <empty directory> [cmake options as JSON]");
  process.exit(2);
}
const cmakeOptions = options ? (JSON.parse(options) as Record<string, string>) : {};

const modelPath = path.join(dir, "cuda-probe.gguf");
// Q8_0 matrices: the quantized kernels a served model runs, not only cuBLAS's.
await writeTinyLlama(modelPath, {
  table: new Float32Array(BYTE_VOCAB_SIZE * BYTE_VOCAB_SIZE),
  name: "cuda-probe",
  weightType: "Q8_0",
});

let llama: Llama;
try {
  // progressLogs: node-llama-cpp says on stderr why a backend it tried did not load.
  llama = await getLlama({
    gpu: "cuda",
    build: "never",
    cmakeOptions,
    progressLogs: true,
    logLevel: LlamaLogLevel.error,
  });
} catch (error) {
  console.log(`${PROBE_FAILED} node-llama-cpp loaded no CUDA backend (${(error as Error).message})`);
  process.exit(3);
}
if (llama.gpu !== "cuda") {
  console.log(`${PROBE_FAILED} node-llama-cpp loaded the ${llama.gpu || "CPU"} backend, not CUDA`);
  process.exit(3);
}
console.log(`${PROBE_LOADED} ${JSON.stringify({ build: llama.buildType })}`);
const devices = await llama.getGpuDeviceNames();
if (devices.length === 0) {
  console.log(`${PROBE_FAILED} node-llama-cpp's CUDA backend loaded and sees no GPU`);
  process.exit(3);
}
writeNativeLogsDirectly(llama);

const model = await llama.loadModel({ modelPath, gpuLayers: "max" });
if (model.gpuLayers < 1) {
  console.log(`${PROBE_FAILED} no layer of the model went on the GPU`);
  process.exit(3);
}
const context = await model.createContext({ contextSize: 64 });
let generated = 0;
for await (const _token of context.getSequence().evaluate(model.tokenize("cuda"))) {
  if (++generated >= 4) break;
}
console.log(`${PROBE_PASSED} ${JSON.stringify({ devices, build: llama.buildType })}`);
process.exit(0);

/**
 * llama.cpp's log lines go to JavaScript through a queue, which a CUDA error's abort empties
 * before they are printed; without node-llama-cpp's logger the addon writes them at once.
 */
function writeNativeLogsDirectly(loaded: Llama): void {
  const bindings = (loaded as unknown as { _bindings?: { setLogger?: () => void } })._bindings;
  if (typeof bindings?.setLogger === "function") bindings.setLogger();
}
