// The raw bits of one element of a literal's storage, as an unsigned bigint of the
// type's bit width (XLA's `primitive_util::BitWidth`: pred is 1 bit, s4 is 4, c64 is
// 64). Used by bitcast-convert and wherever the exact bit pattern matters (a NaN's
// sign, f32/f64 payloads), since reading a float into a JS number can lose both.
//
// Complex elements are (re, im): the real part's bits are the low half, as they come
// first in little-endian memory.

import { ELEMENT_TYPES, type ElementType } from "./element_type.js";
import type { Storage } from "./literal.js";

/** Bits of the element at storage index `i`. */
export function readElementBits(t: ElementType, data: Storage, i: number): bigint {
  const width = BigInt(ELEMENT_TYPES[t].bitWidth);
  switch (t) {
    case "pred": return data[i] !== 0 ? 1n : 0n;
    case "f32": return BigInt(uint32View(data)[i]!);
    case "f64": return uint64View(data)[i]!;
    case "c64": {
      const v = uint32View(data);
      return BigInt(v[2 * i]!) | (BigInt(v[2 * i + 1]!) << 32n);
    }
    case "c128": {
      const v = uint64View(data);
      return v[2 * i]! | (v[2 * i + 1]! << 64n);
    }
    default: {
      // Integers (two's complement) and narrow floats (already bit patterns).
      const raw = data[i]!;
      return BigInt.asUintN(Number(width), typeof raw === "bigint" ? raw : BigInt(raw));
    }
  }
}

/** Stores `bits` (an unsigned value of the type's width) as the element at storage index `i`. */
export function writeElementBits(t: ElementType, data: Storage, i: number, bits: bigint): void {
  const width = ELEMENT_TYPES[t].bitWidth;
  switch (t) {
    case "pred": data[i] = bits !== 0n ? 1 : 0; return;
    case "f32": uint32View(data)[i] = Number(bits); return;
    case "f64": uint64View(data)[i] = bits; return;
    case "c64": {
      const v = uint32View(data);
      v[2 * i] = Number(bits & 0xffffffffn);
      v[2 * i + 1] = Number(bits >> 32n);
      return;
    }
    case "c128": {
      const v = uint64View(data);
      v[2 * i] = BigInt.asUintN(64, bits);
      v[2 * i + 1] = bits >> 64n;
      return;
    }
    case "s64": case "index": (data as BigInt64Array)[i] = BigInt.asIntN(64, bits); return;
    case "u64": (data as BigUint64Array)[i] = BigInt.asUintN(64, bits); return;
    default:
      data[i] = Number(ELEMENT_TYPES[t].kind === "signed" ? BigInt.asIntN(width, bits) : BigInt.asUintN(width, bits));
  }
}

/** Whether the sign bit of a real float element (or of one part of a complex element) is set. */
export function floatSignBit(t: ElementType, data: Storage, i: number, imaginary = false): boolean {
  const slot = 2 * i + (imaginary ? 1 : 0);
  switch (t) {
    case "f32": return (uint32View(data)[i]! >>> 31) === 1;
    case "c64": return (uint32View(data)[slot]! >>> 31) === 1;
    case "f64": return (uint64View(data)[i]! >> 63n) === 1n;
    case "c128": return (uint64View(data)[slot]! >> 63n) === 1n;
    case "f8e8m0fnu": return false;
    default: {
      const info = ELEMENT_TYPES[t];
      if (info.float === undefined) throw new TypeError(`floatSignBit: ${t} is not a floating-point type`);
      return ((data[i] as number) >> (info.bitWidth - 1)) === 1;
    }
  }
}

function uint32View(data: Storage): Uint32Array {
  return new Uint32Array(data.buffer, data.byteOffset, (data.byteLength / 4) | 0);
}

function uint64View(data: Storage): BigUint64Array {
  return new BigUint64Array(data.buffer, data.byteOffset, (data.byteLength / 8) | 0);
}
