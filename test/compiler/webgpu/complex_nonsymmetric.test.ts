// The complex (c64) nonsymmetric eigenproblem on the WebGPU backend
// (webgpu/nonsymmetric_wgsl.ts's complex kernel: jaxlib's lapack_cgees_ffi,
// lapack_cgeev_ffi, cusolver_geev_ffi on c64, cuhybrid_eig_comp and hiphybrid_eig_comp)
// against the interpreter's registry within the stated bound (complexSchurBound β): the
// Schur form checked as a factorization (‖A - ẐT̂Ẑᴴ‖_F ≤ β‖A‖_F, |ẐᴴẐ - I| ≤ β, T̂ upper
// triangular, w its diagonal bit for bit), the eigenvalues matched with the interpreter's
// as sets (each within β‖A‖_F·κ, κ = 1/|uᴴv| of the interpreter's float64 unit left and
// right vectors, Bauer-Fike for a simple eigenvalue; how many sit in the interpreter's
// position is logged: f32's deflation threshold can deflate in another order), each
// eigenvector by its residual (‖A v - λ v‖ ≤ β‖A‖_F, ‖uᴴA - λ uᴴ‖ likewise), unit norm,
// its largest entry real and positive; info as the interpreter's. Random matrices,
// repeated eigenvalues, a Jordan block, triangular and Hessenberg input, a real matrix
// (conjugate pairs), the zero matrix, n = 1, 40 (gees), 24 and 64 (geev), entries near
// 3e30, batches; NaN and Inf: geev's info -4 and zeros, gees's the interpreter's result
// entry for entry as NaN, zero or a number (info where nothing deflates).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { abs, add, c, conj, mul, randoms, runOnGpu, sub, tensorType, ZERO, type C } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { complexSchurBound } from "../../../src/compiler/webgpu/nonsymmetric_wgsl.js";
import { geev as referenceGeev } from "../../../src/interpreter/lapack/nonsymmetric.js";
import { Mat } from "../../../src/interpreter/lapack/matrix.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "complex<f32>"): string => tensorType(dims, t);

type Target = "gees" | "geesN" | "geev" | "geevR" | "gpu" | "gpuR" | "hybrid" | "hip";
interface Case { readonly what: string; readonly target: Target; readonly batch: readonly number[]; readonly n: number; readonly values: (s: number) => C[] }

const ATTRS: Record<Target, [string, string]> = {
  gees: ["lapack_cgees_ffi", "{mode = 86 : ui8, sort = 78 : ui8}"],
  geesN: ["lapack_cgees_ffi", "{mode = 78 : ui8, sort = 78 : ui8}"],
  geev: ["lapack_cgeev_ffi", "{compute_left = 86 : ui8, compute_right = 86 : ui8}"],
  geevR: ["lapack_cgeev_ffi", "{compute_left = 78 : ui8, compute_right = 86 : ui8}"],
  gpu: ["cusolver_geev_ffi", "{left = true, right = true}"],
  gpuR: ["cusolver_geev_ffi", "{left = false, right = true}"],
  hybrid: ["cuhybrid_eig_comp", "{left = true, magma = \"auto\", right = true}"],
  hip: ["hiphybrid_eig_comp", "{left = false, magma = \"off\", right = true}"],
};

function resultTypes({ target, batch, n }: Case): string[] {
  const a = tensor([...batch, n, n]), v = tensor([...batch, n]), s = tensor(batch, "i32");
  switch (target) {
    case "gees": case "geesN": return [a, a, v, s, s];
    case "geev": case "geevR": case "hybrid": case "hip": return [v, a, a, s];
    case "gpu": return [a, v, a, a, s];
    case "gpuR": return [a, v, tensor([0]), a, s];
  }
}
/** The results' positions: T, Z, w, vl, vr, info (-1: none). */
function positions(target: Target): { t: number; z: number; w: number; vl: number; vr: number; info: number } {
  if (target.startsWith("gees")) return { t: 0, z: 1, w: 2, vl: -1, vr: -1, info: 4 };
  if (target.startsWith("gpu")) return { t: -1, z: -1, w: 1, vl: 2, vr: 3, info: 4 };
  return { t: -1, z: -1, w: 0, vl: 1, vr: 2, info: 3 };
}
const wantsLeft = (target: Target): boolean => !["geevR", "gpuR", "hip"].includes(target);

const random = (seed: number, n: number) => (s: number): C[] => {
  const r = randoms(seed + 97 * s);
  return Array.from({ length: n * n }, () => c(r(), r()));
};
/** S·D·S⁻¹ with D diagonal and S = I + E (E small, complex), S⁻¹ ≈ I - E + E²: eigenvalues near D's. */
function similar(d: readonly C[], seed: number): C[] {
  const n = d.length, r = randoms(seed);
  const e = Array.from({ length: n }, () => Array.from({ length: n }, () => c(0.2 * r(), 0.2 * r())));
  const times = (x: C[][], y: C[][]): C[][] => x.map((row) => y[0]!.map((_, j) => row.reduce((acc, v, k) => add(acc, mul(v, y[k]![j]!)), ZERO)));
  const s = e.map((row, i) => row.map((v, j) => (i === j ? add(v, c(1)) : v)));
  const e2 = times(e, e);
  const inv = e.map((row, i) => row.map((v, j) => add(sub(e2[i]![j]!, v), c(i === j ? 1 : 0))));
  const dm = d.map((x, i) => d.map((_, j) => (i === j ? x : ZERO)));
  return times(times(s, dm), inv).flat();
}

// Batches of 1 and 3 only: a pipeline per form and batch count (SwiftShader takes seconds to build each).
const CASES: readonly Case[] = [
  { what: "random", target: "gees", batch: [3], n: 6, values: random(1, 6) },
  { what: "random, no vectors", target: "geesN", batch: [3], n: 5, values: random(2, 5) },
  { what: "random n = 40", target: "gees", batch: [], n: 40, values: random(3, 40) },
  { what: "repeated eigenvalues", target: "gees", batch: [1], n: 6, values: () => similar([c(2, 1), c(2, 1), c(2, 1), c(-1), c(-1), c(0.5, -0.5)], 5) },
  { what: "upper triangular", target: "gees", batch: [1], n: 5, values: (s) => random(6, 5)(s).map((x, e) => (Math.floor(e / 5) > e % 5 ? ZERO : x)) },
  { what: "upper Hessenberg", target: "gees", batch: [1], n: 6, values: (s) => random(7, 6)(s).map((x, e) => (Math.floor(e / 6) > (e % 6) + 1 ? ZERO : x)) },
  { what: "a real matrix (conjugate pairs)", target: "gees", batch: [1], n: 7, values: (s) => random(9, 7)(s).map((x) => c(x.re)) },
  { what: "zero", target: "gees", batch: [1], n: 4, values: () => new Array<C>(16).fill(ZERO) },
  { what: "n = 1", target: "gees", batch: [3], n: 1, values: (s) => [c(s - 0.5, 0.25 * s)] },
  { what: "large entries", target: "gees", batch: [1], n: 5, values: (s) => random(8, 5)(s).map((x) => c(x.re * 3e30, x.im * 3e30)) },
  { what: "random", target: "geev", batch: [3], n: 6, values: random(11, 6) },
  { what: "repeated eigenvalues", target: "geev", batch: [1], n: 6, values: () => similar([c(2, 1), c(2, 1), c(2, 1), c(-1), c(-1), c(0.5, -0.5)], 15) },
  { what: "upper triangular", target: "geev", batch: [1], n: 5, values: (s) => random(16, 5)(s).map((x, e) => (Math.floor(e / 5) > e % 5 ? ZERO : x)) },
  // Defective: every divisor of the back substitution is smin, so the partial solution grows as smin^-k (past f32's range without the kernel's rescaling).
  { what: "a Jordan block", target: "geev", batch: [1], n: 12, values: () => Array.from({ length: 144 }, (_, e) => (Math.floor(e / 12) === e % 12 ? c(2, 1) : (e % 12) === Math.floor(e / 12) + 1 ? c(1) : ZERO)) },
  { what: "right vectors only", target: "geevR", batch: [3], n: 5, values: random(18, 5) },
  { what: "zero", target: "geev", batch: [1], n: 3, values: () => new Array<C>(9).fill(ZERO) },
  { what: "random n = 24", target: "geev", batch: [], n: 24, values: random(17, 24) },
  { what: "random n = 64, the largest order", target: "geev", batch: [], n: 64, values: random(19, 64) },
  { what: "random", target: "gpu", batch: [3], n: 5, values: random(21, 5) },
  { what: "random, right vectors only", target: "gpuR", batch: [1], n: 4, values: random(22, 4) },
  { what: "random", target: "hybrid", batch: [3], n: 4, values: random(31, 4) },
  { what: "random, right vectors only", target: "hip", batch: [1], n: 3, values: random(32, 3) },
  { what: "NaN and Inf", target: "geev", batch: [3], n: 3, values: (s) => random(41, 3)(s).map((x, e) => (e === 4 ? [c(NaN), c(0, Infinity), c(1)][s]! : x)) },
  { what: "NaN and Inf", target: "gees", batch: [3], n: 4, values: (s) => random(42, 4)(s).map((x, e) => (e === 9 ? [c(NaN, 0), c(Infinity), c(0, -Infinity)][s]! : x)) },
];

const cplx = (v: unknown): C => v as C;

/** Matches each of `got` with a distinct nearest of `want` (in `got`'s order), returning the pairs' indices. */
function matchSets(got: readonly C[], want: readonly C[]): number[] {
  const used = new Set<number>();
  return got.map((g) => {
    let best = -1, dist = Infinity;
    want.forEach((x, k) => {
      const d = abs(sub(g, x));
      if (!used.has(k) && d < dist) [best, dist] = [k, d];
    });
    used.add(best);
    return best;
  });
}
/** ‖x‖₂ of complex entries. */
const cnorm = (xs: readonly C[]): number => Math.sqrt(xs.reduce((s, x) => s + x.re * x.re + x.im * x.im, 0));

test("c64 ?gees and ?geev (lapack_cgees_ffi, lapack_cgeev_ffi, cusolver_geev_ffi, cuhybrid_eig_comp, hiphybrid_eig_comp): the complex Schur form and the eigenvectors within the stated bound of the interpreter's", { skip }, async () => {
  const lines = CASES.map((c, p) => {
    const out = resultTypes(c);
    return `  %${p}:${out.length} = stablehlo.custom_call @${ATTRS[c.target][0]}(%a${p}) {mhlo.backend_config = ${ATTRS[c.target][1]}} : (${tensor([...c.batch, c.n, c.n])}) -> (${out.join(", ")})`;
  });
  const results = CASES.flatMap(resultTypes);
  const text = `func.func @main(${CASES.map((c, p) => `%a${p}: ${tensor([...c.batch, c.n, c.n])}`).join(", ")}) -> (${results.join(", ")}) {
${lines.join("\n")}
  return ${CASES.flatMap((c, p) => resultTypes(c).map((_, k) => `%${p}#${k}`)).join(", ")} : ${results.join(", ")}
}`;
  const values = CASES.map((k) => Array.from({ length: elementCount(k.batch) }, (_, s) => k.values(s).map((x) => c(Math.fround(x.re), Math.fround(x.im)))).flat());
  const args = CASES.map((k, p) => Literal.fromValues("c64", [...k.batch, k.n, k.n], values[p] as never));
  const { got, want, dump } = await runOnGpu<unknown>(parseStableHlo(text).entry, args);
  assert.match(dump, /\?gees of 3 c64 matrix\(es\), complex QR \(Wilkinson's shift\), an invocation a matrix/);
  let at = 0;
  CASES.forEach((k, p) => {
    const { batch, n, target } = k;
    const leaves = resultTypes(k).length, where = positions(target);
    const mine = got.slice(at, at + leaves), theirs = want.slice(at, at + leaves);
    at += leaves;
    const bound = complexSchurBound(n);
    const info = mine[where.info]!.map(Number);
    assert.deepEqual(info, theirs[where.info]!.map(Number), `${target} ${k.what}: info`);
    let worst = 0, inPlace = 0, eigenvalues = 0;
    for (let s = 0; s < elementCount(batch); s++) {
      const what = `${target} ${k.what} ${[...batch, n, n].join("x")} matrix ${s}`;
      const a = values[p]!.slice(s * n * n, (s + 1) * n * n);
      const A = (i: number, j: number): C => a[i * n + j]!;
      const normA = cnorm(a);
      if (!a.every((x) => Number.isFinite(x.re) && Number.isFinite(x.im))) {
        // gees: the interpreter's iteration on it, entry for entry as NaN, zero or a number; geev: info -4 and zeros.
        const kind = (x: number): string => (Number.isNaN(x) ? "NaN" : x === 0 ? "0" : "number");
        const kinds = (v: unknown): string => (typeof v === "number" ? kind(v) : `${kind(cplx(v).re)},${kind(cplx(v).im)}`);
        for (let r = 0; r < leaves; r++) {
          const per = mine[r]!.length / elementCount(batch);
          assert.deepEqual(mine[r]!.slice(s * per, (s + 1) * per).map(kinds), theirs[r]!.slice(s * per, (s + 1) * per).map(kinds), `${what}: result ${r}'s NaN, zero and number entries`);
        }
        continue;
      }
      // The eigenvalues, each within β‖A‖κ of its float64 one: matched as sets, and in the interpreter's order where the deflations went alike.
      const w = mine[where.w]!.slice(s * n, (s + 1) * n).map(cplx);
      const ref = referenceGeev(new Mat(n, n, Float64Array.from(a, (x) => x.re), Float64Array.from(a, (x) => x.im)), false, true, true);
      const refW = Array.from({ length: n }, (_, i) => c(ref.wr[i]!, ref.wi[i]!));
      const match = matchSets(w, refW);
      w.forEach((x, i) => {
        const k = match[i]!;
        let dot = ZERO;
        for (let r = 0; r < n; r++) dot = add(dot, mul(c(ref.left!.re[r * n + k]!, -ref.left!.im[r * n + k]!), c(ref.right!.re[r * n + k]!, ref.right!.im[r * n + k]!)));
        const kappa = 1 / Math.max(abs(dot), 1e-300);
        const err = abs(sub(x, refW[k]!));
        // A repeated eigenvalue's vectors are not unique (κ from them can be anything): its cluster is bounded by β‖A‖κ with κ ≤ 1e3 for these similarity transforms.
        const allowed = bound * normA * Math.min(kappa, 1e3) + 1e-30;
        assert.ok(err <= allowed, `${what}: eigenvalue ${i} ${x.re}+${x.im}i, the interpreter's ${refW[k]!.re}+${refW[k]!.im}i (κ ${kappa})`);
        worst = Math.max(worst, err / allowed);
      });
      inPlace += match.filter((k, i) => k === i).length;
      eigenvalues += n;
      if (target.startsWith("gees")) {
        const T = (i: number, j: number): C => cplx(mine[where.t]![s * n * n + i * n + j]);
        const Z = (i: number, j: number): C => cplx(mine[where.z]![s * n * n + i * n + j]);
        // Upper triangular, w its diagonal.
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < i; j++) assert.deepEqual(T(i, j), ZERO, `${what}: T(${i}, ${j})`);
          assert.deepEqual(w[i], T(i, i), `${what}: w ${i}`);
        }
        if (target === "geesN") {
          assert.ok(mine[where.z]!.slice(s * n * n, (s + 1) * n * n).every((x) => cplx(x).re === 0 && cplx(x).im === 0), `${what}: Z without vectors`);
          continue;
        }
        // A = Z T Zᴴ and ZᴴZ = I.
        let err = 0;
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < n; j++) {
            let x = ZERO, g = ZERO;
            for (let q = 0; q < n; q++) {
              g = add(g, mul(conj(Z(q, i)), Z(q, j)));
              for (let l = q; l < n; l++) x = add(x, mul(mul(Z(i, q), T(q, l)), conj(Z(j, l))));
            }
            err += abs(sub(A(i, j), x)) ** 2;
            assert.ok(abs(sub(g, c(i === j ? 1 : 0))) <= bound, `${what}: (ZᴴZ)(${i}, ${j}) = ${g.re}+${g.im}i`);
          }
        }
        assert.ok(Math.sqrt(err) <= bound * normA, `${what}: ‖A - Z T Zᴴ‖ = ${Math.sqrt(err)} > ${bound * normA}`);
        worst = Math.max(worst, Math.sqrt(err) / (bound * normA || 1));
        continue;
      }
      if (target.startsWith("gpu")) assert.deepEqual(mine[0]!.slice(s * n * n, (s + 1) * n * n), a, `${what}: a's copy`);
      for (const [k2, side] of [[where.vl, "left"], [where.vr, "right"]] as const) {
        if (side === "left" && !wantsLeft(target)) {
          assert.ok(mine[k2]!.every((x) => cplx(x).re === 0 && cplx(x).im === 0), `${what}: vl without left vectors`);
          continue;
        }
        for (let j = 0; j < n; j++) {
          const v = Array.from({ length: n }, (_, r) => cplx(mine[k2]![s * n * n + r * n + j]));
          const lambda = w[j]!;
          assert.ok(Math.abs(cnorm(v) - 1) <= bound, `${what}: ${side} vector ${j}'s norm ${cnorm(v)}`);
          // Its largest entry real and positive.
          const big = Math.max(...v.map(abs));
          assert.ok(v.some((x) => x.im === 0 && x.re > 0 && x.re >= big * (1 - 1e-6)), `${what}: ${side} vector ${j}'s largest entry is not real`);
          // Right: A v - λ v; left: uᴴ A - λ uᴴ (the conjugates: Aᴴ u - conj(λ) u).
          const residual = Array.from({ length: n }, (_, i) => {
            let x = ZERO;
            for (let q = 0; q < n; q++) x = add(x, mul(side === "right" ? A(i, q) : conj(A(q, i)), v[q]!));
            return sub(x, mul(side === "right" ? lambda : conj(lambda), v[i]!));
          });
          const r = cnorm(residual);
          assert.ok(r <= bound * normA + 1e-30, `${what}: ${side} vector ${j}: residual ${r} > ${bound * normA}`);
          worst = Math.max(worst, r / (bound * normA || 1));
        }
      }
    }
    console.log(`${target} ${k.what} ${[...batch, n, n].join("x")}: worst ${(100 * worst).toFixed(3)}% of the bound; info ${info.join(",")}; ${inPlace} of ${eigenvalues} eigenvalues where the interpreter's are`);
  });
});

test("the plan (no GPU needed): c64 ?gees, ?geev, the GPU's geev and the hybrid eig_comp are kernels with n and the flags as step parameters; past the order limit and c128 run on the host, saying why", () => {
  const A = tensor([3, 6, 6]), W = tensor([3, 6]), S = tensor([3], "i32");
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%a: ${A}, %z: tensor<4x4xcomplex<f64>>, %big: tensor<65x65xcomplex<f32>>) -> (${A}, ${A}, ${A}, ${A}, tensor<4x4xcomplex<f64>>, tensor<65x65xcomplex<f32>>) {
  %0:5 = stablehlo.custom_call @lapack_cgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (${A}) -> (${A}, ${A}, ${W}, ${S}, ${S})
  %1:4 = stablehlo.custom_call @lapack_cgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (${A}) -> (${W}, ${A}, ${A}, ${S})
  %2:5 = stablehlo.custom_call @cusolver_geev_ffi(%a) {mhlo.backend_config = {left = false, right = true}} : (${A}) -> (${A}, ${W}, ${tensor([0])}, ${A}, ${S})
  %3:4 = stablehlo.custom_call @hiphybrid_eig_comp(%a) {mhlo.backend_config = {left = true, magma = "on", right = false}} : (${A}) -> (${W}, ${A}, ${A}, ${S})
  %4:5 = stablehlo.custom_call @lapack_zgees_ffi(%z) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<i32>, tensor<i32>)
  %5:4 = stablehlo.custom_call @lapack_cgeev_ffi(%big) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (tensor<65x65xcomplex<f32>>) -> (tensor<65xcomplex<f32>>, tensor<65x65xcomplex<f32>>, tensor<65x65xcomplex<f32>>, tensor<i32>)
  return %0#0, %1#2, %2#3, %3#1, %4#0, %5#2 : ${A}, ${A}, ${A}, ${A}, tensor<4x4xcomplex<f64>>, tensor<65x65xcomplex<f32>>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /\?gees of 3 c64 matrix\(es\), complex QR \(Wilkinson's shift\), an invocation a matrix/);
  assert.match(dump, /\?geev of 3 c64 matrix\(es\)/);
  assert.match(dump, /the GPU's geev of 3 c64 matrix\(es\)/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  // n, the flags (Schur vectors 1, left 2, right 4), the words of the results cleared when not computed (Z; vl, vr).
  assert.deepEqual(kernels.map((s) => s.parameters), [[6, 1, 216, 0], [6, 4, 216, 216], [6, 4, 0, 216], [6, 2, 216, 216]]);
  // The work buffer after the results.
  assert.deepEqual(kernels.map((s) => s.buffers.length), [7, 6, 7, 6]);
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.equal(hosts.length, 2);
  assert.match(hosts[0]!, /^custom call lapack_zgees_ffi .*WGSL has no f64/);
  assert.match(hosts[1]!, /^custom call lapack_cgeev_ffi: order 65 runs on the host \(the GPU's Schur kernel, an invocation a matrix, takes orders up to 64\)$/);
});
