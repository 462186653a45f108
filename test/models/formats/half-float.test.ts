import { describe, expect, it } from "vitest";
import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits } from "../../../src/models/formats/half-float.js";

describe("half precision", () => {
  it("round-trips every F16 bit pattern", () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = f16BitsToF32(bits);
      if (Number.isNaN(value)) expect(Number.isNaN(f16BitsToF32(f32ToF16Bits(value)))).toBe(true);
      else expect(f32ToF16Bits(value)).toBe(bits);
    }
  });

  it("rounds to nearest even and saturates to infinity", () => {
    expect(f32ToF16Bits(1)).toBe(0x3c00);
    expect(f32ToF16Bits(-2)).toBe(0xc000);
    expect(f32ToF16Bits(65504)).toBe(0x7bff);
    expect(f32ToF16Bits(65520)).toBe(0x7c00); // halfway to the next binade: ties to even = infinity
    expect(f32ToF16Bits(1e6)).toBe(0x7c00);
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie, even stays
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie, odd rounds up
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001);
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000); // tie with zero: even
    expect(f32ToF16Bits(3 * 2 ** -26)).toBe(0x0001);
    expect(f32ToF16Bits(-0)).toBe(0x8000);
  });

  it("converts BF16 both ways", () => {
    expect(f32ToBf16Bits(1)).toBe(0x3f80);
    expect(bf16BitsToF32(0x3f80)).toBe(1);
    expect(bf16BitsToF32(0xc040)).toBe(-3);
    expect(f32ToBf16Bits(1 + 2 ** -8)).toBe(0x3f80); // tie to even
    expect(f32ToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(Number.isNaN(bf16BitsToF32(f32ToBf16Bits(NaN)))).toBe(true);
    for (let bits = 0; bits < 0x10000; bits += 7) {
      const v = bf16BitsToF32(bits);
      if (!Number.isNaN(v)) expect(f32ToBf16Bits(v)).toBe(bits);
    }
  });
});
