import { readdir } from "node:fs/promises";
import path from "node:path";
import { HearthClient } from "../../src/cli/api-client.js";

/**
 * Adapters the way users bring them: create the model, PUT its files, validate, deploy,
 * all through the management API (with Hearth's own CLI client).
 */

const ACCOUNT = "default";

export class AdapterDeployments {
  private readonly client: HearthClient;

  constructor(url: string, apiKey: string) {
    this.client = new HearthClient(url, apiKey);
  }

  /** Creates `modelId`, uploads every file of the PEFT folder and validates it; returns its model name. */
  async upload(modelId: string, folder: string): Promise<string> {
    const created = await this.client.createModel(ACCOUNT, { modelId });
    for (const name of (await readdir(folder)).sort()) {
      await this.client.uploadFile(ACCOUNT, modelId, name, path.join(folder, name));
    }
    const validated = await this.client.validateModel(ACCOUNT, modelId);
    if (validated.state !== "READY") throw new Error(`${modelId} did not validate: ${validated.stateReason}`);
    return created.name;
  }

  /** Deploys a READY model; resolves with the milliseconds from the deploy request to DEPLOYED. */
  async deploy(modelId: string, pollMs = 5): Promise<number> {
    const started = performance.now();
    await this.client.deployModel(ACCOUNT, modelId);
    const model = await this.client.waitForDeployment(ACCOUNT, modelId, "DEPLOYED", {
      intervalMs: pollMs,
      timeoutMs: 120_000,
    });
    const elapsed = performance.now() - started;
    if (model.deployment?.state !== "DEPLOYED") {
      throw new Error(
        `${modelId} did not deploy: ${model.deployment?.state ?? "no deployment"} ${model.deployment?.reason ?? ""}`,
      );
    }
    return elapsed;
  }
}
