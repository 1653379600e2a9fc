// c64 divide, exp, expm1, log, log1p, sqrt, rsqrt, cbrt, sin and cos on the GPU (kernel/
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
// and far-apart parts (divide, sqrt). Each op must run as one kernel, with no host step.
// The c64 functions left on the host (tanh, tan, logistic, power, atan2) must say why,
// and their c128 forms that the target has no f64.
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
const BOUNDS: Record<string, number> = { divide: 6, exp: 8, expm1: 8, log: 4, log1p: 4, sqrt: 4, rsqrt: 8, cbrt: 6, sin: 10, cos: 10 };

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

const ulpOf = (v: number): number => (v < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(v)) - 23));
const tiny = (v: number): boolean => Math.abs(v) < 2 ** -126;
const flush = (v: number): number => (tiny(v) ? (v < 0 || Object.is(v, -0) ? -0 : 0) : v);

/** The interpreter's c64 result, and the same computation in double before its rounding (the program on c128). */
interface Reference { readonly want: readonly C[]; readonly exact: readonly C[] }

/** Part `part` of element i within `bound` ulps of the exact result's larger part (where the interpreter's is finite; else equal). */
function within(g: C, r: Reference, i: number, part: "re" | "im", bound: number): number {
  const [a, b] = [g[part], r.want[i]![part]];
  if ((Number.isNaN(a) && Number.isNaN(b)) || Object.is(a, b)) return 0;
  const e = r.exact[i]!;
  const m = Math.max(Math.abs(e.re), Math.abs(e.im));
  if (tiny(a) && tiny(b) && !(m === 0 && a === 0 && b === 0)) return 0; // a subnormal result flushed, or a subnormal operand read as zero
  if (!Number.isFinite(b) || !Number.isFinite(a) || !Number.isFinite(m) || m === 0) return Infinity;
  return Math.abs(a - b) / ulpOf(m);
}

/**
 * The worst error in ulps, with the count of parts not the interpreter's bits, or the
 * first element out of bounds. Each element may match the interpreter on its operands or
 * on them with their subnormal parts flushed to zeros (WGSL lets a GPU read them so).
 */
function compare(got: readonly C[], refs: readonly [Reference, Reference], bound: number, inputs: (i: number) => string): { worst: number; inexact: number; failure?: string } {
  let worst = 0, inexact = 0;
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!;
    let err = Infinity;
    for (const r of refs) err = Math.min(err, Math.max(within(g, r, i, "re", bound), within(g, r, i, "im", bound)));
    const w = refs[0].want[i]!;
    for (const part of ["re", "im"] as const) if (!Object.is(g[part], w[part]) && !(Number.isNaN(g[part]) && Number.isNaN(w[part]))) inexact++;
    if (err > bound) return { worst: err, inexact, failure: `element ${i} (${inputs(i)}): ${show(g)} vs the interpreter's ${show(w)} (${err} ulps of the larger part)` };
    worst = Math.max(worst, err);
  }
  return { worst, inexact };
}

const show = (z: C): string => `${Object.is(z.re, -0) ? "-0" : z.re} + ${Object.is(z.im, -0) ? "-0" : z.im}i`;

/** `op` (a key of BOUNDS) as StableHLO's `mlirOp` on `args`, on the GPU against the interpreter. */
async function check(op: string, mlirOp: string, args: C[][]): Promise<void> {
  const n = args[0]!.length;
  const T = `tensor<${n}xcomplex<f32>>`;
  const names = args.map((_, i) => `%a${i}`);
  const text = `func.func @main(${names.map((a) => `${a}: ${T}`).join(", ")}) -> ${T} {
  %0 = stablehlo.${mlirOp} ${names.join(", ")} : ${T}
  return %0 : ${T}
}`;
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
    const r = compare(got, refs, BOUNDS[op]!, (i) => args.map((a) => show(a[i]!)).join(", "));
    if (process.env["XLATS_COMPLEX_MEASURE"] === "1") {
      console.log(`# ${op}: ${n} values, worst ${r.worst.toFixed(3)} ulps of the larger part, ${((100 * r.inexact) / (2 * n)).toFixed(1)}% of parts not the interpreter's bits`);
    }
    assert.equal(r.failure, undefined, `${op}: ${r.failure}`);
  } finally {
    exe.delete();
  }
}

const MLIR: Record<string, string> = { exp: "exponential", expm1: "exponential_minus_one", log: "log", log1p: "log_plus_one", sqrt: "sqrt", rsqrt: "rsqrt", cbrt: "cbrt", sin: "sine", cos: "cosine" };

test("c64 divide on the GPU within its bound", { skip }, async () => check("divide", "divide", divideOperands()));
for (const [op, mlirOp] of Object.entries(MLIR)) {
  test(`c64 ${op} on the GPU within its bound`, { skip }, async () => check(op, mlirOp, [unaryOperands(op)]));
}

test("c64 tanh, tan, logistic, power and atan2 stay on the host, saying why; c128's say the target has no f64", { skip }, async () => {
  for (const [op, arity] of [["tanh", 1], ["tan", 1], ["logistic", 1], ["power", 2], ["atan2", 2]] as const) {
    for (const part of ["f32", "f64"]) {
      const T = `tensor<4xcomplex<${part}>>`;
      const names = ["%a", "%b"].slice(0, arity);
      const module = parseStableHlo(`func.func @main(${names.map((a) => `${a}: ${T}`).join(", ")}) -> ${T} {
  %0 = stablehlo.${op} ${names.join(", ")} : ${T}
  return %0 : ${T}
}`);
      const exe = await compile(module, { backend: "webgpu" });
      try {
        const why = exe.stats.interpreted.map((s) => s.why).join("; ");
        assert.match(why, part === "f32" ? new RegExp(`complex ${op} runs on the interpreter \\(no f32 form within a bound: `) : /of c128 runs on the interpreter \(the target has no f64\)/, `${op} on complex<${part}>: ${why}`);
      } finally {
        exe.delete();
      }
    }
  }
});
