/**
 * Truncated SVD by one-sided (Hestenes) Jacobi rotations in float64: deterministic (no
 * random start), accurate for the few-hundred-square matrices Hearth factors into LoRA
 * adapters, and simple enough to audit.
 */

export interface TruncatedSvd {
  rank: number;
  /** Singular values, largest first. */
  s: Float64Array;
  /** Left singular vectors, [rows, rank] row-major. */
  u: Float64Array;
  /** Right singular vectors, [cols, rank] row-major. */
  v: Float64Array;
}

/** The top `rank` singular triplets of a [rows, cols] row-major matrix. */
export function truncatedSvd(matrix: ArrayLike<number>, rows: number, cols: number, rank: number): TruncatedSvd {
  if (matrix.length !== rows * cols) throw new Error(`matrix has ${matrix.length} values, not ${rows}x${cols}`);
  if (!(rank >= 1 && rank <= Math.min(rows, cols))) throw new Error(`rank ${rank} out of range for ${rows}x${cols}`);
  // Work on columns: w[c] is column c of the matrix, v[c] column c of the rotation.
  const w = Array.from({ length: cols }, (_, c) =>
    Float64Array.from({ length: rows }, (_, r) => matrix[r * cols + c]!),
  );
  const v = Array.from({ length: cols }, (_, c) => {
    const e = new Float64Array(cols);
    e[c] = 1;
    return e;
  });
  const tolerance = 1e-12;
  // Columns this small (relative to the whole matrix) are numerically zero: rotating
  // them only stirs rounding noise and would keep the sweeps from converging.
  const negligible = 1e-28 * w.reduce((acc, col) => acc + col.reduce((x, y) => x + y * y, 0), 0);
  for (let sweep = 0; sweep < 60; sweep++) {
    let rotated = false;
    for (let p = 0; p < cols - 1; p++) {
      for (let q = p + 1; q < cols; q++) {
        const wp = w[p]!;
        const wq = w[q]!;
        let alpha = 0;
        let beta = 0;
        let gamma = 0;
        for (let i = 0; i < rows; i++) {
          alpha += wp[i]! * wp[i]!;
          beta += wq[i]! * wq[i]!;
          gamma += wp[i]! * wq[i]!;
        }
        if (alpha <= negligible || beta <= negligible) continue;
        if (Math.abs(gamma) <= tolerance * Math.sqrt(alpha * beta)) continue;
        rotated = true;
        const zeta = (beta - alpha) / (2 * gamma);
        const t = Math.sign(zeta || 1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const s = c * t;
        rotate(wp, wq, c, s);
        rotate(v[p]!, v[q]!, c, s);
      }
    }
    if (!rotated) break;
  }

  const norms = w.map((col) => Math.sqrt(col.reduce((acc, x) => acc + x * x, 0)));
  const order = norms.map((_, i) => i).sort((a, b) => norms[b]! - norms[a]! || a - b);
  const result: TruncatedSvd = {
    rank,
    s: new Float64Array(rank),
    u: new Float64Array(rows * rank),
    v: new Float64Array(cols * rank),
  };
  for (let k = 0; k < rank; k++) {
    const j = order[k]!;
    const sigma = norms[j]!;
    const vj = v[j]!;
    // Fix the sign: the largest-magnitude entry of each right vector is positive.
    let pivot = 0;
    for (let i = 1; i < cols; i++) if (Math.abs(vj[i]!) > Math.abs(vj[pivot]!)) pivot = i;
    const sign = vj[pivot]! < 0 ? -1 : 1;
    result.s[k] = sigma;
    for (let i = 0; i < cols; i++) result.v[i * rank + k] = sign * vj[i]!;
    for (let i = 0; i < rows; i++) result.u[i * rank + k] = sigma > 0 ? (sign * w[j]![i]!) / sigma : 0;
  }
  return result;
}

/** Jacobi rotation of two columns: (x, y) ← (c·x − s·y, s·x + c·y). */
function rotate(x: Float64Array, y: Float64Array, c: number, s: number): void {
  for (let i = 0; i < x.length; i++) {
    const a = x[i]!;
    const b = y[i]!;
    x[i] = c * a - s * b;
    y[i] = s * a + c * b;
  }
}

/**
 * Factors M ≈ B·A at the given rank, splitting each singular value evenly:
 * B = U·sqrt(S) is [rows, rank], A = sqrt(S)·Vᵀ is [rank, cols] (both row-major, float32).
 */
export function lowRankFactors(
  matrix: ArrayLike<number>,
  rows: number,
  cols: number,
  rank: number,
): { a: Float32Array; b: Float32Array } {
  const { s, u, v } = truncatedSvd(matrix, rows, cols, rank);
  const a = new Float32Array(rank * cols);
  const b = new Float32Array(rows * rank);
  for (let k = 0; k < rank; k++) {
    const root = Math.sqrt(s[k]!);
    for (let i = 0; i < cols; i++) a[k * cols + i] = root * v[i * rank + k]!;
    for (let i = 0; i < rows; i++) b[i * rank + k] = root * u[i * rank + k]!;
  }
  return { a, b };
}
