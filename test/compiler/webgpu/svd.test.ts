// The singular value decomposition on the WebGPU backend (webgpu/svd_wgsl.ts: jaxlib's
// lapack_sgesdd_ffi and lapack_sgesvd_ffi, cusolver_gesvd_ffi (transposed or not),
// hipsolver_gesdd_ffi, cusolver_gesvdj_ffi and cusolver_gesvdp_ffi), f32: singular values
// descending near the interpreter's, A = Û Σ̂ V̂ᵀ, ÛᵀÛ = I and V̂ᵀV̂ = I within
// svdBound(m, n) (docs/numerics.md), every column U has (the full ones completed past
// the rank) included; each singular pair (u_j, v_j) of a well separated σ_j equal to the
// interpreter's up to one sign for both (the contract: U and Vᴴ up to the signs of
// pairs; a V returned transposed, or in the other slot, fails it); a's copy bit for bit;
// vectors off: zeros, as the interpreter's. Tall, wide and square, full and reduced,
// batch dims and none; a rank-deficient matrix (exact zero singular values: U completed),
// a zero matrix, a matrix times 1e30, a NaN (NaN results, info 1), 1x1, min(m, n) = 70
// (a workgroup of 64), and empty matrices (3x0 and 0x2: the full U and V the identity).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { randoms, runOnGpu } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { MAX_SVD_ORDER, svdBound } from "../../../src/compiler/webgpu/svd_wgsl.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "f32"): string => `tensor<${dims.length === 0 ? "" : `${dims.join("x")}x`}${t}>`;
const count = (xs: readonly number[]): number => xs.reduce((p, x) => p * x, 1);

/** A call: batch, m×n, the target and its attributes, and its form (as the registry reads it). */
interface Case {
  readonly batch: readonly number[]; readonly m: number; readonly n: number; readonly target: string; readonly attrs: string;
  readonly vectors: boolean; readonly full: boolean; readonly uSlot: 2 | 3; readonly rightAsV: boolean;
}

const lapack = (batch: number[], m: number, n: number, mode: "A" | "S" | "N", target = "lapack_sgesdd_ffi"): Case =>
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
  lapack([2], 3, 5, "S", "lapack_sgesvd_ffi"),
  lapack([2], 5, 5, "N"),
  gpu([], 17, 9, "cusolver_gesvd_ffi", false),
  gpu([2], 4, 7, "cusolver_gesvd_ffi", true),
  gpu([1], 5, 8, "hipsolver_gesdd_ffi", false),
  gpu([3], 7, 3, "cusolver_gesvdj_ffi", true),
  gpu([2], 4, 4, "cusolver_gesvdp_ffi", false, false),
  gpu([2], 3, 6, "cusolver_gesvdj_ffi", false),
  // Special matrices (values below): rank 2 of 6x4 (full U), zero, times 1e30, NaN; 1x1; 70x70.
  lapack([4], 6, 4, "A"),
  lapack([2], 1, 1, "S"),
  lapack([], 80, 70, "S"),
  // Empty: U (full) the identity.
  lapack([2], 3, 0, "A", "lapack_sgesvd_ffi"),
  lapack([1], 0, 2, "A"),
];

function shapes(c: Case): { u: number[]; v: number[]; types: string[] } {
  const k = Math.min(c.m, c.n);
  const u = [c.m, c.full ? c.m : k], v = c.full ? [c.n, c.n] : c.rightAsV ? [c.n, k] : [k, c.n];
  // Vectors off: LAPACK's declared like on, cuSOLVER's gesvdj keeps its shapes.
  const slots = c.uSlot === 2 ? [u, v] : [v, u];
  return { u, v, types: [tensor([...c.batch, c.m, c.n]), tensor([...c.batch, k]), ...slots.map((d) => tensor([...c.batch, ...d])), tensor(c.batch, "i32")] };
}

test("SVD (lapack_sgesdd_ffi, lapack_sgesvd_ffi, cusolver_gesvd_ffi, hipsolver_gesdd_ffi, cusolver_gesvdj_ffi, cusolver_gesvdp_ffi): σ near the interpreter's, A = UΣVᵀ and orthogonality within the stated bound, pairs equal to the interpreter's up to a sign", { skip }, async () => {
  const lines = CASES.map((c, p) => `  %${p}:5 = stablehlo.custom_call @${c.target}(%a${p}) {mhlo.backend_config = ${c.attrs}} : (${tensor([...c.batch, c.m, c.n])}) -> (${shapes(c).types.join(", ")})`);
  const results = CASES.flatMap((c) => shapes(c).types);
  const text = `func.func @main(${CASES.map((c, p) => `%a${p}: ${tensor([...c.batch, c.m, c.n])}`).join(", ")}) -> (${results.join(", ")}) {
${lines.join("\n")}
  return ${CASES.flatMap((_, p) => [0, 1, 2, 3, 4].map((k) => `%${p}#${k}`)).join(", ")} : ${results.join(", ")}
}`;
  const values = CASES.map((c, p) => {
    const r = randoms(600 + p);
    return Array.from({ length: count(c.batch) * c.m * c.n }, () => Math.fround(r()));
  });
  // Rank 2 (columns 2 and 3 are 2·column 0 and column 0 + column 1: small integers, exact); zero; times 1e30; a NaN.
  const special = values[9]!;
  for (let i = 0; i < 6; i++) {
    const [x, y] = [(i % 3) - 1, i < 3 ? 1 : 2];
    special.splice(i * 4, 4, x, y, 2 * x, x + y);
    special[24 + i * 4] = special[24 + i * 4 + 1] = special[24 + i * 4 + 2] = special[24 + i * 4 + 3] = 0;
  }
  for (let e = 48; e < 72; e++) special[e] = Math.fround(special[e]! * 1e30);
  special[80] = NaN;
  const { got, want, dump } = await runOnGpu(parseStableHlo(text).entry, CASES.map((c, p) => Literal.fromValues("f32", [...c.batch, c.m, c.n], values[p]!)));
  assert.match(dump, /kernel\(s\), 0 host step/);
  CASES.forEach((c, p) => {
    const [aOut, s, r2, r3, info] = got.slice(5 * p, 5 * p + 5) as [number[], number[], number[], number[], number[]];
    const [, sWant, w2, w3, infoWant] = want.slice(5 * p, 5 * p + 5) as [number[], number[], number[], number[], number[]];
    const { m, n } = c, k = Math.min(m, n), beta = svdBound(m, n);
    const what = `${c.target} ${[...c.batch, m, n].join("x")}${c.vectors ? (c.full ? " full" : " reduced") : " values"}`;
    assert.deepEqual(aOut, values[p], `${what}: a's copy`);
    assert.deepEqual(info, infoWant, `${what}: info`);
    if (!c.vectors) {
      assert.ok(r2.every((x) => x === 0) && r3.every((x) => x === 0), `${what}: no vectors, zeros`);
      assert.deepEqual([w2, w3].map((x) => x.every((y) => y === 0)), [true, true]);
    }
    const { u: uDims, v: vDims } = shapes(c);
    const [uAll, rightAll, uWant, rightWant] = c.uSlot === 2 ? [r2, r3, w2, w3] : [r3, r2, w3, w2];
    const ucols = uDims[1]!, vcols = c.full ? n : k;
    let worstValue = 0, worstResidual = 0, worstOrthogonality = 0, worstPair = 0;
    for (let b = 0; b < count(c.batch); b++) {
      const a = values[p]!.slice(b * m * n, (b + 1) * m * n);
      const sb = s.slice(b * k, (b + 1) * k);
      if (a.some((x) => !Number.isFinite(x))) {
        assert.ok(sb.every(Number.isNaN) && info[b] === 1, `${what} matrix ${b}: NaN, info 1`);
        if (c.vectors) assert.ok(uAll.slice(b * m * ucols, (b + 1) * m * ucols).every(Number.isNaN), `${what} matrix ${b}: U NaN`);
        continue;
      }
      const norm = Math.sqrt(a.reduce((t, x) => t + x * x, 0));
      sb.forEach((x, j) => {
        if (j > 0) assert.ok(sb[j - 1]! >= x, `${what} matrix ${b}: descending`);
        const err = Math.abs(x - sWant[b * k + j]!);
        assert.ok(err <= beta * norm, `${what} matrix ${b}: σ_${j} = ${x}, the interpreter's ${sWant[b * k + j]}`);
        worstValue = Math.max(worstValue, norm === 0 ? 0 : err / (beta * norm));
      });
      if (!c.vectors) continue;
      const U = (i: number, j: number, all = uAll): number => all[b * m * ucols + i * ucols + j]!;
      const V = (i: number, j: number, all = rightAll): number => (c.rightAsV ? all[b * n * vDims[1]! + i * vDims[1]! + j]! : all[b * vDims[0]! * n + j * n + i]!);
      let residual = 0;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let x = 0;
          for (let t = 0; t < k; t++) x += U(i, t) * sb[t]! * V(j, t);
          residual += (a[i * n + j]! - x) ** 2;
        }
      }
      assert.ok(Math.sqrt(residual) <= beta * norm, `${what} matrix ${b}: ‖A - UΣVᵀ‖ = ${Math.sqrt(residual)} > ${beta * norm}`);
      worstResidual = Math.max(worstResidual, norm === 0 ? 0 : Math.sqrt(residual) / (beta * norm));
      for (const [get, rows, cols, name] of [[U, m, ucols, "U"], [V, n, vcols, "V"]] as const) {
        for (let x = 0; x < cols; x++) {
          for (let y = 0; y < cols; y++) {
            let dot = 0;
            for (let i = 0; i < rows; i++) dot += get(i, x) * get(i, y);
            const err = Math.abs(dot - (x === y ? 1 : 0));
            assert.ok(err <= beta, `${what} matrix ${b}: (${name}ᵀ${name} - I)(${x}, ${y}) = ${dot - (x === y ? 1 : 0)}`);
            worstOrthogonality = Math.max(worstOrthogonality, err / beta);
          }
        }
      }
      // The pairs of well separated σ_j: the interpreter's up to one sign for both.
      for (let j = 0; j < k; j++) {
        const gap = Math.min(...sb.map((x, t) => (t === j ? Infinity : Math.abs(x - sb[j]!))));
        if (!(sb[j]! > 0 && gap >= 2 ** -6 * sb[0]!)) continue;
        let dot = 0;
        for (let i = 0; i < m; i++) dot += U(i, j) * U(i, j, uWant);
        const sign = Math.sign(dot);
        const tolerance = 2 ** -10;
        for (let i = 0; i < m; i++) assert.ok(Math.abs(sign * U(i, j) - U(i, j, uWant)) <= tolerance, `${what} matrix ${b}: u_${j}(${i}) = ${U(i, j)}, the interpreter's ${U(i, j, uWant)}`);
        for (let i = 0; i < n; i++) assert.ok(Math.abs(sign * V(i, j) - V(i, j, rightWant)) <= tolerance, `${what} matrix ${b}: v_${j}(${i}) = ${V(i, j)}, the interpreter's ${V(i, j, rightWant)} (sign ${sign} from u_${j})`);
        for (let i = 0; i < m; i++) worstPair = Math.max(worstPair, Math.abs(sign * U(i, j) - U(i, j, uWant)));
      }
    }
    console.log(`${what}: worst σ ${(100 * worstValue).toFixed(3)}%, residual ${(100 * worstResidual).toFixed(3)}%, orthogonality ${(100 * worstOrthogonality).toFixed(3)}% of the bound; pairs within ${worstPair.toExponential(2)} of the interpreter's`);
  });
  // The special batch: the rank-2 matrix's last two σ within the bound of 0; the zero matrix's all 0 (U the identity: completed from e_0); info 1 for the NaN only.
  const sAt = 5 * 9 + 1, rankTwo = values[9]!.slice(0, 24);
  const rankTwoNorm = Math.sqrt(rankTwo.reduce((t, x) => t + x * x, 0));
  got[sAt]!.slice(2, 4).forEach((x) => assert.ok(x <= svdBound(6, 4) * rankTwoNorm, `rank 2: σ = ${x}`));
  assert.deepEqual(got[sAt]!.slice(4, 8), [0, 0, 0, 0]);
  assert.deepEqual(got[sAt + 1]!.slice(36, 72), Array.from({ length: 36 }, (_, e) => (e % 7 === 0 ? 1 : 0)));
  assert.deepEqual(got[sAt + 3], [0, 0, 0, 1]);
  // 3x0: U = I₃ twice; 0x2: Vᴴ = I₂.
  assert.deepEqual(got[5 * 12 + 2], [1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
  assert.deepEqual(got[5 * 13 + 3], [1, 0, 0, 1]);
});

test("the plan (no GPU needed): f32 SVDs are kernels with their sizes and form as step parameters and a work buffer; past MAX_SVD_ORDER, with a work buffer of 2 GiB or more, f64, or an attribute the registry refuses, they run on the host, saying why", () => {
  const big = MAX_SVD_ORDER + 1;
  // 4096 matrices of 256x256: 1 GiB, but G and V of each make a work buffer of 2 GiB or more.
  const many = "tensor<4096x256x256xf32>";
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%a: tensor<3x6x4xf32>, %w: tensor<2x4xf32>, %b: tensor<${big}x${big}xf32>, %d: tensor<4x4xf64>, %m: ${many}) -> (tensor<3x4xf32>, tensor<3x4x4xf32>, tensor<${big}xf32>, tensor<4xf64>, tensor<2xf32>, tensor<4096x256xf32>) {
  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 83 : ui8}} : (tensor<3x6x4xf32>) -> (tensor<3x6x4xf32>, tensor<3x4xf32>, tensor<3x6x4xf32>, tensor<3x4x4xf32>, tensor<3xi32>)
  %1:5 = stablehlo.custom_call @lapack_sgesvd_ffi(%b) {mhlo.backend_config = {mode = 78 : ui8}} : (tensor<${big}x${big}xf32>) -> (tensor<${big}x${big}xf32>, tensor<${big}xf32>, tensor<1xf32>, tensor<1xf32>, tensor<i32>)
  %2:5 = stablehlo.custom_call @lapack_dgesdd_ffi(%d) {mhlo.backend_config = {mode = 78 : ui8}} : (tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<1xf64>, tensor<1xf64>, tensor<i32>)
  %3:5 = stablehlo.custom_call @cusolver_gesvd_ffi(%w) {mhlo.backend_config = {compute_uv = true, full_matrices = false, transposed = false}} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x4xf32>, tensor<i32>)
  %4:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%m) {mhlo.backend_config = {mode = 83 : ui8}} : (${many}) -> (${many}, tensor<4096x256xf32>, ${many}, ${many}, tensor<4096xi32>)
  return %0#1, %0#3, %1#1, %2#1, %3#1, %4#1 : tensor<3x4xf32>, tensor<3x4x4xf32>, tensor<${big}xf32>, tensor<4xf64>, tensor<2xf32>, tensor<4096x256xf32>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /SVD of 3 f32 matrix\(es\), one-sided Jacobi, an invocation a pair of columns, the sizes and form parameters, 3 workgroups of 32/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  // M, N, vectors, A's strides; U in result 2 (buffer 3), 6x4 row-major; V as Vᴴ in result 3 (buffer 4), read transposed; U's columns; the slots' words.
  assert.deepEqual(kernels.map((s) => s.parameters), [[6, 4, 1, 4, 1, 3, 4, 1, 24, 4, 1, 4, 16, 4, 72, 48]]);
  assert.equal(kernels[0]!.buffers.length, 7);
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.equal(hosts.length, 4);
  assert.match(hosts[0]!, new RegExp(`lapack_sgesvd_ffi: min\\(m, n\\) = ${big} runs on the host`));
  assert.equal(hosts[1], "custom call lapack_dgesdd_ffi (f64[4,4]) -> (f64[4,4], f64[4], f64[1], f64[1], s32[]): WGSL has no f64 (f64 and c128 LAPACK calls run on the host)");
  // cuSOLVER's gesvd needs m >= n (jaxlib transposes a wide matrix): the registry reports it on the host.
  assert.match(hosts[2]!, /^custom call cusolver_gesvd_ffi \(f32\[2,4\]\) -> .*: attribute transposed is false for a 2×4 matrix: the solver needs m >= n .*\(the host step reports it\)$/);
  assert.equal(hosts[3], "custom call lapack_sgesdd_ffi: a work buffer of 2 GiB or more");
});
