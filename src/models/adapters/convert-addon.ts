import { copyFile } from "node:fs/promises";
import { writeFileAtomically } from "../formats/atomic-output.js";
import { GGUF_LORA_A_SUFFIX, GGUF_LORA_B_SUFFIX, ggufLoraMetadata } from "../formats/gguf-lora.js";
import { writeGguf, type GgufTensorInput } from "../formats/gguf-writer.js";
import { fileProblem } from "../formats/model-file-error.js";
import { readSafetensorsHeader, readSafetensorsTensor, type SafetensorsHeader } from "../formats/safetensors-reader.js";
import { GGUF_ADAPTER, PEFT_WEIGHTS, requireAddonFile } from "./addon-file-names.js";
import type { AddonLoraWeight, AddonPlan } from "./addon-plan.js";
import { toRopeRowOrder } from "./rope-row-order.js";

/**
 * Writes the llama.cpp GGUF LoRA of a validated addon to `outFile` (atomically: a reader
 * never sees a partial file). A GGUF addon is copied as it is. A PEFT addon is converted
 * tensor by tensor, all F32: A as it is; B with its rows in llama.cpp's rotary order where
 * the plan says so and multiplied by the plan's bScale, so that llama.cpp's alpha/rank
 * reproduces PEFT's scale. The same input gives the same bytes.
 */
export async function convertAddon(
  files: ReadonlyMap<string, string>,
  plan: AddonPlan,
  outFile: string,
): Promise<void> {
  if (plan.format === "gguf") {
    const source = requireAddonFile(files, GGUF_ADAPTER);
    await writeFileAtomically(outFile, (tmp) => copyFile(source, tmp));
    return;
  }
  const header = await readSafetensorsHeader(requireAddonFile(files, PEFT_WEIGHTS), PEFT_WEIGHTS);
  const tensors = plan.weights.flatMap((w): GgufTensorInput[] => {
    expectShape(header, w.source.a, [w.rank, w.inFeatures]);
    expectShape(header, w.source.b, [w.outFeatures, w.rank]);
    return [
      {
        name: `${w.target}${GGUF_LORA_A_SUFFIX}`,
        type: "F32",
        shape: [w.rank, w.inFeatures],
        data: () => readSafetensorsTensor(header, w.source.a),
      },
      {
        name: `${w.target}${GGUF_LORA_B_SUFFIX}`,
        type: "F32",
        shape: [w.outFeatures, w.rank],
        data: async () => ggufLoraB(await readSafetensorsTensor(header, w.source.b), w),
      },
    ];
  });
  const metadata = ggufLoraMetadata({ architecture: plan.architecture, name: "hearth-addon", alpha: plan.alpha });
  await writeFileAtomically(outFile, (tmp) => writeGguf(tmp, { metadata, tensors }));
}

/** B [out, rank] as llama.cpp needs it. */
function ggufLoraB(b: Float32Array, weight: AddonLoraWeight): Float32Array {
  const ordered = weight.ropeHeads === null ? b : toRopeRowOrder(b, weight.outFeatures, weight.rank, weight.ropeHeads);
  if (weight.bScale === 1) return ordered;
  const scaled = new Float32Array(ordered.length);
  for (let i = 0; i < ordered.length; i++) scaled[i] = ordered[i]! * weight.bScale;
  return scaled;
}

function expectShape(header: SafetensorsHeader, name: string, shape: readonly number[]): void {
  const info = header.tensors.find((t) => t.name === name);
  if (info === undefined || info.shape.length !== shape.length || info.shape.some((d, i) => d !== shape[i])) {
    throw fileProblem(PEFT_WEIGHTS, `tensor ${name} is not the one validated (the file changed since)`);
  }
}
