/**
 * The hyperparameters that size a llama-architecture model (llama, qwen2, qwen3), as its
 * GGUF metadata states them (`<arch>.embedding_length`, `.block_count`, …). One type for
 * what a base model file says (base/base-model-check.ts) and what the model factory builds.
 */
export interface LlamaShape {
  embeddingLength: number;
  blockCount: number;
  headCount: number;
  headCountKv: number;
  /** The largest per-layer value when a file lists one per layer. */
  feedForwardLength: number;
  vocabSize: number;
  contextLength: number;
}
