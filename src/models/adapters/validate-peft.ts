import { fileProblem } from "../formats/model-file-error.js";
import { ADDON_MAX_TENSORS, ADDON_SAFETENSORS_MAX_HEADER_BYTES } from "./addon-header-limits.js";
import { readSafetensorsHeader, readSafetensorsTensor } from "../formats/safetensors-reader.js";
import type { SafetensorsTensorInfo } from "../formats/safetensors-format.js";
import { PEFT_CONFIG, PEFT_WEIGHTS, readAddonJson, requireAddonFile } from "./addon-file-names.js";
import { baseWeightFor, type AddonBase } from "./addon-base.js";
import { adaptedWeight, addonPlan, type AddonLimits, type AddonLoraWeight, type AddonPlan } from "./addon-plan.js";
import { checkFactorShapes, checkRank, checkScaledFactors, finiteMaxAbs } from "./lora-checks.js";
import {
  parsePeftConfig,
  peftModuleRank,
  peftModuleScale,
  targetModulesInclude,
  type PeftConfig,
} from "./peft-config.js";
import { parsePeftTensorName, type PeftTensorName } from "./peft-tensor-names.js";
import { fitsRopeRowOrder, ropeRowHeads } from "./rope-row-order.js";

/** Validates a PEFT addon (adapter_config.json + adapter_model.safetensors) against its base. */
export async function validatePeftAddon(
  files: ReadonlyMap<string, string>,
  base: AddonBase,
  limits: AddonLimits,
): Promise<AddonPlan> {
  const config = parsePeftConfig(await readAddonJson(requireAddonFile(files, PEFT_CONFIG), PEFT_CONFIG));
  checkRank(config.r, limits, PEFT_CONFIG, "r");
  for (const [key, rank] of config.rankPattern)
    checkRank(rank, limits, PEFT_CONFIG, `rank_pattern[${JSON.stringify(key)}]`);

  const header = await readSafetensorsHeader(requireAddonFile(files, PEFT_WEIGHTS), PEFT_WEIGHTS, {
    maxHeaderBytes: ADDON_SAFETENSORS_MAX_HEADER_BYTES,
    maxTensors: ADDON_MAX_TENSORS,
  });
  const modules = pairByModule(header.tensors);
  if (modules.size === 0) throw fileProblem(PEFT_WEIGHTS, "holds no tensors");

  const weights: (AddonLoraWeight & { index: number })[] = [];
  for (const { name, a, b } of modules.values()) {
    const weight = baseWeightFor(base, name, PEFT_WEIGHTS, a.name);
    checkTargetSelected(config, { name, a });
    const rank = checkFactorShapes(PEFT_WEIGHTS, a, b, weight);
    checkRank(rank, limits, PEFT_WEIGHTS, `tensor ${a.name}`);
    checkConfiguredRank(config, { name, a }, rank);
    const ropeHeads = ropeRowHeads(base.architecture, name.kind, base);
    if (ropeHeads !== null && !fitsRopeRowOrder(weight.shape[0], ropeHeads)) {
      throw fileProblem(
        PEFT_WEIGHTS,
        `tensor ${b.name}: ${weight.shape[0]} rows do not split into ${ropeHeads} attention heads of the base model`,
      );
    }
    // llama.cpp scales B·A by alpha/rank, with alpha the float32 adapter.lora.alpha.
    const scale = peftModuleScale(config, name.module);
    const bScale = (scale * rank) / Math.fround(config.loraAlpha);

    const maxA = finiteMaxAbs(await readSafetensorsTensor(header, a.name), PEFT_WEIGHTS, a.name);
    const maxB = finiteMaxAbs(await readSafetensorsTensor(header, b.name), PEFT_WEIGHTS, b.name);
    checkScaledFactors(
      PEFT_WEIGHTS,
      { a: a.name, b: b.name },
      {
        rank,
        maxA,
        maxB,
        bScale,
        scale,
        scaleFrom: `${PEFT_CONFIG}'s alpha over ${config.useRslora ? "√r" : "r"}`,
      },
    );
    weights.push(adaptedWeight(weight, { a: a.name, b: b.name }, rank, { bScale, ropeHeads }));
  }
  return addonPlan("peft", base.architecture, config.loraAlpha, weights);
}

export interface ModuleTensors {
  name: PeftTensorName;
  a: SafetensorsTensorInfo;
  b: SafetensorsTensorInfo;
}

/** target_modules in adapter_config.json must select every module the weights adapt. */
export function checkTargetSelected(config: PeftConfig, { name, a }: Pick<ModuleTensors, "name" | "a">): void {
  if (targetModulesInclude(config, name.module) === false) {
    throw fileProblem(
      PEFT_WEIGHTS,
      `tensor ${a.name} adapts ${name.module}, which target_modules in ${PEFT_CONFIG} does not select`,
    );
  }
}

/** A module's rank (A's rows) must be the one adapter_config.json gives it (r, or its rank_pattern entry). */
export function checkConfiguredRank(
  config: PeftConfig,
  { name, a }: Pick<ModuleTensors, "name" | "a">,
  rank: number,
): void {
  const expectedRank = peftModuleRank(config, name.module);
  if (rank !== expectedRank) {
    throw fileProblem(
      PEFT_WEIGHTS,
      `tensor ${a.name} has rank ${rank}, but ${PEFT_CONFIG} gives ${name.module} rank ${expectedRank}`,
    );
  }
}

/** Groups the tensors by module; every lora_A needs its lora_B and vice versa. */
export function pairByModule(tensors: readonly SafetensorsTensorInfo[]): Map<string, ModuleTensors> {
  const halves = new Map<string, { name: PeftTensorName; A?: SafetensorsTensorInfo; B?: SafetensorsTensorInfo }>();
  for (const tensor of tensors) {
    const name = parsePeftTensorName(tensor.name);
    const entry = halves.get(name.module) ?? { name };
    entry[name.factor] = tensor;
    halves.set(name.module, entry);
  }
  const modules = new Map<string, ModuleTensors>();
  for (const [module, { name, A, B }] of halves) {
    if (A === undefined) throw fileProblem(PEFT_WEIGHTS, `tensor ${B!.name} has no matching lora_A tensor`);
    if (B === undefined) throw fileProblem(PEFT_WEIGHTS, `tensor ${A.name} has no matching lora_B tensor`);
    modules.set(module, { name, a: A, b: B });
  }
  return modules;
}
