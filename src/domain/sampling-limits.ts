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
/** Longest GBNF grammar a request may give, in characters. */
export const MAX_GRAMMAR_CHARS = 32_768;
/** Longest JSON schema a request may give, in characters of its JSON. */
export const MAX_SCHEMA_CHARS = 65_536;
/** Deepest nesting of schemas within a JSON schema. */
export const MAX_SCHEMA_DEPTH = 32;
/**
 * Largest length or count in a JSON schema (maxLength, maxItems…): llama.cpp expands a bounded
 * repetition into that many grammar rules.
 */
export const MAX_SCHEMA_BOUND = 1_000;
/** Entries of a request's logit_bias: each is a token's bias, applied at every step. */
export const MAX_LOGIT_BIAS = 1024;
/** A logit_bias of this (or below) bans the token outright, as OpenAI documents -100. */
export const BAN_BIAS = -100;
