// The custom calls JAX lowers linear algebra to on GPUs (cuSOLVER/hipSOLVER, cuSPARSE's
// gtsv2, the LU pivot permutation) and XLA's Qr / ProductOfElementaryHouseholderReflectors,
// run on the selected backend as jaxlib's GPU lowering writes them (bool attributes,
// batched operands): checked by the identities that define each factorization, P A = L U,
// A = Q R with Qᴴ Q = I, A = L Lᴴ, A V = V Λ, A = U Σ Vᴴ, A x = b, and against values
// known independently (jaxlib's LAPACK for ?sytrd, IREE's expected Householder product,
// permutations worked by hand).

import { test } from "node:test";
import assert from "node:assert/strict";
import { ExecutionError, Literal, parseStableHlo, ShapeError, type ElementType } from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import {
  adjoint, assertNear, complexKind, identity, KINDS, literal, lowerUnit, matmul, matrixSource, maxAbs, readFixtureNpz, REAL, runCall,
  stored, tol, tolerance, toCMat, toCVec, tridiagonalMatrix, TYPE, upper, zeros, type CMat, type Kind,
} from "./lapack_support.js";

const { random, hermitian } = matrixSource(25);

/** Hermitian positive definite: G Gᴴ + n I. */
function positiveDefinite(k: Kind, n: number): CMat {
  const g = random(k, n, n);
  const gg = matmul(g, adjoint(g));
  return stored(k, { ...gg, re: gg.re.map((x, i) => x + (i % (n + 1) === 0 ? n : 0)) });
}

/** `a` with the triangle a routine must not read (above the diagonal when lower) overwritten with junk. */
function junkOutside(k: Kind, a: CMat, lower: boolean): CMat {
  const junk = random(k, a.rows, a.cols);
  const keep = (p: number): boolean => (lower ? Math.floor(p / a.cols) >= p % a.cols : Math.floor(p / a.cols) <= p % a.cols);
  return { ...a, re: a.re.map((x, p) => (keep(p) ? x : 99 * junk.re[p]!)), im: a.im.map((x, p) => (keep(p) ? x : 99 * junk.im[p]!)) };
}

/** U (its first k columns) · Σ · Vᴴ (its first k rows). */
function recompose(u: CMat, sigma: readonly number[], vh: CMat): CMat {
  const k = sigma.length;
  const us: CMat = { rows: u.rows, cols: k, re: [], im: [] };
  for (let i = 0; i < u.rows; i++) for (let j = 0; j < k; j++) {
    us.re.push(u.re[i * u.cols + j]! * sigma[j]!);
    us.im.push(u.im[i * u.cols + j]! * sigma[j]!);
  }
  const vk: CMat = { rows: k, cols: vh.cols, re: vh.re.slice(0, k * vh.cols), im: vh.im.slice(0, k * vh.cols) };
  return matmul(us, vk);
}

function assertOrthonormalColumns(q: CMat, tolerance: number, what: string): void {
  assertNear(matmul(adjoint(q), q), identity(q.cols), tolerance, `${what}: Qᴴ Q = I`);
}

const info = (lit: Literal): number[] => lit.toNumbers();

test("lapack_?ormqr_ffi / ?unmqr and cusolver_ormqr_ffi: Q C, Qᴴ C, C Q, C Qᴴ equal the products with the full Q that orgqr forms, batched", () => {
  for (const k of KINDS) for (const [m, n] of [[5, 3], [4, 4]] as const) {
    const as = [stored(k, random(k, m, n)), stored(k, random(k, m, n))];
    const [qr, tau] = runCall("cusolver_geqrf_ffi", "{}", [literal(k, [2, m, n], as)], [zeros(TYPE[k], [2, m, n]), zeros(TYPE[k], [2, n])]);
    // The full m×m Q: orgqr of the reflectors padded with zero columns.
    const padded = [0, 1].map((b) => {
      const f = toCMat(qr!, b);
      return { rows: m, cols: m, re: Array.from({ length: m * m }, (_, p) => (p % m < n ? f.re[Math.floor(p / m) * n + (p % m)]! : 0)), im: Array.from({ length: m * m }, (_, p) => (p % m < n ? f.im[Math.floor(p / m) * n + (p % m)]! : 0)) };
    });
    const [q] = runCall("cusolver_orgqr_ffi", "{}", [literal(k, [2, m, m], padded), tau!], [zeros(TYPE[k], [2, m, m])]);
    for (const left of [true, false]) for (const transpose of [true, false]) {
      const cs = [stored(k, random(k, left ? m : 2, left ? 2 : m)), stored(k, random(k, left ? m : 2, left ? 2 : m))];
      const dims = [2, left ? m : 2, left ? 2 : m];
      const target = complexKind(k) ? `lapack_${k}unmqr_ffi` : `lapack_${k}ormqr_ffi`;
      for (const name of [target, "cusolver_ormqr_ffi", "hipsolver_ormqr_ffi"]) {
        const [out] = runCall(name, `{left = ${left}, transpose = ${transpose}}`, [qr!, tau!, literal(k, dims, cs)], [zeros(TYPE[k], dims)]);
        cs.forEach((c, b) => {
          const qb = transpose ? adjoint(toCMat(q!, b)) : toCMat(q!, b);
          assertNear(toCMat(out!, b), left ? matmul(qb, c) : matmul(c, qb), tol(k, m), `${name} ${k} ${m}x${n} left=${left} transpose=${transpose} batch ${b}`);
        });
      }
    }
  }
  const a = Literal.from("f32", [[1, 0], [0, 1], [0, 0]]);
  assert.throws(() => runCall("cusolver_ormqr_ffi", "{left = true, transpose = false}", [a, Literal.from("f32", [0, 0]), Literal.from("f32", [[1, 2], [3, 4]])], [zeros("f32", [2, 2])]),
    (e: unknown) => e instanceof ShapeError && /cusolver_ormqr_ffi: operand 0 must have 2 rows, the order of Q \(C's rows\), got 3/.test(e.message));
});

test("cusolver_potrf_ffi: A = L Lᴴ (lower = true) or Uᴴ U (lower = false) for a batch, the other triangle unread; info names a non-positive minor", () => {
  for (const k of KINDS) for (const lower of [true, false]) {
    const n = 4, as = [positiveDefinite(k, n), positiveDefinite(k, n), positiveDefinite(k, n)];
    const [f, inf] = runCall("cusolver_potrf_ffi", `{lower = ${lower}}`, [literal(k, [3, n, n], as.map((a) => junkOutside(k, a, lower)))],
      [zeros(TYPE[k], [3, n, n]), zeros("s32", [3])]);
    assert.deepEqual(info(inf!), [0, 0, 0]);
    as.forEach((a, b) => {
      const fm = toCMat(f!, b);
      const tri = lower ? adjoint(upper(adjoint(fm), n)) : upper(fm, n);
      assertNear(lower ? matmul(tri, adjoint(tri)) : matmul(adjoint(tri), tri), a, tol(k, n), `${k} lower=${lower} batch ${b}`);
    });
  }
  const notDefinite = Literal.from("f64", [[[4, 2, 0], [2, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]]);
  const [, inf] = runCall("cusolver_potrf_ffi", "{lower = true}", [notDefinite], [zeros("f64", [2, 3, 3]), zeros("s32", [2])]);
  assert.deepEqual(info(inf!), [2, 0]);
});

test("cusolver_getrf_ffi + cu_lu_pivots_to_permutation: P A = L U with 1-based pivots, batched, square and rectangular", () => {
  for (const k of KINDS) for (const [m, n] of [[4, 4], [3, 5], [5, 3]] as const) {
    const kk = Math.min(m, n), as = [stored(k, random(k, m, n)), stored(k, random(k, m, n))];
    const [lu, ipiv, inf] = runCall("cusolver_getrf_ffi", "{}", [literal(k, [2, m, n], as)], [zeros(TYPE[k], [2, m, n]), zeros("s32", [2, kk]), zeros("s32", [2])]);
    assert.deepEqual(info(inf!), [0, 0]);
    // jaxlib's lowering: pivots - 1, then the permutation of the m rows.
    const zeroBased = Literal.fromValues("s32", [2, kk], ipiv!.toNumbers().map((p) => p - 1));
    const [perm] = runCall("cu_lu_pivots_to_permutation", "{}", [zeroBased], [zeros("s32", [2, m])]);
    as.forEach((a, b) => {
      const p = perm!.toNumbers().slice(b * m, (b + 1) * m);
      assert.deepEqual([...p].sort((x, y) => x - y), Array.from({ length: m }, (_, i) => i), `${k} batch ${b}: a permutation`);
      const pa: CMat = { rows: m, cols: n, re: p.flatMap((r) => a.re.slice(r * n, (r + 1) * n)), im: p.flatMap((r) => a.im.slice(r * n, (r + 1) * n)) };
      const f = toCMat(lu!, b);
      assertNear(matmul(lowerUnit(f, kk), upper(f, kk)), pa, tol(k, n), `${k} ${m}x${n} batch ${b}: A[perm] = L U`);
    });
  }
  const [, , inf] = runCall("cusolver_getrf_ffi", "{}", [Literal.from("f32", [[1, 2], [2, 4]])], [zeros("f32", [2, 2]), zeros("s32", [2]), zeros("s32", [])]);
  assert.deepEqual(info(inf!), [2], "an exactly singular matrix: the first zero pivot");
});

test("cu_lu_pivots_to_permutation: swaps applied in order to the identity (worked by hand), batched, a longer permutation, out-of-range pivots skipped", () => {
  // [0,1,2,3] -swap 0,2-> [2,1,0,3] -swap 1,3-> [2,3,0,1] -swap 2,2-> [2,3,0,1];
  // [0,1,2,3] -swap 0,1-> [1,0,2,3] -swap 1,1-> same -swap 2,3-> [1,0,3,2].
  const [perm] = runCall("cu_lu_pivots_to_permutation", "{}", [Literal.from("s32", [[2, 3, 2], [1, 1, 3]])], [zeros("s32", [2, 4])]);
  assert.deepEqual(perm!.toNumbers(), [2, 3, 0, 1, 1, 0, 3, 2]);
  const [longer] = runCall("hip_lu_pivots_to_permutation", "{}", [Literal.from("s32", [1])], [zeros("s32", [3])]);
  assert.deepEqual(longer!.toNumbers(), [1, 0, 2]);
  const [skipped] = runCall("cu_lu_pivots_to_permutation", "{}", [Literal.from("s32", [5, -1])], [zeros("s32", [3])]);
  assert.deepEqual(skipped!.toNumbers(), [0, 1, 2]);
  assert.throws(() => runCall("cu_lu_pivots_to_permutation", "{}", [Literal.from("s32", [0, 1, 2])], [zeros("s32", [2])]),
    (e: unknown) => e instanceof ShapeError && /cu_lu_pivots_to_permutation: result 0 must have at least as many elements as the 3 pivots, got 2/.test(e.message));
});

test("cusolver_geqrf_ffi + cusolver_orgqr_ffi: A = Q R with orthonormal Q, batched", () => {
  for (const k of KINDS) for (const [m, n] of [[5, 3], [4, 4]] as const) {
    const as = [stored(k, random(k, m, n)), stored(k, random(k, m, n))];
    const [qr, tau] = runCall("cusolver_geqrf_ffi", "{}", [literal(k, [2, m, n], as)], [zeros(TYPE[k], [2, m, n]), zeros(TYPE[k], [2, n])]);
    const [q] = runCall("cusolver_orgqr_ffi", "{}", [qr!, tau!], [zeros(TYPE[k], [2, m, n])]);
    as.forEach((a, b) => {
      const qm = toCMat(q!, b);
      assertOrthonormalColumns(qm, tol(k, m), `${k} ${m}x${n} batch ${b}`);
      assertNear(matmul(qm, upper(toCMat(qr!, b), n)), a, tol(k, m), `${k} ${m}x${n} batch ${b}: Q R = A`);
    });
  }
});

test("cusolver_syevd_ffi: A V = V Λ, Vᴴ V = I, Λ ascending, for each algorithm and triangle, batched", () => {
  for (const k of KINDS) for (const algorithm of [0, 1, 2]) for (const lower of [true, false]) {
    const n = 5, as = [hermitian(k, n), hermitian(k, n)];
    const [v, w, inf] = runCall("cusolver_syevd_ffi", `{algorithm = ${algorithm} : ui8, lower = ${lower}}`, [literal(k, [2, n, n], as.map((a) => junkOutside(k, a, lower)))],
      [zeros(TYPE[k], [2, n, n]), zeros(REAL[k], [2, n]), zeros("s32", [2])]);
    assert.deepEqual(info(inf!), [0, 0]);
    as.forEach((a, b) => {
      const vm = toCMat(v!, b), lambda = w!.toNumbers().slice(b * n, (b + 1) * n);
      lambda.forEach((x, i) => assert.ok(i === 0 || lambda[i - 1]! <= x, `${k}: ascending`));
      assertOrthonormalColumns(vm, tol(k, n), `${k} algorithm ${algorithm}`);
      const vl: CMat = { ...vm, re: vm.re.map((x, p) => x * lambda[p % n]!), im: vm.im.map((x, p) => x * lambda[p % n]!) };
      assertNear(matmul(a, vm), vl, tol(k, n) * 10, `${k} algorithm ${algorithm} lower=${lower} batch ${b}: A V = V Λ`);
    });
  }
  const a = Literal.from("f32", [[2, 1], [1, 2]]);
  assert.throws(() => runCall("cusolver_syevd_ffi", "{algorithm = 3 : ui8, lower = true}", [a], [a, zeros("f32", [2]), zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /cusolver_syevd_ffi: attribute algorithm must be 0 \(default\), 1 \(QR\) or 2 \(Jacobi\), got 3/.test(e.message));
  assert.throws(() => runCall("cusolver_syevd_ffi", "{algorithm = 0 : ui8, lower = 1 : i32}", [a], [a, zeros("f32", [2]), zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /attribute lower must be true or false, got 1/.test(e.message));
});

/** Σ descending and non-negative. */
function assertSingularValues(s: readonly number[], what: string): void {
  s.forEach((x, i) => assert.ok(x >= 0 && (i === 0 || s[i - 1]! >= x), `${what}: Σ descending, non-negative`));
}

test("cusolver_gesvd_ffi: A = U Σ Vᴴ; a wide A is `transposed` (Vᴴ in result 2, U in result 3); full and reduced, batched; hipsolver_gesdd_ffi, any shape either way", () => {
  const cases = [
    ...KINDS.flatMap((k) => [[5, 3], [3, 5], [4, 4]].map(([m, n]) => ({ target: "cusolver_gesvd_ffi", k, m: m!, n: n!, transposed: m! < n! }))),
    ...[[5, 3], [3, 5]].flatMap(([m, n]) => [false, true].map((transposed) => ({ target: "hipsolver_gesdd_ffi", k: "z" as Kind, m: m!, n: n!, transposed }))),
  ];
  for (const { target, k, m, n, transposed } of cases) for (const full of [true, false]) {
    const kk = Math.min(m, n);
    const as = [stored(k, random(k, m, n)), stored(k, random(k, m, n))];
    const uDims = [2, m, full ? m : kk], vhDims = [2, full ? n : kk, n];
    const results = [zeros(TYPE[k], [2, m, n]), zeros(REAL[k], [2, kk]), zeros(TYPE[k], transposed ? vhDims : uDims), zeros(TYPE[k], transposed ? uDims : vhDims), zeros("s32", [2])];
    const got = runCall(target, `{compute_uv = true, full_matrices = ${full}, transposed = ${transposed}}`, [literal(k, [2, m, n], as)], results);
    const [u, vh] = transposed ? [got[3]!, got[2]!] : [got[2]!, got[3]!];
    assert.deepEqual(info(got[4]!), [0, 0]);
    as.forEach((a, b) => {
      const what = `${target} ${k} ${m}x${n} transposed=${transposed} full=${full} batch ${b}`;
      const sigma = got[1]!.toNumbers().slice(b * kk, (b + 1) * kk);
      assertSingularValues(sigma, what);
      const um = toCMat(u, b), vm = toCMat(vh, b);
      assertOrthonormalColumns(um, tol(k, m), `${what} U`);
      assertOrthonormalColumns(adjoint(vm), tol(k, n), `${what} V`);
      assertNear(recompose(um, sigma, vm), a, tol(k, Math.max(m, n)), `${what}: U Σ Vᴴ = A`);
    });
    // compute_uv = false: jaxlib declares U and Vᴴ as scalars it never reads.
    const [, s] = runCall(target, `{compute_uv = false, full_matrices = ${full}, transposed = ${transposed}}`, [literal(k, [2, m, n], as)],
      [zeros(TYPE[k], [2, m, n]), zeros(REAL[k], [2, kk]), zeros(TYPE[k], []), zeros(TYPE[k], []), zeros("s32", [2])]);
    assertNear(toCMat(s!), toCMat(got[1]!), tol(k, Math.max(m, n)), `${k} ${m}x${n}: the same Σ without vectors`);
  }
  const wide = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  assert.throws(() => runCall("cusolver_gesvd_ffi", "{compute_uv = true, full_matrices = true, transposed = false}", [wide],
    [wide, zeros("f32", [2]), zeros("f32", [2, 2]), zeros("f32", [3, 3]), zeros("s32", [])]),
  (e: unknown) => e instanceof ShapeError && /cusolver_gesvd_ffi: attribute transposed is false for a 2×3 matrix: the solver needs m >= n/.test(e.message));
});

test("cusolver_gesvdj_ffi and cusolver_gesvdp_ffi: A = U Σ Vᴴ with V itself in result 3, full and reduced, square, tall and wide, batched; vectors off keeps the shapes", () => {
  for (const target of ["cusolver_gesvdj_ffi", "cusolver_gesvdp_ffi"]) for (const k of KINDS) for (const [m, n] of [[5, 3], [3, 5], [4, 4]] as const) for (const full of [true, false]) {
    const kk = Math.min(m, n);
    const as = [stored(k, random(k, m, n)), stored(k, random(k, m, n))];
    const shapes = [zeros(TYPE[k], [2, m, n]), zeros(REAL[k], [2, kk]), zeros(TYPE[k], [2, m, full ? m : kk]), zeros(TYPE[k], [2, n, full ? n : kk]), zeros("s32", [2])];
    const [, s, u, v, inf] = runCall(target, `{compute_uv = true, full_matrices = ${full}}`, [literal(k, [2, m, n], as)], shapes);
    assert.deepEqual(info(inf!), [0, 0]);
    as.forEach((a, b) => {
      const what = `${target} ${k} ${m}x${n} full=${full} batch ${b}`;
      const sigma = s!.toNumbers().slice(b * kk, (b + 1) * kk);
      assertSingularValues(sigma, what);
      const um = toCMat(u!, b), vm = toCMat(v!, b);
      assertOrthonormalColumns(um, tol(k, m), `${what} U`);
      assertOrthonormalColumns(vm, tol(k, n), `${what} V`);
      assertNear(recompose(um, sigma, adjoint(vm)), a, tol(k, Math.max(m, n)), `${what}: U Σ Vᴴ = A`);
    });
    const values = runCall(target, `{compute_uv = false, full_matrices = ${full}}`, [literal(k, [2, m, n], as)], shapes);
    assertNear(toCMat(values[1]!), toCMat(s!), tol(k, Math.max(m, n)), `${k} ${m}x${n}: the same Σ without vectors`);
    assert.equal(maxAbs(toCMat(values[2]!)) + maxAbs(toCMat(values[3]!)), 0, `${k} ${m}x${n}: U and V untouched without vectors`);
  }
});

/** The complex eigenvectors from LAPACK's real storage (?geev's VR): a pair with wi(j) != 0 is VR(:, j) ± i VR(:, j+1). */
function unpackConjugatePairs(vr: CMat, wi: readonly number[]): CMat {
  const n = vr.rows, v: CMat = { rows: n, cols: n, re: [...vr.re], im: new Array<number>(n * n).fill(0) };
  for (let j = 0; j + 1 < n; j++) {
    if (wi[j] === 0) continue;
    for (let r = 0; r < n; r++) {
      const re = vr.re[r * n + j]!, im = vr.re[r * n + j + 1]!;
      [v.re[r * n + j], v.im[r * n + j], v.re[r * n + j + 1], v.im[r * n + j + 1]] = [re, im, re, -im];
    }
    j++;
  }
  return v;
}

const COMPLEX: Record<Kind, ElementType> = { s: "c64", d: "c128", c: "c64", z: "c128" };

test("cusolver_geev_ffi: A v = λ v for the right eigenvectors, real (conjugate pairs packed as LAPACK packs them) and complex, batched", () => {
  for (const k of KINDS) {
    // The second is nearly skew-symmetric: its eigenvalues are complex pairs for certain.
    const n = 6, g = random(k, n, n), small = random(k, n, n);
    const skew: CMat = { ...g, re: g.re.map((x, p) => x - g.re[(p % n) * n + Math.floor(p / n)]! + 0.1 * small.re[p]!), im: g.im.map((x, p) => x + 0.1 * small.im[p]!) };
    const as = [stored(k, random(k, n, n)), stored(k, skew)];
    const [, w, , vr, inf] = runCall("cusolver_geev_ffi", "{left = false, right = true}", [literal(k, [2, n, n], as)],
      [zeros(TYPE[k], [2, n, n]), zeros(COMPLEX[k], [2, n]), zeros(TYPE[k], [2, n, n]), zeros(TYPE[k], [2, n, n]), zeros("s32", [2])]);
    assert.deepEqual(info(inf!), [0, 0]);
    as.forEach((a, b) => {
      const lambda = toCVec(w!, b);
      const v = complexKind(k) ? toCMat(vr!, b) : unpackConjugatePairs(toCMat(vr!, b), lambda.im);
      if (!complexKind(k) && b === 1) assert.ok(lambda.im.some((x) => x !== 0), `${k}: complex pairs`);
      for (let j = 0; j < n; j++) {
        const x: CMat = { rows: n, cols: 1, re: v.re.filter((_, p) => p % n === j), im: v.im.filter((_, p) => p % n === j) };
        const [lr, li] = [lambda.re[j]!, lambda.im[j]!];
        const lx: CMat = { ...x, re: x.re.map((r, p) => r * lr - x.im[p]! * li), im: x.re.map((r, p) => r * li + x.im[p]! * lr) };
        assert.ok(Math.abs(Math.hypot(...x.re, ...x.im) - 1) <= tol(k, n), `${k} batch ${b}: eigenvector ${j} has unit norm`);
        assertNear(matmul(a, x), lx, tol(k, n) * 100, `${k} batch ${b}: A v = λ v (${j})`);
      }
    });
  }
  // A rotation by 90°: eigenvalues i, -i (positive imaginary part first), eigenvector (1, -i)/√2 packed as columns (1, 0)/√2 and (0, -1)/√2.
  const [, w, , vr] = runCall("cusolver_geev_ffi", "{left = false, right = true}", [Literal.from("f64", [[0, -1], [1, 0]])],
    [zeros("f64", [2, 2]), zeros("c128", [2]), zeros("f64", [2, 2]), zeros("f64", [2, 2]), zeros("s32", [])]);
  assertNear(toCMat(w!), { rows: 2, cols: 1, re: [0, 0], im: [1, -1] }, 1e-15, "eigenvalues of the rotation");
  assertNear(toCMat(vr!), { rows: 2, cols: 2, re: [Math.SQRT1_2, 0, 0, -Math.SQRT1_2], im: [0, 0, 0, 0] }, 1e-15, "packed eigenvectors of the rotation");
});

test("cuhybrid_eig_real / _comp (and hip): LAPACK's ?geev on the host, so jaxlib's CPU ?geev results (checked against jaxlib in lapack_targets); a rotation's eigenvalues ±i", () => {
  for (const k of KINDS) {
    const n = 5, a = literal(k, [2, n, n], [stored(k, random(k, n, n)), stored(k, random(k, n, n))]);
    const v = zeros(COMPLEX[k], [2, n, n]), inf = zeros("s32", [2]);
    const results = complexKind(k) ? [zeros(TYPE[k], [2, n]), v, v, inf] : [zeros(TYPE[k], [2, n]), zeros(TYPE[k], [2, n]), v, v, inf];
    const cpu = runCall(`lapack_${k}geev_ffi`, "{compute_left = 86 : ui8, compute_right = 86 : ui8}", [a], results);
    for (const prefix of ["cu", "hip"]) {
      const gpu = runCall(`${prefix}hybrid_eig_${complexKind(k) ? "comp" : "real"}`, `{left = true, magma = "auto", right = true}`, [a], results);
      assert.deepEqual(gpu.map((l) => l.values()), cpu.map((l) => l.values()), `${prefix} ${k}`);
    }
  }
  const [wr, wi] = runCall("cuhybrid_eig_real", `{left = false, magma = "off", right = false}`, [Literal.from("f32", [[0, -1], [1, 0]])],
    [zeros("f32", [2]), zeros("f32", [2]), zeros("c64", [2, 2]), zeros("c64", [2, 2]), zeros("s32", [])]);
  assert.deepEqual([...wr!.toNumbers(), ...wi!.toNumbers()], [0, 0, 1, -1]);
  assert.throws(() => runCall("cuhybrid_eig_comp", `{left = false, magma = "auto", right = true}`, [Literal.from("f32", [[1]])], [zeros("c64", [1]), zeros("c64", [1, 1]), zeros("c64", [1, 1]), zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /cuhybrid_eig_comp: operand 0 must be c64 or c128, got f32/.test(e.message));
  assert.throws(() => runCall("cuhybrid_eig_real", `{left = false, magma = "yes", right = true}`, [Literal.from("f32", [[1]])], [zeros("f32", [1]), zeros("f32", [1]), zeros("c64", [1, 1]), zeros("c64", [1, 1]), zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /attribute magma must be "auto", "on" or "off", got yes/.test(e.message));
});

test("cusolver_sytrd_ffi matches jaxlib's LAPACK ?sytrd / ?hetrd element by element (lower and upper)", () => {
  const arrays = readFixtureNpz("targets.npz");
  for (const name of ["sytrd.s.L", "sytrd.s.U", "sytrd.d.L", "sytrd.d.U", "hetrd.c.L", "hetrd.c.U", "hetrd.z.L", "hetrd.z.U"]) {
    const a = arrays.get(`${name}.in0`)!;
    const want = [0, 1, 2, 3, 4].map((i) => arrays.get(`${name}.out${i}`)!);
    const got = runCall("cusolver_sytrd_ffi", `{lower = ${name.endsWith("L")}}`, [a], want);
    want.forEach((w, i) => {
      const batches = w.dimensions.length > 2 ? w.dimensions[0]! : 1;
      for (let b = 0; b < batches; b++) assertNear(toCMat(got[i]!, b), toCMat(w, b), tolerance(w), `${name} result ${i} batch ${b}`);
    });
  }
});

test("cusparse_gtsv2_ffi: A x = b for a batch of tridiagonal systems; a singular system gives NaN (gtsv2 reports no info)", () => {
  for (const k of KINDS) {
    const n = 6, nrhs = 2;
    const systems = [0, 1].map(() => {
      const [dl, d, du] = [random(k, 1, n), random(k, 1, n), random(k, 1, n)].map((v) => stored(k, v));
      dl!.re[0] = dl!.im[0] = du!.re[n - 1] = du!.im[n - 1] = 0;
      return { dl: dl!, d: d!, du: du!, b: stored(k, random(k, n, nrhs)) };
    });
    const [x] = runCall("cusparse_gtsv2_ffi", "{}", [
      literal(k, [2, n], systems.map((s) => s.dl)), literal(k, [2, n], systems.map((s) => s.d)), literal(k, [2, n], systems.map((s) => s.du)), literal(k, [2, n, nrhs], systems.map((s) => s.b)),
    ], [zeros(TYPE[k], [2, n, nrhs])]);
    systems.forEach((s, b) => assertNear(matmul(tridiagonalMatrix(s.dl, s.d, s.du), toCMat(x!, b)), s.b, tol(k, n) * 1e3, `${k} batch ${b}: A x = b`));
  }
  const [x] = runCall("hipsparse_gtsv2_ffi", "{}", [Literal.from("f64", [0, 1, 1]), Literal.from("f64", [1, 1, 1]), Literal.from("f64", [1, 0, 0]), Literal.from("f64", [[1], [2], [3]])],
    [zeros("f64", [3, 1])]);
  assert.ok(x!.toNumbers().every(Number.isNaN), `rows 0 and 1 equal: singular, got ${x!.toNumbers().join(", ")}`);
});

test("hipsolver_* targets are the cusolver_* ones under ROCm's names (and hipsolver_gesdd_ffi takes gesvd's attributes)", () => {
  const k: Kind = "d";
  const a = literal(k, [3, 3], positiveDefinite(k, 3));
  const calls: [string, string, Literal[]][] = [
    ["solver_potrf_ffi", "{lower = true}", [zeros("f64", [3, 3]), zeros("s32", [])]],
    ["solver_getrf_ffi", "{}", [zeros("f64", [3, 3]), zeros("s32", [3]), zeros("s32", [])]],
    ["solver_geqrf_ffi", "{}", [zeros("f64", [3, 3]), zeros("f64", [3])]],
    ["solver_syevd_ffi", "{algorithm = 1 : ui8, lower = true}", [zeros("f64", [3, 3]), zeros("f64", [3]), zeros("s32", [])]],
    ["solver_gesvd_ffi", "{compute_uv = true, full_matrices = true, transposed = false}", [zeros("f64", [3, 3]), zeros("f64", [3]), zeros("f64", [3, 3]), zeros("f64", [3, 3]), zeros("s32", [])]],
    ["solver_gesvdj_ffi", "{compute_uv = true, full_matrices = true}", [zeros("f64", [3, 3]), zeros("f64", [3]), zeros("f64", [3, 3]), zeros("f64", [3, 3]), zeros("s32", [])]],
    ["solver_sytrd_ffi", "{lower = false}", [zeros("f64", [3, 3]), zeros("f64", [3]), zeros("f64", [2]), zeros("f64", [2]), zeros("s32", [])]],
  ];
  for (const [name, attributes, results] of calls) {
    const cu = runCall(`cu${name}`, attributes, [a], results), hip = runCall(`hip${name}`, attributes, [a], results);
    assert.deepEqual(hip.map((l) => l.toNumbers()), cu.map((l) => l.toNumbers()), name);
  }
  const svd = runCall("hipsolver_gesvd_ffi", "{compute_uv = true, full_matrices = true, transposed = false}", [a], calls[4]![2]);
  const gesdd = runCall("hipsolver_gesdd_ffi", "{compute_uv = true, full_matrices = true, transposed = false}", [a], calls[4]![2]);
  assert.deepEqual(gesdd.map((l) => l.toNumbers()), svd.map((l) => l.toNumbers()));
  const [q] = runCall("hipsolver_orgqr_ffi", "{}", runCall("hipsolver_geqrf_ffi", "{}", [a], calls[2]![2]), [zeros("f64", [3, 3])]);
  assertOrthonormalColumns(toCMat(q!), tol(k, 3), "hipsolver_orgqr_ffi");
});

test("GPU targets: typed errors name the target, the argument and the rule", () => {
  const a = Literal.from("f32", [[4, 2], [2, 3]]);
  assert.throws(() => runCall("cusolver_potrf_ffi", "{}", [a], [a, zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /cusolver_potrf_ffi: attribute lower is missing/.test(e.message));
  assert.throws(() => runCall("cusolver_potrf_ffi", "{lower = true}", [Literal.from("s32", [[1, 0], [0, 1]])], [zeros("s32", [2, 2]), zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /cusolver_potrf_ffi: operand 0 must be f32, f64, c64 or c128, got s32\[2,2\]/.test(e.message));
  assert.throws(() => runCall("cusolver_potrf_ffi", "{lower = true}", [a], [zeros("f64", [2, 2]), zeros("s32", [])]),
    (e: unknown) => e instanceof ShapeError && /cusolver_potrf_ffi: result 0 must be f32\[2,2\], got f64\[2,2\]/.test(e.message));
  assert.throws(() => runCall("cusparse_gtsv2_ffi", "{}", [Literal.from("f32", [0, 1]), Literal.from("f32", [1, 1]), Literal.from("f32", [1, 0]), Literal.from("f32", [[1], [2]])],
    [zeros("f32", [2, 1]), zeros("s32", [])]),
  (e: unknown) => e instanceof ShapeError && /cusparse_gtsv2_ffi: results expects 1 result\(s\), got 2/.test(e.message));
});

test("ProductOfElementaryHouseholderReflectors: IREE's expected Q for two reflectors in a 4×3 matrix; Qr then the product gives A = Q R", () => {
  const m = Literal.from("f32", [[0.19151945, 0.62210877, 0.43772774], [0.78535858, 0.77997581, 0.27259261], [0.27646426, 0.80187218, 0.95813935], [0.87593263, 0.35781727, 0.50099513]]);
  const taus = Literal.from("f32", [0.68346294, 0.71270203]);
  const text = `func.func @main(%m: tensor<4x3xf32>, %t: tensor<2xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%m, %t) : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}`;
  const q = evaluate(parseStableHlo(text).entry, [m, taus]);
  const want = [[0.31653708, 0.10644531, 0.32681817], [-0.53676350, 0.37089570, -0.31482652], [-0.18895307, -0.54206765, 0.63208690], [-0.59866750, -0.16177818, 0.08177957]];
  assertNear(toCMat(q), toCMat(Literal.from("f64", want)), 1e-6, "IREE's householder_test");

  const a = Literal.from("f64", [[[1, 2], [3, 4], [5, 6]], [[0, 1], [1, 0], [1, 1]]]);
  const qr = `func.func @main(%a: tensor<2x3x2xf64>) -> (tensor<2x3x2xf64>, tensor<2x3x2xf64>) {
  %0:2 = stablehlo.custom_call @Qr(%a) {api_version = 1 : i32} : (tensor<2x3x2xf64>) -> (tensor<2x3x2xf64>, tensor<2x2xf64>)
  %1 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%0#0, %0#1) {api_version = 1 : i32} : (tensor<2x3x2xf64>, tensor<2x2xf64>) -> tensor<2x3x2xf64>
  return %0#0, %1 : tensor<2x3x2xf64>, tensor<2x3x2xf64>
}`;
  const out = evaluate(parseStableHlo(qr).entry, [a]);
  const [r, qs] = out.elements;
  for (let b = 0; b < 2; b++) {
    const qm = toCMat(qs!, b);
    assertOrthonormalColumns(qm, 1e-14, `Qr batch ${b}`);
    assertNear(matmul(qm, upper(toCMat(r!, b), 2)), toCMat(a, b), 1e-14, `Qr batch ${b}: Q R = A`);
  }
  const wide = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  const bad = `func.func @main(%m: tensor<2x3xf32>, %t: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%m, %t) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`;
  assert.throws(() => evaluate(parseStableHlo(bad).entry, [wide, Literal.from("f32", [1, 1])]),
    (e: unknown) => e instanceof ShapeError && /ProductOfElementaryHouseholderReflectors: operand 1 has 2 reflectors for a 2×3 matrix; \?orgqr needs m >= n >= k/.test(e.message));
});

test("Pallas and Triton kernels (tpu_custom_call, mosaic_gpu_v2, __gpu$xla.gpu.triton) are an ExecutionError naming the call", () => {
  for (const target of ["tpu_custom_call", "mosaic_gpu_v2", "__gpu$xla.gpu.triton"]) {
    const text = `func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @"${target}"(%x) {backend_config = "kernel"} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}`;
    assert.throws(() => evaluate(parseStableHlo(text).entry, [Literal.from("f32", [0, 1, 2, 3, 4, 5, 6, 7])]),
      (e: unknown) => e instanceof ExecutionError && e.message.includes(`custom call ${target}: a `) && /no xlats backend runs/.test(e.message), target);
  }
});
