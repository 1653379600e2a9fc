// BitcastConvertType and ReducePrecision: seed 000's examples, StableHLO's interpreter
// tests (bitcast_convert.mlir, reduce_precision.mlir) and hand-worked bit patterns.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ELEMENT_TYPE_NAMES, ELEMENT_TYPES, Literal, ShapeError, readElementBits, writeElementBits, XlaBuilder, arrayShape, bitcastConvertType, convertLiteral, parameter, reducePrecision,
  tupleShape, type ElementType,
} from "../../src/index.js";
import { rawData, runUnary } from "./helpers.js";
import { elementCount } from "../../src/types/shape.js";

const bitcast = (lit: Literal, to: ElementType): Literal => runUnary(lit, (x) => bitcastConvertType(x, to));
const f64Bits = (lit: Literal): bigint[] => Array.from(new BigUint64Array(lit.data.buffer, lit.data.byteOffset, lit.data.length));
const f32Bits = (lit: Literal): number[] => Array.from(new Uint32Array(lit.data.buffer, lit.data.byteOffset, lit.data.length));
const fromF64Bits = (bits: bigint[]): Literal =>
  Literal.fromStorage(arrayShape("f64", [bits.length]), new Float64Array(new BigUint64Array(bits).buffer));
const fromF32Bits = (bits: number[]): Literal =>
  Literal.fromStorage(arrayShape("f32", [bits.length]), new Float32Array(new Uint32Array(bits).buffer));

// 0x0123456789ABCDEF as 64 bits, least significant first (bitcast_convert.mlir's i1 operand).
const BITS_0123 = Array.from({ length: 64 }, (_, i) => ((0x0123456789abcdefn >> BigInt(i)) & 1n) === 1n);

test("bitcast_convert.mlir: i1[64] -> i64 packs bits least significant first", () => {
  const out = bitcast(Literal.fromValues("pred", [64], BITS_0123), "s64");
  assert.deepEqual(out.dimensions, []);
  assert.deepEqual(out.values(), [0x0123456789abcdefn]);
});

test("bitcast_convert.mlir: i64 -> f64 keeps the bits", () => {
  const out = bitcast(Literal.scalar("s64", 0x0123456789abcdefn), "f64");
  assert.deepEqual(f64Bits(out), [0x0123456789abcdefn]);
});

test("bitcast_convert.mlir: f64 -> i1[64]", () => {
  const f = Literal.fromStorage(arrayShape("f64", []), new Float64Array(new BigUint64Array([0x0123456789abcdefn]).buffer));
  const out = bitcast(f, "pred");
  assert.deepEqual(out.dimensions, [64]);
  assert.deepEqual(out.values(), BITS_0123);
});

test("bitcast_convert.mlir: c128 -> c64[2] splits real then imaginary, low half first", () => {
  const c = Literal.fromStorage(arrayShape("c128", []),
    new Float64Array(new BigUint64Array([0x0123456789abcdefn, 0x0000000011111111n]).buffer));
  const out = bitcast(c, "c64");
  assert.deepEqual(out.dimensions, [2]);
  assert.deepEqual(f32Bits(out), [0x89abcdef, 0x01234567, 0x11111111, 0x00000000]);
});

test("seed 000: f32[10] -> f16[10,2], f32[] -> f16[2], and f16[10,2] -> f32[10]", () => {
  const values = Array.from({ length: 10 }, (_, i) => i - 4.5);
  const f32 = Literal.fromValues("f32", [10], values);
  const halves = bitcast(f32, "f16");
  assert.deepEqual(halves.dimensions, [10, 2]);
  const words = f32Bits(f32);
  assert.deepEqual(rawData(halves), words.flatMap((w) => [w & 0xffff, w >>> 16]));
  const back = bitcast(halves, "f32");
  assert.deepEqual(back.dimensions, [10]);
  assert.deepEqual(back.values(), values);
  const scalar = bitcast(Literal.scalar("f32", 1), "f16"); // 0x3f800000
  assert.deepEqual(scalar.dimensions, [2]);
  assert.deepEqual(rawData(scalar), [0x0000, 0x3f80]);
  assert.deepEqual(scalar.values(), [0, 1.875]);
});

test("bitcast between types of equal width reinterprets each element", () => {
  assert.deepEqual(bitcast(Literal.from("f32", [1, -2]), "s32").values(), [0x3f800000, -0x40000000]);
  assert.deepEqual(bitcast(Literal.from("s32", [0x3f800000]), "f32").values(), [1]);
  assert.deepEqual(bitcast(Literal.from("s8", [-1, 5]), "u8").values(), [255, 5]);
  assert.deepEqual(bitcast(Literal.from("f16", [1]), "bf16").values(), [decodeBf16(0x3c00)]);
  assert.deepEqual(bitcast(Literal.from("f8e4m3fn", [448, -1]), "u8").values(), [0x7e, 0xb8]);
  assert.deepEqual(bitcast(Literal.from("f6e2m3fn", [7.5]), "f6e3m2fn").values(), [28]); // both 0x1f
  assert.deepEqual(bitcast(Literal.from("u64", [0x3ff0000000000000n]), "f64").values(), [1]);
  // A NaN payload survives a round trip through an integer type.
  const nan = fromF32Bits([0x7fc00001, 0xff800001]);
  assert.deepEqual(f32Bits(bitcast(bitcast(nan, "s32"), "f32")), [0x7fc00001, 0xff800001]);
  // f64 1.0 as c64: real part from the low word, imaginary from the high word.
  const c = bitcast(Literal.scalar("f64", 1), "c64");
  assert.deepEqual(c.values(), [{ re: 0, im: 1.875 }]);
});

function decodeBf16(bits: number): number {
  return new Float32Array(new Uint32Array([bits << 16]).buffer)[0]!;
}

test("bitcast with sub-byte types and pred: little-endian pieces", () => {
  assert.deepEqual(bitcast(Literal.scalar("u8", 0xab), "u4").values(), [0xb, 0xa]);
  assert.deepEqual(bitcast(Literal.scalar("s8", -2), "s4").values(), [-2, -1]); // 0xfe -> 0xe, 0xf
  assert.deepEqual(bitcast(Literal.from("u4", [[0x3, 0xc]]), "u8").values(), [0xc3]);
  const s2 = bitcast(Literal.scalar("s32", 0x12345678), "u2");
  assert.deepEqual(s2.dimensions, [16]);
  assert.deepEqual(s2.values(), [0, 2, 3, 1, 2, 1, 1, 1, 0, 1, 3, 0, 2, 0, 1, 0]);
  const p = Literal.fromValues("pred", [8], [true, false, false, false, false, false, false, true]);
  assert.deepEqual(bitcast(p, "u8").values(), [0x81]);
  assert.deepEqual(bitcast(p, "s8").values(), [-127]);
  assert.deepEqual(bitcast(Literal.scalar("u8", 0x81), "pred").values(), [true, false, false, false, false, false, false, true]);
  assert.deepEqual(bitcast(Literal.from("f4e2m1fn", [0.5, 6]), "u8").values(), [0x71]);
  assert.deepEqual(bitcast(Literal.scalar("u8", 0x71), "f4e2m1fn").values(), [0.5, 6]);
});

test("bitcast of a column-major argument follows the logical order", () => {
  const lit = Literal.fromValues("u8", [2, 2], [1, 2, 3, 4], { minorToMajor: [0, 1] });
  const out = bitcast(lit, "u4");
  assert.deepEqual(out.dimensions, [2, 2, 2]);
  assert.deepEqual(out.values(), [1, 0, 2, 0, 3, 0, 4, 0]);
  assert.deepEqual(bitcast(Literal.fromValues("s16", [0, 3], []), "s8").dimensions, [0, 3, 2]);
});

test("bitcast shape errors name the op and the rule", () => {
  const b = new XlaBuilder("bad");
  const f32 = parameter(b, 0, arrayShape("f32", [4]));
  assert.throws(() => bitcastConvertType(f32, "f6e2m3fn"), (e: unknown) =>
    e instanceof ShapeError && /bitcast-convert: new_element_type: .*6 does not divide 32/.test(e.message));
  const f16 = parameter(b, 1, arrayShape("f16", [10, 3]));
  assert.throws(() => bitcastConvertType(f16, "f32"), /bitcast-convert: operand: .*last dimension of size 2.*f16\[10,3\]/);
  const scalar = parameter(b, 2, arrayShape("f16", []));
  assert.throws(() => bitcastConvertType(scalar, "f32"), /last dimension of size 2/);
  const s4 = parameter(b, 3, arrayShape("s4", [3]));
  assert.throws(() => bitcastConvertType(s4, "f6e3m2fn"), /4 does not divide 6/);
  const tuple = parameter(b, 4, tupleShape([arrayShape("f32", [])]));
  assert.throws(() => bitcastConvertType(tuple, "s32"), /bitcast-convert: operand: must be an array/);
});

test("reduce_precision.mlir: f64 to e5m10", () => {
  const x = fromF64Bits([0x7ff0000000000000n, 0x7fffffffffffffffn, 0x0000000000000001n, 0n,
    0x40effc2000000000n /* 65505 */, 0x40effe0000000000n /* 65520 */]);
  assert.deepEqual(x.values().slice(4), [65505, 65520]);
  const out = runUnary(x, (op) => reducePrecision(op, 5, 10));
  assert.deepEqual(f64Bits(out), [0x7ff0000000000000n, 0x7fffffffffffffffn, 0n, 0n,
    0x40effc0000000000n /* 65504 */, 0x7ff0000000000000n]);
});

test("reduce_precision.mlir: a NaN with zero mantissa bits becomes +inf", () => {
  const out = runUnary(fromF64Bits([0x7fffffffffffffffn]), (op) => reducePrecision(op, 5, 0));
  assert.deepEqual(f64Bits(out), [0x7ff0000000000000n]);
});

test("reducePrecision on f32: rounding, overflow to inf, flush of the small format's subnormals, NaN kept", () => {
  const xs = [1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520, -65520, 2 ** -14, 2 ** -15, -(2 ** -15), 1e-40, -0, Infinity];
  const out = runUnary(Literal.fromValues("f32", [xs.length], xs), (op) => reducePrecision(op, 5, 10));
  assert.deepEqual(out.values(), [1, 1 + 2 ** -9, Infinity, -Infinity, 2 ** -14, 0, -0, 0, -0, Infinity]);
  assert.ok(Object.is(out.values()[6], -0));
  const nan = runUnary(fromF32Bits([0x7fc00001, 0xffc00000]), (op) => reducePrecision(op, 5, 10));
  assert.deepEqual(f32Bits(nan), [0x7fc00001, 0xffc00000]);
  // More bits than the type has: nothing to do.
  const same = runUnary(Literal.fromValues("f32", [3], [Math.fround(0.1), 1e-45, -3e38]), (op) => reducePrecision(op, 11, 52));
  assert.deepEqual(same.values(), [Math.fround(0.1), Math.fround(1e-45), Math.fround(-3e38)]);
  // With 0 mantissa bits a value rounds to a power of two; a tie goes to the even
  // exponent field (1.5 = 1.1b x 2^0, field 127, odd: up to 2; 3 = 1.1b x 2^1, field 128: down to 2).
  const pow2 = runUnary(Literal.fromValues("f32", [4], [1.5, 3, 1.4, 6]), (op) => reducePrecision(op, 8, 0));
  assert.deepEqual(pow2.values(), [2, 2, 1, 8]);
});

test("property: reducePrecision(f32, 8, 7) equals a round trip through bf16; (5, 10) through f16 on normals", () => {
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const xs: number[] = [];
  for (let i = 0; i < 500; i++) xs.push(Math.fround((random() - 0.5) * 2 ** (random() * 40 - 20)));
  const lit = Literal.fromValues("f32", [xs.length], xs);
  const viaBf16 = convertLiteral(convertLiteral(lit, "bf16"), "f32").values();
  assert.deepEqual(runUnary(lit, (op) => reducePrecision(op, 8, 7)).values(), viaBf16);
  const normals = xs.filter((x) => Math.abs(x) >= 2 ** -14);
  const nLit = Literal.fromValues("f32", [normals.length], normals);
  const viaF16 = convertLiteral(convertLiteral(nLit, "f16"), "f32").values();
  assert.deepEqual(runUnary(nLit, (op) => reducePrecision(op, 5, 10)).values(), viaF16);
  // f64 to (8, 23) is Math.fround on f32's normal range.
  const wide = xs.map((x) => x * (1 + random() * 2 ** -30)).filter((x) => Math.abs(x) >= 2 ** -126);
  const wLit = Literal.fromValues("f64", [wide.length], wide);
  assert.deepEqual(runUnary(wLit, (op) => reducePrecision(op, 8, 23)).values(), wide.map(Math.fround));
});

test("reducePrecision on narrow floats", () => {
  // f16 to e5m2 equals the f8e5m2 value on normals.
  const h = Literal.fromValues("f16", [4], [1.125, 1.375, 57344, 61440]);
  assert.deepEqual(runUnary(h, (op) => reducePrecision(op, 5, 2)).values(), [1, 1.5, 57344, Infinity]);
  assert.deepEqual(runUnary(Literal.from("bf16", [1.0625, 3]), (op) => reducePrecision(op, 8, 3)).values(), [1, 3]);
  // A non-IEEE type goes through f64 and back: 1.75 with 1 mantissa bit is a tie, to 2.
  assert.deepEqual(runUnary(Literal.from("f8e4m3fn", [1.75, 1.25, -0.5]), (op) => reducePrecision(op, 4, 1)).values(),
    [2, 1, -0.5]);
  assert.deepEqual(runUnary(Literal.from("f8e4m3fn", [3]), (op) => reducePrecision(op, 4, 3)).values(), [3]);
});

test("reducePrecision shape errors", () => {
  const b = new XlaBuilder("bad");
  const s = parameter(b, 0, arrayShape("s32", [2]));
  assert.throws(() => reducePrecision(s, 5, 10), /reduce-precision: operand: must have a real floating-point element type/);
  const c = parameter(b, 1, arrayShape("c64", [2]));
  assert.throws(() => reducePrecision(c, 5, 10), /real floating-point/);
  const f = parameter(b, 2, arrayShape("f32", [2]));
  assert.throws(() => reducePrecision(f, 0, 10), /reduce-precision: exponent_bits: must be an integer >= 1/);
  assert.throws(() => reducePrecision(f, 5, -1), /reduce-precision: mantissa_bits: must be a non-negative integer/);
  assert.deepEqual(reducePrecision(f, 5, 0).arrayShape.dimensions, [2]);
});

test("property: bitcast to any type of a dividing width and back restores every bit", () => {
  let seed = 99;
  const randomBits = (width: number): bigint => {
    let v = 0n;
    for (let k = 0; k < width; k += 16) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      v = (v << 16n) | BigInt(seed & 0xffff);
    }
    return BigInt.asUintN(width, v);
  };
  for (const from of ELEMENT_TYPE_NAMES) {
    for (const to of ELEMENT_TYPE_NAMES) {
      const wf = ELEMENT_TYPES[from].bitWidth;
      const wt = ELEMENT_TYPES[to].bitWidth;
      if (wf % wt !== 0 && wt % wf !== 0) continue;
      const dims = wf >= wt ? [3] : [3, wt / wf];
      const lit = Literal.zeros(arrayShape(from, dims));
      const count = elementCount(dims);
      for (let i = 0; i < count; i++) writeElementBits(from, lit.data, i, randomBits(wf));
      const there = bitcast(lit, to);
      const back = bitcast(there, from);
      for (let i = 0; i < count; i++) {
        assert.equal(readElementBits(from, back.data, i), readElementBits(from, lit.data, i), `${from} -> ${to} -> ${from}`);
      }
    }
  }
});
