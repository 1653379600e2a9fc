// Complex numbers in compiled kernels (kernel/complex_ops.ts): each op on c64 and c128
// runs on wasm, native (where a C compiler works) and webgpu (where it can run) against
// the interpreter, over edge values in either part (signed zeros, infinities, NaN,
// subnormals, the largest and smallest magnitudes), bit for bit (NaN payloads aside,
// which the interpreter does not promise; sums within a reassociated sum's bound). Each
// test also checks where the op ran: a kernel with no interpreted step where the
// backend compiles it, the interpreter where it declines (WGSL has no f64: c128), so a
// fallback, or a new kernel, fails the test until its expectation changes. On webgpu
// c64 multiply is bit-exact too (its fmas on integers), c64 abs and sign, computed in
// f32 there, are within 1 and 2 ulps, and c64 divide (f32 there: kernel/complex_f32.ts)
// within 6 ulps of its result's larger part (webgpu/complex_functions.test.ts measures
// it, and the transcendentals, over many more values).

import { test } from "node:test";
import assert from "node:assert/strict";
import { compile, compileSync } from "../../src/compiler/index.js";
import { nativeToolchain } from "../../src/compiler/native/toolchain.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { Literal } from "../../src/types/literal.js";
import type { ElementType } from "../../src/types/element_type.js";
import { webgpuSkip } from "./webgpu/gpu_available.js";
import { elementCount } from "../../src/types/shape.js";

type Backend = "wasm" | "native" | "webgpu";

const toolchain = nativeToolchain();
const BACKENDS: readonly Backend[] = [
  "wasm", ...(typeof toolchain === "string" ? [] : ["native" as const]), ...(webgpuSkip === false ? ["webgpu" as const] : []),
];
if (typeof toolchain === "string") console.log(`# native skipped: ${toolchain}`);
if (webgpuSkip !== false) console.log(`# webgpu skipped: ${webgpuSkip}`);

/** Edge values of a part, for c64 (f32) and c128 (f64). */
const EDGES: Record<"f32" | "f64", readonly number[]> = {
  f32: [0, -0, 1, -1, 1.5, -0.1, Infinity, -Infinity, NaN, 1e-45, -1.2e-38, 3.4028234663852886e38, -2.5e-20, 7e19],
  f64: [0, -0, 1, -1, 1.5, -0.1, Infinity, -Infinity, NaN, 5e-324, -2.2e-308, 1.7976931348623157e308, -2.5e-160, 7e150],
};

const partType = (t: "c64" | "c128"): "f32" | "f64" => (t === "c64" ? "f32" : "f64");
const mlirPart = (t: "c64" | "c128"): string => `complex<${partType(t)}>`;

/** Every complex value whose parts are both edge values (the first n of them). */
function edgeValues(t: "c64" | "c128", n: number): { re: number; im: number }[] {
  const e = EDGES[partType(t)].slice(0, n);
  return e.flatMap((re) => e.map((im) => ({ re, im })));
}

/** Pairs of edge values, every one with every one, plus values whose products cancel (ar·br ≈ ai·bi: the fused rounding shows). */
function edgePairs(t: "c64" | "c128"): [{ re: number; im: number }[], { re: number; im: number }[]] {
  const v = edgeValues(t, EDGES.f32.length);
  const xs = v.flatMap((a) => v.map(() => a));
  const ys = v.flatMap(() => v);
  const round = partType(t) === "f32" ? Math.fround : (x: number): number => x;
  for (let i = 1; i <= 200; i++) {
    const a = round(1 + i / 1024), b = round(1 + (i * 7) / 8192), c = round(1 - i / 4096);
    xs.push({ re: a, im: round(b * (1 + 2 ** -20)) });
    ys.push({ re: round(c * b), im: round(a * c) });
  }
  return [xs, ys];
}

const lit = (t: ElementType, values: readonly ({ re: number; im: number } | number | boolean)[]): Literal => Literal.fromValues(t, [values.length], values as never);

const isSubnormal = (v: number): boolean => v !== 0 && Math.abs(v) < 2 ** -126;

/**
 * Where `a` differs from the interpreter's `b`, part by part (Object.is: NaN equals NaN,
 * +0 differs from -0); undefined where it does not. With `flushed` (f32 arithmetic on
 * webgpu, which WGSL lets flush subnormals: docs/backends.md "f32 subnormals") a part
 * may also be the interpreter's on operands whose subnormal parts are zeros, and a
 * subnormal part may be a zero.
 */
function difference(a: Literal, b: Literal, flushed?: Literal, tolerance = 0, ulps = 0, magnitudeUlps = 0): string | undefined {
  const xs = a.values();
  const ys = b.values();
  const fs = flushed?.values();
  if (xs.length !== ys.length) return `lengths ${xs.length} and ${ys.length}`;
  const parts = (v: unknown): number[] => (typeof v === "object" ? [(v as { re: number }).re, (v as { im: number }).im] : [Number(v)]);
  for (let i = 0; i < xs.length; i++) {
    const [x, y, f] = [parts(xs[i]), parts(ys[i]), fs === undefined ? undefined : parts(fs[i])];
    const larger = Math.max(...y.map(Math.abs));
    const same = x.every((v, k) => Object.is(v, y[k]) || Math.abs(v - y[k]!) <= tolerance || withinUlps(v, y[k]!, ulps)
      // (a larger part past f32's range: its ulp is at least 2^105)
      || (magnitudeUlps > 0 && Number.isFinite(v) && Number.isFinite(y[k]!) && larger > 0 && Math.abs(v - y[k]!) <= magnitudeUlps * (Number.isFinite(larger) ? ulpF32(larger) : 2 ** 105))
      || (f !== undefined && (Object.is(v, f[k]) || (v === 0 && (isSubnormal(y[k]!) || isSubnormal(f[k]!))))));
    if (!same) return `element ${i}: ${JSON.stringify(xs[i], show)} vs the interpreter's ${JSON.stringify(ys[i], show)}`;
  }
  return undefined;
}

/** An f32 ulp at finite nonzero w's binade (2^-149 in the subnormals). */
const ulpF32 = (w: number): number => (Math.abs(w) < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(Math.abs(w))) - 23));

/** Whether finite v is within `ulps` ulps of finite nonzero w's binade, of w's sign. */
function withinUlps(v: number, w: number, ulps: number): boolean {
  if (ulps === 0 || !Number.isFinite(v) || !Number.isFinite(w) || w === 0 || Math.sign(v) !== Math.sign(w)) return false;
  return Math.abs(v - w) <= ulps * ulpF32(w);
}

/** `lit` with its subnormal float or complex parts made zeros of their sign. */
function flushSubnormals(l: Literal): Literal {
  const t = l.shape.kind === "array" ? l.shape.elementType : undefined;
  if (t !== "c64" && t !== "f32") return l;
  const zero = (v: number): number => (isSubnormal(v) ? (v < 0 ? -0 : 0) : v);
  const values = l.values().map((v) => (typeof v === "object" ? { re: zero(v.re), im: zero(v.im) } : zero(v as number)));
  return Literal.fromValues(t, l.shape.kind === "array" ? l.shape.dimensions : [], values as never);
}

const show = (_: string, v: unknown): unknown => (typeof v === "number" && !Number.isFinite(v) ? String(v) : Object.is(v, -0) ? "-0" : v);

interface Case {
  readonly name: string;
  readonly text: string;
  readonly args: readonly Literal[];
  /** The backends that must run it as kernels only (the others: its complex op on the interpreter). */
  readonly compiled: readonly Backend[];
  /** f32 arithmetic: on webgpu subnormals may flush (see `difference`). */
  readonly arithmetic?: boolean;
  /** On webgpu, each finite nonzero part within this many ulps of the interpreter's (c64 forms computed in f32 there, docs/numerics.md). */
  readonly gpuUlps?: number;
  /** On webgpu, each finite part within this many ulps of the larger magnitude of the interpreter's two parts. */
  readonly gpuMagnitudeUlps?: number;
  /** A sum of this many terms, which a kernel may reassociate: each part within sumBound of the interpreter's. */
  readonly sumTerms?: number;
}

/** A reassociated sum's bound, as a real sum's: |got - want| ≤ 2·n·ε·Σ|terms| (here Σ|terms| ≤ n·max|term|, max|term| ≤ 2). */
const sumBound = (t: "c64" | "c128", n: number): number => 2 * n * (t === "c64" ? 2 ** -23 : 2 ** -52) * n * 2;

const ALL: readonly Backend[] = ["wasm", "native", "webgpu"];
const CPU: readonly Backend[] = ["wasm", "native"];

/** Parts of many magnitudes, both signs (a fixed sequence: a failure repeats). */
function spread(t: "c64" | "c128", n: number): { re: number; im: number }[] {
  const round = partType(t) === "f32" ? Math.fround : (x: number): number => x;
  const span = partType(t) === "f32" ? 140 : 1000;
  let seed = 12345;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const part = (): number => round((next() - 0.5) * 2 ** Math.floor(next() * span - span / 2));
  return Array.from({ length: n }, () => ({ re: part(), im: part() }));
}

function unaryCase(name: string, t: "c64" | "c128", op: string, result: string, compiled: readonly Backend[]): Case {
  const v = [...edgeValues(t, EDGES.f32.length), ...spread(t, 4000)];
  const T = `tensor<${v.length}x${mlirPart(t)}>`;
  const R = `tensor<${v.length}x${result}>`;
  return {
    name, compiled, args: [lit(t, v)],
    text: `func.func @main(%x: ${T}) -> ${R} {\n  %0 = ${op} %x : (${T}) -> ${R}\n  return %0 : ${R}\n}`,
  };
}

function binaryCase(name: string, t: "c64" | "c128", op: string, result: string | undefined, compiled: readonly Backend[], arithmetic = false): Case {
  const [xs, ys] = edgePairs(t);
  const T = `tensor<${xs.length}x${mlirPart(t)}>`;
  const R = result === undefined ? T : `tensor<${xs.length}x${result}>`;
  return {
    name, compiled, arithmetic, args: [lit(t, xs), lit(t, ys)],
    text: `func.func @main(%x: ${T}, %y: ${T}) -> ${R} {\n  %0 = ${op} %x, %y : (${T}, ${T}) -> ${R}\n  return %0 : ${R}\n}`,
  };
}

function casesOf(t: "c64" | "c128"): Case[] {
  const p = partType(t);
  const c = mlirPart(t);
  const gpu = t === "c64" ? ALL : CPU; // WGSL has no f64
  const other = t === "c64" ? "c128" : "c64";
  const cases = [
    binaryCase(`${t} add`, t, "stablehlo.add", undefined, gpu, true),
    binaryCase(`${t} subtract`, t, "stablehlo.subtract", undefined, gpu, true),
    binaryCase(`${t} multiply`, t, "stablehlo.multiply", undefined, t === "c64" ? ALL : []),
    { ...binaryCase(`${t} divide`, t, "stablehlo.divide", undefined, gpu, true), gpuMagnitudeUlps: 6 },
    binaryCase(`${t} maximum`, t, "stablehlo.maximum", undefined, gpu),
    binaryCase(`${t} minimum`, t, "stablehlo.minimum", undefined, gpu),
    binaryCase(`${t} compare EQ`, t, "stablehlo.compare EQ,", "i1", gpu),
    binaryCase(`${t} compare NE`, t, "stablehlo.compare NE,", "i1", gpu),
    unaryCase(`${t} negate`, t, "stablehlo.negate", c, gpu),
    { ...unaryCase(`${t} abs`, t, "stablehlo.abs", p, gpu), arithmetic: true, gpuUlps: 1 },
    { ...unaryCase(`${t} sign`, t, "stablehlo.sign", c, gpu), arithmetic: true, gpuUlps: 2 },
    unaryCase(`${t} real`, t, "stablehlo.real", p, gpu),
    unaryCase(`${t} imag`, t, "stablehlo.imag", p, gpu),
    unaryCase(`${t} convert to ${other}`, t, "stablehlo.convert", mlirPart(other), CPU),
    unaryCase(`${t} convert to ${p}`, t, "stablehlo.convert", p, gpu),
    unaryCase(`${t} convert to s32`, t, "stablehlo.convert", "i32", gpu),
    unaryCase(`${t} convert to pred`, t, "stablehlo.convert", "i1", gpu),
  ];
  const e = EDGES[p];
  const n = e.length;
  const R = `tensor<${n}x${p}>`;
  const T = `tensor<${n}x${c}>`;
  const xs = edgeValues(t, n).slice(0, n);
  cases.push(
    {
      name: `${t} complex and conj (complex(real x, -imag x))`, compiled: gpu, args: [lit(p, e), lit(p, [...e].reverse()), lit(t, xs)],
      text: `func.func @main(%a: ${R}, %b: ${R}, %x: ${T}) -> (${T}, ${T}) {
  %0 = stablehlo.complex %a, %b : ${T}
  %1 = stablehlo.real %x : (${T}) -> ${R}
  %2 = stablehlo.imag %x : (${T}) -> ${R}
  %3 = stablehlo.negate %2 : ${R}
  %4 = stablehlo.complex %1, %3 : ${T}
  return %0, %4 : ${T}, ${T}
}`,
    },
    {
      name: `${t} convert from ${p}, s32 and pred`, compiled: gpu,
      args: [lit(p, e), lit("s32", e.map((_, i) => (i * 0x1234567) | 0)), lit("pred", e.map((_, i) => i % 3 === 0))],
      text: `func.func @main(%a: ${R}, %b: tensor<${n}xi32>, %c: tensor<${n}xi1>) -> (${T}, ${T}, ${T}) {
  %0 = stablehlo.convert %a : (${R}) -> ${T}
  %1 = stablehlo.convert %b : (tensor<${n}xi32>) -> ${T}
  %2 = stablehlo.convert %c : (tensor<${n}xi1>) -> ${T}
  return %0, %1, %2 : ${T}, ${T}, ${T}
}`,
    },
    {
      name: `${t} iota along each dimension, fused with an add`, compiled: gpu, args: [lit(t, edgeValues(t, 3).slice(0, 6))],
      text: `func.func @main(%x: tensor<6x${c}>) -> (tensor<6x${c}>, tensor<3x2x${c}>) {
  %i = stablehlo.iota dim = 0 : tensor<6x${c}>
  %s = stablehlo.add %i, %x : tensor<6x${c}>
  %j = stablehlo.iota dim = 1 : tensor<3x2x${c}>
  return %s, %j : tensor<6x${c}>, tensor<3x2x${c}>
}`,
    },
    {
      name: `${t} select`, compiled: gpu, args: [lit("pred", e.map((_, i) => i % 2 === 0)), lit(t, xs), lit(t, [...xs].reverse())],
      text: `func.func @main(%p: tensor<${n}xi1>, %x: ${T}, %y: ${T}) -> ${T} {
  %0 = stablehlo.select %p, %x, %y : (tensor<${n}xi1>, ${T}, ${T}) -> ${T}
  return %0 : ${T}
}`,
    },
  );
  return cases;
}

/** Sums of complex values (with an add and a negate fused around them) over rows, columns, all, and two of three dimensions. */
function sumCases(t: "c64" | "c128"): Case[] {
  const c = mlirPart(t);
  const shapes: [number[], number[], number[]][] = [[[8, 300], [1], [8]], [[300, 8], [0], [8]], [[1000], [0], []], [[6, 20, 7], [0, 2], [20]]];
  const R = 16, C = 300;
  const T = `tensor<${R}x${C}x${c}>`, S = `tensor<${R}x${c}>`;
  const rows = Literal.fromValues(t, [R, C], Array.from({ length: R * C }, (_, i) => ({ re: Math.sin(i), im: Math.cos(3 * i) })) as never);
  const pipelines: Case[] = [
    {
      name: `${t} negate stored and summed by one kernel (a multi-output reduction)`, compiled: t === "c64" ? ALL : CPU, sumTerms: C, args: [rows],
      text: `func.func @main(%x: ${T}) -> (${T}, ${S}) {
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<${c}>
  %e = stablehlo.negate %x : ${T}
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (${T}, tensor<${c}>) -> ${S}
  return %e, %s : ${T}, ${S}
}`,
    },
    {
      name: `${t} x - sum(x) along rows`, compiled: t === "c64" ? ALL : CPU, sumTerms: C, args: [rows],
      text: `func.func @main(%x: ${T}) -> (${T}, ${S}) {
  %z = stablehlo.constant dense<(0.0, 0.0)> : tensor<${c}>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (${T}, tensor<${c}>) -> ${S}
  %b = stablehlo.broadcast_in_dim %s, dims = [0] : (${S}) -> ${T}
  %d = stablehlo.subtract %x, %b : ${T}
  return %d, %s : ${T}, ${S}
}`,
    },
  ];
  return [...pipelines, ...shapes.map(([dims, reduced, out]) => {
    const n = elementCount(dims);
    const T = `tensor<${dims.join("x")}x${c}>`;
    const O = `tensor<${out.map((d) => `${d}x`).join("")}${c}>`;
    const values = (s: number): Literal => Literal.fromValues(t, dims, Array.from({ length: n }, (_, i) => ({ re: Math.sin(i * s), im: Math.cos(i + s) })) as never);
    return {
      name: `${t} sum over dimensions [${reduced.join(", ")}] of [${dims.join(", ")}]`, compiled: t === "c64" ? ALL : CPU,
      sumTerms: n / elementCount(out), args: [values(1), values(2)],
      text: `func.func @main(%x: ${T}, %y: ${T}) -> ${O} {
  %m = stablehlo.add %x, %y : ${T}
  %z = stablehlo.constant dense<(0.5, -0.25)> : tensor<${c}>
  %r = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [${reduced.join(", ")}] : (${T}, tensor<${c}>) -> ${O}
  %o = stablehlo.negate %r : ${O}
  return %o : ${O}
}`,
    };
  })];
}

/** Index ops and constants on complex values in one fusion: the component index must travel through each. */
function indexCase(): Case {
  const rows = 3, cols = 5;
  const x = Array.from({ length: rows * cols }, (_, i) => ({ re: i - 7 + 0.25, im: i % 4 === 0 ? -0 : 2 * i + 0.5 }));
  const y = Array.from({ length: cols }, (_, i) => ({ re: i / 3, im: -i }));
  const M = `tensor<${rows}x${cols}xcomplex<f32>>`;
  const MT = `tensor<${cols}x${rows}xcomplex<f32>>`;
  const V = `tensor<${cols}xcomplex<f32>>`;
  return {
    name: "c64 transpose, broadcast, slice, reverse, pad, concatenate and a constant table in one fusion", compiled: ALL, arithmetic: true,
    args: [Literal.fromValues("c64", [rows, cols], x as never), lit("c64", y)],
    text: `func.func @main(%x: ${M}, %y: ${V}) -> ${MT} {
  %t = stablehlo.transpose %x, dims = [1, 0] : (${M}) -> ${MT}
  %b = stablehlo.broadcast_in_dim %y, dims = [0] : (${V}) -> ${MT}
  %s = stablehlo.add %t, %b : ${MT}
  %r = stablehlo.reverse %s, dims = [1] : ${MT}
  %sl = stablehlo.slice %r [0:5, 1:3] : (${MT}) -> tensor<5x2xcomplex<f32>>
  %z = stablehlo.constant dense<(1.5, -2.0)> : tensor<complex<f32>>
  %p = stablehlo.pad %sl, %z, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<5x2xcomplex<f32>>, tensor<complex<f32>>) -> ${MT}
  %k = stablehlo.constant dense<[[(1.0, 2.0), (0.0, -0.0), (3.0, 4.0)], [(5.0, 6.0), (7.0, 8.0), (9.0, 10.0)], [(0.5, 0.25), (-1.0, 1.0), (2.0, -2.0)], [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0)], [(2.0, 2.0), (2.0, 2.0), (2.0, 3.0)]]> : ${MT}
  %q = stablehlo.subtract %p, %k : ${MT}
  %c = stablehlo.concatenate %q, %t, dim = 1 : (${MT}, ${MT}) -> tensor<${cols}x6xcomplex<f32>>
  %sc = stablehlo.slice %c [0:5, 2:5] : (tensor<${cols}x6xcomplex<f32>>) -> ${MT}
  %o = stablehlo.negate %sc : ${MT}
  return %o : ${MT}
}`,
  };
}

/** Reshape and dynamic slice of complex values, with a scalar complex constant broadcast and a scalar predicate. */
function reshapeCase(): Case {
  const x = Array.from({ length: 24 }, (_, i) => ({ re: i / 4 - 2, im: i % 3 === 0 ? -0 : 1 / (i + 1) }));
  return {
    name: "c64 reshape, dynamic slice, a broadcast scalar constant and a scalar predicate in one fusion", compiled: ALL, arithmetic: true,
    args: [Literal.fromValues("c64", [4, 6], x as never), Literal.fromValues("s32", [], [1]), Literal.fromValues("s32", [], [7]), Literal.fromValues("pred", [], [false])],
    text: `func.func @main(%x: tensor<4x6xcomplex<f32>>, %i: tensor<i32>, %j: tensor<i32>, %p: tensor<i1>) -> tensor<3x4xcomplex<f32>> {
  %r = stablehlo.reshape %x : (tensor<4x6xcomplex<f32>>) -> tensor<6x4xcomplex<f32>>
  %d = stablehlo.dynamic_slice %r, %i, %j, sizes = [3, 4] : (tensor<6x4xcomplex<f32>>, tensor<i32>, tensor<i32>) -> tensor<3x4xcomplex<f32>>
  %c = stablehlo.constant dense<(0.75, -1.25)> : tensor<complex<f32>>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<complex<f32>>) -> tensor<3x4xcomplex<f32>>
  %a = stablehlo.add %d, %b : tensor<3x4xcomplex<f32>>
  %s = stablehlo.select %p, %d, %a : (tensor<i1>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  return %s : tensor<3x4xcomplex<f32>>
}`,
  };
}

async function runOn(backend: Backend, c: Case): Promise<void> {
  const module = parseStableHlo(c.text);
  const want = evaluate(module.entry, c.args);
  const flushed = backend === "webgpu" && c.arithmetic === true ? evaluate(module.entry, c.args.map(flushSubnormals)) : undefined;
  const exe = backend === "webgpu" ? await compile(module, { backend }) : compileSync(module, { backend });
  try {
    const out = await exe.run(c.args);
    const got = out.shape.kind === "tuple" ? out.elements : [out];
    const tuple = (l: Literal): readonly Literal[] => (l.shape.kind === "tuple" ? l.elements : [l]);
    const wanted = tuple(want);
    got.forEach((g, i) => {
      const tolerance = c.sumTerms === undefined ? 0 : sumBound(g.shape.kind === "array" && g.shape.elementType === "c128" ? "c128" : "c64", c.sumTerms);
      const d = difference(g, wanted[i]!, flushed === undefined ? undefined : tuple(flushed)[i], tolerance, backend === "webgpu" ? c.gpuUlps ?? 0 : 0, backend === "webgpu" ? c.gpuMagnitudeUlps ?? 0 : 0);
      assert.equal(d, undefined, `${c.name} on ${backend}, result ${i}: ${d}\n${exe.dump()}`);
    });
    const interpreted = exe.stats.interpreted;
    if (c.compiled.includes(backend)) {
      assert.deepEqual(interpreted, [], `${c.name} on ${backend} must run as kernels only:\n${exe.dump()}`);
      assert.ok(exe.stats.kernels >= 1, exe.dump());
    } else {
      assert.ok(interpreted.length >= 1, `${c.name} on ${backend}: expected on the interpreter, now compiled: update the expectation\n${exe.dump()}`);
    }
  } finally {
    exe.delete();
  }
}

for (const backend of BACKENDS) {
  for (const c of [...casesOf("c64"), ...casesOf("c128"), ...sumCases("c64"), ...sumCases("c128"), indexCase(), reshapeCase()]) {
    test(`${backend}: ${c.name}`, async () => runOn(backend, c));
  }
}
