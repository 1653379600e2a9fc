// The singular value decomposition on the WebGPU backend (webgpu/svd_wgsl.ts: jaxlib's
// lapack_sgesdd_ffi, lapack_sgesvd_ffi, lapack_cgesdd_ffi and lapack_cgesvd_ffi,
// cusolver_gesvd_ffi (transposed or not), hipsolver_gesdd_ffi, cusolver_gesvdj_ffi and
// cusolver_gesvdp_ffi, on f32 and on c64), one check over the scalars
// (linalg_support.ts): singular values (f32) descending near the interpreter's,
// ‖A - ÛΣ̂V̂ᴴ‖_F, |ÛᴴÛ - I| and |V̂ᴴV̂ - I| within svdBound(m, n) (c64:
// complexSvdBound; docs/numerics.md), every column U has (the full ones completed past
// the rank) included; each singular pair (u_j, v_j) of a well separated σ_j equal to the
// interpreter's up to one sign (c64: one phase e^{iθ}) for both (the contract: U and Vᴴ
// up to the signs or phases of pairs; a V returned transposed, unconjugated or in the
// other slot fails it); a's copy bit for bit; vectors off: zeros, as the interpreter's.
// Tall, wide and square, full and reduced, batch dims and none; a rank-deficient matrix
// (exact zero singular values: U completed), a zero matrix, a matrix times 1e30, a NaN
// (NaN results, info 1), 1x1, min(m, n) = 70 (f32; 66 on c64: a workgroup of 64), and
// empty matrices (3x0 and 0x2: the full U and V the identity).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { c, COMPLEXES, mul, randoms, REALS, runOnGpu, tensorType, type C, type Scalars } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { MAX_SVD_ORDER, complexSvdBound, svdBound } from "../../../src/compiler/webgpu/svd_wgsl.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "f32"): string => tensorType(dims, t);

/** A call: batch, m×n, the target and its attributes, and its form (as the registry reads it). */
interface Case {
  readonly batch: readonly number[]; readonly m: number; readonly n: number; readonly target: string; readonly attrs: string;
  readonly vectors: boolean; readonly full: boolean; readonly uSlot: 2 | 3; readonly rightAsV: boolean;
}

const lapack = (batch: number[], m: number, n: number, mode: "A" | "S" | "N", target: string): Case =>
  ({ batch, m, n, target, attrs: `{mode = ${mode.charCodeAt(0)} : ui8}`, vectors: mode !== "N", full: mode === "A", uSlot: 2, rightAsV: false });
const gpu = (batch: number[], m: number, n: number, target: string, full: boolean, vectors = true): Case => {
  const jacobi = target.includes("gesvdj") || target.includes("gesvdp");
  const transposed = target === "cusolver_gesvd_ffi" && m < n;
  return {
    batch, m, n, target, vectors, full, uSlot: transposed ? 3 : 2, rightAsV: jacobi,
    attrs: `{compute_uv = ${vectors}, full_matrices = ${full}${jacobi ? "" : `, transposed = ${transposed}`}}`,
  };
};

/** The cases of one type: jaxlib's CPU targets `lapack_<kind>ges{dd,vd}_ffi` (s or c), the GPU ones, and the big one's m×n. */
const cases = (kind: "s" | "c", big: readonly [number, number]): Case[] => {
  const gesdd = `lapack_${kind}gesdd_ffi`, gesvd = `lapack_${kind}gesvd_ffi`;
  return [
    lapack([2], 6, 4, "A", gesdd),
    lapack([2], 3, 5, "S", gesvd),
    lapack([2], 5, 5, "N", gesdd),
    gpu([], 17, 9, "cusolver_gesvd_ffi", false),
    gpu([2], 4, 7, "cusolver_gesvd_ffi", true),
    gpu([1], 5, 8, "hipsolver_gesdd_ffi", false),
    gpu([3], 7, 3, "cusolver_gesvdj_ffi", true),
    gpu([2], 4, 4, "cusolver_gesvdp_ffi", false, false),
    gpu([2], 3, 6, "cusolver_gesvdj_ffi", false),
    lapack([2], 4, 6, "A", gesvd),
    // Special matrices (values below): rank 2 of 6x4 (full U), zero, times 1e30, NaN; 1x1; the big one (a workgroup of 64).
    lapack([4], 6, 4, "A", gesdd),
    lapack([2], 1, 1, "S", gesdd),
    lapack([], big[0], big[1], "S", gesdd),
    // Empty: U (full) the identity.
    lapack([2], 3, 0, "A", gesvd),
    lapack([1], 0, 2, "A", gesdd),
  ];
};
const SPECIAL = 10;

function shapes(c: Case, t: string): { u: number[]; v: number[]; types: string[] } {
  const k = Math.min(c.m, c.n);
  const u = [c.m, c.full ? c.m : k], v = c.full ? [c.n, c.n] : c.rightAsV ? [c.n, k] : [k, c.n];
  // Vectors off: LAPACK's declared like on, cuSOLVER's gesvdj keeps its shapes.
  const slots = c.uSlot === 2 ? [u, v] : [v, u];
  return { u, v, types: [tensor([...c.batch, c.m, c.n], t), tensor([...c.batch, k]), ...slots.map((d) => tensor([...c.batch, ...d], t)), tensor(c.batch, "i32")] };
}

/**
 * One type's scalars and what its special matrices are made of: the rank-2 matrix's
 * columns (x, y, s·x, x + t·y from small integers: exact), a NaN entry.
 */
interface Kind<T> {
  readonly S: Scalars<T>; readonly type: "f32" | "c64"; readonly kind: "s" | "c"; readonly big: readonly [number, number]; bound(m: number, n: number): number;
  readonly rankTwo: (i: number) => [T, T, T, T];
  readonly nan: (x: T) => T;
}

/** Runs one type's cases as one program and checks them against the interpreter and the stated bound. */
async function checkSvd<T>({ S, type, kind, big, bound, rankTwo, nan }: Kind<T>): Promise<void> {
  const CASES = cases(kind, big), t = type === "f32" ? "f32" : "complex<f32>";
  const lines = CASES.map((x, p) => `  %${p}:5 = stablehlo.custom_call @${x.target}(%a${p}) {mhlo.backend_config = ${x.attrs}} : (${tensor([...x.batch, x.m, x.n], t)}) -> (${shapes(x, t).types.join(", ")})`);
  const results = CASES.flatMap((x) => shapes(x, t).types);
  const text = `func.func @main(${CASES.map((x, p) => `%a${p}: ${tensor([...x.batch, x.m, x.n], t)}`).join(", ")}) -> (${results.join(", ")}) {
${lines.join("\n")}
  return ${CASES.flatMap((_, p) => [0, 1, 2, 3, 4].map((k) => `%${p}#${k}`)).join(", ")} : ${results.join(", ")}
}`;
  const values: T[][] = CASES.map((x, p) => {
    const r = randoms(600 + p);
    return Array.from({ length: elementCount(x.batch) * x.m * x.n }, () => S.round(S.any(r)));
  });
  // Rank 2; zero; times 1e30; a NaN.
  const special = values[SPECIAL]!;
  for (let i = 0; i < 6; i++) {
    special.splice(i * 4, 4, ...rankTwo(i));
    for (let j = 0; j < 4; j++) special[24 + i * 4 + j] = S.zero;
  }
  for (let e = 48; e < 72; e++) special[e] = S.round(S.mul(special[e]!, S.unitOf(1e30)));
  special[80] = nan(special[80]!);
  const { got, want, dump } = await runOnGpu<T | number>(parseStableHlo(text).entry, CASES.map((x, p) => Literal.fromValues(type, [...x.batch, x.m, x.n], values[p]! as never)));
  assert.match(dump, /kernel\(s\), 0 host step/);
  assert.match(dump, new RegExp(`SVD of 2 ${type} matrix\\(es\\)`));
  const isNaN = (x: T): boolean => Number.isNaN(S.abs(x));
  CASES.forEach((x, p) => {
    const [aOut, s, r2, r3, info] = got.slice(5 * p, 5 * p + 5) as [T[], number[], T[], T[], number[]];
    const [, sWant, w2, w3, infoWant] = want.slice(5 * p, 5 * p + 5) as [T[], number[], T[], T[], number[]];
    const { m, n } = x, k = Math.min(m, n), beta = bound(m, n);
    const what = `${x.target} (${type}) ${[...x.batch, m, n].join("x")}${x.vectors ? (x.full ? " full" : " reduced") : " values"}`;
    assert.deepEqual(aOut, values[p], `${what}: a's copy`);
    assert.deepEqual(info, infoWant, `${what}: info`);
    if (!x.vectors) {
      assert.ok([...r2, ...r3].every((v) => S.abs(v) === 0), `${what}: no vectors, zeros`);
      assert.ok([...w2, ...w3].every((v) => S.abs(v) === 0));
    }
    const { u: uDims, v: vDims } = shapes(x, t);
    const [uAll, rightAll, uWant, rightWant] = x.uSlot === 2 ? [r2, r3, w2, w3] : [r3, r2, w3, w2];
    const ucols = uDims[1]!, vcols = x.full ? n : k;
    let worstValue = 0, worstResidual = 0, worstOrthogonality = 0, worstPair = 0;
    for (let b = 0; b < elementCount(x.batch); b++) {
      const a = values[p]!.slice(b * m * n, (b + 1) * m * n);
      const sb = s.slice(b * k, (b + 1) * k);
      if (a.some(isNaN)) {
        assert.ok(sb.every(Number.isNaN) && info[b] === 1, `${what} matrix ${b}: NaN, info 1`);
        if (x.vectors) assert.ok(uAll.slice(b * m * ucols, (b + 1) * m * ucols).every(isNaN), `${what} matrix ${b}: U NaN`);
        continue;
      }
      const norm = Math.sqrt(a.reduce((acc, v) => acc + S.abs(v) ** 2, 0));
      sb.forEach((v, j) => {
        if (j > 0) assert.ok(sb[j - 1]! >= v, `${what} matrix ${b}: descending`);
        const err = Math.abs(v - sWant[b * k + j]!);
        assert.ok(err <= beta * norm, `${what} matrix ${b}: σ_${j} = ${v}, the interpreter's ${sWant[b * k + j]}`);
        worstValue = Math.max(worstValue, norm === 0 ? 0 : err / (beta * norm));
      });
      if (!x.vectors) continue;
      const U = (i: number, j: number, all = uAll): T => all[b * m * ucols + i * ucols + j]!;
      // V(i, j): the right slot holds V (n × its columns) or Vᴴ (its rows × n), whose (j, i) is conj(V(i, j)).
      const V = (i: number, j: number, all = rightAll): T => (x.rightAsV ? all[b * n * vDims[1]! + i * vDims[1]! + j]! : S.conj(all[b * vDims[0]! * n + j * n + i]!));
      let residual = 0;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let y = S.zero;
          for (let q = 0; q < k; q++) y = S.add(y, S.mul(S.mul(U(i, q), S.unitOf(sb[q]!)), S.conj(V(j, q))));
          residual += S.abs(S.sub(a[i * n + j]!, y)) ** 2;
        }
      }
      assert.ok(Math.sqrt(residual) <= beta * norm, `${what} matrix ${b}: ‖A - UΣVᴴ‖ = ${Math.sqrt(residual)} > ${beta * norm}`);
      worstResidual = Math.max(worstResidual, norm === 0 ? 0 : Math.sqrt(residual) / (beta * norm));
      for (const [get, rows, cols, name] of [[U, m, ucols, "U"], [V, n, vcols, "V"]] as const) {
        for (let i = 0; i < cols; i++) {
          for (let j = 0; j < cols; j++) {
            let dot = S.zero;
            for (let r = 0; r < rows; r++) dot = S.add(dot, S.mul(S.conj(get(r, i)), get(r, j)));
            const err = S.abs(S.sub(dot, i === j ? S.one : S.zero));
            assert.ok(err <= beta, `${what} matrix ${b}: |${name}ᴴ${name} - I|(${i}, ${j}) = ${err}`);
            worstOrthogonality = Math.max(worstOrthogonality, err / beta);
          }
        }
      }
      // The pairs of well separated σ_j: the interpreter's times one sign (phase) for both.
      for (let j = 0; j < k; j++) {
        const gap = Math.min(...sb.map((v, q) => (q === j ? Infinity : Math.abs(v - sb[j]!))));
        if (!(sb[j]! > 0 && gap >= 2 ** -6 * sb[0]!)) continue;
        let dot = S.zero;
        for (let i = 0; i < m; i++) dot = S.add(dot, S.mul(S.conj(U(i, j, uWant)), U(i, j)));
        const phase = S.mul(dot, S.unitOf(1 / S.abs(dot)));
        const tolerance = 2 ** -10;
        for (const [get, rows, name] of [[U, m, "u"], [V, n, "v"]] as const) {
          const theirs = name === "u" ? uWant : rightWant;
          for (let i = 0; i < rows; i++) {
            const d = S.abs(S.sub(get(i, j), S.mul(phase, get(i, j, theirs))));
            assert.ok(d <= tolerance, `${what} matrix ${b}: ${name}_${j}(${i}) = ${JSON.stringify(get(i, j))}, the interpreter's ${JSON.stringify(get(i, j, theirs))} times u_${j}'s ${JSON.stringify(phase)}`);
            worstPair = Math.max(worstPair, d);
          }
        }
      }
    }
    console.log(`${what}: worst σ ${(100 * worstValue).toFixed(3)}%, residual ${(100 * worstResidual).toFixed(3)}%, orthogonality ${(100 * worstOrthogonality).toFixed(3)}% of the bound; pairs within ${worstPair.toExponential(2)} of the interpreter's`);
  });
  // The special batch: the rank-2 matrix's last two σ within the bound of 0; the zero matrix's all 0 (U the identity: completed from e_0); info 1 for the NaN only.
  const sAt = 5 * SPECIAL + 1, rank = values[SPECIAL]!.slice(0, 24);
  const rankNorm = Math.sqrt(rank.reduce((acc, v) => acc + S.abs(v) ** 2, 0));
  (got[sAt] as number[]).slice(2, 4).forEach((v) => assert.ok(v <= bound(6, 4) * rankNorm, `rank 2: σ = ${v}`));
  assert.deepEqual((got[sAt] as number[]).slice(4, 8), [0, 0, 0, 0]);
  const identity = (size: number): T[] => Array.from({ length: size * size }, (_, e) => (e % (size + 1) === 0 ? S.one : S.zero));
  assert.deepEqual((got[sAt + 1] as T[]).slice(36, 72), identity(6));
  assert.deepEqual(got[sAt + 3], [0, 0, 0, 1]);
  // 3x0: U = I₃ twice; 0x2: Vᴴ = I₂.
  assert.deepEqual(got[5 * (SPECIAL + 3) + 2], [...identity(3), ...identity(3)]);
  assert.deepEqual(got[5 * (SPECIAL + 4) + 3], identity(2));
}

test("SVD (lapack_sgesdd_ffi, lapack_sgesvd_ffi, cusolver_gesvd_ffi, hipsolver_gesdd_ffi, cusolver_gesvdj_ffi, cusolver_gesvdp_ffi): σ near the interpreter's, A = UΣVᵀ and orthogonality within the stated bound, pairs equal to the interpreter's up to a sign", { skip }, async () => {
  // Rank 2: columns 2 and 3 are 2·column 0 and column 0 + column 1 (small integers, exact).
  await checkSvd({
    S: REALS, type: "f32", kind: "s", big: [80, 70], bound: svdBound,
    rankTwo: (i) => { const [x, y] = [(i % 3) - 1, i < 3 ? 1 : 2]; return [x, y, 2 * x, x + y]; },
    nan: () => NaN,
  });
});

test("c64 SVD (lapack_cgesdd_ffi, lapack_cgesvd_ffi, cusolver_gesvd_ffi, hipsolver_gesdd_ffi, cusolver_gesvdj_ffi, cusolver_gesvdp_ffi on c64), the f32 kernel's generator over the Field: σ near the interpreter's, A = UΣVᴴ and unitarity within complexSvdBound, pairs equal to the interpreter's up to a phase", { skip }, async () => {
  // Rank 2: column 2 is i·column 0, column 3 column 0 + (1 - i)·column 1 (small integers, exact).
  await checkSvd<C>({
    S: COMPLEXES, type: "c64", kind: "c", big: [66, 70], bound: complexSvdBound,
    rankTwo: (i) => {
      const x = c((i % 3) - 1, i < 3 ? 1 : 0), y = c(i < 3 ? 1 : 2, (i % 2) - 1);
      return [x, y, mul(c(0, 1), x), COMPLEXES.add(x, mul(c(1, -1), y))];
    },
    nan: (x) => c(x.re, NaN),
  });
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
