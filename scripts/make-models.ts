/**
 * Builds the demo models (hearth-tiny and its example LoRA in PEFT and GGUF form, and
 * hearth-demo, a word 4-gram that writes readable text), or the
 * benchmark models (random weights in real shapes, with PEFT LoRA adapters).
 *
 *   npm run make-models -- [--out DIR] [--force]
 *   npm run make-models -- --bench [--bench-large] [--adapters N] [--out DIR] [--force]
 *   npm run make-models -- --qwen3-vocab [--out DIR] [--force]
 *
 * Demo models: DIR defaults to the configured model directory (HEARTH_MODEL_DIR, else
 * <HEARTH_DATA_DIR>/models). Benchmark models: DIR defaults to <HEARTH_DATA_DIR>/bench-models
 * and may not be the model directory (a worker serves every .gguf there); --bench builds
 * the SmolLM-135M shape (about 175 MB), --bench-large a Llama-3.2-1B shape (about 1.3 GB),
 * each with N adapters (default 8). --qwen3-vocab builds qwen3-vocab-tiny (random weights with
 * Qwen3's real tokenizer and chat template, about 27 MB; needs the dev dependencies) into DIR,
 * by default the model directory. Existing artifacts are kept unless --force is given.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { DEFAULT_BENCH_ADAPTERS, buildBenchModels } from "../src/models/factory/bench-models.js";
import { buildDemoModels } from "../src/models/factory/demo-models.js";
import { buildHearthDemo } from "../src/models/factory/hearth-demo.js";
import { buildQwen3VocabModel } from "../src/models/factory/random-qwen3.js";

const usage = [
  "usage: npm run make-models -- [--out DIR] [--force]",
  "       npm run make-models -- --bench [--bench-large] [--adapters N] [--out DIR] [--force]",
  "       npm run make-models -- --qwen3-vocab [--out DIR] [--force]",
].join("\n");

const { values } = parseArgs({
  options: {
    out: { type: "string" },
    force: { type: "boolean", default: false },
    bench: { type: "boolean", default: false },
    "bench-large": { type: "boolean", default: false },
    adapters: { type: "string" },
    "qwen3-vocab": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log(usage);
  process.exit(0);
}

const config = loadConfig(process.env);
const benchBuilds = [...(values.bench ? [{ large: false }] : []), ...(values["bench-large"] ? [{ large: true }] : [])];

if (values["qwen3-vocab"]) {
  if (benchBuilds.length > 0 || values.adapters !== undefined) fail("--qwen3-vocab goes alone");
  const model = await buildQwen3VocabModel(values.out ?? config.modelDir, { force: values.force });
  console.log(model.written ? `wrote ${model.file}` : `${model.file} already present (use --force to rebuild)`);
} else if (benchBuilds.length === 0) {
  if (values.adapters !== undefined) fail("--adapters goes with --bench or --bench-large");
  const models = await buildDemoModels(values.out ?? config.modelDir, { force: values.force });
  const demo = await buildHearthDemo(models.dir, { force: values.force });
  if (demo.written) models.written.push(demo.file);
  if (models.written.length === 0) {
    console.log(`demo models already present in ${models.dir} (use --force to rebuild)`);
  } else {
    for (const written of models.written) console.log(`wrote ${written}`);
  }
  console.log(`base model:          ${models.baseModel}`);
  console.log(`readable demo model: ${demo.file}`);
  console.log(`LoRA (PEFT):         ${models.peftAdapterDir}`);
  console.log(`LoRA (GGUF):         ${models.ggufAdapter}`);
} else {
  const adaptersArg = values.adapters ?? String(DEFAULT_BENCH_ADAPTERS);
  if (!/^\d{1,4}$/.test(adaptersArg)) fail(`--adapters must be a whole number, not ${adaptersArg}`);
  const adapters = Number(adaptersArg);
  const dir = path.resolve(values.out ?? path.join(config.dataDir, "bench-models"));
  if (dir === config.modelDir)
    fail(`${dir} is the model directory, whose every .gguf is served: choose another --out for benchmark models`);
  for (const { large } of benchBuilds) {
    const started = performance.now();
    const models = await buildBenchModels(dir, {
      adapters,
      large,
      force: values.force,
      onWrite: (artifact) => console.log(`writing ${artifact}`),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      models.written.length === 0
        ? `${models.baseModelId}: already present (use --force to rebuild)`
        : `${models.baseModelId}: ${models.written.length} written in ${seconds} s`,
    );
    console.log(`base model:          ${models.baseModel}  (serve it with HEARTH_MODEL_DIR=${models.dir})`);
    console.log(`LoRA adapters (PEFT): ${models.adapterDirs.length} in ${path.join(models.dir, "adapters")}`);
  }
}

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}
