// Rows of the primitive table for cholesky and triangular_solve (primitives.ts spreads
// them in). Matrices are the last two dimensions; the others are batch dimensions.
//
// Derivatives, for real matrices: triangular_solve X = op(A)⁻¹ B has dX = op(A)⁻¹ (dB -
// op(dA) X), dA restricted to the triangle A is read from; cholesky L of A has dL = L
// Φ(L⁻¹ dA L⁻ᵀ), Φ taking the lower triangle with the diagonal halved (Murray 2016, as
// JAX's rule), where dA is the symmetric matrix of dA's lower triangle, since XLA's
// Cholesky reads only that. The VJPs are the transposes of those linear maps.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import { cholesky as choleskyOp, triangularSolve as triangularSolveOp } from "../builder/linalg.js";
import type { XlaOp } from "../builder/xla_builder.js";
import { compare, select } from "../builder/elementwise.js";
import { constantR0 } from "../builder/data_movement.js";
import { arrayShape } from "../types/shape.js";
import type { ArrayBase } from "./core.js";
import { DTYPES } from "./dtypes.js";
import * as lax from "./lax.js";
import { bindRow, matrixBatch, range, realOnly, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";

type V = ArrayBase;
type SolveParams = PrimitiveParams["triangularSolve"];

const rankOf = (x: V): number => x.ndim;
/** xᵀ over the last two dimensions. */
export const mT = (x: V): V => lax.transpose(x, [...range(rankOf(x) - 2), rankOf(x) - 1, rankOf(x) - 2]);
/** Batched matrix product over the last two dimensions (the leading ones batch). */
export const matmul = (a: V, b: V): V => {
  const nb = a.ndim - 2;
  return lax.dotGeneral(a, b, { lhsContractingDimensions: [nb + 1], rhsContractingDimensions: [nb], lhsBatchDimensions: range(nb), rhsBatchDimensions: range(nb) });
};

/** The mask of a matrix's lower (upper) triangle, the diagonal included unless `strict`. */
export function triangle(x: V, lower: boolean, strict: boolean): V {
  const r = x.ndim;
  const rows = lax.broadcastedIota("int32", x.shape, r - 2);
  const cols = lax.broadcastedIota("int32", x.shape, r - 1);
  return strict ? (lower ? lax.gt(rows, cols) : lax.lt(rows, cols)) : (lower ? lax.ge(rows, cols) : lax.le(rows, cols));
}
export const keep = (x: V, mask: V): V => lax.selectN(mask, lax.full(x.shape, 0, x.dtype), x);

const solve = (a: V, b: V, p: SolveParams): V => bindRow("triangularSolve")([a, b], p)[0]!;

/** The part of a matrix a triangular solve reads: its triangle (without the diagonal when that is taken as 1). */
const readPart = (x: V, p: SolveParams): V => keep(x, triangle(x, p.lower, p.unitDiagonal));

/** Φ: the lower triangle with the diagonal halved (self-adjoint, elementwise). */
const phi = (x: V): V => {
  const r = x.ndim;
  const diag = lax.eq(lax.broadcastedIota("int32", x.shape, r - 2), lax.broadcastedIota("int32", x.shape, r - 1));
  return keep(lax.selectN(diag, x, lax.mul(x, 0.5)), triangle(x, true, false));
};

/** The symmetric matrix whose lower triangle is x's (what cholesky reads), and its transpose (folding a gradient onto the lower triangle). */
export const symmetricFromLower = (x: V): V => lax.add(keep(x, triangle(x, true, false)), mT(keep(x, triangle(x, true, true))));
const foldOntoLower = (g: V): V => lax.add(keep(g, triangle(g, true, false)), keep(mT(g), triangle(g, true, true)));

const lowerSolve = (l: V, b: V, transposeA: boolean): V => solve(l, b, { leftSide: true, lower: true, unitDiagonal: false, transposeA });

export const LINALG_ROWS: { readonly [N in "cholesky" | "triangularSolve"]: PrimitiveRow<PrimitiveParams[N]> } = {
  cholesky: {
    // XLA leaves the upper triangle of the result unspecified: zero it, as jnp.linalg.cholesky's result is.
    lower: (b, [a]) => {
      const l = choleskyOp(a!, true);
      const { dimensions, elementType } = a!.arrayShape;
      const r = dimensions.length;
      const iota = (d: number): XlaOp => b.addInstruction("iota", [], { shape: arrayShape(DTYPES.int32, dimensions), iotaDimension: d });
      const zero = b.addInstruction("broadcastInDim", [constantR0(b, elementType, 0)], { dimensions: [...dimensions], broadcastDimensions: [] });
      return [select(compare(iota(r - 2), iota(r - 1), "GE"), l, zero)];
    },
    jvp: ([t], [a], [l]) => {
      realOnly(a!, "cholesky");
      const s = mT(lowerSolve(l!, mT(lowerSolve(l!, symmetricFromLower(t!), false)), false));
      return [matmul(l!, phi(s))];
    },
    vjp: ([ct], [a], [l]) => {
      realOnly(a!, "cholesky");
      const p = phi(matmul(mT(l!), ct!));
      const g = mT(lowerSolve(l!, mT(lowerSolve(l!, p, true)), true));
      return [foldOntoLower(g)];
    },
    batch: matrixBatch("cholesky"),
    example: { args: [{ shape: [3, 3], kind: "spd" }], params: {} },
  },
  triangularSolve: {
    lower: (_b, [a, x], p) => [triangularSolveOp(a!, x!, p.leftSide, p.lower, p.unitDiagonal, p.transposeA ? "TRANSPOSE" : "NO_TRANSPOSE")],
    jvp: ([ta, tb], [a, b], [x], p) => {
      realOnly(a!, "triangularSolve");
      const opA = (m: V): V => (p.transposeA ? mT(m) : m);
      let rhs = tb ?? lax.full(b!.shape, 0, b!.dtype);
      if (ta !== null && ta !== undefined) {
        const da = opA(readPart(ta, p));
        rhs = lax.sub(rhs, p.leftSide ? matmul(da, x!) : matmul(x!, da));
      }
      return [solve(a!, rhs, p)];
    },
    vjp: ([ct], [a], [x], p) => {
      realOnly(a!, "triangularSolve");
      const cb = solve(a!, ct!, { ...p, transposeA: !p.transposeA });
      // d(op(A)) = -(cb xᵀ) (left) or -(xᵀ cb) (right); op transposes it back onto A.
      const dOp = lax.neg(p.leftSide ? matmul(cb, mT(x!)) : matmul(mT(x!), cb));
      return [readPart(p.transposeA ? mT(dOp) : dOp, p), cb];
    },
    batch: matrixBatch("triangularSolve"),
    example: { args: [{ shape: [3, 3], range: [0.5, 2] }, { shape: [3, 2] }], params: { leftSide: true, lower: true, unitDiagonal: false, transposeA: false } },
  },
};
