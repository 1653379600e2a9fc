// FFT on the WebGPU backend (webgpu/fft_wgsl.ts): FFT, IFFT, RFFT and IRFFT over 1 to 3
// axes as kernels, against known transforms (an impulse, a shifted impulse, a cosine)
// and against the interpreter (doubles, rounded once), within the stated bound
// (fftErrorBound, docs/numerics.md).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { fftErrorBound } from "../../../src/compiler/webgpu/fft_wgsl.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { XlaBuilder, parameter, fft } from "../../../src/index.js";
import type { FftType } from "../../../src/ir/attributes.js";
import { Literal } from "../../../src/types/literal.js";
import { arrayShape, elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());

type Complex = { re: number; im: number };
const complexOf = (v: unknown): Complex => (typeof v === "number" ? { re: v, im: 0 } : (v as Complex));

/** The fft of `x` (dims, c64 or f32) as a program. */
function fftProgram(type: FftType, elementType: "c64" | "f32", dims: readonly number[], lengths: readonly number[]) {
  const b = new XlaBuilder(`${type.toLowerCase()}_${dims.join("x")}`);
  return b.build(fft(parameter(b, 0, arrayShape(elementType, dims), "x"), type, lengths));
}

async function runGpu(c: ReturnType<typeof fftProgram>, x: Literal): Promise<{ got: Literal; dump: string; interpreted: number }> {
  const exe = await compile(c, { backend: "webgpu" });
  try {
    return { got: await exe.run([x]), dump: exe.dump(), interpreted: exe.stats.interpreted.length };
  } finally {
    exe.delete();
  }
}

/** The tolerance of the known transforms: the bound for an input of L1 norm 1 per bin (an impulse; a cosine of L1 < n), times n. */
const knownTolerance = (n: number): number => 4 * fftErrorBound("FFT", [n], n);

/** Asserts |got - want| ≤ the stated bound, element by element, blocks being the transform's last `lengths.length` dims; returns the worst share of it. */
function assertWithinBound(type: FftType, x: Literal, want: Literal, got: Literal, lengths: readonly number[], what: string): number {
  const xs = x.values().map(complexOf), ws = want.values().map(complexOf), gs = got.values().map(complexOf);
  const inBlock = elementCount(x.arrayShape.dimensions.slice(-lengths.length));
  const outBlock = elementCount(want.arrayShape.dimensions.slice(-lengths.length));
  let worst = 0;
  for (let i = 0; i < ws.length; i++) {
    const batch = Math.floor(i / outBlock);
    let l1 = 0;
    for (let j = batch * inBlock; j < (batch + 1) * inBlock; j++) l1 += Math.abs(xs[j]!.re) + Math.abs(xs[j]!.im);
    const err = Math.max(Math.abs(gs[i]!.re - ws[i]!.re), Math.abs(gs[i]!.im - ws[i]!.im));
    const bound = fftErrorBound(type, lengths, l1);
    worst = Math.max(worst, l1 === 0 ? err : err / bound);
    assert.ok(err <= bound, `${what}: element ${i}: got ${JSON.stringify(gs[i])}, want ${JSON.stringify(ws[i])} (error ${err} > bound ${bound})`);
  }
  // The error seen, as a share of the bound (printed for docs/numerics.md).
  console.log(`${what}: worst error ${(100 * worst).toPrecision(2)}% of the bound`);
  return worst;
}

const randomComplex = (count: number, seed: number): Complex[] =>
  Array.from({ length: count }, (_, k) => ({ re: Math.sin(k * 1.37 + seed), im: Math.cos(k * 0.71 + 2 * seed) * 0.5 }));

test("FFT of an impulse is flat, of a shifted impulse a phase ramp, of a cosine two spikes (Stockham and direct lengths)", { skip }, async () => {
  for (const n of [8, 64, 1024, 6, 12, 100]) {
    const x = Array.from({ length: 3 * n }, (_, k): Complex => {
      const row = Math.floor(k / n), j = k % n;
      if (row === 0) return { re: j === 0 ? 1 : 0, im: 0 };
      if (row === 1) return { re: j === 1 ? 1 : 0, im: 0 };
      return { re: Math.cos((2 * Math.PI * j) / n), im: 0 };
    });
    const { got, interpreted } = await runGpu(fftProgram("FFT", "c64", [3, n], [n]), Literal.fromValues("c64", [3, n], x));
    assert.equal(interpreted, 0, `n = ${n}: no host step`);
    const ys = got.values().map(complexOf);
    const tol = knownTolerance(n);
    for (let k = 0; k < n; k++) {
      const flat = ys[k]!, ramp = ys[n + k]!, spikes = ys[2 * n + k]!;
      assert.ok(Math.abs(flat.re - 1) <= tol && Math.abs(flat.im) <= tol, `n = ${n}: impulse bin ${k}: ${JSON.stringify(flat)}`);
      const a = (-2 * Math.PI * k) / n;
      assert.ok(Math.abs(ramp.re - Math.cos(a)) <= tol && Math.abs(ramp.im - Math.sin(a)) <= tol, `n = ${n}: shifted impulse bin ${k}: ${JSON.stringify(ramp)}`);
      const spike = k === 1 || k === n - 1 ? n / 2 : 0;
      assert.ok(Math.abs(spikes.re - spike) <= tol && Math.abs(spikes.im) <= tol, `n = ${n}: cosine bin ${k}: ${JSON.stringify(spikes)}`);
    }
  }
});

test("FFT, IFFT, RFFT, IRFFT over 1 to 3 axes, powers of two and not: within the stated bound of the interpreter", { skip }, async () => {
  const cases: { type: FftType; dims: number[]; lengths: number[]; share?: number }[] = [
    { type: "FFT", dims: [4, 256], lengths: [256] },
    { type: "IFFT", dims: [3, 30], lengths: [30] },
    { type: "FFT", dims: [2, 16, 12], lengths: [16, 12] },
    { type: "IFFT", dims: [8, 6, 4], lengths: [8, 6, 4] },
    { type: "FFT", dims: [5], lengths: [5] },
    { type: "FFT", dims: [2, 1], lengths: [1] },
    { type: "RFFT", dims: [3, 64], lengths: [64] },
    { type: "RFFT", dims: [2, 10, 18], lengths: [10, 18] },
    { type: "IRFFT", dims: [3, 33], lengths: [64] },
    { type: "IRFFT", dims: [4, 6, 8], lengths: [4, 6, 14] },
    // Past the direct DFT's 4096: Bluestein through 16384. Its per-element bound is loose
    // (the √m of Σ|K_i|: 2026-11-30 measured 0.0015% and 0.0037% of it), so 1% is asserted
    // too: an inverse stage left unconjugated gave 103%.
    { type: "FFT", dims: [2, 5001], lengths: [5001], share: 0.01 },
    { type: "IRFFT", dims: [2600], lengths: [5198], share: 0.01 },
  ];
  for (const [i, { type, dims, lengths, share }] of cases.entries()) {
    const count = elementCount(dims);
    const real = type === "RFFT";
    const x = real ? Literal.fromValues("f32", dims, randomComplex(count, i).map((v) => v.re)) : Literal.fromValues("c64", dims, randomComplex(count, i));
    const program = fftProgram(type, real ? "f32" : "c64", dims, lengths);
    const want = evaluate(program, [x]);
    const { got, dump, interpreted } = await runGpu(program, x);
    const what = `${type} ${dims.join("x")} over ${lengths.join("x")}`;
    assert.equal(interpreted, 0, `${what}: no host step\n${dump}`);
    assert.deepEqual(got.arrayShape.dimensions, want.arrayShape.dimensions);
    assert.equal(got.arrayShape.elementType, want.arrayShape.elementType);
    const worst = assertWithinBound(type, x, want, got, lengths, what);
    if (share !== undefined) assert.ok(worst <= share, `${what}: ${worst} of the bound, past ${share}`);
  }
});

test("an FFT is a kernel an axis in the plan (Stockham or direct, said by dump), Bluestein's steps past 4096; c128 and work arrays past 2 GiB run on the host, saying why", () => {
  const plan = planGpuProgram(fftProgram("FFT", "c64", [2, 16, 12], [16, 12]), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /pass 1\/2\) \(WGSL kernel \d+, FFT of 24 line\(s\) of 16, Stockham radix-2 in workgroup memory/);
  assert.match(dump, /pass 2\/2\) \(WGSL kernel \d+, DFT of 32 line\(s\) of 12, direct/);
  assert.match(dump, /0 host step/);
  const wide = dumpGpuProgram(planGpuProgram(fftProgram("FFT", "c128" as "c64", [4, 8], [8]), {}));
  assert.match(wide, /host .*WGSL has no f64/);
  const long = dumpGpuProgram(planGpuProgram(fftProgram("FFT", "c64", [5001], [5001]), {}));
  // 2·log2(16384) + 3 dispatches: the chirp in, 14 stages, K, 14 inverse stages, the chirp out.
  assert.match(long, /step 31\/31\) \(WGSL kernel \d+, FFT of 1 line\(s\) of 5001, Bluestein through 16384: times the chirp, out/);
  assert.match(long, /0 host step/);
  const huge = dumpGpuProgram(planGpuProgram(fftProgram("FFT", "c64", [16384, 5001], [5001]), {}));
  assert.match(huge, /host .*Bluestein's work arrays for 16384 line\(s\) of 5001 \(16384 each\) reach 2 GiB/);
});
