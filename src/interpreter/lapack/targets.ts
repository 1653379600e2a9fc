// The LAPACK custom-call targets jaxlib registers for CPU (`lapack_?getrf_ffi`, ...) and
// for GPUs (`cusolver_getrf_ffi`, `hipsolver_getrf_ffi`, ...), and XLA's own `Qr` and
// `ProductOfElementaryHouseholderReflectors`, as interpreter semantics: for each routine,
// its operands and results (with `info`) as the FFI declares them, its attributes, and
// the numerical routine that computes it. CPU names are built from the routine and the
// type prefix (s, d, c, z); a GPU target serves every type. Both follow LAPACK, so they
// share the routines here; where the GPU FFI differs (bool attributes, gtsv2 without
// info, gesvd's transposed call, gesvdj's V) the routine says so. Layouts do not matter
// here: jaxlib gives the solvers column-major buffers, but the values are the logical
// matrices either way. Each entry checks shapes before it computes, with ShapeErrors
// naming the target and the argument.

import { Literal } from "../../types/literal.js";
import { elementCount, type Shape } from "../../types/shape.js";
import { FfiCall, isComplexKind, KIND_REAL, KIND_TYPE, readMatrix, ResultArray, type FfiAttribute, type FfiPlatform, type LapackKind } from "./ffi.js";
import { geqrf, getrf, gtsv, orgqr, ormqr, potrf, trsm, type CVec } from "./factor.js";
import { hermitianEigen, sytrd } from "./hermitian.js";
import { gehrd, geev, realSchur, complexSchur, realSchurEigenvalues } from "./nonsymmetric.js";
import { Mat } from "./matrix.js";
import { svd } from "./svd.js";

type Routine = (call: FfiCall) => Literal[];

const getrfTarget: Routine = (call) => {
  call.expectCounts(1, 3);
  const a = call.operand(0, KIND_TYPE[call.kind], 2);
  const [m, n] = a.dims as [number, number];
  const k = Math.min(m, n);
  const out = new ResultArray(call.result(0, KIND_TYPE[call.kind], a.batch, [m, n]));
  const ipiv = new ResultArray(call.result(1, "s32", a.batch, [k]));
  const info = new ResultArray(call.result(2, "s32", a.batch, []));
  for (let b = 0; b < elementCount(a.batch); b++) {
    const mat = readMatrix(a.lit, b, m, n);
    const r = getrf(mat);
    out.writeMatrix(b, mat);
    ipiv.write(b, r.ipiv);
    info.write(b, [r.info]);
  }
  return [out.literal, ipiv.literal, info.literal];
};

const geqrfTarget: Routine = (call) => {
  call.expectCounts(1, 2);
  const t = KIND_TYPE[call.kind];
  const a = call.operand(0, t, 2);
  const [m, n] = a.dims as [number, number];
  const out = new ResultArray(call.result(0, t, a.batch, [m, n]));
  const tau = new ResultArray(call.result(1, t, a.batch, [Math.min(m, n)]));
  for (let b = 0; b < elementCount(a.batch); b++) {
    const mat = readMatrix(a.lit, b, m, n);
    const r = geqrf(mat);
    out.writeMatrix(b, mat);
    tau.write(b, r.tauRe, r.tauIm);
  }
  return [out.literal, tau.literal];
};

const orgqrTarget: Routine = (call) => {
  call.expectCounts(2, 1);
  const t = KIND_TYPE[call.kind];
  const a = call.operand(0, t, 2);
  const tau = call.operand(1, t, 1);
  call.sameBatch("operand 1", a.batch, tau.batch);
  const [m, n] = a.dims as [number, number];
  const k = tau.dims[0]!;
  if (!(m >= n && n >= k)) call.fail("operand 1", `has ${k} reflectors for a ${m}×${n} matrix; ?orgqr needs m >= n >= k`);
  const out = new ResultArray(call.result(0, t, a.batch, [m, n]));
  for (let b = 0; b < elementCount(a.batch); b++) {
    const taus = readMatrix(tau.lit, b, 1, k);
    out.writeMatrix(b, orgqr(readMatrix(a.lit, b, m, n), taus.re, taus.im));
  }
  return [out.literal];
};

/** ?ormqr / ?unmqr and the GPU's ormqr (bool attributes on both): op(Q) C (`left`) or C op(Q), op(Q) = Qᴴ with `transpose`. */
const ormqrTarget: Routine = (call) => {
  call.expectCounts(3, 1);
  const t = KIND_TYPE[call.kind];
  const left = call.bool("left"), adjoint = call.bool("transpose");
  const a = call.operand(0, t, 2), tau = call.operand(1, t, 1), c = call.operand(2, t, 2);
  call.sameBatch("operand 1", a.batch, tau.batch);
  call.sameBatch("operand 2", a.batch, c.batch);
  const [m, n] = a.dims as [number, number], k = tau.dims[0]!, [rows, cols] = c.dims as [number, number];
  const order = left ? rows : cols;
  if (m !== order) call.fail("operand 0", `must have ${order} rows, the order of Q (C's ${left ? "rows" : "columns"}), got ${m}`);
  if (k > Math.min(m, n)) call.fail("operand 1", `has ${k} reflectors; a ${m}×${n} matrix holds at most ${Math.min(m, n)}`);
  const out = new ResultArray(call.result(0, t, a.batch, [rows, cols]));
  for (let b = 0; b < elementCount(a.batch); b++) {
    const taus = readMatrix(tau.lit, b, 1, k), cm = readMatrix(c.lit, b, rows, cols);
    ormqr(readMatrix(a.lit, b, m, n), taus.re, taus.im, cm, left, adjoint);
    out.writeMatrix(b, cm);
  }
  return [out.literal];
};

/** Operand 0 as a batch of square matrices. */
function squareOperand(call: FfiCall): { lit: Literal; batch: readonly number[]; n: number } {
  const a = call.operand(0, KIND_TYPE[call.kind], 2);
  const [m, n] = a.dims as [number, number];
  if (m !== n) call.fail("operand 0", `must be a batch of square matrices, got ${m}×${n}`);
  return { lit: a.lit, batch: a.batch, n };
}

const potrfTarget: Routine = (call) => {
  call.expectCounts(1, 2);
  const lower = call.lower();
  const { lit, batch, n } = squareOperand(call);
  const out = new ResultArray(call.result(0, KIND_TYPE[call.kind], batch, [n, n]));
  const info = new ResultArray(call.result(1, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const mat = readMatrix(lit, b, n, n);
    info.write(b, [potrf(mat, lower)]);
    out.writeMatrix(b, mat);
  }
  return [out.literal, info.literal];
};

const trsmTarget: Routine = (call) => {
  call.expectCounts(2, 1);
  const t = KIND_TYPE[call.kind];
  const left = call.char("side", "LR") === "L";
  const lower = call.char("uplo", "LU") === "L";
  const trans = call.char("trans_x", "NTC") as "N" | "T" | "C";
  const unitDiagonal = call.char("diag", "UN") === "U";
  const a = call.operand(0, t, 2), bOp = call.operand(1, t, 2);
  call.sameBatch("operand 1", a.batch, bOp.batch);
  const [m, n] = bOp.dims as [number, number];
  const k = left ? m : n;
  if (a.dims[0] !== k || a.dims[1] !== k) call.fail("operand 0", `must be ${k}×${k} (side ${left ? "L" : "R"} of a ${m}×${n} right-hand side), got ${a.dims.join("×")}`);
  const out = new ResultArray(call.result(0, t, a.batch, [m, n]));
  for (let b = 0; b < elementCount(a.batch); b++) {
    out.writeMatrix(b, trsm(readMatrix(a.lit, b, k, k), readMatrix(bOp.lit, b, m, n), { left, lower, trans, unitDiagonal }));
  }
  return [out.literal];
};

/**
 * ?gtsv: (dl, d, du, x, info), the first three as LAPACK leaves them. The GPU's gtsv2
 * returns x alone; with no info to report a singular system, its x is NaN.
 */
const gtsvTarget: Routine = (call) => {
  const gpu = call.platform === "gpu";
  call.expectCounts(4, gpu ? 1 : 5);
  const t = KIND_TYPE[call.kind];
  const dl = call.operand(0, t, 1), d = call.operand(1, t, 1), du = call.operand(2, t, 1), rhs = call.operand(3, t, 2);
  const n = d.dims[0]!, nrhs = rhs.dims[1]!;
  for (const [i, v] of [[0, dl], [2, du]] as const) {
    call.sameBatch(`operand ${i}`, d.batch, v.batch);
    if (v.dims[0] !== n) call.fail(`operand ${i}`, `must have ${n} elements (as the diagonal), got ${v.dims[0]}`);
  }
  call.sameBatch("operand 3", d.batch, rhs.batch);
  if (rhs.dims[0] !== n) call.fail("operand 3", `must have ${n} rows, got ${rhs.dims[0]}`);
  const outs = gpu ? [] : [0, 1, 2].map((i) => new ResultArray(call.result(i, t, d.batch, [n])));
  const x = new ResultArray(call.result(gpu ? 0 : 3, t, d.batch, [n, nrhs]));
  const info = gpu ? undefined : new ResultArray(call.result(4, "s32", d.batch, []));
  const vec = (lit: Literal, b: number): CVec => readMatrix(lit, b, 1, n);
  for (let b = 0; b < elementCount(d.batch); b++) {
    // JAX's dl(i) = A(i, i-1) and du(i) = A(i, i+1): LAPACK's DL is dl(1:), its DU is du(:n-1).
    const dlv = vec(dl.lit, b), dv = vec(d.lit, b), duv = vec(du.lit, b), bm = readMatrix(rhs.lit, b, n, nrhs);
    const sub: CVec = { re: dlv.re.subarray(1), im: dlv.im.subarray(1) };
    const singular = n === 0 ? 0 : gtsv(sub, dv, duv, bm);
    [dlv, dv, duv].forEach((v, i) => outs[i]?.write(b, v.re, v.im));
    if (info !== undefined) info.write(b, [singular]);
    else if (singular !== 0) {
      bm.re.fill(NaN);
      bm.im.fill(NaN);
    }
    x.writeMatrix(b, bm);
  }
  return [...outs.map((o) => o.literal), x.literal, ...(info === undefined ? [] : [info.literal])];
};

/**
 * ?syevd / ?heevd: (eigenvectors, eigenvalues ascending, info). On GPU the `algorithm`
 * attribute picks cuSOLVER's method (0 by size, 1 QR, 2 Jacobi): all give the same
 * decomposition, computed here one way.
 */
const eighTarget: Routine = (call) => {
  call.expectCounts(1, 3);
  const lower = call.lower();
  if (call.platform === "cpu") call.char("mode", "NV");
  else if (![0, 1, 2].includes(call.int("algorithm"))) call.fail("attribute algorithm", `must be 0 (default), 1 (QR) or 2 (Jacobi), got ${call.int("algorithm")}`);
  const { lit, batch, n } = squareOperand(call);
  const vectors = new ResultArray(call.result(0, KIND_TYPE[call.kind], batch, [n, n]));
  const values = new ResultArray(call.result(1, KIND_REAL[call.kind], batch, [n]));
  const info = new ResultArray(call.result(2, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const mat = readMatrix(lit, b, n, n);
    if (!mat.isFinite()) {
      writeNaN(vectors, values, b, n * n, n);
      info.write(b, [1]);
      continue;
    }
    const r = hermitianEigen(mat, lower);
    vectors.writeMatrix(b, r.vectors);
    values.write(b, r.values);
    info.write(b, [r.converged ? 0 : 1]);
  }
  return [vectors.literal, values.literal, info.literal];
};

function writeNaN(matrix: ResultArray, vector: ResultArray, b: number, size: number, count: number): void {
  matrix.write(b, new Float64Array(size).fill(NaN), new Float64Array(size).fill(NaN));
  vector.write(b, new Float64Array(count).fill(NaN));
}

/**
 * How an SVD target returns its factors, after (a, s) and before info: which result
 * slots hold U and the right vectors, whether those are V or LAPACK's Vᴴ, and whether
 * the vector results keep their shapes when no vectors are computed.
 */
export interface SvdForm {
  readonly vectors: boolean;
  readonly full: boolean;
  readonly uSlot: 2 | 3;
  readonly rightAsV: boolean;
  readonly shapedWithoutVectors: boolean;
}

/** A = U Σ Vᴴ: (a, singular values descending, U and Vᴴ or V in `form`'s slots, info). */
function svdCall(call: FfiCall, form: SvdForm): Literal[] {
  call.expectCounts(1, 5);
  const t = KIND_TYPE[call.kind];
  const a = call.operand(0, t, 2);
  const [m, n] = a.dims as [number, number];
  const k = Math.min(m, n);
  const out = new ResultArray(call.result(0, t, a.batch, [m, n]));
  const s = new ResultArray(call.result(1, KIND_REAL[call.kind], a.batch, [k]));
  const vSlot = 5 - form.uSlot;
  const uDims = [m, form.full ? m : k];
  const vDims = form.full ? [n, n] : form.rightAsV ? [n, k] : [k, n];
  const shaped = form.vectors || form.shapedWithoutVectors;
  // Vectors not computed: LAPACK and cuSOLVER leave the buffers untouched (here: zeros).
  const u = new ResultArray(shaped ? call.result(form.uSlot, t, a.batch, uDims) : call.anyResult(form.uSlot, t));
  const v = new ResultArray(shaped ? call.result(vSlot, t, a.batch, vDims) : call.anyResult(vSlot, t));
  const info = new ResultArray(call.result(4, "s32", a.batch, []));
  for (let b = 0; b < elementCount(a.batch); b++) {
    const mat = readMatrix(a.lit, b, m, n);
    out.writeMatrix(b, mat);
    if (!mat.isFinite()) {
      s.write(b, new Float64Array(k).fill(NaN));
      if (form.vectors) {
        writeNaN(u, s, b, uDims[0]! * uDims[1]!, k);
        writeNaN(v, s, b, vDims[0]! * vDims[1]!, k);
      }
      info.write(b, [1]);
      continue;
    }
    const r = svd(mat, form.full);
    s.write(b, r.s);
    if (form.vectors) {
      const vt = form.full ? r.vt : r.vt.block(k, n);
      u.writeMatrix(b, r.u);
      v.writeMatrix(b, form.rightAsV ? vt.adjoint() : vt);
    }
    info.write(b, [r.converged ? 0 : 1]);
  }
  const slots = [out.literal, s.literal, u.literal, v.literal, info.literal];
  if (form.uSlot === 3) [slots[2], slots[3]] = [slots[3]!, slots[2]!];
  return slots;
}

/** An SVD target's form, read from its attributes (checked against the m×n matrix): the one reading the registry and the WebGPU kernel share. */
export type SvdFormOf = (call: FfiCall, m: number, n: number) => SvdForm;

/** ?gesdd / ?gesvd: mode A (full), S (reduced) or N (values only). */
const lapackSvdForm: SvdFormOf = (call) => {
  const mode = call.char("mode", "ASN");
  return { vectors: mode !== "N", full: mode === "A", uSlot: 2, rightAsV: false, shapedWithoutVectors: false };
};

/**
 * The GPU's gesvd and ROCm's gesdd. `transposed`: the solver computes the SVD of Aᵀ (a
 * row-major buffer read column-major) and returns U in the Vᴴ slot and Vᴴ in the U slot:
 * as values, slot 2 holds Vᴴ and slot 3 holds U. cuSOLVER's gesvd needs m >= n, so
 * jaxlib transposes exactly the wide matrices for it (`tallOnly`); gesdd takes any shape.
 */
const gpuSvdForm = (tallOnly: boolean): SvdFormOf => (call, m, n) => {
  const transposed = call.bool("transposed");
  if (tallOnly && (transposed ? m > n : m < n)) {
    call.fail("attribute transposed", `is ${transposed} for a ${m}×${n} matrix: the solver needs ${transposed ? "m <= n" : "m >= n"} (jaxlib transposes exactly the wide matrices)`);
  }
  return { vectors: call.bool("compute_uv"), full: call.bool("full_matrices"), uSlot: transposed ? 3 : 2, rightAsV: false, shapedWithoutVectors: false };
};

/** The GPU's gesvdj / gesvdp: V itself (not Vᴴ), and U and V allocated at full size even without vectors. */
const gpuSvdjForm: SvdFormOf = (call) =>
  ({ vectors: call.bool("compute_uv"), full: call.bool("full_matrices"), uSlot: 2, rightAsV: true, shapedWithoutVectors: true });

/** The SVD target of a form. */
const svdTarget = (form: SvdFormOf): Routine => (call) => {
  const [m, n] = call.operand(0, KIND_TYPE[call.kind], 2).dims as [number, number];
  return svdCall(call, form(call, m, n));
};

/** ?sytrd / ?hetrd: (a with reflectors, d, e, tau, info). */
const sytrdTarget: Routine = (call) => {
  call.expectCounts(1, 5);
  const t = KIND_TYPE[call.kind], real = KIND_REAL[call.kind];
  const lower = call.lower();
  const { lit, batch, n } = squareOperand(call);
  const out = new ResultArray(call.result(0, t, batch, [n, n]));
  const d = new ResultArray(call.result(1, real, batch, [n]));
  const e = new ResultArray(call.result(2, real, batch, [Math.max(n - 1, 0)]));
  const tau = new ResultArray(call.result(3, t, batch, [Math.max(n - 1, 0)]));
  const info = new ResultArray(call.result(4, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const r = sytrd(readMatrix(lit, b, n, n), lower);
    out.writeMatrix(b, r.a);
    d.write(b, r.d);
    e.write(b, r.e);
    tau.write(b, r.tauRe, r.tauIm);
    info.write(b, [0]);
  }
  return [out.literal, d.literal, e.literal, tau.literal, info.literal];
};

/** ?gehrd: (a with H and reflectors, tau, info); attributes low/high are LAPACK's ilo/ihi. */
const gehrdTarget: Routine = (call) => {
  call.expectCounts(1, 3);
  const t = KIND_TYPE[call.kind];
  const { lit, batch, n } = squareOperand(call);
  const ilo = call.int("low", 1), ihi = call.int("high", n);
  if (!(1 <= ilo && ilo <= Math.max(ihi, 1) && ihi <= n) && n > 0) call.fail("attributes low/high", `must satisfy 1 <= low <= high <= ${n}, got low=${ilo}, high=${ihi}`);
  const out = new ResultArray(call.result(0, t, batch, [n, n]));
  const tau = new ResultArray(call.result(1, t, batch, [Math.max(n - 1, 0)]));
  const info = new ResultArray(call.result(2, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const mat = readMatrix(lit, b, n, n);
    const r = gehrd(mat, ilo, ihi);
    out.writeMatrix(b, mat);
    tau.write(b, r.tauRe, r.tauIm);
    info.write(b, [0]);
  }
  return [out.literal, tau.literal, info.literal];
};

/** ?gees: real (T, Z, wr, wi, sdim, info); complex (T, Z, w, sdim, info). Sorting is not offered (jaxlib rejects it too). */
const geesTarget: Routine = (call) => {
  const complex = isComplexKind(call.kind);
  call.expectCounts(1, complex ? 5 : 6);
  const t = KIND_TYPE[call.kind];
  const wantVectors = call.char("mode", "NV") === "V";
  if (call.char("sort", "NS", "N") !== "N") call.fail("attribute sort", "must be 'N': ordering the eigenvalues needs a select function the FFI does not pass");
  const { lit, batch, n } = squareOperand(call);
  const tOut = new ResultArray(call.result(0, t, batch, [n, n]));
  const zOut = new ResultArray(call.result(1, t, batch, [n, n]));
  const w = complex ? [new ResultArray(call.result(2, t, batch, [n]))] : [2, 3].map((i) => new ResultArray(call.result(i, t, batch, [n])));
  const sdim = new ResultArray(call.result(complex ? 3 : 4, "s32", batch, []));
  const info = new ResultArray(call.result(complex ? 4 : 5, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const mat = readMatrix(lit, b, n, n);
    const r = complex ? complexSchur(mat) : realSchur(mat);
    tOut.writeMatrix(b, r.t);
    if (wantVectors) zOut.writeMatrix(b, r.z);
    if (complex) w[0]!.write(b, Float64Array.from({ length: n }, (_, i) => r.t.re[i * n + i]!), Float64Array.from({ length: n }, (_, i) => r.t.im[i * n + i]!));
    else {
      const { wr, wi } = realSchurEigenvalues(r.t);
      w[0]!.write(b, wr);
      w[1]!.write(b, wi);
    }
    sdim.write(b, [0]);
    info.write(b, [r.info]);
  }
  return [tOut.literal, zOut.literal, ...w.map((x) => x.literal), sdim.literal, info.literal];
};

/**
 * ?geev: real (wr, wi, vl, vr (complex), info); complex (w, vl, vr, info). info = -4 for
 * a non-finite input, as jaxlib. jaxlib's GPU hybrid targets (LAPACK or MAGMA on the
 * host) return the same, with bool attributes `left` and `right`.
 */
const geevTarget: Routine = (call) => {
  const complex = isComplexKind(call.kind);
  call.expectCounts(1, complex ? 4 : 5);
  const t = KIND_TYPE[call.kind];
  const vectorType = complex ? t : call.kind === "s" ? "c64" : "c128";
  const wantLeft = call.platform === "cpu" ? call.char("compute_left", "NV") === "V" : call.bool("left");
  const wantRight = call.platform === "cpu" ? call.char("compute_right", "NV") === "V" : call.bool("right");
  const { lit, batch, n } = squareOperand(call);
  const w = complex ? [new ResultArray(call.result(0, t, batch, [n]))] : [0, 1].map((i) => new ResultArray(call.result(i, t, batch, [n])));
  const first = w.length;
  const vl = new ResultArray(call.result(first, vectorType, batch, [n, n]));
  const vr = new ResultArray(call.result(first + 1, vectorType, batch, [n, n]));
  const info = new ResultArray(call.result(first + 2, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const mat = readMatrix(lit, b, n, n);
    if (!mat.isFinite()) {
      info.write(b, [-4]);
      continue;
    }
    const r = geev(mat, !complex, wantLeft, wantRight);
    if (complex) w[0]!.write(b, r.wr, r.wi);
    else {
      w[0]!.write(b, r.wr);
      w[1]!.write(b, r.wi);
    }
    if (r.left !== undefined) vl.writeMatrix(b, r.left);
    if (r.right !== undefined) vr.writeMatrix(b, r.right);
    info.write(b, [r.info]);
  }
  return [...w.map((x) => x.literal), vl.literal, vr.literal, info.literal];
};

/**
 * LAPACK's real storage of a real matrix's eigenvectors, which cuSOLVER keeps: a complex
 * pair (imaginary part positive first, then its conjugate) shares columns j (real part)
 * and j+1 (imaginary part); a real eigenvalue's vector is its column.
 */
function packConjugatePairs(v: Mat, wi: Float64Array): Mat {
  const n = v.rows, packed = new Mat(n, n);
  for (let j = 0; j < n; j++) {
    const pair = wi[j] !== 0 && j + 1 < n;
    for (let r = 0; r < n; r++) {
      packed.re[r * n + j] = v.re[r * n + j]!;
      if (pair) packed.re[r * n + j + 1] = v.im[r * n + j]!;
    }
    if (pair) j++;
  }
  return packed;
}

/**
 * The GPU's geev (cuSOLVER 11.7.1 and later; jnp.linalg.eig's default on CUDA):
 * (a, w complex, vl, vr, info) with vl and vr of a's type, packed as LAPACK packs them
 * for a real a (jaxlib unpacks them after the call). A non-finite a gives info = -4, as
 * the CPU target does.
 */
const gpuGeevTarget: Routine = (call) => {
  call.expectCounts(1, 5);
  const t = KIND_TYPE[call.kind], complex = isComplexKind(call.kind);
  const wantLeft = call.bool("left"), wantRight = call.bool("right");
  const { lit, batch, n } = squareOperand(call);
  const out = new ResultArray(call.result(0, t, batch, [n, n]));
  const w = new ResultArray(call.result(1, complex ? t : call.kind === "s" ? "c64" : "c128", batch, [n]));
  const vectorResult = (i: number, wanted: boolean): ResultArray => new ResultArray(wanted ? call.result(i, t, batch, [n, n]) : call.anyResult(i, t));
  const vl = vectorResult(2, wantLeft), vr = vectorResult(3, wantRight);
  const info = new ResultArray(call.result(4, "s32", batch, []));
  for (let b = 0; b < elementCount(batch); b++) {
    const mat = readMatrix(lit, b, n, n);
    out.writeMatrix(b, mat);
    if (!mat.isFinite()) {
      info.write(b, [-4]);
      continue;
    }
    const r = geev(mat, !complex, wantLeft, wantRight);
    w.write(b, r.wr, r.wi);
    for (const [result, v] of [[vl, r.left], [vr, r.right]] as const) if (v !== undefined) result.writeMatrix(b, complex ? v : packConjugatePairs(v, r.wi));
    info.write(b, [r.info]);
  }
  return [out.literal, w.literal, vl.literal, vr.literal, info.literal];
};

/**
 * cuhybrid_eig_real / _comp (and hip): ?geev for real or for complex matrices; `magma`
 * chooses where the host computes it ("auto", "on", "off"), which changes nothing here.
 */
const hybridEigTarget = (complex: boolean): Routine => (call) => {
  if (isComplexKind(call.kind) !== complex) call.fail("operand 0", `must be ${complex ? "c64 or c128" : "f32 or f64"}, got ${KIND_TYPE[call.kind]}`);
  const magma = call.attributes.get("magma");
  if (!["auto", "on", "off"].includes(String(magma)) || typeof magma !== "string") call.fail("attribute magma", `must be "auto", "on" or "off", got ${String(magma)}`);
  return geevTarget(call);
};

/** Routine name -> (its kinds, its implementation); `?` stands for the kind letter. */
const ROUTINES: readonly (readonly [string, readonly LapackKind[], Routine])[] = [
  ["?getrf", ["s", "d", "c", "z"], getrfTarget],
  ["?geqrf", ["s", "d", "c", "z"], geqrfTarget],
  ["?orgqr", ["s", "d"], orgqrTarget],
  ["?ungqr", ["c", "z"], orgqrTarget],
  ["?ormqr", ["s", "d"], ormqrTarget],
  ["?unmqr", ["c", "z"], ormqrTarget],
  ["?potrf", ["s", "d", "c", "z"], potrfTarget],
  ["?trsm", ["s", "d", "c", "z"], trsmTarget],
  ["?gtsv", ["s", "d", "c", "z"], gtsvTarget],
  ["?syevd", ["s", "d"], eighTarget],
  ["?heevd", ["c", "z"], eighTarget],
  ["?gesdd", ["s", "d", "c", "z"], svdTarget(lapackSvdForm)],
  ["?gesvd", ["s", "d", "c", "z"], svdTarget(lapackSvdForm)],
  ["?sytrd", ["s", "d"], sytrdTarget],
  ["?hetrd", ["c", "z"], sytrdTarget],
  ["?gehrd", ["s", "d", "c", "z"], gehrdTarget],
  ["?gees", ["s", "d", "c", "z"], geesTarget],
  ["?geev", ["s", "d", "c", "z"], geevTarget],
];

/**
 * The GPU's cu_lu_pivots_to_permutation / hip_lu_pivots_to_permutation: the permutation
 * of [0, n) (n the result's last dimension) that swapping row i with row pivots[i] for
 * i = 0, 1, ... makes of the identity. Pivots are 0-based (jaxlib subtracts getrf's 1
 * first); one outside [0, n) swaps nothing, as jaxlib's kernel skips it.
 */
const luPivotsToPermutationTarget: Routine = (call) => {
  call.expectCounts(1, 1);
  const pivots = call.operand(0, "s32", 1);
  const k = pivots.dims[0]!;
  const declared = call.anyResult(0, "s32");
  const n = declared.dimensions[declared.dimensions.length - 1] ?? -1;
  if (n < k) call.fail("result 0", `must have at least as many elements as the ${k} pivots, got ${n < 0 ? "a scalar" : n}`);
  const out = call.result(0, "s32", pivots.batch, [n]);
  const swaps = pivots.lit.data as Int32Array;
  const perm = new Int32Array(elementCount(pivots.batch) * n);
  for (let b = 0; b < elementCount(pivots.batch); b++) {
    const p = perm.subarray(b * n, (b + 1) * n);
    p.forEach((_, i) => (p[i] = i));
    for (let i = 0; i < k; i++) {
      const j = swaps[b * k + i]!;
      if (j >= 0 && j < n) [p[i], p[j]] = [p[j]!, p[i]!];
    }
  }
  return [Literal.fromStorage(out, perm)];
};

export interface LapackTarget {
  run(operands: readonly Literal[], resultShape: Shape, attributes: ReadonlyMap<string, FfiAttribute>): Literal;
}

function target(name: string, kind: LapackKind | undefined, platform: FfiPlatform, routine: Routine): readonly [string, LapackTarget] {
  const run: LapackTarget["run"] = (operands, resultShape, attributes) => {
    const results = routine(new FfiCall(name, kind, operands, resultShape, attributes, platform));
    return resultShape.kind === "tuple" ? Literal.tuple(results) : results[0]!;
  };
  return [name, { run }];
}

/** jaxlib's GPU SVD targets by name after the platform prefix, with the form of their results (GPU_ROUTINES runs each as svdTarget). */
const GPU_SVD_FORMS: readonly (readonly [string, SvdFormOf, readonly ("cu" | "hip")[]])[] = [
  ["solver_gesvd_ffi", gpuSvdForm(true), ["cu", "hip"]],
  // ROCm's divide and conquer takes gesvd's attributes (jaxlib passes transposed = false).
  ["solver_gesdd_ffi", gpuSvdForm(false), ["hip"]],
  ["solver_gesvdj_ffi", gpuSvdjForm, ["cu", "hip"]],
  ["solver_gesvdp_ffi", gpuSvdjForm, ["cu"]],
];

/**
 * The SVD targets that take single-precision matrices, f32 or c64, by full name, with
 * their form and those types: jaxlib's CPU lapack_sgesdd_ffi and lapack_sgesvd_ffi
 * (f32), lapack_cgesdd_ffi and lapack_cgesvd_ffi (c64), and the GPU ones (whose names
 * carry no type: both). The WebGPU kernel's (svd_wgsl.ts) targets, with the forms the
 * registry reads.
 */
export const SINGLE_PRECISION_SVD_TARGETS: readonly (readonly [string, SvdFormOf, readonly ("f32" | "c64")[]])[] = [
  ...["gesdd", "gesvd"].flatMap((routine) => [[`lapack_s${routine}_ffi`, lapackSvdForm, ["f32"]], [`lapack_c${routine}_ffi`, lapackSvdForm, ["c64"]]] as const),
  ...GPU_SVD_FORMS.flatMap(([name, form, prefixes]) => prefixes.map((prefix) => [`${prefix}${name}`, form, ["f32", "c64"]] as const)),
];

/**
 * jaxlib's GPU targets by name after the platform prefix (`cu` for CUDA, `hip` for ROCm):
 * one per routine, every type; a few exist on one platform only.
 */
const GPU_ROUTINES: readonly (readonly [string, Routine, readonly ("cu" | "hip")[]])[] = [
  ["solver_getrf_ffi", getrfTarget, ["cu", "hip"]],
  ["solver_geqrf_ffi", geqrfTarget, ["cu", "hip"]],
  ["solver_orgqr_ffi", orgqrTarget, ["cu", "hip"]],
  ["solver_ormqr_ffi", ormqrTarget, ["cu", "hip"]],
  ["solver_potrf_ffi", potrfTarget, ["cu", "hip"]],
  ["solver_syevd_ffi", eighTarget, ["cu", "hip"]],
  ...GPU_SVD_FORMS.map(([name, form, prefixes]) => [name, svdTarget(form), prefixes] as const),
  ["solver_sytrd_ffi", sytrdTarget, ["cu", "hip"]],
  ["solver_geev_ffi", gpuGeevTarget, ["cu"]],
  ["sparse_gtsv2_ffi", gtsvTarget, ["cu", "hip"]],
  ["_lu_pivots_to_permutation", luPivotsToPermutationTarget, ["cu", "hip"]],
  ["hybrid_eig_real", hybridEigTarget(false), ["cu", "hip"]],
  ["hybrid_eig_comp", hybridEigTarget(true), ["cu", "hip"]],
];

/**
 * Every LAPACK FFI target by its custom-call name: jaxlib's CPU ones (`lapack_sgetrf_ffi`,
 * ...), its GPU ones for CUDA and ROCm (`cusolver_getrf_ffi`, `hipsolver_getrf_ffi`, ...),
 * and XLA's `Qr` (geqrf) and `ProductOfElementaryHouseholderReflectors` (orgqr), which
 * jax.lax.linalg lowers to where no solver library is registered.
 */
export const LAPACK_TARGETS: ReadonlyMap<string, LapackTarget> = new Map([
  ...ROUTINES.flatMap(([pattern, kinds, routine]) => kinds.map((kind) => target(`lapack_${pattern.replace("?", kind)}_ffi`, kind, "cpu", routine))),
  ...GPU_ROUTINES.flatMap(([name, routine, prefixes]) => prefixes.map((prefix) => target(`${prefix}${name}`, undefined, "gpu", routine))),
  target("Qr", undefined, "gpu", geqrfTarget),
  target("ProductOfElementaryHouseholderReflectors", undefined, "gpu", orgqrTarget),
]);
