// Compiled TriangularSolve on f32, every attribute (left_side, lower, unit_diagonal,
// transpose_a incl. ADJOINT, which is TRANSPOSE on reals) and batch dimensions, bit for
// bit the interpreter's kernel (src/interpreter/kernels/triangular_solve.ts), which runs
// XLA's expansion of the op: substitution for batches of more than 8 matrices under 32
// rows (and 1x1 systems), else inverted 128-row diagonal blocks applied as products. The
// operations, their order and their roundings are the interpreter's: every dot adds its
// products in sequence (ascending index) with a fused multiply-add rounded to f32, every
// other operation is rounded to f32, a division by the diagonal is a product with its
// rounded reciprocal, and a one-term dot of the substitution is one fused
// multiply-subtract.
//
// Every case is one lower or upper system M x = b per right-hand side: M is A or A^T
// (op(A) on the left; on the right, X op(A) = B is op(A)^T X^T = B^T) and the
// right-hand sides are the columns of B (left) or its rows (right). The diagonal blocks
// are inverted as the interpreter does, in A's own orientation, and read through the
// same transposition. A unit of work is one matrix's block of up to BLOCK right-hand
// sides, held in scratch as doubles (each an f32 value), two to an f64x2.
//
// The f32 fused multiply-add: a product of two f32 values is exact in a double, so
// fma(a, b, c) is the sum p + c rounded once to f32. Rounding the double sum s = fl(p + c)
// to f32 gives that unless s lies on an f32 rounding midpoint (or in f32's subnormal
// range, where the midpoints sit elsewhere); the vector loop flags those lanes and their
// columns are summed again by `fma32`, which rounds p + c to odd in double first (then
// rounding to f32 is exact: Boldo and Melquiond's theorem, as in the interpreter's
// fused_multiply_add.ts).
//
// Each unit runs a fast pass first, then, when it saw a value it cannot vouch for, the
// careful pass. The fast pass skips the terms of the inverted blocks' triangles' zeros
// (0 times a finite value adds nothing to a sum that starts at +0, which never becomes
// -0) and checks sums for midpoints only: a sum in f32's subnormal range is inexact in
// double only when the product's last bit lies below 2^-179, which needs a factor
// below 2^-64. So it scans every factor and result it uses (B, A's coefficients, the
// blocks, remainders and solutions): any nonzero value below 2^-64 or not finite sends
// the unit through the careful pass, which sums every term of the expansion and flags
// subnormal sums too.
//
// f64 would need an exact f64 fused multiply-add over the whole exponent range; it runs
// on the interpreter's kernel.

import type { Instruction } from "../../../ir/computation.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { forRange } from "../loops.js";
import { storageBytes } from "./common.js";
import { roundUp } from "../../../types/index_util.js";

/** Right-hand sides in one unit of work (scratch columns). */
const BLOCK = 128;
/** XLA's TriangularSolveExpander block size (the interpreter's BLOCK_SIZE). */
const INVERSION_BLOCK = 128;
/** f64x2 accumulators sharing one load of a coefficient. */
const GROUP = 4;
const F32_TINY = 2 ** -126;
/** Nonzero factors at least this large keep a double sum in f32's subnormal range exact. */
const SAFE_FACTOR = 2 ** -64;

export function emitTriangularSolveKernel(inst: Instruction<"triangularSolve">, target: WasmTarget): WasmKernel | Declined {
  const [aInst, bInst] = inst.operands;
  if (aInst?.shape.kind !== "array" || bInst?.shape.kind !== "array") return { declined: "triangularSolve: operands are not arrays" };
  const a = aInst.shape as ArrayShape;
  const b = bInst.shape as ArrayShape;
  const t = a.elementType;
  if (t !== "f32") {
    const f64 = t === "f64" ? "; f64 would need an exact f64 fused multiply-add" : "";
    return { declined: `triangularSolve: ${t} runs on the interpreter's kernel (the compiled routine covers f32${f64})` };
  }
  if (!target.simd) return { declined: "triangularSolve: needs SIMD128" };
  const { leftSide, lower, unitDiagonal, transposeA } = inst.attrs;
  const rank = a.dimensions.length;
  const n = a.dimensions[rank - 1]!;
  const batch = elementCount(a.dimensions.slice(0, -2));
  const cols = leftSide ? b.dimensions[rank - 1]! : b.dimensions[rank - 2]!;
  const es = storageBytes(t);
  if (Math.max(elementCount(a.dimensions), elementCount(b.dimensions)) * es >= 2 ** 31) return { declined: "triangularSolve: too large for 32-bit offsets" };
  const transposed = transposeA !== "NO_TRANSPOSE";
  // M = A, or A^T; M is lower triangular when solveLower.
  const direct = leftSide !== transposed;
  const solveLower = direct ? lower : !lower;
  const mRowStride = direct ? n * es : es;
  const mColStride = direct ? es : n * es;
  // B[row of the system i][right-hand side c]
  const bRowStride = leftSide ? cols * es : es;
  const bColStride = leftSide ? es : n * es;
  const substitution = n === 1 || (batch > INVERSION_BLOCK / 16 && n < INVERSION_BLOCK / 4);
  const bs = Math.min(INVERSION_BLOCK, n);
  const bsP = bs + (bs & 1);
  const blockCount = Math.ceil(n / Math.max(bs, 1));
  // No elements: nothing to do (blocks 0).
  const block = Math.max(2, Math.min(BLOCK, 2 * Math.ceil(cols / 2)));
  const blocks = elementCount(b.dimensions) === 0 ? 0 : Math.ceil(cols / block);
  const wRow = block * 8;
  // Scratch: W (the right-hand sides, then x), R (a block's remainders), T (one row),
  // AROW (one row of coefficients), then for the inversion SC (scaled block), OUT (its
  // inverse, rows bsP wide) and IND (reciprocals of its diagonal).
  const W = 0;
  const R = W + n * wRow;
  const T = R + (substitution ? 0 : bs * wRow);
  const AROW = T + roundUp(Math.max(block, bsP) * 8, 16);
  const SC = AROW + roundUp(Math.max(n, bsP) * 8, 16);
  const OUT = SC + (substitution ? 0 : bs * bsP * 8);
  const IND = OUT + (substitution ? 0 : bs * bsP * 8);
  const scratchBytes = Math.max(64, IND + (substitution ? 0 : roundUp(bs * 8, 16)));

  const module = new ModuleBuilder().importMemory(target);

  /** Pushes the f64 on the stack rounded to f32 (as a double). */
  const round32 = (f: FunctionBuilder): void => { f.f32DemoteF64().f64PromoteF32(); };
  const round32x2 = (f: FunctionBuilder): void => { f.f32x4DemoteF64x2Zero().f64x2PromoteLowF32x4(); };

  // fma32(a, b, c): round_f32(a·b + c) exactly, for f32 values a, b, c.
  const fma32 = module.addFunction(undefined, ["f64", "f64", "f64"], ["f64"], (f) => {
    const [pa, pb, pc] = [0, 1, 2];
    const [p, s, bb, err] = [f.local("f64"), f.local("f64"), f.local("f64"), f.local("f64")];
    const bits = f.local("i64");
    f.localGet(pa).localGet(pb).f64Mul().localTee(p).localGet(pc).f64Add().localSet(s);
    // Infinite or NaN sums round as they are; so does an exact sum.
    f.localGet(s).f64Abs().f64Const(Infinity).f64Lt().i32Eqz().if();
    f.localGet(s);
    round32(f);
    f.return().end();
    // err = p + c - s exactly (TwoSum)
    f.localGet(s).localGet(p).f64Sub().localSet(bb);
    f.localGet(p).localGet(s).localGet(bb).f64Sub().f64Sub().localGet(pc).localGet(bb).f64Sub().f64Add().localSet(err);
    f.localGet(s).i64ReinterpretF64().localSet(bits);
    // Round to odd: an inexact sum whose last bit is 0 steps one ulp toward the exact value.
    f.localGet(err).f64Const(0).f64Ne().localGet(bits).i64Const(1).i64And().i64Eqz().i32And().if();
    f.localGet(bits).i64Const(1).i64Const(-1);
    f.localGet(err).f64Const(0).f64Gt().localGet(s).f64Const(0).f64Gt().i32Eq().select();
    f.i64Add().localSet(bits);
    f.end();
    f.localGet(bits).f64ReinterpretI64();
    round32(f);
  });

  // dotLane(aRow, count, b, bRowBytes, init) = init + Σ_k aRow[k]·b[k·bRowBytes], in sequence with fma32.
  const dotLane = module.addFunction(undefined, ["i32", "i32", "i32", "i32", "f64"], ["f64"], (f) => {
    const [aRow, count, bp, bRowBytes, init] = [0, 1, 2, 3, 4];
    const k = f.local("i32");
    forRange(f, k, 0, { local: count }, 1, () => {
      f.localGet(aRow).localGet(k).i32Const(8).i32Mul().i32Add().f64Load();
      f.localGet(bp).localGet(k).localGet(bRowBytes).i32Mul().i32Add().f64Load();
      f.localGet(init).call(fma32).localSet(init);
    });
    f.localGet(init);
  });

  /**
   * rowDot(aRow, count, b, bRowBytes, dst, init): for each of `vectors` pairs of columns,
   * dst = init + Σ_k aRow[k]·b[k][·] (init: an address, or -1 for 0), each step an f32
   * fused multiply-add. dst may be init; neither may be a row of b.
   */
  const rowDot = (vectors: number, careful: boolean): number => module.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [aRow, count, bp, bRowBytes, dst, init] = [0, 1, 2, 3, 4, 5];
    const [k, pA, pB, lane, col] = Array.from({ length: 5 }, () => f.local("i32"));
    const acc = Array.from({ length: GROUP }, () => f.local("v128"));
    const [coef, s, flag, mask, mid, tiny, zero] = Array.from({ length: 7 }, () => f.local("v128"));
    f.i32x4Const(0x1fffffff, 0, 0x1fffffff, 0).localSet(mask);
    f.i32x4Const(0x10000000, 0, 0x10000000, 0).localSet(mid);
    f.f64x2Const(F32_TINY, F32_TINY).localSet(tiny);
    f.f64x2Const(0, 0).localSet(zero);
    for (let v0 = 0; v0 < vectors; v0 += GROUP) {
      const nv = Math.min(GROUP, vectors - v0);
      for (let v = 0; v < nv; v++) {
        f.localGet(init).i32Const(-1).i32Eq().if("v128");
        f.localGet(zero);
        f.else().localGet(init).v128Load(16 * (v0 + v), 8).end();
        f.localSet(acc[v]!);
      }
      f.localGet(zero).localSet(flag);
      f.localGet(aRow).localSet(pA);
      f.localGet(bp).localSet(pB);
      forRange(f, k, 0, { local: count }, 1, () => {
        f.localGet(pA).v128Load64Splat().localSet(coef);
        for (let v = 0; v < nv; v++) {
          f.localGet(coef).localGet(pB).v128Load(16 * (v0 + v), 8).f64x2Mul().localGet(acc[v]!).f64x2Add().localTee(s);
          round32x2(f);
          f.localSet(acc[v]!);
          // Flag a sum on an f32 midpoint (low 29 bits 1000...0) or nonzero below f32's normal range.
          f.localGet(flag);
          f.localGet(s).localGet(mask).v128And().localGet(mid).i64x2Eq().v128Or();
          if (careful) f.localGet(s).f64x2Abs().localGet(tiny).f64x2Lt().localGet(s).localGet(zero).f64x2Ne().v128And().v128Or();
          f.localSet(flag);
        }
        f.localGet(pA).i32Const(8).i32Add().localSet(pA);
        f.localGet(pB).localGet(bRowBytes).i32Add().localSet(pB);
      });
      f.localGet(flag).v128AnyTrue().if();
      forRange(f, lane, 0, 2 * nv, 1, () => {
        f.localGet(lane).i32Const(2 * v0).i32Add().i32Const(8).i32Mul().localSet(col);
        f.localGet(dst).localGet(col).i32Add();
        f.localGet(aRow).localGet(count).localGet(bp).localGet(col).i32Add().localGet(bRowBytes);
        f.localGet(init).i32Const(-1).i32Eq().if("f64");
        f.f64Const(0);
        f.else().localGet(init).localGet(col).i32Add().f64Load().end();
        f.call(dotLane).f64Store();
      });
      f.else();
      for (let v = 0; v < nv; v++) f.localGet(dst).localGet(acc[v]!).v128Store(16 * (v0 + v), 8);
      f.end();
    }
  });
  const rowDotW = [rowDot(block / 2, false), rowDot(block / 2, true)] as const;
  const rowDotOut = substitution ? [-1, -1] as const : [rowDot(bsP / 2, false), rowDot(bsP / 2, true)] as const;

  // suspect(p, count): 1 when one of the `count` doubles at p is nonzero and below 2^-64, or not finite.
  const suspect = module.addFunction(undefined, ["i32", "i32"], ["i32"], (f) => {
    const [ptr, count] = [0, 1];
    const [k, bad] = [f.local("i32"), f.local("i32")];
    const [x, m] = [f.local("f64"), f.local("f64")];
    forRange(f, k, 0, { local: count }, 1, () => {
      f.localGet(ptr).localGet(k).i32Const(8).i32Mul().i32Add().f64Load().localTee(x).f64Abs().localSet(m);
      f.localGet(x).f64Const(0).f64Ne();
      f.localGet(m).f64Const(SAFE_FACTOR).f64Ge().localGet(m).f64Const(Infinity).f64Lt().i32And().i32Eqz();
      f.i32And().localGet(bad).i32Or().localSet(bad);
    });
    f.localGet(bad);
  });

  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [aPtr, bPtr, xPtr, w, begin, end] = [0, 1, 2, 3, 4, 5];
    const [unit, aM, bM, xM, c0, count, i, c, step, j, k0, addr, blk, from, size, r, q, start, bad, t0] = Array.from({ length: 20 }, () => f.local("i32"));
    const recip = f.local("v128");
    const at = (offset: number): void => { f.localGet(w).i32Const(offset).i32Add(); };
    /** Pushes the address of row `row` (a local) of a scratch matrix at `offset` with rows of `rowBytes`. */
    const rowOf = (offset: number, row: number, rowBytes: number): void => {
      f.localGet(w).localGet(row).i32Const(rowBytes).i32Mul().i32Add().i32Const(offset).i32Add();
    };
    /**
     * Sets [t0, t0 + q) to the columns of row r (a local) of a triangular matrix of
     * `width` columns that the fast pass sums: its triangle (lower: 0..r, upper: r..),
     * or the whole row in the careful pass.
     */
    const triangleOfRow = (careful: boolean, lowerTriangle: boolean, width: () => void): void => {
      if (careful) {
        f.i32Const(0).localSet(t0);
        width();
        f.localSet(q);
      } else if (lowerTriangle) {
        f.i32Const(0).localSet(t0);
        f.localGet(r).i32Const(1).i32Add().localSet(q);
      } else {
        f.localGet(r).localSet(t0);
        width();
        f.localGet(r).i32Sub().localSet(q);
      }
    };
    /** Pushes the address of M[row][col] (locals) in this unit's matrix. */
    const mAddress = (row: number, col: number): void => {
      f.localGet(aM).localGet(row).i32Const(mRowStride).i32Mul().i32Add().localGet(col).i32Const(mColStride).i32Mul().i32Add();
    };
    /** AROW[0, len) = M[row][k0 + t] (locals row, k0; len a local), as doubles; negated when `negate`. */
    const gatherM = (row: number, first: number, len: number, negate = false): void => {
      forRange(f, q, 0, { local: len }, 1, () => {
        at(AROW);
        f.localGet(q).i32Const(8).i32Mul().i32Add();
        f.localGet(first).localGet(q).i32Add().localSet(addr);
        mAddress(row, addr);
        f.f32Load().f64PromoteF32();
        if (negate) f.f64Neg();
        f.f64Store();
      });
    };
    /** Vectors of row `row` of W: W[row] = round32(W[row] op vector pushed by `other(v)`). */
    const updateW = (row: number, other: (v: number) => void, op: (f: FunctionBuilder) => void): void => {
      for (let v = 0; v < block / 2; v++) {
        rowOf(W, row, wRow);
        rowOf(W, row, wRow);
        f.v128Load(16 * v, 8);
        other(v);
        op(f);
        round32x2(f);
        f.v128Store(16 * v, 8);
      }
    };
    /** W[row] = round32(W[row] · recip), recip = round32(1 / M[row][row]) in both lanes. */
    const divideByDiagonal = (row: number): void => {
      if (unitDiagonal) return;
      f.f64Const(1);
      mAddress(row, row);
      f.f32Load().f64PromoteF32().f64Div();
      round32(f);
      f.f64x2Splat().localSet(recip);
      updateW(row, () => f.localGet(recip), (g) => g.f64x2Mul());
    };

    /** Fast pass: bad |= suspect(the `count` doubles at the address `ptr` pushes). */
    const check = (careful: boolean, ptr: () => void, count: number | (() => void)): void => {
      if (careful) return;
      ptr();
      if (typeof count === "number") f.i32Const(count);
      else count();
      f.call(suspect).localGet(bad).i32Or().localSet(bad);
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
      /** addr = base + i · bRowStride + (c0 + c) · bColStride */
      const element = (base: number): void => {
        f.localGet(base).localGet(i).i32Const(bRowStride).i32Mul().i32Add();
        f.localGet(c0).localGet(c).i32Add().i32Const(bColStride).i32Mul().i32Add().localSet(addr);
      };
      const wElement = (): void => {
        rowOf(W, i, wRow);
        f.localGet(c).i32Const(8).i32Mul().i32Add();
      };
      // W = the block of B as doubles, columns past the last right-hand side 0.
      const loadW = (): void => {
        forRange(f, i, 0, n, 1, () => {
          forRange(f, c, 0, block, 1, () => {
            wElement();
            f.localGet(c).localGet(count).i32LtU().if("f64");
            element(bM);
            f.localGet(addr).f32Load().f64PromoteF32();
            f.else().f64Const(0).end();
            f.f64Store();
          });
        });
      };
      const solve = (careful: boolean): void => (substitution ? emitSubstitution(careful) : emitBlocks(careful));
      loadW();
      f.i32Const(0).localSet(bad);
      check(false, () => at(W), n * block);
      solve(false);
      check(false, () => at(W), n * block);
      f.localGet(bad).if();
      loadW();
      solve(true);
      f.end();
      // The block into the result (every value is an f32 already).
      forRange(f, i, 0, n, 1, () => {
        forRange(f, c, 0, { local: count }, 1, () => {
          element(xM);
          f.localGet(addr);
          wElement();
          f.f64Load().f32DemoteF64().f32Store();
        });
      });
    });

    // Row j at step s: the rows solved before it are M's `step` rows on the solved side.
    function emitSubstitution(careful: boolean): void {
      const dot = rowDotW[careful ? 1 : 0];
      forRange(f, step, 0, n, 1, () => {
        if (solveLower) {
          f.localGet(step).localSet(j);
          f.i32Const(0).localSet(k0);
        } else {
          f.i32Const(n - 1).localGet(step).i32Sub().localSet(j);
          f.localGet(j).i32Const(1).i32Add().localSet(k0);
        }
        f.localGet(step).i32Const(1).i32Eq().if();
        {
          // One term: W[j] = fma(-M[j][k0], W[k0], W[j]), one rounding.
          gatherM(j, k0, step, true);
          check(careful, () => at(AROW), 1);
          at(AROW);
          f.i32Const(1);
          rowOf(W, k0, wRow);
          f.i32Const(wRow);
          rowOf(W, j, wRow);
          rowOf(W, j, wRow);
          f.call(dot);
        }
        f.else().localGet(step).i32Const(2).i32GeU().if();
        {
          gatherM(j, k0, step);
          check(careful, () => at(AROW), () => f.localGet(step));
          at(AROW);
          f.localGet(step);
          rowOf(W, k0, wRow);
          f.i32Const(wRow);
          at(T);
          f.i32Const(-1).call(dot);
          updateW(j, (v) => { at(T); f.v128Load(16 * v, 8); }, (g) => g.f64x2Sub());
        }
        f.end().end();
        divideByDiagonal(j);
      });
    }

    function emitBlocks(careful: boolean): void {
      const backward = !solveLower;
      const dot = rowDotW[careful ? 1 : 0];
      forRange(f, step, 0, blockCount, 1, () => {
        if (backward) f.i32Const(blockCount - 1).localGet(step).i32Sub().localSet(blk);
        else f.localGet(step).localSet(blk);
        f.localGet(blk).i32Const(bs).i32Mul().localSet(from);
        f.i32Const(n).localGet(from).i32Sub().localTee(size).i32Const(bs).localGet(size).i32Const(bs).i32LtU().select().localSet(size);
        invertBlock(careful);
        // R[r] = W[from + r] - M[from + r][solved] · W[solved], rounded; the first block has nothing solved before it.
        forRange(f, r, 0, { local: size }, 1, () => {
          f.localGet(from).localGet(r).i32Add().localSet(i);
          f.localGet(step).i32Eqz().if();
          for (let v = 0; v < block / 2; v++) {
            rowOf(R, r, wRow);
            rowOf(W, i, wRow);
            f.v128Load(16 * v, 8).v128Store(16 * v, 8);
          }
          f.else();
          // The solved rows: [0, from) going forward, [from + size, n) backward.
          if (backward) {
            f.localGet(from).localGet(size).i32Add().localSet(k0);
            f.i32Const(n).localGet(k0).i32Sub().localSet(q);
          } else {
            f.i32Const(0).localSet(k0);
            f.localGet(from).localSet(q);
          }
          f.localGet(q).localSet(j);
          gatherM(i, k0, j);
          check(careful, () => at(AROW), () => f.localGet(j));
          at(AROW);
          f.localGet(j);
          rowOf(W, k0, wRow);
          f.i32Const(wRow);
          at(T);
          f.i32Const(-1).call(dot);
          for (let v = 0; v < block / 2; v++) {
            rowOf(R, r, wRow);
            rowOf(W, i, wRow);
            f.v128Load(16 * v, 8);
            at(T);
            f.v128Load(16 * v, 8).f64x2Sub();
            round32x2(f);
            f.v128Store(16 * v, 8);
          }
          f.end();
          check(careful, () => rowOf(R, r, wRow), block);
        });
        // W[from + r] = Inv'[r] · R, Inv' the inverse through M's transposition.
        forRange(f, r, 0, { local: size }, 1, () => {
          forRange(f, q, 0, { local: size }, 1, () => {
            at(AROW);
            f.localGet(q).i32Const(8).i32Mul().i32Add();
            const [row, col] = direct ? [r, q] : [q, r];
            rowOf(OUT, row, bsP * 8);
            f.localGet(col).i32Const(8).i32Mul().i32Add().f64Load().f64Store();
          });
          f.localGet(from).localGet(r).i32Add().localSet(i);
          // Inv' is triangular as M is: the fast pass sums its triangle only, t in [t0, t0 + q).
          triangleOfRow(careful, solveLower, () => f.localGet(size));
          at(AROW);
          f.localGet(t0).i32Const(8).i32Mul().i32Add();
          f.localGet(q);
          rowOf(R, t0, wRow);
          f.i32Const(wRow);
          rowOf(W, i, wRow);
          f.i32Const(-1).call(dot);
        });
      });
    }

    /** OUT = the inverse of A's diagonal block `blk` (rows from, size of them), padded with the identity to bs rows, as the interpreter's invertBlock. */
    function invertBlock(careful: boolean): void {
      const dot = rowDotOut[careful ? 1 : 0];
      const entry = (): void => {
        // The masked, padded block's entry (r, c) as a double on the stack.
        f.localGet(r).localGet(size).i32LtU().localGet(c).localGet(size).i32LtU().i32And().if("f64");
        const blockEntry = (): void => {
          f.localGet(aM).localGet(from).localGet(r).i32Add().i32Const(n * es).i32Mul().i32Add();
          f.localGet(from).localGet(c).i32Add().i32Const(es).i32Mul().i32Add().f32Load().f64PromoteF32();
        };
        f.localGet(r).localGet(c).i32Eq().if("f64");
        if (unitDiagonal) f.f64Const(1);
        else blockEntry();
        f.else();
        (lower ? f.localGet(r).localGet(c).i32GtU() : f.localGet(r).localGet(c).i32LtU()).if("f64");
        blockEntry();
        f.else().f64Const(0).end();
        f.end();
        f.else();
        f.f64Const(1).f64Const(0).localGet(r).localGet(c).i32Eq().select();
        f.end();
      };
      const outAt = (): void => { rowOf(OUT, r, bsP * 8); f.localGet(c).i32Const(8).i32Mul().i32Add(); };
      const indAt = (local: number): void => { at(IND); f.localGet(local).i32Const(8).i32Mul().i32Add(); };
      // IND[r] = round32(1 / block[r][r])
      forRange(f, r, 0, bs, 1, () => {
        f.localGet(r).localSet(c);
        indAt(r);
        f.f64Const(1);
        entry();
        f.f64Div();
        round32(f);
        f.f64Store();
      });
      // SC[r][c] = round32(block[r][c] · IND[c]); OUT = diag(±1): +1 first (lower) or last, 0 elsewhere (padding column too).
      f.i32Const(lower ? 0 : bs - 1).localSet(start);
      forRange(f, r, 0, bs, 1, () => {
        forRange(f, c, 0, bsP, 1, () => {
          rowOf(SC, r, bsP * 8);
          f.localGet(c).i32Const(8).i32Mul().i32Add();
          f.localGet(c).i32Const(bs).i32LtU().if("f64");
          entry();
          indAt(c);
          f.f64Load().f64Mul();
          round32(f);
          f.else().f64Const(0).end();
          f.f64Store();
          outAt();
          f.f64Const(0);
          f.f64Const(1).f64Const(-1).localGet(r).localGet(start).i32Eq().select();
          f.localGet(r).localGet(c).i32Ne().select();
          f.f64Store();
        });
      });
      check(careful, () => at(SC), bs * bsP);
      // Row by row (from the first or the last): OUT[jj] = -(SC[jj] · OUT); the fast pass
      // sums over SC[jj]'s triangle only, k in [t0, t0 + q).
      forRange(f, i, 1, bs, 1, () => {
        if (lower) f.localGet(i).localSet(r);
        else f.i32Const(bs - 1).localGet(i).i32Sub().localSet(r);
        triangleOfRow(careful, lower, () => f.i32Const(bs));
        rowOf(SC, r, bsP * 8);
        f.localGet(t0).i32Const(8).i32Mul().i32Add();
        f.localGet(q);
        rowOf(OUT, t0, bsP * 8);
        f.i32Const(bsP * 8);
        at(T);
        f.i32Const(-1).call(dot);
        for (let v = 0; v < bsP / 2; v++) {
          rowOf(OUT, r, bsP * 8);
          at(T);
          f.v128Load(16 * v, 8).f64x2Neg().v128Store(16 * v, 8);
        }
      });
      check(careful, () => at(OUT), bs * bsP);
      // Undo the scaling by rows: OUT[r][c] = round32(OUT[r][c] · IND[r]).
      forRange(f, r, 0, bs, 1, () => {
        forRange(f, c, 0, bs, 1, () => {
          outAt();
          outAt();
          f.f64Load();
          indAt(r);
          f.f64Load().f64Mul();
          round32(f);
          f.f64Store();
        });
      });
      check(careful, () => at(OUT), bs * bsP);
    }
  });
  const inversions = substitution ? 0 : bs * bs * bs * blockCount;
  return {
    name: `triangular-solve ${t} ${a.dimensions.join("x")} ${leftSide ? "left" : "right"} ${lower ? "lower" : "upper"}${unitDiagonal ? " unit" : ""} ${transposeA}`,
    bytes: module.finish(),
    operandCount: 2,
    resultCount: 1,
    scratchBytes,
    parallelExtent: batch * blocks,
    costPerUnit: 6 * (n * n * block + inversions) + 4 * n * block * es,
  };
}
