// Rows of the primitive table for the QR, symmetric and nonsymmetric eigen- and singular
// value decompositions (primitives.ts spreads them in). Matrices are the last two
// dimensions; the others are batch dimensions.
//
// Lowering, as JAX's on CPU, to jaxlib's LAPACK custom calls (which every xlats backend
// runs): qr is geqrf then orgqr/ungqr (the Householder product), eigh is syevd/heevd
// (eigenvalues ascending), svd is gesdd (mode 'A' full, 'S' reduced, 'N' values only),
// eig is geev (complex eigenvalues and eigenvectors whatever a's type). As JAX's lowering,
// eigh's, svd's and eig's results for a matrix whose call fails (info != 0) are NaNs.
//
// Derivatives, for real matrices, are JAX's JVP rules (qr_jvp_rule, _eigh_jvp_rule,
// _svd_jvp_rule; eig_jvp_rule for real and complex ones); reverse mode transposes them
// ("transpose" in the table). As JAX's, they assume distinct eigenvalues (singular
// values), and are not defined for qr's "complete" mode of a tall matrix or a
// full_matrices SVD of a non-square one.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import type { XlaBuilder, XlaOp } from "../builder/xla_builder.js";
import { constantR0 } from "../builder/data_movement.js";
import { compare, select } from "../builder/elementwise.js";
import { convertElementType as convertOp } from "../builder/conversion.js";
import { arrayShape, type ArrayShape } from "../types/shape.js";
import type { ArrayBase } from "./core.js";
import { DTYPES, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { keep, matmul, mT, symmetricFromLower, triangle } from "./linalg_rules.js";
import { diagonal, lapackCall, lapackPrefix } from "./lu_rules.js";
import { bindRow, dtypeOfOp, matrixBatch, range, realOnly, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";

type V = ArrayBase;

/** The real dtype of a (complex) dtype's components. */
export const realDtype = (d: DType): DType => (d === "complex64" ? "float32" : d === "complex128" ? "float64" : d);
/** The complex dtype of a float (or complex) dtype's values: complex64 for float32, complex128 for float64. */
const complexDtype = (d: DType): DType => (d === "float32" || d === "complex64" ? "complex64" : "complex128");

const iotaOp = (b: XlaBuilder, shape: ArrayShape, dimension: number): XlaOp => b.addInstruction("iota", [], { shape, iotaDimension: dimension });

/** `x` with the entries below its diagonal zeroed (and, for a non-square result, of the shape `x` has). */
function upperOp(x: XlaOp): XlaOp {
  const shape = x.arrayShape;
  const r = shape.dimensions.length;
  const int = arrayShape(DTYPES.int32, shape.dimensions);
  const zero = x.builder.addInstruction("broadcastInDim", [constantR0(x.builder, shape.elementType, 0)], { dimensions: [...shape.dimensions], broadcastDimensions: [] });
  return select(compare(iotaOp(x.builder, int, r - 2), iotaOp(x.builder, int, r - 1), "LE"), x, zero);
}

/** The first `rows` × `cols` block of each matrix. */
function block(x: XlaOp, rows: number, cols: number): XlaOp {
  const dims = x.arrayShape.dimensions;
  const batch = dims.slice(0, -2);
  return x.builder.addInstruction("slice", [x], { startIndices: dims.map(() => 0), limitIndices: [...batch, rows, cols], strides: dims.map(() => 1) });
}

/** A character attribute of jaxlib's LAPACK FFI (an 8-bit code). */
const charAttribute = (c: string): string => `${c.charCodeAt(0)} : ui8`;

/** qr by geqrf and the Householder product; empty matrices give the identity's columns and zeros, as JAX's. */
function qrOps(b: XlaBuilder, a: XlaOp, fullMatrices: boolean): [XlaOp, XlaOp] {
  const { dimensions, elementType } = a.arrayShape;
  const batch = dimensions.slice(0, -2);
  const [m, n] = dimensions.slice(-2) as [number, number];
  const k = Math.min(m, n);
  const qCols = fullMatrices ? m : k;
  if (m === 0 || n === 0) {
    const qShape = arrayShape(DTYPES.int32, [...batch, m, qCols]);
    const eye = convertOp(compare(iotaOp(b, qShape, batch.length), iotaOp(b, qShape, batch.length + 1), "EQ"), elementType);
    const zeros = b.addInstruction("broadcastInDim", [constantR0(b, elementType, 0)], { dimensions: [...batch, qCols, n], broadcastDimensions: [] });
    return [eye, zeros];
  }
  const prefix = lapackPrefix(a, "qr");
  const [packed, taus] = lapackCall(b, "geqrf", prefix, [a], [a.arrayShape, arrayShape(elementType, [...batch, k])]) as [XlaOp, XlaOp];
  const householder = (reflectors: XlaOp): XlaOp =>
    lapackCall(b, prefix === "c" || prefix === "z" ? "ungqr" : "orgqr", prefix, [reflectors, taus], [reflectors.arrayShape])[0]!;
  if (m < n) return [householder(block(packed, m, m)), upperOp(packed)];
  if (fullMatrices) {
    const pad = b.addInstruction("pad", [packed, constantR0(b, elementType, 0)], {
      edgePaddingLow: dimensions.map(() => 0), edgePaddingHigh: [...batch.map(() => 0), 0, m - n], interiorPadding: dimensions.map(() => 0),
    });
    return [householder(pad), upperOp(packed)];
  }
  return [householder(packed), upperOp(block(packed, n, n))];
}

const strictLower = (x: V): V => keep(x, triangle(x, true, true));
const eyeOf = (n: number, batch: readonly number[], dtype: DType): V =>
  lax.convertElementType(lax.eq(lax.broadcastedIota("int32", [...batch, n, n], batch.length), lax.broadcastedIota("int32", [...batch, n, n], batch.length + 1)), dtype);

/** JAX's _thin_qr_jvp (m >= n, real): C = Qᵀ dX R⁻¹, Ω = tril(C, -1) - tril(C, -1)ᵀ, dQ = Q (Ω - C) + dX R⁻¹, dR = (C - Ω) R. */
function thinQrJvp(q: V, r: V, dx: V): [V, V] {
  const dxRinv = lax.triangularSolve(r, dx, { leftSide: false, lower: false });
  const c = matmul(mT(q), dxRinv);
  const omega = lax.sub(strictLower(c), mT(strictLower(c)));
  return [lax.add(matmul(q, lax.sub(omega, c)), dxRinv), matmul(lax.sub(c, omega), r)];
}

/** A slice of the last two dimensions: rows [r0, r1), columns [c0, c1). */
const sub = (x: V, [r0, r1]: readonly [number, number], [c0, c1]: readonly [number, number]): V => {
  const batch = x.shape.slice(0, -2);
  return lax.slice(x, [...batch.map(() => 0), r0, c0], [...batch, r1, c1]);
};

/**
 * JAX's lowering of a LAPACK call that reports `info` (one per matrix, shaped as the
 * batch): each result's matrices (or vectors) whose call failed, info != 0, replaced by
 * NaNs of its type (complex NaNs for complex results).
 */
function nanWhereFailed(b: XlaBuilder, info: XlaOp, results: readonly XlaOp[]): XlaOp[] {
  const batch = info.arrayShape.dimensions;
  const ok = compare(info, b.addInstruction("broadcastInDim", [constantR0(b, DTYPES.int32, 0)], { dimensions: [...batch], broadcastDimensions: [] }), "EQ", { compareType: "SIGNED" });
  return results.map((x) => {
    const { dimensions, elementType } = x.arrayShape;
    const value = elementType === "c64" || elementType === "c128" ? { re: NaN, im: NaN } : NaN;
    const nan = b.addInstruction("broadcastInDim", [constantR0(b, elementType, value)], { dimensions: [...dimensions], broadcastDimensions: [] });
    return select(b.addInstruction("broadcastInDim", [ok], { dimensions: [...dimensions], broadcastDimensions: range(batch.length) }), x, nan);
  });
}

/**
 * geev's results with JAX's NaNs: (w, vl?, vr?), complex. jaxlib's real routine returns
 * the eigenvalues as (wr, wi) and the eigenvectors already complex (the conjugate pairs
 * unpacked); the vectors not asked for are still results of the call (not computed,
 * shaped as the others).
 */
function eigOps(b: XlaBuilder, a: XlaOp, { computeLeftEigenvectors: left, computeRightEigenvectors: right }: PrimitiveParams["eig"]): XlaOp[] {
  const { dimensions, elementType } = a.arrayShape;
  const prefix = lapackPrefix(a, "eig");
  const complex = prefix === "c" || prefix === "z";
  const batch = dimensions.slice(0, -2);
  const n = dimensions.at(-1)!;
  const values = arrayShape(elementType, [...batch, n]);
  const complexType = DTYPES[complexDtype(dtypeOfOp(a))];
  const vectors = arrayShape(complexType, dimensions);
  const results = [...(complex ? [values] : [values, values]), vectors, vectors, arrayShape(DTYPES.int32, batch)];
  const outs = lapackCall(b, "geev", prefix, [a], results,
    `{compute_left = ${charAttribute(left ? "V" : "N")}, compute_right = ${charAttribute(right ? "V" : "N")}}`);
  const [vl, vr, info] = outs.slice(-3) as [XlaOp, XlaOp, XlaOp];
  const w = complex ? outs[0]! : b.addInstruction("complex", [outs[0]!, outs[1]!], {});
  return nanWhereFailed(b, info, [w, ...(left ? [vl] : []), ...(right ? [vr] : [])]);
}

/** The batched matrix with x (shape [..., n]) along each row: x[..., None, :] broadcast to [..., n, n]. */
const alongRows = (x: V): V => lax.broadcastInDim(x, [...x.shape, x.shape.at(-1)!], [...range(x.ndim - 1), x.ndim]);
/** Σ over the rows of each matrix (the column sums), [..., n]. */
const columnSums = (x: V): V => lax.reduceSum(x, [x.ndim - 2]);

/**
 * JAX's _eig_vec_jvp: the derivatives of the eigenvalues and of the eigenvectors v (the
 * columns of `v`, eigenvalues `w`) along da. With P = v⁻¹ da v: dw = diag(P), and dv =
 * v (F ∘ P) + v diag(c), F[i, j] = 1 / (w_j - w_i) off the diagonal (0 on it). An
 * eigenvector is fixed only up to a complex factor; c keeps geev's choice of it (unit
 * 2-norm: Re(vⱼᴴ dvⱼ) = 0; the largest component real: Im(dv[kⱼ, j]) = 0), so the
 * derivative is that of the vectors LAPACK returns.
 */
function eigVectorsJvp(w: V, v: V, da: V): [V, V] {
  const n = w.shape.at(-1)!;
  const batch = w.shape.slice(0, -1);
  const eye = eyeOf(n, batch, w.dtype);
  const f = lax.sub(lax.div(1, lax.add(eye, lax.sub(alongRows(w), mT(alongRows(w))))), eye);
  const p = matmul(bindRow("solve")([v, da], { transposeA: false })[0]!, v);
  const u = matmul(v, lax.mul(f, p));
  // kⱼ, the row of column j's largest |v|, as a 0/1 mask of v's shape.
  const r = v.ndim - 2;
  const k = lax.argmax(lax.abs(v), r, "int32");
  const mask = lax.convertElementType(lax.eq(lax.broadcastedIota("int32", v.shape, r), lax.broadcastInDim(k, v.shape, [...range(r), r + 1])), v.dtype);
  const c = lax.complex(
    lax.neg(lax.real(columnSums(lax.mul(lax.conj(v), u)))),
    lax.neg(lax.div(lax.imag(columnSums(lax.mul(mask, u))), lax.real(columnSums(lax.mul(mask, v))))));
  return [diagonal(p), lax.add(u, lax.mul(v, alongRows(c)))];
}

export const DECOMPOSITION_ROWS: { readonly [N in "qr" | "eigh" | "svd" | "eig"]: PrimitiveRow<PrimitiveParams[N]> } = {
  qr: {
    lower: (b, [a], { fullMatrices }) => qrOps(b, a!, fullMatrices),
    jvp: ([dx], [x], [q, r], { fullMatrices }) => {
      realOnly(x!, "qr");
      const [m, n] = x!.shape.slice(-2) as [number, number];
      if (m < n) {
        // X = [X1 X2] = Q [R1 R2]: X1 = Q R1 is a square QR, and dR2 = dQᵀ X2 + Qᵀ dX2.
        const [dq, dr1] = thinQrJvp(q!, sub(r!, [0, m], [0, m]), sub(dx!, [0, m], [0, m]));
        const dr2 = lax.add(matmul(mT(dq), sub(x!, [0, m], [m, n])), matmul(mT(q!), sub(dx!, [0, m], [m, n])));
        return [dq, lax.concatenate([dr1, dr2], x!.ndim - 1)];
      }
      if (fullMatrices && m > n) throw new FrontendError(`qr: the derivative of mode "complete" for a tall (${m}×${n}) matrix is not supported (JAX's rule needs the extra columns' solve); use mode "reduced"`, "qr", "mode");
      return thinQrJvp(q!, r!, dx!);
    },
    vjp: "transpose",
    batch: matrixBatch("qr"),
    example: { args: [{ shape: [4, 3] }], params: { fullMatrices: false } },
  },
  eigh: {
    lower: (b, [a], { lower }) => {
      const { dimensions } = a!.arrayShape;
      const prefix = lapackPrefix(a!, "eigh");
      const batch = dimensions.slice(0, -2);
      const n = dimensions.at(-1)!;
      const [v, w, info] = lapackCall(b, prefix === "c" || prefix === "z" ? "heevd" : "syevd", prefix, [a!],
        [a!.arrayShape, arrayShape(DTYPES[realDtype(dtypeOfOp(a!))], [...batch, n]), arrayShape(DTYPES.int32, batch)],
        `{mode = ${charAttribute("V")}, uplo = ${charAttribute(lower ? "L" : "U")}}`);
      return nanWhereFailed(b, info!, [v!, w!]);
    },
    jvp: ([t], [a], [v, w], { lower }) => {
      realOnly(a!, "eigh");
      // The matrix LAPACK reads: the triangle `lower` says, mirrored.
      const da = lower ? symmetricFromLower(t!) : mT(symmetricFromLower(mT(t!)));
      const n = a!.shape.at(-1)!;
      const r = a!.ndim - 2;
      const eye = eyeOf(n, a!.shape.slice(0, -2), a!.dtype);
      // F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it.
      const square = a!.shape;
      const gaps = lax.sub(lax.broadcastInDim(w!, square, [...range(r), r + 1]), lax.broadcastInDim(w!, square, range(r + 1)));
      const f = lax.sub(lax.div(1, lax.add(eye, gaps)), eye);
      const vdv = matmul(matmul(mT(v!), da), v!);
      return [matmul(v!, lax.mul(f, vdv)), diagonal(vdv)];
    },
    vjp: "transpose",
    batch: matrixBatch("eigh"),
    example: { args: [{ shape: [3, 3], kind: "spd" }], params: { lower: true } },
  },
  svd: {
    lower: (b, [a], { fullMatrices, computeUv }) => {
      const { dimensions, elementType } = a!.arrayShape;
      const prefix = lapackPrefix(a!, "svd");
      const batch = dimensions.slice(0, -2);
      const [m, n] = dimensions.slice(-2) as [number, number];
      const k = Math.min(m, n);
      const [uCols, vRows] = fullMatrices ? [m, n] : [k, k];
      const mode = computeUv ? (fullMatrices ? "A" : "S") : "N";
      const shape = (rows: number, cols: number): ArrayShape => arrayShape(elementType, computeUv ? [...batch, rows, cols] : [...batch, 0, 0]);
      const [, s, u, vt, info] = lapackCall(b, "gesdd", prefix, [a!],
        [a!.arrayShape, arrayShape(DTYPES[realDtype(dtypeOfOp(a!))], [...batch, k]), shape(m, uCols), shape(vRows, n), arrayShape(DTYPES.int32, batch)],
        `{mode = ${charAttribute(mode)}}`);
      return nanWhereFailed(b, info!, computeUv ? [s!, u!, vt!] : [s!]);
    },
    jvp: ([da], [a], outs, { fullMatrices, computeUv }) => {
      realOnly(a!, "svd");
      const [m, n] = a!.shape.slice(-2) as [number, number];
      if (computeUv && fullMatrices && m !== n) throw new FrontendError(`svd: the derivative with full_matrices of a non-square (${m}×${n}) matrix is not supported, as in JAX; use fullMatrices: false`, "svd", "fullMatrices");
      const [s, u, vt] = computeUv ? outs as [V, V, V] : bindRow("svd")([a!], { fullMatrices: false, computeUv: true }) as [V, V, V];
      const v = mT(vt);
      const ds = matmul(matmul(mT(u), da!), v);
      const dsDiag = diagonal(ds);
      if (!computeUv) return [dsDiag];
      const k = s.shape.at(-1)!;
      const r = s.ndim - 1;
      const square = [...s.shape, k];
      const sj = lax.broadcastInDim(s, square, [...range(r), r + 1]);
      const si = lax.broadcastInDim(s, square, range(r + 1));
      const eye = eyeOf(k, s.shape.slice(0, -1), s.dtype);
      // F[i, j] = 1 / (s_j² - s_i²) off the diagonal, 0 on it.
      const f = lax.sub(lax.div(1, lax.add(lax.mul(lax.add(sj, si), lax.sub(sj, si)), eye)), eye);
      const dss = lax.mul(sj, ds);
      const sds = lax.mul(si, ds);
      // (Real matrices: the skew part of dS's diagonal, JAX's dUdV_diag, is zero.)
      let du = matmul(u, lax.mul(f, lax.add(dss, mT(dss))));
      let dv = matmul(v, lax.mul(f, lax.add(sds, mT(sds))));
      const rows = (x: V): V => lax.div(x, lax.broadcastInDim(s, x.shape, [...range(r), r + 1]));
      if (m > n) {
        const dav = matmul(da!, v);
        du = lax.add(du, rows(lax.sub(dav, matmul(u, matmul(mT(u), dav)))));
      }
      if (n > m) {
        const dau = matmul(mT(da!), u);
        dv = lax.add(dv, rows(lax.sub(dau, matmul(v, matmul(vt, dau)))));
      }
      return [dsDiag, du, mT(dv)];
    },
    vjp: "transpose",
    batch: matrixBatch("svd"),
    example: { args: [{ shape: [4, 3] }], params: { fullMatrices: false, computeUv: true } },
  },
  eig: {
    lower: (b, [a], p) => eigOps(b, a!, p),
    jvp: ([t], [a], primalsOut, p) => {
      const left = p.computeLeftEigenvectors, right = p.computeRightEigenvectors;
      if ((left || right) && !p.enableEigvecDerivs) {
        throw new FrontendError("eig: the derivatives of nonsymmetric eigenvectors hold only where the eigenvalues are distinct and no eigenvector has two components " +
          "tied for the largest magnitude, which cannot be checked when tracing; pass enableEigvecDerivs: true to lax.eig to opt in (as JAX's enable_eigvec_derivs)", "eig", "enableEigvecDerivs");
      }
      // As JAX's rule, the right eigenvectors whatever was asked (the eigenvalues'
      // derivative needs them): the primal results' when they hold them, else a call for them.
      const outs = right ? primalsOut : bindRow("eig")([a!], { ...p, computeRightEigenvectors: true });
      const [w, vr] = [outs[0]!, outs.at(-1)!];
      const da = lax.convertElementType(t!, vr.dtype);
      if (!left && !right) {
        // diag(v⁻¹ da v) as Σₖ (v⁻¹ da)[i, k] v[k, i].
        return [lax.reduceSum(lax.mul(bindRow("solve")([vr, da], { transposeA: false })[0]!, mT(vr)), [vr.ndim - 1])];
      }
      const [dw, dvr] = eigVectorsJvp(w, vr, da);
      // The left eigenvectors are the right ones of aᴴ, for the eigenvalues conj(w).
      const dvl = left ? [eigVectorsJvp(lax.conj(w), outs[1]!, lax.conj(mT(da)))[1]] : [];
      return [dw, ...dvl, ...(right ? [dvr] : [])];
    },
    vjp: "transpose",
    batch: matrixBatch("eig"),
    example: { args: [{ shape: [3, 3] }], params: { computeLeftEigenvectors: true, computeRightEigenvectors: true, enableEigvecDerivs: true } },
    moreExamples: [
      { args: [{ shape: [3, 3] }], params: { computeLeftEigenvectors: false, computeRightEigenvectors: false, enableEigvecDerivs: false } },
      { args: [{ shape: [3, 3], kind: "complex" }], params: { computeLeftEigenvectors: true, computeRightEigenvectors: true, enableEigvecDerivs: true } },
    ],
  },
};
