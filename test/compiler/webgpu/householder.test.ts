// The Householder reductions on the WebGPU backend (webgpu/householder_wgsl.ts: jaxlib's
// lapack_sgehrd_ffi, lapack_ssytrd_ffi, cusolver_sytrd_ffi, hipsolver_sytrd_ffi), f32:
// LAPACK's compact form (the reduced matrix with the reflectors in it, tau; d and e) near
// the interpreter's element by element (the form is unique given slarfg's sign
// convention: β = -sign(α)·‖(α, x)‖, so a flipped sign moves β, tau and v by O(1)), and
// A = Q̂·R̂·Q̂ᵀ within the stated bound (docs/numerics.md: reductionBackwardBound), Q̂
// the float64 product of the GPU's reflectors read as LAPACK defines them (?sytrd's upper
// form by LAPACK's own convention, not the kernel's reversal); ?sytrd's other triangle
// kept bit for bit. ?gehrd over a partial range (ilo 2, ihi 4), columns already reduced
// (tau 0) and α = 0 (β = -‖x‖, tau 1); n = 1, 2 and 40 (a workgroup of 64).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { randoms, runOnGpu, tensorType } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { reductionBackwardBound } from "../../../src/compiler/webgpu/householder_wgsl.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "f32"): string => tensorType(dims, t);

interface Case { readonly batch: readonly number[]; readonly n: number; readonly target: string; readonly attrs: string; readonly lower?: boolean; readonly range?: readonly [number, number] }

const GEHRD: readonly Case[] = [
  { batch: [2], n: 1, target: "lapack_sgehrd_ffi", attrs: "{high = 1 : i32, low = 1 : i32}", range: [1, 1] },
  { batch: [2], n: 6, target: "lapack_sgehrd_ffi", attrs: "{high = 6 : i32, low = 1 : i32}", range: [1, 6] },
  { batch: [2, 2], n: 17, target: "lapack_sgehrd_ffi", attrs: "{high = 17 : i32, low = 1 : i32}", range: [1, 17] },
  { batch: [], n: 5, target: "lapack_sgehrd_ffi", attrs: "{high = 4 : i32, low = 2 : i32}", range: [2, 4] },
  { batch: [1], n: 40, target: "lapack_sgehrd_ffi", attrs: "{high = 40 : i32, low = 1 : i32}", range: [1, 40] },
  // Special columns (values set below).
  { batch: [1], n: 4, target: "lapack_sgehrd_ffi", attrs: "{high = 4 : i32, low = 1 : i32}", range: [1, 4] },
];

const SYTRD: readonly Case[] = [
  { batch: [2], n: 6, target: "lapack_ssytrd_ffi", attrs: "{uplo = 76 : ui8}", lower: true },
  { batch: [2], n: 17, target: "cusolver_sytrd_ffi", attrs: "{lower = false}", lower: false },
  { batch: [], n: 1, target: "hipsolver_sytrd_ffi", attrs: "{lower = true}", lower: true },
  { batch: [3], n: 5, target: "lapack_ssytrd_ffi", attrs: "{uplo = 85 : ui8}", lower: false },
  { batch: [2], n: 2, target: "lapack_ssytrd_ffi", attrs: "{uplo = 76 : ui8}", lower: true },
  { batch: [1], n: 40, target: "cusolver_sytrd_ffi", attrs: "{lower = true}", lower: true },
  // Special columns (values set below), lower and upper.
  { batch: [1], n: 4, target: "lapack_ssytrd_ffi", attrs: "{uplo = 76 : ui8}", lower: true },
  { batch: [1], n: 4, target: "lapack_ssytrd_ffi", attrs: "{uplo = 85 : ui8}", lower: false },
];

/** The result types of a case. */
function resultTypes({ batch, n, target }: Case): string[] {
  const a = tensor([...batch, n, n]), m = Math.max(n - 1, 0);
  return target.includes("gehrd")
    ? [a, tensor([...batch, m]), tensor(batch, "i32")]
    : [a, tensor([...batch, n]), tensor([...batch, m]), tensor([...batch, m]), tensor(batch, "i32")];
}

/** The float64 product of reflectors (v_k, tau_k) in order: H(0)·H(1)···, each H = I - tau·v·vᵀ. */
function product(n: number, reflectors: readonly { v: number[]; tau: number }[]): number[][] {
  const q = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j): number => (i === j ? 1 : 0)));
  // Q·H for each H in order: rows of Q times (I - tau v vᵀ).
  for (const { v, tau } of reflectors) {
    for (const row of q) {
      const w = row.reduce((s, x, j) => s + x * v[j]!, 0);
      for (let j = 0; j < n; j++) row[j]! -= tau * w * v[j]!;
    }
  }
  return q;
}

/** ‖A - Q R Qᵀ‖_F / ‖A‖_F in float64. */
function backwardError(a: readonly (readonly number[])[], q: readonly (readonly number[])[], r: readonly (readonly number[])[]): number {
  const n = a.length;
  let err = 0, norm = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) for (let l = 0; l < n; l++) s += q[i]![k]! * r[k]![l]! * q[j]![l]!;
      err += (a[i]![j]! - s) ** 2;
      norm += a[i]![j]! ** 2;
    }
  }
  return norm === 0 ? 0 : Math.sqrt(err / norm);
}

const matrix = (values: readonly number[], s: number, n: number): number[][] => Array.from({ length: n }, (_, i) => values.slice(s * n * n + i * n, s * n * n + (i + 1) * n));

test("?gehrd and ?sytrd (lapack_sgehrd_ffi, lapack_ssytrd_ffi, cusolver_sytrd_ffi, hipsolver_sytrd_ffi): LAPACK's compact form near the interpreter's, A = Q R Qᵀ within the stated bound, slarfg's signs", { skip }, async () => {
  const cases = [...GEHRD, ...SYTRD];
  const lines = cases.map((c, p) => {
    const out = resultTypes(c);
    return `  %${p}:${out.length} = stablehlo.custom_call @${c.target}(%a${p}) {mhlo.backend_config = ${c.attrs}} : (${tensor([...c.batch, c.n, c.n])}) -> (${out.join(", ")})`;
  });
  const results = cases.flatMap(resultTypes);
  const text = `func.func @main(${cases.map((c, p) => `%a${p}: ${tensor([...c.batch, c.n, c.n])}`).join(", ")}) -> (${results.join(", ")}) {
${lines.join("\n")}
  return ${cases.flatMap((c, p) => resultTypes(c).map((_, k) => `%${p}#${k}`)).join(", ")} : ${results.join(", ")}
}`;
  const values = cases.map(({ batch, n }, p) => {
    const r = randoms(800 + p);
    return Array.from({ length: elementCount(batch) * n * n }, () => Math.fround(r()));
  });
  // The partial range (ilo 2, ihi 4 of 5): A is upper triangular outside it, as balancing leaves it (LAPACK's assumption).
  values[3] = values[3]!.map((x, e) => { const i = Math.floor(e / 5), j = e % 5; return i > j && (j < 1 || i >= 4) ? 0 : x; });
  // gehrd 4x4: column 0 below the sub-diagonal zero under α = -3 (tau 0, kept); column 1's α = 0 over x = (0, 2) (β = -2, tau 1).
  values[5] = [1, 2, 3, 4, -3, 1, 2, 1, 0, 0, 5, 1, 0, 2, 1, 1];
  // sytrd 4x4 lower: column 0's α = a(1, 0) = 0 over x = (2, 0) (β = -2, tau 1); the upper one named: its W = PAP has the same column.
  values[GEHRD.length + 6] = [1, 9, 9, 9, 0, 3, 9, 9, 2, 1, 2, 9, 0, 1, 1, 4];
  values[GEHRD.length + 7] = [4, 1, 1, 0, 9, 2, 1, 2, 9, 9, 3, 0, 9, 9, 9, 1];
  const { got, want, dump } = await runOnGpu(parseStableHlo(text).entry, cases.map((c, p) => Literal.fromValues("f32", [...c.batch, c.n, c.n], values[p]!)));
  // A pipeline per batch count and workgroup size.
  assert.match(dump, /8 kernel\(s\), 0 host step/);
  let at = 0;
  cases.forEach((c, p) => {
    const { batch, n, target } = c;
    const leaves = resultTypes(c).length;
    const mine = got.slice(at, at + leaves), theirs = want.slice(at, at + leaves);
    at += leaves;
    const what = `${target} ${[...batch, n, n].join("x")}${c.lower === undefined ? ` ilo ${c.range![0]} ihi ${c.range![1]}` : c.lower ? " lower" : " upper"}`;
    // Near the interpreter, element by element; info 0.
    let worst = 0;
    theirs.forEach((w, k) => {
      const scale = Math.max(...w.map(Math.abs), 1);
      mine[k]!.forEach((v, e) => {
        const err = Math.abs(v - w[e]!);
        assert.ok(err <= 2 ** -12 * scale, `${what}: result ${k} element ${e}: ${v}, the interpreter's ${w[e]}`);
        worst = Math.max(worst, err / scale);
      });
    });
    assert.deepEqual(mine[leaves - 1], new Array<number>(elementCount(batch)).fill(0), `${what}: info`);
    const m = Math.max(n - 1, 0), bound = reductionBackwardBound(n);
    let worstBackward = 0;
    for (let s = 0; s < elementCount(batch); s++) {
      const a = matrix(values[p]!, s, n), out = matrix(mine[0]!, s, n);
      const tau = mine[c.lower === undefined ? 1 : 3]!.slice(s * m, (s + 1) * m);
      let q: number[][], r: number[][];
      if (c.lower === undefined) {
        // Hessenberg: H(ilo-1)···H(ihi-2), v_i = (0.., 1 at i+1, out(i+2..ihi-1, i)); R is out with the reflectors' entries cleared.
        const [ilo, ihi] = c.range!;
        const reflectors = Array.from({ length: Math.max(ihi - ilo, 0) }, (_, k) => {
          const i = ilo - 1 + k;
          return { v: Array.from({ length: n }, (_, q) => (q === i + 1 ? 1 : q > i + 1 && q < ihi ? out[q]![i]! : 0)), tau: tau[i]! };
        });
        tau.forEach((t, i) => { if (i < ilo - 1 || i >= ihi - 1) assert.equal(t, 0, `${what}: tau ${i} outside the range`); });
        q = product(n, reflectors);
        r = out.map((row, i) => row.map((x, j) => (j >= ilo - 1 && j < ihi - 1 && i > j + 1 && i < ihi ? 0 : x)));
      } else {
        const d = mine[1]!.slice(s * n, (s + 1) * n), e = mine[2]!.slice(s * m, (s + 1) * m);
        r = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? d[i]! : Math.abs(i - j) === 1 ? e[Math.min(i, j)]! : 0)));
        // A from its named triangle; the other triangle of the result is A's, bit for bit.
        const named = (i: number, j: number): boolean => (c.lower ? i >= j : i <= j);
        a.forEach((row, i) => row.forEach((_, j) => { if (!named(i, j)) row[j] = a[j]![i]!; }));
        out.forEach((row, i) => row.forEach((x, j) => { if (!named(i, j)) assert.equal(x, values[p]![s * n * n + i * n + j], `${what}: (${i}, ${j}) of the other triangle`); }));
        // LAPACK: lower Q = H(0)···H(n-2), v_k = (0.., 1 at k+1, out(k+2.., k)); upper Q = H(n-2)···H(0), v_k = (out(0..k-1, k+1), 1 at k, 0..).
        const reflectors = Array.from({ length: m }, (_, k) => ({
          v: Array.from({ length: n }, (_, i) => (c.lower ? (i === k + 1 ? 1 : i > k + 1 ? out[i]![k]! : 0) : i === k ? 1 : i < k ? out[i]![k + 1]! : 0)),
          tau: tau[k]!,
        }));
        q = product(n, c.lower ? reflectors : reflectors.reverse());
        // d and e are the reduced matrix's diagonal and off-diagonal, where LAPACK leaves them.
        for (let i = 0; i < n; i++) assert.equal(out[i]![i], d[i], `${what}: d ${i} on the diagonal`);
        for (let k = 0; k < m; k++) assert.equal(c.lower ? out[k + 1]![k] : out[k]![k + 1], e[k], `${what}: e ${k} beside the diagonal`);
      }
      const err = backwardError(a, q, r);
      assert.ok(err <= bound, `${what}: matrix ${s}: ‖A - Q R Qᵀ‖/‖A‖ = ${err} > ${bound}`);
      worstBackward = Math.max(worstBackward, err / bound);
    }
    console.log(`${what}: worst ‖A - QRQᵀ‖ ${(100 * worstBackward).toFixed(3)}% of its bound; within ${worst.toExponential(2)} of the interpreter's scale`);
  });
  // The special columns, exactly: gehrd's tau (0, 1, ·) and β's; sytrd's e_0 = -2 and tau_0 = 1 (lower, and upper's last).
  const g = GEHRD.reduce((s, c) => s + resultTypes(c).length, 0);
  const gehrdAt = GEHRD.slice(0, 5).reduce((s, c) => s + resultTypes(c).length, 0);
  assert.deepEqual(got[gehrdAt + 1]!.slice(0, 2), [0, 1]);
  assert.deepEqual([got[gehrdAt]![4], got[gehrdAt]![9]], [-3, -2]);
  const sytrdAt = g + SYTRD.slice(0, 6).reduce((s, c) => s + resultTypes(c).length, 0);
  assert.deepEqual([got[sytrdAt + 2]![0], got[sytrdAt + 3]![0]], [-2, 1]);
  assert.deepEqual([got[sytrdAt + 7]![2], got[sytrdAt + 8]![2]], [-2, 1]);
});

test("the plan (no GPU needed): f32 ?gehrd and ?sytrd are kernels with their sizes, ilo/ihi and triangle as step parameters; f64 ones run on the host, saying why", () => {
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%a: tensor<3x6x6xf32>, %d: tensor<4x4xf64>) -> (tensor<3x6x6xf32>, tensor<3x5xf32>, tensor<3x6x6xf32>, tensor<4x4xf64>) {
  %0:3 = stablehlo.custom_call @lapack_sgehrd_ffi(%a) {mhlo.backend_config = {high = 5 : i32, low = 2 : i32}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x5xf32>, tensor<3xi32>)
  %1:5 = stablehlo.custom_call @cusolver_sytrd_ffi(%a) {mhlo.backend_config = {lower = false}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x6xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3xi32>)
  %2:3 = stablehlo.custom_call @lapack_dgehrd_ffi(%d) {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<3xf64>, tensor<i32>)
  return %0#0, %0#1, %1#0, %2#0 : tensor<3x6x6xf32>, tensor<3x5xf32>, tensor<3x6x6xf32>, tensor<4x4xf64>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /\?gehrd of 3 f32 matrix\(es\), Householder, the sizes and ilo\/ihi parameters, 3 workgroups of 32/);
  assert.match(dump, /\?sytrd of 3 f32 matrix\(es\), Householder, the n and triangle parameters, 3 workgroups of 32/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  assert.deepEqual(kernels.map((s) => s.parameters), [[6, 2, 5], [6, 0]]);
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.equal(hosts.length, 1);
  assert.match(hosts[0]!, /^custom call lapack_dgehrd_ffi \(f64\[.*\): WGSL has no f64 \(f64 and c128 LAPACK calls run on the host\)$/);
});
