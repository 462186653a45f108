/**
 * Bounds on what a generation request may ask for, shared by the HTTP contract (which refuses
 * past them with a 400) and the job registry (which a worker checks every job against).
 */

/** Stop strings per request, as OpenAI allows. */
export const MAX_STOP_SEQUENCES = 4;
/** Longest stop string, in characters: each token is matched against every stop string. */
export const MAX_STOP_CHARS = 256;
/** Seeds are llama.cpp's: 32 bits; choice i of a request uses (seed + i) mod 2^32. */
export const MAX_SEED = 2 ** 32 - 1;
/** No context is longer (HEARTH_CONTEXT_SIZE's bound); the model's own context is checked at admission. */
export const MAX_TOKENS = 1_048_576;
