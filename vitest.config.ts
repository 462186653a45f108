import { defineConfig } from "vitest/config";

// node-llama-cpp is a native addon: run each test file in its own process.
export default defineConfig({
  test: {
    pool: "forks",
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ["test/global-setup.ts"],
    fileParallelism: true,
    maxWorkers: 2,
  },
});
