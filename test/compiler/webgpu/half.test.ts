// f16 arithmetic and f16 and bf16 converts and compares on the WebGPU backend
// (webgpu/wgsl_values.ts HALF: held as bit patterns, computed in f32, rounded back to
// nearest even on bits) against the interpreter, bit for bit: every f16 pattern through
// the elementwise ops, compares and converts (subnormals, the overflow threshold 65520,
// NaN signs), every bf16 pattern through the same (its +, -, ×, ÷ and sqrt exact on a
// flushing SwiftShader: wgsl_values.ts xk_bf16_add ...), and against a handful of
// partners (subnormals, the normal boundaries, overflow); f32 → f16 and → bf16
// on ties, both sides of every threshold and random patterns; integers → f16 and bf16
// where converting through f32 would round twice; f16 and bf16 reductions (row sums as
// workgroup trees, each step rounded to the half, within the bound of docs/numerics.md);
// softmax, log-softmax and layer norm in f16 as one kernel each, within bounds carried
// through their steps; f16 and bf16 dots and convolutions (accumulated in f32, the
// result rounded once; bf16 bit for bit where the sums are exact or in the interpreter's
// order). Transcendentals are compared within one f16 ulp (the shared f32
// approximations' few f32 ulps, then the rounding).
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import {
  XlaBuilder, parameter, binaryOp, unaryOp, compare, select, convertElementType, reduce, constantR0, tuple, exp, add, sub, mul, div, log, rsqrt, tanh, scalarReducer, dot, dotGeneral, convGeneralDilated, max,
  type ConvDimensionNumbers,
} from "../../../src/index.js";
import type { XlaOp } from "../../../src/builder/xla_builder.js";
import type { BinaryOpcode, UnaryOpcode } from "../../../src/ir/opcodes.js";
import type { ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { roundToFloatType } from "../../../src/types/float_codec.js";
import { arrayShape, elementCount } from "../../../src/types/shape.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { compile } from "../../../src/compiler/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { compareLeaf, type CompareTally } from "../../../tools/fuzz/compare_compiled.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/** The first element where two literals' stored bits differ (every NaN bit included), or undefined. */
function bitDifference(want: Literal, got: Literal, inputs: readonly Literal[]): string | undefined {
  const w = want.data;
  const g = got.data;
  if (w.length !== g.length) return `${w.length} elements expected, ${g.length} got`;
  const f32 = want.elementType === "f32";
  for (let i = 0; i < w.length; i++) {
    // An f32 result's NaN is compared as a NaN: the interpreter's f32 values carry no payload.
    if (f32 && Number.isNaN(w[i] as number) && Number.isNaN(g[i] as number)) continue;
    if (!Object.is(w[i], g[i])) {
      const operands = inputs.map((x) => {
        const v = Number(x.data[i % x.data.length]);
        return x.elementType === "f32" ? String(v) : `0x${v.toString(16)}`;
      }).join(", ");
      return `element ${i} (operands ${operands}): expected ${String(w[i])} (${want.readLinear(i)}), got ${String(g[i])} (${got.readLinear(i)})`;
    }
  }
  return undefined;
}

/** A rank-1 literal of type t (f16, bf16, f32 or an integer type) from its stored values. */
const stored = (t: ElementType, data: Uint16Array | Uint32Array | Int32Array | Float32Array): Literal => Literal.fromStorage(arrayShape(t, [data.length]), data);

const ALL_PATTERNS = Uint16Array.from({ length: 65536 }, (_, k) => k);
/** Every pattern against another, spread so that each special meets every other kind somewhere. */
const PARTNERS = Uint16Array.from({ length: 65536 }, (_, k) => (k * 40503 + 12345) & 0xffff);

const EXACT_BINARY: readonly BinaryOpcode[] = ["add", "subtract", "multiply", "divide", "maximum", "minimum"];
const EXACT_UNARY: readonly UnaryOpcode[] = ["negate", "abs", "floor", "ceil", "roundNearestEven", "roundNearestAfz", "sign", "sqrt", "isFinite"];

/** The exact ops, compares (IEEE and total order), selects and converts of type t over x and y, with a name each. */
function exactOps(t: "f16" | "bf16", x: XlaOp, y: XlaOp): { names: string[]; ops: XlaOp[] } {
  const other = t === "f16" ? "bf16" : "f16";
  const entries: [string, XlaOp][] = [
    ...EXACT_BINARY.map((op): [string, XlaOp] => [op, binaryOp(op, x, y)]),
    ...EXACT_UNARY.map((op): [string, XlaOp] => [op, unaryOp(op, x)]),
    ...(["EQ", "NE", "LT", "LE", "GT", "GE"] as const).map((d): [string, XlaOp] => [d, compare(x, y, d)]),
    ["LT total order", compare(x, y, "LT", { compareType: "TOTALORDER" })],
    ["GE total order", compare(x, y, "GE", { compareType: "TOTALORDER" })],
    ["select", select(compare(x, y, "GT"), x, y)],
    ...(["f32", other, "s32", "u8", "s16", "pred"] as const).map((to): [string, XlaOp] => [`to ${to}`, convertElementType(x, to)]),
  ];
  return { names: entries.map((e) => e[0]), ops: entries.map((e) => e[1]) };
}

test("f16: every pattern through the exact ops (remainder included), compares, selects and converts, bit for bit", { skip }, async () => {
  const b = new XlaBuilder("f16_exact");
  const x = parameter(b, 0, arrayShape("f16", [65536]), "x");
  const y = parameter(b, 1, arrayShape("f16", [65536]), "y");
  const exact = exactOps("f16", x, y);
  // remainder, exact in f16 as in f32 (webgpu/wgsl_binary_math.ts's fmod of the values).
  const [names, ops] = [[...exact.names, "remainder"], [...exact.ops, binaryOp("remainder", x, y)]];
  const args = [stored("f16", ALL_PATTERNS), stored("f16", PARTNERS)];
  const { want, got, exe } = await both(b.build(tuple(b, ops)), args);
  assert.deepEqual(exe.stats.interpreted, [], `everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
  names.forEach((name, k) => assert.equal(bitDifference(want.elements[k]!, got.elements[k]!, args), undefined, `f16 ${name}`));
});

/** bf16 partners every pattern meets: the smallest subnormal, the largest negative one, the smallest normal, -2^-119 (below it the add's exact path), 1, -1.5078125, the largest finite, infinity. */
const BF16_PARTNERS = [0x0001, 0x807f, 0x0080, 0x8400, 0x3f80, 0xbfc1, 0x7f7f, 0x7f80];

test("bf16: every pattern through the exact ops, compares, selects and converts on the GPU (subnormals included, SwiftShader flushing f32's), bit for bit; +, -, ×, ÷ against a handful of partners", { skip }, async () => {
  const b = new XlaBuilder("bf16_exact");
  const x = parameter(b, 0, arrayShape("bf16", [65536]), "x");
  const y = parameter(b, 1, arrayShape("bf16", [65536]), "y");
  const { names, ops } = exactOps("bf16", x, y);
  const args = [stored("bf16", ALL_PATTERNS), stored("bf16", PARTNERS)];
  const { want, got, exe } = await both(b.build(tuple(b, ops)), args);
  assert.deepEqual(exe.stats.interpreted, [], `everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
  assert.match(exe.dump(), /kernel\(s\), 0 host step\(s\)/);
  names.forEach((name, k) => assert.equal(bitDifference(want.elements[k]!, got.elements[k]!, args), undefined, `bf16 ${name}`));

  // Every pattern against each partner, on either side of the divide (subtract is add's helper with the sign flipped).
  const n = 65536 * BF16_PARTNERS.length;
  const c = new XlaBuilder("bf16_partners");
  const every = parameter(c, 0, arrayShape("bf16", [n]), "every");
  const partner = parameter(c, 1, arrayShape("bf16", [n]), "partner");
  const pairs = [stored("bf16", Uint16Array.from({ length: n }, (_, k) => k & 0xffff)), stored("bf16", Uint16Array.from({ length: n }, (_, k) => BF16_PARTNERS[k >> 16]!))];
  const arithmetic = await both(c.build(tuple(c, [add(every, partner), mul(every, partner), div(every, partner), div(partner, every)])), pairs);
  assert.deepEqual(arithmetic.exe.stats.interpreted, []);
  ["add", "multiply", "divide", "divide (partner first)"].forEach((name, k) =>
    assert.equal(bitDifference(arithmetic.want.elements[k]!, arithmetic.got.elements[k]!, pairs), undefined, `bf16 ${name}`));
});

/** f32 patterns at f16's and bf16's edges: ties and their neighbours around every threshold, NaNs of both signs, then random patterns. */
function f32EdgePatterns(): Uint32Array {
  const out: number[] = [];
  const around = (bits: number): void => { for (let d = -2; d <= 2; d++) out.push((bits + d) >>> 0, (bits + d + 0x80000000) >>> 0); };
  // f16: the largest finite (65504), the overflow tie (65520), the smallest normal (2^-14), the smallest subnormal (2^-24) and half of it.
  for (const b of [0x477fe000, 0x477ff000, 0x38800000, 0x33800000, 0x33000000, 0x33400000, 0x387fc000, 0x3f801000, 0x3f803000, 0x3a001000]) around(b);
  // bf16: ties at 1 + 2^-8, the largest finite and its overflow tie.
  for (const b of [0x3f808000, 0x3f818000, 0x7f7f8000, 0x7f7f7fff]) around(b);
  out.push(0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7f800000, 0xff800000, 0, 0x80000000);
  const random = rng(11);
  while (out.length < 16384) out.push(Math.floor(random() * 2 ** 32) >>> 0);
  return Uint32Array.from(out);
}

test("f32 and integers to f16 and bf16: one rounding to nearest even, overflow to infinity, a NaN's sign kept", { skip }, async () => {
  const f32Bits = f32EdgePatterns();
  const ints = Int32Array.from([0, 1, -1, 2049, 2051, 65504, 65519, 65520, 65535, -65520, 16777217, 16777219, 33554435, 2 ** 31 - 1, -(2 ** 31),
    0x01010101, 0x7fffff81, -0x7fffff81, 0x00ff8001, 0x00ff7fff, 0x01008080]);
  const uints = Uint32Array.from([0, 1, 0xffffffff, 0x80000001, 0xff800001, 0xff7fffff, 0x7fc00001, 65520, 2049]);
  const b = new XlaBuilder("to_halves");
  const x = parameter(b, 0, arrayShape("f32", [f32Bits.length]), "x");
  const i = parameter(b, 1, arrayShape("s32", [ints.length]), "i");
  const u = parameter(b, 2, arrayShape("u32", [uints.length]), "u");
  const results = ["f16", "bf16"].flatMap((t) => [x, i, u].map((v) => convertElementType(v, t as ElementType)));
  const args = [stored("f32", new Float32Array(f32Bits.buffer)), stored("s32", ints), stored("u32", uints)];
  const { want, got, exe } = await both(b.build(tuple(b, results)), args);
  assert.deepEqual(exe.stats.interpreted, []);
  results.forEach((_, k) => assert.equal(bitDifference(want.elements[k]!, got.elements[k]!, [args[k % 3]!]), undefined, `convert ${k}`));
});

test("f16 transcendentals: the shared f32 approximations rounded to f16, within their bounds", { skip }, async () => {
  const b = new XlaBuilder("f16_transcendentals");
  const x = parameter(b, 0, arrayShape("f16", [65536]), "x");
  const results = [exp(x), log(x), tanh(x), unaryOp("logistic", x), unaryOp("expm1", x), unaryOp("log1p", x), unaryOp("rsqrt", x), unaryOp("cbrt", x), unaryOp("sin", x), unaryOp("cos", x)];
  const { want, got, exe } = await both(b.build(tuple(b, results)), [stored("f16", ALL_PATTERNS)]);
  assert.deepEqual(exe.stats.interpreted, []);
  // The f32 results are within a few f32 ulps: rounded to f16, at most one f16 ulp off (where the f32 error crosses an f16 midpoint).
  results.forEach((_, k) => {
    const tally: CompareTally = { compared: 0, unbounded: 0 };
    assert.equal(compareLeaf("f16", { cls: "ulp", ulps: 1, eps: 0 }, want.elements[k]!.values(), got.elements[k]!.values(), tally), undefined, `transcendental ${k}`);
  });
});

test("bf16 transcendentals: computed in f32, rounded to bf16, within one bf16 ulp; subnormal operands and results under f32's licence (but rsqrt's, scaled, and those of the functions whose value there is the operand)", { skip }, async () => {
  const b = new XlaBuilder("bf16_transcendentals");
  const x = parameter(b, 0, arrayShape("bf16", [65536]), "x");
  const names = ["exp", "log", "tanh", "logistic", "expm1", "log1p", "cbrt", "sin", "tan", "rsqrt"] as const;
  const exactAtSubnormals = new Set<string>(["rsqrt", "sin", "tan", "tanh", "expm1", "log1p"]);
  const { want, got, exe } = await both(b.build(tuple(b, names.map((op) => unaryOp(op, x)))), [stored("bf16", ALL_PATTERNS)]);
  assert.deepEqual(exe.stats.interpreted, []);
  const tiny = (v: number): boolean => v !== 0 && Math.abs(v) < 2 ** -126;
  const operands = stored("bf16", ALL_PATTERNS).toNumbers();
  names.forEach((name, k) => {
    const [w, g] = [want.elements[k]!.toNumbers(), got.elements[k]!.toNumbers()];
    for (let i = 0; i < w.length; i++) {
      // WGSL may flush a subnormal operand or result of f32's polynomials (SwiftShader does); rsqrt scales a subnormal operand exactly, sin... return it.
      if (tiny(operands[i]!) ? !exactAtSubnormals.has(name) : tiny(w[i]!)) continue;
      if (!Number.isFinite(w[i]!) || w[i] === 0) {
        assert.ok(Object.is(w[i], g[i]) || (Number.isNaN(w[i]!) && Number.isNaN(g[i]!)), `${name} of 0x${i.toString(16)}: ${g[i]}, the interpreter ${w[i]}`);
        continue;
      }
      const ulp = 2 ** (Math.floor(Math.log2(Math.abs(w[i]!))) - 7);
      assert.ok(Math.abs(g[i]! - w[i]!) <= ulp, `${name} of 0x${i.toString(16)}: ${g[i]}, the interpreter ${w[i]}`);
    }
  });
});

/**
 * f16's and bf16's unit roundoffs, and γ_d = d·u / (1 - d·u): the relative bound of d
 * roundings in a chain (Higham, Accuracy and Stability, 3.1), or (1 + u)^d - 1 where
 * d·u >= 1 (bf16 chains of 256 or more: the interpreter's sum of a row of 300).
 */
const U16 = 2 ** -11;
const UBF16 = 2 ** -8;
const gamma = (d: number, u = U16): number => (d * u < 1 ? (d * u) / (1 - d * u) : (1 + u) ** d - 1);

/**
 * The most roundings an element of a row of n passes through in the GPU's row sum: its
 * lane's loop (ceil(n / size)), the workgroup's tree (log2 size) and the init's, over the
 * workgroup sizes a row may get (64 to 256, by the adapter's limits); the interpreter's
 * is n (docs/numerics.md).
 */
const gpuSumDepth = (n: number): number => Math.max(...[64, 128, 256].map((size) => Math.ceil(n / size) + Math.log2(size) + 1));

/** Each element's distance from the exact value `exact[i]` within `bound[i]` (NaN where the exact value is NaN), or the first that is not. */
function outsideBound(what: string, exact: readonly number[], bound: readonly number[], got: readonly number[]): string | undefined {
  for (let i = 0; i < exact.length; i++) {
    if (Number.isNaN(exact[i]!) ? Number.isNaN(got[i]!) : Math.abs(got[i]! - exact[i]!) <= bound[i]!) continue;
    return `${what} ${i}: ${got[i]}, exact ${exact[i]}, bound ${bound[i]}`;
  }
  return undefined;
}

/** Two bounds added, element by element: of the GPU's order and of the interpreter's, to compare the two results. */
const sumOf = (a: readonly number[], b: readonly number[]): number[] => a.map((x, i) => x + b[i]!);

/** The rows (of n) of a literal's values. */
const rowsOf = (values: readonly number[], n: number): number[][] => Array.from({ length: values.length / n }, (_, r) => values.slice(r * n, (r + 1) * n));

test("f16 and bf16 reductions on the GPU: row sums as workgroup trees within their bound, maxima and minima bit for bit, column sums and products in the interpreter's order", { skip }, async () => {
  const b = new XlaBuilder("half_reductions");
  const x = parameter(b, 0, arrayShape("f16", [7, 300]), "x");
  const y = parameter(b, 1, arrayShape("bf16", [7, 300]), "y");
  const rowSum = reduce(x, constantR0(b, "f16", 0), scalarReducer(b, "add", "f16"), [1]);
  const rowMax = reduce(x, constantR0(b, "f16", -Infinity), scalarReducer(b, "maximum", "f16"), [1]);
  const colMin = reduce(x, constantR0(b, "f16", Infinity), scalarReducer(b, "minimum", "f16"), [0]);
  const colSum = reduce(x, constantR0(b, "f16", 0), scalarReducer(b, "add", "f16"), [0]);
  const allProduct = reduce(x, constantR0(b, "f16", 1), scalarReducer(b, "multiply", "f16"), [0, 1]);
  const bf16RowMax = reduce(y, constantR0(b, "bf16", -Infinity), scalarReducer(b, "maximum", "bf16"), [1]);
  const bf16ColMin = reduce(y, constantR0(b, "bf16", Infinity), scalarReducer(b, "minimum", "bf16"), [0]);
  const bf16ColSum = reduce(y, constantR0(b, "bf16", 0), scalarReducer(b, "add", "bf16"), [0]);
  const bf16ColProduct = reduce(y, constantR0(b, "bf16", 1), scalarReducer(b, "multiply", "bf16"), [0]);
  const bf16RowSum = reduce(y, constantR0(b, "bf16", 0), scalarReducer(b, "add", "bf16"), [1]);
  const results = [rowSum, rowMax, colMin, colSum, allProduct, bf16RowMax, bf16ColMin, bf16ColSum, bf16ColProduct, bf16RowSum];
  const values = Array.from({ length: 7 * 300 }, (_, k) => (k === 40 ? NaN : k === 41 ? -0 : k === 700 ? 2 ** -130 : Math.cos(k * 1.7) * (k % 5 === 0 ? 1000 : 1.5)));
  const args = [Literal.fromValues("f16", [7, 300], values), Literal.fromValues("bf16", [7, 300], values)];
  const { want, got, exe } = await both(b.build(tuple(b, results)), args);
  assert.deepEqual(exe.stats.interpreted, []);
  // The row reductions (f16's and bf16's) run a row per workgroup; the adapter's description says how f16 is computed.
  assert.match(exe.dump(), /7 workgroups of 64/);
  assert.match(exe.stats.adapter, /(no )?shader-f16; f16 computed in f32 on its bits/);
  const rowSums = new Set([0, results.length - 1]);
  results.forEach((_, k) => { if (!rowSums.has(k)) assert.equal(bitDifference(want.elements[k]!, got.elements[k]!, args), undefined, `reduction ${k}`); });
  // The row sums: within γ_d Σ|x| of the exact sum (d the GPU's depth), and of the interpreter's within both orders' bounds.
  for (const [k, arg, u] of [[0, args[0]!, U16], [results.length - 1, args[1]!, UBF16]] as const) {
    const rows = rowsOf(arg.toNumbers(), 300);
    const exact = rows.map((r) => r.reduce((s, v) => s + v, 0));
    const absSum = rows.map((r) => r.reduce((s, v) => s + Math.abs(v), 0));
    const [sums, interpreterSums] = [got.elements[k]!.toNumbers(), want.elements[k]!.toNumbers()];
    assert.equal(outsideBound(`${arg.elementType} row sum`, exact, absSum.map((a) => gamma(gpuSumDepth(300), u) * a), sums), undefined);
    assert.equal(outsideBound(`${arg.elementType} row sum against the interpreter's`, interpreterSums, absSum.map((a) => (gamma(gpuSumDepth(300), u) + gamma(300, u)) * a), sums), undefined);
  }
});

test("f16 softmax, log-softmax and layer norm on the GPU: one kernel each, a row per workgroup, within their bounds; bf16 softmax computed in f32: one kernel", { skip }, async () => {
  const [R, N] = [3, 300];
  const input = Literal.fromValues("f16", [R, N], Array.from({ length: R * N }, (_, k) => Math.sin(k * 0.37) * 8 + (k % 7) * 0.25));
  const rows = rowsOf(input.toNumbers(), N);
  const f16 = (v: number): number => roundToFloatType("f16", v);
  const d = gpuSumDepth(N);
  /** Builds `body` of an f16 [R, N] parameter, runs it on both, checks one kernel of R workgroups and returns the GPU's and the interpreter's values. */
  const run = async (name: string, body: (b: XlaBuilder, v: XlaOp) => XlaOp, arg: Literal = input): Promise<{ got: number[]; want: number[] }> => {
    const b = new XlaBuilder(name);
    const r = await both(b.build(body(b, parameter(b, 0, arrayShape(arg.elementType, [R, N]), "v"))), [arg]);
    assert.deepEqual(r.exe.stats.interpreted, [], `${name}: no interpreted step`);
    assert.equal(r.exe.stats.kernels, 1, `${name}: one kernel`);
    assert.match(r.exe.dump(), new RegExp(`${R} workgroups of`), name);
    return { got: r.got.toNumbers(), want: r.want.toNumbers() };
  };
  const rowMax = (b: XlaBuilder, v: XlaOp, t: ElementType): XlaOp => reduce(v, constantR0(b, t, -Infinity), scalarReducer(b, "maximum", t), [1]);
  const rowSum = (b: XlaBuilder, v: XlaOp, t: ElementType): XlaOp => reduce(v, constantR0(b, t, 0), scalarReducer(b, "add", t), [1]);
  // Both compute x - max rounded once to f16 (the same bits); from there, exactly:
  const shifted = rows.map((r) => { const m = Math.max(...r); return r.map((v) => f16(v - m)); });
  const expSums = shifted.map((r) => r.reduce((s, v) => s + Math.exp(v), 0));
  // exp in f32 within a few f32 ulps, rounded to f16: 1.1u, or half a subnormal step (2^-25) below 2^-14;
  // the sum of those, as a relative error of the exact sum s: theirs and γ_d.
  const expError = (v: number): number => 1.1 * U16 * Math.exp(v) + 2 ** -25;
  const sumError = (depth: number): number[] => shifted.map((r, i) => r.reduce((e, v) => e + expError(v), 0) / expSums[i]! + gamma(depth));

  const softmax = await run("f16_softmax", (b, v) => { const e = exp(sub(v, rowMax(b, v, "f16"), [0])); return div(e, rowSum(b, e, "f16"), [0]); });
  const p = shifted.flatMap((r, i) => r.map((v) => Math.exp(v) / expSums[i]!));
  // The exp's error and the sum's carried through the divide, then its rounding: u, or half a subnormal step.
  const softmaxBound = (depth: number): number[] => {
    const sum = sumError(depth);
    return p.map((v, k) => 1.01 * (expError(shifted[Math.floor(k / N)]![k % N]!) / expSums[Math.floor(k / N)]! + sum[Math.floor(k / N)]! * v + U16 * v) + 2 ** -25);
  };
  assert.equal(outsideBound("softmax", p, softmaxBound(d), softmax.got), undefined);
  assert.equal(outsideBound("softmax against the interpreter's", softmax.want, sumOf(softmaxBound(d), softmaxBound(N)), softmax.got), undefined);

  const logSoftmax = await run("f16_log_softmax", (b, v) => {
    const c = sub(v, rowMax(b, v, "f16"), [0]);
    return sub(c, log(rowSum(b, exp(c), "f16")), [0]);
  });
  const ls = shifted.flatMap((r, i) => r.map((v) => v - Math.log(expSums[i]!)));
  // log of the sum: its relative error (as an absolute one) and its rounding (u |log s|); the subtraction's rounding (u |result|).
  const logSoftmaxBound = (depth: number): number[] => {
    const sum = sumError(depth);
    return ls.map((v, k) => 1.01 * (sum[Math.floor(k / N)]! + 1.1 * U16 * Math.log(expSums[Math.floor(k / N)]!) + U16 * Math.abs(v)) + 2 ** -25);
  };
  assert.equal(outsideBound("log-softmax", ls, logSoftmaxBound(d), logSoftmax.got), undefined);
  assert.equal(outsideBound("log-softmax against the interpreter's", logSoftmax.want, sumOf(logSoftmaxBound(d), logSoftmaxBound(N)), logSoftmax.got), undefined);

  const eps = 2 ** -8;
  const layerNorm = await run("f16_layer_norm", (b, v) => {
    const c = sub(v, div(rowSum(b, v, "f16"), constantR0(b, "f16", N)), [0]);
    return mul(c, rsqrt(add(div(rowSum(b, mul(c, c), "f16"), constantR0(b, "f16", N)), constantR0(b, "f16", eps))), [0]);
  });
  // First-order error bounds along the computation (each op rounded to f16: u of its result; rsqrt's f32 approximation 1.1u).
  const layerNormBound = (depth: number) => rows.flatMap((r) => {
    const mean = r.reduce((s, v) => s + v, 0) / N;
    const eMean = (gamma(depth) * r.reduce((s, v) => s + Math.abs(v), 0)) / N + U16 * Math.abs(mean);
    const c = r.map((v) => v - mean);
    const eC = c.map((v) => eMean + U16 * Math.abs(v));
    const variance = c.reduce((s, v) => s + v * v, 0) / N;
    const eSquares = c.reduce((s, v, i) => s + 2 * Math.abs(v) * eC[i]! + U16 * v * v, 0) + gamma(depth) * variance * N;
    const eShifted = eSquares / N + U16 * variance + U16 * (variance + eps);
    const rs = 1 / Math.sqrt(variance + eps);
    const eRs = (0.5 * rs * eShifted) / (variance + eps) + 1.1 * U16 * rs;
    return c.map((v, i) => 1.05 * (Math.abs(v) * eRs + rs * eC[i]! + U16 * Math.abs(v * rs)) + 2 ** -25);
  });
  const normalized = rows.flatMap((r) => {
    const mean = r.reduce((s, v) => s + v, 0) / N;
    const variance = r.reduce((s, v) => s + (v - mean) ** 2, 0) / N;
    return r.map((v) => (v - mean) / Math.sqrt(variance + eps));
  });
  assert.equal(outsideBound("layer norm", normalized, layerNormBound(d), layerNorm.got), undefined);
  assert.equal(outsideBound("layer norm against the interpreter's", layerNorm.want, sumOf(layerNormBound(d), layerNormBound(N)), layerNorm.got), undefined);

  // A bf16 softmax as JAX writes it, in f32 between converts: one kernel.
  const bf16Softmax = await run("bf16_softmax", (b, v) => {
    const v32 = convertElementType(v, "f32");
    const e = exp(sub(v32, rowMax(b, v32, "f32"), [0]));
    return convertElementType(div(e, rowSum(b, e, "f32"), [0]), "bf16");
  }, Literal.fromValues("bf16", [R, N], input.toNumbers()));
  // f32 differences (the sum's order, exp's approximation) far below bf16's step: within one bf16 ulp of the interpreter's.
  const tally: CompareTally = { compared: 0, unbounded: 0 };
  assert.equal(compareLeaf("bf16", { cls: "ulp", ulps: 1, eps: 0 }, bf16Softmax.want, bf16Softmax.got, tally), undefined);
});

test("f16 dots and convolutions: the GEMM reads f16 pairs, accumulates in f32 and rounds an f16 result once (on bits); odd n and features stored element by element; epilogues on f16 products", { skip }, async () => {
  const random = rng(5);
  const halves = (dims: readonly number[]): Literal => Literal.fromValues("f16", dims, Array.from({ length: elementCount(dims) }, () => random() * 4 - 2));
  const NHWC: ConvDimensionNumbers = {
    inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
    kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
    outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
  };
  const b = new XlaBuilder("f16_products");
  const a = parameter(b, 0, arrayShape("f16", [37, 64]), "a");
  const w = parameter(b, 1, arrayShape("f16", [64, 32]), "w");
  const x = parameter(b, 2, arrayShape("f16", [1, 6, 6, 8]), "x");
  const k = parameter(b, 3, arrayShape("f16", [3, 3, 8, 3]), "k");
  const narrow = parameter(b, 4, arrayShape("f16", [64, 5]), "narrow");
  const bias = parameter(b, 5, arrayShape("f16", [5]), "bias");
  const convBias = parameter(b, 6, arrayShape("f16", [3]), "convBias");
  const results = [
    dot(a, w), dot(a, w, { preferredElementType: "f32" }),
    // An f16 convolution's epilogue (bias, relu) in its kernel's store; three output
    // features: a word of the result would hold two pixels' elements, so it is stored
    // element by element (atomic halves).
    max(add(convGeneralDilated(x, k, [1, 1], [[0, 0], [0, 0]], [], [], NHWC, 1, 1), convBias, [3]), 0),
    // An f16 product's epilogue (bias, relu) in the GEMM's store, on the product rounded to
    // f16 as the interpreter's; five columns in 37 rows, stored element by element.
    max(add(dot(a, narrow), bias, [1]), 0),
  ];
  const args = [halves([37, 64]), halves([64, 32]), halves([1, 6, 6, 8]), halves([3, 3, 8, 3]), halves([64, 5]), halves([5]), halves([3])];
  const { want, got, exe } = await both(b.build(tuple(b, results)), args);
  assert.match(exe.dump(), /from f16 to f16/);
  assert.match(exe.dump(), /from f16 to f32/);
  assert.match(exe.dump(), /gemm 37x5x64 NN f32 from f16 to f16, tiled .*epilogue fused/);
  assert.match(exe.dump(), /convolution .*tiled .*epilogue fused/);
  assert.deepEqual(exe.stats.interpreted, [], "no host step");
  // The order of the sum is the interpreter's (k ascending), its f32 rounding may not be (fma): within one f16 rounding.
  results.forEach((_, j) => {
    const t = want.elements[j]!.elementType;
    const tally: CompareTally = { compared: 0, unbounded: 0 };
    assert.equal(compareLeaf(t, { cls: "rounded", ulps: 0, eps: 2 ** -10 }, want.elements[j]!.values(), got.elements[j]!.values(), tally), undefined, `product ${j}`);
  });
});

// bf16 products as JAX writes them: bf16 operands with an f32 (preferred) or bf16
// result, attention's batched products, an f32 activation times bf16 weights. The sums
// are f32's (bf16 products are exact in f32), the result rounded once. On values that
// are small integers every sum is exact, so the GPU's order of summation cannot show:
// bit for bit with the interpreter. On random values the tiled kernel sums two bf16
// operands in the interpreter's order (k ascending; a convolution's window positions,
// features fastest), each step rounded once as its fused multiply-add is (the product
// is exact in f32): bit for bit too. The skinny kernel adds slices of k, and an f32
// operand's product may round apart from its sum (SwiftShader's fma): within
// 2 γ_k Σ|a||b| of the interpreter's f32 sum, a bf16 result within that and both
// sides' roundings.
test("bf16 dots and convolutions on the GPU: pairs widened by shifts, summed in f32, a bf16 result rounded once (odd n stored element by element); bit for bit where the sums are exact", { skip }, async () => {
  const NHWC: ConvDimensionNumbers = {
    inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
    kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
    outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
  };
  const shapes: [ElementType, number[]][] = [
    ["bf16", [37, 64]], ["bf16", [64, 32]], ["bf16", [1, 6, 6, 8]], ["bf16", [3, 3, 8, 4]],
    ["bf16", [2, 5, 3, 16]], ["bf16", [2, 8, 3, 16]], ["bf16", [2, 3, 1, 8]], ["f32", [8, 64]], ["bf16", [64, 5]], ["f32", [32]],
  ];
  const b = new XlaBuilder("bf16_products");
  const [a, w, x, k, q, keys, p, h, narrow, bias] = shapes.map(([t, dims], i) => parameter(b, i, arrayShape(t, dims), `p${i}`)) as [XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp, XlaOp];
  const results = [
    // A dense layer: bf16 operands, an f32 product, its bias and relu in the GEMM's store (an output fusion).
    max(add(dot(a, w, { preferredElementType: "f32" }), bias, [1]), 0),
    convGeneralDilated(x, k, [1, 1], [[1, 1], [1, 1]], [], [], NHWC, 1, 1),
    // Attention as JAX writes it, q and k as [batch, position, head, depth]: the scores
    // ("BTNH,BSNH->BNTS", bf16) and one query's weights times the values ("BNTS,BSNH",
    // f32: the skinny kernel), their operands read in place through their strides (the
    // batch dimensions not leading: kernel/gemm_plan.ts stridedGemmOfDot).
    dotGeneral(q, keys, { lhsBatchDimensions: [0, 2], rhsBatchDimensions: [0, 2], lhsContractingDimensions: [3], rhsContractingDimensions: [3] }),
    dotGeneral(p, keys, { lhsBatchDimensions: [0, 1], rhsBatchDimensions: [0, 2], lhsContractingDimensions: [3], rhsContractingDimensions: [1] }, { preferredElementType: "f32" }),
    // f32 activations times bf16 weights (the shape rules' mixed dot: an f32 result).
    dot(h, w),
    // Five columns in 37 rows: no word of the bf16 result is one invocation's, so it is stored element by element (atomic halves).
    dot(a, narrow),
  ];
  const depths = [64, 72, 16, 8, 64, 64];
  /** The products of two bf16 operands by the tiled kernel. */
  const tiledHalves = [0, 1, 2];
  const program = b.build(tuple(b, results));
  const exe = await compile(program, { backend: "webgpu" });
  try {
    const dump = exe.dump();
    for (const name of [/gemm 37x32x64 NN f32 from bf16 to f32, tiled .*epilogue fused/, /convolution .*tiled/, /gemm 6x5x8x16 in place \(strides A 240,16;48;1, B 384,16;48;1\) f32 from bf16 to bf16, tiled/, /gemm 6x1x16x8 in place \(strides A 24,8;0;1, B 384,16;1;48\) f32 from bf16 to f32, skinny/, /gemm 8x32x64 NN f32 from f32 x bf16 to f32, tiled/]) assert.match(dump, name);
    assert.deepEqual(exe.stats.interpreted, [], "no host step");

    const random = rng(41);
    const run = async (value: () => number) => {
      const args = shapes.map(([t, dims]) => Literal.fromValues(t, dims, Array.from({ length: elementCount(dims) }, value)));
      const magnitudes = args.map((l) => Literal.fromValues(l.elementType, l.dimensions, l.toNumbers().map(Math.abs)));
      return { want: evaluate(program, args), got: await exe.run(args), scale: evaluate(program, magnitudes) };
    };
    const integers = await run(() => Math.floor(random() * 17) - 8);
    results.forEach((_, j) => assert.equal(bitDifference(integers.want.elements[j]!, integers.got.elements[j]!, []), undefined, `product ${j} of small integers`));

    const reals = await run(() => random() * 4 - 2);
    for (const j of tiledHalves) assert.equal(bitDifference(reals.want.elements[j]!, reals.got.elements[j]!, []), undefined, `product ${j} of random values`);
    results.forEach((_, j) => {
      const [want, got, scale] = [reals.want, reals.got, reals.scale].map((r) => r.elements[j]!.toNumbers());
      const bf16 = reals.want.elements[j]!.elementType === "bf16";
      const d = depths[j]!;
      for (let i = 0; i < want!.length; i++) {
        // The scale is summed from bf16 magnitudes (rounded: 2^-8 relative); each side's f32 sum within γ_d Σ|a||b| of the exact one, then each rounded to bf16 (2^-8 relative).
        const sums = 2 * gamma(d, 2 ** -24) * 1.01 * scale![i]!;
        const bound = bf16 ? sums + 2 ** -8 * (2 * Math.abs(want![i]!) + sums) * 1.01 : sums;
        assert.ok(Math.abs(got![i]! - want![i]!) <= bound, `product ${j} element ${i}: ${got![i]}, the interpreter ${want![i]} (bound ${bound})`);
      }
    });
  } finally {
    exe.delete();
  }
});

test("f16 pow and atan2 on the GPU (computed in f32, rounded to f16): every pattern, within one f16 ulp of the interpreter, specials bit for bit", { skip }, async () => {
  const b = new XlaBuilder("f16_pow_atan2");
  const x = parameter(b, 0, arrayShape("f16", [65536]), "x");
  const y = parameter(b, 1, arrayShape("f16", [65536]), "y");
  const args = [stored("f16", ALL_PATTERNS), stored("f16", PARTNERS)];
  const { want, got, exe } = await both(b.build(tuple(b, [binaryOp("power", x, y), binaryOp("atan2", x, y)])), args);
  assert.deepEqual(exe.stats.interpreted, [], `everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
  ["pow", "atan2"].forEach((name, k) => {
    const [w, g] = [want.elements[k]!.toNumbers(), got.elements[k]!.toNumbers()];
    for (let i = 0; i < w.length; i++) {
      // NaN, infinities and zeros exactly (the f32 result within 1 f32 ulp, then one rounding: within one f16 ulp).
      if (!Number.isFinite(w[i]!) || w[i] === 0) {
        assert.ok(Object.is(w[i], g[i]) || (Number.isNaN(w[i]!) && Number.isNaN(g[i]!)), `${name} of 0x${ALL_PATTERNS[i]!.toString(16)}, 0x${PARTNERS[i]!.toString(16)}: ${g[i]}, the interpreter ${w[i]}`);
        continue;
      }
      const ulp = 2 ** (Math.max(Math.floor(Math.log2(Math.abs(w[i]!))), -14) - 10);
      assert.ok(Math.abs(g[i]! - w[i]!) <= ulp, `${name} of 0x${ALL_PATTERNS[i]!.toString(16)}, 0x${PARTNERS[i]!.toString(16)}: ${g[i]}, the interpreter ${w[i]}`);
    }
  });
});

test("a reduction the WGSL generator declines says why it runs on the host (an f8 sum); a bf16 sum runs on the GPU", () => {
  const b = new XlaBuilder("narrow_sums");
  const x = parameter(b, 0, arrayShape("f8e5m2", [4, 8]), "x");
  const y = parameter(b, 1, arrayShape("bf16", [4, 8]), "y");
  tuple(b, [reduce(x, constantR0(b, "f8e5m2", 0), scalarReducer(b, "add", "f8e5m2"), [1]), reduce(y, constantR0(b, "bf16", 0), scalarReducer(b, "add", "bf16"), [1])]);
  const host = planGpuProgram(b.build(), {}).steps.filter((s) => s.kind === "host");
  assert.equal(host.length, 1);
  assert.match(host[0]!.kind === "host" ? host[0]!.why : "", /reductions of f8e5m2 are not compiled/);
});

test("dots the GEMM kernels do not take run on the host, saying why: f64 (bf16, s32 and f8 dots compile)", () => {
  const b = new XlaBuilder("host_dots");
  const operands = (["s32", "f8e4m3fn", "f64", "bf16"] as const).map((t, i) => parameter(b, i, arrayShape(t, [4, 8]), `x${i}`));
  tuple(b, operands.map((x) => dotGeneral(x, x, { lhsContractingDimensions: [1], rhsContractingDimensions: [1] })));
  const host = planGpuProgram(b.build(), {}).steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  // Each reason names its instruction: "webgpu dot <name>: ...".
  assert.deepEqual(host.map((why) => why.replace(/^webgpu dot \S+: /, "")), [
    "f64 x f64 -> f64 (WGSL has no f64; it runs on the host)",
  ]);
});
