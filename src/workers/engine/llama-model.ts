import {
  LlamaText,
  resolveChatWrapper,
  type ChatWrapper,
  type LlamaEmbeddingContext,
  type LlamaModel,
  type LlamaTextJSON,
} from "node-llama-cpp";
import { AppError } from "../../errors.js";
import { defaultToolCallFormat } from "../../templates/default-tool-format.js";
import { textPieces, type TemplateTextJSON } from "../../templates/template-protocol.js";
import { TemplateError } from "../../templates/template-error.js";
import type { TemplateSandbox } from "../../templates/template-sandbox.js";
import { chatForWrapper } from "../../templates/wrapper-tools.js";
import type { ChatMessage, ToolFunction } from "../../domain/generation.js";
import { defaultChatStops, renderDefaultChat } from "./default-chat-template.js";
import type {
  ContextOptions,
  EngineAdapter,
  EngineContext,
  EngineModel,
  ModelInfo,
  RenderedPrompt,
  UserTemplate,
} from "./engine.js";
import { AdapterBatching, type LlamaEngineAdapter, type NativeLora } from "./adapter-batching.js";
import { observeDecodes } from "./decode-observer.js";
import { LlamaEngineContext } from "./llama-context.js";
import type { LlamaGrammars } from "./llama-grammars.js";
import { CellEraser } from "./cell-eraser.js";
import { PromptCache } from "./prompt-cache.js";
import { kvCellBytes } from "./kv-cell-bytes.js";
import { LoraSetGuard } from "./lora-set-guard.js";
import { enableProbabilityViews } from "./probability-view.js";
import { SampleHooks } from "./sample-hooks.js";
import { guardSampling } from "./sampling-guard.js";
import { type BatchSampler, type SamplingBatches, samplingBatches } from "./batch-sampler.js";
import { StepGang } from "./step-gang.js";
import { contextToBeIds } from "./sequence-ids.js";
import { PassPlanner } from "./pass-planner.js";
import { checkTokenIds } from "./vocabulary-check.js";

/** node-llama-cpp's internals that load a LoRA's weights onto a model (cached by path) and free them. */
interface LoraInternals {
  _getOrLoadLora(path: string): Promise<NativeLora & { dispose(): Promise<void> }>;
  _loraAdapters: Map<string, NativeLora>;
}

/** A model loaded by node-llama-cpp: its contexts, adapters, chat rendering and embeddings. */
export class LlamaEngineModel implements EngineModel {
  readonly info: ModelInfo;
  /** The contexts that switch adapters, which must let go of an adapter before it is freed. */
  private readonly batchings = new Set<AdapterBatching>();
  /** Adapter loads and frees against the graph reserves that read the model's adapters (lora-set-guard.ts). */
  private readonly loraSet = new LoraSetGuard();
  private readonly chatWrapper: ChatWrapper | undefined;
  private embedding: Promise<LlamaEmbeddingContext> | undefined;

  constructor(
    readonly id: string,
    private readonly model: LlamaModel,
    private readonly threads: number,
    private readonly templates: TemplateSandbox,
    private readonly grammars: LlamaGrammars,
    /** The batch sampler and the cores a batch's samplings may spread over; undefined: one call each. */
    private readonly batchSampling?: { sampler: BatchSampler; cores: number },
  ) {
    const template = model.fileInfo.metadata?.tokenizer?.chat_template;
    const hasChatTemplate = typeof template === "string" && template.length > 0;
    this.chatWrapper = hasChatTemplate ? resolveChatWrapper(model, { warningLogs: false }) : undefined;
    this.info = {
      trainContextLength: model.trainContextSize,
      embeddingLength: model.embeddingVectorSize,
      vocabularySize: vocabularySizeOf(model),
      hasChatTemplate,
    };
  }

  tokenize(text: string): number[] {
    return this.model.tokenize(text, false);
  }

  async renderChat(
    messages: readonly ChatMessage[],
    template?: UserTemplate,
    tools?: readonly ToolFunction[],
  ): Promise<RenderedPrompt> {
    if (template !== undefined) return this.renderInSandbox(messages, template, tools);
    const offered = tools !== undefined && tools.length > 0;
    if (!this.chatWrapper) {
      return {
        tokens: this.tokenize(renderDefaultChat(messages, tools)),
        stop: [...defaultChatStops],
        ...(offered ? { toolCallFormat: defaultToolCallFormat } : {}),
      };
    }
    // The base model's own template: the operator's file, rendered here as node-llama-cpp does,
    // with tools in its format or Hearth's default one (templates/wrapper-tools.ts).
    const { chat, toolCallFormat } = chatForWrapper(this.chatWrapper, messages, tools);
    const state = this.chatWrapper.generateContextState(chat);
    return {
      tokens: state.contextText.tokenize(this.model.tokenizer),
      stop: plainStops(
        state.stopGenerationTriggers.map((trigger) => textPieces(trigger.toJSON() as string | TemplateTextJSON)),
      ),
      ...(offered ? { toolCallFormat } : {}),
    };
  }

  /** A user's template (an adapter's): rendered in the sandbox, never on this thread. */
  private async renderInSandbox(
    messages: readonly ChatMessage[],
    template: UserTemplate,
    tools: readonly ToolFunction[] | undefined,
  ): Promise<RenderedPrompt> {
    try {
      const rendered = await this.templates.render(template.text, messages, template.owner, tools);
      const text = LlamaText.fromJSON(rendered.text as LlamaTextJSON);
      return {
        tokens: text.tokenize(this.model.tokenizer),
        stop: plainStops(rendered.stops),
        ...(rendered.toolCallFormat ? { toolCallFormat: rendered.toolCallFormat } : {}),
      };
    } catch (cause) {
      if (!(cause instanceof TemplateError)) throw cause;
      if (cause.kind === "unavailable") throw new AppError("unavailable", cause.message, { cause });
      if (cause.kind === "quarantined") throw new AppError("invalid_request", cause.message, { param: "model", cause });
      const message =
        cause.kind === "template"
          ? `The model's conversation template failed on these messages: ${cause.message}`
          : `The model's conversation template went past its bounds on these messages: ${cause.message}`;
      throw new AppError("invalid_request", message, { param: "messages", cause });
    }
  }

  private samplingBatches(): SamplingBatches | undefined {
    if (!this.batchSampling) return undefined;
    return samplingBatches(this.batchSampling.sampler, this.info.vocabularySize, this.batchSampling.cores);
  }

  async createContext(options: ContextOptions): Promise<EngineContext> {
    const batching = options.adapters ? new AdapterBatching(this.loraSet) : undefined;
    const gang = new StepGang();
    const planner = options.arrangeSteps === "together" ? undefined : new PassPlanner();
    const { ids, attach } = contextToBeIds();
    const context = await this.loraSet.reading(() =>
      this.model.createContext({
        sequences: options.sequences,
        contextSize: Math.min(options.contextSize, this.model.trainContextSize),
        threads: options.threads,
        batching: { itemPrioritizationStrategy: gang.strategy({ pick: batching?.pick, ids, planner }) },
      }),
    );
    attach(context);
    // First the views (a logprob request's two samplings), then serializing: both go in one turn.
    enableProbabilityViews(context, this.model);
    guardSampling(context, this.samplingBatches());
    const hooks = SampleHooks.attach(context);
    if (batching) {
      batching.attach(context);
      this.batchings.add(batching);
      context.onDispose.createListener(() => this.batchings.delete(batching));
    }
    const { onDecode } = options;
    observeDecodes(context, (sample) => {
      planner?.record(sample);
      onDecode?.(sample);
    });
    const fresh = () => (context.sequencesLeft > 0 ? context.getSequence() : undefined);
    const cache = new PromptCache(
      new CellEraser(context),
      options.promptCacheTokens ?? null,
      fresh,
      kvCellBytes(this.model),
      options.onPromptCache,
    );
    return new LlamaEngineContext(
      this.model,
      context,
      gang,
      cache,
      this.grammars,
      hooks,
      this.info.vocabularySize,
      batching,
    );
  }

  async loadAdapter(path: string): Promise<EngineAdapter> {
    const internals = this.model as unknown as LoraInternals;
    if (typeof internals._getOrLoadLora !== "function" || !(internals._loraAdapters instanceof Map)) {
      throw new Error("node-llama-cpp's model has no _getOrLoadLora: loadAdapter needs updating for this version");
    }
    const { batchings, loraSet } = this;
    const lora = await loraSet.writing(() => internals._getOrLoadLora(path));
    const adapter: LlamaEngineAdapter = {
      path,
      lora,
      async dispose() {
        for (const batching of batchings) await batching.letGo(lora);
        for (const [key, loaded] of internals._loraAdapters) if (loaded === lora) internals._loraAdapters.delete(key);
        await loraSet.writing(() => lora.dispose());
      },
    };
    return adapter;
  }

  async embed(inputs: readonly (string | readonly number[])[], signal: AbortSignal) {
    const contextSize = Math.min(this.model.trainContextSize, 8192);
    this.embedding ??= this.loraSet.reading(() =>
      this.model.createEmbeddingContext({ contextSize, threads: this.threads }),
    );
    const context = await this.embedding;
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (const input of inputs) {
      if (signal.aborted) break;
      if (typeof input !== "string") checkTokenIds(input, this.info.vocabularySize, "input");
      const tokens = typeof input === "string" ? this.tokenize(input) : input;
      if (tokens.length > contextSize) {
        throw new AppError(
          "context_length_exceeded",
          `An input has ${tokens.length} tokens; this model embeds at most ${contextSize}.`,
          { param: "input" },
        );
      }
      promptTokens += tokens.length;
      const embedding = await context.getEmbeddingFor(tokens.length > 0 ? (tokens as never) : " ");
      vectors.push(normalize(embedding.vector));
    }
    return { vectors, promptTokens };
  }

  async dispose(): Promise<void> {
    if (this.embedding) await (await this.embedding).dispose();
    await this.model.dispose();
  }
}

/** The tokens llama.cpp's vocabulary has: the GGUF's token list (`tokenizer.ggml.tokens`), which it loads whole. */
export function vocabularySizeOf(model: LlamaModel): number {
  const tokens = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: unknown } } }).tokenizer?.ggml?.tokens;
  if (!Array.isArray(tokens) || tokens.length === 0) {
    throw new Error(`${model.filename ?? "the model"} has no tokenizer.ggml.tokens: its vocabulary size is unknown`);
  }
  return tokens.length;
}

function normalize(vector: readonly number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum) || 1;
  return vector.map((v) => v / norm);
}

/** Stop triggers made of plain text only (special-token triggers are the model's own EOS). */
function plainStops(triggers: TemplateTextJSON[]): string[] {
  return triggers
    .filter((trigger) => trigger.every((piece) => typeof piece === "string"))
    .map((trigger) => trigger.join(""))
    .filter((stop) => stop.length > 0);
}
