import os from "node:os";
import path from "node:path";

/** Where the test run's demo models live; test/global-setup.ts builds them once per run. */
export const testModelDir = path.join(os.tmpdir(), `hearth-test-models-${process.getuid?.() ?? 0}`);

/**
 * Where qwen3-vocab-tiny lives, apart from the demo models: a worker serves every model of its
 * directory, and only the tests that need this one should load it.
 */
export const testQwen3ModelDir = path.join(os.tmpdir(), `hearth-test-qwen3-${process.getuid?.() ?? 0}`);

/** Where spm-vocab-tiny lives (a SentencePiece vocabulary with a BOS token), apart from the others for the same reason. */
export const testSpmModelDir = path.join(os.tmpdir(), `hearth-test-spm-${process.getuid?.() ?? 0}`);

/**
 * Where hearth-demo lives for the tests that serve it, apart from hearth-tiny's directory (whose
 * listing other tests count), with a `recipe` file: the hash of the sources it is built from.
 */
export const testDemoModelDir = path.join(os.tmpdir(), `hearth-test-demo-${process.getuid?.() ?? 0}`);
