// The symmetric eigenproblem on the WebGPU backend (webgpu/eigh_wgsl.ts: jaxlib's
// lapack_ssyevd_ffi, cusolver_syevd_ffi, hipsolver_syevd_ffi), f32: eigenvector signs
// (and bases of repeated eigenvalues) may differ from the interpreter's, so the vectors
// are checked by residual ‖A v̂ - λ̂ v̂‖₂ and orthogonality |V̂ᵀV̂ - I| in float64, and the
// eigenvalues (ascending) against the interpreter's, each within eighBound(n) (times
// ‖A‖_∞ where it has a scale; docs/numerics.md). Only the named triangle is read (the
// other holds other numbers); a matrix scaled by 1e30 (its squares overflow f32), a
// repeated eigenvalue, a zero matrix, -I, and a NaN in the unread triangle (NaN results,
// info 1, as the interpreter's); n = 1. Two pipelines (a batch count of 2 and of 4); the
// sizes and the triangle are parameters. And c64 ?heevd (lapack_cheevd_ffi, the GPU
// syevd targets on c64): eigenvectors up to a phase, so checked the same way in moduli
// (residual, |V̂ᴴV̂ - I|), within complexEighBound; one pipeline more.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { randoms, runOnGpu, tensorType } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { complexEighBound, eighBound, MAX_EIGH_ORDER } from "../../../src/compiler/webgpu/eigh_wgsl.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "f32"): string => tensorType(dims, t);

/** The calls: [batch, n], target, whether the lower triangle is named. */
const CASES = [
  { dims: [2, 6], target: "lapack_ssyevd_ffi", lower: true },
  { dims: [2, 17], target: "cusolver_syevd_ffi", lower: false },
  { dims: [4, 3], target: "hipsolver_syevd_ffi", lower: true },
  { dims: [2, 1], target: "cusolver_syevd_ffi", lower: true },
] as const;

function call({ dims, target, lower }: (typeof CASES)[number], p: number): { text: string; results: string[] } {
  const [batch, n] = dims;
  const a = tensor([batch, n, n]);
  const results = [a, tensor([batch, n]), tensor([batch], "i32")];
  const attrs = target.startsWith("lapack") ? `{mhlo.backend_config = {mode = 86 : ui8, uplo = ${lower ? 76 : 85} : ui8}}` : `{mhlo.backend_config = {algorithm = ${p === 1 ? 2 : 0} : ui8, lower = ${lower}}}`;
  return { results, text: `  %${p}:3 = stablehlo.custom_call @${target}(%a${p}) ${attrs} : (${a}) -> (${results.join(", ")})` };
}

/** Matrix b of a batch as float64 rows, symmetric from its named triangle. */
function symmetric(values: readonly number[], b: number, n: number, lower: boolean): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => {
    const [r, c] = lower === i >= j ? [i, j] : [j, i];
    return values[b * n * n + r * n + c]!;
  }));
}

test("eigh (lapack_ssyevd_ffi, cusolver_syevd_ffi, hipsolver_syevd_ffi): eigenvalues ascending near the interpreter's, residual and orthogonality within the stated bound, info as the interpreter's", { skip }, async () => {
  const r = randoms(900);
  const values = CASES.map(({ dims: [batch, n] }) => Array.from({ length: batch * n * n }, () => Math.fround(r())));
  // 6x6: the second matrix times 1e30.
  for (let e = 36; e < 72; e++) values[0]![e] = Math.fround(values[0]![e]! * 1e30);
  // 3x3: eigenvalues 3, 3, 6; zero; -I; a NaN in the upper triangle (lower named).
  values[2] = [4, 1, 1, 1, 4, 1, 1, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, -1, 0, 0, 0, -1, 1, NaN, 0, 2, 1, 0, 0, 0, 1];
  const calls = CASES.map(call);
  const resultTypes = calls.flatMap((c) => c.results);
  const program = parseStableHlo(`func.func @main(${CASES.map(({ dims: [batch, n] }, p) => `%a${p}: ${tensor([batch, n, n])}`).join(", ")}) -> (${resultTypes.join(", ")}) {
${calls.map((c) => c.text).join("\n")}
  return ${calls.flatMap((_, p) => [`%${p}#0`, `%${p}#1`, `%${p}#2`]).join(", ")} : ${resultTypes.join(", ")}
}`).entry;
  const { got, want, dump } = await runOnGpu(program, CASES.map(({ dims: [batch, n] }, p) => Literal.fromValues("f32", [batch, n, n], values[p]!)));
  assert.match(dump, /2 kernel\(s\), 0 host step/);
  CASES.forEach(({ dims: [batch, n], lower }, p) => {
    const [vectors, w, info] = [got[3 * p]!, got[3 * p + 1]!, got[3 * p + 2]!];
    assert.deepEqual(info, want[3 * p + 2], `${n}x${n}: info`);
    const beta = eighBound(n);
    let worstValue = 0, worstResidual = 0, worstOrthogonality = 0;
    for (let b = 0; b < batch; b++) {
      const what = `${n}x${n} matrix ${b}`;
      const a = symmetric(values[p]!, b, n, lower);
      if (a.some((row) => row.some((x) => !Number.isFinite(x))) || values[p]!.slice(b * n * n, (b + 1) * n * n).some((x) => !Number.isFinite(x))) {
        assert.ok(vectors.slice(b * n * n, (b + 1) * n * n).every(Number.isNaN) && w.slice(b * n, (b + 1) * n).every(Number.isNaN), `${what}: NaN results`);
        continue;
      }
      const norm = Math.max(...a.map((row) => row.reduce((s, x) => s + Math.abs(x), 0)));
      for (let j = 0; j < n; j++) {
        const lambda = w[b * n + j]!;
        if (j > 0) assert.ok(w[b * n + j - 1]! <= lambda, `${what}: eigenvalues ascending`);
        const err = Math.abs(lambda - want[3 * p + 1]![b * n + j]!);
        assert.ok(err <= beta * norm, `${what}: λ_${j} = ${lambda}, the interpreter's ${want[3 * p + 1]![b * n + j]}`);
        worstValue = Math.max(worstValue, norm === 0 ? 0 : err / (beta * norm));
        let residual = 0;
        for (let i = 0; i < n; i++) {
          let s = -lambda * vectors[b * n * n + i * n + j]!;
          for (let k = 0; k < n; k++) s += a[i]![k]! * vectors[b * n * n + k * n + j]!;
          residual += s * s;
        }
        assert.ok(Math.sqrt(residual) <= beta * norm, `${what}: ‖A v_${j} - λ v_${j}‖ = ${Math.sqrt(residual)}`);
        worstResidual = Math.max(worstResidual, norm === 0 ? 0 : Math.sqrt(residual) / (beta * norm));
        for (let k = 0; k < n; k++) {
          let dot = 0;
          for (let i = 0; i < n; i++) dot += vectors[b * n * n + i * n + j]! * vectors[b * n * n + i * n + k]!;
          const err = Math.abs(dot - (j === k ? 1 : 0));
          assert.ok(err <= beta, `${what}: (VᵀV - I)(${j}, ${k}) = ${dot - (j === k ? 1 : 0)}`);
          worstOrthogonality = Math.max(worstOrthogonality, err / beta);
        }
      }
    }
    console.log(`eigh ${n}x${n}: worst eigenvalue ${(100 * worstValue).toFixed(3)}%, residual ${(100 * worstResidual).toFixed(3)}%, orthogonality ${(100 * worstOrthogonality).toFixed(3)}% of the bound`);
  });
  // The 3x3 batch: 3, 3, 6; zeros (vectors I); -1 three times; info 1 for the NaN.
  assert.deepEqual(got[7]!.slice(0, 9).map((x) => Math.round(x * 1e4) / 1e4), [3, 3, 6, 0, 0, 0, -1, -1, -1]);
  assert.deepEqual(got[6]!.slice(9, 18), [1, 0, 0, 0, 1, 0, 0, 0, 1]);
  assert.deepEqual(got[8], [0, 0, 0, 1]);
});

test("c64 ?heevd (lapack_cheevd_ffi, cusolver_syevd_ffi and hipsolver_syevd_ffi on c64): eigenvalues ascending near the interpreter's, residual and unitarity within complexEighBound, the diagonal's imaginary parts and the unnamed triangle not read, NaN results for a non-finite matrix", { skip }, async () => {
  interface C { re: number; im: number }
  const cases = [
    { n: 6, target: "lapack_cheevd_ffi", lower: true },
    { n: 17, target: "cusolver_syevd_ffi", lower: false },
    { n: 3, target: "hipsolver_syevd_ffi", lower: true },
  ] as const;
  const T = (n: number): string => tensor([2, n, n], "complex<f32>");
  const lines = cases.map(({ n, target, lower }, p) => {
    const attrs = target.startsWith("lapack") ? `{mhlo.backend_config = {mode = 86 : ui8, uplo = ${lower ? 76 : 85} : ui8}}` : `{mhlo.backend_config = {algorithm = 0 : ui8, lower = ${lower}}}`;
    return `  %${p}:3 = stablehlo.custom_call @${target}(%a${p}) ${attrs} : (${T(n)}) -> (${T(n)}, ${tensor([2, n])}, ${tensor([2], "i32")})`;
  });
  const types = cases.flatMap(({ n }) => [T(n), tensor([2, n]), tensor([2], "i32")]);
  const program = parseStableHlo(`func.func @main(${cases.map(({ n }, p) => `%a${p}: ${T(n)}`).join(", ")}) -> (${types.join(", ")}) {
${lines.join("\n")}
  return ${cases.flatMap((_, p) => [`%${p}#0`, `%${p}#1`, `%${p}#2`]).join(", ")} : ${types.join(", ")}
}`).entry;
  const r = randoms(950);
  // Random entries everywhere: the unnamed triangle and the diagonal's imaginary parts hold numbers the kernel must not read.
  const values: C[][] = cases.map(({ n }) => Array.from({ length: 2 * n * n }, () => ({ re: Math.fround(r()), im: Math.fround(r()) })));
  // 3x3: [[2, i, 0], [-i, 2, 0], [0, 0, 5]] (eigenvalues 1, 3, 5; the upper triangle other numbers, not read), then a NaN in
  // the unnamed triangle (NaN results and info 1: the interpreter checks the whole matrix, as LAPACK's callers in jaxlib do).
  const other = { re: 9, im: -9 };
  values[2] = [{ re: 2, im: 7 }, other, other, { re: 0, im: -1 }, { re: 2, im: 0 }, other, { re: 0, im: 0 }, { re: 0, im: 0 }, { re: 5, im: 0 }, ...values[2]!.slice(9)];
  values[2]![9 + 1] = { re: NaN, im: 0 };
  const { got, want, dump } = await runOnGpu<C | number>(program, cases.map(({ n }, p) => Literal.fromValues("c64", [2, n, n], values[p]! as never)));
  assert.match(dump, /\?heevd of 2 c64 matrix\(es\)/);
  assert.equal(new Set([...dump.matchAll(/WGSL kernel (\d+)/g)].map((x) => x[1])).size, 1, "one pipeline: n and the triangle are parameters");
  cases.forEach(({ n, lower }, p) => {
    const vectors = got[3 * p] as C[], w = got[3 * p + 1] as number[];
    assert.deepEqual(got[3 * p + 2], want[3 * p + 2], `${n}x${n}: info`);
    const beta = complexEighBound(n);
    let worstValue = 0, worstResidual = 0, worstUnitary = 0;
    for (let b = 0; b < 2; b++) {
      const what = `${n}x${n} matrix ${b}`;
      // A as the interpreter reads it: the named triangle, the other its conjugate, the diagonal real.
      const at = (i: number, j: number): C => {
        const [r0, c0] = lower === i >= j ? [i, j] : [j, i];
        const v = values[p]![b * n * n + r0 * n + c0]!;
        return i === j ? { re: v.re, im: 0 } : r0 === i ? v : { re: v.re, im: -v.im };
      };
      if (p === 2 && b === 1) {
        assert.ok(vectors.slice(n * n).every((v) => Number.isNaN(v.re) && Number.isNaN(v.im)) && w.slice(n).every(Number.isNaN), `${what}: NaN results`);
        assert.deepEqual(got[3 * p + 2], [0, 1]);
        continue;
      }
      const A = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => at(i, j)));
      const norm = Math.max(...A.map((row) => row.reduce((s, x) => s + Math.hypot(x.re, x.im), 0)));
      const v = (i: number, j: number): C => vectors[b * n * n + i * n + j]!;
      for (let j = 0; j < n; j++) {
        const lambda = w[b * n + j]!;
        if (j > 0) assert.ok(w[b * n + j - 1]! <= lambda, `${what}: eigenvalues ascending`);
        const err = Math.abs(lambda - (want[3 * p + 1] as number[])[b * n + j]!);
        assert.ok(err <= beta * norm, `${what}: λ_${j} = ${lambda}, the interpreter's ${(want[3 * p + 1] as number[])[b * n + j]}`);
        worstValue = Math.max(worstValue, err / (beta * norm));
        let residual = 0;
        for (let i = 0; i < n; i++) {
          let re = -lambda * v(i, j).re, im = -lambda * v(i, j).im;
          for (let k = 0; k < n; k++) { re += A[i]![k]!.re * v(k, j).re - A[i]![k]!.im * v(k, j).im; im += A[i]![k]!.re * v(k, j).im + A[i]![k]!.im * v(k, j).re; }
          residual += re * re + im * im;
        }
        assert.ok(Math.sqrt(residual) <= beta * norm, `${what}: ‖A v_${j} - λ v_${j}‖ = ${Math.sqrt(residual)}`);
        worstResidual = Math.max(worstResidual, Math.sqrt(residual) / (beta * norm));
        for (let k = 0; k < n; k++) {
          let re = 0, im = 0;
          for (let i = 0; i < n; i++) { re += v(i, j).re * v(i, k).re + v(i, j).im * v(i, k).im; im += v(i, j).re * v(i, k).im - v(i, j).im * v(i, k).re; }
          const e = Math.hypot(re - (j === k ? 1 : 0), im);
          assert.ok(e <= beta, `${what}: |VᴴV - I|(${j}, ${k}) = ${e}`);
          worstUnitary = Math.max(worstUnitary, e / beta);
        }
      }
    }
    console.log(`heevd ${n}x${n}: worst eigenvalue ${(100 * worstValue).toFixed(3)}%, residual ${(100 * worstResidual).toFixed(3)}%, unitarity ${(100 * worstUnitary).toFixed(3)}% of the bound`);
  });
  assert.deepEqual((got[7] as number[]).slice(0, 3).map((x) => Math.round(x * 1e4) / 1e4), [1, 3, 5]);
});

test("the plan (no GPU needed): f32 ?syevd is a kernel with n and the triangle as parameters; past MAX_EIGH_ORDER, f64, or a bad attribute it runs on the host, saying why", () => {
  const big = MAX_EIGH_ORDER + 1;
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%a: tensor<3x6x6xf32>, %b: tensor<${big}x${big}xf32>, %d: tensor<4x4xf64>) -> (tensor<3x6x6xf32>, tensor<${big}xf32>, tensor<4xf64>, tensor<3x6x6xf32>) {
  %0:3 = stablehlo.custom_call @cusolver_syevd_ffi(%a) {mhlo.backend_config = {algorithm = 1 : ui8, lower = false}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x6xf32>, tensor<3xi32>)
  %1:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%b) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<${big}x${big}xf32>) -> (tensor<${big}x${big}xf32>, tensor<${big}xf32>, tensor<i32>)
  %2:3 = stablehlo.custom_call @lapack_dsyevd_ffi(%d) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<i32>)
  %3:3 = stablehlo.custom_call @cusolver_syevd_ffi(%a) {mhlo.backend_config = {algorithm = 3 : ui8, lower = true}} : (tensor<3x6x6xf32>) -> (tensor<3x6x6xf32>, tensor<3x6xf32>, tensor<3xi32>)
  return %0#0, %1#1, %2#1, %3#0 : tensor<3x6x6xf32>, tensor<${big}xf32>, tensor<4xf64>, tensor<3x6x6xf32>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /\?syevd of 3 f32 matrix\(es\), one-sided Jacobi on A \+ σI, an invocation a pair of columns, the n and triangle parameters, 3 workgroups of 32/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  assert.deepEqual(kernels.map((s) => s.parameters), [[6, 0]]);
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.equal(hosts.length, 3);
  assert.match(hosts[0]!, new RegExp(`lapack_ssyevd_ffi: order ${big} runs on the host \\(the GPU's Jacobi kernel takes orders up to ${MAX_EIGH_ORDER}`));
  assert.equal(hosts[1], "custom call lapack_dsyevd_ffi (f64[4,4]) -> (f64[4,4], f64[4], s32[]): WGSL has no f64 (f64 and c128 LAPACK calls run on the host)");
  assert.match(hosts[2]!, /^custom call cusolver_syevd_ffi \(f32\[3,6,6\]\) -> \(f32\[3,6,6\], f32\[3,6\], s32\[3\]\): a form of operands, results or attributes its WGSL kernel does not take/);
});
