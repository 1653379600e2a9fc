// XLA's total order of elements, the one compare's TOTALORDER and topK use: for floats
// -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN, read from the bit pattern as a
// sign-magnitude integer (XLA's ToSignMagnitude), so a NaN's sign and payload count and
// every bit pattern has its own place; integers order by value, pred false < true.

import { ELEMENT_TYPES } from "../../types/element_type.js";
import { ExecutionError } from "../../types/errors.js";
import type { Literal } from "../../types/literal.js";

/**
 * A key per element of `lit` whose numeric order is the total order. A float with its sign
 * bit set maps to -(magnitude) - 1, so -0 sorts just below +0 and the larger a negative
 * pattern's magnitude, the lower it sorts. (The fnuz formats' one NaN is the pattern of
 * -0, so it sorts between the negative numbers and +0, as XLA's sign-magnitude order puts
 * it; f8e8m0fnu has no sign bit, so its patterns order as unsigned integers.)
 */
export function totalOrderKeys(lit: Literal): (linear: number) => number | bigint {
  const t = lit.elementType;
  const info = ELEMENT_TYPES[t];
  if (info.kind === "pred") return (i) => (lit.data[i] as number);
  if (info.kind === "signed" || info.kind === "unsigned") return (i) => lit.data[i]!;
  if (info.kind !== "float") throw new ExecutionError(`${t} has no total order`);
  if (t === "f64") {
    const bits = new BigUint64Array(lit.data.buffer, lit.data.byteOffset, lit.data.length);
    const signBit = 1n << 63n;
    return (i) => {
      const b = bits[i]!;
      return b & signBit ? -(b ^ signBit) - 1n : b;
    };
  }
  // f32 is read through a view of its bits; f16, bf16 and the narrow formats are stored
  // as their bit patterns.
  const view = t === "f32" ? new Uint32Array(lit.data.buffer, lit.data.byteOffset, lit.data.length) : lit.data;
  if (info.float!.encoding === "e8m0") return (i) => view[i] as number;
  const signBit = 2 ** (info.bitWidth - 1);
  return (i) => {
    const b = view[i] as number;
    return b >= signBit ? -(b - signBit) - 1 : b;
  };
}
