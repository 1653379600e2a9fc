// XLA's total order (src/interpreter/kernels/total_order.ts), the one key compare's
// TOTALORDER and topK share. The expected order comes from the decoded values, not from
// bit arithmetic: numbers by value with -0 below +0, NaNs with the sign bit set below
// everything and those without above, NaNs among themselves by payload (a larger payload
// farther from the numbers). The fnuz formats' one NaN has the bit pattern of -0, and
// XLA's sign-magnitude order puts it where -0 would be. Every bit pattern of the
// narrow formats and of f16/bf16 is checked; f32 and f64 on chosen patterns.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, compare, decodeFloatBits, ELEMENT_TYPE_NAMES, ELEMENT_TYPES, Literal, topK, type ElementType,
} from "../../src/index.js";
import { totalOrderKeys } from "../../src/interpreter/kernels/total_order.js";
import { fromBits, run } from "./helpers.js";

const FLOAT_TYPES = ELEMENT_TYPE_NAMES.filter((t) => ELEMENT_TYPES[t].kind === "float");

/** f32 and f64 patterns: zeros, subnormals, ones, extremes, infinities, quiet and signalling NaNs of both signs, and a few arbitrary ones. */
const F32_PATTERNS = [
  0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff,
  0x7f800000, 0xff800000, 0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc00001, 0x7fffffff, 0xffffffff,
  0x12345678, 0x92345678, 0x40490fdb, 0xc0490fdb,
].map(BigInt);
const F64_PATTERNS = [
  0x0000000000000000n, 0x8000000000000000n, 0x0000000000000001n, 0x8000000000000001n, 0x000fffffffffffffn, 0x800fffffffffffffn,
  0x3ff0000000000000n, 0xbff0000000000000n, 0x7fefffffffffffffn, 0xffefffffffffffffn, 0x7ff0000000000000n, 0xfff0000000000000n,
  0x7ff0000000000001n, 0xfff0000000000001n, 0x7ff8000000000000n, 0xfff8000000000000n, 0x7ff8000000000001n, 0xfff8000000000001n,
  0x7fffffffffffffffn, 0xffffffffffffffffn, 0x400921fb54442d18n, 0xc00921fb54442d18n, 0x0123456789abcdefn, 0x8123456789abcdefn,
];

function patternsOf(t: ElementType): bigint[] {
  if (t === "f32") return F32_PATTERNS;
  if (t === "f64") return F64_PATTERNS;
  return Array.from({ length: 2 ** ELEMENT_TYPES[t].bitWidth }, (_, b) => BigInt(b));
}

function decode(t: ElementType, bits: bigint): number {
  if (t === "f64") return new Float64Array(BigUint64Array.of(bits).buffer)[0]!;
  if (t === "f32") return new Float32Array(Uint32Array.of(Number(bits)).buffer)[0]!;
  return decodeFloatBits(t, Number(bits));
}

/** Orders two bit patterns of `t` by what they decode to (see the file's comment); negative when a goes first. */
function expectedOrder(t: ElementType): (a: bigint, b: bigint) => number {
  const width = BigInt(ELEMENT_TYPES[t].bitWidth);
  const signed = ELEMENT_TYPES[t].float!.encoding !== "e8m0";
  const signBit = signed ? 1n << (width - 1n) : 0n;
  const magnitude = (b: bigint): bigint => b & ~signBit;
  // 0: a NaN with its sign bit set, 1: a number (the fnuz NaN as -0), 2: a NaN without.
  const band = (b: bigint): number => {
    if (!Number.isNaN(decode(t, b))) return 1;
    if (b === signBit && ELEMENT_TYPES[t].float!.encoding === "fnuz") return 1;
    return b & signBit ? 0 : 2;
  };
  const value = (b: bigint): number => (Number.isNaN(decode(t, b)) ? -0 : decode(t, b));
  return (a, b) => {
    const [ba, bb] = [band(a), band(b)];
    if (ba !== bb) return ba - bb;
    if (ba === 0) return magnitude(a) > magnitude(b) ? -1 : magnitude(a) < magnitude(b) ? 1 : 0;
    if (ba === 2) return magnitude(a) < magnitude(b) ? -1 : magnitude(a) > magnitude(b) ? 1 : 0;
    const [va, vb] = [value(a), value(b)];
    if (va !== vb) return va - vb;
    // Only -0 and +0 decode equal: the one with the sign bit goes first.
    return Number((b & signBit) !== 0n) - Number((a & signBit) !== 0n);
  };
}

for (const t of FLOAT_TYPES) {
  test(`totalOrderKeys ${t}: keys rise strictly along the order of the decoded values`, () => {
    const order = expectedOrder(t);
    const sorted = [...patternsOf(t)].sort(order);
    const key = totalOrderKeys(fromBits(t, sorted));
    for (let i = 0; i + 1 < sorted.length; i++) {
      assert.ok(key(i) < key(i + 1), `${t}: 0x${sorted[i]!.toString(16)} must sort below 0x${sorted[i + 1]!.toString(16)}, keys ${key(i)} and ${key(i + 1)}`);
    }
  });
}

test("totalOrderKeys: integers by value, pred false < true; complex has no total order", () => {
  const s8 = Literal.from("s8", [-128, -1, 0, 1, 127]);
  const u64 = Literal.from("u64", [0n, 1n, 2n ** 63n, 2n ** 64n - 1n]);
  for (const lit of [s8, u64, Literal.from("pred", [false, true])]) {
    const key = totalOrderKeys(lit);
    const n = lit.dimensions[0]!;
    for (let i = 0; i + 1 < n; i++) assert.ok(key(i) < key(i + 1), `${lit.elementType} element ${i}`);
  }
  assert.throws(() => totalOrderKeys(Literal.from("c64", [{ re: 1, im: 0 }])), /c64 has no total order/);
});

// compare (TOTALORDER) and topK read the same keys: every pair of patterns of the 8-bit
// and narrower formats against the expected order, and topK's full order of all patterns.
for (const t of FLOAT_TYPES.filter((t) => ELEMENT_TYPES[t].bitWidth <= 8)) {
  test(`compare LT TOTALORDER and topK on every ${t} pattern`, () => {
    const order = expectedOrder(t);
    const all = patternsOf(t);
    const n = all.length;
    const square = (bits: bigint[]): Literal => Literal.fromStorage(arrayShape(t, [n, n]), fromBits(t, bits).data);
    const lhs = square(all.flatMap((a) => all.map(() => a)));
    const rhs = square(all.flatMap(() => all));
    const less = run((x, y) => compare(x, y, "LT", { compareType: "TOTALORDER" }), lhs, rhs).values();
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        assert.equal(less[i * n + j], order(all[i]!, all[j]!) < 0, `${t}: 0x${all[i]!.toString(16)} < 0x${all[j]!.toString(16)}`);
      }
    }
    // Patterns in a scrambled order (stride 5 is coprime to every power of two): topK with
    // k = n lists them all from the top, which must be the expected order reversed.
    const scrambled = all.map((_, i) => all[(i * 5) % n]!);
    const [values] = run((x) => topK(x, n), fromBits(t, scrambled)).elements;
    const got = Array.from(values!.data as Uint8Array);
    const expected = [...all].sort(order).reverse().map(Number);
    assert.deepEqual(got, expected);
  });
}
