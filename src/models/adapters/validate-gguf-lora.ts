import { addonGgufLimits } from "./addon-header-limits.js";
import { readGgufHeader, readGgufTensor, type GgufHeader, type GgufTensorInfo } from "../formats/gguf-reader.js";
import { GGUF_LORA_A_SUFFIX, GGUF_LORA_B_SUFFIX } from "../formats/gguf-lora.js";
import type { GgmlTypeName, GgufValue } from "../formats/gguf-types.js";
import { fileProblem } from "../formats/model-file-error.js";
import { GGUF_ADAPTER, requireAddonFile } from "./addon-file-names.js";
import { baseWeightFor, type AddonBase } from "./addon-base.js";
import { adaptedWeight, addonPlan, type AddonLimits, type AddonLoraWeight, type AddonPlan } from "./addon-plan.js";
import { alphaProblem, checkFactorShapes, checkRank, checkScaledFactors, finiteMaxAbs } from "./lora-checks.js";
import { SUPPORTED_GGUF_TARGETS_TEXT, parseGgufTargetName, type LoraTarget } from "./lora-targets.js";

const FACTOR_TYPES: readonly GgmlTypeName[] = ["F32", "F16", "BF16"];

/** Validates a ready llama.cpp LoRA (adapter.gguf) against its base: what llama.cpp checks on load, and more. */
export async function validateGgufLoraAddon(
  files: ReadonlyMap<string, string>,
  base: AddonBase,
  limits: AddonLimits,
): Promise<AddonPlan> {
  const file = requireAddonFile(files, GGUF_ADAPTER);
  const { header, architecture } = await readGgufLoraHeader(file);
  const fail = (problem: string) => fileProblem(GGUF_ADAPTER, problem);
  if (architecture !== base.architecture) {
    throw fail(`general.architecture is ${architecture}, but the base model's is ${base.architecture}`);
  }
  const alpha = loraAlpha(header.metadata.get("adapter.lora.alpha"), fail);

  const pairs = pairByTarget(header.tensors, fail);
  if (pairs.size === 0) throw fail("holds no LoRA tensors");
  const weights: (AddonLoraWeight & { index: number })[] = [];
  for (const [targetName, { a, b }] of pairs) {
    const target = ggufLoraTarget(targetName, a);
    const weight = baseWeightFor(base, target, GGUF_ADAPTER, a.name);
    checkFactorTypes(a, b);
    const rank = checkFactorShapes(GGUF_ADAPTER, a, b, weight);
    checkRank(rank, limits, GGUF_ADAPTER, `tensor ${a.name}`);
    const [maxA, maxB] = [
      finiteMaxAbs(await readGgufTensor(file, a, GGUF_ADAPTER), GGUF_ADAPTER, a.name),
      finiteMaxAbs(await readGgufTensor(file, b, GGUF_ADAPTER), GGUF_ADAPTER, b.name),
    ];
    // llama.cpp's scale: alpha / rank, or 1 without an alpha.
    const scale = alpha === 0 ? 1 : alpha / rank;
    const scaleFrom = alpha === 0 ? "no adapter.lora.alpha" : "adapter.lora.alpha over the rank";
    checkScaledFactors(GGUF_ADAPTER, { a: a.name, b: b.name }, { rank, maxA, maxB, bScale: 1, scale, scaleFrom });
    weights.push(adaptedWeight(weight, { a: a.name, b: b.name }, rank, { bScale: 1, ropeHeads: null }));
  }
  return addonPlan("gguf", architecture, alpha, weights);
}

/** Reads adapter.gguf's header and checks that it is a LoRA adapter; returns its general.architecture too. */
export async function readGgufLoraHeader(file: string): Promise<{ header: GgufHeader; architecture: string }> {
  const header = await readGgufHeader(file, addonGgufLimits, GGUF_ADAPTER);
  const fail = (problem: string) => fileProblem(GGUF_ADAPTER, problem);
  const text = (key: string) => {
    const value = header.metadata.get(key);
    if (value === undefined) throw fail(`missing ${key}`);
    if (value.type !== "string") throw fail(`${key} must be a string`);
    return value.value;
  };
  const generalType = text("general.type");
  if (generalType !== "adapter")
    throw fail(`general.type is ${JSON.stringify(generalType)}, not "adapter": this is not a LoRA adapter`);
  const adapterType = text("adapter.type");
  if (adapterType !== "lora")
    throw fail(`adapter.type is ${JSON.stringify(adapterType)}; only "lora" adapters are supported`);
  if (header.metadata.has("adapter.alora.invocation_tokens")) {
    throw fail("activated LoRA adapters (adapter.alora.invocation_tokens) are not supported");
  }
  return { header, architecture: text("general.architecture") };
}

/** The base weight a pair of LoRA tensors adapts, if Hearth can apply a LoRA to it. */
export function ggufLoraTarget(targetName: string, a: GgufTensorInfo): LoraTarget {
  const target = parseGgufTargetName(targetName);
  if (target === undefined) {
    throw fileProblem(
      GGUF_ADAPTER,
      `tensor ${a.name} adapts ${targetName}, which Hearth cannot apply a LoRA to (supported: ${SUPPORTED_GGUF_TARGETS_TEXT})`,
    );
  }
  return target;
}

export function checkFactorTypes(a: GgufTensorInfo, b: GgufTensorInfo): void {
  for (const t of [a, b]) {
    if (!FACTOR_TYPES.includes(t.type)) {
      throw fileProblem(
        GGUF_ADAPTER,
        `tensor ${t.name} has type ${t.type}; LoRA tensors must be ${FACTOR_TYPES.join(", ")}`,
      );
    }
  }
}

/** llama.cpp reads adapter.lora.alpha as a float32; absent (or 0) means B·A unscaled. */
export function loraAlpha(value: GgufValue | undefined, fail: (problem: string) => Error): number {
  if (value === undefined) return 0;
  if (value.type !== "float32") throw fail("adapter.lora.alpha must be a float32");
  const problem = alphaProblem(value.value);
  if (problem !== undefined) throw fail(`adapter.lora.alpha is ${problem}`);
  return value.value;
}

export function pairByTarget(
  tensors: readonly GgufTensorInfo[],
  fail: (problem: string) => Error,
): Map<string, { a: GgufTensorInfo; b: GgufTensorInfo }> {
  const halves = new Map<string, { a?: GgufTensorInfo; b?: GgufTensorInfo }>();
  for (const t of tensors) {
    const factor = t.name.endsWith(GGUF_LORA_A_SUFFIX) ? "a" : t.name.endsWith(GGUF_LORA_B_SUFFIX) ? "b" : undefined;
    if (factor === undefined)
      throw fail(`tensor ${t.name} is not a LoRA tensor (names end in ${GGUF_LORA_A_SUFFIX} or ${GGUF_LORA_B_SUFFIX})`);
    const target = t.name.slice(0, -GGUF_LORA_A_SUFFIX.length);
    const entry = halves.get(target) ?? {};
    entry[factor] = t;
    halves.set(target, entry);
  }
  const pairs = new Map<string, { a: GgufTensorInfo; b: GgufTensorInfo }>();
  for (const [target, { a, b }] of halves) {
    if (a === undefined) throw fail(`tensor ${b!.name} has no matching ${target}${GGUF_LORA_A_SUFFIX}`);
    if (b === undefined) throw fail(`tensor ${a.name} has no matching ${target}${GGUF_LORA_B_SUFFIX}`);
    pairs.set(target, { a, b });
  }
  return pairs;
}
