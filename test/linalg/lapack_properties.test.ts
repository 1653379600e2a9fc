// The LAPACK targets on random and edge-case inputs (empty and 1×1 matrices, ranks below
// full, repeated and defective eigenvalues), checked by the identities that define each
// factorization rather than by reference values: P A = L U, A = Q R with Qᴴ Q = I,
// A = L Lᴴ, A V = V Λ, A = U Σ Vᴴ, A = Z T Zᴴ, A v = λ v, A x = b.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, type ElementType } from "../../src/index.js";
import {
  adjoint, assertNear, char, column, complexKind, identity, KINDS, literal, lowerUnit, matmul, matrixSource, REAL, runCall, stored, toCMat,
  tridiagonalMatrix, TYPE, upper, zeros, tol, type CMat, type Kind,
} from "./lapack_support.js";

const { random, hermitian } = matrixSource(9);

test("getrf: P A = L U with 1-based pivots, square and rectangular, empty included", () => {
  for (const k of KINDS) for (const [m, n] of [[0, 0], [1, 1], [3, 3], [6, 6], [2, 5], [5, 2], [0, 3]] as const) {
    const a = stored(k, random(k, m, n));
    const kk = Math.min(m, n);
    const [lu, ipiv, info] = runCall(`lapack_${k}getrf_ffi`, "{}", [literal(k, [m, n], a)], [zeros(TYPE[k], [m, n]), zeros("s32", [kk]), zeros("s32", [])]);
    assert.equal(info!.toNumbers()[0], 0);
    const perm = Array.from({ length: m }, (_, i) => i);
    ipiv!.toNumbers().forEach((p, i) => {
      assert.ok(p >= i + 1 && p <= m, `${k} pivot ${p} at ${i}`);
      [perm[i], perm[p - 1]] = [perm[p - 1]!, perm[i]!];
    });
    const f = toCMat(lu!);
    const pa: CMat = { rows: m, cols: n, re: perm.flatMap((r) => a.re.slice(r * n, (r + 1) * n)), im: perm.flatMap((r) => a.im.slice(r * n, (r + 1) * n)) };
    assertNear(matmul(lowerUnit(f, kk), upper(f, kk)), pa, tol(k, n), `${k} ${m}x${n}: P A = L U`);
  }
});

test("getrf: an exactly singular matrix reports the first zero pivot in info", () => {
  const a = Literal.from("f64", [[1, 2], [2, 4]]);
  const [, , info] = runCall("lapack_dgetrf_ffi", "{}", [a], [zeros("f64", [2, 2]), zeros("s32", [2]), zeros("s32", [])]);
  assert.deepEqual(info!.toNumbers(), [2]);
});

test("geqrf + orgqr/ungqr: A = Q R with orthonormal Q", () => {
  for (const k of KINDS) for (const [m, n] of [[1, 1], [4, 4], [7, 3], [3, 0]] as const) {
    const a = stored(k, random(k, m, n));
    const [qr, tau] = runCall(`lapack_${k}geqrf_ffi`, "{}", [literal(k, [m, n], a)], [zeros(TYPE[k], [m, n]), zeros(TYPE[k], [n])]);
    const [q] = runCall(`lapack_${k}${complexKind(k) ? "un" : "or"}gqr_ffi`, "{}", [qr!, tau!], [zeros(TYPE[k], [m, n])]);
    const qm = toCMat(q!);
    assertNear(matmul(adjoint(qm), qm), identity(n), tol(k, m), `${k} ${m}x${n}: Qᴴ Q = I`);
    assertNear(matmul(qm, upper(toCMat(qr!), n)), a, tol(k, m), `${k} ${m}x${n}: Q R = A`);
  }
});

test("potrf: A = L Lᴴ (lower) and Uᴴ U (upper); info names the first non-positive minor", () => {
  for (const k of KINDS) for (const n of [1, 2, 5, 8]) for (const uplo of ["L", "U"]) {
    const g = random(k, n, n);
    const gg = matmul(g, adjoint(g));
    const a = stored(k, { ...gg, re: gg.re.map((x, i) => x + (i % (n + 1) === 0 ? n : 0)) });
    const [f, info] = runCall(`lapack_${k}potrf_ffi`, `{uplo = ${char(uplo)}}`, [literal(k, [n, n], a)], [zeros(TYPE[k], [n, n]), zeros("s32", [])]);
    assert.equal(info!.toNumbers()[0], 0);
    const fm = toCMat(f!);
    const tri = uplo === "L" ? adjoint(upper(adjoint(fm), n)) : upper(fm, n);
    assertNear(uplo === "L" ? matmul(tri, adjoint(tri)) : matmul(adjoint(tri), tri), a, tol(k, n), `${k} ${uplo} n=${n}`);
  }
  const [, info] = runCall("lapack_dpotrf_ffi", `{uplo = ${char("L")}}`, [Literal.from("f64", [[4, 2, 0], [2, 1, 0], [0, 0, 1]])], [zeros("f64", [3, 3]), zeros("s32", [])]);
  assert.deepEqual(info!.toNumbers(), [2]);
});

test("syevd/heevd: A V = V Λ, Vᴴ V = I, eigenvalues ascending; repeated eigenvalues", () => {
  for (const k of KINDS) for (const n of [0, 1, 2, 6, 9]) {
    const cases = [hermitian(k, n), identity(n)];
    if (n >= 3) cases.push(stored(k, { rows: n, cols: n, re: Array.from({ length: n * n }, (_, p) => (p % (n + 1) === 0 ? [2, 2, -1][Math.floor(p / n) % 3]! : 0)), im: new Array<number>(n * n).fill(0) }));
    for (const a of cases) {
      const [v, w, info] = runCall(`lapack_${k}${complexKind(k) ? "he" : "sy"}evd_ffi`, `{mode = ${char("V")}, uplo = ${char("L")}}`,
        [literal(k, [n, n], a)], [zeros(TYPE[k], [n, n]), zeros(REAL[k], [n]), zeros("s32", [])]);
      assert.equal(info!.toNumbers()[0], 0);
      const vm = toCMat(v!), lambda = w!.toNumbers();
      lambda.forEach((x, i) => assert.ok(i === 0 || lambda[i - 1]! <= x, `${k} n=${n}: ascending`));
      assertNear(matmul(adjoint(vm), vm), identity(n), tol(k, n), `${k} n=${n}: Vᴴ V = I`);
      const vl: CMat = { ...vm, re: vm.re.map((x, p) => x * lambda[p % n]!), im: vm.im.map((x, p) => x * lambda[p % n]!) };
      assertNear(matmul(a, vm), vl, tol(k, n), `${k} n=${n}: A V = V Λ`);
    }
  }
});

test("gesdd/gesvd: A = U Σ Vᴴ, orthonormal factors, Σ descending and non-negative; zero and rank-deficient matrices", () => {
  for (const k of KINDS) for (const target of ["gesdd", "gesvd"]) for (const [m, n] of [[1, 1], [5, 3], [3, 5], [4, 4], [0, 2]] as const) {
    const kk = Math.min(m, n);
    const rank1 = matmul(random(k, m, 1), random(k, 1, n));
    for (const a of [stored(k, random(k, m, n)), stored(k, { rows: m, cols: n, re: new Array<number>(m * n).fill(0), im: new Array<number>(m * n).fill(0) }), stored(k, rank1)]) {
      const [, s, u, vt, info] = runCall(`lapack_${k}${target}_ffi`, `{mode = ${char("A")}}`, [literal(k, [m, n], a)],
        [zeros(TYPE[k], [m, n]), zeros(REAL[k], [kk]), zeros(TYPE[k], [m, m]), zeros(TYPE[k], [n, n]), zeros("s32", [])]);
      assert.equal(info!.toNumbers()[0], 0);
      const sigma = s!.toNumbers();
      sigma.forEach((x, i) => assert.ok(x >= 0 && (i === 0 || sigma[i - 1]! >= x), `${k} ${m}x${n}: Σ descending, non-negative`));
      const um = toCMat(u!), vm = toCMat(vt!);
      assertNear(matmul(adjoint(um), um), identity(m), tol(k, m), `${k} ${target} ${m}x${n}: Uᴴ U = I`);
      assertNear(matmul(vm, adjoint(vm)), identity(n), tol(k, n), `${k} ${target} ${m}x${n}: V Vᴴ = I`);
      const us: CMat = { rows: m, cols: n, re: [], im: [] };
      for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
        us.re.push(j < kk ? um.re[i * m + j]! * sigma[j]! : 0);
        us.im.push(j < kk ? um.im[i * m + j]! * sigma[j]! : 0);
      }
      assertNear(matmul(us, vm), a, tol(k, Math.max(m, n)), `${k} ${target} ${m}x${n}: U Σ Vᴴ = A`);
    }
  }
});

/** Eigen- and Schur identities for one matrix. */
function checkNonsymmetric(k: Kind, a: CMat, what: string): void {
  const n = a.rows, t = TYPE[k];
  const complex = complexKind(k);
  const vt: ElementType = complex ? t : k === "s" ? "c64" : "c128";
  const schur = runCall(`lapack_${k}gees_ffi`, `{mode = ${char("V")}, sort = ${char("N")}}`, [literal(k, [n, n], a)],
    complex ? [zeros(t, [n, n]), zeros(t, [n, n]), zeros(t, [n]), zeros("s32", []), zeros("s32", [])]
      : [zeros(t, [n, n]), zeros(t, [n, n]), zeros(t, [n]), zeros(t, [n]), zeros("s32", []), zeros("s32", [])]);
  assert.equal(schur[schur.length - 1]!.toNumbers()[0], 0, `${what}: gees info`);
  const tm = toCMat(schur[0]!), z = toCMat(schur[1]!);
  assertNear(matmul(adjoint(z), z), identity(n), tol(k, n) * 10, `${what}: Zᴴ Z = I`);
  assertNear(matmul(matmul(z, tm), adjoint(z)), a, tol(k, n) * 10, `${what}: Z T Zᴴ = A`);
  const eig = runCall(`lapack_${k}geev_ffi`, `{compute_left = ${char("V")}, compute_right = ${char("V")}}`, [literal(k, [n, n], a)],
    complex ? [zeros(t, [n]), zeros(vt, [n, n]), zeros(vt, [n, n]), zeros("s32", [])]
      : [zeros(t, [n]), zeros(t, [n]), zeros(vt, [n, n]), zeros(vt, [n, n]), zeros("s32", [])]);
  assert.equal(eig[eig.length - 1]!.toNumbers()[0], 0, `${what}: geev info`);
  const w = complex ? toCMat(eig[0]!) : { ...toCMat(eig[0]!), im: eig[1]!.toNumbers() };
  const vl = toCMat(eig[complex ? 1 : 2]!), vr = toCMat(eig[complex ? 2 : 3]!);
  for (let j = 0; j < n; j++) {
    const [lr, li] = [w.re[j]!, w.im[j]!];
    const x = column(vr, j), y = column(vl, j);
    const scaled = (v: CMat, cr: number, ci: number): CMat => ({ ...v, re: v.re.map((r, p) => r * cr - v.im[p]! * ci), im: v.re.map((r, p) => r * ci + v.im[p]! * cr) });
    assertNear(matmul(a, x), scaled(x, lr, li), tol(k, n) * 100, `${what}: A v = λ v (${j})`);
    assertNear(matmul(adjoint(a), y), scaled(y, lr, -li), tol(k, n) * 100, `${what}: Aᴴ u = conj(λ) u (${j})`);
  }
}

test("gees and geev: Schur form and eigenvectors of random matrices, sizes 1 to 10", () => {
  for (const k of KINDS) for (const n of [1, 2, 3, 5, 10]) checkNonsymmetric(k, stored(k, random(k, n, n)), `${k} n=${n}`);
});

test("gees and geev: a rotation (complex pair), a permutation (eigenvalues on the unit circle), a triangular matrix", () => {
  const rotation: CMat = { rows: 2, cols: 2, re: [0, -1, 1, 0], im: [0, 0, 0, 0] };
  const cycle: CMat = { rows: 4, cols: 4, re: [0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0], im: new Array<number>(16).fill(0) };
  const triangular: CMat = { rows: 3, cols: 3, re: [1, 2, 3, 0, 4, 5, 0, 0, 6], im: new Array<number>(9).fill(0) };
  for (const k of KINDS) for (const [name, a] of [["rotation", rotation], ["cycle", cycle], ["triangular", triangular]] as const) checkNonsymmetric(k, a, `${k} ${name}`);
});

test("gees: a 2×2 block with real eigenvalues far apart is triangularized to full accuracy (λ - a without cancellation)", () => {
  // P diag(3, -1.5, 0.25, 6) P⁻¹: the QR iteration ends on a 2×2 block whose b·c is tiny next to
  // ((a - d) / 2)²; the block's eigenvector from the difference λ - a lost 1e-11 of Z T Zᵀ = A.
  const a: CMat = {
    rows: 4, cols: 4, im: new Array<number>(16).fill(0),
    re: [27, 78, -21, -114, 27, -14, 25, 1, -91.5, -203, 224.5, -20, -185.25, -182.5, 128.75, 119].map((x) => x / 46),
  };
  for (const k of ["d", "z"] as const) {
    const schur = runCall(`lapack_${k}gees_ffi`, `{mode = ${char("V")}, sort = ${char("N")}}`, [literal(k, [4, 4], a)],
      k === "z" ? [zeros("c128", [4, 4]), zeros("c128", [4, 4]), zeros("c128", [4]), zeros("s32", []), zeros("s32", [])]
        : [zeros("f64", [4, 4]), zeros("f64", [4, 4]), zeros("f64", [4]), zeros("f64", [4]), zeros("s32", []), zeros("s32", [])]);
    const tm = toCMat(schur[0]!), z = toCMat(schur[1]!);
    assertNear(matmul(matmul(z, tm), adjoint(z)), a, 1e-14, `${k}: Z T Zᴴ = A`);
    checkNonsymmetric(k, a, `${k} P D P⁻¹`);
  }
});

test("gtsv: the solution satisfies A x = b", () => {
  for (const k of KINDS) for (const n of [1, 2, 7]) {
    const dl = random(k, 1, n), d = random(k, 1, n), du = random(k, 1, n), b = stored(k, random(k, n, 3));
    dl.re[0] = dl.im[0] = du.re[n - 1] = du.im[n - 1] = 0;
    const res = runCall(`lapack_${k}gtsv_ffi`, "{}", [literal(k, [n], stored(k, dl)), literal(k, [n], stored(k, d)), literal(k, [n], stored(k, du)), literal(k, [n, 3], b)],
      [zeros(TYPE[k], [n]), zeros(TYPE[k], [n]), zeros(TYPE[k], [n]), zeros(TYPE[k], [n, 3]), zeros("s32", [])]);
    assert.equal(res[4]!.toNumbers()[0], 0);
    const a = tridiagonalMatrix(stored(k, dl), stored(k, d), stored(k, du));
    assertNear(matmul(a, toCMat(res[3]!)), b, tol(k, n) * 1e3, `${k} n=${n}: A x = b`);
  }
});
