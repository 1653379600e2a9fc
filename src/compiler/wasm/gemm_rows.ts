// The blocked GEMM loop nest shared by the GEMM and convolution kernels:
// rows(a, b, c, scratch, rowBegin, rowEnd, colBegin, colEnd) computes the block
// [rowBegin, rowEnd) x [colBegin, colEnd) of C = A B, with A(i, p) at a + i*aRow + p*aK, B(p, j) at b + p*bK + j*bLine and
// C(i, j) at c + i*cRow + j*es (cRow n elements, or further apart: a strided GEMM's product
// stored transposed, its columns still consecutive, so tiles store whole vectors as ever),
// packing B blocks into its scratch (see gemm.ts), or, with prepackedB, reading them where
// packedBOf's layout (blocks of tiling.nc columns) puts them.
// With an epilogue (output fusions, epilogue.ts), rows takes more arguments, (rowBase,
// operand0, ..., operandN-1, result), and finishes each tile after its last block of
// k: a full tile in registers, by microkernels that apply the epilogue before they
// store (when it has a vector form); a tile on the right edge (and every tile when it
// has none) by epi(operand0, ..., operandN-1, product, result, rowBase + i0,
// rowBase + i1, j0, j1) right after the tile is written (still in L1), on the whole
// row tile of the column block when there is no vector form.
//
// keepProduct (k in one block): the result is written over an operand the epilogue
// reads, so nothing may write C before the epilogue has read that element. Tiles in
// registers already do so; the others go to a row-tile buffer in scratch, laid out like
// C, which epi reads instead. Not the default: on results past the caches that buffer
// measured a few percent slower than writing C directly (C's cache misses then come in
// one burst instead of between microkernel calls).
//
// A stored [k][m] (lhsTransposed: aRow is one element), its full row tiles are copied to
// scratch first, kLen steps of mr contiguous elements each, which the microkernels then
// read as one sequential run: in place, each step of k is a jump of m elements, and a row
// tile's A touches kLen cache lines for mr elements of each. The tiles one 64-byte line
// covers are copied together, so each line is read once. On the MLP training step's
// xᵀ·dz (784x512x128) that took the GEMM from 46 to 51 GFLOP/s (one thread, best of).
// Partial row tiles (the last, at rowEnd) read A in place.

import type { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { forRange, pushI32, setMinU, type I32Value } from "./loops.js";
import { elementInfo, emitCopyTile, emitMicrokernel, emitPack, emitPackRowsB, type ALayout, type TileRegisters } from "./gemm_microkernel.js";
import { productFitsOneBlock, type GemmElement, type GemmTiling } from "../kernel/gemm_plan.js";
import { roundUp } from "../../types/index_util.js";

export interface GemmRowsLayout {
  readonly type: GemmElement;
  readonly n: number;
  readonly k: number;
  readonly aRow: number;
  readonly aK: number;
  readonly bK: number;
  readonly bLine: number;
  /**
   * Bytes between C's rows: n elements unless given (a strided GEMM storing its product
   * transposed, wasm/gemm.ts). Not with an epilogue, which addresses rows n apart.
   */
  readonly cRow?: number;
  /** B comes in packedBOf's layout (b is its batch's first element): nothing to pack. */
  readonly prepackedB?: boolean;
}

const align64 = (x: number): number => roundUp(x, 64);

/**
 * A GEMM or convolution kernel inside an output fusion (epilogue.ts): it takes the
 * fusion's operands, multiplies two of them, and finishes each block of its result
 * with the epilogue.
 */
export interface KernelEpilogue {
  readonly operandCount: number;
  readonly lhs: number;
  readonly rhs: number;
  /** Adds epi(operand0, ..., operandN-1, product, c, rowBegin, rowEnd, colBegin, colEnd) to the module; returns its index. */
  readonly add: (m: ModuleBuilder) => number;
  /** Keep the product in scratch until the epilogue has read it, where k fits one block (see above). */
  readonly keepProduct: boolean;
  /**
   * Emits the epilogue over a tile in registers (operand i in local i); absent when the
   * epilogue has no vector form. Call `add` first: it may add helpers this uses.
   */
  readonly inRegisters?: (f: FunctionBuilder, tile: TileRegisters) => void;
}

/** The epilogue rows applies to each finished tile (KernelEpilogue, with epi added to the module). */
export interface RowsEpilogue {
  readonly fn: number;
  readonly operands: number;
  readonly keepProduct: boolean;
  readonly inRegisters?: ((f: FunctionBuilder, tile: TileRegisters) => void) | undefined;
}

/**
 * Emits rows(...) into the module. `remainders` lists the row counts below mr that a
 * last partial tile may have (each gets its own microkernels). `runtimeDepth`: rows
 * takes a ninth argument, the depth (at most layout.k, which keeps the strides and the
 * blocking), and computes nothing for a depth of 0 (a ragged dot's group of k:
 * ragged_dot.ts); not with an epilogue or a pre-packed B. Returns the function and the
 * scratch bytes one call needs.
 */
export function emitGemmRows(
  module: ModuleBuilder, layout: GemmRowsLayout, tiling: GemmTiling, fused: boolean, remainders: readonly number[], epilogue?: RowsEpilogue,
  runtimeDepth = false,
): { rows: number; scratchBytes: number } {
  const { type, n, k, aRow, aK, bK, bLine, prepackedB = false } = layout;
  if (runtimeDepth && (epilogue !== undefined || prepackedB)) throw new Error("gemm rows: a depth given at run time takes no epilogue and no pre-packed B");
  const { bytes: es, lanes } = elementInfo(type);
  const cRow = layout.cRow ?? n * es;
  if (cRow % es !== 0) throw new Error(`gemm rows: C's rows ${cRow} bytes apart are not whole elements`);
  if (epilogue !== undefined && cRow !== n * es) throw new Error(`gemm rows: an epilogue takes C's rows ${n} elements apart, not ${cRow} bytes`);
  const { mr, nrVectors } = tiling;
  const nr = nrVectors * lanes;
  // Column blocks hold whole panels.
  tiling = { ...tiling, nc: roundUp(tiling.nc, nr) };
  const kc = Math.min(tiling.kc, Math.max(k, 1));
  const nc = Math.min(tiling.nc, roundUp(Math.max(n, 1), nr));
  const packedBBytes = prepackedB ? 0 : align64(kc * nc * es);
  const tileBytes = align64(mr * nr * es);
  // A stored by columns: full row tiles are packed (see above), one v128 copy per 16 bytes of a step of k.
  const tileRun = mr * es;
  const packA = aRow === es && tileRun % 16 === 0;
  // Row tiles packed together: those one 64-byte line of a step of k covers, so each line
  // is read once (with m a multiple of 1024 f32, A's steps of k are 4 KiB apart and the
  // lines would not stay in L1 from one row tile to the next).
  const groupTiles = packA ? Math.max(1, Math.floor(64 / tileRun)) : 1;
  const panelABytes = align64(kc * tileRun);
  const packedABytes = packA ? groupTiles * panelABytes : 0;
  // The row-tile buffer: mr rows of nc columns, rows n elements apart as in C (the epilogue addresses both alike).
  const inScratch = epilogue !== undefined && epilogue.keepProduct && productFitsOneBlock(k, tiling.kc);
  const rowTileBytes = inScratch ? align64(((mr - 1) * n + nc) * es) : 0;
  const scratchBytes = packedBBytes + tileBytes + rowTileBytes + packedABytes;
  const packB = prepackedB ? undefined : emitPack(module, type, nr, bLine, bK);
  // B stored by rows ([k][n]: a step of k is a row) packs with vector copies.
  const packRowsB = !prepackedB && bLine === es ? emitPackRowsB(module, type, nrVectors, bK) : undefined;
  const aLayout = { rowStride: aRow, kStep: aK };
  // Full row tiles read a packed A where there is one.
  const fullTileALayout = packA ? { rowStride: es, kStep: mr * es } : aLayout;
  // Microkernels that finish their tile in registers, when the epilogue can.
  const inRegisters = epilogue?.inRegisters;
  const tileEpilogue = inRegisters === undefined ? undefined : { operands: epilogue!.operands, emit: inRegisters };
  const final = (count: number, a: ALayout): number | undefined =>
    tileEpilogue === undefined ? undefined : emitMicrokernel(module, type, count, nrVectors, a, cRow, fused, tileEpilogue);
  const micro = emitMicrokernel(module, type, mr, nrVectors, fullTileALayout, cRow, fused);
  const microFinal = final(mr, fullTileALayout);
  const microTile = emitMicrokernel(module, type, mr, nrVectors, fullTileALayout, nr * es, fused);
  const partial = remainders.map((count) => ({
    count,
    micro: emitMicrokernel(module, type, count, nrVectors, aLayout, cRow, fused),
    microFinal: final(count, aLayout),
    microTile: emitMicrokernel(module, type, count, nrVectors, aLayout, nr * es, fused),
  }));
  const copyTile = emitCopyTile(module, type);

  const extra = epilogue === undefined ? 0 : 2 + epilogue.operands;
  const lastPc = Math.floor(Math.max(k - 1, 0) / tiling.kc) * tiling.kc;
  const rows = module.addFunction(undefined, new Array<"i32">(8 + extra + (runtimeDepth ? 1 : 0)).fill("i32"), [], (f) => {
    // The depth: the layout's, or the ninth argument.
    const depth: I32Value = runtimeDepth ? { local: 8 } : k;
    const [a, b, c, scratch, rowBegin, rowEnd, colBegin, colEnd] = [0, 1, 2, 3, 4, 5, 6, 7];
    const [rowBase, result] = [8, 9 + (epilogue?.operands ?? 0)];
    const [jc, pc, ir, jr, nLen, kLen, full, pa, pb, cp, tr, tc, tile, src, rowTile, e0, panels, packedA, step, inGroup, g, groupCount] = Array.from({ length: 22 }, () => f.local("i32"));
    f.localGet(scratch).i32Const(packedBBytes).i32Add().localSet(tile);
    f.localGet(scratch).i32Const(packedBBytes + tileBytes).i32Add().localSet(rowTile);
    f.localGet(scratch).i32Const(packedBBytes + tileBytes + rowTileBytes).i32Add().localSet(packedA);
    forRange(f, jc, { local: colBegin }, { local: colEnd }, tiling.nc, () => {
      f.localGet(colEnd).localGet(jc).i32Sub().localSet(tr);
      setMinU(f, nLen, tiling.nc, { local: tr });
      forRange(f, pc, 0, depth, tiling.kc, () => {
        pushI32(f, depth);
        f.localGet(pc).i32Sub().localSet(tr);
        setMinU(f, kLen, tiling.kc, { local: tr });
        if (prepackedB) {
          // The block's panels: at element jc*k + pc*roundUp(nLen, nr) of B.
          f.localGet(b).localGet(jc).i32Const(k).i32Mul();
          f.localGet(pc).localGet(nLen).i32Const(nr - 1).i32Add().i32Const(nr).i32DivU().i32Const(nr).i32Mul().i32Mul().i32Add();
          f.i32Const(es).i32Mul().i32Add().localSet(panels);
        } else {
          // Pack B's block: full panels by rows of B when it is stored [k][n], the rest generically.
          f.localGet(b).localGet(pc).i32Const(bK).i32Mul().i32Add().localGet(jc).i32Const(bLine).i32Mul().i32Add().localSet(src);
          if (packRowsB !== undefined) {
            f.localGet(src).localGet(kLen).localGet(nLen).localGet(scratch).call(packRowsB);
            f.localGet(nLen).i32Const(nr).i32DivU().i32Const(nr).i32Mul().localSet(full);
          } else {
            f.i32Const(0).localSet(full);
          }
          f.localGet(src).localGet(full).i32Const(bLine).i32Mul().i32Add();
          f.localGet(kLen).localGet(kLen).localGet(nLen).localGet(full).i32Sub();
          f.localGet(scratch).localGet(full).localGet(kLen).i32Mul().i32Const(es).i32Mul().i32Add();
          f.call(packB!);
          f.localGet(scratch).localSet(panels);
        }
        forRange(f, ir, { local: rowBegin }, { local: rowEnd }, mr, () => {
          f.localGet(a).localGet(ir).i32Const(aRow).i32Mul().i32Add().localGet(pc).i32Const(aK).i32Mul().i32Add().localSet(pa);
          // epi(operands..., product, result, rows [ir, ir + rowCount), columns [jc + j0, jc + j0 + count)), after the last block of k.
          const callEpilogue = (rowCount: { local: number } | number, j0: number | undefined, count: number): void => {
            if (epilogue === undefined) return;
            f.localGet(pc).i32Const(lastPc).i32Eq().if();
            for (let x = 0; x < epilogue.operands; x++) f.localGet(9 + x);
            // The product: C itself, or the row-tile buffer, placed so that element (row, col) is at the same offset from it as in C.
            if (inScratch) f.localGet(rowTile).localGet(rowBase).localGet(ir).i32Add().i32Const(n).i32Mul().localGet(jc).i32Add().i32Const(es).i32Mul().i32Sub();
            else f.localGet(result);
            f.localGet(result);
            f.localGet(rowBase).localGet(ir).i32Add().localTee(e0).localGet(e0);
            if (typeof rowCount === "number") f.i32Const(rowCount); else f.localGet(rowCount.local);
            f.i32Add();
            f.localGet(jc);
            if (j0 !== undefined) f.localGet(j0).i32Add();
            f.localTee(e0).localGet(e0).localGet(count).i32Add().call(epilogue.fn);
            f.end();
          };
          const tiles = (fullFn: number, finalFn: number | undefined, tileFn: number, rowCount: number): void => {
            forRange(f, jr, 0, { local: nLen }, nr, () => {
              f.localGet(panels).localGet(jr).localGet(kLen).i32Mul().i32Const(es).i32Mul().i32Add().localSet(pb);
              // cp = c + (ir * cRow / es + jc + jr) * es: where the tile goes, in C
              f.localGet(c).localGet(ir).i32Const(cRow / es).i32Mul().localGet(jc).i32Add().localGet(jr).i32Add().i32Const(es).i32Mul().i32Add().localSet(cp);
              f.localGet(jr).i32Const(nr).i32Add().localGet(nLen).i32LeU().if();
              if (finalFn !== undefined) {
                // In registers: the microkernel that applies the epilogue, after the last block of k.
                f.localGet(pc).i32Const(lastPc).i32Eq().if();
                f.localGet(pa).localGet(pb).localGet(cp).localGet(kLen).localGet(pc);
                f.localGet(rowBase).localGet(ir).i32Add().localGet(jc).localGet(jr).i32Add();
                for (let x = 0; x < epilogue!.operands; x++) f.localGet(9 + x);
                f.call(finalFn);
                f.else();
                f.localGet(pa).localGet(pb).localGet(cp).localGet(kLen).localGet(pc).call(fullFn);
                f.end();
              } else {
                // cp moves to the row-tile buffer when the product must stay there.
                if (inScratch) f.localGet(rowTile).localGet(jr).i32Const(es).i32Mul().i32Add().localSet(cp);
                f.localGet(pa).localGet(pb).localGet(cp).localGet(kLen).localGet(pc).call(fullFn);
              }
              f.else();
              {
                if (inScratch) f.localGet(rowTile).localGet(jr).i32Const(es).i32Mul().i32Add().localSet(cp);
                f.localGet(nLen).localGet(jr).i32Sub().localSet(tc);
                f.localGet(pc).if();
                f.localGet(cp).i32Const(cRow).localGet(tile).i32Const(nr * es).i32Const(rowCount).localGet(tc).call(copyTile);
                f.end();
                f.localGet(pa).localGet(pb).localGet(tile).localGet(kLen).localGet(pc).call(tileFn);
                f.localGet(tile).i32Const(nr * es).localGet(cp).i32Const(cRow).i32Const(rowCount).localGet(tc).call(copyTile);
                // The edge tile, finished right after it is written.
                if (inRegisters !== undefined) callEpilogue(rowCount, jr, tc);
              }
              f.end();
            });
          };
          // Full tiles, then (only at rowEnd) a partial one with its own microkernels.
          f.localGet(ir).i32Const(mr).i32Add().localGet(rowEnd).i32LeU().if();
          if (packA) {
            // The tile's place in its group; the first tile of a group packs the group's full tiles.
            f.localGet(ir).localGet(rowBegin).i32Sub().i32Const(mr).i32DivU().i32Const(groupTiles).i32RemU().localTee(inGroup).i32Eqz().if();
            {
              // Copies vectors [0, vectors) of each step of k from pa + at to the packed tiles, one tile's run (tileRun bytes) per panel.
              const copySteps = (vectors: number, at: { local: number } | 0): void => {
                forRange(f, step, 0, { local: kLen }, 1, () => {
                  for (let v = 0; v < vectors; v++) {
                    const [tileOf, offset] = [Math.floor((v * 16) / tileRun), (v * 16) % tileRun];
                    f.localGet(packedA).localGet(step).i32Const(tileRun).i32Mul().i32Add();
                    if (at !== 0) f.localGet(at.local).i32Const(panelABytes).i32Mul().i32Add();
                    f.localGet(pa).localGet(step).i32Const(aK).i32Mul().i32Add();
                    if (at !== 0) f.localGet(at.local).i32Const(tileRun).i32Mul().i32Add();
                    f.v128Load(v * 16).v128Store(tileOf * panelABytes + offset);
                  }
                });
              };
              f.localGet(rowEnd).localGet(ir).i32Sub().i32Const(groupTiles * mr).i32GeU().if();
              copySteps((groupTiles * tileRun) / 16, 0);
              f.else();
              // The last rows: their full tiles one by one.
              f.localGet(rowEnd).localGet(ir).i32Sub().i32Const(mr).i32DivU().localSet(groupCount);
              forRange(f, g, 0, { local: groupCount }, 1, () => copySteps(tileRun / 16, { local: g }));
              f.end();
            }
            f.end();
            f.localGet(packedA).localGet(inGroup).i32Const(panelABytes).i32Mul().i32Add().localSet(pa);
          }
          tiles(micro, microFinal, microTile, mr);
          for (const p of partial) {
            f.else();
            f.localGet(rowEnd).localGet(ir).i32Sub().i32Const(p.count).i32Eq().if();
            tiles(p.micro, p.microFinal, p.microTile, p.count);
          }
          for (let i = 0; i < partial.length; i++) f.end();
          f.end();
          if (epilogue !== undefined && inRegisters === undefined) {
            // No vector form: the row tile [ir, min(ir + mr, rowEnd)) x [jc, jc + nLen) at once.
            f.localGet(rowEnd).localGet(ir).i32Sub().localSet(tc);
            setMinU(f, tc, mr, { local: tc });
            callEpilogue({ local: tc }, undefined, nLen);
          }
        });
      });
    });
  });
  return { rows, scratchBytes };
}
