import { describe, expect, it } from "vitest";
import { lowRankFactors, truncatedSvd } from "../../../src/models/factory/low-rank.js";

/** A deterministic pseudo-random matrix. */
function matrix(rows: number, cols: number, seed = 1): Float64Array {
  let state = seed;
  return Float64Array.from({ length: rows * cols }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  });
}

function frobenius(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]! ** 2;
  return Math.sqrt(sum);
}

describe("truncated SVD", () => {
  it("recovers an exactly low-rank matrix", () => {
    const rows = 12;
    const cols = 9;
    const left = matrix(rows, 2, 3);
    const right = matrix(2, cols, 5);
    const m = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) m[i * cols + j] = left[i * 2]! * right[j]! + left[i * 2 + 1]! * right[cols + j]!;
    const { a, b } = lowRankFactors(m, rows, cols, 2);
    const diff = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++)
        diff[i * cols + j] = m[i * cols + j]! - (b[i * 2]! * a[j]! + b[i * 2 + 1]! * a[cols + j]!);
    expect(frobenius(diff)).toBeLessThan(1e-6);
  });

  it("gives orthonormal vectors, sorted singular values and the optimal error", () => {
    const rows = 20;
    const cols = 15;
    const m = matrix(rows, cols);
    const full = truncatedSvd(m, rows, cols, cols);
    for (let k = 1; k < cols; k++) expect(full.s[k]!).toBeLessThanOrEqual(full.s[k - 1]!);
    for (let p = 0; p < cols; p++) {
      for (let q = 0; q < cols; q++) {
        let uu = 0;
        let vv = 0;
        for (let i = 0; i < rows; i++) uu += full.u[i * cols + p]! * full.u[i * cols + q]!;
        for (let i = 0; i < cols; i++) vv += full.v[i * cols + p]! * full.v[i * cols + q]!;
        expect(uu).toBeCloseTo(p === q ? 1 : 0, 9);
        expect(vv).toBeCloseTo(p === q ? 1 : 0, 9);
      }
    }
    // Eckart–Young: the rank-4 error is the norm of the dropped singular values.
    const rank = 4;
    const { a, b } = lowRankFactors(m, rows, cols, rank);
    const diff = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        let approx = 0;
        for (let k = 0; k < rank; k++) approx += b[i * rank + k]! * a[k * cols + j]!;
        diff[i * cols + j] = m[i * cols + j]! - approx;
      }
    }
    expect(frobenius(diff)).toBeCloseTo(frobenius(full.s.subarray(rank)), 5);
  });

  it("is deterministic and handles repeated and zero columns", () => {
    const rows = 10;
    const cols = 8;
    const m = matrix(rows, cols, 9);
    for (let i = 0; i < rows; i++) {
      m[i * cols + 5] = m[i * cols + 4]!;
      m[i * cols + 6] = m[i * cols + 4]!;
      m[i * cols + 7] = 0;
    }
    const one = lowRankFactors(m, rows, cols, 3);
    const two = lowRankFactors(m, rows, cols, 3);
    expect(one.a).toEqual(two.a);
    expect(one.b).toEqual(two.b);
    expect(truncatedSvd(m, rows, cols, 8).s.at(-1)).toBeLessThan(1e-9);
  });
});
