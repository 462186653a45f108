import { LlamaLogLevel, type Llama } from "node-llama-cpp";
import type { GpuChoice, GpuLayers } from "../../domain/gpu.js";
import { createLogger, type Logger } from "../../logger.js";
import { usableCores } from "../../process/usable-cores.js";
import type { SharedQuarantine } from "../../templates/template-quarantine.js";
import { DEFAULT_TEMPLATE_LIMITS } from "../../config/template-limits.js";
import { TemplateSandbox, type TemplateSandboxOptions } from "../../templates/template-sandbox.js";
import { type BatchSampler, loadBatchSampler } from "./batch-sampler.js";
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
    /** The native batch sampler, when loaded (batch-sampler.ts); otherwise each sequence samples alone. */
    private readonly batchSampler: BatchSampler | undefined,
    /** The cores this process's llama.cpp may use. */
    private readonly cores: number,
  ) {
    this.grammars = new LlamaGrammars(llama);
  }

  /** Whether a step's samplings go in one native call (the batch sampler) or one call each. */
  get batchSampling(): boolean {
    return this.batchSampler !== undefined;
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
      /** HEARTH_NATIVE_SAMPLER: use the batch sampler where it is built (default true). */
      nativeSampler?: boolean;
      /** Where the backend's choice and any fallback are told; by default warnings to stderr. */
      log?: Logger;
    } = {},
  ): Promise<LlamaEngine> {
    const gpu = options.gpu ?? "auto";
    // All contexts of this process share this many threads. node-llama-cpp's CPU default is
    // at least 4, which on a machine with fewer cores makes concurrent contexts spin against
    // each other, and throughput collapses.
    const maxThreads = options.maxThreads ?? usableCores();
    const check = { log: options.log ?? createLogger("warn", "engine"), enabled: options.gpuCheck ?? true };
    const llama = await loadLlama(
      gpu,
      {
        build: "never",
        maxThreads,
        progressLogs: false,
        logLevel: options.logLevel === "debug" ? LlamaLogLevel.debug : LlamaLogLevel.error,
      },
      check,
    );
    // After llama.cpp's libraries are loaded: the batch sampler links those very ones.
    let batchSampler: BatchSampler | undefined;
    if (options.nativeSampler !== false) {
      const loaded = loadBatchSampler();
      if (loaded.sampler) check.log.info("batch sampler loaded", { file: loaded.file });
      else check.log.info(`sampling one sequence at a time: ${loaded.reason}`);
      batchSampler = loaded.sampler;
    }
    const templates = new TemplateSandbox(options.templateLimits ?? DEFAULT_TEMPLATE_LIMITS);
    // Started now, so the first chat with an adapter's template does not wait for a thread.
    await templates.warm();
    return new LlamaEngine(llama, templates, options.gpuLayers ?? "auto", batchSampler, maxThreads);
  }

  shareTemplateQuarantine(store: SharedQuarantine, onError: (error: unknown) => void): void {
    this.templates.quarantine.share(store, onError);
  }

  async loadModel(options: LoadModelOptions): Promise<EngineModel> {
    const model = await this.llama.loadModel({ modelPath: options.path, gpuLayers: this.gpuLayers });
    const batchSampling = this.batchSampler ? { sampler: this.batchSampler, cores: this.cores } : undefined;
    return new LlamaEngineModel(options.id, model, options.threads, this.templates, this.grammars, batchSampling);
  }

  async close(): Promise<void> {
    await this.templates.close();
    await this.llama.dispose();
  }
}
