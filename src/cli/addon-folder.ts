import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { AppError } from "../errors.js";
import {
  GGUF_ADAPTER,
  PEFT_CONFIG,
  PEFT_WEIGHTS,
  checkAddonFileName,
  isAddonFileName,
  isPickleFileName,
  readAddonJson,
  type AddonFileName,
} from "../models/adapters/addon-file-names.js";
import { readAddonManifest, type AddonManifest } from "../models/adapters/addon-manifest.js";
import { parsePeftConfig } from "../models/adapters/peft-config.js";
import {
  checkFactorTypes,
  ggufLoraTarget,
  loraAlpha,
  pairByTarget,
  readGgufLoraHeader,
} from "../models/adapters/validate-gguf-lora.js";
import { checkConfiguredRank, checkTargetSelected, pairByModule } from "../models/adapters/validate-peft.js";
import { fileProblem } from "../models/formats/model-file-error.js";
import { readSafetensorsHeader } from "../models/formats/safetensors-reader.js";
import { usageError } from "./exit-codes.js";

/**
 * The checks `hearth create model` makes on an addon folder before it uploads anything,
 * with the server's own code: the file names (pickles refused with the server's message),
 * hearth.json and adapter_config.json, the format, and the weights file's header (its
 * tensors, their pairing, what adapter_config.json says of them). What needs the base
 * model (shapes, layers, rank limit) the server checks when it validates.
 */

export interface AddonFolderFile {
  name: AddonFileName;
  path: string;
  size: number;
}

export interface AddonFolder {
  files: AddonFolderFile[];
  /** Files and folders that are not part of an addon and will not be uploaded. */
  ignored: string[];
  format: AddonManifest["format"];
  baseModel: string | undefined;
}

export async function checkAddonFolder(dir: string): Promise<AddonFolder> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory())
    throw usageError(`${dir} is not a folder.`, "Pass the folder that holds the adapter's files.");
  try {
    return await inspect(dir);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    throw usageError(
      `${dir} fails the local checks, nothing was uploaded: ${e.message}.`,
      "Fix the folder (see docs/addons.md) and run the command again.",
    );
  }
}

async function inspect(dir: string): Promise<AddonFolder> {
  const files: AddonFolderFile[] = [];
  const ignored: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const file = path.join(dir, name);
    const entry = await stat(file);
    if (isPickleFileName(name)) checkAddonFileName(name); // throws the server's refusal
    if (entry.isFile() && isAddonFileName(name)) files.push({ name, path: file, size: entry.size });
    else ignored.push(entry.isDirectory() ? `${name}/` : name);
  }
  const paths = new Map(files.map((f) => [f.name, f.path]));
  const manifest = await readAddonManifest(paths);
  if (manifest.format === "peft") await checkPeftWeights(paths);
  else await checkGgufAdapter(paths.get(GGUF_ADAPTER)!);
  return { files, ignored, format: manifest.format, baseModel: manifest.baseModel };
}

async function checkPeftWeights(paths: ReadonlyMap<string, string>): Promise<void> {
  const config = parsePeftConfig(await readAddonJson(paths.get(PEFT_CONFIG)!, PEFT_CONFIG));
  const header = await readSafetensorsHeader(paths.get(PEFT_WEIGHTS)!, PEFT_WEIGHTS);
  const modules = pairByModule(header.tensors);
  if (modules.size === 0) throw fileProblem(PEFT_WEIGHTS, "holds no tensors");
  for (const module of modules.values()) {
    checkTargetSelected(config, module);
    if (module.a.shape.length === 2) checkConfiguredRank(config, module, module.a.shape[0]!);
  }
}

async function checkGgufAdapter(file: string): Promise<void> {
  const { header } = await readGgufLoraHeader(file);
  const fail = (problem: string) => fileProblem(GGUF_ADAPTER, problem);
  loraAlpha(header.metadata.get("adapter.lora.alpha"), fail);
  const pairs = pairByTarget(header.tensors, fail);
  if (pairs.size === 0) throw fail("holds no LoRA tensors");
  for (const [target, { a, b }] of pairs) {
    ggufLoraTarget(target, a);
    checkFactorTypes(a, b);
  }
}
