/**
 * HEARTH_GPU: which llama.cpp backend workers load ("auto": the best one the machine has, else
 * the CPU; "off": the CPU), and HEARTH_GPU_LAYERS: how many layers go on the GPU.
 */
export const GPU_CHOICES = ["auto", "cuda", "vulkan", "metal", "off"] as const;
export type GpuChoice = (typeof GPU_CHOICES)[number];
/** "auto": as many as fit its memory; "max": all of them; or a number of layers. */
export type GpuLayers = "auto" | "max" | number;
