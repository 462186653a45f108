import { buildDemoModels } from "../src/models/factory/demo-models.js";
import { buildQwen3VocabModel } from "../src/models/factory/random-qwen3.js";
import { testModelDir, testQwen3ModelDir } from "./helpers/test-models.js";

/**
 * Builds the demo models once for the whole run (deterministic, a few seconds), and the
 * Qwen3-vocabulary model unless the one there has the same recipe (a few seconds more, 27 MB).
 */
export default async function setup() {
  await buildDemoModels(testModelDir, { force: true });
  await buildQwen3VocabModel(testQwen3ModelDir);
}
