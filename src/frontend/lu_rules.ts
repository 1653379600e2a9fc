// Rows of the primitive table for the LU factorization and what jnp.linalg builds on it
// (primitives.ts spreads them in). Matrices are the last two dimensions; the others are
// batch dimensions.
//
// Lowering, as JAX's on CPU: jaxlib's LAPACK getrf custom call (`lapack_{s,d,c,z}getrf_ffi`,
// which every xlats backend runs), its 1-based pivots made 0-based, and the row
// permutation they encode computed by a while loop over the pivots (JAX's
// lu_pivots_to_permutation). With P A = L U (L unit lower, U upper, packed in one matrix):
//   lu     (lu, pivots, permutation); P's row i is A's row permutation[i]
//   solve  op(A) x = b by the two triangular solves (op(A) = Aᵀ with transposeA)
//   det    the product of U's diagonal, negated for an odd permutation
//
// Derivatives, for real matrices, as JAX's:
//   lu     dL = L tril(X, -1), dU = triu(X) U with X = L⁻¹ P dA U⁻¹ (de Hoog, Anderssen
//          and Lukas); the VJP is that linear map's transpose.
//   solve  dx = op(A)⁻¹ (db - op(dA) x); its transpose is the adjoint solve
//          cb = op(A)⁻ᵀ ct, cA = -op(cb xᵀ) (jax.lax.custom_linear_solve's rule).
//   det    d det = tr(adj(A) dA), adj(A) b from the LU factors in a way that stays
//          finite for singular A (jnp.linalg's _cofactor_solve): the gradient at a
//          rank n-1 matrix is its adjugate, not NaN.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import type { XlaBuilder, XlaOp } from "../builder/xla_builder.js";
import { getTupleElement, tuple, whileLoop } from "../builder/control.js";
import { compare, select } from "../builder/elementwise.js";
import { constantR0, dynamicSlice } from "../builder/data_movement.js";
import { convertElementType as convertOp } from "../builder/conversion.js";
import { dotGeneral as dotOp, triangularSolve as triangularSolveOp } from "../builder/linalg.js";
import { parameter } from "../builder/xla_builder.js";
import { arrayShape, scalarShape, tupleShape, type ArrayShape } from "../types/shape.js";
import { maxOf } from "../types/arrays.js";
import type { ArrayBase } from "./core.js";
import { DTYPES, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { bindRow, dtypeOfOp, matrixBatch, range, realOnly, scalarReducer, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";
import { keep, matmul, mT, triangle } from "./linalg_rules.js";

type V = ArrayBase;

/** The LAPACK type prefix of each dtype jaxlib's CPU targets take. */
const LAPACK_PREFIX: Partial<Record<DType, string>> = { float32: "s", float64: "d", complex64: "c", complex128: "z" };

/** The LAPACK type prefix of `x`'s dtype (a FrontendError for the types LAPACK has no routine for, as JAX's lowering refuses them). */
export function lapackPrefix(x: XlaOp, what: string): string {
  const dtype = dtypeOfOp(x);
  const prefix = LAPACK_PREFIX[dtype];
  if (prefix === undefined) throw new FrontendError(`${what}: needs float32, float64, complex64 or complex128 matrices (LAPACK's types), got ${dtype}`, what, "a");
  return prefix;
}

/**
 * The layouts JAX's lowering gives a LAPACK call's operands and results (jax's
 * `_linalg_ffi_lowering`): the values of the operands' highest rank are batches of
 * column-major matrices (minor-to-major [r-2, r-1, r-3, ..., 0]), the others (pivots, taus,
 * eigenvalues, info) keep the default row-major layout. XLA hands the call buffers in
 * these layouts, as LAPACK's Fortran routines read them; xlats' targets take logical
 * values, so the attributes change nothing here and make the text right for JAX.
 */
export function lapackLayouts(operands: readonly ArrayShape[], results: readonly ArrayShape[]): Record<"operand_layouts" | "result_layouts", string> {
  const matrixRank = maxOf(operands.map((s) => s.dimensions.length));
  const layout = (s: ArrayShape): string => {
    const r = s.dimensions.length;
    const minorToMajor = r === matrixRank && r >= 2 ? [r - 2, r - 1, ...range(r - 2).reverse()] : range(r).reverse();
    // MLIR's spelling: dense<> when empty, a splat for one element.
    const values = r === 0 ? "" : r === 1 ? `${minorToMajor[0]}` : `[${minorToMajor.join(", ")}]`;
    return `dense<${values}> : tensor<${r}xindex>`;
  };
  const list = (shapes: readonly ArrayShape[]): string => `[${shapes.map(layout).join(", ")}]`;
  return { operand_layouts: list(operands), result_layouts: list(results) };
}

/** jaxlib's typed-FFI LAPACK call `lapack_<prefix><routine>_ffi` with these results (one op per result), with JAX's layouts. */
export function lapackCall(b: XlaBuilder, routine: string, prefix: string, operands: readonly XlaOp[], results: readonly ArrayShape[], attributes = "{}"): XlaOp[] {
  const call = b.addInstruction("customCall", operands, {
    target: `lapack_${prefix}${routine}_ffi`, resultShape: tupleShape(results), backendConfig: attributes,
    hasSideEffect: false, calledComputations: [], typedFfi: true,
  }, { unknownAttributes: lapackLayouts(operands.map((o) => o.arrayShape), results) });
  return results.map((_, i) => getTupleElement(call, i));
}

const S32 = DTYPES.int32;

/** `x` broadcast to `dims`, its dimensions landing on `at` (size-1 ones stretch). */
const broadcast = (x: XlaOp, dims: readonly number[], at: readonly number[]): XlaOp =>
  x.builder.addInstruction("broadcastInDim", [x], { dimensions: [...dims], broadcastDimensions: [...at] });
const iotaOp = (b: XlaBuilder, shape: ArrayShape, dimension: number): XlaOp => b.addInstruction("iota", [], { shape, iotaDimension: dimension });

/**
 * The permutation that the row swaps `pivots` (0-based, [..., k]) make of 0..m-1: swap i
 * exchanges entries i and pivots[i], in order (a while loop over i, as JAX's CPU lowering).
 */
function pivotsToPermutation(b: XlaBuilder, pivots: XlaOp, m: number): XlaOp {
  const dims = pivots.arrayShape.dimensions;
  const batch = dims.slice(0, -1);
  const k = dims.at(-1)!;
  const r = batch.length;
  const permShape = arrayShape(S32, [...batch, m]);
  const start = iotaOp(b, permShape, r);
  if (k === 0 || m === 0) return start;
  const state = [scalarShape(S32), pivots.arrayShape, permShape];
  const cb = b.createSubBuilder("lu_pivots_cond");
  const condition = cb.build(compare(state.map((s, n) => parameter(cb, n, s))[0]!, constantR0(cb, S32, k), "LT"));
  const bb = b.createSubBuilder("lu_pivots_body");
  const [i, piv, perm] = state.map((s, n) => parameter(bb, n, s)) as [XlaOp, XlaOp, XlaOp];
  const starts = [...batch.map(() => constantR0(bb, S32, 0)), i];
  const column = [...batch, 1];
  const full = [...batch, m];
  const j = broadcast(dynamicSlice(piv, starts, column), full, range(r + 1));
  const atI = compare(iotaOp(bb, permShape, r), broadcast(i, full, []), "EQ");
  const atJ = compare(iotaOp(bb, permShape, r), j, "EQ");
  // perm[j] per batch element: the sum of perm where the position is j.
  const zeros = broadcast(constantR0(bb, S32, 0), full, []);
  const sum = scalarReducer(bb, "int32", (p, q) => p.builder.addInstruction("add", [p, q], {}));
  const permAtJ = bb.addInstruction("reduce", [select(atJ, perm, zeros), constantR0(bb, S32, 0)], { dimensions: [r], toApply: sum });
  const permAtI = broadcast(dynamicSlice(perm, starts, column), full, range(r + 1));
  const swapped = select(atI, broadcast(permAtJ, full, range(r)), select(atJ, permAtI, perm));
  const next = bb.addInstruction("add", [i, constantR0(bb, S32, 1)], {});
  const body = bb.build(tuple(bb, [next, piv, swapped]));
  return getTupleElement(whileLoop(condition, body, [constantR0(b, S32, 0), pivots, start]), 2);
}

/** getrf on `a` ([..., m, n]): the packed factors, the 0-based pivots and the permutation. */
function luOps(b: XlaBuilder, a: XlaOp, what: string): [XlaOp, XlaOp, XlaOp] {
  const prefix = lapackPrefix(a, what);
  const dims = a.arrayShape.dimensions;
  const batch = dims.slice(0, -2);
  const [m, n] = dims.slice(-2) as [number, number];
  const k = Math.min(m, n);
  const [lu, ipiv] = lapackCall(b, "getrf", prefix, [a], [a.arrayShape, arrayShape(S32, [...batch, k]), arrayShape(S32, batch)]);
  const pivots = b.addInstruction("subtract", [ipiv!, broadcast(constantR0(b, S32, 1), [...batch, k], [])], {});
  return [lu!, pivots, pivotsToPermutation(b, pivots, m)];
}

/** The permutation matrix P (P[i, j] = 1 where permutation[i] = j) of `perm` ([..., n]), of `x`'s element type. */
function permutationMatrixOp(perm: XlaOp, like: XlaOp): XlaOp {
  const dims = perm.arrayShape.dimensions;
  const r = dims.length - 1;
  const n = dims.at(-1)!;
  const square = [...dims, n];
  const hit = compare(broadcast(perm, square, range(r + 1)), iotaOp(perm.builder, arrayShape(S32, square), r + 1), "EQ");
  return convertOp(hit, like.arrayShape.elementType);
}

/** A batched matrix product of builder ops, contracting `lhsContracting` of the lhs with the rhs's rows. */
const matmulOp = (lhs: XlaOp, rhs: XlaOp, lhsContracting: number): XlaOp => {
  const r = lhs.arrayShape.dimensions.length - 2;
  return dotOp(lhs, rhs, { lhsContractingDimensions: [r + lhsContracting], rhsContractingDimensions: [r], lhsBatchDimensions: range(r), rhsBatchDimensions: range(r) });
};

/** op(A) x = rhs from A's LU factors (JAX's lu_solve; op(A) = Aᵀ with `transposeA`). */
function luSolveOps(lu: XlaOp, perm: XlaOp, rhs: XlaOp, transposeA: boolean): XlaOp {
  const p = permutationMatrixOp(perm, lu);
  if (!transposeA) {
    const y = triangularSolveOp(lu, matmulOp(p, rhs, 1), true, true, true, "NO_TRANSPOSE");
    return triangularSolveOp(lu, y, true, false, false, "NO_TRANSPOSE");
  }
  // Aᵀ = Uᵀ Lᵀ P: solve with Uᵀ, then Lᵀ, then undo P (Pᵀ y).
  const y = triangularSolveOp(lu, rhs, true, false, false, "TRANSPOSE");
  return matmulOp(p, triangularSolveOp(lu, y, true, true, true, "TRANSPOSE"), 0);
}

// ---- front-end helpers of the rules

const eyeLike = (x: V): V => lax.convertElementType(lax.eq(lax.broadcastedIota("int32", x.shape, x.ndim - 2), lax.broadcastedIota("int32", x.shape, x.ndim - 1)), x.dtype);

/** The diagonal of (a batch of) square matrices: the flattened matrix read with stride n + 1. */
export function diagonal(x: V): V {
  const n = x.shape.at(-1)!;
  const batch = x.shape.slice(0, -2);
  if (n === 0) return lax.reshape(x, [...batch, 0]);
  const flat = lax.reshape(x, [...batch, n * n]);
  return lax.slice(flat, [...batch.map(() => 0), 0], [...batch, n * n], [...batch.map(() => 1), n + 1]);
}

/** The sum of the diagonal. */
export const trace = (x: V): V => lax.reduceSum(diagonal(x), [x.ndim - 2]);

/** P as a matrix of `like`'s dtype, from the permutation ([..., n]). */
const permutationMatrix = (perm: V, like: V): V => {
  const square = [...perm.shape, perm.shape.at(-1)!];
  const r = perm.ndim - 1;
  return lax.convertElementType(lax.eq(lax.broadcastInDim(perm, square, range(r + 1)), lax.broadcastedIota("int32", square, r + 1)), like.dtype);
};

const unitLower = (lu: V): V => lax.add(keep(lu, triangle(lu, true, true)), eyeLike(lu));
const upper = (lu: V): V => keep(lu, triangle(lu, false, false));
const tri = (a: V, x: V, options: Parameters<typeof lax.triangularSolve>[2]): V => lax.triangularSolve(a, x, options);

/** The sign of the row permutation of pivots ([..., n]): -1 for an odd number of swaps, as `dtype`. */
export function pivotSign(pivots: V, dtype: DType): V {
  const swaps = lax.reduceSum(lax.convertElementType(lax.ne(pivots, lax.broadcastedIota("int32", pivots.shape, pivots.ndim - 1)), "int32"), [pivots.ndim - 1]);
  return lax.convertElementType(lax.sub(1, lax.mul(lax.rem(swaps, 2), 2)), dtype);
}

/**
 * [det(a), adj(a) b] for square a ([..., n, n], n >= 2) and b ([..., n, k]), finite for
 * singular a: jnp.linalg's _cofactor_solve. With P A = L U, U's last diagonal entry is
 * replaced by 1 / (the product of the others), so that adj(A) b = det · U⁻¹ L⁻¹ P b
 * computes with det applied to all rows but the last before the U solve (no division by
 * a zero pivot); a matrix of rank below n - 1 (adjugate zero) shows as a non-finite solve
 * and gives zeros.
 */
function cofactorSolve(a: V, b: V): [V, V] {
  const [lu, pivots, perm] = bindRow("lu")([a], {}) as [V, V, V];
  const n = a.shape.at(-1)!;
  const r = a.ndim - 2;
  const partial = lax.mul(lax.cumprod(diagonal(lu), r), lax.broadcastInDim(pivotSign(pivots, a.dtype), [...a.shape.slice(0, -1)], range(r)));
  const at = (x: V, i: number): V => lax.reshape(lax.slice(x, [...range(r).map(() => 0), i], [...x.shape.slice(0, -1), i + 1]), x.shape.slice(0, -1));
  const det = at(partial, n - 1);
  const corner = lax.and(lax.eq(lax.broadcastedIota("int32", lu.shape, r), n - 1), lax.eq(lax.broadcastedIota("int32", lu.shape, r + 1), n - 1));
  const fixed = lax.selectN(corner, lu, lax.broadcastInDim(lax.div(1, at(partial, n - 2)), lu.shape, range(r)));
  const probe = tri(fixed, lax.full([...lu.shape.slice(0, -1), 1], 1, lu.dtype), { leftSide: true, lower: false });
  const bad = lax.broadcastInDim(lax.reduceOr(lax.not(lax.isFinite(probe)), [r, r + 1]), b.shape, range(r));
  const zeros = lax.full(b.shape, 0, b.dtype);
  let x = lax.selectN(bad, b, zeros);
  x = tri(fixed, matmul(permutationMatrix(perm, x), x), { leftSide: true, lower: true, unitDiagonal: true });
  const lastRow = lax.eq(lax.broadcastedIota("int32", x.shape, r), n - 1);
  x = lax.selectN(lastRow, lax.mul(x, lax.broadcastInDim(det, x.shape, range(r))), x);
  x = tri(fixed, x, { leftSide: true, lower: false });
  return [det, lax.selectN(bad, x, zeros)];
}

export const LU_ROWS: { readonly [N in "lu" | "solve" | "det"]: PrimitiveRow<PrimitiveParams[N]> } = {
  lu: {
    lower: (b, [a]) => luOps(b, a!, "lu"),
    jvp: ([t], [a], [lu, pivots, perm]) => {
      realOnly(a!, "lu");
      const l = unitLower(lu!);
      const u = upper(lu!);
      const la = tri(l, matmul(permutationMatrix(perm!, t!), t!), { leftSide: true, lower: true, unitDiagonal: true });
      const x = tri(u, la, { leftSide: false, lower: false });
      const dlu = lax.add(matmul(l, keep(x, triangle(x, true, true))), matmul(upper(x), u));
      // The pivots and the permutation are integers: their tangents are dropped.
      return [dlu, pivots!, perm!];
    },
    vjp: ([ct], [a], [lu, , perm]) => {
      realOnly(a!, "lu");
      const l = unitLower(lu!);
      const u = upper(lu!);
      // The transpose of the JVP's steps, last first.
      const gx = lax.add(keep(matmul(mT(l), ct!), triangle(ct!, true, true)), upper(matmul(ct!, mT(u))));
      const gla = tri(u, gx, { leftSide: false, lower: false, transposeA: true });
      const g = tri(l, gla, { leftSide: true, lower: true, unitDiagonal: true, transposeA: true });
      return [matmul(mT(permutationMatrix(perm!, g)), g)];
    },
    batch: matrixBatch("lu"),
    example: { args: [{ shape: [3, 3] }], params: {} },
  },
  solve: {
    lower: (b, [a, rhs], p) => {
      const [lu, , perm] = luOps(b, a!, "solve");
      return [luSolveOps(lu, perm, rhs!, p.transposeA)];
    },
    // The rules hold for complex matrices as written: solve is holomorphic in a and b, and
    // under JAX's pairing (Re Σ a·b, no conjugate) its transpose is the plain transpose.
    jvp: ([ta, tb], [a, b], [x], p) => {
      let rhs = tb ?? lax.full(b!.shape, 0, b!.dtype);
      if (ta !== null && ta !== undefined) rhs = lax.sub(rhs, matmul(p.transposeA ? mT(ta) : ta, x!));
      return bindRow("solve")([a!, rhs], p);
    },
    vjp: ([ct], [a], [x], p) => {
      const [cb] = bindRow("solve")([a!, ct!], { transposeA: !p.transposeA }) as [V];
      const dOp = lax.neg(matmul(cb, mT(x!)));
      return [p.transposeA ? mT(dOp) : dOp, cb];
    },
    batch: matrixBatch("solve"),
    example: { args: [{ shape: [3, 3], kind: "spd" }, { shape: [3, 2] }], params: { transposeA: false } },
    moreExamples: [{ args: [{ shape: [3, 3], kind: "complex" }, { shape: [3, 2], kind: "complex" }], params: { transposeA: true } }],
  },
  det: {
    lower: (b, [a]) => {
      const [lu, pivots] = luOps(b, a!, "det");
      const dims = a!.arrayShape.dimensions;
      const r = dims.length - 2;
      const n = dims.at(-1)!;
      const batch = dims.slice(0, -2);
      const dtype = dtypeOfOp(a!);
      const type = DTYPES[dtype];
      const flat = lu.builder.addInstruction("reshape", [lu], { dimensions: [...batch, n * n] });
      const diag = b.addInstruction("slice", [flat], { startIndices: [...batch.map(() => 0), 0], limitIndices: [...batch, n * n], strides: [...batch.map(() => 1), n + 1] });
      const product = scalarReducer(b, dtype, (p, q) => p.builder.addInstruction("multiply", [p, q], {}));
      const det = b.addInstruction("reduce", [diag, constantR0(b, type, 1)], { dimensions: [r], toApply: product });
      const moved = convertOp(compare(pivots, iotaOp(b, arrayShape(S32, [...batch, n]), r), "NE"), S32);
      const sum = scalarReducer(b, "int32", (p, q) => p.builder.addInstruction("add", [p, q], {}));
      const swaps = b.addInstruction("reduce", [moved, constantR0(b, S32, 0)], { dimensions: [r], toApply: sum });
      const two = broadcast(constantR0(b, S32, 2), batch, []);
      const odd = compare(b.addInstruction("remainder", [swaps, two], {}), broadcast(constantR0(b, S32, 1), batch, []), "EQ");
      return [select(odd, b.addInstruction("negate", [det], {}), det)];
    },
    jvp: ([t], [a]) => {
      realOnly(a!, "det");
      return [trace(cofactorSolve(a!, t!)[1])];
    },
    vjp: ([ct], [a]) => {
      realOnly(a!, "det");
      const adjugate = cofactorSolve(a!, eyeLike(a!))[1];
      return [lax.mul(mT(adjugate), lax.broadcastInDim(ct!, a!.shape, range(a!.ndim - 2)))];
    },
    batch: matrixBatch("det"),
    example: { args: [{ shape: [4, 4] }], params: {} },
  },
};
