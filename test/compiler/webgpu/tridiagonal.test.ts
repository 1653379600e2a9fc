// The tridiagonal solve on the WebGPU backend (webgpu/tridiagonal_wgsl.ts: jaxlib's
// lapack_sgtsv_ffi and lapack_cgtsv_ffi, cuSPARSE's and hipSPARSE's gtsv2), f32 and c64
// (one check over the scalars, linalg_support.ts), against the interpreter (the
// specification: LAPACK's ?gtsv in doubles): every right-hand side's residual within
// the stated backward bound (docs/numerics.md: tridiagonalSolveBound,
// complexTridiagonalSolveBound; moduli on c64), its forward error
// against the interpreter's within κ_∞(A) times that bound, U's three vectors (LAPACK's
// results) near the interpreter's element by element (a wrong pivot or sign moves them
// by O(1)), the entries LAPACK does not read (dl(0), du(n-1)) kept; singular integer
// systems (exact arithmetic) give the interpreter's info and partial results bit for bit,
// and gtsv2 NaN. Sizes 1 to 40, batch dims and none, 1 to 3 right-hand sides.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { c, COMPLEXES, randoms, REALS, runOnGpu, tensorType, type Scalars } from "./linalg_support.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { complexTridiagonalSolveBound, tridiagonalSolveBound } from "../../../src/compiler/webgpu/tridiagonal_wgsl.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;
after(() => releaseGpu());

const tensor = (dims: readonly number[], t = "f32"): string => tensorType(dims, t);

interface Case { readonly batch: readonly number[]; readonly n: number; readonly nrhs: number; readonly target: string }

/** The cases of LAPACK's target `lapack` (lapack_sgtsv_ffi or lapack_cgtsv_ffi) and the gtsv2 ones. */
const cases = (lapack: string): Case[] => [
  { batch: [3], n: 1, nrhs: 2, target: lapack },
  { batch: [2], n: 5, nrhs: 1, target: lapack },
  { batch: [2, 2], n: 17, nrhs: 3, target: lapack },
  { batch: [], n: 40, nrhs: 2, target: lapack },
  { batch: [4], n: 9, nrhs: 2, target: "cusparse_gtsv2_ffi" },
  { batch: [], n: 6, nrhs: 1, target: "hipsparse_gtsv2_ffi" },
  // Singular, exact in f32: zero pivots at column 0 and at the end (the second and third), each with a nonsingular beside it.
  { batch: [3], n: 3, nrhs: 2, target: lapack },
  { batch: [3], n: 3, nrhs: 2, target: "cusparse_gtsv2_ffi" },
];


/** The singular batch's values: [dl, d, du, b]; system 0 nonsingular, 1 a zero pivot at column 0 (info 1), 2 one at the end (info 3). */
const SINGULAR = [
  [9, 1, 1, 9, 0, 0, 9, 1, 1],
  [2, 1, 3, 0, 2, 1, 1, 1, 1],
  [1, 2, 9, 3, 1, 9, 1, 0, 9],
  [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6],
];

function program(CASES: readonly Case[], t: string): { text: string; results: string[] } {
  const lines: string[] = [], results: string[] = [], returned: string[] = [];
  CASES.forEach(({ batch, n, nrhs, target }, p) => {
    const v = tensor([...batch, n], t), b = tensor([...batch, n, nrhs], t);
    const lapack = target.startsWith("lapack");
    const out = lapack ? [v, v, v, b, tensor(batch, "i32")] : [b];
    lines.push(`  %${p}:${out.length} = stablehlo.custom_call @${target}(%dl${p}, %d${p}, %du${p}, %b${p}) : (${v}, ${v}, ${v}, ${b}) -> (${out.join(", ")})`);
    results.push(...out);
    returned.push(...out.map((_, k) => `%${p}#${k}`));
  });
  const params = CASES.flatMap(({ batch, n, nrhs }, p) => [...["dl", "d", "du"].map((x) => `%${x}${p}: ${tensor([...batch, n], t)}`), `%b${p}: ${tensor([...batch, n, nrhs], t)}`]);
  return {
    text: `func.func @main(${params.join(", ")}) -> (${results.join(", ")}) {\n${lines.join("\n")}\n  return ${returned.join(", ")} : ${results.join(", ")}\n}`,
    results,
  };
}

/** The dense n×n float64 matrix of system s. */
function dense<T>(S: Scalars<T>, dl: readonly T[], d: readonly T[], du: readonly T[], s: number, n: number): T[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j === i ? d[s * n + i]! : j === i - 1 ? dl[s * n + i]! : j === i + 1 ? du[s * n + i]! : S.zero)));
}

/** ‖A⁻¹‖_∞ (rows' sums of moduli) by Gauss-Jordan with partial pivoting in float64. */
function inverseNorm<T>(S: Scalars<T>, a: readonly (readonly T[])[]): number {
  const n = a.length;
  const m = a.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? S.one : S.zero))]);
  for (let col = 0; col < n; col++) {
    let p = col;
    for (let r = col + 1; r < n; r++) if (S.abs(m[r]![col]!) > S.abs(m[p]![col]!)) p = r;
    [m[col], m[p]] = [m[p]!, m[col]!];
    const pivot = m[col]![col]!;
    for (let j = 0; j < 2 * n; j++) m[col]![j] = S.div(m[col]![j]!, pivot);
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]!;
      for (let j = 0; j < 2 * n; j++) m[r]![j] = S.sub(m[r]![j]!, S.mul(f, m[col]![j]!));
    }
  }
  return Math.max(...m.map((row) => row.slice(n).reduce((t, x) => t + S.abs(x), 0)));
}

/**
 * Runs `CASES` as one program over the scalars S (f32 or c64) and checks every system
 * against the interpreter and the stated bound `bound`.
 */
async function checkGtsv<T>(S: Scalars<T>, type: "f32" | "c64", CASES: readonly Case[], bound: number): Promise<void> {
  const { text } = program(CASES, type === "f32" ? "f32" : "complex<f32>");
  const values = CASES.map(({ batch, n, nrhs }, p) => {
    const r = randoms(700 + p);
    const vec = (k: number): T[] => Array.from({ length: k }, () => S.round(S.any(r)));
    return [vec(elementCount(batch) * n), vec(elementCount(batch) * n), vec(elementCount(batch) * n), vec(elementCount(batch) * n * nrhs)];
  });
  // The singular systems: integers (complex: with imaginary parts 0), exact arithmetic.
  const singular = SINGULAR.map((v) => v.map((x) => (type === "f32" ? x : c(x)) as T));
  values[6] = singular;
  values[7] = singular;
  const args = CASES.flatMap(({ batch, n, nrhs }, p) => values[p]!.map((v, k) => Literal.fromValues(type, k === 3 ? [...batch, n, nrhs] : [...batch, n], v as never)));
  const { got, want, dump } = await runOnGpu<T | number>(parseStableHlo(text).entry, args);
  assert.match(dump, /kernel\(s\), 0 host step/);
  assert.match(dump, new RegExp(`\\?gtsv of 3 ${type} system`));
  const isNaN = (x: T): boolean => Number.isNaN(S.abs(x));
  let at = 0;
  CASES.forEach(({ batch, n, nrhs, target }, p) => {
    const lapack = target.startsWith("lapack");
    const leaves = lapack ? 5 : 1;
    const mine = got.slice(at, at + leaves) as T[][], theirs = want.slice(at, at + leaves) as T[][];
    at += leaves;
    const what = `${target} (${type}) ${[...batch, n, nrhs].join("x")}`;
    if (p >= 6) {
      // Exact arithmetic: every result bit for bit (NaN where the interpreter's is).
      mine.forEach((m, k) => assert.deepEqual(m, theirs[k], `${what}: result ${k}`));
      if (lapack) assert.deepEqual(mine[4], [0, 1, 3], `${what}: info`);
      else assert.ok(mine[0]!.slice(6).every(isNaN) && mine[0]!.slice(0, 6).every((x) => !isNaN(x)), `${what}: NaN for the singular systems only`);
      return;
    }
    const x = mine[lapack ? 3 : 0]!, xWant = theirs[lapack ? 3 : 0]!;
    const [dl, d, du, b] = values[p]!;
    let worstResidual = 0, worstForward = 0, worstU = 0;
    for (let s = 0; s < elementCount(batch); s++) {
      const a = dense(S, dl!, d!, du!, s, n);
      const norm = Math.max(...a.map((row) => row.reduce((t, v) => t + S.abs(v), 0)));
      const kappa = norm * inverseNorm(S, a);
      for (let col = 0; col < nrhs; col++) {
        const xs = Array.from({ length: n }, (_, i) => x[s * n * nrhs + i * nrhs + col]!);
        const xNorm = Math.max(...xs.map(S.abs));
        const residual = Math.max(...a.map((row, i) => S.abs(S.sub(b![s * n * nrhs + i * nrhs + col]!, row.reduce((t, v, j) => S.add(t, S.mul(v, xs[j]!)), S.zero)))));
        const allowedResidual = bound * norm * xNorm;
        assert.ok(residual <= allowedResidual, `${what}: system ${s} rhs ${col}: ‖b - A x̂‖ = ${residual} > ${allowedResidual}`);
        worstResidual = Math.max(worstResidual, residual / allowedResidual);
        const forward = Math.max(...xs.map((v, i) => S.abs(S.sub(v, xWant[s * n * nrhs + i * nrhs + col]!))));
        const allowed = (2 * kappa * bound + 2 ** -23) * xNorm;
        assert.ok(forward <= allowed, `${what}: system ${s} rhs ${col}: ‖x̂ - x‖ = ${forward} > ${allowed} (κ = ${kappa})`);
        worstForward = Math.max(worstForward, forward / allowed);
      }
    }
    if (lapack) {
      // U's vectors (the pivots as the interpreter's decided them) and info; dl(0) and du(n-1) kept.
      for (const k of [0, 1, 2]) {
        const scale = Math.max(...theirs[k]!.map(S.abs), 1);
        mine[k]!.forEach((v, e) => {
          const err = S.abs(S.sub(v, theirs[k]![e]!));
          assert.ok(err <= 2 ** -12 * scale, `${what}: result ${k} element ${e}: ${JSON.stringify(v)}, the interpreter's ${JSON.stringify(theirs[k]![e])}`);
          worstU = Math.max(worstU, err / scale);
        });
      }
      for (let s = 0; s < elementCount(batch); s++) {
        assert.deepEqual(mine[0]![s * n], dl![s * n], `${what}: dl(0) kept`);
        if (n > 1) assert.deepEqual(mine[2]![s * n + n - 1], du![s * n + n - 1], `${what}: du(n-1) kept`);
      }
      assert.deepEqual(mine[4], new Array<number>(elementCount(batch)).fill(0), `${what}: info`);
    }
    console.log(`${what}: worst residual ${(100 * worstResidual).toFixed(3)}% of its bound, forward ${(100 * worstForward).toFixed(3)}% of κ times it${lapack ? `, U within ${worstU.toExponential(2)} of its scale` : ""}`);
  });
}

test("gtsv (lapack_sgtsv_ffi, cusparse_gtsv2_ffi, hipsparse_gtsv2_ffi): residuals within the stated bound, x near the interpreter's within κ times it, U's vectors near the interpreter's, singular systems bit for bit (gtsv2: NaN)", { skip }, async () => {
  await checkGtsv(REALS, "f32", cases("lapack_sgtsv_ffi"), tridiagonalSolveBound);
});

test("c64 gtsv (lapack_cgtsv_ffi, cusparse_gtsv2_ffi and hipsparse_gtsv2_ffi on c64), the f32 kernel's generator over the Field (pivots by |re| + |im|): residuals within complexTridiagonalSolveBound, x near the interpreter's within κ times it, U's vectors near the interpreter's, singular systems bit for bit (gtsv2: NaN)", { skip }, async () => {
  await checkGtsv(COMPLEXES, "c64", cases("lapack_cgtsv_ffi"), complexTridiagonalSolveBound);
});

test("the plan (no GPU needed): f32 gtsv is a kernel with n and nrhs as step parameters (gtsv2 with its work buffer after x); f64 runs on the host, saying why", () => {
  const plan = planGpuProgram(parseStableHlo(`func.func @main(%v: tensor<4x7xf32>, %b: tensor<4x7x2xf32>, %w: tensor<7xf64>, %c: tensor<7x1xf64>) -> (tensor<4x7x2xf32>, tensor<4xi32>, tensor<4x7x2xf32>, tensor<7x1xf64>) {
  %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%v, %v, %v, %b) : (tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7x2xf32>) -> (tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7x2xf32>, tensor<4xi32>)
  %1 = stablehlo.custom_call @cusparse_gtsv2_ffi(%v, %v, %v, %b) : (tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7x2xf32>) -> tensor<4x7x2xf32>
  %2:5 = stablehlo.custom_call @lapack_dgtsv_ffi(%w, %w, %w, %c) : (tensor<7xf64>, tensor<7xf64>, tensor<7xf64>, tensor<7x1xf64>) -> (tensor<7xf64>, tensor<7xf64>, tensor<7xf64>, tensor<7x1xf64>, tensor<i32>)
  return %0#3, %0#4, %1, %2#3 : tensor<4x7x2xf32>, tensor<4xi32>, tensor<4x7x2xf32>, tensor<7x1xf64>
}`), {});
  const dump = dumpGpuProgram(plan);
  assert.match(dump, /\?gtsv of 4 f32 system\(s\), partial pivoting, an invocation a system, the sizes parameters/);
  const kernels = plan.steps.flatMap((s) => (s.kind === "kernel" && !s.name.startsWith("copy") ? [s] : []));
  assert.deepEqual(kernels.map((s) => s.parameters), [[7, 2], [7, 2]]);
  // LAPACK's: 4 operands and 5 results; gtsv2's: 4 operands, x and the work buffer.
  assert.deepEqual(kernels.map((s) => s.buffers.length), [9, 6]);
  assert.equal(kernels[1]!.buffers[5]!.space, "temp");
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : []));
  assert.equal(hosts.length, 1);
  assert.match(hosts[0]!, /^custom call lapack_dgtsv_ffi \(f64\[.*\): WGSL has no f64 \(f64 and c128 LAPACK calls run on the host\)$/);
});
