// add, sub, mul, div, rem, pow, max, min: StableHLO interpreter cases (expected values
// from ../shared/conformance/stablehlo/interpret/*.mlir), XLA's integer edge cases and
// float specials.
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, div, max, min, mul, pow, rem, sub, type ElementType, type Scalar, type XlaOp } from "../../src/index.js";
import { assertComplex, assertFloats, assertShapeError, assertValues, floats, lit, run } from "./helpers.js";

type Binary = (a: XlaOp, b: XlaOp) => XlaOp;
const bin = (f: Binary, t: ElementType, a: Scalar[], b: Scalar[]) => run((x, y) => f(x, y), lit(t, a), lit(t, b));
const big = (xs: (number | string)[]): bigint[] => xs.map((x) => BigInt(x));

test("add: every integer width wraps (conformance add.mlir)", () => {
  assertValues(bin(add, "s2", [1, 0, -1, -2], [-1, 1, 1, 1]), [0, 1, 0, -1]);
  assertValues(bin(add, "u2", [0, 2], [1, 1]), [1, 3]);
  assertValues(bin(add, "s4", [0, 1, 2, -3, 0], [-8, -1, 2, -3, 7]), [-8, 0, 4, -6, 7]);
  assertValues(bin(add, "u4", [0, 2], [15, 3]), [15, 5]);
  assertValues(bin(add, "s8", [0, 1, 8, -9, 0], [-128, -1, 8, -9, 127]), [-128, 0, 16, -18, 127]);
  assertValues(bin(add, "u8", [0, 16], [255, 16]), [255, 32]);
  assertValues(bin(add, "s16", [0, 1, 128, -129, 0], [-32768, -1, 128, -129, 32767]), [-32768, 0, 256, -258, 32767]);
  assertValues(bin(add, "u16", [0, 256], [65535, 256]), [65535, 512]);
  assertValues(bin(add, "s32", [0, 1, 32768, -32769, 0], [-2147483648, -1, 32768, -32769, 2147483647]),
    [-2147483648, 0, 65536, -65538, 2147483647]);
  assertValues(bin(add, "u32", [0, 65536], [4294967295, 65536]), [4294967295, 131072]);
  assertValues(bin(add, "s64", big([0, 1, 2147483648, -2147483649, 0]), big(["-9223372036854775808", -1, 2147483648, -2147483649, "9223372036854775807"])),
    big(["-9223372036854775808", 0, 4294967296, -4294967298, "9223372036854775807"]));
  assertValues(bin(add, "u64", big([0, 4294967296]), big(["18446744073709551615", 4294967296])), big(["18446744073709551615", 8589934592]));
  // Overflow wraps.
  assertValues(bin(add, "s8", [127], [1]), [-128]);
  assertValues(bin(add, "u32", [4294967295], [2]), [1]);
  assertValues(bin(add, "s64", big(["9223372036854775807"]), big([1])), big(["-9223372036854775808"]));
  assertValues(bin(add, "pred", [false, false, true, true], [false, true, false, true]), [false, true, true, true]);
});

test("complex64 multiply rounds as XLA's CPU backend does: each part's first product fused (fma), the second rounded to f32", () => {
  // (a + bi)(c + di) with ac and bd cancelling. Worked out with exact rationals (Python's
  // Fraction, rounded to nearest-even f32 by hand): the real part is
  // fl32(ac - fl32(bd)) = -2.7273927116766572e-05, where the exactly rounded ac - bd is
  // -2.7326361305313185e-05 and fl32(fl32(ac) - fl32(bd)) is -2.7298927307128906e-05;
  // the imaginary part fl32(ad + fl32(bc)) = 2.878232717514038.
  const a = { re: 0.8569469451904297, im: 1.3163437843322754 };
  const b = { re: 1.5356860160827637, im: 0.9997606873512268 };
  assertComplex(bin(mul, "c64", [a], [b]), [[-2.7273927116766572e-05, 2.878232717514038]], 0);
});

test("add/sub/mul on floats and complex (conformance)", () => {
  assertComplex(bin(add, "c64", [{ re: 1.5, im: 2.5 }, { re: 7.5, im: 5.5 }], [{ re: 1.5, im: 2.5 }, { re: 7.5, im: 5.5 }]), [[3, 5], [15, 11]], 0);
  assertComplex(bin(sub, "c128", [{ re: 1.5, im: 2.5 }], [{ re: 1.5, im: 2.5 }]), [[0, 0]], 0);
  assertComplex(bin(mul, "c64", [{ re: 1.5, im: 2.5 }, { re: 7.5, im: 5.5 }], [{ re: 1.5, im: 2.5 }, { re: 7.5, im: 5.5 }]), [[-4, 7.5], [26, 82.5]], 0);
  // bf16 multiply rounds to nearest even: 0.1 * 0.3 and 3.141 * 3.141 (conformance multiply.mlir).
  const r = run((x, y) => mul(x, y), floats("bf16", [0, -0, 1, 0.125, 0.1, 3.141, { bits: 0x7f80 }, { bits: 0x0001 }]),
    floats("bf16", [0, -0, 7, 0.75, 0.3, 3.141, 0, { bits: 0x8001 }]));
  assertFloats(r, [0, 0, 7, 0.09375, 0.0301513671875, 9.875, NaN, -0]);
  // f32 results are rounded to f32.
  assertFloats(bin(add, "f32", [0.1], [0.2]), [Math.fround(Math.fround(0.1) + Math.fround(0.2))]);
  assertFloats(bin(sub, "f16", [1], [2 ** -12]), [1]); // 1 - 2^-12 rounds back to 1 in f16 (ties to even)
});

test("mul: integers wrap exactly, including 32-bit products beyond 2^53 (conformance multiply.mlir)", () => {
  assertValues(bin(mul, "s8", [0, 1, 8, -9, 0], [-128, -1, 8, -9, 127]), [0, -1, 64, 81, 0]);
  assertValues(bin(mul, "u8", [0, 16, 16], [255, 16, 17]), [0, 0, 16]);
  assertValues(bin(mul, "s16", [0, 1, 128, -129, 0], [-32768, -1, 128, -129, 32767]), [0, -1, 16384, 16641, 0]);
  assertValues(bin(mul, "s32", [0, 1, 32768, -32769, 0], [-2147483648, -1, 32768, -32769, 2147483647]), [0, -1, 1073741824, 1073807361, 0]);
  assertValues(bin(mul, "u32", [0, 65536], [4294967295, 65536]), [0, 0]);
  assertValues(bin(mul, "s64", big([0, 1, 2147483648, -2147483649, 0]), big(["-9223372036854775808", -1, 2147483648, -2147483649, "9223372036854775807"])),
    big([0, -1, "4611686018427387904", "4611686022722355201", 0]));
  assertValues(bin(mul, "u64", big([0, 4294967296]), big(["18446744073709551615", 4294967296])), big([0, 0]));
  // 0x7fffffff^2 = 0x3fffffff00000001: low 32 bits 1 (a double product would lose them).
  assertValues(bin(mul, "s32", [2147483647], [2147483647]), [1]);
  assertValues(bin(mul, "u32", [4294967295], [4294967295]), [1]);
  assertValues(bin(mul, "pred", [false, false, true, true], [false, true, false, true]), [false, false, false, true]);
});

test("div and rem: conformance values (divide.mlir, remainder.mlir)", () => {
  assertValues(bin(div, "s64", big([17, -17, 17, -17]), big([3, 3, -3, -3])), big([5, -5, -5, 5]));
  assertValues(bin(div, "u64", big([17, 18, 19, 20]), big([3, 4, 5, 7])), big([5, 4, 3, 2]));
  assertFloats(bin(div, "f64", [17.1, -17.1, 17.1, -17.1], [3, 3, -3, -3]), [5.7, -5.7, -5.7, 5.7], 1e-15);
  assertComplex(bin(div, "c128", [{ re: 1.5, im: 2.5 }, { re: 7.5, im: 5.5 }], [{ re: 2.5, im: 1.5 }, { re: 5.5, im: 7.5 }]),
    [[0.88235294117647056, 0.4705882352941177], [0.95375722543352603, -0.30057803468208094]]);
  assertValues(bin(rem, "s64", big([17, -17, 17, -17]), big([3, 3, -3, -3])), big([2, -2, 2, -2]));
  assertValues(bin(rem, "u64", big([17, 18, 19, 20]), big([3, 4, 5, 7])), big([2, 2, 4, 6]));
  assertFloats(bin(rem, "f64", [17.1, -17.1, 17.1, -17.1], [3, 3, -3, -3]),
    [2.1000000000000014, -2.1000000000000014, 2.1000000000000014, -2.1000000000000014]);
});

test("div and rem: XLA's integer edge cases (by zero, INT_MIN / -1)", () => {
  for (const t of ["s8", "s16", "s32"] as const) {
    const intMin = t === "s8" ? -128 : t === "s16" ? -32768 : -2147483648;
    assertValues(bin(div, t, [7, -7, 0, intMin], [0, 0, 0, -1]), [-1, -1, -1, intMin]);
    assertValues(bin(rem, t, [7, -7, 0, intMin], [0, 0, 0, -1]), [7, -7, 0, 0]);
  }
  assertValues(bin(div, "s4", [-8, 5], [-1, 0]), [-8, -1]);
  assertValues(bin(rem, "s4", [-8, 5], [-1, 0]), [0, 5]);
  assertValues(bin(div, "u8", [7, 0], [0, 0]), [255, 255]);
  assertValues(bin(rem, "u8", [7, 0], [0, 0]), [7, 0]);
  assertValues(bin(div, "u32", [7], [0]), [4294967295]);
  assertValues(bin(div, "u2", [3], [0]), [3]);
  const min64 = -(2n ** 63n);
  assertValues(bin(div, "s64", [min64, 5n], [-1n, 0n]), [min64, -1n]);
  assertValues(bin(rem, "s64", [min64, 5n], [-1n, 0n]), [0n, 5n]);
  assertValues(bin(div, "u64", [5n], [0n]), [2n ** 64n - 1n]);
  assertValues(bin(rem, "u64", [5n], [0n]), [5n]);
  // Truncating division; remainder takes the dividend's sign.
  assertValues(bin(div, "s32", [-7, 7], [2, -2]), [-3, -3]);
  assertValues(bin(rem, "s32", [-7, 7], [2, -2]), [-1, 1]);
});

test("div and rem on floats: IEEE division by zero and fmod specials", () => {
  assertFloats(bin(div, "f32", [1, -1, 0, -0], [0, 0, 0, 1]), [Infinity, -Infinity, NaN, -0]);
  assertFloats(bin(rem, "f64", [5.5, -5.5, 1, Infinity, 3], [2, 2, 0, 2, Infinity]), [1.5, -1.5, NaN, NaN, 3]);
  assertFloats(bin(rem, "f64", [-4], [2]), [-0]); // sign of the dividend, even for a zero result
});

test("pow: integers (conformance power.mlir) and negative exponents", () => {
  assertValues(bin(pow, "s64", big([-1, -1, -3, 1, -3, 0]), big([1, 0, -3, -3, 3, 2])), big([-1, 1, 0, 1, -27, 0]));
  assertValues(bin(pow, "u64", big([0, 0, 1, 1, 5]), big([0, 1, 0, 2, 5])), big([1, 0, 1, 1, 3125]));
  assertValues(bin(pow, "s32", [-1, -1, 2, 0, 2], [-2, -3, -1, -1, 31]), [1, -1, 0, 0, -2147483648]);
  assertValues(bin(pow, "s32", [3], [40]), [Number(BigInt.asIntN(32, 3n ** 40n))]);
  assertValues(bin(pow, "u8", [2, 3], [8, 5]), [0, 243]);
  // Narrow holders wrap to their width; base -1 takes the negative exponent's parity.
  assertValues(bin(pow, "s4", [-1, -1, 3, 7, -8, 1, 2], [-3, -4, 2, 3, 1, -8, -1]), [-1, 1, -7, 7, -8, 1, 0]);
  assertValues(bin(pow, "u2", [3, 2, 3, 0], [3, 1, 0, 0]), [3, 2, 1, 1]);
});

test("pow: floats follow C's pow (conformance power.mlir) and complex", () => {
  assertFloats(bin(pow, "f64", [-2, -0, -36, 5, 3, 10000], [2, 2, 1.1, 2, -1, 10]), [4, 0, NaN, 25, 0.33333333333333331, 1e40], 1e-15);
  assertFloats(bin(pow, "f64", [1, -1, 0, 2], [NaN, Infinity, 0, NaN]), [1, 1, 1, NaN]);
  assertComplex(bin(pow, "c128", [{ re: 1.5, im: 2.5 }, { re: 7.5, im: 5.5 }], [{ re: 2.5, im: 1.5 }, { re: 5.5, im: 7.5 }]),
    [[-1.5679313814305016, -2.6674775446623613], [392.89270835580857, 1801.8249193362644]], 1e-12);
});

test("max/min: integers, pred, NaN propagation, signed zeros (conformance maximum/minimum.mlir)", () => {
  assertValues(bin(max, "s4", [0, 1, 2, -3, 0], [-8, -1, 2, -3, 7]), [0, 1, 2, -3, 7]);
  assertValues(bin(max, "u32", [0, 65536], [4294967295, 65536]), [4294967295, 65536]);
  assertValues(bin(max, "s64", big([0, "9223372036854775807"]), big(["-9223372036854775808", 1])), big([0, "9223372036854775807"]));
  assertValues(bin(max, "pred", [false, false, true, true], [false, true, false, true]), [false, true, true, true]);
  assertValues(bin(min, "pred", [false, false, true, true], [false, true, false, true]), [false, false, false, true]);
  const lhs = [{ bits: 0xff800000 }, { bits: 0xff800000 }, -1, { bits: 0x80000001 }, 0, 0, { bits: 1 }, 1, { bits: 0x7f800000 }, { bits: 0x7f800000 }, { bits: 0x7fc00000 }];
  const rhs = [{ bits: 0xff800000 }, -1, { bits: 0x80000001 }, -0, -0, { bits: 1 }, 1, { bits: 0x7f800000 }, { bits: 0x7f800000 }, { bits: 0xff800000 }, { bits: 0x7f800000 }];
  const tiny = 2 ** -149;
  assertFloats(run((x, y) => max(x, y), floats("f32", lhs), floats("f32", rhs)),
    [-Infinity, -1, -tiny, -0, 0, tiny, 1, Infinity, Infinity, Infinity, NaN]);
  assertFloats(run((x, y) => min(x, y), floats("f32", lhs), floats("f32", rhs)),
    [-Infinity, -Infinity, -1, -tiny, -0, 0, tiny, 1, Infinity, -Infinity, NaN]);
  assertFloats(bin(max, "f64", [1, NaN], [NaN, 1]), [NaN, NaN]);
  assertFloats(bin(min, "bf16", [NaN, 2], [1, NaN]), [NaN, NaN]);
  // Complex: lexicographic on (re, im).
  assertComplex(bin(max, "c64", [{ re: 1.5, im: 2.5 }, { re: 1.5, im: 7.5 }, { re: 0, im: 1.5 }, { re: 0, im: 1.5 }],
    [{ re: 7.5, im: 1.5 }, { re: 1.5, im: 2.5 }, { re: -0, im: 2.5 }, { re: 0, im: 1.5 }]), [[7.5, 1.5], [1.5, 7.5], [-0, 2.5], [0, 1.5]], 0);
  assertComplex(bin(min, "c64", [{ re: 1.5, im: 2.5 }, { re: 1.5, im: 7.5 }], [{ re: 7.5, im: 1.5 }, { re: 1.5, im: 2.5 }]), [[1.5, 2.5], [1.5, 2.5]], 0);
});

test("element types each op rejects", () => {
  assertShapeError(() => bin(sub, "pred", [true], [false]), /subtract: lhs: element type must be signed integer, unsigned integer, floating-point or complex, got pred\[1\]/);
  assertShapeError(() => bin(div, "pred", [true], [false]), /divide/);
  assertShapeError(() => bin(rem, "c64", [{ re: 1, im: 0 }], [{ re: 1, im: 0 }]), /remainder: lhs: element type must be/);
  assertShapeError(() => bin(pow, "pred", [true], [true]), /power/);
});

test("narrow float formats: computed in double, rounded once to the format", () => {
  // f8e4m3fn has no infinity: overflow gives NaN; 448 is its largest finite value.
  assertFloats(bin(add, "f8e4m3fn", [448, 1, 1], [64, 0.125, 0.0625]), [NaN, 1.125, 1]); // 1.0625 is a tie: to even
  assertFloats(bin(mul, "f8e5m2", [3], [5]), [16]); // 15 rounds to 16 with 2 mantissa bits
  assertFloats(bin(add, "f4e2m1fn", [4, 1], [3, 0.5]), [6, 1.5]); // 7 saturates to 6 (no inf, no NaN)
  assertFloats(bin(div, "f6e3m2fn", [1], [3]), [0.3125]);
  assert.equal(bin(sub, "f8e4m3fnuz", [1], [1]).toNumbers()[0], 0);
});
