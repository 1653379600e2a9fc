// The nonsymmetric eigenproblem on the WebGPU backend (webgpu/nonsymmetric_wgsl.ts:
// jaxlib's lapack_sgees_ffi, lapack_sgeev_ffi, cusolver_geev_ffi, cuhybrid_eig_real and
// hiphybrid_eig_real), f32, against the interpreter's registry within the stated bound
// (schurBound β): the Schur form checked as a factorization (‖A - ẐT̂Ẑᵀ‖_F ≤ β‖A‖_F,
// |ẐᵀẐ - I| ≤ β, T̂ quasi-triangular with its 2×2 blocks in ?lanv2's standard form, wr
// and wi read from T̂'s blocks), the eigenvalues matched with the interpreter's as sets
// (each within β‖A‖_F·κ, κ = 1/|uᴴv| of the interpreter's float64 unit left and right
// vectors: Bauer-Fike for a simple eigenvalue), each eigenvector by its residual
// (‖A v - λ v‖ ≤ β‖A‖_F, ‖uᴴA - λ uᴴ‖ likewise), unit norm, its largest entry real and
// positive, a conjugate pair's vectors conjugate; info as the interpreter's. Random
// matrices, complex pairs (rotation blocks), repeated eigenvalues, a Jordan block, triangular and
// Hessenberg input, the zero matrix, n = 1 and 2, 40 (gees), 24 and 64 (geev), entries near
// 3e30, batches; NaN and Inf: geev's info -4 and zeros, gees's the interpreter's result
// entry for entry as NaN, zero or a number (info n where nothing deflates; an Inf on the
// diagonal that deflates at once; a NaN in a zero matrix that stays put).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { randoms, runOnGpu, tensorType } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { schurBound } from "../../../src/compiler/webgpu/nonsymmetric_wgsl.js";
import { geev as referenceGeev } from "../../../src/interpreter/lapack/nonsymmetric.js";
import { Mat } from "../../../src/interpreter/lapack/matrix.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "f32"): string => tensorType(dims, t);

type Target = "gees" | "geesN" | "geev" | "geevR" | "gpu" | "hybrid";
interface Case { readonly what: string; readonly target: Target; readonly batch: readonly number[]; readonly n: number; readonly values: (s: number) => number[] }

const ATTRS: Record<Target, [string, string]> = {
  gees: ["lapack_sgees_ffi", "{mode = 86 : ui8, sort = 78 : ui8}"],
  geesN: ["lapack_sgees_ffi", "{mode = 78 : ui8, sort = 78 : ui8}"],
  geev: ["lapack_sgeev_ffi", "{compute_left = 86 : ui8, compute_right = 86 : ui8}"],
  geevR: ["lapack_sgeev_ffi", "{compute_left = 78 : ui8, compute_right = 86 : ui8}"],
  gpu: ["cusolver_geev_ffi", "{left = true, right = true}"],
  hybrid: ["cuhybrid_eig_real", "{left = true, magma = \"auto\", right = true}"],
};

function resultTypes({ target, batch, n }: Case): string[] {
  const a = tensor([...batch, n, n]), v = tensor([...batch, n]), s = tensor(batch, "i32"), c = tensor([...batch, n, n], "complex<f32>");
  switch (target) {
    case "gees": case "geesN": return [a, a, v, v, s, s];
    case "geev": case "geevR": case "hybrid": return [v, v, c, c, s];
    case "gpu": return [a, tensor([...batch, n], "complex<f32>"), a, a, s];
  }
}

const random = (seed: number, n: number) => (s: number): number[] => {
  const r = randoms(seed + 97 * s);
  return Array.from({ length: n * n }, () => r());
};
/** Q·D·Qᵀ-like mixing of a block-diagonal D by a random orthogonal-ish similarity (S D S⁻¹ with S = I + small): eigenvalues D's. */
function similar(d: number[][], seed: number): number[] {
  const n = d.length, r = randoms(seed);
  const e = Array.from({ length: n }, () => Array.from({ length: n }, () => 0.2 * r()));
  // S = I + E, S⁻¹ ≈ I - E + E² (E small: the eigenvalues move by the truncation, the test compares with the interpreter's, not D's).
  const mul = (x: number[][], y: number[][]): number[][] => x.map((row) => y[0]!.map((_, j) => row.reduce((s, v, k) => s + v * y[k]![j]!, 0)));
  const s = e.map((row, i) => row.map((v, j) => v + (i === j ? 1 : 0)));
  const e2 = mul(e, e);
  const inv = e.map((row, i) => row.map((v, j) => -v + e2[i]![j]! + (i === j ? 1 : 0)));
  return mul(mul(s, d), inv).flat();
}
const diag = (xs: readonly number[]): number[][] => xs.map((x, i) => xs.map((_, j) => (i === j ? x : 0)));
/** A block diagonal of rotation-scaling blocks [[a, b], [-b, a]] (pairs a ± ib) and 1×1 entries. */
function blocks(parts: readonly (number | readonly [number, number])[]): number[][] {
  const n = parts.reduce<number>((s, p) => s + (typeof p === "number" ? 1 : 2), 0);
  const d = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  let i = 0;
  for (const p of parts) {
    if (typeof p === "number") d[i]![i++] = p;
    else {
      d[i]![i] = d[i + 1]![i + 1] = p[0];
      d[i]![i + 1] = p[1];
      d[i + 1]![i] = -p[1];
      i += 2;
    }
  }
  return d;
}

// Batches of 1 and 3 only: a pipeline per form and batch count (SwiftShader takes seconds to build each).
const CASES: readonly Case[] = [
  { what: "random", target: "gees", batch: [3], n: 6, values: random(1, 6) },
  { what: "random, no vectors", target: "geesN", batch: [3], n: 5, values: random(2, 5) },
  { what: "random n = 40", target: "gees", batch: [], n: 40, values: random(3, 40) },
  { what: "complex pairs", target: "gees", batch: [1], n: 7, values: () => similar(blocks([[1, 2], [-0.5, 0.75], 3, [2, 0.25]]), 4) },
  { what: "repeated eigenvalues", target: "gees", batch: [1], n: 6, values: () => similar(diag([2, 2, 2, -1, -1, 0.5]), 5) },
  { what: "upper triangular", target: "gees", batch: [1], n: 5, values: (s) => random(6, 5)(s).map((x, e) => (Math.floor(e / 5) > e % 5 ? 0 : x)) },
  { what: "upper Hessenberg", target: "gees", batch: [1], n: 6, values: (s) => random(7, 6)(s).map((x, e) => (Math.floor(e / 6) > (e % 6) + 1 ? 0 : x)) },
  { what: "zero", target: "gees", batch: [1], n: 4, values: () => new Array<number>(16).fill(0) },
  { what: "n = 1", target: "gees", batch: [3], n: 1, values: (s) => [s - 0.5] },
  { what: "n = 2 complex pair", target: "gees", batch: [1], n: 2, values: () => [1, 2, -3, 0.5] },
  { what: "large entries", target: "gees", batch: [1], n: 5, values: (s) => random(8, 5)(s).map((x) => x * 3e30) },
  { what: "random", target: "geev", batch: [3], n: 6, values: random(11, 6) },
  { what: "complex pairs", target: "geev", batch: [1], n: 7, values: () => similar(blocks([[1, 2], [-0.5, 0.75], 3, [2, 0.25]]), 14) },
  { what: "repeated eigenvalues", target: "geev", batch: [1], n: 6, values: () => similar(diag([2, 2, 2, -1, -1, 0.5]), 15) },
  { what: "upper triangular", target: "geev", batch: [1], n: 5, values: (s) => random(16, 5)(s).map((x, e) => (Math.floor(e / 5) > e % 5 ? 0 : x)) },
  // Defective: every divisor of the back substitution is smin, so the partial solution grows as smin^-k (past f32's range without the kernel's rescaling).
  { what: "a Jordan block", target: "geev", batch: [1], n: 12, values: () => Array.from({ length: 144 }, (_, e) => (Math.floor(e / 12) === e % 12 ? 2 : (e % 12) === Math.floor(e / 12) + 1 ? 1 : 0)) },
  { what: "right vectors only", target: "geevR", batch: [3], n: 5, values: random(18, 5) },
  { what: "zero", target: "geev", batch: [1], n: 3, values: () => new Array<number>(9).fill(0) },
  { what: "random n = 24", target: "geev", batch: [], n: 24, values: random(17, 24) },
  { what: "random n = 64, the largest order", target: "geev", batch: [], n: 64, values: random(19, 64) },
  { what: "random", target: "gpu", batch: [3], n: 5, values: random(21, 5) },
  { what: "complex pairs", target: "gpu", batch: [3], n: 4, values: () => similar(blocks([[1, 2], [0.5, -1]]), 22) },
  { what: "random", target: "hybrid", batch: [3], n: 4, values: random(31, 4) },
  { what: "NaN and Inf", target: "geev", batch: [3], n: 3, values: (s) => random(41, 3)(s).map((x, e) => (e === 4 ? [NaN, Infinity, 1][s]! : x)) },
  // Inf on the diagonal deflates at once (|c| ≤ ulp·∞); a NaN in a zero matrix stays where it is (‖H‖ is NaN: the deflation test falls back on 1).
  { what: "Inf on the diagonal", target: "gees", batch: [1], n: 2, values: () => [0.75, 0.5, 0.25, Infinity] },
  { what: "NaN in a zero matrix", target: "gees", batch: [1], n: 3, values: () => [NaN, 0, 0, 0, 0, 0, 0, 0, 0] },
  { what: "NaN and Inf", target: "gees", batch: [3], n: 4, values: (s) => random(42, 4)(s).map((x, e) => (e === 9 ? [NaN, Infinity, -Infinity][s]! : x)) },
];

type Complex = { re: number; im: number };
const num = (v: unknown): number => Number(v);
const cplx = (v: unknown): Complex => (typeof v === "object" && v !== null ? (v as Complex) : { re: Number(v), im: 0 });

/** ‖x‖₂ of complex entries. */
const cnorm = (xs: readonly Complex[]): number => Math.sqrt(xs.reduce((s, x) => s + x.re * x.re + x.im * x.im, 0));

/** Matches each of `got` with a distinct nearest of `want`, returning the pairs' indices. */
function matchSets(got: readonly Complex[], want: readonly Complex[]): number[] {
  const used = new Set<number>();
  return got.map((g) => {
    let best = -1, dist = Infinity;
    want.forEach((w, k) => {
      const d = Math.hypot(g.re - w.re, g.im - w.im);
      if (!used.has(k) && d < dist) [best, dist] = [k, d];
    });
    used.add(best);
    return best;
  });
}

test("?gees and ?geev (lapack_sgees_ffi, lapack_sgeev_ffi, cusolver_geev_ffi, cuhybrid_eig_real): the Schur form and the eigenvectors within the stated bound of the interpreter's", { skip }, async () => {
  const lines = CASES.map((c, p) => {
    const out = resultTypes(c);
    return `  %${p}:${out.length} = stablehlo.custom_call @${ATTRS[c.target][0]}(%a${p}) {mhlo.backend_config = ${ATTRS[c.target][1]}} : (${tensor([...c.batch, c.n, c.n])}) -> (${out.join(", ")})`;
  });
  const results = CASES.flatMap(resultTypes);
  const text = `func.func @main(${CASES.map((c, p) => `%a${p}: ${tensor([...c.batch, c.n, c.n])}`).join(", ")}) -> (${results.join(", ")}) {
${lines.join("\n")}
  return ${CASES.flatMap((c, p) => resultTypes(c).map((_, k) => `%${p}#${k}`)).join(", ")} : ${results.join(", ")}
}`;
  const values = CASES.map((c) => Array.from({ length: elementCount(c.batch) }, (_, s) => c.values(s).map(Math.fround)).flat());
  const args = CASES.map((c, p) => Literal.fromValues("f32", [...c.batch, c.n, c.n], values[p]!));
  const { got, want } = await runOnGpu<unknown>(parseStableHlo(text).entry, args);
  let at = 0;
  CASES.forEach((c, p) => {
    const { batch, n, target } = c;
    const leaves = resultTypes(c).length;
    const mine = got.slice(at, at + leaves), theirs = want.slice(at, at + leaves);
    at += leaves;
    const bound = schurBound(n);
    const info = mine[leaves - 1]!.map(num), wantInfo = theirs[leaves - 1]!.map(num);
    assert.deepEqual(info, wantInfo, `${target} ${c.what}: info`);
    const finiteInput = (s: number): boolean => values[p]!.slice(s * n * n, (s + 1) * n * n).every(Number.isFinite);
    let worst = 0;
    for (let s = 0; s < elementCount(batch); s++) {
      const what = `${target} ${c.what} ${[...batch, n, n].join("x")} matrix ${s}`;
      const aValues = values[p]!.slice(s * n * n, (s + 1) * n * n);
      const A = (i: number, j: number): number => aValues[i * n + j]!;
      const normA = Math.sqrt(aValues.reduce((t, x) => t + x * x, 0));
      if (!finiteInput(s)) {
        // gees: the interpreter's iteration on it, entry for entry as NaN, zero or a number; geev: info -4 and zeros.
        const kind = (x: number): string => (Number.isNaN(x) ? "NaN" : x === 0 ? "0" : "number");
        for (let k = 0; k < leaves; k++) {
          const per = mine[k]!.length / elementCount(batch);
          const m = mine[k]!.slice(s * per, (s + 1) * per).map((v) => { const z = cplx(v); return `${kind(z.re)},${kind(z.im)}`; });
          const w = theirs[k]!.slice(s * per, (s + 1) * per).map((v) => { const z = cplx(v); return `${kind(z.re)},${kind(z.im)}`; });
          assert.deepEqual(m, w, `${what}: result ${k}'s NaN, zero and number entries`);
        }
        continue;
      }
      // The eigenvalues and the interpreter's float64 ones with their condition (1/|uᴴv|).
      const w: Complex[] = target === "gpu"
        ? mine[1]!.slice(s * n, (s + 1) * n).map(cplx)
        : Array.from({ length: n }, (_, i) => ({ re: num(mine[target.startsWith("gees") ? 2 : 0]![s * n + i]), im: num(mine[target.startsWith("gees") ? 3 : 1]![s * n + i]) }));
      const ref = referenceGeev(new Mat(n, n, Float64Array.from(aValues)), true, true, true);
      const refW = Array.from({ length: n }, (_, i) => ({ re: ref.wr[i]!, im: ref.wi[i]! }));
      const match = matchSets(w, refW);
      w.forEach((x, i) => {
        const k = match[i]!;
        let dot = { re: 0, im: 0 };
        for (let r = 0; r < n; r++) {
          const ur = ref.left!.re[r * n + k]!, ui = -ref.left!.im[r * n + k]!, vr = ref.right!.re[r * n + k]!, vi = ref.right!.im[r * n + k]!;
          dot = { re: dot.re + ur * vr - ui * vi, im: dot.im + ur * vi + ui * vr };
        }
        const kappa = 1 / Math.max(Math.hypot(dot.re, dot.im), 1e-300);
        const err = Math.hypot(x.re - refW[k]!.re, x.im - refW[k]!.im);
        // A repeated eigenvalue's vectors are not unique (κ from them can be anything): its cluster is bounded by β‖A‖κ with κ ≤ 1e3 for these similarity transforms.
        const allowed = bound * normA * Math.min(kappa, 1e3) + 1e-30;
        assert.ok(err <= allowed, `${what}: eigenvalue ${x.re}+${x.im}i, the interpreter's ${refW[k]!.re}+${refW[k]!.im}i (κ ${kappa})`);
        worst = Math.max(worst, err / allowed);
      });
      // Conjugate pairs: positive imaginary part first, then its conjugate, exactly.
      for (let i = 0; i < n; i++) {
        if (w[i]!.im > 0) {
          assert.deepEqual(w[i + 1], { re: w[i + 1]!.re, im: -w[i]!.im }, `${what}: pair ${i}`);
          i++;
        } else assert.equal(w[i]!.im, 0, `${what}: eigenvalue ${i}'s imaginary part`);
      }
      if (target.startsWith("gees")) {
        const T = (i: number, j: number): number => num(mine[0]![s * n * n + i * n + j]);
        const Z = (i: number, j: number): number => num(mine[1]![s * n * n + i * n + j]);
        // Quasi-triangular, its 2×2 blocks standard, wr and wi read from them.
        for (let i = 0; i < n; i++) {
          for (let j = 0; j + 1 < i; j++) assert.ok(T(i, j) === 0, `${what}: T(${i}, ${j}) = ${T(i, j)}`);
          assert.equal(w[i]!.re, T(i, i), `${what}: wr ${i}`);
          if (i + 1 < n && T(i + 1, i) !== 0) {
            assert.ok(i + 2 >= n || T(i + 2, i + 1) === 0, `${what}: two sub-diagonal entries in a row at ${i}`);
            assert.equal(T(i, i), T(i + 1, i + 1), `${what}: block ${i}'s diagonal`);
            assert.ok(T(i, i + 1) * T(i + 1, i) < 0, `${what}: block ${i}'s off-diagonal signs`);
            assert.equal(w[i]!.im, Math.fround(Math.fround(Math.sqrt(Math.abs(T(i, i + 1)))) * Math.fround(Math.sqrt(Math.abs(T(i + 1, i))))), `${what}: wi ${i}`);
          }
        }
        if (target === "geesN") {
          assert.ok(mine[1]!.slice(s * n * n, (s + 1) * n * n).every((x) => num(x) === 0), `${what}: Z without vectors`);
          continue;
        }
        // A = Z T Zᵀ and ZᵀZ = I.
        let err = 0;
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < n; j++) {
            let x = 0, g = 0;
            for (let k = 0; k < n; k++) {
              g += Z(k, i) * Z(k, j);
              for (let l = Math.max(k - 1, 0); l < n; l++) x += Z(i, k) * T(k, l) * Z(j, l);
            }
            err += (A(i, j) - x) ** 2;
            assert.ok(Math.abs(g - (i === j ? 1 : 0)) <= bound, `${what}: (ZᵀZ)(${i}, ${j}) = ${g}`);
          }
        }
        assert.ok(Math.sqrt(err) <= bound * normA, `${what}: ‖A - Z T Zᵀ‖ = ${Math.sqrt(err)} > ${bound * normA}`);
        worst = Math.max(worst, Math.sqrt(err) / (bound * normA || 1));
        continue;
      }
      // Eigenvectors: complex columns (geev, hybrid), or LAPACK's real storage (the GPU's).
      const vector = (k: number, j: number): Complex[] => Array.from({ length: n }, (_, r) => {
        if (target !== "gpu") return cplx(mine[k]![s * n * n + r * n + j]);
        const at = (col: number): number => num(mine[k]![s * n * n + r * n + col]);
        if (w[j]!.im === 0) return { re: at(j), im: 0 };
        return w[j]!.im > 0 ? { re: at(j), im: at(j + 1) } : { re: at(j - 1), im: -at(j) };
      });
      for (const [k, side] of [[2, "left"], [3, "right"]] as const) {
        if (target === "geevR" && side === "left") {
          assert.ok(mine[k]!.slice(s * n * n, (s + 1) * n * n).every((x) => cplx(x).re === 0 && cplx(x).im === 0), `${what}: vl without left vectors`);
          continue;
        }
        for (let j = 0; j < n; j++) {
          const v = vector(k, j), lambda = w[j]!;
          assert.ok(Math.abs(cnorm(v) - 1) <= bound, `${what}: ${side} vector ${j}'s norm ${cnorm(v)}`);
          if (target !== "gpu") {
            // Its largest entry real and positive (a conjugate pair's second vector: the first's conjugate, exactly).
            const big = Math.max(...v.map((x) => Math.hypot(x.re, x.im)));
            assert.ok(v.some((x) => x.im === 0 && x.re > 0 && x.re >= big * (1 - 1e-6)), `${what}: ${side} vector ${j}'s largest entry is not real`);
            if (lambda.im < 0) assert.deepEqual(v, vector(k, j - 1).map((x) => ({ re: x.re, im: -x.im })), `${what}: ${side} vector ${j}`);
            if (lambda.im === 0) assert.ok(v.every((x) => x.im === 0), `${what}: ${side} vector ${j} is not real`);
          }
          // Right: A v - λ v; left: uᴴ A - λ uᴴ (the conjugates: Aᵀ u - conj(λ) u).
          const residual = Array.from({ length: n }, (_, i) => {
            let re = 0, im = 0;
            for (let q = 0; q < n; q++) {
              const a = side === "right" ? A(i, q) : A(q, i);
              re += a * v[q]!.re;
              im += a * v[q]!.im;
            }
            const li = side === "right" ? lambda.im : -lambda.im;
            return { re: re - (lambda.re * v[i]!.re - li * v[i]!.im), im: im - (lambda.re * v[i]!.im + li * v[i]!.re) };
          });
          const r = cnorm(residual);
          assert.ok(r <= bound * normA + 1e-30, `${what}: ${side} vector ${j}: residual ${r} > ${bound * normA}`);
          worst = Math.max(worst, r / (bound * normA || 1));
        }
      }
      if (target === "gpu") assert.deepEqual(mine[0]!.slice(s * n * n, (s + 1) * n * n), aValues, `${what}: a's copy`);
    }
    console.log(`${target} ${c.what} ${[...batch, n, n].join("x")}: worst ${(100 * worst).toFixed(3)}% of the bound; info ${info.join(",")}`);
  });
});

test("the plan (no GPU needed): f32 ?gees, ?geev and the GPU's geev are kernels with n and the flags as step parameters; past the order limit, f64 and sorting run on the host, saying why", () => {
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%a: tensor<3x6x6xf32>, %d: tensor<4x4xf64>, %big: tensor<65x65xf32>) -> (tensor<3x6x6xf32>, tensor<3x6x6xcomplex<f32>>, tensor<3x6x6xf32>, tensor<4x4xf64>, tensor<65x65xf32>, tensor<3x6x6xf32>) {
  %0:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x6x6xf32>, tensor<3x6xf32>, tensor<3x6xf32>, tensor<3xi32>, tensor<3xi32>)
  %1:5 = stablehlo.custom_call @lapack_sgeev_ffi(%a) {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (tensor<3x6x6xf32>) -> (tensor<3x6xf32>, tensor<3x6xf32>, tensor<3x6x6xcomplex<f32>>, tensor<3x6x6xcomplex<f32>>, tensor<3xi32>)
  %2:5 = stablehlo.custom_call @cusolver_geev_ffi(%a) {mhlo.backend_config = {left = false, right = true}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x6xcomplex<f32>>, tensor<0xf32>, tensor<3x6x6xf32>, tensor<3xi32>)
  %3:6 = stablehlo.custom_call @lapack_dgees_ffi(%d) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<i32>, tensor<i32>)
  %4:6 = stablehlo.custom_call @lapack_sgees_ffi(%big) {mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}} : (tensor<65x65xf32>) -> (tensor<65x65xf32>, tensor<65x65xf32>, tensor<65xf32>, tensor<65xf32>, tensor<i32>, tensor<i32>)
  %5:6 = stablehlo.custom_call @lapack_sgees_ffi(%a) {mhlo.backend_config = {mode = 86 : ui8, sort = 83 : ui8}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x6x6xf32>, tensor<3x6xf32>, tensor<3x6xf32>, tensor<3xi32>, tensor<3xi32>)
  return %0#0, %1#3, %2#3, %3#0, %4#0, %5#0 : tensor<3x6x6xf32>, tensor<3x6x6xcomplex<f32>>, tensor<3x6x6xf32>, tensor<4x4xf64>, tensor<65x65xf32>, tensor<3x6x6xf32>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /\?gees of 3 f32 matrix\(es\), Francis double-shift QR, an invocation a matrix/);
  assert.match(dump, /\?geev of 3 f32 matrix\(es\)/);
  assert.match(dump, /the GPU's geev of 3 f32 matrix\(es\)/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  assert.deepEqual(kernels.map((s) => s.parameters), [[6, 1, 108, 0], [6, 4, 216, 216], [6, 4, 0, 108]]);
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.deepEqual(hosts.map((why) => why.match(/^custom call [^\s:]+/)?.[0]), ["custom call lapack_dgees_ffi", "custom call lapack_sgees_ffi", "custom call lapack_sgees_ffi"]);
  assert.match(hosts[0]!, /WGSL has no f64/);
  assert.match(hosts[1]!, /order 65 runs on the host \(the GPU's Schur kernel, an invocation a matrix, takes orders up to 64\)/);
});
