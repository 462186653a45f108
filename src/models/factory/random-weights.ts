/**
 * Seeded random tensor values for models whose values do not matter, only their shapes
 * (benchmarks). Each tensor's numbers depend only on the seed and the tensor's name, so a
 * tensor can be produced on its own, in any order, and the same seed always gives the same
 * bytes. The generator is xorshift32: fast enough to fill a billion values in seconds.
 */

/** A 32-bit state from a seed and a name (FNV-1a over the name's UTF-16 units, mixed with the seed). */
export function tensorSeed(seed: number, name: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // Murmur3's finalizer, so that near seeds start far apart; xorshift's state must not be 0.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0 || 0x9e3779b9;
}

/**
 * `length` values drawn uniformly from [-a, a) with a = std·√3, so their standard
 * deviation is `std`, from the generator state `state` (see tensorSeed).
 */
export function uniformValues(length: number, std: number, state: number): Float32Array {
  const out = new Float32Array(length);
  const step = (std * Math.sqrt(3)) / 2 ** 31;
  let s = state >>> 0 || 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = (s | 0) * step;
  }
  return out;
}
