// The LAPACK custom-call targets jaxlib registers for CPU (`lapack_?getrf_ffi`, ...), as
// interpreter semantics: for each routine, its operands and results (with `info`) as the
// FFI declares them, its attributes, and the numerical routine that computes it. Names
// are built from the routine and the type prefix (s, d, c, z); each entry checks shapes
// before it computes, with ShapeErrors naming the target and the argument.

import { Literal } from "../../types/literal.js";
import type { Shape } from "../../types/shape.js";
import { batchCount, FfiCall, isComplexKind, KIND_REAL, KIND_TYPE, readMatrix, ResultArray, type FfiAttribute, type LapackKind } from "./ffi.js";
import { geqrf, getrf, gtsv, orgqr, potrf, trsm, type CVec } from "./factor.js";
import { hermitianEigen, sytrd } from "./hermitian.js";
import { gehrd, geev, realSchur, complexSchur, realSchurEigenvalues } from "./nonsymmetric.js";
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
  for (let b = 0; b < batchCount(a.batch); b++) {
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
  for (let b = 0; b < batchCount(a.batch); b++) {
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
  for (let b = 0; b < batchCount(a.batch); b++) {
    const taus = readMatrix(tau.lit, b, 1, k);
    out.writeMatrix(b, orgqr(readMatrix(a.lit, b, m, n), taus.re, taus.im));
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
  const lower = call.char("uplo", "LU") === "L";
  const { lit, batch, n } = squareOperand(call);
  const out = new ResultArray(call.result(0, KIND_TYPE[call.kind], batch, [n, n]));
  const info = new ResultArray(call.result(1, "s32", batch, []));
  for (let b = 0; b < batchCount(batch); b++) {
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
  for (let b = 0; b < batchCount(a.batch); b++) {
    out.writeMatrix(b, trsm(readMatrix(a.lit, b, k, k), readMatrix(bOp.lit, b, m, n), { left, lower, trans, unitDiagonal }));
  }
  return [out.literal];
};

const gtsvTarget: Routine = (call) => {
  call.expectCounts(4, 5);
  const t = KIND_TYPE[call.kind];
  const dl = call.operand(0, t, 1), d = call.operand(1, t, 1), du = call.operand(2, t, 1), rhs = call.operand(3, t, 2);
  const n = d.dims[0]!, nrhs = rhs.dims[1]!;
  for (const [i, v] of [[0, dl], [2, du]] as const) {
    call.sameBatch(`operand ${i}`, d.batch, v.batch);
    if (v.dims[0] !== n) call.fail(`operand ${i}`, `must have ${n} elements (as the diagonal), got ${v.dims[0]}`);
  }
  call.sameBatch("operand 3", d.batch, rhs.batch);
  if (rhs.dims[0] !== n) call.fail("operand 3", `must have ${n} rows, got ${rhs.dims[0]}`);
  const outs = [0, 1, 2].map((i) => new ResultArray(call.result(i, t, d.batch, [n])));
  const x = new ResultArray(call.result(3, t, d.batch, [n, nrhs]));
  const info = new ResultArray(call.result(4, "s32", d.batch, []));
  const vec = (lit: Literal, b: number): CVec => readMatrix(lit, b, 1, n);
  for (let b = 0; b < batchCount(d.batch); b++) {
    // JAX's dl(i) = A(i, i-1) and du(i) = A(i, i+1): LAPACK's DL is dl(1:), its DU is du(:n-1).
    const dlv = vec(dl.lit, b), dv = vec(d.lit, b), duv = vec(du.lit, b), bm = readMatrix(rhs.lit, b, n, nrhs);
    const sub: CVec = { re: dlv.re.subarray(1), im: dlv.im.subarray(1) };
    info.write(b, [n === 0 ? 0 : gtsv(sub, dv, duv, bm)]);
    outs[0]!.write(b, dlv.re, dlv.im);
    outs[1]!.write(b, dv.re, dv.im);
    outs[2]!.write(b, duv.re, duv.im);
    x.writeMatrix(b, bm);
  }
  return [...outs.map((o) => o.literal), x.literal, info.literal];
};

/** ?syevd / ?heevd: (eigenvectors, eigenvalues ascending, info). */
const eighTarget: Routine = (call) => {
  call.expectCounts(1, 3);
  const lower = call.char("uplo", "LU") === "L";
  call.char("mode", "NV");
  const { lit, batch, n } = squareOperand(call);
  const vectors = new ResultArray(call.result(0, KIND_TYPE[call.kind], batch, [n, n]));
  const values = new ResultArray(call.result(1, KIND_REAL[call.kind], batch, [n]));
  const info = new ResultArray(call.result(2, "s32", batch, []));
  for (let b = 0; b < batchCount(batch); b++) {
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

/** ?gesdd / ?gesvd: (a destroyed, singular values descending, U, Vᴴ, info); mode A (full), S (reduced) or N (values only). */
const svdTarget: Routine = (call) => {
  call.expectCounts(1, 5);
  const t = KIND_TYPE[call.kind];
  const mode = call.char("mode", "ASN");
  const a = call.operand(0, t, 2);
  const [m, n] = a.dims as [number, number];
  const k = Math.min(m, n);
  const out = new ResultArray(call.result(0, t, a.batch, [m, n]));
  const s = new ResultArray(call.result(1, KIND_REAL[call.kind], a.batch, [k]));
  const uShape = call.results[2]!, vtShape = call.results[3]!;
  const [uDims, vtDims] = mode === "A" ? [[m, m], [n, n]] : mode === "S" ? [[m, k], [k, n]] : [dimsAfter(uShape, a.batch.length), dimsAfter(vtShape, a.batch.length)];
  const u = new ResultArray(call.result(2, t, a.batch, uDims));
  const vt = new ResultArray(call.result(3, t, a.batch, vtDims));
  const info = new ResultArray(call.result(4, "s32", a.batch, []));
  for (let b = 0; b < batchCount(a.batch); b++) {
    const mat = readMatrix(a.lit, b, m, n);
    out.writeMatrix(b, mat);
    if (!mat.isFinite()) {
      writeNaN(u, s, b, uDims[0]! * uDims[1]!, k);
      writeNaN(vt, s, b, vtDims[0]! * vtDims[1]!, k);
      info.write(b, [1]);
      continue;
    }
    const r = svd(mat, mode === "A");
    s.write(b, r.s);
    // Mode N computes no vectors: LAPACK leaves U and Vᴴ untouched (here: zeros).
    if (mode !== "N") {
      u.writeMatrix(b, r.u);
      vt.writeMatrix(b, mode === "A" ? r.vt : r.vt.block(k, n));
    }
    info.write(b, [r.converged ? 0 : 1]);
  }
  return [out.literal, s.literal, u.literal, vt.literal, info.literal];
};

function dimsAfter(shape: Shape, batchRank: number): number[] {
  return shape.kind === "array" ? shape.dimensions.slice(batchRank) : [];
}

/** ?sytrd / ?hetrd: (a with reflectors, d, e, tau, info). */
const sytrdTarget: Routine = (call) => {
  call.expectCounts(1, 5);
  const t = KIND_TYPE[call.kind], real = KIND_REAL[call.kind];
  const lower = call.char("uplo", "LU") === "L";
  const { lit, batch, n } = squareOperand(call);
  const out = new ResultArray(call.result(0, t, batch, [n, n]));
  const d = new ResultArray(call.result(1, real, batch, [n]));
  const e = new ResultArray(call.result(2, real, batch, [Math.max(n - 1, 0)]));
  const tau = new ResultArray(call.result(3, t, batch, [Math.max(n - 1, 0)]));
  const info = new ResultArray(call.result(4, "s32", batch, []));
  for (let b = 0; b < batchCount(batch); b++) {
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
  for (let b = 0; b < batchCount(batch); b++) {
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
  for (let b = 0; b < batchCount(batch); b++) {
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

/** ?geev: real (wr, wi, vl, vr (complex), info); complex (w, vl, vr, info). info = -4 for a non-finite input, as jaxlib. */
const geevTarget: Routine = (call) => {
  const complex = isComplexKind(call.kind);
  call.expectCounts(1, complex ? 4 : 5);
  const t = KIND_TYPE[call.kind];
  const vectorType = complex ? t : call.kind === "s" ? "c64" : "c128";
  const wantLeft = call.char("compute_left", "NV") === "V", wantRight = call.char("compute_right", "NV") === "V";
  const { lit, batch, n } = squareOperand(call);
  const w = complex ? [new ResultArray(call.result(0, t, batch, [n]))] : [0, 1].map((i) => new ResultArray(call.result(i, t, batch, [n])));
  const first = w.length;
  const vl = new ResultArray(call.result(first, vectorType, batch, [n, n]));
  const vr = new ResultArray(call.result(first + 1, vectorType, batch, [n, n]));
  const info = new ResultArray(call.result(first + 2, "s32", batch, []));
  for (let b = 0; b < batchCount(batch); b++) {
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

/** Routine name -> (its kinds, its implementation); `?` stands for the kind letter. */
const ROUTINES: readonly (readonly [string, readonly LapackKind[], Routine])[] = [
  ["?getrf", ["s", "d", "c", "z"], getrfTarget],
  ["?geqrf", ["s", "d", "c", "z"], geqrfTarget],
  ["?orgqr", ["s", "d"], orgqrTarget],
  ["?ungqr", ["c", "z"], orgqrTarget],
  ["?potrf", ["s", "d", "c", "z"], potrfTarget],
  ["?trsm", ["s", "d", "c", "z"], trsmTarget],
  ["?gtsv", ["s", "d", "c", "z"], gtsvTarget],
  ["?syevd", ["s", "d"], eighTarget],
  ["?heevd", ["c", "z"], eighTarget],
  ["?gesdd", ["s", "d", "c", "z"], svdTarget],
  ["?gesvd", ["s", "d", "c", "z"], svdTarget],
  ["?sytrd", ["s", "d"], sytrdTarget],
  ["?hetrd", ["c", "z"], sytrdTarget],
  ["?gehrd", ["s", "d", "c", "z"], gehrdTarget],
  ["?gees", ["s", "d", "c", "z"], geesTarget],
  ["?geev", ["s", "d", "c", "z"], geevTarget],
];

export interface LapackTarget {
  readonly kind: LapackKind;
  run(operands: readonly Literal[], resultShape: Shape, attributes: ReadonlyMap<string, FfiAttribute>): Literal;
}

/** Every LAPACK FFI target by its custom-call name (`lapack_sgetrf_ffi`, ...). */
export const LAPACK_TARGETS: ReadonlyMap<string, LapackTarget> = new Map(ROUTINES.flatMap(([pattern, kinds, routine]) => kinds.map((kind) => {
  const name = `lapack_${pattern.replace("?", kind)}_ffi`;
  const target: LapackTarget = {
    kind,
    run: (operands, resultShape, attributes) => {
      const results = routine(new FfiCall(name, kind, operands, resultShape, attributes));
      return resultShape.kind === "tuple" ? Literal.tuple(results) : results[0]!;
    },
  };
  return [name, target] as const;
})));
