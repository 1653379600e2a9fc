// The 8-, 6- and 4-bit floats on the WebGPU backend (webgpu/wgsl_narrow_float.ts: held
// as bit patterns, decoded exactly on bits, computed in f32 or, ÷, on integers, rounded
// to the format on bits with the literal codec's rules) against the interpreter, bit for
// bit: for every format, every pair of patterns through +, -, ×, ÷, remainder, maximum
// and the compares (IEEE and total order); every pattern through the exact unary ops and
// the converts to f32, f16, bf16, integers, pred and the two byte floats beside it in
// the type list (a byte float to another is its decode, checked exhaustively to f32,
// then its rounding, checked from f32); every f16 and bf16 pattern, f32 patterns at every
// rounding threshold of the format (ties, overflow, underflow, NaN signs, f32
// subnormals) and integers to each format. f8e8m0fnu's
// arithmetic beyond what is exact on bits stays on the host, saying why. Each program is
// checked to run with no host step, so that a fallback fails the test. The math
// functions are compared within one ulp of the format (f32's approximations, rounded).
// And an f8 dot whose epilogue converts an f8 bias: the GEMM's operands and the
// epilogue's values widen through one definition of the format's function.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { XlaBuilder, parameter, binaryOp, unaryOp, compare, convertElementType, tuple, add, dotGeneral, reducePrecision } from "../../../src/index.js";
import type { XlaOp } from "../../../src/builder/xla_builder.js";
import type { BinaryOpcode, UnaryOpcode } from "../../../src/ir/opcodes.js";
import { ELEMENT_TYPES, ELEMENT_TYPE_NAMES, type ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { decodeFloatBits } from "../../../src/types/float_codec.js";
import { arrayShape } from "../../../src/types/shape.js";
import { compareLeaf, type CompareTally } from "../../../tools/fuzz/compare_compiled.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const BYTE_FLOATS = ELEMENT_TYPE_NAMES.filter((t) => ELEMENT_TYPES[t].kind === "float" && ELEMENT_TYPES[t].bitWidth <= 8);

/** A rank-1 literal of type t from its stored values (patterns for the floats held as bits). */
const stored = (t: ElementType, data: ArrayLike<number>): Literal => {
  const lit = Literal.zeros(arrayShape(t, [data.length]));
  for (let i = 0; i < data.length; i++) lit.data[i] = data[i]!;
  return lit;
};

/** The first element where two literals' stored bits differ (an f32 NaN compared as a NaN: the interpreter's f32 values carry no payload), or undefined. */
function bitDifference(want: Literal, got: Literal, inputs: readonly Literal[]): string | undefined {
  const [w, g] = [want.data, got.data];
  if (w.length !== g.length) return `${w.length} elements expected, ${g.length} got`;
  const f32 = want.elementType === "f32";
  for (let i = 0; i < w.length; i++) {
    if (f32 && Number.isNaN(w[i] as number) && Number.isNaN(g[i] as number)) continue;
    if (!Object.is(w[i], g[i])) {
      const operands = inputs.map((x) => `0x${Number(x.data[i % x.data.length]).toString(16)}`).join(", ");
      return `element ${i} (operands ${operands}): expected ${String(w[i])} (${want.readLinear(i)}), got ${String(g[i])} (${got.readLinear(i)})`;
    }
  }
  return undefined;
}

/** Runs the named results of a program on both sides and checks each bit for bit, and that nothing ran on the host. */
async function checkExact(what: string, b: XlaBuilder, entries: readonly [string, XlaOp][], args: readonly Literal[]): Promise<void> {
  const { want, got, exe } = await both(b.build(tuple(b, entries.map((e) => e[1]))), args);
  assert.deepEqual(exe.stats.interpreted, [], `${what}: everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
  entries.forEach(([name], k) => assert.equal(bitDifference(want.elements[k]!, got.elements[k]!, args), undefined, `${what} ${name}`));
}

const isE8m0 = (t: ElementType): boolean => ELEMENT_TYPES[t].float!.encoding === "e8m0";
const ARITHMETIC: readonly BinaryOpcode[] = ["add", "subtract", "multiply", "divide", "remainder"];
// minimum is maximum's code with the other key compare.
const EXACT_ON_BITS: readonly BinaryOpcode[] = ["maximum"];
const UNARY_EXACT_ON_BITS: readonly UnaryOpcode[] = ["negate", "abs", "floor", "ceil", "roundNearestEven", "roundNearestAfz", "sign", "isFinite"];

BYTE_FLOATS.forEach((t, index) => {
  const n = 2 ** ELEMENT_TYPES[t].bitWidth;
  test(`${t}: every pair of patterns through ${isE8m0(t) ? "" : "+, -, ×, ÷, remainder, "}maximum and the compares; every pattern through the unary ops and the converts; bit for bit, no host step`, { skip }, async () => {
    // Pairs (x, y): x runs fastest, so every pattern meets every other.
    const pairs = n * n;
    const xs = stored(t, Uint8Array.from({ length: pairs }, (_, k) => k % n));
    const ys = stored(t, Uint8Array.from({ length: pairs }, (_, k) => Math.floor(k / n)));
    const b = new XlaBuilder(`${t}_pairs`);
    const x = parameter(b, 0, arrayShape(t, [pairs]), "x");
    const y = parameter(b, 1, arrayShape(t, [pairs]), "y");
    await checkExact(t, b, [
      ...[...(isE8m0(t) ? [] : ARITHMETIC), ...EXACT_ON_BITS].map((op): [string, XlaOp] => [op, binaryOp(op, x, y)]),
      ...(["EQ", "NE", "LT", "GE"] as const).map((d): [string, XlaOp] => [d, compare(x, y, d)]),
      ["LT total order", compare(x, y, "LT", { compareType: "TOTALORDER" })],
    ], [xs, ys]);

    const c = new XlaBuilder(`${t}_unary`);
    const v = parameter(c, 0, arrayShape(t, [n]), "v");
    const beside = [BYTE_FLOATS[(index + 1) % BYTE_FLOATS.length]!, BYTE_FLOATS[(index + BYTE_FLOATS.length - 1) % BYTE_FLOATS.length]!];
    const targets = [...beside, "f32", "f16", "bf16", "s32", "u8", "s64", "pred"] as ElementType[];
    await checkExact(t, c, [
      ...[...UNARY_EXACT_ON_BITS, ...(isE8m0(t) ? [] : ["sqrt", "rsqrt"] as const)].map((op): [string, XlaOp] => [op, unaryOp(op, v)]),
      ...targets.map((to): [string, XlaOp] => [`to ${to}`, convertElementType(v, to)]),
    ], [stored(t, Uint8Array.from({ length: n }, (_, k) => k))]);
  });
});

test("reduce-precision of every byte float pattern (e8m0 aside) to narrower, equal and wider formats: the IEEE-layout f8s on their bits, the others through f32, bit for bit, no host step", { skip }, async () => {
  // (exponent, mantissa) bits: fewer of both (rounding ties, carries into the exponent, overflow to ±inf, flushes), fewer mantissa bits only (0: a NaN becomes +inf), fewer exponent bits only, f32's and f64's.
  const formats: readonly (readonly [number, number])[] = [[2, 1], [3, 0], [4, 1], [5, 2], [2, 5], [1, 3], [8, 23], [11, 52]];
  for (const t of BYTE_FLOATS.filter((t) => !isE8m0(t))) {
    const n = 2 ** ELEMENT_TYPES[t].bitWidth;
    const b = new XlaBuilder(`${t}_reduce_precision`);
    const v = parameter(b, 0, arrayShape(t, [n]), "v");
    await checkExact(t, b, formats.map(([e, m]): [string, XlaOp] => [`reduce-precision to e${e}m${m}`, reducePrecision(v, e, m)]), [stored(t, Uint8Array.from({ length: n }, (_, k) => k))]);
  }
});

test("f8e8m0fnu: its arithmetic stays on the host, saying why", { skip }, async () => {
  const b = new XlaBuilder("e8m0_add");
  const x = parameter(b, 0, arrayShape("f8e8m0fnu", [4]), "x");
  const args = [stored("f8e8m0fnu", [0, 1, 127, 254])];
  const { want, got, exe } = await both(b.build(binaryOp("add", x, x)), args);
  assert.deepEqual(exe.stats.interpreted.map((s) => s.why.includes("f8e8m0fnu") && /2\^-127/.test(s.why)), [true]);
  assert.equal(bitDifference(want, got, args), undefined);
});

/**
 * f32 patterns at format t's rounding thresholds: each value of t, each midpoint between
 * neighbours and the overflow threshold, and their f32 neighbours, both signs; zero, the
 * f32 subnormals, infinities and NaNs of both signs; then random patterns.
 */
function f32Thresholds(t: ElementType): Uint32Array {
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  const patternOf = (v: number): number => ((f[0] = v), bits[0]!);
  const values = [...new Set(Array.from({ length: 2 ** ELEMENT_TYPES[t].bitWidth }, (_, k) => Math.abs(decodeFloatBits(t, k))).filter(Number.isFinite))].sort((p, q) => p - q);
  const points = [...values, ...values.slice(1).map((v, i) => (v + values[i]!) / 2)];
  const top = values[values.length - 1]!;
  points.push(top + (top - values[values.length - 2]!) / 2, 2 ** -149, 2 ** -127, 2 ** -126, 3 * 2 ** -128);
  const out: number[] = [];
  for (const p of points) for (let d = -1; d <= 1; d++) { const q = (patternOf(p) + d) >>> 0; out.push(q, (q | 0x80000000) >>> 0); }
  out.push(0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7f800000, 0xff800000, 0, 0x80000000, 1, 0x80000001, 0x007fffff);
  const random = rng(23);
  while (out.length < 4096) out.push(Math.floor(random() * 2 ** 32) >>> 0);
  return Uint32Array.from(out);
}

test("f32, f16, bf16 and integers to every byte float: one rounding to nearest even, the codec's overflow, underflow and NaN rules (f16 and bf16: every pattern)", { skip }, async () => {
  const halves = Uint16Array.from({ length: 65536 }, (_, k) => k);
  const ints = Int32Array.from([0, 1, -1, 2, 3, 5, 6, 7, 9, 17, 19, 448, 464, 480, 57344, 61440, 65535, -57344, -61441, 2 ** 31 - 1, -(2 ** 31), 0x01010101, 0x7fffff81]);
  const uints = Uint32Array.from([0, 1, 3, 0xffffffff, 0x80000001, 240, 248, 256, 272, 15, 17]);
  for (const t of BYTE_FLOATS) {
    const edges = f32Thresholds(t);
    const b = new XlaBuilder(`to_${t}`);
    const x = parameter(b, 0, arrayShape("f32", [edges.length]), "x");
    const h = parameter(b, 1, arrayShape("f16", [65536]), "h");
    const g = parameter(b, 2, arrayShape("bf16", [65536]), "g");
    const i = parameter(b, 3, arrayShape("s32", [ints.length]), "i");
    const u = parameter(b, 4, arrayShape("u32", [uints.length]), "u");
    const args = [stored("f32", new Float32Array(edges.buffer)), stored("f16", halves), stored("bf16", halves), stored("s32", ints), stored("u32", uints)];
    const { want, got, exe } = await both(b.build(tuple(b, [x, h, g, i, u].map((v) => convertElementType(v, t)))), args);
    assert.deepEqual(exe.stats.interpreted, [], `${t}: everything compiles`);
    ["f32", "f16", "bf16", "s32", "u32"].forEach((from, k) => assert.equal(bitDifference(want.elements[k]!, got.elements[k]!, [args[k]!]), undefined, `${from} -> ${t}`));
  }
});

test("byte float math functions: f32's approximations rounded to the format, within one ulp of it", { skip }, async () => {
  const names: readonly UnaryOpcode[] = ["exp", "log", "tanh", "logistic", "sin"];
  for (const t of BYTE_FLOATS.filter((u) => !isE8m0(u))) {
    const n = 2 ** ELEMENT_TYPES[t].bitWidth;
    const b = new XlaBuilder(`${t}_math`);
    const x = parameter(b, 0, arrayShape(t, [n]), "x");
    const { want, got, exe } = await both(b.build(tuple(b, names.map((op) => unaryOp(op, x)))), [stored(t, Uint8Array.from({ length: n }, (_, k) => k))]);
    assert.deepEqual(exe.stats.interpreted, [], `${t}: everything compiles`);
    names.forEach((name, k) => {
      const tally: CompareTally = { compared: 0, unbounded: 0 };
      assert.equal(compareLeaf(t, { cls: "ulp", ulps: 1, eps: 0 }, want.elements[k]!.values(), got.elements[k]!.values(), tally), undefined, `${t} ${name}`);
    });
  }
});

test("an f8 dot whose epilogue converts an f8 bias: one kernel, the format's widening defined once (the GEMM's and the epilogue's), bit for bit", { skip }, async () => {
  const t: ElementType = "f8e4m3fn";
  const b = new XlaBuilder("f8_dot_bias");
  const x = parameter(b, 0, arrayShape(t, [16, 32]), "x");
  const w = parameter(b, 1, arrayShape(t, [32, 24]), "w");
  const bias = parameter(b, 2, arrayShape(t, [16, 24]), "bias");
  const d = dotGeneral(x, w, { lhsContractingDimensions: [1], rhsContractingDimensions: [0], lhsBatchDimensions: [], rhsBatchDimensions: [] }, { preferredElementType: "f32" });
  // Values in [0.5, 2) with 3-bit significands: every sum is exact in f32, so any order gives the interpreter's bits.
  const args = [[16, 32], [32, 24], [16, 24]].map(([m, k], j) => {
    const lit = Literal.zeros(arrayShape(t, [m!, k!]));
    for (let i = 0; i < m! * k!; i++) lit.data[i] = 0x30 + ((i * 29 + j * 7) % 16);
    return lit;
  });
  const { want, got, exe } = await both(b.build(add(d, convertElementType(bias, "f32"))), args);
  assert.match(exe.dump(), /1 kernel\(s\), 0 host step\(s\)/);
  assert.equal(bitDifference(want, got, args), undefined);
});

test("dots with a byte-float result: the f32 sum rounded once to the format (by vectors, element by element, with an f8 bias added in the epilogue), bit for bit where the sums are exact", { skip }, async () => {
  const b = new XlaBuilder("f8_results");
  const nn = { lhsContractingDimensions: [1], rhsContractingDimensions: [0], lhsBatchDimensions: [], rhsBatchDimensions: [] };
  const shapes: [ElementType, number, number, number][] = [["f8e4m3fn", 16, 32, 24], ["f8e5m2", 5, 32, 7], ["f4e2m1fn", 6, 8, 12]];
  const args: Literal[] = [];
  const results = shapes.map(([t, m, k, n], j) => {
    const lhs = parameter(b, 2 * j, arrayShape(t, [m, k]), `lhs${j}`);
    const rhs = parameter(b, 2 * j + 1, arrayShape(t, [k, n]), `rhs${j}`);
    // The patterns from 0.5's up through two binades, [0.5, 2) (f4e2m1fn: ±0.5, ±1, ±1.5):
    // every sum is exact in f32, so any order gives the interpreter's bits.
    const half = [...Array(2 ** ELEMENT_TYPES[t].bitWidth).keys()].find((p) => decodeFloatBits(t, p) === 0.5)!;
    const span = 2 << ELEMENT_TYPES[t].float!.mantissaBits;
    for (const [r, c] of [[m, k], [k, n]] as const) {
      const lit = Literal.zeros(arrayShape(t, [r, c]));
      for (let i = 0; i < r * c; i++) lit.data[i] = ELEMENT_TYPES[t].bitWidth === 4 ? [1, 2, 3, 9, 10, 11][(i * 7 + r) % 6]! : half + ((i * 29 + r) % span);
      args.push(lit);
    }
    return dotGeneral(lhs, rhs, nn, { preferredElementType: t });
  });
  // The first product's only user adds an f8 bias: its epilogue, computing in f8e4m3fn.
  const bias = parameter(b, 2 * shapes.length, arrayShape("f8e4m3fn", [16, 24]), "bias");
  const biasValues = Literal.zeros(arrayShape("f8e4m3fn", [16, 24]));
  for (let i = 0; i < 16 * 24; i++) biasValues.data[i] = 0x30 + ((i * 13) % 16);
  args.push(biasValues);
  const { want, got, exe } = await both(b.build(tuple(b, [add(results[0]!, bias), ...results.slice(1)])), args);
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  assert.match(exe.dump(), /from f8e4m3fn to f8e4m3fn, tiled [^\n]*epilogue fused/);
  ["f8e4m3fn + bias", ...shapes.slice(1).map((s) => s[0])].forEach((name, j) => assert.equal(bitDifference(want.elements[j]!, got.elements[j]!, args), undefined, `${name} result`));
});
