// Distances in units in the last place, for the tolerances of floating-point results
// computed in the value's own precision (the compiled backend computes f32 in f32, as
// XLA's CPU backend does; the interpreter computes in double and rounds once).

import type { ElementType } from "../../src/types/element_type.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/** The value's position on a line where neighbouring floats of `type` are 1 apart (−0 and +0 both at 0). */
function ordinal(type: ElementType, x: number): bigint {
  if (type === "f64") {
    f64[0] = x;
    const bits = u64[0]!;
    return bits >> 63n ? -(bits & 0x7fffffffffffffffn) : bits;
  }
  f32[0] = x;
  const bits = u32[0]!;
  const magnitude = BigInt(bits & 0x7fffffff);
  const shift = type === "f16" ? 13n : type === "bf16" ? 16n : 0n; // f16 has 10 mantissa bits, bf16 7, f32 23
  // f16 and bf16 values are exact in f32; neighbours are 2^shift f32 steps apart (f16: in its normal range).
  return (bits >>> 31 ? -magnitude : magnitude) >> shift;
}

/**
 * How many steps between neighbouring floats of `type` separate a and b: 0 when equal
 * (±0 included) or both NaN; Infinity when only one is NaN or one is infinite and the
 * other not. f16 subnormals count in f32-exponent steps (finer: stricter, never looser).
 */
export function ulpDistance(type: ElementType, a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b) ? 0 : Infinity;
  if (a === b) return 0;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Infinity;
  const d = ordinal(type, a) - ordinal(type, b);
  return Number(d < 0n ? -d : d);
}
