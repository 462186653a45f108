import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getModel, updateModel } from "../db/queries/models.js";
import type { Model } from "../db/schema/models.js";
import { AppError } from "../errors.js";
import { convertAddon, readAddonManifest, validateAddon } from "../models/adapters/index.js";
import { withAddonFiles } from "../storage/addon-paths.js";
import { storageKeys } from "../storage/keys.js";
import { parseModelName } from "../domain/model-name.js";
import type { ControlDeps } from "./control-deps.js";

/**
 * The llama.cpp GGUF of a validated adapter, in storage at its content-hash key:
 * converted (PEFT) or copied (GGUF) on first deploy and remembered on the model, so a
 * redeploy reuses it. Identical adapters end up sharing one file.
 */
export async function ensureAdapterArtifact(deps: ControlDeps, model: Model): Promise<string> {
  if (model.artifactKey && (await deps.storage.stat(model.artifactKey))) return model.artifactKey;
  return withAddonFiles(deps.storage, model.accountId, model.modelId, (files) => convert(deps, model, files));
}

async function convert(deps: ControlDeps, model: Model, files: Map<string, string>): Promise<string> {
  const base = await baseModelFile(deps, model);
  const manifest = await readAddonManifest(files);
  // Re-checked here: the files are what this job converts, whatever happened since validation.
  const plan = await validateAddon(files, manifest, base, { maxRank: deps.maxLoraRank });
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "hearth-convert-"));
  try {
    const out = path.join(scratch, "adapter.gguf");
    await convertAddon(files, plan, out);
    const sha256 = await fileSha256(out);
    const key = storageKeys.adapterArtifact(sha256);
    if (!(await deps.storage.stat(key))) await deps.storage.put(key, createReadStream(out), { expectedSha256: sha256 });
    await updateModel(deps.db, model.accountId, model.modelId, { artifactKey: key });
    deps.log.info("adapter converted", { model: `accounts/${model.accountId}/models/${model.modelId}`, key });
    return key;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

async function baseModelFile(deps: ControlDeps, model: Model): Promise<string> {
  const ref = model.baseModel ? parseModelName(model.baseModel) : undefined;
  const base = ref ? await getModel(deps.db, ref.accountId, ref.modelId) : null;
  if (!base?.filePath || base.kind !== "base") {
    throw new AppError("invalid_request", `The base model ${model.baseModel ?? "(none)"} is no longer available.`);
  }
  return base.filePath;
}

async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
