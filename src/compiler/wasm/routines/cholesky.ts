// Compiled Cholesky on f32 and f64, lower or upper, with batch dimensions, bit for bit
// the interpreter's kernel (src/interpreter/kernels/linalg.ts): column by column,
//   d = a_jj - Σ_{k<j} l_jk²,  l_jj = √d,  l_ij = (a_ij - Σ_{k<j} l_ik l_jk) / l_jj,
// the sums in order of k, in doubles; a matrix with some d not > 0 (not positive
// definite, or NaN) comes out all NaN. Only the triangle named by `lower` is read; the
// other triangle of the result is 0.
//
// A unit of work is one matrix. It is copied into scratch transposed (LT[k][i] = l_ik,
// rows of P doubles), so that rows i, i+1 of a column sit side by side in an f64x2: each
// column's entries below the diagonal are computed two rows to a vector, four vectors
// sharing each load of l_jk. A matrix whose factor has a zero or non-finite entry is
// factored again with the interpreter's complex arithmetic (linalg_common.ts).

import type { Instruction } from "../../../ir/computation.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { forRange } from "../loops.js";
import { storageBytes } from "./common.js";
import { isZeroOrNonFinite, loadAsF64, realFloatOnly, storeF64As } from "./linalg_common.js";

/** f64x2 accumulators sharing one load of l_jk. */
const GROUP = 4;
/** Largest scratch (two n x P tables of doubles) per thread: the executor reserves it once for every thread. */
const MAX_SCRATCH = 2 ** 27;

/** What a factorization pass found. */
const CLEAN = 0;
const NOT_POSITIVE_DEFINITE = 1;
const REDO_EXACTLY = 2;

export function emitCholeskyKernel(inst: Instruction<"cholesky">, target: WasmTarget): WasmKernel | Declined {
  const aInst = inst.operands[0];
  if (aInst?.shape.kind !== "array") return { declined: "cholesky: the operand is not an array" };
  const a = aInst.shape as ArrayShape;
  const t = a.elementType;
  const notReal = realFloatOnly("cholesky", t);
  if (notReal !== undefined) return notReal;
  if (!target.simd) return { declined: "cholesky: needs SIMD128" };
  const lower = inst.attrs.lower;
  const rank = a.dimensions.length;
  const n = a.dimensions[rank - 1]!;
  const batch = elementCount(a.dimensions.slice(0, -2));
  const es = storageBytes(t);
  // Rows of LT: n doubles, one more for the second lane of the last pair, even.
  const p = 2 * Math.ceil((n + 1) / 2);
  const row = p * 8;
  const table = n * row;
  if (2 * table > MAX_SCRATCH) return { declined: `cholesky: ${n}x${n} needs more scratch than the compiled routine takes (${MAX_SCRATCH} bytes)` };
  if (elementCount(a.dimensions) * es >= 2 ** 31) return { declined: "cholesky: too large for 32-bit offsets" };
  // LT[j][i] = entry (i, j) of the Hermitian matrix for i >= j, from the triangle given.
  const entryRowStride = lower ? es : n * es;
  const entryColStride = lower ? n * es : es;

  const module = new ModuleBuilder().importMemory(target);

  /** addr(LT[r][c]) = lt + r · row + c · 8 */
  const at = (f: FunctionBuilder, lt: number, r: number, c: number): void => {
    f.localGet(lt).localGet(r).i32Const(row).i32Mul().i32Add().localGet(c).i32Const(8).i32Mul().i32Add();
  };

  // load(aM, lt): LT[j][i] = entry (i, j) for i >= j.
  const load = module.addFunction(undefined, ["i32", "i32"], [], (f) => {
    const [aM, lt] = [0, 1];
    const [i, j] = [f.local("i32"), f.local("i32")];
    forRange(f, j, 0, n, 1, () => {
      forRange(f, i, { local: j }, n, 1, () => {
        at(f, lt, j, i);
        f.localGet(aM).localGet(j).i32Const(entryRowStride).i32Mul().i32Add().localGet(i).i32Const(entryColStride).i32Mul().i32Add();
        loadAsF64(f, t);
        f.f64Store();
      });
    });
  });

  // fast(lt) -> CLEAN | NOT_POSITIVE_DEFINITE | REDO_EXACTLY
  const fast = module.addFunction(undefined, ["i32"], ["i32"], (f) => {
    const lt = 0;
    const [j, k, i, left, pk, pj, colJ] = Array.from({ length: 7 }, () => f.local("i32"));
    const [d, x, tmp] = [f.local("f64"), f.local("f64"), f.local("f64")];
    const [dv, m] = [f.local("v128"), f.local("v128")];
    const acc = Array.from({ length: GROUP }, () => f.local("v128"));
    /** Rows i .. i + 2·nv - 1 of column j. */
    const group = (nv: number): void => {
      for (let v = 0; v < nv; v++) {
        at(f, lt, j, i);
        f.v128Load(16 * v, 8).localSet(acc[v]!);
      }
      f.localGet(lt).localGet(i).i32Const(8).i32Mul().i32Add().localSet(pk);
      f.localGet(lt).localGet(colJ).i32Add().localSet(pj);
      forRange(f, k, 0, { local: j }, 1, () => {
        f.localGet(pj).v128Load64Splat().localSet(m);
        for (let v = 0; v < nv; v++) {
          f.localGet(acc[v]!).localGet(m).localGet(pk).v128Load(16 * v, 8).f64x2Mul().f64x2Sub().localSet(acc[v]!);
        }
        f.localGet(pk).i32Const(row).i32Add().localSet(pk);
        f.localGet(pj).i32Const(row).i32Add().localSet(pj);
      });
      for (let v = 0; v < nv; v++) {
        at(f, lt, j, i);
        f.localGet(acc[v]!).localGet(dv).f64x2Div().v128Store(16 * v, 8);
      }
      f.localGet(i).i32Const(2 * nv).i32Add().localSet(i);
      f.localGet(left).i32Const(2 * nv).i32Sub().localSet(left);
    };
    forRange(f, j, 0, n, 1, () => {
      f.localGet(j).i32Const(8).i32Mul().localSet(colJ);
      // d = a_jj - Σ l_jk²
      at(f, lt, j, j);
      f.f64Load().localSet(d);
      f.localGet(lt).localGet(colJ).i32Add().localSet(pj);
      forRange(f, k, 0, { local: j }, 1, () => {
        f.localGet(pj).f64Load().localTee(x).localGet(x).f64Mul().localSet(x);
        f.localGet(d).localGet(x).f64Sub().localSet(d);
        f.localGet(pj).i32Const(row).i32Add().localSet(pj);
      });
      f.localGet(d).f64Const(0).f64Gt().i32Eqz().if();
      f.i32Const(NOT_POSITIVE_DEFINITE).return();
      f.end();
      at(f, lt, j, j);
      f.localGet(d).f64Sqrt().localTee(d).f64Store();
      f.localGet(d).f64x2Splat().localSet(dv);
      // Rows below the diagonal, GROUP vectors at a time, then one.
      f.localGet(j).i32Const(1).i32Add().localSet(i);
      f.i32Const(n - 1).localGet(j).i32Sub().localSet(left);
      f.block().loop();
      f.localGet(left).i32Const(2 * GROUP).i32LtS().brIf(1);
      group(GROUP);
      f.br(0).end().end();
      f.block().loop();
      f.localGet(left).i32Const(0).i32LeS().brIf(1);
      group(1);
      f.br(0).end().end();
      // Any zero or non-finite entry of column j: the matrix goes the exact way.
      forRange(f, i, { local: j }, n, 1, () => {
        at(f, lt, j, i);
        f.f64Load().localSet(x);
        isZeroOrNonFinite(f, x, tmp);
        f.if().i32Const(REDO_EXACTLY).return().end();
      });
    });
    f.i32Const(CLEAN);
  });

  // exact(lt, im) -> CLEAN | NOT_POSITIVE_DEFINITE: the interpreter's complex arithmetic,
  // imaginary parts in a second table (the operand's: +0 in the lower triangle, -0 as
  // conjugates of the upper one).
  const exact = module.addFunction(undefined, ["i32", "i32"], ["i32"], (f) => {
    const [lt, im] = [0, 1];
    const [j, k, i, below] = Array.from({ length: 4 }, () => f.local("i32"));
    const [d, re, ii, sRe, sIm, aRe, aIm, bRe, bImNeg] = Array.from({ length: 9 }, () => f.local("f64"));
    forRange(f, j, 0, n, 1, () => {
      forRange(f, i, { local: j }, n, 1, () => {
        at(f, im, j, i);
        f.f64Const(lower ? 0 : -0).f64Store();
      });
    });
    forRange(f, j, 0, n, 1, () => {
      at(f, lt, j, j);
      f.f64Load().localSet(d);
      forRange(f, k, 0, { local: j }, 1, () => {
        at(f, lt, k, j);
        f.f64Load().localSet(re);
        at(f, im, k, j);
        f.f64Load().localSet(ii);
        f.localGet(d).localGet(re).localGet(re).f64Mul().localGet(ii).localGet(ii).f64Mul().f64Add().f64Sub().localSet(d);
      });
      f.localGet(d).f64Const(0).f64Gt().i32Eqz().if();
      f.i32Const(NOT_POSITIVE_DEFINITE).return();
      f.end();
      at(f, lt, j, j);
      f.localGet(d).f64Sqrt().localTee(d).f64Store();
      at(f, im, j, j);
      f.f64Const(0).f64Store();
      f.localGet(j).i32Const(1).i32Add().localSet(below);
      forRange(f, i, { local: below }, n, 1, () => {
        at(f, lt, j, i);
        f.f64Load().localSet(sRe);
        at(f, im, j, i);
        f.f64Load().localSet(sIm);
        forRange(f, k, 0, { local: j }, 1, () => {
          // s -= l_ik · conj(l_jk)
          at(f, lt, k, i);
          f.f64Load().localSet(aRe);
          at(f, im, k, i);
          f.f64Load().localSet(aIm);
          at(f, lt, k, j);
          f.f64Load().localSet(bRe);
          at(f, im, k, j);
          f.f64Load().f64Neg().localSet(bImNeg);
          f.localGet(sRe).localGet(aRe).localGet(bRe).f64Mul().localGet(aIm).localGet(bImNeg).f64Mul().f64Sub().f64Sub().localSet(sRe);
          f.localGet(sIm).localGet(aRe).localGet(bImNeg).f64Mul().localGet(aIm).localGet(bRe).f64Mul().f64Add().f64Sub().localSet(sIm);
        });
        at(f, lt, j, i);
        f.localGet(sRe).localGet(d).f64Div().f64Store();
        at(f, im, j, i);
        f.localGet(sIm).localGet(d).f64Div().f64Store();
      });
    });
    f.i32Const(CLEAN);
  });

  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [aPtr, rPtr, scratch, begin, end] = [0, 1, 2, 3, 4];
    const [unit, aM, rM, status, i, j, im] = Array.from({ length: 7 }, () => f.local("i32"));
    f.localGet(scratch).i32Const(table).i32Add().localSet(im);
    forRange(f, unit, { local: begin }, { local: end }, 1, () => {
      f.localGet(aPtr).localGet(unit).i32Const(n * n * es).i32Mul().i32Add().localSet(aM);
      f.localGet(rPtr).localGet(unit).i32Const(n * n * es).i32Mul().i32Add().localSet(rM);
      f.localGet(aM).localGet(scratch).call(load);
      f.localGet(scratch).call(fast).localTee(status).i32Const(REDO_EXACTLY).i32Eq().if();
      f.localGet(aM).localGet(scratch).call(load);
      f.localGet(scratch).localGet(im).call(exact).localSet(status);
      f.end();
      // result[i][j]: the factor's entry in the named triangle, 0 in the other, or all NaN.
      forRange(f, i, 0, n, 1, () => {
        forRange(f, j, 0, n, 1, () => {
          f.localGet(rM).localGet(i).i32Const(n).i32Mul().localGet(j).i32Add().i32Const(es).i32Mul().i32Add();
          f.localGet(status).if("f64");
          f.f64Const(NaN);
          f.else();
          f.localGet(lower ? i : j).localGet(lower ? j : i).i32GeU().if("f64");
          // lower: l_ij = LT[j][i]; upper: (L^H)_ij = l_ji = LT[i][j]
          if (lower) at(f, scratch, j, i); else at(f, scratch, i, j);
          f.f64Load();
          f.else().f64Const(0).end();
          f.end();
          storeF64As(f, t);
        });
      });
    });
  });
  return {
    name: `cholesky ${t} ${a.dimensions.join("x")} ${lower ? "lower" : "upper"}`,
    bytes: module.finish(),
    operandCount: 1,
    resultCount: 1,
    scratchBytes: Math.max(64, 2 * table),
    parallelExtent: batch,
    costPerUnit: (n * n * n) / 3 + 3 * n * n * es,
  };
}
