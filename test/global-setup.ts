import { buildDemoModels } from "../src/models/factory/demo-models.js";
import { testModelDir } from "./helpers/test-models.js";

/** Builds the demo models once for the whole run (deterministic, a few seconds). */
export default async function setup() {
  await buildDemoModels(testModelDir, { force: true });
}
