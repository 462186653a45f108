import os from "node:os";
import path from "node:path";

/** Where the test run's demo models live; test/global-setup.ts builds them once per run. */
export const testModelDir = path.join(os.tmpdir(), `hearth-test-models-${process.getuid?.() ?? 0}`);
