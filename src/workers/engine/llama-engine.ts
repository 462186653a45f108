import { LlamaLogLevel, type Llama } from "node-llama-cpp";
import type { GpuChoice, GpuLayers } from "../../domain/gpu.js";
import { createLogger, type Logger } from "../../logger.js";
import { usableCores } from "../../process/usable-cores.js";
import type { SharedQuarantine } from "../../templates/template-quarantine.js";
import { DEFAULT_TEMPLATE_LIMITS } from "../../config/template-limits.js";
import { TemplateSandbox, type TemplateSandboxOptions } from "../../templates/template-sandbox.js";
import type { Engine, EngineModel, LoadModelOptions } from "./engine.js";
import { LlamaGrammars } from "./llama-grammars.js";
import { loadLlama } from "./llama-loader.js";
import { LlamaEngineModel } from "./llama-model.js";

/** The node-llama-cpp implementation of the engine. */
export class LlamaEngine implements Engine {
  private readonly grammars: LlamaGrammars;

  private constructor(
    private readonly llama: Llama,
    private readonly templates: TemplateSandbox,
    private readonly gpuLayers: GpuLayers,
  ) {
    this.grammars = new LlamaGrammars(llama);
  }

  get backend(): string {
    return this.llama.gpu === false ? "cpu" : this.llama.gpu;
  }

  static async create(
    options: {
      logLevel?: "debug" | "info" | "warn" | "error";
      maxThreads?: number;
      /** The bounds of users' chat templates (config.templates). */
      templateLimits?: TemplateSandboxOptions;
      /** HEARTH_GPU and HEARTH_GPU_LAYERS. */
      gpu?: GpuChoice;
      gpuLayers?: GpuLayers;
      /** HEARTH_GPU_CHECK: run a model on the GPU in a child process before using CUDA (llama-loader.ts). */
      gpuCheck?: boolean;
      /** Where the backend's choice and any fallback are told; by default warnings to stderr. */
      log?: Logger;
    } = {},
  ): Promise<LlamaEngine> {
    const gpu = options.gpu ?? "auto";
    const check = { log: options.log ?? createLogger("warn", "engine"), enabled: options.gpuCheck ?? true };
    const llama = await loadLlama(
      gpu,
      {
        build: "never",
        // All contexts of this process share this many threads. node-llama-cpp's CPU default is
        // at least 4, which on a machine with fewer cores makes concurrent contexts spin against
        // each other, and throughput collapses.
        maxThreads: options.maxThreads ?? usableCores(),
        progressLogs: false,
        logLevel: options.logLevel === "debug" ? LlamaLogLevel.debug : LlamaLogLevel.error,
      },
      check,
    );
    const templates = new TemplateSandbox(options.templateLimits ?? DEFAULT_TEMPLATE_LIMITS);
    // Started now, so the first chat with an adapter's template does not wait for a thread.
    await templates.warm();
    return new LlamaEngine(llama, templates, options.gpuLayers ?? "auto");
  }

  shareTemplateQuarantine(store: SharedQuarantine, onError: (error: unknown) => void): void {
    this.templates.quarantine.share(store, onError);
  }

  async loadModel(options: LoadModelOptions): Promise<EngineModel> {
    const model = await this.llama.loadModel({ modelPath: options.path, gpuLayers: this.gpuLayers });
    return new LlamaEngineModel(options.id, model, options.threads, this.templates, this.grammars);
  }

  async close(): Promise<void> {
    await this.templates.close();
    await this.llama.dispose();
  }
}
