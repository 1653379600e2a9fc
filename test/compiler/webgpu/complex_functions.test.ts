// c64 divide, exp, expm1, log, log1p, sqrt, rsqrt, cbrt, sin, cos, tanh, tan, logistic
// and power on the GPU (kernel/
// complex_f32.ts: f32 arithmetic and the shared real approximations, WGSL having no
// f64), against the interpreter, which computes them in double and rounds each part
// once. Each finite part of the GPU's result is within BOUNDS[op] ulps of the larger
// magnitude of the interpreter's two parts (for a result (re, im): |Δre|, |Δim| ≤ N ·
// ulp(max(|re|, |im|)), ulp(v) = 2^(⌊log2 v⌋ - 23)); every infinity and NaN is the
// interpreter's exactly (any NaN matches any NaN), as is every zero part of a result
// whose parts are both zero (sign included); a part below 2^-126 may be flushed to
// zero, and an operand's subnormal part read as zero, as WGSL allows. Operands: every pair of a table of specials (and, for divide,
// every pair of those values), random bit patterns of every exponent, values spread over
// moderate magnitudes, and, where the forms take care, values near the unit circle (log),
// near 0 and 1 + z on the unit circle (log1p, expm1), large real parts (exp past e^88;
// sin and cos: large imaginary parts),
// and far-apart parts (divide, sqrt), near the poles (tanh, tan, logistic). Each op must
// run as one kernel, with no host step; their c128 forms must say that the target has no
// f64, and c64 atan2 (on the host) why. power's bound grows with |w log z| (an f32
// exponent carries 2^-24 of it), and past |w log z| = 2^20 (where that bound passes the
// value itself) its elements are counted, not compared. A part beyond f32's range (an infinity where the exact result is finite,
// or the other way) is compared with the exact result, an infinity counted as 2^128.
//
// XLATS_COMPLEX_MEASURE=1 prints each op's worst error in those ulps, with the share of
// parts not the interpreter's bits.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { Literal } from "../../../src/types/literal.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const fromBits = (b: number): number => { U32[0] = b >>> 0; return F32[0]!; };
const fround = Math.fround;

type C = { re: number; im: number };

/** The stated bounds (docs/numerics.md), in ulps of the result's larger part. */
const BOUNDS: Record<string, number> = {
  divide: 6, exp: 8, expm1: 8, log: 4, log1p: 4, sqrt: 4, rsqrt: 8, cbrt: 6, sin: 10, cos: 10, tanh: 8, tan: 8, logistic: 8, power: 16,
};
/** power: ulps per unit of |w log z|, on top of BOUNDS.power. */
const POWER_SLOPE = 8;

const SPECIALS = [
  0, -0, 1, -1, 0.5, -2, Infinity, -Infinity, NaN, fromBits(1), -fromBits(0x7fffff), 2 ** -126, fromBits(0x7f7fffff), -1e30, 1e-30, fround(Math.PI / 2), 88.5, -100,
];

const next = rng(7321);
const sign = (): number => (next() < 0.5 ? -1 : 1);
/** A random finite f32 pattern (every exponent). */
const anyFinite = (): number => { let v: number; do v = fromBits(Math.floor(next() * 2 ** 32)); while (!Number.isFinite(v)); return v; };
/** A random f32 of magnitude in [2^lo, 2^hi). */
const between = (lo: number, hi: number): number => fround(sign() * 2 ** (lo + next() * (hi - lo)));

function specialGrid(): C[] {
  return SPECIALS.flatMap((re) => SPECIALS.map((im) => ({ re, im })));
}

function unaryOperands(op: string): C[] {
  const v = specialGrid();
  for (let i = 0; i < 6000; i++) v.push({ re: anyFinite(), im: anyFinite() });
  for (let i = 0; i < 4000; i++) v.push({ re: between(-12, 8), im: between(-12, 8) });
  for (let i = 0; i < 2000; i++) { const t = 2 ** Math.floor(next() * 250 - 125); v.push({ re: fround(sign() * t * (1 + next())), im: fround(sign() * t * 2 ** -Math.floor(next() * 40)) }); }
  if (op === "log" || op === "log1p" || op === "cbrt") {
    // Near the unit circle (of z, and of 1 + z for log1p): |z| = 1 + tiny.
    for (let i = 0; i < 4000; i++) {
      const theta = next() * 2 * Math.PI;
      const r = 1 + sign() * 2 ** -(next() * 30);
      const [re, im] = [r * Math.cos(theta), r * Math.sin(theta)];
      v.push(op === "log1p" ? { re: fround(re - 1), im: fround(im) } : { re: fround(re), im: fround(im) });
    }
  }
  if (op === "log1p" || op === "expm1") for (let i = 0; i < 3000; i++) v.push({ re: between(-40, 0), im: between(-40, 0) });
  if (op === "sin" || op === "cos") for (let i = 0; i < 2000; i++) v.push({ re: between(-20, 20), im: fround(sign() * (80 + next() * 100)) });
  if (op === "exp" || op === "expm1") for (let i = 0; i < 2000; i++) v.push({ re: fround(sign() * (80 + next() * 100)), im: between(-20, 20) });
  if (op === "tanh" || op === "tan" || op === "logistic") {
    // Near the poles (tanh: x = 0, y = π/2 + kπ; tan the same with the parts swapped;
    // logistic: x = 0, y = (2k + 1)π), and real parts about the tanh's switch at 20.
    for (let i = 0; i < 4000; i++) {
      const k = Math.floor(next() * 2000 - 1000);
      const pole = op === "logistic" ? (2 * k + 1) * Math.PI : (k + 0.5) * Math.PI;
      const z = { re: i % 4 === 0 ? 0 : between(-40, -2), im: fround(pole + sign() * 2 ** -(next() * 20)) };
      v.push(op === "tan" ? { re: z.im, im: z.re } : z);
    }
    for (let i = 0; i < 2000; i++) {
      const z = { re: fround(sign() * (op === "logistic" ? next() * 60 : 15 + next() * 10)), im: between(-10, 10) };
      v.push(op === "tan" ? { re: z.im, im: z.re } : z);
    }
  }
  return v;
}

function divideOperands(): [C[], C[]] {
  const grid = specialGrid();
  const xs: C[] = [], ys: C[] = [];
  for (const a of grid) for (const b of grid) { xs.push(a); ys.push(b); }
  for (let i = 0; i < 20000; i++) { xs.push({ re: anyFinite(), im: anyFinite() }); ys.push({ re: anyFinite(), im: anyFinite() }); }
  for (let i = 0; i < 8000; i++) { xs.push({ re: between(-10, 10), im: between(-10, 10) }); ys.push({ re: between(-10, 10), im: between(-10, 10) }); }
  // Far-apart divisor parts, and quotients near the overflow and underflow edges.
  for (let i = 0; i < 4000; i++) {
    const t = 2 ** Math.floor(next() * 250 - 125);
    xs.push({ re: between(-126, 127), im: between(-126, 127) });
    ys.push({ re: fround(sign() * t * (1 + next())), im: fround(sign() * t * 2 ** -Math.floor(next() * 60)) });
  }
  return [xs, ys];
}

/** Operand pairs for power: every pair of specials, random bit patterns, and moderate |w log z|. */
function powerOperands(): [C[], C[]] {
  const grid = specialGrid();
  const zs: C[] = [], ws: C[] = [];
  for (const a of grid) for (const b of grid) { zs.push(a); ws.push(b); }
  for (let i = 0; i < 6000; i++) { zs.push({ re: anyFinite(), im: anyFinite() }); ws.push({ re: anyFinite(), im: anyFinite() }); }
  for (let i = 0; i < 8000; i++) { zs.push({ re: between(-20, 20), im: between(-20, 20) }); ws.push({ re: between(-10, 3), im: between(-10, 3) }); }
  // Real exponents (each part of log z scaled alone), and z near 1 (log z small).
  for (let i = 0; i < 3000; i++) { zs.push({ re: between(-20, 20), im: between(-20, 20) }); ws.push({ re: between(-8, 4), im: 0 }); }
  for (let i = 0; i < 3000; i++) { zs.push({ re: fround(1 + between(-30, -2)), im: between(-30, -2) }); ws.push({ re: between(-4, 8), im: between(-4, 8) }); }
  return [zs, ws];
}

const ulpOf = (v: number): number => (v < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(v)) - 23));
const tiny = (v: number): boolean => Math.abs(v) < 2 ** -126;
const flush = (v: number): number => (tiny(v) ? (v < 0 || Object.is(v, -0) ? -0 : 0) : v);

/** The interpreter's c64 result, and the same computation in double before its rounding (the program on c128). */
interface Reference { readonly want: readonly C[]; readonly exact: readonly C[] }

/** How an op's results are compared: the bound for element i in ulps of max(|re|, |im|) of the exact result; elements not compared. */
interface Measure {
  readonly bound: (i: number) => number; readonly unbounded?: (i: number) => boolean;
  /** Elements whose parts are compared without their signs, given the interpreter's result (power's ∞ cis θ and 0 cis θ: their signs follow θ's rounding). */
  readonly signFree?: (i: number, want: C) => boolean;
}

/** Part `part` of a result in ulps of the exact result e's larger part, where the interpreter's (want) is finite; else equal. */
function within(g: C, want: C, e: C, part: "re" | "im"): number {
  const [a, b] = [g[part], want[part]];
  if ((Number.isNaN(a) && Number.isNaN(b)) || Object.is(a, b)) return 0;
  const m = Math.max(Math.abs(e.re), Math.abs(e.im));
  // A subnormal result flushed (or one a few ulps above 2^-126 that the GPU's roundings took below it), or a subnormal operand read as zero.
  if (tiny(a) && Math.abs(b) < 2 ** -126 * (1 + 2 ** -16) && !(m === 0 && a === 0 && b === 0)) return 0;
  if (Number.isNaN(a) || Number.isNaN(b) || !Number.isFinite(m) || m === 0) return Infinity;
  // Past f32's range on either side: the exact part, an infinity as 2^128.
  const clamped = (v: number): number => (Number.isFinite(v) ? v : Math.sign(v) * 2 ** 128);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Math.abs(clamped(a) - e[part]) / ulpOf(m);
  return Math.abs(a - b) / ulpOf(m);
}

/**
 * The worst error in ulps, with the count of parts not the interpreter's bits, or the
 * first element out of bounds. Each element may match the interpreter on its operands or
 * on them with their subnormal parts flushed to zeros (WGSL lets a GPU read them so).
 */
function compare(got: readonly C[], refs: readonly [Reference, Reference], measure: Measure, inputs: (i: number) => string): { worst: number; inexact: number; unbounded: number; failure?: string } {
  let worst = 0, inexact = 0, unbounded = 0;
  for (let i = 0; i < got.length; i++) {
    if (measure.unbounded?.(i)) { unbounded++; continue; }
    const free = measure.signFree?.(i, refs[0].want[i]!) ?? false;
    const unsigned = (z: C): C => (free ? { re: Math.abs(z.re), im: Math.abs(z.im) } : z);
    const g = unsigned(got[i]!);
    let err = Infinity;
    for (const r of refs) {
      const [want, exact] = [unsigned(r.want[i]!), unsigned(r.exact[i]!)];
      err = Math.min(err, Math.max(within(g, want, exact, "re"), within(g, want, exact, "im")));
    }
    const w = refs[0].want[i]!;
    for (const part of ["re", "im"] as const) if (!Object.is(g[part], w[part]) && !(Number.isNaN(g[part]) && Number.isNaN(w[part]))) inexact++;
    const bound = measure.bound(i);
    if (err > bound) return { worst: err, inexact, unbounded, failure: `element ${i} (${inputs(i)}): ${show(g)} vs the interpreter's ${show(w)} (${err} ulps of the larger part; bound ${bound})` };
    worst = Math.max(worst, err);
  }
  return { worst, inexact, unbounded };
}

const show = (z: C): string => `${Object.is(z.re, -0) ? "-0" : z.re} + ${Object.is(z.im, -0) ? "-0" : z.im}i`;

/** StableHLO's elementwise `mlirOp` on `arity` operands of type `T`, as program text. */
function elementwiseText(mlirOp: string, T: string, arity: number): string {
  const names = Array.from({ length: arity }, (_, i) => `%a${i}`);
  return `func.func @main(${names.map((a) => `${a}: ${T}`).join(", ")}) -> ${T} {
  %0 = stablehlo.${mlirOp} ${names.join(", ")} : ${T}
  return %0 : ${T}
}`;
}

/** Why the steps of `text` compiled for webgpu run on the host, joined. */
async function hostReasons(text: string): Promise<string> {
  const exe = await compile(parseStableHlo(text), { backend: "webgpu" });
  try {
    return exe.stats.interpreted.map((s) => s.why).join("; ");
  } finally {
    exe.delete();
  }
}

/** `op` (a key of BOUNDS) as StableHLO's `mlirOp` on `args`, on the GPU against the interpreter. */
async function check(op: string, mlirOp: string, operands: C[][], measure: Measure = { bound: () => BOUNDS[op]! }): Promise<void> {
  // The operands as c64 holds them, for the c128 reference too (tan(1e30) is not tan(fround(1e30))).
  const args = operands.map((v) => v.map((z) => ({ re: fround(z.re), im: fround(z.im) })));
  const n = args[0]!.length;
  const text = elementwiseText(mlirOp, `tensor<${n}xcomplex<f32>>`, args.length);
  const module = parseStableHlo(text);
  const reference = (values: C[][]): Reference => {
    const evaluated = (t: "c64" | "c128"): C[] => {
      const m = t === "c64" ? module : parseStableHlo(text.replaceAll("complex<f32>", "complex<f64>"));
      return evaluate(m.entry, values.map((v) => Literal.fromValues(t, [n], v as never))).values() as C[];
    };
    return { want: evaluated("c64"), exact: evaluated("c128") };
  };
  const refs = [reference(args), reference(args.map((v) => v.map((z) => ({ re: flush(z.re), im: flush(z.im) }))))] as const;
  const literals = args.map((v) => Literal.fromValues("c64", [n], v as never));
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], `${op} must run on the GPU:\n${exe.dump()}`);
    const got = (await exe.run(literals)).values() as C[];
    const r = compare(got, refs, measure, (i) => args.map((a) => show(a[i]!)).join(", "));
    if (process.env["XLATS_COMPLEX_MEASURE"] === "1") {
      const skipped = r.unbounded > 0 ? `, ${r.unbounded} not compared` : "";
      console.log(`# ${op}: ${n} values, worst ${r.worst.toFixed(3)} ulps of the larger part, ${((100 * r.inexact) / (2 * n)).toFixed(1)}% of parts not the interpreter's bits${skipped}`);
    }
    assert.equal(r.failure, undefined, `${op}: ${r.failure}`);
  } finally {
    exe.delete();
  }
}

const MLIR: Record<string, string> = {
  exp: "exponential", expm1: "exponential_minus_one", log: "log", log1p: "log_plus_one", sqrt: "sqrt", rsqrt: "rsqrt", cbrt: "cbrt", sin: "sine", cos: "cosine",
  tanh: "tanh", tan: "tan", logistic: "logistic",
};

test("c64 divide on the GPU within its bound", { skip }, async () => check("divide", "divide", divideOperands()));
for (const [op, mlirOp] of Object.entries(MLIR)) {
  test(`c64 ${op} on the GPU within its bound`, { skip }, async () => check(op, mlirOp, [unaryOperands(op)]));
}

/**
 * |w log z| in double (the principal log); where log |z| is infinite (z zero or infinite),
 * |w arg z|, the phase that ∞ cis θ or 0 cis θ takes (0 where that is not finite either:
 * the specials, compared exactly).
 */
function wLogZ(z: C, w: C): number {
  const [r, theta, size] = [Math.log(Math.hypot(z.re, z.im)), Math.atan2(z.im, z.re), Math.hypot(w.re, w.im)];
  const l = (Number.isFinite(r) ? Math.hypot(r, theta) : Math.abs(theta)) * size;
  return Number.isFinite(l) ? l : 0;
}

test("c64 power on the GPU within its bound (growing with |w log z|)", { skip }, async () => {
  const [zs, ws] = powerOperands();
  const size = zs.map((z, i) => wLogZ(z, ws[i]!));
  // Where log z is infinite (z zero or with an infinite part), or the result overflows or
  // underflows, e^(w log z) is ∞ cis θ or 0 cis θ: its parts' signs are cos θ's and sin
  // θ's, which θ's rounding decides near a multiple of π/2 (the interpreter's double π/2
  // lies below π/2, f32's above; an f32 θ = w·arg z carries 2^-24 |θ|).
  // (z zero once its subnormal parts are flushed, too).
  const infiniteLog = zs.map((z) => (flush(fround(z.re)) === 0 && flush(fround(z.im)) === 0) || !Number.isFinite(z.re) || !Number.isFinite(z.im));
  // And where arg z or w·arg z lies below 2^-126 (nonzero), a GPU may flush it: ∞ cis θ
  // then has a zero imaginary part where the interpreter's is infinite. Not compared.
  const tinyPhase = zs.map((z, i) => {
    const [theta, w] = [Math.atan2(fround(z.im), fround(z.re)), ws[i]!];
    return [theta, theta * Math.hypot(fround(w.re), fround(w.im))].some((t) => t !== 0 && Math.abs(t) < 2 ** -126);
  });
  await check("power", "power", [zs, ws], {
    bound: (i) => BOUNDS["power"]! + POWER_SLOPE * size[i]!, unbounded: (i) => size[i]! > 2 ** 20 || tinyPhase[i]!, signFree: (i, want) => infiniteLog[i]! || !Number.isFinite(want.re) || !Number.isFinite(want.im) || (want.re === 0 && want.im === 0),
  });
});

test("c64 atan2 stays on the host, saying why", { skip }, async () => {
  assert.match(await hostReasons(elementwiseText("atan2", "tensor<4xcomplex<f32>>", 2)), /complex atan2 runs on the interpreter \(no f32 form within a bound: /);
});

test("c128 tanh, tan, logistic, power and atan2 stay on the host, saying the target has no f64", { skip }, async () => {
  for (const [op, arity] of [["tanh", 1], ["tan", 1], ["logistic", 1], ["power", 2], ["atan2", 2]] as const) {
    const why = await hostReasons(elementwiseText(op, "tensor<4xcomplex<f64>>", arity));
    assert.match(why, /of c128 runs on the interpreter \(the target has no f64\)/, `${op} on complex<f64>: ${why}`);
  }
});
