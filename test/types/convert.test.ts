// ConvertElementType: seed 000's example, StableHLO's interpreter tests (convert.mlir),
// and XLA's rules for every kind of pair, with values worked out by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ELEMENT_TYPE_NAMES, ELEMENT_TYPES, Literal, ShapeError, XlaBuilder, constantLiteral, convertElementType, convertLiteral,
  convertScalar, decodeFloatBits, parameter, arrayShape, type ElementType, type Scalar,
} from "../../src/index.js";
import { evaluate, runEach } from "../support/backend.js";
import { rawData, runUnary } from "./helpers.js";

const convert = (t: ElementType, values: Scalar[], to: ElementType): Scalar[] =>
  runUnary(Literal.fromValues(t, [values.length], values), (x) => convertElementType(x, to)).values();

test("seed 000: convert s32 {0, 1, 2} to f32", () => {
  const b = new XlaBuilder("seed");
  const a = constantLiteral(b, Literal.from("s32", [0, 1, 2]));
  const out = evaluate(b.build(convertElementType(a, "f32")), []);
  assert.equal(out.elementType, "f32");
  assert.deepEqual(out.values(), [0, 1, 2]);
});

test("convert.mlir: pred to every kind", () => {
  assert.deepEqual(convert("pred", [true, false], "pred"), [true, false]);
  assert.deepEqual(convert("pred", [true, false], "s64"), [1n, 0n]);
  assert.deepEqual(convert("pred", [true, false], "u64"), [1n, 0n]);
  assert.deepEqual(convert("pred", [true, false], "f64"), [1, 0]);
  assert.deepEqual(convert("pred", [true, false], "c128"), [{ re: 1, im: 0 }, { re: 0, im: 0 }]);
});

test("convert.mlir: integers to every kind", () => {
  assert.deepEqual(convert("s64", [-1n, 0n, 1n], "pred"), [true, false, true]);
  assert.deepEqual(convert("s64", [-1n, 0n, 1n], "s64"), [-1n, 0n, 1n]);
  assert.deepEqual(convert("s4", [0, 1], "u64"), [0n, 1n]);
  assert.deepEqual(convert("s64", [-1n, 0n, 1n], "f64"), [-1, 0, 1]);
  assert.deepEqual(convert("s4", [-1, 0, 1], "c128"), [{ re: -1, im: 0 }, { re: 0, im: 0 }, { re: 1, im: 0 }]);
  assert.deepEqual(convert("u64", [0n, 1n], "pred"), [false, true]);
  assert.deepEqual(convert("u64", [0n, 1n], "s64"), [0n, 1n]);
  assert.deepEqual(convert("u4", [0, 1], "u64"), [0n, 1n]);
  assert.deepEqual(convert("u64", [0n, 1n], "f64"), [0, 1]);
  assert.deepEqual(convert("u4", [0, 1], "c128"), [{ re: 0, im: 0 }, { re: 1, im: 0 }]);
});

test("convert.mlir: f64 and c128 to every kind", () => {
  assert.deepEqual(convert("f64", [-1, 0, 1], "pred"), [true, false, true]);
  assert.deepEqual(convert("f64", [-1, 0, 1], "s64"), [-1n, 0n, 1n]);
  assert.deepEqual(convert("f64", [0, 1], "u64"), [0n, 1n]);
  assert.deepEqual(convert("f64", [-1, 0, 1], "f64"), [-1, 0, 1]);
  assert.deepEqual(convert("f64", [-1, 0, 1], "c128"), [{ re: -1, im: 0 }, { re: 0, im: 0 }, { re: 1, im: 0 }]);
  const c = [{ re: -1, im: 0 }, { re: 0, im: 1 }, { re: 1, im: 0 }];
  assert.deepEqual(convert("c128", c, "pred"), [true, false, true]);
  assert.deepEqual(convert("c128", c, "s64"), [-1n, 0n, 1n]);
  assert.deepEqual(convert("c128", [{ re: 0, im: 1 }, { re: 1, im: 0 }], "u64"), [0n, 1n]);
  assert.deepEqual(convert("c128", c, "f64"), [-1, 0, 1]);
  assert.deepEqual(convert("c128", c, "c128"), c);
});

test("float to integer: truncates toward zero, saturates, NaN is 0", () => {
  const xs = [2.9, -2.9, -0.5, 0.5, NaN, Infinity, -Infinity, 1e10, -1e10, -0];
  assert.deepEqual(convert("f32", xs, "s32"), [2, -2, 0, 0, 0, 2147483647, -2147483648, 2147483647, -2147483648, 0]);
  assert.deepEqual(convert("f32", xs, "u8"), [2, 0, 0, 0, 0, 255, 0, 255, 0, 0]);
  assert.deepEqual(convert("f64", xs, "s8"), [2, -2, 0, 0, 0, 127, -128, 127, -128, 0]);
  assert.deepEqual(convert("f64", xs, "s4"), [2, -2, 0, 0, 0, 7, -8, 7, -8, 0]);
  assert.deepEqual(convert("f64", xs, "u2"), [2, 0, 0, 0, 0, 3, 0, 3, 0, 0]);
  assert.deepEqual(convert("f64", [1e19, -1e19, NaN, 9007199254740993, -9223372036854775808], "s64"),
    [9223372036854775807n, -9223372036854775808n, 0n, 9007199254740992n, -9223372036854775808n]);
  assert.deepEqual(convert("f64", [2 ** 64, 2 ** 64 - 2048, -1, 1.5], "u64"),
    [18446744073709551615n, 18446744073709549568n, 0n, 1n]);
  assert.deepEqual(convert("f8e4m3fn", [448, -448, NaN], "s8"), [127, -128, 0]);
  assert.deepEqual(convert("bf16", [-Infinity, 3.5], "u8"), [0, 3]);
  assert.deepEqual(convert("f4e2m1fn", [6, -6, 1.5], "u4"), [6, 0, 1]);
  assert.deepEqual(convert("c64", [{ re: 2.7, im: 9 }, { re: -2.7, im: 0 }], "s32"), [2, -2]);
});

test("integer to integer: two's complement wrap, including 2- and 4-bit types", () => {
  assert.deepEqual(convert("s32", [300, -129, 127, -1], "s8"), [44, 127, 127, -1]);
  assert.deepEqual(convert("s32", [-1, 256, 255], "u8"), [255, 0, 255]);
  assert.deepEqual(convert("s32", [-1], "u32"), [4294967295]);
  assert.deepEqual(convert("u32", [4294967295], "s32"), [-1]);
  assert.deepEqual(convert("s32", [7, 5, 9, -9], "s4"), [7, 5, -7, 7]);
  assert.deepEqual(convert("s32", [7, 2, 3, -3], "s2"), [-1, -2, -1, 1]);
  assert.deepEqual(convert("s8", [-1, 17], "u4"), [15, 1]);
  assert.deepEqual(convert("s8", [-1, 6], "u2"), [3, 2]);
  assert.deepEqual(convert("u64", [18446744073709551615n, 0x100000005n], "s64"), [-1n, 4294967301n]);
  assert.deepEqual(convert("u64", [0x100000005n, 0xffffffffffn], "s32"), [5, -1]);
  assert.deepEqual(convert("s64", [-1n], "u8"), [255]);
  assert.deepEqual(convert("s64", [-1n], "u64"), [18446744073709551615n]);
  assert.deepEqual(convert("s4", [-8, -1], "s64"), [-8n, -1n]);
  assert.deepEqual(convert("u4", [15], "s64"), [15n]);
});

test("64-bit integers never pass through doubles when the target is an integer", () => {
  const big = 9007199254740993n; // 2^53 + 1: not a double
  assert.deepEqual(convert("s64", [big, -big], "u64"), [big, 18446744073709551615n - big + 1n]);
  assert.deepEqual(convert("u64", [big], "s64"), [big]);
  assert.deepEqual(convert("s64", [big], "s64"), [big]);
});

test("integer to float: one correct rounding to nearest even, even for 64-bit sources", () => {
  assert.deepEqual(convert("s32", [16777217, 16777219, -16777217], "f32"), [16777216, 16777220, -16777216]);
  assert.deepEqual(convert("s32", [257, 259, 65535], "bf16"), [256, 260, 65536]);
  assert.deepEqual(convert("s32", [65519, 65520, -70000], "f16"), [65504, Infinity, -Infinity]);
  // 2^60 + 2^36 + 1 is just above the midpoint between two f32 values (spacing 2^37);
  // rounding it to a double first would land exactly on the midpoint and then round down.
  const v = (1n << 60n) + (1n << 36n) + 1n;
  assert.deepEqual(convert("s64", [v, -v], "f32"), [2 ** 60 + 2 ** 37, -(2 ** 60 + 2 ** 37)]);
  assert.deepEqual(convert("u64", [v], "bf16"), [2 ** 60]);
  assert.deepEqual(convert("u64", [(1n << 60n) + (1n << 52n) + 1n], "bf16"), [2 ** 60 + 2 ** 53]);
  assert.deepEqual(convert("u64", [18446744073709551615n], "f64"), [2 ** 64]);
  assert.deepEqual(convert("u64", [18446744073709551615n], "f16"), [Infinity]);
  assert.deepEqual(convert("s64", [-9223372036854775808n], "bf16"), [-(2 ** 63)]);
  assert.deepEqual(convert("s32", [1000, 17, 0], "f8e4m3fn").map(Number), [NaN, 16, 0]);
  assert.deepEqual(convert("s32", [7, -9], "f4e2m1fn"), [6, -6]);
  assert.deepEqual(convert("u8", [0, 3, 6], "f8e8m0fnu"), [NaN, 2, 8]);
});

test("float to float: target rounding and special values", () => {
  assert.deepEqual(convert("f64", [1 + 2 ** -24, 1 + 3 * 2 ** -24, 1e39, 1e-46], "f32"), [1, 1 + 2 ** -22, Infinity, 0]);
  // Straight to bf16: through f32 first, 1 + 2^-8 + 2^-40 would become the tie 1 + 2^-8 and round to 1.
  assert.deepEqual(convert("f64", [1 + 2 ** -8 + 2 ** -40], "bf16"), [1 + 2 ** -7]);
  assert.deepEqual(convert("f32", [70000, -70000, 2 ** -25], "f16"), [Infinity, -Infinity, 0]);
  assert.deepEqual(convert("f16", [65504], "f8e5m2"), [Infinity]);
  assert.deepEqual(convert("f8e4m3fn", [448, -0], "f8e5m2"), [448, -0]);
  assert.deepEqual(convert("f8e5m2", [57344, -Infinity], "f8e4m3fn").map(Number.isNaN), [true, true]);
  assert.deepEqual(convert("f8e5m2", [Infinity, 57344], "f6e3m2fn"), [28, 28]);
  assert.deepEqual(convert("f32", [-0], "f8e4m3fnuz"), [0]);
  assert.ok(Object.is(convert("f32", [-0], "f8e4m3fnuz")[0], 0));
  assert.deepEqual(convert("f8e8m0fnu", [2 ** -127, 2 ** 127], "f32"), [2 ** -127, 2 ** 127]);
  assert.deepEqual(convert("f4e2m1fn", [6, -0.5], "f16"), [6, -0.5]);
});

test("a negative integer beyond f8e4m3fn's range converts to its negative NaN (0xff, as ml_dtypes)", () => {
  // 448 is the largest finite value; 464, halfway to the NaN pattern's 480, ties to 448's even
  // significand; beyond it the value overflows to NaN with the integer's sign.
  for (const t of ["s16", "s32", "s64"] as const) {
    const values = [-1000, 1000, -465, -464, -500, 464].map((v) => (t === "s64" ? BigInt(v) : v));
    const out = runUnary(Literal.fromValues(t, [values.length], values), (x) => convertElementType(x, "f8e4m3fn"));
    assert.deepEqual(rawData(out), [0xff, 0x7f, 0xff, 0xfe, 0xff, 0x7e], t);
  }
});

test("NaN signs survive a conversion (f32 -NaN to f8e4m3fn is 0xff)", () => {
  const negNaN = new Float32Array(new Uint32Array([0xffc00000, 0x7fc00000]).buffer);
  const src = Literal.fromStorage(arrayShape("f32", [2]), negNaN);
  assert.deepEqual(rawData(convertLiteral(src, "f8e4m3fn")), [0xff, 0x7f]);
  assert.deepEqual(rawData(convertLiteral(src, "f16")), [0xfe00, 0x7e00]);
  assert.deepEqual(rawData(convertLiteral(src, "f6e2m3fn")), [0x20, 0x20]);
  const back = convertLiteral(convertLiteral(src, "bf16"), "f32");
  assert.deepEqual(Array.from(new Uint32Array(back.data.buffer)), [0xffc00000, 0x7fc00000]);
  // fnuz has one NaN (0x80) with its sign bit set: converting it out gives -NaN, as ml_dtypes does.
  const fnuzNaN = Literal.fromStorage(arrayShape("f8e4m3fnuz", [1]), new Uint8Array([0x80]));
  assert.deepEqual(Array.from(new Uint32Array(convertLiteral(fnuzNaN, "f32").data.buffer)), [0xffc00000]);
});

test("complex conversions", () => {
  assert.deepEqual(convert("c64", [{ re: 1.5, im: -2 }], "c128"), [{ re: 1.5, im: -2 }]);
  assert.deepEqual(convert("c128", [{ re: 1 + 2 ** -30, im: 1e39 }], "c64"), [{ re: 1, im: Infinity }]);
  assert.deepEqual(convert("f16", [0.5], "c64"), [{ re: 0.5, im: 0 }]);
  assert.deepEqual(convert("c128", [{ re: 3.75, im: 1 }], "f8e4m3fn"), [3.75]);
  assert.deepEqual(convert("s64", [9007199254740993n], "c128"), [{ re: 9007199254740992, im: 0 }]);
  assert.deepEqual(convert("c64", [{ re: 0, im: 0 }, { re: NaN, im: 0 }], "pred"), [false, true]);
});

test("pred targets: nonzero is true, NaN is true, -0 is false", () => {
  assert.deepEqual(convert("f32", [NaN, -0, 0.1, -Infinity], "pred"), [true, false, true, true]);
  assert.deepEqual(convert("s8", [2, 0, -128], "pred"), [true, false, true]);
  assert.deepEqual(convert("f8e4m3fnuz", [0, 1], "pred"), [false, true]);
  assert.deepEqual(convert("pred", [true], "f8e4m3fn"), [1]);
  assert.ok(Number.isNaN(convert("pred", [false], "f8e8m0fnu")[0] as number)); // e8m0 has no zero
});

test("convertScalar is usable on its own", () => {
  assert.equal(convertScalar(3.7, "f32", "s32"), 3);
  assert.equal(convertScalar(-1n, "s64", "u16"), 65535);
  assert.equal(convertScalar(true, "pred", "s64"), 1n);
  assert.equal(convertScalar(1 + 2 ** -11, "f32", "f16"), 1);
});

test("convertLiteral keeps a non-default layout and works on rank 0 and empty arrays", () => {
  const col = Literal.fromValues("s32", [2, 3], [1, 2, 3, 4, 5, 6], { minorToMajor: [0, 1] });
  const f = convertLiteral(col, "f32");
  assert.deepEqual(f.arrayShape.layout.minorToMajor, [0, 1]);
  assert.deepEqual(f.values(), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(runUnary(Literal.scalar("f64", -7.9), (x) => convertElementType(x, "s16")).values(), [-7]);
  const empty = runUnary(Literal.fromValues("f32", [0, 3], []), (x) => convertElementType(x, "u64"));
  assert.deepEqual(empty.dimensions, [0, 3]);
  assert.equal(empty.elementType, "u64");
});

test("property: every pair of element types converts, and the result has the inferred shape", () => {
  const samples: Record<string, Scalar[]> = {};
  for (const t of ELEMENT_TYPE_NAMES) {
    // Written through the literal, so each value is first brought into the type's range.
    const raw: Scalar[] =
      t === "pred" ? [false, true, false, true]
      : t === "s64" || t === "u64" ? [3n, 0n, 7n, 9007199254740993n]
      : t === "c64" || t === "c128" ? [{ re: -1.5, im: 2 }, { re: 0, im: 1 }, { re: 3.25, im: -0 }, { re: NaN, im: 0 }]
      : [-4.25, -1, 1.75, 7];
    samples[t] = Literal.fromValues(t, [2, 2], raw).values();
  }
  const pairs = ELEMENT_TYPE_NAMES.flatMap((from) => ELEMENT_TYPE_NAMES.map((to) => ({ from, to })));
  runEach(pairs, ({ from, to }) => ({ build: (x) => convertElementType(x, to), args: [Literal.fromValues(from, [2, 2], samples[from]!)] }), ({ from, to }, out) => {
    assert.equal(out.elementType, to);
    // Agrees with the scalar function, element by element.
    const expected = samples[from]!.map((v) => convertScalar(v, from, to));
    out.values().forEach((v, i) => {
      const e = expected[i]!;
      if (typeof v === "number" && Number.isNaN(v)) assert.ok(Number.isNaN(e as number), `${from}->${to}`);
      else assert.deepEqual(v, e, `${from}->${to} element ${i}`);
    });
  });
});

test("property: a float converted to a wider float and back is unchanged", () => {
  const chains: [ElementType, ElementType][] = [
    ["f8e4m3fn", "f16"], ["f8e5m2", "f16"], ["f8e4m3fnuz", "bf16"], ["f8e5m2fnuz", "f32"], ["f8e4m3b11fnuz", "f16"],
    ["f8e3m4", "f16"], ["f8e4m3", "bf16"], ["f8e8m0fnu", "f32"], ["f6e2m3fn", "f8e4m3fn"], ["f6e3m2fn", "f8e5m2"],
    ["f4e2m1fn", "f6e2m3fn"], ["f16", "f32"], ["bf16", "f32"], ["f32", "f64"],
  ];
  for (const [narrow, wide] of chains) {
    if (narrow === "f32") continue; // f32 → f64 → f32 is Math.fround of an f32: trivially exact
    const n = 2 ** ELEMENT_TYPES[narrow].bitWidth;
    const bits = Array.from({ length: n }, (_, i) => i);
    const storage = narrow === "f16" || narrow === "bf16" ? new Uint16Array(bits) : new Uint8Array(bits);
    const lit = Literal.fromStorage(arrayShape(narrow, [n]), storage);
    const back = convertLiteral(convertLiteral(lit, wide), narrow);
    for (let i = 0; i < n; i++) {
      const v = decodeFloatBits(narrow, i);
      if (Number.isNaN(v)) assert.ok(Number.isNaN(back.readLinear(i) as number), `${narrow} ${i}`);
      else assert.equal(back.data[i], i, `${narrow} pattern ${i} via ${wide}`);
    }
  }
});

test("shape inference: convert rejects tuples, tokens and unknown types", () => {
  const b = new XlaBuilder("bad");
  const p = parameter(b, 0, arrayShape("f32", [2]));
  assert.throws(() => convertElementType(p, "f17" as ElementType), (e: unknown) =>
    e instanceof ShapeError && /convert: new_element_type: "f17" is not an element type/.test(e.message));
  const tok = parameter(b, 1, { kind: "token" });
  assert.throws(() => convertElementType(tok, "f32"), /convert: operand: must be an array/);
  const shape = convertElementType(p, "s4").arrayShape;
  assert.deepEqual([shape.elementType, shape.dimensions], ["s4", [2]]);
});
