// The WebGPU backend against the interpreter, on the machine's WebGPU adapter (Dawn on
// SwiftShader where there is no GPU): elementwise ops over every type it computes on,
// with XLA's edge cases (integer division by zero and at MIN / -1, shifts past the
// width, NaN and signed zeros in max/min, saturating and NaN float→integer converts),
// reductions, softmax as one kernel, host steps for what it declines, random programs.
// Integers and exact float ops are compared bit for bit; transcendentals within the
// CPU backends' ULP bounds (tools/fuzz/compare_compiled.ts).
//
// Where neither the `webgpu` package nor a Vulkan driver description exists, the tests
// skip, saying so; where either exists (CI installs both), a missing adapter fails.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { gpuContext, releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { rowInvocationsFor, rowWorkgroupSize, SOFTWARE_INVOCATION_ROWS, softwareKernelForms, wgslFusionKernel } from "../../../src/compiler/webgpu/codegen.js";
import { DEFAULT_GPU_LIMITS } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import {
  XlaBuilder, parameter, binaryOp, unaryOp, compare, select, convertElementType, reduce, constantR0, tuple, exp, sub, div, log, tanh, add, mul, scalarReducer,
} from "../../../src/index.js";
import type { BinaryOpcode, UnaryOpcode } from "../../../src/ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../../src/types/element_type.js";
import { Literal, type Scalar } from "../../../src/types/literal.js";
import { arrayShape } from "../../../src/types/shape.js";
import { compareLeaf, cones, elementTypeOf, WEBGPU_ULP_BOUNDS, type CompareTally } from "../../../tools/fuzz/compare_compiled.js";
import { randomProgram, type RandomProgramOptions } from "../random_program.js";
import { HloModule } from "../../../src/ir/computation.js";
import { parseHlo, printHlo } from "../../../src/text/hlo/index.js";
import { planGpuProgram, type GpuPlanTarget } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import type { WgslKernel } from "../../../src/compiler/webgpu/wgsl_kernel.js";
import { CompileError } from "../../../src/types/errors.js";
import type { Computation } from "../../../src/ir/computation.js";

const skip = webgpuSkip;
if (skip !== false) console.log(`webgpu tests skipped: ${skip}`);

after(() => releaseGpu());

test("a WebGPU adapter is found where the package or a Vulkan driver is installed", { skip }, async () => {
  const gpu = await gpuContext();
  assert.ok(gpu.description.length > 0);
  console.log(`webgpu adapter: ${gpu.description}`);
});

const bitsOf = (t: ElementType, v: Scalar): string => {
  if (typeof v === "number" && ELEMENT_TYPES[t].kind === "float") return Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : String(v);
  return String(v);
};

const F32_MIN_NORMAL = 2 ** -126;

/**
 * The expected values, where WGSL's licence to flush f32 subnormals to zero (SwiftShader
 * does) gave a zero for a subnormal result: that zero (docs/backends.md states it).
 */
function flushed(t: ElementType, want: readonly Scalar[], got: readonly Scalar[]): Scalar[] {
  if (t !== "f32") return [...want];
  return want.map((w, i) => {
    const g = got[i];
    return typeof w === "number" && w !== 0 && Math.abs(w) < F32_MIN_NORMAL && g === 0 ? g : w;
  });
}

/** Element-for-element equality, NaN equal to NaN (any payload), -0 apart from +0 (f32 subnormals may flush to zero). */
function assertSame(t: ElementType, want: Literal, got: Literal, what: string): void {
  const g = got.values();
  const w = flushed(t, want.values(), g);
  assert.equal(g.length, w.length, what);
  for (let i = 0; i < w.length; i++) {
    assert.equal(bitsOf(t, g[i]!), bitsOf(t, w[i]!), `${what}: element ${i} (operands at ${i})`);
  }
}

const N = 40;

/** Values of type t with its edge cases first: zeros, ones, the extremes, NaN and infinities, then a spread. */
function values(t: ElementType, salt: number): Scalar[] {
  const info = ELEMENT_TYPES[t];
  const out: Scalar[] = [];
  if (info.kind === "pred") for (let i = 0; i < N; i++) out.push(((i * 7 + salt) % 3) === 0);
  else if (info.kind === "float") {
    // No subnormals: WGSL may flush them to zero (docs/backends.md).
    const specials = [0, -0, 1, -1, NaN, Infinity, -Infinity, 1e-30, -1e-30, 3.5, -2.5, 0.5, -0.5, 2.5, 16777217, 1e30, -1e30];
    for (const v of specials) out.push(v);
    for (let i = out.length; i < N; i++) out.push(Math.sin(i * 12.9898 + salt) * 10 ** ((i + salt) % 7 - 3));
  } else {
    const bits = info.bitWidth;
    const signed = info.kind === "signed";
    const min = signed ? -(2 ** (bits - 1)) : 0;
    const max = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
    for (const v of [0, 1, -1, min, max, min + 1, max - 1, 2, bits, bits + 1, bits - 1, -bits]) out.push(signed || v >= 0 ? v : max + 1 + v);
    for (let i = out.length; i < N; i++) out.push(Math.floor(Math.abs(Math.sin(i * 78.233 + salt)) * (max - min + 1)) + min);
  }
  // Rotated by the salt, so that two operands meet every pair of edge cases somewhere.
  return out.map((_, i) => out[(i * (salt + 1)) % N]!);
}

const literal = (t: ElementType, vs: Scalar[]): Literal => Literal.fromValues(t, [vs.length], vs);

const INT_BINARY: readonly BinaryOpcode[] = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "and", "or", "xor", "shiftLeft", "shiftRightArithmetic", "shiftRightLogical"];
const INT_UNARY: readonly UnaryOpcode[] = ["negate", "abs", "not", "clz", "popcnt", "sign"];
const F32_EXACT_BINARY: readonly BinaryOpcode[] = ["add", "subtract", "multiply", "divide", "maximum", "minimum"];
const F32_EXACT_UNARY: readonly UnaryOpcode[] = ["negate", "abs", "floor", "ceil", "roundNearestEven", "roundNearestAfz", "sign", "sqrt", "isFinite"];

for (const t of ["s32", "u32", "s8", "u8", "s16", "u16"] as const) {
  test(`integer elementwise ops on ${t} are bit-exact, edge cases included`, { skip }, async () => {
    // abs and sign are defined on signed types only.
    const unary = ELEMENT_TYPES[t].kind === "signed" ? INT_UNARY : INT_UNARY.filter((op) => op !== "abs" && op !== "sign");
    const b = new XlaBuilder(`int_${t}`);
    const x = parameter(b, 0, arrayShape(t, [N]), "x");
    const y = parameter(b, 1, arrayShape(t, [N]), "y");
    const results = [
      ...INT_BINARY.map((op) => binaryOp(op, x, y)), ...unary.map((op) => unaryOp(op, x)),
      ...(["EQ", "NE", "LT", "GE"] as const).map((d) => compare(x, y, d)),
      select(compare(x, y, "LT"), x, y), convertElementType(x, "f32"), convertElementType(x, "s8"), convertElementType(x, "u32"),
    ];
    const names = [...INT_BINARY, ...unary, "EQ", "NE", "LT", "GE", "select", "to f32", "to s8", "to u32"];
    const { want, got, exe } = await both(b.build(tuple(b, results)), [literal(t, values(t, 0)), literal(t, values(t, 3))]);
    assert.ok(exe.stats.kernels >= 1);
    assert.deepEqual(exe.stats.interpreted, [], `everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
    want.elements.forEach((w, k) => assertSame(w.arrayShape.elementType, w, got.elements[k]!, `${t} ${names[k]}`));
  });
}

test("f32 elementwise ops: exact ones bit-exact (NaN, infinities, signed zeros), transcendentals within the shared bounds", { skip }, async () => {
  const b = new XlaBuilder("f32_ops");
  const x = parameter(b, 0, arrayShape("f32", [N]), "x");
  const y = parameter(b, 1, arrayShape("f32", [N]), "y");
  const exact = [
    ...F32_EXACT_BINARY.map((op) => binaryOp(op, x, y)), ...F32_EXACT_UNARY.map((op) => unaryOp(op, x)),
    ...(["EQ", "NE", "LT", "LE", "GT", "GE"] as const).map((d) => compare(x, y, d)), compare(x, y, "LT", { compareType: "TOTALORDER" }),
    select(compare(x, y, "GT"), x, y), convertElementType(x, "s32"), convertElementType(x, "u32"), convertElementType(x, "s8"), convertElementType(x, "u8"), convertElementType(x, "pred"),
  ];
  const approx = [exp(x), log(x), tanh(x), unaryOp("logistic", x), unaryOp("expm1", x), unaryOp("log1p", x), unaryOp("rsqrt", x), unaryOp("cbrt", x)];
  const bounds = [3, 2, 4, 4, 3, 3, 1, 2];
  const c = b.build(tuple(b, [...exact, ...approx]));
  const { want, got, exe } = await both(c, [literal("f32", values("f32", 0)), literal("f32", values("f32", 5))]);
  assert.deepEqual(exe.stats.interpreted, [], `everything compiles: ${JSON.stringify(exe.stats.interpreted)}`);
  exact.forEach((_, k) => assertSame(want.elements[k]!.arrayShape.elementType, want.elements[k]!, got.elements[k]!, `f32 exact op ${k}`));
  approx.forEach((_, j) => {
    const k = exact.length + j;
    const tally: CompareTally = { compared: 0, unbounded: 0 };
    const diff = compareLeaf("f32", { cls: "ulp", ulps: bounds[j]!, eps: 0 }, flushed("f32", want.elements[k]!.values(), got.elements[k]!.values()), got.elements[k]!.values(), tally);
    assert.equal(diff, undefined, `transcendental ${j}: ${diff}`);
  });
});

test("reductions (row and column; sum, max, min; to a scalar) and softmax run as kernels, as the interpreter computes", { skip }, async () => {
  const b = new XlaBuilder("reductions");
  const x = parameter(b, 0, arrayShape("f32", [6, 37]), "x");
  const i = parameter(b, 1, arrayShape("s32", [6, 37]), "i");
  const rowSum = reduce(x, constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), [1]);
  const colMax = reduce(x, constantR0(b, "f32", -Infinity), scalarReducer(b, "maximum", "f32"), [0]);
  const rowMinInt = reduce(i, constantR0(b, "s32", 2 ** 31 - 1), scalarReducer(b, "minimum", "s32"), [1]);
  const allSumInt = reduce(i, constantR0(b, "s32", 5), scalarReducer(b, "add", "s32"), [0, 1]);
  const big = parameter(b, 2, arrayShape("s32", [70000]), "big");
  const bigSum = reduce(big, constantR0(b, "s32", 0), scalarReducer(b, "add", "s32"), [0]);
  const c = b.build(tuple(b, [rowSum, colMax, rowMinInt, allSumInt, bigSum]));
  const xs = Array.from({ length: 6 * 37 }, (_, k) => (k === 40 ? NaN : k === 41 ? -0 : Math.cos(k * 1.7) * 100));
  const is = Array.from({ length: 6 * 37 }, (_, k) => (k * 2654435761) | 0);
  const bigs = Array.from({ length: 70000 }, (_, k) => (k * 40503) % 100003 - 50000);
  const args = [Literal.fromValues("f32", [6, 37], xs), Literal.fromValues("s32", [6, 37], is), Literal.fromValues("s32", [70000], bigs)];
  const { want, got, exe } = await both(c, args);
  assert.deepEqual(exe.stats.interpreted, []);
  assert.match(exe.dump(), /workgroups of/, "row reductions run a row per workgroup");
  // The f32 row sum is reassociated (a tree across the workgroup's lanes): rounded; max, min and integers exact.
  const tally: CompareTally = { compared: 0, unbounded: 0 };
  assert.equal(compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, want.elements[0]!.values(), got.elements[0]!.values(), tally), undefined);
  want.elements.slice(1).forEach((w, k) => assertSame(w.arrayShape.elementType, w, got.elements[k + 1]!, `reduction ${k + 1}`));

  const s = new XlaBuilder("softmax");
  const v = parameter(s, 0, arrayShape("f32", [5, 300]), "v");
  const m = reduce(v, constantR0(s, "f32", -Infinity), scalarReducer(s, "maximum", "f32"), [1]);
  const e = exp(sub(v, m, [0]));
  const softmax = s.build(div(e, reduce(e, constantR0(s, "f32", 0), scalarReducer(s, "add", "f32"), [1]), [0]));
  const vs = Array.from({ length: 5 * 300 }, (_, k) => Math.sin(k * 0.37) * 8);
  const r = await both(softmax, [Literal.fromValues("f32", [5, 300], vs)]);
  assert.equal(r.exe.stats.kernels, 1, "softmax is one kernel");
  assert.deepEqual(r.exe.stats.interpreted, [], "and no interpreted step");
  const diff = compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, r.want.values(), r.got.values(), tally);
  assert.equal(diff, undefined);
});

test("a row's workgroup: at least 16 elements a lane, a power of two from 64 up to the adapter's largest workgroup", () => {
  const sizes = (limit: number): number[] => [100, 1023, 1024, 2047, 2048, 4096, 65536].map((n) => rowWorkgroupSize(n, { ...DEFAULT_GPU_LIMITS, maxComputeInvocationsPerWorkgroup: limit, maxComputeWorkgroupSizeX: limit }));
  assert.deepEqual(sizes(256), [64, 64, 64, 64, 128, 256, 256]);
  assert.deepEqual(sizes(1024), [64, 64, 64, 64, 128, 256, 1024]);
});

test("layer norm and log-softmax are one kernel each, a row per workgroup, within rounding of the interpreter", { skip }, async () => {
  const n = 1500;
  const layerNorm = layerNormOf(3, n);
  const l = new XlaBuilder("logsoftmax");
  const y = parameter(l, 0, arrayShape("f32", [3, n]), "y");
  const shifted = sub(y, reduce(y, constantR0(l, "f32", -Infinity), scalarReducer(l, "maximum", "f32"), [1]), [0]);
  const logSoftmax = l.build(sub(shifted, log(reduce(exp(shifted), constantR0(l, "f32", 0), scalarReducer(l, "add", "f32"), [1])), [0]));
  const arg = Literal.fromValues("f32", [3, n], Array.from({ length: 3 * n }, (_, k) => Math.cos(k * 0.91) * 5 + (k % 7)));
  for (const c of [layerNorm, logSoftmax]) {
    const { want, got, exe } = await both(c, [arg]);
    assert.equal(exe.stats.kernels, 1, `${c.name} is one kernel`);
    assert.deepEqual(exe.stats.interpreted, []);
    // 1500 elements a row: 64 lanes of 23 (128 would give 11, under the 16 a lane the workgroup size asks for).
    assert.match(exe.dump(), /3 workgroups of 64/);
    const tally: CompareTally = { compared: 0, unbounded: 0 };
    assert.equal(compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, want.values(), got.values(), tally), undefined, c.name);
  }
});

/** Layer norm (no scale or offset) over the rows of an f32 [rows, n] parameter. */
function layerNormOf(rows: number, n: number): Computation {
  const b = new XlaBuilder("layernorm");
  const x = parameter(b, 0, arrayShape("f32", [rows, n]), "x");
  const mean = div(reduce(x, constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), [1]), constantR0(b, "f32", n));
  const d = sub(x, mean, [0]);
  const variance = div(reduce(mul(d, d), constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), [1]), constantR0(b, "f32", n));
  return b.build(mul(d, unaryOp("rsqrt", add(variance, constantR0(b, "f32", 1e-5))), [0]));
}

/** A softmax over the rows of a [rows, n] parameter of type t (f16: its reductions in f16). */
function softmaxOf(t: ElementType, rows: number, n: number): Computation {
  const s = new XlaBuilder(`softmax_${t}_${n}`);
  const v = parameter(s, 0, arrayShape(t, [rows, n]), "v");
  const m = reduce(v, constantR0(s, t, -Infinity), scalarReducer(s, "maximum", t), [1]);
  const e = exp(sub(v, m, [0]));
  return s.build(div(e, reduce(e, constantR0(s, t, 0), scalarReducer(s, "add", t), [1]), [0]));
}

/**
 * Runs `f` with the environment variables set as given (undefined: unset), then restores
 * them: once it returns, or, where it returns a promise, once that settles.
 */
function withEnv<T>(vars: Record<string, string | undefined>, f: () => T): T {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>): void => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  let result: T;
  try {
    result = f();
  } catch (e) {
    set(before);
    throw e;
  }
  if (result instanceof Promise) return result.finally(() => set(before)) as T;
  set(before);
  return result;
}

/** `c` compiled for webgpu under the environment variables `vars` (withEnv), which must make it one kernel, and run on `args`: its result and dump. */
function runOneKernel(c: Computation, args: readonly Literal[], vars: Record<string, string | undefined>): Promise<{ got: Literal; dump: string }> {
  return withEnv(vars, async () => {
    const exe = await compile(c, { backend: "webgpu" });
    try {
      assert.equal(exe.stats.kernels, 1, `${c.name}: one kernel`);
      return { got: await exe.run(args), dump: exe.dump() };
    } finally {
      exe.delete();
    }
  });
}

/** Reads of memory in a kernel's WGSL (loads of an operand's row; a row buffer's are reads of workgroup memory). */
const memoryReads = (wgsl: string): number => wgsl.split("\n").filter((l) => /^\s+let .*xk_ld(32|16|8)\(\(k_p/.test(l)).length;

test("a row pipeline keeps its row in workgroup memory where the adapter's limit leaves room: one read of memory an element", () => {
  const plan = (n: number, rowBuffers = true, t: ElementType = "f32"): { what: string; wgsl: string } =>
    withEnv({ XLATS_WEBGPU_ROW_BUFFERS: rowBuffers ? "1" : "0" }, () => {
      const p = planGpuProgram(softmaxOf(t, 2, n), {});
      assert.equal(p.kernels.length, 1);
      return { what: p.kernels[0]!.what ?? "", wgsl: p.kernels[0]!.source };
    });
  // WebGPU's guaranteed 16384 bytes, less the tree's: rows of 1024 keep x and exp(x - max) (8 KiB), rows of 2048 x alone
  // (8 KiB: x and exp would take 16), rows of 4096 nothing (16 KiB) and read memory in each of the three stages, as before.
  const short = plan(1024);
  assert.equal(short.what, "row buffers in workgroup memory: m0 f32[1024], m1 f32[1024]");
  assert.match(short.wgsl, /var<workgroup> m0: array<f32, 1024>;/);
  assert.equal(memoryReads(short.wgsl), 1);
  assert.equal(memoryReads(plan(1024, false).wgsl), 3, "the same kernel without row buffers reads the row in each stage");
  const middle = plan(2048);
  assert.equal(middle.what, "row buffers in workgroup memory: m0 f32[2048]");
  assert.equal(memoryReads(middle.wgsl), 1);
  const long = plan(4096);
  assert.equal(long.what, "");
  assert.equal(memoryReads(long.wgsl), 3);
  assert.equal(long.wgsl, plan(4096, false).wgsl, "a row too long for the buffers keeps the kernel it had");
  // Halves are held as their bits in a 32-bit word, as WGSL holds them (4 bytes an element of the budget), or where
  // that does not fit, packed two to a word (2 bytes): rows of 2048 hold x (8 KiB) and pack exp (4 KiB), rows of 4096
  // pack x (8 KiB; 16 held), rows of 8192 nothing.
  for (const t of ["f16", "bf16"] as const) {
    const half = plan(1024, true, t);
    assert.equal(half.what, `row buffers in workgroup memory: m0 ${t}[1024], m1 ${t}[1024]`);
    assert.match(half.wgsl, /var<workgroup> m1: array<u32, 1024>;/);
    const middle = plan(2048, true, t);
    assert.equal(middle.what, `row buffers in workgroup memory: m0 ${t}[2048], m1 ${t}[2048] packed`);
    assert.match(middle.wgsl, /var<workgroup> m1: array<u32, 1024>;/);
    assert.equal(memoryReads(middle.wgsl), 1);
    assert.equal(plan(4096, true, t).what, `row buffers in workgroup memory: m0 ${t}[4096] packed`);
    assert.equal(plan(8192, true, t).what, "");
  }
  // A pipeline whose rows run an invocation each (an f16 product, in the interpreter's order) keeps no row buffer.
  const sequential = parseHlo(`HloModule p
mul_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT m = f16[] multiply(a, b)
}
ENTRY f {
  x = f16[4,64] parameter(0)
  one = f16[] constant(1)
  p = f16[4] reduce(x, one), dimensions={1}, to_apply=mul_f16
  pb = f16[4,64] broadcast(p), dimensions={0}
  ROOT r = f16[4,64] divide(x, pb)
}`);
  const k = wgslFusionKernel(sequential.entry, DEFAULT_GPU_LIMITS);
  assert.ok(!("declined" in k));
  assert.equal(k.invocationsPerUnit, 1);
  assert.doesNotMatch(k.source, /\bm0\b/);
});

test("row buffers leave the bits as they were: softmax (f32, f16 packed), layer norm, and a row too long for them, with and without", { skip }, async () => {
  const gpu = await gpuContext();
  /** The program compiled with row buffers (`on`) or without, run; its result and its kernel's dump line. */
  const runWith = (c: Computation, args: readonly Literal[], on: boolean): Promise<{ got: Literal; dump: string }> => runOneKernel(c, args, { XLATS_WEBGPU_ROW_BUFFERS: on ? "1" : "0" });
  const n = 1500;
  const layerNorm = layerNormOf(3, n);
  // A row longer than the adapter's workgroup memory holds: no buffer, the kernel of before; an f16 row that fits
  // only packed two to a word. (f16 held in words is half.test.ts's softmax, against the interpreter; each f16
  // pipeline takes about 2 s to compile on SwiftShader.)
  const tooLong = gpu.limits.maxComputeWorkgroupStorageSize / 4 + 64;
  const packedRow = gpu.limits.maxComputeWorkgroupStorageSize / 4;
  const values = (t: ElementType, rows: number, len: number): Literal => Literal.fromValues(t, [rows, len], Array.from({ length: rows * len }, (_, k) => Math.cos(k * 0.91) * 5 + (k % 7)));
  const cases: { c: Computation; arg: Literal; buffered: RegExp | undefined }[] = [
    { c: softmaxOf("f32", 3, 1024), arg: values("f32", 3, 1024), buffered: /m0 f32\[1024\], m1 f32\[1024\]/ },
    { c: softmaxOf("f16", 2, packedRow), arg: values("f16", 2, packedRow), buffered: new RegExp(`m0 f16\\[${packedRow}\\] packed(, subgroup operations)?, 2 workgroups`) },
    { c: layerNorm, arg: values("f32", 3, n), buffered: /memory: m0 f32\[1500\](, subgroup operations)?, 3 workgroups/ },
    { c: softmaxOf("f32", 2, tooLong), arg: values("f32", 2, tooLong), buffered: undefined },
  ];
  for (const { c, arg, buffered } of cases) {
    const on = await runWith(c, [arg], true);
    const off = await runWith(c, [arg], false);
    if (buffered === undefined) assert.doesNotMatch(on.dump, /row buffers/, c.name);
    else assert.match(on.dump, buffered, c.name);
    assert.doesNotMatch(off.dump, /row buffers/, c.name);
    assert.deepEqual(on.got.values().map((v) => bitsOf(arg.elementType, v)), off.got.values().map((v) => bitsOf(arg.elementType, v)), `${c.name}: the same bits with and without row buffers`);
    if (arg.elementType === "f32") {
      const tally: CompareTally = { compared: 0, unbounded: 0 };
      assert.equal(compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, evaluate(c, [arg]).values(), on.got.values(), tally), undefined, c.name);
    }
  }
});

/** A sum over the rows of an f32 [rows, n] parameter. */
function rowSumOf(rows: number, n: number): Computation {
  const b = new XlaBuilder("row_sum");
  const x = parameter(b, 0, arrayShape("f32", [rows, n]), "x");
  return b.build(reduce(x, constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), [1]));
}

test("from rowInvocations rows a row kernel runs a row an invocation (a software adapter's form): no workgroup memory, barrier or subgroup operation", () => {
  const kernelOf = (c: Computation, target: GpuPlanTarget): WgslKernel => {
    const p = planGpuProgram(c, {}, target);
    assert.equal(p.kernels.length, 1, c.name);
    return p.kernels[0]!;
  };
  for (const subgroups of [false, true]) {
    for (const [rows, make] of [[64, (r: number) => softmaxOf("f32", r, 128)], [128, (r: number) => layerNormOf(r, 256)], [100, (r: number) => rowSumOf(r, 700)]] as const) {
      const each = kernelOf(make(rows), { subgroups, rowInvocations: rows });
      assert.equal(each.invocationsPerUnit, 1);
      assert.equal(each.units, rows);
      assert.deepEqual(each.workgroups, [Math.ceil(rows / 64), 1]);
      assert.doesNotMatch(each.source, /workgroupBarrier|var<workgroup>|subgroup/);
      // One row fewer, or a GPU (no rowInvocations): a row per workgroup, the kernel of before.
      const fewer = kernelOf(make(rows - 1), { subgroups, rowInvocations: rows });
      assert.equal(fewer.invocationsPerUnit, 64);
      assert.equal(fewer.source, kernelOf(make(rows - 1), { subgroups }).source);
      assert.equal(kernelOf(make(rows), { subgroups }).invocationsPerUnit, 64);
    }
  }
  assert.match(dumpGpuProgram(planGpuProgram(softmaxOf("f32", 512, 128), {}, { rowInvocations: 64 })), /kernel \S+ \(WGSL kernel 0, 512 invocations\)/);
  // The threshold: SOFTWARE_INVOCATION_ROWS on a software adapter, never on a GPU, or what the variable says.
  withEnv({ XLATS_WEBGPU_ROW_INVOCATIONS: undefined }, () => {
    assert.equal(rowInvocationsFor(true), SOFTWARE_INVOCATION_ROWS);
    assert.equal(rowInvocationsFor(false), Infinity);
  });
  withEnv({ XLATS_WEBGPU_ROW_INVOCATIONS: "5" }, () => assert.equal(rowInvocationsFor(false), 5));
  withEnv({ XLATS_WEBGPU_ROW_INVOCATIONS: "never" }, () => assert.equal(rowInvocationsFor(true), Infinity));
  for (const bad of ["0", "-3", "2.5", "all"]) {
    withEnv({ XLATS_WEBGPU_ROW_INVOCATIONS: bad }, () => assert.throws(() => rowInvocationsFor(true), (e: unknown) => e instanceof CompileError && /XLATS_WEBGPU_ROW_INVOCATIONS must be a positive integer or "never"/.test((e as Error).message)));
  }
  // Which adapter's forms the kernels take: the adapter's own, or what XLATS_WEBGPU_KERNEL_FORMS says.
  for (const software of [true, false]) {
    withEnv({ XLATS_WEBGPU_KERNEL_FORMS: undefined }, () => assert.equal(softwareKernelForms(software), software));
    withEnv({ XLATS_WEBGPU_KERNEL_FORMS: "gpu" }, () => assert.equal(softwareKernelForms(software), false));
    withEnv({ XLATS_WEBGPU_KERNEL_FORMS: "software" }, () => assert.equal(softwareKernelForms(software), true));
  }
  withEnv({ XLATS_WEBGPU_KERNEL_FORMS: "cpu" }, () => assert.throws(() => softwareKernelForms(true), (e: unknown) => e instanceof CompileError && /XLATS_WEBGPU_KERNEL_FORMS must be "gpu" or "software", not "cpu"/.test((e as Error).message)));
});

test("a row an invocation computes what the interpreter does, as a row per workgroup does: softmax, layer norm, a row sum", { skip }, async () => {
  const values = (rows: number, len: number): Literal => Literal.fromValues("f32", [rows, len], Array.from({ length: rows * len }, (_, k) => Math.cos(k * 0.91) * 5 + (k % 7)));
  const cases = [softmaxOf("f32", 70, 1024), layerNormOf(128, 300), rowSumOf(65, 1000)];
  for (const c of cases) {
    const [rows, n] = (c.parameters[0]!.shape as { dimensions: readonly number[] }).dimensions as [number, number];
    const arg = values(rows, n);
    const want = evaluate(c, [arg]).values();
    for (const [setting, form] of [["1", new RegExp(`\\(WGSL kernel 0, ${rows} invocations\\)`)], ["never", /workgroups of \d+/]] as const) {
      const { got, dump } = await runOneKernel(c, [arg], { XLATS_WEBGPU_ROW_INVOCATIONS: setting });
      assert.match(dump, form, `${c.name}, XLATS_WEBGPU_ROW_INVOCATIONS=${setting}`);
      const tally: CompareTally = { compared: 0, unbounded: 0 };
      assert.equal(compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, want, got.values(), tally), undefined, `${c.name}, XLATS_WEBGPU_ROW_INVOCATIONS=${setting}`);
    }
  }
});

test("what WGSL cannot compute runs on the host, listed with the reason, and the results are still right", { skip }, async () => {
  const b = new XlaBuilder("host");
  const x = parameter(b, 0, arrayShape("f64", [4]), "x");
  const a = parameter(b, 1, arrayShape("f32", [3, 4]), "a");
  const c = b.build(tuple(b, [add(mul(x, x), x), tanh(a), convertElementType(x, "f32")]));
  const args = [
    Literal.fromValues("f64", [4], [1.5, -2, 1e300, NaN]),
    Literal.fromValues("f32", [3, 4], Array.from({ length: 12 }, (_, k) => k / 7 - 0.8)),
  ];
  const { want, got, exe } = await both(c, args);
  const reasons = exe.stats.interpreted.map((s) => s.why).join("; ");
  assert.match(reasons, /WGSL has no f64/);
  assertSame("f64", want.elements[0]!, got.elements[0]!, "f64 on the host");
  assertSame("f32", want.elements[2]!, got.elements[2]!, "f64 -> f32 on the host");
  const tally: CompareTally = { compared: 0, unbounded: 0 };
  assert.equal(compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, want.elements[1]!.values(), got.elements[1]!.values(), tally), undefined);
});

test("execute keeps results on the GPU until asked; device arrays feed another run", { skip }, async () => {
  const b = new XlaBuilder("twice");
  const x = parameter(b, 0, arrayShape("f32", [1000]), "x");
  const exe = await compile(b.build(add(x, x)), { backend: "webgpu" });
  try {
    const input = exe.bufferFromLiteral(Literal.fromValues("f32", [1000], Array.from({ length: 1000 }, (_, k) => k)));
    const [once] = await exe.execute([input]);
    const [twice] = await exe.execute([once!]);
    const values = (await twice!.toLiteral()).values();
    assert.deepEqual(values.slice(0, 4), [0, 4, 8, 12]);
    assert.equal(values[999], 3996);
    for (const a of [input, once!, twice!]) a.delete();
  } finally {
    exe.delete();
  }
});

/** The random programs' type lists: the generator's default, and the halves (f16 and bf16 computed in f32 on the GPU, bf16 arithmetic flush-safe) among the types they convert to and from. */
const RANDOM_TYPES: readonly { readonly what: string; readonly seeds: number; readonly options: RandomProgramOptions }[] = [
  { what: "every default type and family", seeds: 30, options: {} },
  { what: "f16 and bf16 beside pred, s32 and f32", seeds: 20, options: { elementTypes: ["pred", "s32", "f16", "bf16", "f32"] } },
];

for (const { what, seeds: count, options } of RANDOM_TYPES) test(`random programs (${what}): compiled on WebGPU equals interpreted`, { skip }, async () => {
  const failures: string[] = [];
  const tally: CompareTally = { compared: 0, unbounded: 0 };
  let kernels = 0;
  const seeds = Array.from({ length: count }, (_, k) => 1 + k);
  for (const seed of seeds) {
    const { computation, args } = randomProgram(seed, options);
    const hlo = (): string => printHlo(new HloModule(`random_${seed}`, computation));
    const expected = evaluate(computation, args);
    let actual: Literal;
    try {
      const exe = await compile(computation, { backend: "webgpu" });
      kernels += exe.stats.kernels;
      try {
        actual = await exe.run(args);
      } finally {
        exe.delete();
      }
    } catch (e) {
      failures.push(`seed ${seed}: ${(e as Error).message}\n${hlo()}`);
      continue;
    }
    const cone = cones(computation, [], WEBGPU_ULP_BOUNDS);
    const root = computation.root;
    const leaves = root.opcode === "tuple" ? root.operands : [root];
    const wants = root.opcode === "tuple" ? expected.elements : [expected];
    const gots = root.opcode === "tuple" ? actual.elements : [actual];
    for (let k = 0; k < leaves.length; k++) {
      const t = elementTypeOf(leaves[k]!);
      if (t === undefined) continue;
      const diff = compareLeaf(t, cone.get(leaves[k]!)!, flushed(t, wants[k]!.values(), gots[k]!.values()), gots[k]!.values(), tally);
      if (diff !== undefined) {
        failures.push(`seed ${seed}: output ${k}: ${diff}\n${hlo()}`);
        break;
      }
    }
  }
  console.log(`webgpu differential (${what}): ${seeds.length} programs, ${kernels} kernels, ${tally.compared} elements compared, ${tally.unbounded} not`);
  assert.deepEqual(failures, []);
  assert.ok(kernels > seeds.length, `only ${kernels} kernels`);
});
