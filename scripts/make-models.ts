/**
 * Builds the demo models (hearth-tiny and its example LoRA in PEFT and GGUF form).
 *
 *   npm run make-models -- [--out DIR] [--force]
 *
 * DIR defaults to the configured model directory (HEARTH_MODEL_DIR, else <HEARTH_DATA_DIR>/models).
 * Existing artifacts are kept unless --force is given.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { buildDemoModels } from "../src/models/demo-models.js";

const { values } = parseArgs({
  options: {
    out: { type: "string" },
    force: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log("usage: npm run make-models -- [--out DIR] [--force]");
  process.exit(0);
}

const dir = values.out ?? loadConfig(process.env).modelDir;
const models = await buildDemoModels(dir, { force: values.force });
if (models.written.length === 0) {
  console.log(`demo models already present in ${models.dir} (use --force to rebuild)`);
} else {
  for (const written of models.written) console.log(`wrote ${written}`);
}
console.log(`base model:          ${models.baseModel}`);
console.log(`LoRA (PEFT):         ${models.peftAdapterDir}`);
console.log(`LoRA (GGUF):         ${models.ggufAdapter}`);
