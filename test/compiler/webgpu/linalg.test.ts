// Cholesky and triangular solve on the WebGPU backend (webgpu/linalg_wgsl.ts), f32 (and
// c64 Cholesky: ?potrf and XLA's op, one generator over the Field; c64 triangular solves
// are in complex_factor.test.ts):
// against float64 references within the stated bounds (docs/numerics.md:
// choleskyBackwardBound, triangularSolveBackwardBound) and against the interpreter (the
// specification), on random well-conditioned matrices (SPD: M·Mᵀ + n·I), sizes 1, 3, 17
// and 64, batch dims, every flag combination of
// triangular solve, NaN in the triangle an op must not read, and a matrix that is not
// positive definite (all NaN, as the interpreter gives). Few distinct kernels: flags, n
// and triangular solve's shapes are step parameters, so the Cholesky tests compile two
// pipelines (and the LAPACK one a third), every triangular solve here one (SwiftShader
// takes 0.3-1 s each).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { randoms, runOnGpu } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { choleskyBackwardBound, complexCholeskyBackwardBound, triangularSolveBackwardBound } from "../../../src/compiler/webgpu/linalg_wgsl.js";
import { XlaBuilder, parameter, cholesky, parseStableHlo, triangularSolve, tuple } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { arrayShape, elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());




// ---- Cholesky

/** A batch of SPD matrices M·Mᵀ + n·I (M in [-1, 1)), f32-rounded, with κ₂ ≤ (n + ‖M‖²_F)/n; NaN across the triangle `lower` does not read. */
function spdBatch(batch: number, n: number, lower: boolean, seed: number): { values: number[]; kappa: number[] } {
  const r = randoms(seed);
  const values: number[] = [];
  const kappa: number[] = [];
  for (let m = 0; m < batch; m++) {
    const M = Array.from({ length: n * n }, r);
    kappa.push((n + M.reduce((s, x) => s + x * x, 0)) / n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let s = i === j ? n : 0;
        for (let k = 0; k < n; k++) s += M[i * n + k]! * M[j * n + k]!;
        values.push((lower ? j > i : j < i) ? NaN : Math.fround(s));
      }
    }
  }
  return { values, kappa };
}

/**
 * Checks the GPU's factor of each matrix (its named triangle; the other exactly 0): the
 * backward bound |A - L̂L̂ᵀ| ≤ β|L̂||L̂ᵀ| in doubles (plus the doubles' own rounding), and
 * the forward error against the interpreter's factor (doubles rounded once) within its
 * first-order consequence ‖L̂ - L‖_F ≤ 2·κ₂·n·β·‖L‖_F + 2^-24·‖L‖_F. Returns the worst
 * backward error as a share of its bound.
 */
function checkFactor(a: readonly number[], got: readonly number[], want: readonly number[], n: number, lower: boolean, kappa: readonly number[], what: string): number {
  const beta = choleskyBackwardBound(n);
  let worst = 0;
  kappa.forEach((k, m) => {
    const base = m * n * n;
    // L(i, j), i >= j, from the result's named triangle.
    const l = (v: readonly number[], i: number, j: number): number => v[base + (lower ? i * n + j : j * n + i)]!;
    const entry = (i: number, j: number): number => a[base + (lower ? i * n + j : j * n + i)]!;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        if (j > i) {
          assert.equal(got[base + (lower ? i * n + j : j * n + i)], 0, `${what}: matrix ${m}: the other triangle is 0 at (${i}, ${j})`);
          continue;
        }
        let llt = 0, abs = 0;
        for (let k = 0; k <= j; k++) {
          llt += l(got, i, k) * l(got, j, k);
          abs += Math.abs(l(got, i, k) * l(got, j, k));
        }
        const err = Math.abs(entry(i, j) - llt);
        const bound = beta * abs + n * 2 ** -52 * (Math.abs(entry(i, j)) + abs);
        assert.ok(err <= bound, `${what}: matrix ${m}: |A - L̂L̂ᵀ| at (${i}, ${j}) is ${err} > ${bound}`);
        worst = Math.max(worst, err / bound);
      }
    }
    let diff = 0, norm = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++) {
        diff += (l(got, i, j) - l(want, i, j)) ** 2;
        norm += l(want, i, j) ** 2;
      }
    }
    const relative = Math.sqrt(diff / norm);
    assert.ok(relative <= 2 * k * n * beta + 2 ** -24, `${what}: matrix ${m}: ‖L̂ - L‖_F / ‖L‖_F = ${relative} (κ₂ ≤ ${k})`);
  });
  return worst;
}

test("Cholesky, lower and upper: within the stated bounds of the float64 factor, batch dims, n = 1, 3, 17, 64 (two pipelines: n is a parameter)", { skip }, async () => {
  // n is a step parameter: the first three (2 matrices, 32 invocations each) share a pipeline.
  const cases: { dims: number[]; seed: number }[] = [
    { dims: [2, 1, 1], seed: 1 }, { dims: [2, 3, 3], seed: 2 }, { dims: [2, 1, 17, 17], seed: 3 }, { dims: [64, 64], seed: 4 },
  ];
  for (const { dims, seed } of cases) {
    const n = dims.at(-1)!;
    const batch = elementCount(dims.slice(0, -2));
    const b = new XlaBuilder(`cholesky_${dims.join("x")}`);
    const shape = arrayShape("f32", dims);
    const c = b.build(tuple(b, [cholesky(parameter(b, 0, shape, "lo"), true), cholesky(parameter(b, 1, shape, "up"), false)]));
    const lo = spdBatch(batch, n, true, seed), up = spdBatch(batch, n, false, seed + 100);
    const { got, want, dump } = await runOnGpu(c, [Literal.fromValues("f32", dims, lo.values), Literal.fromValues("f32", dims, up.values)]);
    // One pipeline for both triangles: the triangle is the step's parameter.
    assert.match(dump, /1 kernel\(s\), 0 host step/);
    const what = `cholesky ${dims.join("x")}`;
    const worst = Math.max(checkFactor(lo.values, got[0]!, want[0]!, n, true, lo.kappa, `${what} lower`), checkFactor(up.values, got[1]!, want[1]!, n, false, up.kappa, `${what} upper`));
    console.log(`${what}: worst backward error ${(100 * worst).toFixed(2)}% of its bound`);
  }
});

test("Cholesky of a batch with a matrix that is not positive definite (a negative pivot, a NaN one): that matrix all NaN, the other factored", { skip }, async () => {
  const n = 3;
  const b = new XlaBuilder("cholesky_not_pd");
  const c = b.build(cholesky(parameter(b, 0, arrayShape("f32", [2, n, n]), "a"), true));
  const good = spdBatch(1, n, true, 7).values;
  // diag(1, -1, 1): the second pivot is negative; a NaN below the diagonal makes the second pivot NaN.
  for (const bad of [[1, 0, 0, 0, -1, 0, 0, 0, 1], [4, 0, 0, NaN, 4, 0, 0, 0, 4]]) {
    const { got, want } = await runOnGpu(c, [Literal.fromValues("f32", [2, n, n], [...good, ...bad])]);
    assert.ok(want[0]!.slice(9).every(Number.isNaN));
    assert.ok(got[0]!.slice(9).every(Number.isNaN), String(got[0]!.slice(9)));
    assert.ok(got[0]!.slice(0, 9).every(Number.isFinite) && want[0]!.slice(0, 9).every(Number.isFinite));
  }
});

// ---- triangular solve

type Transpose = "NO_TRANSPOSE" | "TRANSPOSE" | "ADJOINT";
interface Flags { readonly leftSide: boolean; readonly lower: boolean; readonly transposeA: Transpose; readonly unitDiagonal: boolean }

const ALL_FLAGS: Flags[] = [true, false].flatMap((leftSide) => [true, false].flatMap((lower) =>
  (["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"] as const).flatMap((transposeA) => [false, true].map((unitDiagonal) => ({ leftSide, lower, transposeA, unitDiagonal })))));

const flagText = (f: Flags): string => `${f.leftSide ? "left" : "right"} ${f.lower ? "lower" : "upper"} ${f.transposeA}${f.unitDiagonal ? " unit" : ""}`;

/**
 * A batch of n×n triangular matrices: off-diagonal entries in [-2/n, 2/n), a diagonal of
 * magnitude 1 to 2 (well-conditioned, unit diagonal or not); NaN across the triangle not
 * read, and on the diagonal when `unitDiagonal` (not read either).
 */
function triangularBatch(batch: number, n: number, lower: boolean, unitDiagonal: boolean, seed: number): number[] {
  const r = randoms(seed);
  const values: number[] = [];
  for (let k = 0; k < batch * n * n; k++) {
    const i = Math.floor(k / n) % n, j = k % n;
    const v = r();
    values.push(i === j ? (unitDiagonal ? NaN : Math.fround(Math.sign(v || 1) * (1 + Math.abs(v)))) : (lower ? j > i : j < i) ? NaN : Math.fround((2 * v) / n));
  }
  return values;
}

/**
 * Checks each right-hand side of one solve against the bounds: M x = b with M = op(A) (left) or
 * op(A)ᵀ (right), as dense doubles with the unread parts masked; the residual
 * |b - M x̂| ≤ β|M||x̂| and |x̂ - x| ≤ β|M⁻¹||M||x̂| against x solved in doubles.
 * Returns the worst residual as a share of its bound, and the worst difference from the interpreter relative to max|x|.
 */
function checkSolve(a: readonly number[], b: readonly number[], got: readonly number[], want: readonly number[], batch: number, n: number, rows: number, cols: number, f: Flags, what: string): { residual: number; interpreter: number } {
  const beta = triangularSolveBackwardBound(n);
  const rhs = f.leftSide ? cols : rows;
  const t = f.transposeA !== "NO_TRANSPOSE" !== !f.leftSide;
  let worst = 0, worstResidual = 0;
  for (let m = 0; m < batch; m++) {
    // M as dense doubles, the unread triangle 0 and a unit diagonal 1.
    const M = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, k) => {
      const [r, c] = t ? [k, i] : [i, k];
      if (r === c) return f.unitDiagonal ? 1 : a[m * n * n + r * n + c]!;
      return (f.lower ? c < r : c > r) ? a[m * n * n + r * n + c]! : 0;
    }));
    const mLower = f.lower !== t;
    // |M⁻¹| by substitution on the unit vectors, in doubles.
    const solve = (v: readonly number[]): number[] => {
      const x = [...v];
      for (let s = 0; s < n; s++) {
        const i = mLower ? s : n - 1 - s;
        for (let k = 0; k < n; k++) if (k !== i && (mLower ? k < i : k > i)) x[i]! -= M[i]![k]! * x[k]!;
        x[i]! /= M[i]![i]!;
      }
      return x;
    };
    const inverse = Array.from({ length: n }, (_, j) => solve(Array.from({ length: n }, (_, i) => (i === j ? 1 : 0))));
    for (let c = 0; c < rhs; c++) {
      const at = (e: number): number => m * rows * cols + (f.leftSide ? e * cols + c : c * cols + e);
      const bv = Array.from({ length: n }, (_, e) => b[at(e)]!);
      const xg = Array.from({ length: n }, (_, e) => got[at(e)]!);
      const exact = solve(bv);
      const absMx = M.map((row) => row.reduce((s, v, k) => s + Math.abs(v * xg[k]!), 0));
      let scale = 0;
      for (let i = 0; i < n; i++) {
        const residual = Math.abs(bv[i]! - M[i]!.reduce((s, v, k) => s + v * xg[k]!, 0));
        const slack = n * 2 ** -52 * (Math.abs(bv[i]!) + absMx[i]!);
        assert.ok(residual <= beta * absMx[i]! + slack, `${what}: matrix ${m} rhs ${c}: residual ${residual} > ${beta * absMx[i]!} at ${i}`);
        worstResidual = Math.max(worstResidual, residual / (beta * absMx[i]! + slack));
        // (|M⁻¹| |M||x̂|)_i: inverse[j] is column j of M⁻¹.
        const forward = beta * absMx.reduce((s, v, j) => s + Math.abs(inverse[j]![i]!) * v, 0);
        const err = Math.abs(xg[i]! - exact[i]!);
        assert.ok(err <= forward * (1 + 1e-9) + 1e-300, `${what}: matrix ${m} rhs ${c}: |x̂ - x| = ${err} > ${forward} at ${i}`);
        scale = Math.max(scale, Math.abs(exact[i]!));
      }
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(xg[i]! - want[at(i)]!) / scale);
    }
  }
  return { residual: worstResidual, interpreter: worst };
}

/** One program solving b against each flag combination's matrix (the one whose unread parts are NaN for those flags). */
async function checkSolves(aDims: readonly number[], bDims: readonly number[], flags: readonly Flags[], seed: number): Promise<string> {
  const rank = bDims.length;
  const n = aDims[rank - 1]!, rows = bDims[rank - 2]!, cols = bDims[rank - 1]!;
  const batch = elementCount(bDims.slice(0, -2));
  const kinds = [[true, false], [true, true], [false, false], [false, true]] as const;
  const as = kinds.map(([lower, unit], k) => triangularBatch(batch, n, lower, unit, seed + k));
  const r = randoms(seed + 10);
  const bValues = Array.from({ length: elementCount(bDims) }, () => Math.fround(r()));
  const builder = new XlaBuilder(`triangular_solve_${bDims.join("x")}`);
  const aParams = kinds.map((_, k) => parameter(builder, k, arrayShape("f32", aDims), `a${k}`));
  const bParam = parameter(builder, kinds.length, arrayShape("f32", bDims), "b");
  const which = (f: Flags): number => kinds.findIndex(([lower, unit]) => lower === f.lower && unit === f.unitDiagonal);
  const c = builder.build(tuple(builder, flags.map((f) => triangularSolve(aParams[which(f)]!, bParam, f.leftSide, f.lower, f.unitDiagonal, f.transposeA))));
  const args = [...as.map((v) => Literal.fromValues("f32", aDims, v)), Literal.fromValues("f32", bDims, bValues)];
  const { got, want, dump } = await runOnGpu(c, args);
  let worst = 0, residual = 0;
  flags.forEach((f, k) => {
    const r = checkSolve(as[which(f)]!, bValues, got[k]!, want[k]!, batch, n, rows, cols, f, `${bDims.join("x")} ${flagText(f)}`);
    worst = Math.max(worst, r.interpreter);
    residual = Math.max(residual, r.residual);
  });
  console.log(`triangular solve ${aDims.join("x")} \\ ${bDims.join("x")}, ${flags.length} flag combination(s): worst residual ${(100 * residual).toFixed(2)}% of its bound, ` +
    `worst difference from the interpreter ${worst.toExponential(2)} of max|x|`);
  assert.ok(worst <= 64 * n * 2 ** -24, `against the interpreter: ${worst}`);
  return dump;
}

test("triangular solve, every flag combination (24, one kernel), batch dims: within the stated bounds of float64, near the interpreter", { skip }, async () => {
  const dump = await checkSolves([2, 17, 17], [2, 17, 17], ALL_FLAGS, 11);
  assert.match(dump, /1 kernel\(s\), 0 host step/);
});

test("triangular solve, n = 1, 3 and 64, left and right, right-hand sides that are not square", { skip }, async () => {
  const some = (leftSide: boolean): Flags[] => ALL_FLAGS.filter((f) => f.leftSide === leftSide && f.transposeA !== "ADJOINT");
  await checkSolves([3, 1, 1], [3, 1, 4], some(true), 21);
  await checkSolves([2, 3, 3], [2, 5, 3], some(false), 31);
  await checkSolves([64, 64], [64, 3], some(true), 41);
  await checkSolves([64, 64], [2, 64], some(false), 51);
});

test("the plan (no GPU needed): Cholesky and triangular solve are kernels (f32 and c64), their flags step parameters; f64 and c128 ones run on the host, saying why", () => {
  const b = new XlaBuilder("plan");
  const a = parameter(b, 0, arrayShape("f32", [4, 100, 100]), "a");
  const d = parameter(b, 1, arrayShape("f64", [3, 3]), "d");
  const z = parameter(b, 2, arrayShape("c64", [3, 3]), "z");
  const w = parameter(b, 3, arrayShape("c128", [3, 3]), "w");
  const c = b.build(tuple(b, [cholesky(a, true), cholesky(a, false), triangularSolve(a, a, false, true, true, "TRANSPOSE"), cholesky(d, true), triangularSolve(z, z, true, false, false, "ADJOINT"), cholesky(z, false), triangularSolve(w, w, true, false, false, "ADJOINT")]));
  const plan = planGpuProgram(c, {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /Cholesky of 4 f32 matrix\(es\), column sweep in the result's triangle, the triangle and n parameters, 4 workgroups of 128/);
  assert.match(dump, /triangular solve of f32 systems, an invocation a right-hand side, substitution, the flags and shapes parameters, 448 invocations/);
  assert.match(dump, /triangular solve of c64 systems/);
  assert.match(dump, /Cholesky of 1 c64 matrix\(es\)/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" ? [s] : []));
  // c64's ADJOINT: transposed and conjugated (LEFT_SIDE 1, TRANSPOSE_A 4, CONJUGATE_A 16).
  assert.deepEqual(kernels.map((s) => s.parameters), [[1, 100], [0, 100], [2 | 4 | 8, 100, 100, 100, 4], [1 | 4 | 16, 3, 3, 3, 1], [0, 3]]);
  assert.equal(kernels[0]!.kernel, kernels[1]!.kernel, "one pipeline for both triangles");
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.deepEqual(hosts, ["webgpu cholesky: f64 matrices run on the host (WGSL has no f64)", "webgpu triangular-solve: c128 matrices run on the host (WGSL has no f64)"]);
  // A LAPACK call whose attribute the registry refuses, or on f64, is the registry's to run (and to report) on the host.
  const calls = planGpuProgram(parseStableHlo(`func.func @main(%a: tensor<3x3xf32>, %d: tensor<3x3xf64>) -> (tensor<3x3xf32>, tensor<i32>, tensor<3x3xf64>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 88 : ui8}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  %1:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%d) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<i32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<3x3xf32>, tensor<i32>, tensor<3x3xf64>, tensor<i32>
}`), {});
  const callHosts = calls.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.equal(callHosts.length, 2);
  assert.match(callHosts[0]!, /^custom call lapack_spotrf_ffi \(f32\[3,3\]\) -> \(f32\[3,3\], s32\[\]\): .*uplo.* \(the host step reports it\)$/);
  assert.equal(callHosts[1], "custom call lapack_dpotrf_ffi (f64[3,3]) -> (f64[3,3], s32[]): WGSL has no f64 (f64 and c128 LAPACK calls run on the host)");
});

test("LAPACK's ?potrf and ?trsm custom calls (jaxlib's lapack_spotrf_ffi, lapack_strsm_ffi) run on the Cholesky and triangular-solve kernels, with LAPACK's results", { skip }, async () => {
  const n = 5;
  const program = parseStableHlo(`func.func @main(%a: tensor<3x${n}x${n}xf32>, %t: tensor<2x4x4xf32>, %b: tensor<2x4x3xf32>) -> (tensor<3x${n}x${n}xf32>, tensor<3xi32>, tensor<3x${n}x${n}xf32>, tensor<3xi32>, tensor<2x4x3xf32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<3x${n}x${n}xf32>) -> (tensor<3x${n}x${n}xf32>, tensor<3xi32>)
  %1:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 85 : ui8}} : (tensor<3x${n}x${n}xf32>) -> (tensor<3x${n}x${n}xf32>, tensor<3xi32>)
  %2 = stablehlo.custom_call @lapack_strsm_ffi(%t, %b) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}} : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %0#0, %0#1, %1#0, %1#1, %2 : tensor<3x${n}x${n}xf32>, tensor<3xi32>, tensor<3x${n}x${n}xf32>, tensor<3xi32>, tensor<2x4x3xf32>
}`).entry;
  // A symmetric batch: SPD, SPD, and one whose fourth leading minor is not positive definite.
  const spd = spdBatch(2, n, true, 61).values;
  const sym = (m: readonly number[]): number[] => m.map((_, k) => m[Math.max(Math.floor(k / n), k % n) * n + Math.min(Math.floor(k / n), k % n)]!);
  const bad = Array.from({ length: n * n }, (_, k) => (Math.floor(k / n) === k % n ? (k % n === 3 ? -2 : 4) : 0.5));
  const a = Literal.fromValues("f32", [3, n, n], [...sym(spd.slice(0, n * n)), ...sym(spd.slice(n * n)), ...bad]);
  const t = Literal.fromValues("f32", [2, 4, 4], triangularBatch(2, 4, false, false, 62).map((v) => (Number.isNaN(v) ? 7 : v)));
  const r = randoms(63);
  const b = Literal.fromValues("f32", [2, 4, 3], Array.from({ length: 24 }, () => Math.fround(r())));
  const { got, want, dump } = await runOnGpu(program, [a, t, b]);
  assert.match(dump, /\?potrf of 3 f32 matrix\(es\)/);
  assert.match(dump, /triangular solve of f32 systems/);
  assert.deepEqual(got[1], [0, 0, 4]);
  assert.deepEqual(got[1], want[1]);
  assert.deepEqual(got[3], want[3]);
  for (const k of [0, 2, 4]) {
    const scale = Math.max(...want[k]!.map(Math.abs));
    got[k]!.forEach((v, e) => assert.ok(Math.abs(v - want[k]![e]!) <= 1e-6 * scale, `result ${k} element ${e}: ${v}, the interpreter's ${want[k]![e]}`));
  }
  // The triangle not factored keeps the input bit for bit, as do the failed matrix's columns from the failure on.
  const input = a.values() as number[];
  for (let e = 0; e < 3 * n * n; e++) {
    const i = Math.floor(e / n) % n, j = e % n;
    if (j > i || (e >= 2 * n * n && j >= 3)) assert.equal(got[0]![e], input[e], `lower: element ${e} kept`);
    if (i > j || (e >= 2 * n * n && i >= 3)) assert.equal(got[2]![e], input[e], `upper: element ${e} kept`);
  }
});

test("c64 ?potrf (jaxlib's lapack_cpotrf_ffi, cuSOLVER's potrf on c64) and XLA's Cholesky on c64 run on the GPU, one generator over the Field with f32's: info as the interpreter's, |A - L̂L̂ᴴ| within complexCholeskyBackwardBound, the triangle not factored and a failed matrix's columns kept bit for bit (?potrf), 0 and all NaN (XLA's)", { skip }, async () => {
  const n = 6;
  type C = { re: number; im: number };
  const T = `tensor<3x${n}x${n}xcomplex<f32>>`;
  const program = parseStableHlo(`func.func @main(%a: ${T}) -> (${T}, tensor<3xi32>, ${T}, tensor<3xi32>, ${T}, ${T}) {
  %0:2 = stablehlo.custom_call @lapack_cpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (${T}) -> (${T}, tensor<3xi32>)
  %1:2 = stablehlo.custom_call @cusolver_potrf_ffi(%a) {mhlo.backend_config = {lower = false}} : (${T}) -> (${T}, tensor<3xi32>)
  %2 = stablehlo.cholesky %a, lower = true : ${T}
  %3 = stablehlo.cholesky %a, lower = false : ${T}
  return %0#0, %0#1, %1#0, %1#1, %2, %3 : ${T}, tensor<3xi32>, ${T}, tensor<3xi32>, ${T}, ${T}
}`).entry;
  // Hermitian: G Gᴴ + n I twice, then one whose fourth leading minor is not positive definite.
  const r = randoms(71);
  const matrices: C[][] = [0, 1].map(() => {
    const g = Array.from({ length: n * n }, () => ({ re: r(), im: r() }));
    return Array.from({ length: n * n }, (_, e) => {
      const i = Math.floor(e / n), j = e % n;
      let re = i === j ? n : 0, im = 0;
      for (let k = 0; k < n; k++) {
        const p = g[i * n + k]!, q = g[j * n + k]!;
        re += p.re * q.re + p.im * q.im;
        im += p.im * q.re - p.re * q.im;
      }
      return { re: Math.fround(re), im: i === j ? 0 : Math.fround(im) };
    });
  });
  // Hermitian in both triangles: the diagonal real, (j, i) the conjugate of (i, j).
  const hermitian = (m: C[]): C[] => m.map((v, e) => {
    const i = Math.floor(e / n), j = e % n;
    return i > j ? { re: m[j * n + i]!.re, im: -m[j * n + i]!.im } : v;
  });
  const bad: C[] = Array.from({ length: n * n }, (_, e) => {
    const i = Math.floor(e / n), j = e % n;
    return i === j ? { re: i === 3 ? -2 : 4, im: 0 } : { re: 0.5, im: i < j ? 0.25 : -0.25 };
  });
  const input = [...hermitian(matrices[0]!), ...hermitian(matrices[1]!), ...bad];
  const a = Literal.fromValues("c64", [3, n, n], input as never);
  const { got, want, dump } = await runOnGpu<C | number>(program, [a]);
  assert.match(dump, /\?potrf of 3 c64 matrix\(es\)/);
  assert.match(dump, /Cholesky of 3 c64 matrix\(es\)/);
  assert.deepEqual(got[1], [0, 0, 4]);
  assert.deepEqual(got[3], [0, 0, 4]);
  const bound = complexCholeskyBackwardBound(n);
  for (const [k, lower, xla] of [[0, true, false], [2, false, false], [4, true, true], [5, false, true]] as const) {
    const out = got[k] as C[];
    // L(i, j), j <= i: the stored entry (upper: Lᴴ's, conjugated back).
    const l = (b: number, i: number, j: number): C => {
      const v = out[b * n * n + (lower ? i * n + j : j * n + i)]!;
      return lower ? v : { re: v.re, im: -v.im };
    };
    for (let b = 0; b < 3; b++) for (let e = 0; e < n * n; e++) {
      const i = Math.floor(e / n), j = e % n;
      const at = b * n * n + e;
      const kept = lower ? j > i : i > j;
      // XLA's: the other triangle 0, a matrix that is not positive definite all NaN.
      if (xla && (kept || b === 2)) {
        const zero = b === 2 ? Number.isNaN(out[at]!.re) && Number.isNaN(out[at]!.im) : Object.is(out[at]!.re, 0) && Object.is(out[at]!.im, 0);
        assert.ok(zero, `XLA's ${lower ? "lower" : "upper"} matrix ${b} element ${e}: ${JSON.stringify(out[at])}`);
        continue;
      }
      // Outside the named triangle, and a failed matrix's columns from the failure on: the input, bit for bit.
      if (kept || (b === 2 && Math.min(i, j) >= 3)) {
        assert.ok(Object.is(out[at]!.re, input[at]!.re) && Object.is(out[at]!.im, input[at]!.im), `${lower ? "lower" : "upper"} matrix ${b} element ${e} kept`);
        continue;
      }
      // The factored entries: near the interpreter's, and the backward error of A = L Lᴴ within the bound.
      const w = (want[k] as C[])[at]!;
      const signed = (x: number): string => (Object.is(x, -0) ? "-0" : String(x));
      // The diagonal's imaginary part: a zero of the interpreter's sign (+0 from ?potrf, -0 in XLA's upper factor, Lᴴ).
      if (i === j && b < 2) assert.ok(Object.is(out[at]!.im, w.im), `${xla ? "XLA's" : "?potrf's"} ${lower ? "lower" : "upper"} matrix ${b} (${i}, ${i}): imaginary part ${signed(out[at]!.im)}, the interpreter's ${signed(w.im)}`);
      assert.ok(Math.hypot(out[at]!.re - w.re, out[at]!.im - w.im) <= 1e-5 * (1 + Math.hypot(w.re, w.im)), `${lower ? "lower" : "upper"} matrix ${b} element ${e}: ${JSON.stringify(out[at])}, the interpreter's ${JSON.stringify(w)}`);
      if (b === 2) continue;
      const [p, q] = lower ? [i, j] : [j, i];
      let re = 0, im = 0, scale = 0;
      for (let c = 0; c <= q; c++) {
        const x = l(b, p, c), y = l(b, q, c);
        re += x.re * y.re + x.im * y.im;
        im += x.im * y.re - x.re * y.im;
        scale += Math.hypot(x.re, x.im) * Math.hypot(y.re, y.im);
      }
      const target = input[b * n * n + p * n + q]!;
      assert.ok(Math.hypot(target.re - re, target.im - im) <= bound * scale, `matrix ${b} (${p}, ${q}): |A - LLᴴ| ${Math.hypot(target.re - re, target.im - im)} within ${bound * scale}`);
    }
  }
});
