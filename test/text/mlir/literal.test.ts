// Dense literals: expected texts come from MLIR's own printing (the CHECK-DENSE lines of
// the conformance suite's printing.mlir) and from hand-computed bit patterns.

import { test } from "node:test";
import assert from "node:assert/strict";
import { arrayShape, Literal, ParseError, ResourceError } from "../../../src/index.js";
import { elementTypeFromMlir, elementTypeToMlir, parseMlirLiteral, printMlirLiteral } from "../../../src/text/mlir/index.js";

const roundTrip = (text: string): string => printMlirLiteral(parseMlirLiteral(text));

test("literal: the brief's example prints in MLIR's float format", () => {
  const lit = parseMlirLiteral("dense<[1.0, 2.0]> : tensor<2xf32>");
  assert.deepEqual(lit.toNumbers(), [1, 2]);
  assert.equal(printMlirLiteral(lit), "dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>");
});

test("literal: printing.mlir's CHECK-DENSE expectations", () => {
  const cases: [string, string][] = [
    ["dense<[1, 2, -3, -4]> : tensor<4xi8>", "dense<[1, 2, -3, -4]> : tensor<4xi8>"],
    ["dense<[1.0, 2.0, -3.0, -4.0]> : tensor<4xf16>", "dense<[1.000000e+00, 2.000000e+00, -3.000000e+00, -4.000000e+00]> : tensor<4xf16>"],
    ["dense<[true, false]> : tensor<2xi1>", "dense<[true, false]> : tensor<2xi1>"],
    ["dense<1> : tensor<ui8>", "dense<1> : tensor<ui8>"],
    ["dense<[1]> : tensor<1xi8>", "dense<1> : tensor<1xi8>"],
    ["dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>", "dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>"],
    ["dense<> : tensor<0xui8>", "dense<> : tensor<0xui8>"],
    ["dense<> : tensor<2x0xi8>", "dense<> : tensor<2x0xi8>"],
    ["dense<[1, -2]> : tensor<2xi2>", "dense<[1, -2]> : tensor<2xi2>"],
    ["dense<[1.0, 2.0, -3.0, -4.0]> : tensor<4xf6E2M3FN>", "dense<[1.000000e+00, 2.000000e+00, -3.000000e+00, -4.000000e+00]> : tensor<4xf6E2M3FN>"],
    ["dense<[1.0, 2.0, -3.0, -4.0]> : tensor<4xf8E3M4>", "dense<[1.000000e+00, 2.000000e+00, -3.000000e+00, -4.000000e+00]> : tensor<4xf8E3M4>"],
    ["dense<(3.140000e+00, 1.0)> : tensor<4xcomplex<f32>>", "dense<(3.140000e+00,1.000000e+00)> : tensor<4xcomplex<f32>>"],
    ["dense<(3.140000e+00, 1.0)> : tensor<4xcomplex<f64>>", "dense<(3.140000e+00,1.000000e+00)> : tensor<4xcomplex<f64>>"],
  ];
  for (const [input, expected] of cases) assert.equal(roundTrip(input), expected, input);
});

test("literal: hex bit patterns for NaN, infinity and integers", () => {
  const f32 = parseMlirLiteral("dense<[0x7FC00000, 0xFF800000, -0.0]> : tensor<3xf32>");
  const v = f32.toNumbers();
  assert.ok(Number.isNaN(v[0]));
  assert.equal(v[1], -Infinity);
  assert.ok(Object.is(v[2], -0));
  assert.equal(printMlirLiteral(f32), "dense<[0x7FC00000, 0xFF800000, -0.000000e+00]> : tensor<3xf32>");
  assert.equal(roundTrip("dense<[0x7F80, 0xFFC0, 0x0001]> : tensor<3xbf16>"), "dense<[0x7F80, 0xFFC0, 9.183550e-41]> : tensor<3xbf16>");
  const i64 = parseMlirLiteral("dense<0x0123456789ABCDEF> : tensor<i64>");
  assert.deepEqual(i64.values(), [0x0123456789abcdefn]);
  assert.deepEqual(parseMlirLiteral("dense<18446744073709551615> : tensor<ui64>").values(), [18446744073709551615n]);
  assert.deepEqual(parseMlirLiteral("dense<[-9223372036854775808]> : tensor<1xi64>").values(), [-9223372036854775808n]);
});

test("literal: floats print exactly (shortest decimal when %e with 6 digits is not exact)", () => {
  assert.equal(roundTrip("dense<0.1> : tensor<f32>"), "dense<1.000000e-01> : tensor<f32>");
  assert.equal(roundTrip("dense<3.14159274> : tensor<f32>"), "dense<3.14159274> : tensor<f32>");
  assert.equal(roundTrip("dense<0.54030230586813977> : tensor<f64>"), "dense<0.54030230586813977> : tensor<f64>");
});

test("literal: hex blob form", () => {
  const lit = parseMlirLiteral('dense<"0x0000803F00000040"> : tensor<2xf32>');
  assert.deepEqual(lit.toNumbers(), [1, 2]);
  assert.deepEqual(parseMlirLiteral('dense<"0x0000803F"> : tensor<3xf32>').toNumbers(), [1, 1, 1]);
  assert.deepEqual(parseMlirLiteral('dense<"0xfF01"> : tensor<2xui8>').toNumbers(), [255, 1]);
  for (const bad of ['dense<"0x0G"> : tensor<1xui8>', 'dense<"0x012"> : tensor<1xui8>', 'dense<"12"> : tensor<1xui8>', 'dense<"0x0\u00e9"> : tensor<1xui8>']) {
    assert.throws(() => parseMlirLiteral(bad), (e: unknown) => e instanceof ParseError && /hex blob/.test(e.message), bad);
  }
});

test("literal: a weights-sized hex blob (4 MiB, as JAX embeds weights) parses without a stack overflow", () => {
  const n = 1 << 20;
  const words = new Uint32Array(n).map((_, i) => Math.imul(i, 2654435761) >>> 0);
  const hex = Array.from(new Uint8Array(words.buffer), (b) => b.toString(16).padStart(2, "0")).join("");
  const lit = parseMlirLiteral(`dense<"0x${hex}"> : tensor<${n}xui32>`);
  const got = lit.toNumbers();
  for (const i of [0, 1, 12345, n - 1]) assert.equal(got[i], words[i]);
  // A splat over many elements fills them all.
  assert.ok(parseMlirLiteral(`dense<"0x0000C03F"> : tensor<${n}xf32>`).toNumbers().every((v) => v === 1.5));
});

test("literal: a large literal prints element by element, in nested brackets, as one string", () => {
  // 2,000,000 i8 digits 0..9 in a [1000, 2000] array: each row is "[d, d, ..., d]", rows
  // joined by ", ", so the length is known without printing: 7 + rows * (2 * 2000 - 2 + 2)
  // + 2 * (rows - 1) + 1 ("dense<[" ... "]>" less one) — checked with the ends below.
  const rows = 1000, cols = 2000;
  const values = new Int8Array(rows * cols).map((_, i) => i % 10);
  const text = printMlirLiteral(Literal.fromValues("s8", [rows, cols], values));
  const body = `[${Array.from({ length: rows }, (_, r) => `[${Array.from({ length: cols }, (_, c) => (r * cols + c) % 10).join(", ")}]`).join(", ")}]`;
  assert.equal(text, `dense<${body}> : tensor<${rows}x${cols}xi8>`);
  assert.equal(text.length, "dense<".length + 2 + rows * (2 + cols + 2 * (cols - 1)) + 2 * (rows - 1) + "> : tensor<1000x2000xi8>".length);
  // A splat of the same size is one element.
  assert.equal(printMlirLiteral(Literal.fromValues("s8", [rows, cols], new Int8Array(rows * cols).fill(-3))), "dense<-3> : tensor<1000x2000xi8>");
});

test("literal: a literal whose text cannot be one JavaScript string is a ResourceError, not a heap abort", () => {
  // 179,000,000 elements need at least 3 characters each (a digit and ", "): past V8's
  // longest string (2^29 - 24). It is refused before any element is formatted.
  const n = 179_000_000;
  const values = new Int8Array(n);
  values[n - 1] = 1; // not a splat
  const literal = Literal.fromStorage(arrayShape("s8", [n]), values);
  const started = Date.now();
  assert.throws(() => printMlirLiteral(literal),
    (e: unknown) => e instanceof ResourceError && /longest string/.test(e.message) && /\.npy/.test(e.message));
  assert.ok(Date.now() - started < 20_000, "refused without formatting every element");
});

test("literal: errors are ParseErrors with a position", () => {
  for (const bad of [
    "dense<128> : tensor<i8>", "dense<[1, 2, 3]> : tensor<2xi32>", "dense<[1.5]> : tensor<1xi32>",
    "dense<[1, 2> : tensor<2xi32>", "dense<1> : tensor<2xq7>", "dense<> : tensor<1xf32>",
  ]) {
    assert.throws(() => parseMlirLiteral(bad), (e: unknown) => e instanceof ParseError && e.line === 1 && e.column > 0, bad);
  }
});

test("element types: every MLIR spelling maps to its HLO name and back", () => {
  const pairs: [string, string][] = [
    ["i1", "pred"], ["i2", "s2"], ["i4", "s4"], ["i8", "s8"], ["i16", "s16"], ["i32", "s32"], ["i64", "s64"],
    ["ui2", "u2"], ["ui4", "u4"], ["ui8", "u8"], ["ui16", "u16"], ["ui32", "u32"], ["ui64", "u64"],
    ["f16", "f16"], ["bf16", "bf16"], ["f32", "f32"], ["f64", "f64"], ["f8E4M3FN", "f8e4m3fn"], ["f8E5M2", "f8e5m2"],
    ["f8E4M3FNUZ", "f8e4m3fnuz"], ["f8E5M2FNUZ", "f8e5m2fnuz"], ["f8E4M3B11FNUZ", "f8e4m3b11fnuz"], ["f8E3M4", "f8e3m4"],
    ["f8E4M3", "f8e4m3"], ["f8E8M0FNU", "f8e8m0fnu"], ["f6E2M3FN", "f6e2m3fn"], ["f6E3M2FN", "f6e3m2fn"], ["f4E2M1FN", "f4e2m1fn"],
  ];
  for (const [mlir, hlo] of pairs) {
    assert.equal(elementTypeFromMlir(mlir), hlo);
    assert.equal(elementTypeToMlir(hlo as never), mlir);
  }
  assert.equal(elementTypeFromMlir("si8"), "s8");
  assert.equal(elementTypeToMlir("c64"), "complex<f32>");
  assert.equal(elementTypeToMlir("c128"), "complex<f64>");
});
