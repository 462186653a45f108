import { buildCli } from "../scripts/build-cli.js";
import { buildDemoModels } from "../src/models/factory/demo-models.js";
import { buildQwen3VocabModel } from "../src/models/factory/random-qwen3.js";
import { buildSpmVocabModel } from "../src/models/factory/random-spm-llama.js";
import { testModelDir, testQwen3ModelDir, testSpmModelDir } from "./helpers/test-models.js";

/**
 * Compiles the CLI from the sources under test, so that the tests that run `hearth` run the
 * compiled CLI as people do, never an older build (in-process tests import src/cli itself).
 * Builds the demo models once for the whole run (deterministic, a few seconds), and the
 * Qwen3-vocabulary model unless the one there has the same recipe (a few seconds more, 27 MB),
 * and the SentencePiece-vocabulary one (milliseconds).
 */
export default async function setup() {
  await buildCli();
  await buildDemoModels(testModelDir, { force: true });
  await buildQwen3VocabModel(testQwen3ModelDir);
  await buildSpmVocabModel(testSpmModelDir);
}
