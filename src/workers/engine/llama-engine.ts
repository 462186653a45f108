import os from "node:os";
import {
  getLlama,
  JinjaTemplateChatWrapper,
  LlamaLogLevel,
  resolveChatWrapper,
  type ChatHistoryItem,
  type ChatWrapper,
  type Llama,
  type LlamaEmbeddingContext,
  type LlamaModel,
} from "node-llama-cpp";
import { AppError } from "../../errors.js";
import type { ChatMessage } from "../../queues/jobs.js";
import { defaultChatStops, renderDefaultChat } from "./default-chat-template.js";
import type {
  ContextOptions,
  Engine,
  EngineContext,
  EngineModel,
  LoadModelOptions,
  ModelInfo,
  RenderedPrompt,
} from "./engine.js";
import { LlamaEngineContext } from "./llama-context.js";
import { serializeSampling } from "./serial-sampling.js";

/** The node-llama-cpp implementation of the engine. */
export class LlamaEngine implements Engine {
  private constructor(private readonly llama: Llama) {}

  static async create(
    options: { logLevel?: "debug" | "info" | "warn" | "error"; maxThreads?: number } = {},
  ): Promise<LlamaEngine> {
    const llama = await getLlama({
      gpu: "auto",
      build: "never",
      // All contexts of this process share this many threads. node-llama-cpp's CPU default is
      // at least 4, which on a 2-core machine makes concurrent contexts (one per adapter) spin
      // against each other: 2.4 against 178 tokens/s for two contexts in a bench probe.
      maxThreads: options.maxThreads ?? os.availableParallelism(),
      progressLogs: false,
      logLevel: options.logLevel === "debug" ? LlamaLogLevel.debug : LlamaLogLevel.error,
    });
    return new LlamaEngine(llama);
  }

  async loadModel(options: LoadModelOptions): Promise<EngineModel> {
    const model = await this.llama.loadModel({ modelPath: options.path, gpuLayers: "auto" });
    return new LlamaEngineModel(options.id, model, options.threads);
  }

  async close(): Promise<void> {
    await this.llama.dispose();
  }
}

class LlamaEngineModel implements EngineModel {
  readonly info: ModelInfo;
  private readonly chatWrapper: ChatWrapper | undefined;
  private embedding: Promise<LlamaEmbeddingContext> | undefined;
  private readonly templates = new Map<string, ChatWrapper>();

  constructor(
    readonly id: string,
    private readonly model: LlamaModel,
    private readonly threads: number,
  ) {
    const template = model.fileInfo.metadata?.tokenizer?.chat_template;
    const hasChatTemplate = typeof template === "string" && template.length > 0;
    this.chatWrapper = hasChatTemplate ? resolveChatWrapper(model, { warningLogs: false }) : undefined;
    this.info = {
      trainContextLength: model.trainContextSize,
      embeddingLength: model.embeddingVectorSize,
      hasChatTemplate,
    };
  }

  tokenize(text: string): number[] {
    return this.model.tokenize(text, false);
  }

  renderChat(messages: readonly ChatMessage[], template?: string): RenderedPrompt {
    const wrapper = template === undefined ? this.chatWrapper : this.templateWrapper(template);
    if (!wrapper) {
      return { tokens: this.tokenize(renderDefaultChat(messages)), stop: [...defaultChatStops] };
    }
    const history: ChatHistoryItem[] = messages.map((m) =>
      m.role === "system"
        ? { type: "system", text: m.content }
        : m.role === "user"
          ? { type: "user", text: m.content }
          : { type: "model", response: [m.content] },
    );
    history.push({ type: "model", response: [] });
    let state: ReturnType<ChatWrapper["generateContextState"]>;
    try {
      state = wrapper.generateContextState({ chatHistory: history });
    } catch (cause) {
      if (template === undefined) throw cause;
      throw new AppError(
        "invalid_request",
        `The model's conversation template failed on these messages: ${(cause as Error).message}`,
        {
          param: "messages",
          cause,
        },
      );
    }
    const stop = state.stopGenerationTriggers
      .filter((trigger) => trigger.values.every((v) => typeof v === "string"))
      .map((trigger) => trigger.values.join(""))
      .filter((s) => s.length > 0);
    return { tokens: state.contextText.tokenize(this.model.tokenizer), stop };
  }

  /** Adapters' own templates, parsed once each (a few distinct ones per worker at most). */
  private templateWrapper(template: string): ChatWrapper {
    let wrapper = this.templates.get(template);
    if (!wrapper) {
      try {
        wrapper = new JinjaTemplateChatWrapper({ template });
      } catch (cause) {
        throw new AppError(
          "invalid_request",
          `The model's conversation template is not a usable Jinja chat template: ${(cause as Error).message}`,
          {
            param: "model",
            cause,
          },
        );
      }
      if (this.templates.size >= 64) this.templates.delete(this.templates.keys().next().value!);
      this.templates.set(template, wrapper);
    }
    return wrapper;
  }

  async createContext(options: ContextOptions): Promise<EngineContext> {
    const context = await this.model.createContext({
      sequences: options.sequences,
      contextSize: Math.min(options.contextSize, this.model.trainContextSize),
      threads: options.threads,
      ...(options.adapterPath ? { lora: { adapters: [{ filePath: options.adapterPath, scale: 1 }] } } : {}),
    });
    serializeSampling(context);
    return new LlamaEngineContext(this.model, context);
  }

  async embed(inputs: readonly string[], signal: AbortSignal) {
    const contextSize = Math.min(this.model.trainContextSize, 8192);
    this.embedding ??= this.model.createEmbeddingContext({ contextSize, threads: this.threads });
    const context = await this.embedding;
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (const input of inputs) {
      if (signal.aborted) break;
      const tokens = this.tokenize(input);
      if (tokens.length > contextSize) {
        throw new AppError(
          "invalid_request",
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

function normalize(vector: readonly number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum) || 1;
  return vector.map((v) => v / norm);
}
