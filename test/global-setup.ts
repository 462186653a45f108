import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { buildCli } from "../scripts/build-cli.js";
import { buildDemoModels } from "../src/models/factory/demo-models.js";
import { buildHearthDemo } from "../src/models/factory/hearth-demo.js";
import { buildQwen3VocabModel } from "../src/models/factory/random-qwen3.js";
import { buildSpmVocabModel } from "../src/models/factory/random-spm-llama.js";
import { testDemoModelDir, testModelDir, testQwen3ModelDir, testSpmModelDir } from "./helpers/test-models.js";

/**
 * Compiles the CLI from the sources under test, so that the tests that run `hearth` run the
 * compiled CLI as people do, never an older build (in-process tests import src/cli itself).
 * Builds the demo models once for the whole run (deterministic, a few seconds), and the
 * Qwen3-vocabulary model unless the one there has the same recipe (a few seconds more, 27 MB),
 * the SentencePiece-vocabulary one (milliseconds), and hearth-demo unless the one there was
 * built from the same sources (a few seconds).
 */
export default async function setup() {
  await buildCli();
  await buildDemoModels(testModelDir, { force: true });
  await buildQwen3VocabModel(testQwen3ModelDir);
  await buildSpmVocabModel(testSpmModelDir);
  await buildHearthDemoOnce();
}

const hearthDemoSources = ["word-vocab.ts", "word-ngram.ts", "ngram-llama.ts", "hearth-demo.ts", "corpus/base.txt"];

async function buildHearthDemoOnce(): Promise<void> {
  const hash = createHash("sha256");
  for (const source of hearthDemoSources) {
    hash.update(await readFile(new URL(`../src/models/factory/${source}`, import.meta.url)));
  }
  const recipe = hash.digest("hex");
  const recipeFile = path.join(testDemoModelDir, "recipe");
  const built = await readFile(recipeFile, "utf8").catch(() => "");
  if (built === recipe) return;
  await buildHearthDemo(testDemoModelDir, { force: true });
  await writeFile(recipeFile, recipe);
}
