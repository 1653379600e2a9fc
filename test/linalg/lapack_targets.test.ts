// Each LAPACK FFI target against jaxlib's own LAPACK on the same inputs (fixtures made by
// tools/fixtures/lapack.py): the call is written as JAX writes it (stablehlo.custom_call
// with an `mhlo.backend_config` attribute dictionary), imported and evaluated on the
// selected backend. Deterministic routines (LU, QR, Cholesky, trsm, gtsv, the
// Householder reductions) match element by element; eigen/singular vectors up to their
// phase; Schur forms and eigenvalues, whose order the QR iteration chooses, through
// identities and as multisets.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Literal, ShapeError } from "../../src/index.js";
import {
  adjoint, assertNear, assertSameUpToPhase, column, FIXTURES, identity, matmul, readFixtureNpz, runCall, tolerance, toCMat, type CMat,
} from "./lapack_support.js";
import { elementCount } from "../../src/types/shape.js";

interface Case {
  readonly name: string;
  readonly target: string;
  readonly check: "exact" | "info" | "eigh" | "svd" | "schur" | "eig";
  readonly attributes: string;
  readonly operands: number;
  readonly results: number;
}

const cases = JSON.parse(readFileSync(path.join(FIXTURES, "targets.json"), "utf8")) as Case[];
const arrays = readFixtureNpz("targets.npz");

const batches = (lit: Literal, trailing: number): number => elementCount(lit.dimensions.slice(0, lit.dimensions.length - trailing));

function checkExact(c: Case, got: readonly Literal[], want: readonly Literal[]): void {
  want.forEach((w, i) => {
    assert.equal(got[i]!.elementType, w.elementType, `${c.name} result ${i} type`);
    assert.deepEqual(got[i]!.dimensions, w.dimensions, `${c.name} result ${i} dimensions`);
    if (w.elementType === "s32") assert.deepEqual(got[i]!.toNumbers(), w.toNumbers(), `${c.name} result ${i}`);
    else for (let b = 0; b < batches(w, Math.min(2, w.dimensions.length)); b++) {
      assertNear(toCMat(got[i]!, b), toCMat(w, b), tolerance(w), `${c.name} result ${i} batch ${b}`);
    }
  });
}

const info = (lits: readonly Literal[]): number[] => lits[lits.length - 1]!.toNumbers();

function checkEigh(c: Case, a: CMat, got: readonly Literal[], want: readonly Literal[]): void {
  const tol = tolerance(want[1]!);
  assertNear(toCMat(got[1]!), toCMat(want[1]!), tol, `${c.name} eigenvalues`);
  const v = toCMat(got[0]!), vw = toCMat(want[0]!);
  for (let j = 0; j < v.cols; j++) assertSameUpToPhase(column(v, j), column(vw, j), tol * 10, `${c.name} eigenvector ${j}`);
  const lambda = toCMat(got[1]!);
  // A V = V Λ, from the full Hermitian A.
  const av = matmul(a, v);
  const vl: CMat = { ...v, re: v.re.map((x, k) => x * lambda.re[k % v.cols]!), im: v.im.map((x, k) => x * lambda.re[k % v.cols]!) };
  assertNear(av, vl, tol * 10, `${c.name} A V = V Λ`);
}

function checkSvd(c: Case, a: CMat, got: readonly Literal[], want: readonly Literal[]): void {
  const mode = c.name.slice(-1);
  const tol = tolerance(want[1]!);
  const s = toCMat(got[1]!);
  assertNear(s, toCMat(want[1]!), tol, `${c.name} singular values`);
  if (mode === "N") return;
  const u = toCMat(got[2]!), vt = toCMat(got[3]!);
  assertNear(matmul(adjoint(u), u), identity(u.cols), tol * 10, `${c.name} Uᴴ U = I`);
  assertNear(matmul(vt, adjoint(vt)), identity(vt.rows), tol * 10, `${c.name} Vᴴ V = I`);
  const k = s.rows;
  const us: CMat = { rows: u.rows, cols: k, re: [], im: [] };
  for (let i = 0; i < u.rows; i++) for (let j = 0; j < k; j++) {
    us.re.push(u.re[i * u.cols + j]! * s.re[j]!);
    us.im.push(u.im[i * u.cols + j]! * s.re[j]!);
  }
  const vtk: CMat = { rows: k, cols: vt.cols, re: vt.re.slice(0, k * vt.cols), im: vt.im.slice(0, k * vt.cols) };
  assertNear(matmul(us, vtk), a, tol * 10, `${c.name} U Σ Vᴴ = A`);
  const uw = toCMat(want[2]!);
  for (let j = 0; j < k; j++) assertSameUpToPhase(column(u, j), column(uw, j), tol * 10, `${c.name} left singular vector ${j}`);
}

/** The eigenvalues a result list holds (real: wr, wi as two arrays; complex: one), as a sorted multiset. */
function eigenvalues(lits: readonly Literal[], first: number, real: boolean): { re: number; im: number }[] {
  const w = toCMat(lits[first]!);
  const values = real ? w.re.map((re, k) => ({ re, im: toCMat(lits[first + 1]!).re[k]! })) : w.re.map((re, k) => ({ re, im: w.im[k]! }));
  return values;
}

function assertSameEigenvalues(got: { re: number; im: number }[], want: { re: number; im: number }[], tol: number, what: string): number[] {
  const used = new Set<number>();
  return got.map((g) => {
    let best = -1;
    want.forEach((w, k) => {
      if (!used.has(k) && (best < 0 || Math.hypot(w.re - g.re, w.im - g.im) < Math.hypot(want[best]!.re - g.re, want[best]!.im - g.im))) best = k;
    });
    const w = want[best]!;
    assert.ok(Math.hypot(w.re - g.re, w.im - g.im) <= tol * Math.max(1, Math.hypot(w.re, w.im)), `${what}: eigenvalue ${g.re}+${g.im}i has no match (nearest ${w.re}+${w.im}i)`);
    used.add(best);
    return best;
  });
}

function checkSchur(c: Case, a: CMat, got: readonly Literal[], want: readonly Literal[]): void {
  const real = !c.target.startsWith("lapack_c") && !c.target.startsWith("lapack_z");
  const tol = tolerance(want[0]!) * 10;
  const t = toCMat(got[0]!), z = toCMat(got[1]!);
  const n = t.rows;
  assertNear(matmul(adjoint(z), z), identity(n), tol, `${c.name} Zᴴ Z = I`);
  assertNear(matmul(matmul(z, t), adjoint(z)), a, tol, `${c.name} Z T Zᴴ = A`);
  for (let i = 1; i < n; i++) {
    for (let j = 0; j < i - 1; j++) assert.equal(Math.hypot(t.re[i * n + j]!, t.im[i * n + j]!), 0, `${c.name} T(${i},${j}) below the sub-diagonal`);
    const sub = t.re[i * n + i - 1]!;
    if (!real) assert.equal(Math.hypot(sub, t.im[i * n + i - 1]!), 0, `${c.name} complex T is triangular`);
    else if (sub !== 0) {
      // A 2×2 block: standardized (equal diagonal, off-diagonals of opposite signs), not chained.
      assert.equal(t.re[(i - 1) * n + i - 1], t.re[i * n + i], `${c.name} block at ${i - 1}: equal diagonal`);
      assert.ok(sub * t.re[(i - 1) * n + i]! < 0, `${c.name} block at ${i - 1}: complex pair`);
      if (i + 1 < n) assert.equal(t.re[(i + 1) * n + i], 0, `${c.name} blocks do not overlap`);
    }
  }
  const first = 2;
  assertSameEigenvalues(eigenvalues(got, first, real), eigenvalues(want, first, real), tol, c.name);
  assert.deepEqual(got.slice(-2).map((l) => l.toNumbers()[0]), [0, 0], `${c.name} sdim, info`);
}

function checkEig(c: Case, a: CMat, got: readonly Literal[], want: readonly Literal[]): void {
  const real = !c.target.startsWith("lapack_c") && !c.target.startsWith("lapack_z");
  const tol = tolerance(want[0]!) * 10;
  const gv = eigenvalues(got, 0, real), wv = eigenvalues(want, 0, real);
  const match = assertSameEigenvalues(gv, wv, tol, c.name);
  const first = real ? 2 : 1;
  const [vl, vr, vlw, vrw] = [got[first]!, got[first + 1]!, want[first]!, want[first + 1]!].map((l) => toCMat(l));
  gv.forEach((lambda, j) => {
    const x = column(vr!, j), y = column(vl!, j);
    // A x = λ x; yᴴ A = λ yᴴ.
    const ax = matmul(a, x);
    const lx: CMat = { ...x, re: x.re.map((r, k) => r * lambda.re - x.im[k]! * lambda.im), im: x.re.map((r, k) => r * lambda.im + x.im[k]! * lambda.re) };
    assertNear(ax, lx, tol, `${c.name} A v = λ v for eigenvalue ${j}`);
    assertSameUpToPhase(x, column(vrw!, match[j]!), tol, `${c.name} right eigenvector ${j}`);
    assertSameUpToPhase(y, column(vlw!, match[j]!), tol, `${c.name} left eigenvector ${j}`);
    // LAPACK's normalization: unit norm, largest component real.
    const norm = Math.hypot(...x.re, ...x.im);
    assert.ok(Math.abs(norm - 1) <= tol, `${c.name} right eigenvector ${j} has norm ${norm}`);
    let big = 0;
    x.re.forEach((r, k) => { if (Math.hypot(r, x.im[k]!) > Math.hypot(x.re[big]!, x.im[big]!)) big = k; });
    assert.ok(x.im[big] === 0, `${c.name} right eigenvector ${j}: largest component real, got ${x.im[big]}i`);
  });
  assert.equal(info(got)[0], 0);
}

/** The full Hermitian matrix whose lower triangle `a` holds. */
function hermitianFromLower(a: CMat): CMat {
  const n = a.rows, re = [...a.re], im = [...a.im];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
    re[i * n + j] = a.re[j * n + i]!;
    im[i * n + j] = -a.im[j * n + i]!;
  }
  return { rows: n, cols: n, re, im };
}

for (const c of cases) {
  test(`${c.name}: ${c.target} ${c.attributes} matches jaxlib's LAPACK`, () => {
    const operands = Array.from({ length: c.operands }, (_, i) => arrays.get(`${c.name}.in${i}`)!);
    const want = Array.from({ length: c.results }, (_, i) => arrays.get(`${c.name}.out${i}`)!);
    const got = runCall(c.target, c.attributes, operands, want);
    const a = toCMat(operands[0]!);
    switch (c.check) {
      case "exact": return checkExact(c, got, want);
      case "info": return assert.deepEqual(info(got), info(want), `${c.name} info`);
      case "eigh": return checkEigh(c, hermitianFromLower(a), got, want);
      case "svd": return checkSvd(c, a, got, want);
      case "schur": return checkSchur(c, a, got, want);
      case "eig": return checkEig(c, a, got, want);
    }
  });
}

test("lapack targets: typed errors name the target, the argument and the rule", () => {
  const a = Literal.from("f32", [[1, 2], [3, 4]]);
  const info = Literal.scalar("s32", 0);
  assert.throws(() => runCall("lapack_spotrf_ffi", "{uplo = 88 : ui8}", [a], [a, info]),
    (e: unknown) => e instanceof ShapeError && /lapack_spotrf_ffi: attribute uplo must be one of 'L', 'U', got 88/.test(e.message));
  assert.throws(() => runCall("lapack_spotrf_ffi", "{}", [a], [a, info]),
    (e: unknown) => e instanceof ShapeError && /attribute uplo is missing/.test(e.message));
  assert.throws(() => runCall("lapack_dpotrf_ffi", "{uplo = 76 : ui8}", [a], [a, info]),
    (e: unknown) => e instanceof ShapeError && /lapack_dpotrf_ffi: operand 0 must be f64/.test(e.message));
  const wide = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  assert.throws(() => runCall("lapack_ssyevd_ffi", "{mode = 86 : ui8, uplo = 76 : ui8}", [wide], [wide, Literal.from("f32", [0, 0]), info]),
    (e: unknown) => e instanceof ShapeError && /square matrices, got 2×3/.test(e.message));
  assert.throws(() => runCall("lapack_sgetrf_ffi", "{}", [a], [a, Literal.from("s32", [0, 0, 0]), info]),
    (e: unknown) => e instanceof ShapeError && /lapack_sgetrf_ffi: result 1 must be s32\[2\], got s32\[3\]/.test(e.message));
  assert.throws(() => runCall("lapack_sgees_ffi", "{mode = 86 : ui8, sort = 83 : ui8}", [a], [a, a, Literal.from("f32", [0, 0]), Literal.from("f32", [0, 0]), info, info]),
    (e: unknown) => e instanceof ShapeError && /sort must be 'N'/.test(e.message));
});

test("lapack targets: a non-finite input to ?geev reports info = -4, as jaxlib does", () => {
  const a = Literal.from("f64", [[1, NaN], [0, 1]]);
  const z = Literal.fromValues("c128", [2, 2], [0, 0, 0, 0].map(() => ({ re: 0, im: 0 })));
  const got = runCall("lapack_dgeev_ffi", "{compute_left = 78 : ui8, compute_right = 86 : ui8}", [a],
    [Literal.from("f64", [0, 0]), Literal.from("f64", [0, 0]), z, z, Literal.scalar("s32", 0)]);
  assert.equal(info(got)[0], -4);
});
