// The complex (c64) singular value decomposition on the WebGPU backend (webgpu/svd_wgsl.ts
// over matrix_kernel_wgsl.ts's COMPLEX field: jaxlib's lapack_cgesdd_ffi and
// lapack_cgesvd_ffi, and cusolver_gesvd_ffi (transposed or not), hipsolver_gesdd_ffi,
// cusolver_gesvdj_ffi and cusolver_gesvdp_ffi on c64): singular values (f32) descending
// near the interpreter's, ‖A - ÛΣ̂V̂ᴴ‖_F, |ÛᴴÛ - I| and |V̂ᴴV̂ - I| within
// complexSvdBound(m, n) (docs/numerics.md), every column U has (the full ones completed
// past the rank) included; each singular pair (u_j, v_j) of a well separated σ_j equal
// to the interpreter's up to one phase e^{iθ} for both (the contract: U and Vᴴ up to the
// phases of pairs; a V returned unconjugated, transposed or in the other slot fails it);
// a's copy bit for bit; vectors off: zeros, as the interpreter's. Tall, wide and square,
// full and reduced, batch dims and none; a rank-deficient matrix, a zero matrix, a
// matrix times 1e30, a NaN (NaN results, info 1), 1x1, min(m, n) = 66 (a workgroup of
// 64), and empty matrices (3x0 and 0x2: the full U and Vᴴ the identity).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { ZERO, abs, add, c, conj, mul, randoms, runOnGpu, sub, type C } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { complexSvdBound } from "../../../src/compiler/webgpu/svd_wgsl.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const scale = (a: C, s: number): C => c(a.re * s, a.im * s);

const tensor = (dims: readonly number[], t = "complex<f32>"): string => `tensor<${dims.length === 0 ? "" : `${dims.join("x")}x`}${t}>`;
const count = (xs: readonly number[]): number => xs.reduce((p, x) => p * x, 1);

/** A call: batch, m×n, the target and its attributes, and its form (as the registry reads it). */
interface Case {
  readonly batch: readonly number[]; readonly m: number; readonly n: number; readonly target: string; readonly attrs: string;
  readonly vectors: boolean; readonly full: boolean; readonly uSlot: 2 | 3; readonly rightAsV: boolean;
}

const lapack = (batch: number[], m: number, n: number, mode: "A" | "S" | "N", target = "lapack_cgesdd_ffi"): Case =>
  ({ batch, m, n, target, attrs: `{mode = ${mode.charCodeAt(0)} : ui8}`, vectors: mode !== "N", full: mode === "A", uSlot: 2, rightAsV: false });
const gpu = (batch: number[], m: number, n: number, target: string, full: boolean, vectors = true): Case => {
  const jacobi = target.includes("gesvdj") || target.includes("gesvdp");
  const transposed = target === "cusolver_gesvd_ffi" && m < n;
  return {
    batch, m, n, target, vectors, full, uSlot: transposed ? 3 : 2, rightAsV: jacobi,
    attrs: `{compute_uv = ${vectors}, full_matrices = ${full}${jacobi ? "" : `, transposed = ${transposed}`}}`,
  };
};

const CASES: readonly Case[] = [
  lapack([2], 6, 4, "A"),
  lapack([2], 3, 5, "S", "lapack_cgesvd_ffi"),
  lapack([2], 5, 5, "N"),
  gpu([], 17, 9, "cusolver_gesvd_ffi", false),
  gpu([2], 4, 7, "cusolver_gesvd_ffi", true),
  gpu([1], 5, 8, "hipsolver_gesdd_ffi", false),
  gpu([3], 7, 3, "cusolver_gesvdj_ffi", true),
  gpu([2], 4, 4, "cusolver_gesvdp_ffi", false, false),
  gpu([2], 3, 6, "cusolver_gesvdj_ffi", false),
  lapack([2], 4, 6, "A", "lapack_cgesvd_ffi"),
  // Special matrices (values below): rank 2 of 6x4 (full U), zero, times 1e30, NaN; 1x1; 66x70 (wide: a workgroup of 64).
  lapack([4], 6, 4, "A"),
  lapack([2], 1, 1, "S"),
  lapack([], 66, 70, "S"),
  // Empty: U (full) the identity.
  lapack([2], 3, 0, "A", "lapack_cgesvd_ffi"),
  lapack([1], 0, 2, "A"),
];
const SPECIAL = 10;

function shapes(c: Case): { u: number[]; v: number[]; types: string[] } {
  const k = Math.min(c.m, c.n);
  const u = [c.m, c.full ? c.m : k], v = c.full ? [c.n, c.n] : c.rightAsV ? [c.n, k] : [k, c.n];
  const slots = c.uSlot === 2 ? [u, v] : [v, u];
  return { u, v, types: [tensor([...c.batch, c.m, c.n]), tensor([...c.batch, k], "f32"), ...slots.map((d) => tensor([...c.batch, ...d])), tensor(c.batch, "i32")] };
}

test("c64 SVD (lapack_cgesdd_ffi, lapack_cgesvd_ffi, cusolver_gesvd_ffi, hipsolver_gesdd_ffi, cusolver_gesvdj_ffi, cusolver_gesvdp_ffi): σ near the interpreter's, A = UΣVᴴ and unitarity within complexSvdBound, pairs equal to the interpreter's up to a phase", { skip }, async () => {
  const lines = CASES.map((x, p) => `  %${p}:5 = stablehlo.custom_call @${x.target}(%a${p}) {mhlo.backend_config = ${x.attrs}} : (${tensor([...x.batch, x.m, x.n])}) -> (${shapes(x).types.join(", ")})`);
  const results = CASES.flatMap((x) => shapes(x).types);
  const text = `func.func @main(${CASES.map((x, p) => `%a${p}: ${tensor([...x.batch, x.m, x.n])}`).join(", ")}) -> (${results.join(", ")}) {
${lines.join("\n")}
  return ${CASES.flatMap((_, p) => [0, 1, 2, 3, 4].map((k) => `%${p}#${k}`)).join(", ")} : ${results.join(", ")}
}`;
  const values: C[][] = CASES.map((x, p) => {
    const r = randoms(1600 + p);
    return Array.from({ length: count(x.batch) * x.m * x.n }, () => c(Math.fround(r()), Math.fround(r())));
  });
  // Rank 2 (column 2 is i·column 0, column 3 column 0 + (1 - i)·column 1: small integers, exact); zero; times 1e30; a NaN part.
  const special = values[SPECIAL]!;
  for (let i = 0; i < 6; i++) {
    const x = c((i % 3) - 1, i < 3 ? 1 : 0), y = c(i < 3 ? 1 : 2, (i % 2) - 1);
    special.splice(i * 4, 4, x, mul(c(0, 1), x), y, add(x, mul(c(1, -1), y)));
    for (let j = 0; j < 4; j++) special[24 + i * 4 + j] = ZERO;
  }
  for (let e = 48; e < 72; e++) special[e] = c(Math.fround(special[e]!.re * 1e30), Math.fround(special[e]!.im * 1e30));
  special[80] = c(special[80]!.re, NaN);
  const { got, want, dump } = await runOnGpu<C | number>(parseStableHlo(text).entry, CASES.map((x, p) => Literal.fromValues("c64", [...x.batch, x.m, x.n], values[p]! as never)));
  assert.match(dump, /kernel\(s\), 0 host step/);
  assert.match(dump, /SVD of 2 c64 matrix\(es\)/);
  CASES.forEach((x, p) => {
    const [aOut, s, r2, r3, info] = got.slice(5 * p, 5 * p + 5) as [C[], number[], C[], C[], number[]];
    const [, sWant, w2, w3, infoWant] = want.slice(5 * p, 5 * p + 5) as [C[], number[], C[], C[], number[]];
    const { m, n } = x, k = Math.min(m, n), beta = complexSvdBound(m, n);
    const what = `${x.target} ${[...x.batch, m, n].join("x")}${x.vectors ? (x.full ? " full" : " reduced") : " values"}`;
    aOut.forEach((v, e) => assert.ok(Object.is(v.re, values[p]![e]!.re) && Object.is(v.im, values[p]![e]!.im), `${what}: a's copy, element ${e}`));
    assert.deepEqual(info, infoWant, `${what}: info`);
    if (!x.vectors) {
      assert.ok([...r2, ...r3].every((v) => v.re === 0 && v.im === 0), `${what}: no vectors, zeros`);
      assert.ok([...w2, ...w3].every((v) => v.re === 0 && v.im === 0));
    }
    const { u: uDims, v: vDims } = shapes(x);
    const [uAll, rightAll, uWant, rightWant] = x.uSlot === 2 ? [r2, r3, w2, w3] : [r3, r2, w3, w2];
    const ucols = uDims[1]!, vcols = x.full ? n : k;
    let worstValue = 0, worstResidual = 0, worstUnitarity = 0, worstPair = 0;
    for (let b = 0; b < count(x.batch); b++) {
      const a = values[p]!.slice(b * m * n, (b + 1) * m * n);
      const sb = s.slice(b * k, (b + 1) * k);
      if (a.some((v) => !Number.isFinite(v.re) || !Number.isFinite(v.im))) {
        assert.ok(sb.every(Number.isNaN) && info[b] === 1, `${what} matrix ${b}: NaN, info 1`);
        if (x.vectors) assert.ok(uAll.slice(b * m * ucols, (b + 1) * m * ucols).every((v) => Number.isNaN(v.re) && Number.isNaN(v.im)), `${what} matrix ${b}: U NaN`);
        continue;
      }
      const norm = Math.sqrt(a.reduce((t, v) => t + abs(v) ** 2, 0));
      sb.forEach((v, j) => {
        if (j > 0) assert.ok(sb[j - 1]! >= v, `${what} matrix ${b}: descending`);
        const err = Math.abs(v - sWant[b * k + j]!);
        assert.ok(err <= beta * norm, `${what} matrix ${b}: σ_${j} = ${v}, the interpreter's ${sWant[b * k + j]}`);
        worstValue = Math.max(worstValue, norm === 0 ? 0 : err / (beta * norm));
      });
      if (!x.vectors) continue;
      const U = (i: number, j: number, all = uAll): C => all[b * m * ucols + i * ucols + j]!;
      // V(i, j): the right slot holds V (n × its columns) or Vᴴ (its rows × n), whose (j, i) is conj(V(i, j)).
      const V = (i: number, j: number, all = rightAll): C => (x.rightAsV ? all[b * n * vDims[1]! + i * vDims[1]! + j]! : conj(all[b * vDims[0]! * n + j * n + i]!));
      let residual = 0;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let y = ZERO;
          for (let t = 0; t < k; t++) y = add(y, scale(mul(U(i, t), conj(V(j, t))), sb[t]!));
          residual += abs(sub(a[i * n + j]!, y)) ** 2;
        }
      }
      assert.ok(Math.sqrt(residual) <= beta * norm, `${what} matrix ${b}: ‖A - UΣVᴴ‖ = ${Math.sqrt(residual)} > ${beta * norm}`);
      worstResidual = Math.max(worstResidual, norm === 0 ? 0 : Math.sqrt(residual) / (beta * norm));
      for (const [get, rows, cols, name] of [[U, m, ucols, "U"], [V, n, vcols, "V"]] as const) {
        for (let i = 0; i < cols; i++) {
          for (let j = 0; j < cols; j++) {
            let dot = ZERO;
            for (let r = 0; r < rows; r++) dot = add(dot, mul(conj(get(r, i)), get(r, j)));
            const err = abs(sub(dot, c(i === j ? 1 : 0)));
            assert.ok(err <= beta, `${what} matrix ${b}: |${name}ᴴ${name} - I|(${i}, ${j}) = ${err}`);
            worstUnitarity = Math.max(worstUnitarity, err / beta);
          }
        }
      }
      // The pairs of well separated σ_j: the interpreter's times one phase e^{iθ} for both.
      for (let j = 0; j < k; j++) {
        const gap = Math.min(...sb.map((v, t) => (t === j ? Infinity : Math.abs(v - sb[j]!))));
        if (!(sb[j]! > 0 && gap >= 2 ** -6 * sb[0]!)) continue;
        let dot = ZERO;
        for (let i = 0; i < m; i++) dot = add(dot, mul(conj(U(i, j, uWant)), U(i, j)));
        const phase = scale(dot, 1 / abs(dot));
        const tolerance = 2 ** -10;
        for (let i = 0; i < m; i++) {
          const d = abs(sub(U(i, j), mul(phase, U(i, j, uWant))));
          assert.ok(d <= tolerance, `${what} matrix ${b}: u_${j}(${i}) = ${JSON.stringify(U(i, j))}, the interpreter's ${JSON.stringify(U(i, j, uWant))} times ${JSON.stringify(phase)}`);
          worstPair = Math.max(worstPair, d);
        }
        for (let i = 0; i < n; i++) {
          const d = abs(sub(V(i, j), mul(phase, V(i, j, rightWant))));
          assert.ok(d <= tolerance, `${what} matrix ${b}: v_${j}(${i}) = ${JSON.stringify(V(i, j))}, the interpreter's ${JSON.stringify(V(i, j, rightWant))} times u_${j}'s phase ${JSON.stringify(phase)}`);
          worstPair = Math.max(worstPair, d);
        }
      }
    }
    console.log(`${what}: worst σ ${(100 * worstValue).toFixed(3)}%, residual ${(100 * worstResidual).toFixed(3)}%, unitarity ${(100 * worstUnitarity).toFixed(3)}% of the bound; pairs within ${worstPair.toExponential(2)} of the interpreter's`);
  });
  // The special batch: the rank-2 matrix's last two σ within the bound of 0; the zero matrix's all 0 (U the identity: completed from e_0); info 1 for the NaN only.
  const sAt = 5 * SPECIAL + 1, rankTwo = values[SPECIAL]!.slice(0, 24);
  const rankTwoNorm = Math.sqrt(rankTwo.reduce((t, v) => t + abs(v) ** 2, 0));
  (got[sAt] as number[]).slice(2, 4).forEach((v) => assert.ok(v <= complexSvdBound(6, 4) * rankTwoNorm, `rank 2: σ = ${v}`));
  assert.deepEqual((got[sAt] as number[]).slice(4, 8), [0, 0, 0, 0]);
  assert.deepEqual((got[sAt + 1] as C[]).slice(36, 72), Array.from({ length: 36 }, (_, e) => c(e % 7 === 0 ? 1 : 0)));
  assert.deepEqual(got[sAt + 3], [0, 0, 0, 1]);
  // 3x0: U = I₃ twice; 0x2: Vᴴ = I₂.
  const identity = (n: number): C[] => Array.from({ length: n * n }, (_, e) => c(e % (n + 1) === 0 ? 1 : 0));
  assert.deepEqual(got[5 * (SPECIAL + 3) + 2], [...identity(3), ...identity(3)]);
  assert.deepEqual(got[5 * (SPECIAL + 4) + 3], identity(2));
});

test("the plan (no GPU needed): c64 SVDs are the f32 kernel's generator over the Field: a wide A read conjugated (Aᴴ), the factor landing in a Vᴴ slot written conjugated, the words of c64 results, twice the work", () => {
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%a: tensor<3x6x4xcomplex<f32>>, %w: tensor<2x4xcomplex<f32>>, %j: tensor<2x4xcomplex<f32>>) -> (tensor<3x4xf32>, tensor<3x4x4xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>) {
  %0:5 = stablehlo.custom_call @lapack_cgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}} : (tensor<3x6x4xcomplex<f32>>) -> (tensor<3x6x4xcomplex<f32>>, tensor<3x4xf32>, tensor<3x6x4xcomplex<f32>>, tensor<3x4x4xcomplex<f32>>, tensor<3xi32>)
  %1:5 = stablehlo.custom_call @lapack_cgesvd_ffi(%w) {mhlo.backend_config = {mode = 83 : ui8}} : (tensor<2x4xcomplex<f32>>) -> (tensor<2x4xcomplex<f32>>, tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<i32>)
  %2:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%j) {mhlo.backend_config = {compute_uv = true, full_matrices = false}} : (tensor<2x4xcomplex<f32>>) -> (tensor<2x4xcomplex<f32>>, tensor<2xf32>, tensor<2x2xcomplex<f32>>, tensor<4x2xcomplex<f32>>, tensor<i32>)
  return %0#1, %0#3, %1#2, %1#3, %2#3 : tensor<3x4xf32>, tensor<3x4x4xcomplex<f32>>, tensor<2x2xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<4x2xcomplex<f32>>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /SVD of 3 c64 matrix\(es\), one-sided Jacobi/);
  assert.match(dump, /0 host step/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  // M, N, flags (VECTORS 1, CONJUGATE_A 2, CONJUGATE_U 4, CONJUGATE_V 8), A's strides; U' (buffer, strides, words), V' (the same); U's columns; the slots' words.
  assert.deepEqual(kernels.map((s) => s.parameters), [
    // Tall: U into slot 2 as it is, V into the Vᴴ slot (buffer 4) conjugated.
    [6, 4, 1 | 8, 4, 1, 3, 4, 1, 48, 4, 1, 4, 32, 4, 144, 96],
    // Wide (lapack): G = Aᴴ read conjugated; U' = A's V into the Vᴴ slot (buffer 4) conjugated, V' = A's U into slot 2.
    [4, 2, 1 | 2 | 4, 1, 4, 4, 1, 4, 16, 3, 2, 1, 8, 2, 8, 16],
    // Wide (gesvdj, V itself): G = Aᴴ; U' = A's V into the V slot unconjugated.
    [4, 2, 1 | 2, 1, 4, 4, 2, 1, 16, 3, 2, 1, 8, 2, 8, 16],
  ]);
  // The work buffer: G, V and the dots in (re, im) pairs, the norms and the order in words.
  assert.deepEqual(plan.steps.flatMap((s) => (s.kind === "kernel" ? [s.buffers.length] : [])), [7, 7, 7]);
});
