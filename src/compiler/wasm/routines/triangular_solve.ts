// Compiled TriangularSolve on f32 and f64, every attribute (left_side, lower,
// unit_diagonal, transpose_a incl. ADJOINT, which is TRANSPOSE on reals) and batch
// dimensions, bit for bit the interpreter's kernel (src/interpreter/kernels/linalg.ts).
//
// Every case reduces to one lower or upper system M x = b per right-hand side: M is A
// or A^T (op(A) on the left; on the right, X op(A) = B is op(A)^T X^T = B^T), and the
// right-hand sides are the columns of B (left) or its rows (right). As in the
// interpreter, row i of x is b_i minus the products M[i][k] x_k in the order the rows
// were solved, divided by M[i][i] (not at all on a unit diagonal), in doubles.
//
// A unit of work is one matrix's block of up to BLOCK right-hand sides: they are copied
// into scratch as doubles (W[i][c], row i of the system, column c), solved there two
// columns to an f64x2 with the products of four vectors sharing each load of M[i][k],
// checked (linalg_common.ts: a column with a zero or non-finite value is solved again
// as the interpreter's complex arithmetic does it), and rounded into the result.

import type { Instruction } from "../../../ir/computation.js";
import type { ArrayShape } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { Unsupported, WasmKernel, WasmTarget } from "../kernel.js";
import { forRange } from "../loops.js";
import { product, storageBytes } from "./common.js";
import { isZeroOrNonFinite, loadAsF64, loadSplatF64x2, realFloatOnly, storeF64As } from "./linalg_common.js";

/** Right-hand sides solved together in one unit (scratch columns). */
const BLOCK = 16;
/** f64x2 accumulators sharing one load of M[i][k]. */
const GROUP = 4;

export function emitTriangularSolveKernel(inst: Instruction<"triangularSolve">, target: WasmTarget): WasmKernel | Unsupported {
  const [aInst, bInst] = inst.operands;
  if (aInst?.shape.kind !== "array" || bInst?.shape.kind !== "array") return { unsupported: "triangularSolve: operands are not arrays" };
  const a = aInst.shape as ArrayShape;
  const b = bInst.shape as ArrayShape;
  const t = a.elementType;
  const notReal = realFloatOnly("triangularSolve", t);
  if (notReal !== undefined) return notReal;
  if (!target.simd) return { unsupported: "triangularSolve: needs SIMD128" };
  const { leftSide, lower, unitDiagonal, transposeA } = inst.attrs;
  const rank = a.dimensions.length;
  const n = a.dimensions[rank - 1]!;
  const batch = product(a.dimensions.slice(0, -2));
  const cols = leftSide ? b.dimensions[rank - 1]! : b.dimensions[rank - 2]!;
  const es = storageBytes(t);
  if (Math.max(product(a.dimensions), product(b.dimensions)) * es >= 2 ** 31) return { unsupported: "triangularSolve: too large for 32-bit offsets" };
  const transposed = transposeA !== "NO_TRANSPOSE";
  // M = A, or A^T; its solved triangle is A's `lower` one seen through that.
  const direct = leftSide !== transposed;
  const solveLower = direct ? lower : !lower;
  // The interpreter's imaginary part of M's entries: conjugation makes it -0.
  const mIm = transposeA === "ADJOINT" ? -0 : 0;
  /** Byte offset of M[i][k] in a matrix of A, for constant or pushed i and k. */
  const mRowStride = direct ? n * es : es;
  const mColStride = direct ? es : n * es;
  // B[row of the system i][right-hand side c]
  const bRowStride = leftSide ? cols * es : es;
  const bColStride = leftSide ? es : n * es;
  // No elements: nothing to do (blocks 0).
  const block = Math.max(2, Math.min(BLOCK, 2 * Math.ceil(cols / 2)));
  const blocks = product(b.dimensions) === 0 ? 0 : Math.ceil(cols / block);
  const wRow = block * 8;
  const wBytes = n * wRow;
  const scratchBytes = Math.max(64, wBytes + n * 8);
  // Solving order: row i at step s, k running over the rows solved before it.
  const first = solveLower ? 0 : n - 1;
  const dir = solveLower ? 1 : -1;

  const module = new ModuleBuilder().importMemory(target);

  // exact(aM, bM, w, column c (in the block), c0): column c solved again with the
  // interpreter's complex arithmetic; the imaginary parts of x in scratch after W.
  const exact = module.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [aM, bM, w, c, c0] = [0, 1, 2, 3, 4];
    const [step, i, k, pM, pW, pI, im] = Array.from({ length: 7 }, () => f.local("i32"));
    const [sRe, sIm, mRe, xRe, xIm, d] = Array.from({ length: 6 }, () => f.local("f64"));
    f.localGet(w).i32Const(wBytes).i32Add().localSet(im);
    forRange(f, step, 0, n, 1, () => {
      setRow(f, i, step);
      // s = b_i (imaginary part +0)
      f.localGet(bM).localGet(i).i32Const(bRowStride).i32Mul().i32Add();
      f.localGet(c0).localGet(c).i32Add().i32Const(bColStride).i32Mul().i32Add();
      loadAsF64(f, t);
      f.localSet(sRe);
      f.f64Const(0).localSet(sIm);
      f.localGet(aM).localGet(i).i32Const(mRowStride).i32Mul().i32Add().i32Const(first * mColStride).i32Add().localSet(pM);
      f.localGet(w).i32Const(first * wRow).i32Add().localGet(c).i32Const(8).i32Mul().i32Add().localSet(pW);
      f.localGet(im).i32Const(first * 8).i32Add().localSet(pI);
      forRange(f, k, 0, { local: step }, 1, () => {
        f.localGet(pM);
        loadAsF64(f, t);
        f.localSet(mRe);
        f.localGet(pW).f64Load().localSet(xRe);
        f.localGet(pI).f64Load().localSet(xIm);
        // s -= M[i][k] · x_k as complex numbers: (m·xr - mIm·xi, m·xi + mIm·xr)
        f.localGet(sRe).localGet(mRe).localGet(xRe).f64Mul().f64Const(mIm).localGet(xIm).f64Mul().f64Sub().f64Sub().localSet(sRe);
        f.localGet(sIm).localGet(mRe).localGet(xIm).f64Mul().f64Const(mIm).localGet(xRe).f64Mul().f64Add().f64Sub().localSet(sIm);
        f.localGet(pM).i32Const(dir * mColStride).i32Add().localSet(pM);
        f.localGet(pW).i32Const(dir * wRow).i32Add().localSet(pW);
        f.localGet(pI).i32Const(dir * 8).i32Add().localSet(pI);
      });
      // Dividing by a real diagonal (its imaginary part is ±0): both parts by its real part.
      if (unitDiagonal) f.f64Const(1);
      else pushDiagonal(f, aM, i);
      f.localSet(d);
      f.localGet(w).localGet(i).i32Const(wRow).i32Mul().i32Add().localGet(c).i32Const(8).i32Mul().i32Add();
      f.localGet(sRe).localGet(d).f64Div().f64Store();
      f.localGet(im).localGet(i).i32Const(8).i32Mul().i32Add();
      f.localGet(sIm).localGet(d).f64Div().f64Store();
    });
  });

  /** i = first + dir · step */
  function setRow(f: FunctionBuilder, i: number, step: number): void {
    if (solveLower) f.localGet(step).localSet(i);
    else f.i32Const(n - 1).localGet(step).i32Sub().localSet(i);
  }

  function pushDiagonal(f: FunctionBuilder, aM: number, i: number): void {
    f.localGet(aM).localGet(i).i32Const((n + 1) * es).i32Mul().i32Add();
    loadAsF64(f, t);
  }

  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [aPtr, bPtr, xPtr, w, begin, end] = [0, 1, 2, 3, 4, 5];
    const [unit, aM, bM, xM, c0, count, i, c, step, pM, pW, k, addr, bad] = Array.from({ length: 14 }, () => f.local("i32"));
    const [x, tmp] = [f.local("f64"), f.local("f64")];
    const diag = f.local("v128");
    const acc = Array.from({ length: GROUP }, () => f.local("v128"));
    const m = f.local("v128");
    /** addr = base + i · rowStride + (c0 + c) · colStride */
    const element = (base: number, rowStride: number, colStride: number): void => {
      f.localGet(base).localGet(i).i32Const(rowStride).i32Mul().i32Add();
      f.localGet(c0).localGet(c).i32Add().i32Const(colStride).i32Mul().i32Add().localSet(addr);
    };
    const wElement = (): void => {
      f.localGet(w).localGet(i).i32Const(wRow).i32Mul().i32Add().localGet(c).i32Const(8).i32Mul().i32Add();
    };
    forRange(f, unit, { local: begin }, { local: end }, 1, () => {
      const matrix = (local: number, base: number, elements: number): void => {
        f.localGet(base).localGet(unit).i32Const(blocks).i32DivU().i32Const(elements * es).i32Mul().i32Add().localSet(local);
      };
      matrix(aM, aPtr, n * n);
      matrix(bM, bPtr, n * cols);
      matrix(xM, xPtr, n * cols);
      f.localGet(unit).i32Const(blocks).i32RemU().i32Const(block).i32Mul().localSet(c0);
      f.i32Const(cols).localGet(c0).i32Sub().localTee(count).i32Const(block).localGet(count).i32Const(block).i32LtU().select().localSet(count);
      // W = the block of B as doubles, columns past the last right-hand side 0.
      forRange(f, i, 0, n, 1, () => {
        forRange(f, c, 0, block, 1, () => {
          wElement();
          f.localGet(c).localGet(count).i32LtU().if("f64");
          element(bM, bRowStride, bColStride);
          f.localGet(addr);
          loadAsF64(f, t);
          f.else().f64Const(0).end();
          f.f64Store();
        });
      });
      // The fast solve, GROUP vectors of columns at a time.
      forRange(f, step, 0, n, 1, () => {
        setRow(f, i, step);
        if (!unitDiagonal) {
          f.localGet(aM).localGet(i).i32Const((n + 1) * es).i32Mul().i32Add();
          loadSplatF64x2(f, t);
          f.localSet(diag);
        }
        for (let v0 = 0; v0 < block / 2; v0 += GROUP) {
          const nv = Math.min(GROUP, block / 2 - v0);
          const rowAt = (): void => { f.localGet(w).localGet(i).i32Const(wRow).i32Mul().i32Add(); };
          for (let v = 0; v < nv; v++) {
            rowAt();
            f.v128Load(16 * (v0 + v), 16).localSet(acc[v]!);
          }
          f.localGet(aM).localGet(i).i32Const(mRowStride).i32Mul().i32Add().i32Const(first * mColStride).i32Add().localSet(pM);
          f.localGet(w).i32Const(first * wRow).i32Add().localSet(pW);
          forRange(f, k, 0, { local: step }, 1, () => {
            f.localGet(pM);
            loadSplatF64x2(f, t);
            f.localSet(m);
            for (let v = 0; v < nv; v++) {
              f.localGet(acc[v]!).localGet(m).localGet(pW).v128Load(16 * (v0 + v), 16).f64x2Mul().f64x2Sub().localSet(acc[v]!);
            }
            f.localGet(pM).i32Const(dir * mColStride).i32Add().localSet(pM);
            f.localGet(pW).i32Const(dir * wRow).i32Add().localSet(pW);
          });
          for (let v = 0; v < nv; v++) {
            rowAt();
            f.localGet(acc[v]!);
            if (!unitDiagonal) f.localGet(diag).f64x2Div();
            f.v128Store(16 * (v0 + v), 16);
          }
        }
      });
      // Columns with a zero or non-finite value: again, exactly as the interpreter.
      forRange(f, c, 0, { local: count }, 1, () => {
        f.i32Const(0).localSet(bad);
        forRange(f, i, 0, n, 1, () => {
          wElement();
          f.f64Load().localSet(x);
          isZeroOrNonFinite(f, x, tmp);
          f.localGet(bad).i32Or().localSet(bad);
        });
        f.localGet(bad).if();
        f.localGet(aM).localGet(bM).localGet(w).localGet(c).localGet(c0).call(exact);
        f.end();
      });
      // The block into the result.
      forRange(f, i, 0, n, 1, () => {
        forRange(f, c, 0, { local: count }, 1, () => {
          element(xM, bRowStride, bColStride);
          f.localGet(addr);
          wElement();
          f.f64Load();
          storeF64As(f, t);
        });
      });
    });
  });
  return {
    name: `triangular-solve ${t} ${a.dimensions.join("x")} ${leftSide ? "left" : "right"} ${lower ? "lower" : "upper"}${unitDiagonal ? " unit" : ""} ${transposeA}`,
    bytes: module.finish(),
    operandCount: 2,
    resultCount: 1,
    scratchBytes,
    parallelExtent: batch * blocks,
    costPerUnit: n * n * block + 4 * n * block * es,
  };
}
