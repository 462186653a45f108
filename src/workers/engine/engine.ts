import type { ChatMessage, Sampling, ToolFunction, ToolUse } from "../../domain/generation.js";
import type { ToolCallFormat } from "../../templates/template-protocol.js";
import type { TokenLogprob } from "../../domain/logprobs.js";
import type { SharedQuarantine } from "../../templates/template-quarantine.js";

export type { ToolCallFormat };

/**
 * The inference engine as the worker sees it. Only the files of engine/ know that
 * node-llama-cpp sits behind it.
 */
export interface Engine {
  /** Where it computes: "cpu", or the GPU backend llama.cpp loaded ("cuda", "vulkan", "metal"). */
  readonly backend: string;
  loadModel(options: LoadModelOptions): Promise<EngineModel>;
  /**
   * Where the template sandbox shares its quarantines with every other process (a template
   * that went past its time or memory bound, refused for a while); until then, this process's only.
   */
  shareTemplateQuarantine(store: SharedQuarantine, onError: (error: unknown) => void): void;
  close(): Promise<void>;
}

export interface LoadModelOptions {
  id: string;
  path: string;
  /** CPU threads for work the model does outside a context (embeddings). */
  threads: number;
}

export interface ModelInfo {
  /** Tokens the model was trained on. */
  trainContextLength: number;
  embeddingLength: number;
  /** Tokens in its vocabulary: token IDs are 0 to vocabularySize − 1. */
  vocabularySize: number;
  /** True when the model file carries its own chat template. */
  hasChatTemplate: boolean;
}

export interface EngineModel {
  readonly id: string;
  readonly info: ModelInfo;
  tokenize(text: string): number[];
  /**
   * Turns chat messages into a prompt with `template` (a Jinja chat template) when given,
   * else the model's own template, else Hearth's default. A given template is a user's, so it
   * renders in the template sandbox, within its time, memory and size bounds and its owner's
   * share of the sandbox's threads; a template quarantined there is refused at once.
   * `tools` are rendered as the template renders tools (Hearth's default: docs/api.md), and
   * the prompt then says how the template writes a call (`toolCallFormat`).
   */
  renderChat(
    messages: readonly ChatMessage[],
    template?: UserTemplate,
    tools?: readonly ToolFunction[],
  ): Promise<RenderedPrompt>;
  /**
   * A context: `sequences` requests evaluated together in one batch, each with up to
   * `contextSize` tokens.
   */
  createContext(options: ContextOptions): Promise<EngineContext>;
  /**
   * Loads a LoRA adapter's weights (a GGUF LoRA made for this model), for requests on
   * contexts created with `adapters: true`. Many adapters share such a context.
   */
  loadAdapter(path: string): Promise<EngineAdapter>;
  /**
   * Mean-pooled, L2-normalised embeddings, one per input (a text, or token IDs, which are
   * checked against the vocabulary: a 400 naming `input`), and the tokens read.
   */
  embed(
    inputs: readonly (string | readonly number[])[],
    signal: AbortSignal,
  ): Promise<{ vectors: number[][]; promptTokens: number }>;
  dispose(): Promise<void>;
}

/** A user's chat template (an adapter's), and the account it belongs to. */
export interface UserTemplate {
  text: string;
  owner: string;
}

export interface RenderedPrompt {
  tokens: number[];
  /** Extra stop strings the template implies (e.g. the next turn's marker). */
  stop: string[];
  /** How the model writes a tool call (present when tools were rendered). */
  toolCallFormat?: ToolCallFormat;
}

export interface ContextOptions {
  sequences: number;
  contextSize: number;
  threads: number;
  /**
   * Requests on it may name an adapter: each batch then holds one adapter's sequences, and
   * the context switches its adapter between batches.
   */
  adapters?: boolean;
  /** Called after every decode of the context (batch sizes, step times: metrics). */
  onDecode?: (sample: DecodeSample) => void;
  /**
   * How a generation step's sequences go to llama.cpp: "measured" (the default), in one pass or
   * a pass each, whichever this context measures faster for that many sequences (pass-planner.ts);
   * "together", always in one pass.
   */
  arrangeSteps?: "measured" | "together";
  /**
   * KV cells the context's idle sequences keep for later prompts that start the same way
   * (HEARTH_PROMPT_CACHE_TOKENS): null or absent, all they hold; 0, none (no prompt caching).
   */
  promptCacheTokens?: number | null;
  /** Called when a request takes a sequence, when one ends, and when the context goes (metrics). */
  onPromptCache?: (sample: PromptCacheSample) => void;
}

/** What a context's prompt cache did: for a request that took a sequence or ended, or as the context went. */
export interface PromptCacheSample {
  /** A request took a sequence (false: idle cells were cut to keep the bound). */
  lookup: boolean;
  /** Prompt tokens whose cells the request reused. */
  reused: number;
  /** Cells erased: an earlier prompt's past what the request shares with it, or beyond the bound. */
  evicted: number;
  /**
   * How the bytes of KV cache that idle sequences keep for reuse changed: less when a request
   * takes a sequence or cells are cut, more when a request ends and its sequence keeps its cells.
   */
  heldBytes: number;
}

/** One decode of a context: a batch of tokens from one or more sequences. */
export interface DecodeSample {
  /** Tokens the batch held. */
  tokens: number;
  /** Sequences that had tokens in it: a generation step has one token per sequence. */
  sequences: number;
  /**
   * For a generation step: how many passes llama.cpp made over it, each reading all the weights
   * (1 when its sequences' IDs run on consecutively in the batch's order: sequence-ids.ts).
   */
  passes?: number;
  /** Wall time of the decode itself (not the sampling after it). */
  ms: number;
  /** A decode of the express context (ModelInstance), which runs beside the shared one's. */
  express?: boolean;
  /**
   * For a generation step that follows another on its context: the time since that one's decode
   * ended, in three parts (decode-observer.ts): until its first sampling was asked for, its
   * samplings, and from their last answer until this decode.
   */
  between?: StepGap;
}

/** The time between two generation steps of a context, in milliseconds. */
export interface StepGap {
  beforeSamplingMs: number;
  samplingMs: number;
  afterSamplingMs: number;
}

/** A LoRA adapter loaded onto a model. */
export interface EngineAdapter {
  readonly path: string;
  /** Frees its weights; the requests using it must have ended. */
  dispose(): Promise<void>;
}

export interface GenerateRequest {
  promptTokens: number[];
  /** The adapter to generate with (the context must have been created with `adapters`). */
  adapter?: EngineAdapter;
  /**
   * How to sample; with `sampling.constraint` the output is held to a JSON schema or a GBNF
   * grammar (domain/generation.ts), compiled once per engine and shared, and the generation
   * ends when the grammar is complete (finish reason "stop"), or at max tokens ("length": cut
   * short, the output may then be incomplete). A grammar that does not compile is an AppError
   * 400 naming `response_format`, thrown before the request takes a sequence.
   */
  sampling: Sampling;
  /** Stop strings beyond sampling.stop (from the chat template); not applied under a constraint. */
  extraStop?: readonly string[];
  /**
   * Tools the model may call, written in `format`: with `required` or a named function the
   * answer is calls from its first token, generated under a grammar of the calls (names and
   * arguments' JSON schemas); with `auto` that grammar takes over once the model writes the
   * format's trigger, and ends the answer with its calls.
   */
  toolCalls?: { use: ToolUse; format: ToolCallFormat };
  /**
   * An express request (fair scheduling's express lane: the request of an account with nothing
   * else in flight, docs/security.md): served first among those waiting for a sequence, and its
   * prompt decoded in a batch of its own.
   */
  express?: boolean;
  /**
   * Report each generated token's log probability with this many alternatives (0 to
   * MAX_TOP_LOGPROBS): `onText` then gets the tokens whose text it carries. Absent: none
   * reported, and none computed (a request that does not ask pays nothing).
   */
  logprobs?: number;
  /**
   * Echo: called once, before any generated text, with the prompt as the model read it (with
   * `logprobs`, its tokens scored too). Not called for a request cancelled before it started.
   */
  echo?: (prompt: EchoedPrompt) => void;
  /**
   * Told the counts so far: once the prompt is read (no completion tokens yet), then after each
   * generated token, before that token's text goes to `onText`; so an event built in `onText`
   * can say how many tokens the request had generated by then (requests/stream.ts).
   */
  progress?: (counts: GenerateCounts) => void;
}

/** The prompt as the model read it: what an echo shows. */
export interface EchoedPrompt {
  /**
   * The text of the prompt's tokens that were read, in the model's own detokenization (a special
   * token, such as a BOS, adds no text); a BOS token the engine put in front is not part of it.
   */
  text: string;
  /** Whether the prompt's beginning was cut to fit the context (onContextOverflow "truncate"). */
  truncated: boolean;
  /**
   * With `logprobs`: those same tokens, exactly, each with its log probability given the ones
   * before it (offsets in `text`). The first has a null logprob when nothing was read before it;
   * after a BOS the engine put in front, it has the probability the model gives it there.
   */
  logprobs?: TokenLogprob[];
}

/**
 * Generated text as it becomes final. With `logprobs` asked, `logprobs` holds the tokens whose
 * text is now all sent (in order; a token that a stop string cuts through comes last, in full;
 * one wholly inside the stop string never comes), each with its offset in the generated text.
 * It may come with empty text (the last tokens, once a stop string has cut them).
 */
export type OnText = (text: string, logprobs?: TokenLogprob[]) => void;

export interface GenerateCounts {
  promptTokens: number;
  /** Of the prompt tokens, those whose cells a previous request left (not evaluated again). */
  cachedTokens: number;
  completionTokens: number;
}

export interface GenerateResult extends GenerateCounts {
  /** "stop" also when the answer ended with tool calls (the worker tells them from the text). */
  finishReason: "stop" | "length" | "cancelled";
}

export interface EngineContext {
  /** Tokens of context each sequence has. */
  readonly contextSize: number;
  /** Requests it runs at once (more wait for a free sequence). */
  readonly sequences: number;
  /** On a context created with `adapters`: the decodes so far that switched its adapter. */
  readonly adapterSwitches?: number;
  /**
   * Generates into one free sequence (waiting for one if all are busy), starting from the
   * cells of an earlier request whose tokens begin the prompt when the context keeps some
   * (with greedy sampling the output is the same as without them), calling
   * `onText` with each piece of text as it becomes final. Stops within one token of
   * `signal` aborting.
   */
  generate(request: GenerateRequest, signal: AbortSignal, onText: OnText): Promise<GenerateResult>;
  dispose(): Promise<void>;
}
