// The ragged dot's grouped GEMM as WebAssembly (kernel/ragged_dot_plan.ts has the schedule
// and the forms taken): run(lhs, rhs, group sizes, result, scratch, begin, end). Each
// group's part is computed by the GEMM's blocked loop nest (gemm_rows.ts: rows(a, b, c,
// scratch, rowBegin, rowEnd, colBegin, colEnd, depth)), given the group's rows (or its
// depth) and its operands' first elements, so the microkernels and the packing are the
// plain GEMM's; the loop nest has microkernels for every count of rows a group's last
// tile may have. A call walks the group sizes once per slice of units it touches (an
// outer index and a chunk of columns), each group's range the sizes so far cut at the
// ragged dimension's end; the sizes are non-negative, since the program's check step ran
// before.

import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import type { Declined } from "../kernel/declined.js";
import { planRaggedGemm, raggedGemmKernelName, type RaggedGemmSpec } from "../kernel/ragged_dot_plan.js";
import { forRange } from "./loops.js";
import { elementInfo, gemmFuses, WASM_GEMM_TARGET } from "./gemm_microkernel.js";
import { emitGemmRows } from "./gemm_rows.js";

/** The grouped GEMM kernel of a ragged dot's spec, as WebAssembly. */
export function emitRaggedDotKernel(spec: RaggedGemmSpec, target: WasmTarget): WasmKernel | Declined {
  if (!target.simd) return { declined: "ragged-dot: needs SIMD128" };
  const schedule = planRaggedGemm(spec, WASM_GEMM_TARGET);
  const { gemm, slots, outer, parallelExtent } = schedule;
  const { m, n, k, groups, perIndex, raggedSize, batch, elementType: type } = spec;
  const es = elementInfo(type).bytes;
  const { mr } = gemm.tiling;
  const { nChunks, chunk } = gemm;
  const module = new ModuleBuilder().importMemory(target);
  // Every count of rows below mr: a group's last tile may have any.
  const remainders = Array.from({ length: mr - 1 }, (_, i) => i + 1);
  const { rows, scratchBytes } = emitGemmRows(module, {
    type, n, k, aRow: gemm.aRow * es, aK: gemm.aK * es, bK: gemm.bK * es, bLine: gemm.bLine * es,
  }, gemm.tiling, gemmFuses(target, gemm.tiling), remainders, undefined, true);
  const wide64 = spec.groupSizeType === "s64" || spec.groupSizeType === "u64";
  // next(sizes, g, start): the end of group g, which starts at start: start + sizes[g] cut at the ragged dimension's end.
  const nextEnd = module.addFunction(undefined, ["i32", "i32", "i32"], ["i32"], (f) => {
    const [sizes, g, start] = [0, 1, 2];
    const s = f.local("i64");
    f.localGet(sizes).localGet(g).i32Const(wide64 ? 8 : 4).i32Mul().i32Add();
    if (wide64) f.i64Load(); else f.i64Load32U();
    f.localSet(s);
    // s > raggedSize - start (unsigned) ? raggedSize : start + s
    f.i32Const(raggedSize);
    f.localGet(start).i64ExtendI32U().localGet(s).i64Add().i32WrapI64();
    f.localGet(s).i32Const(raggedSize).localGet(start).i32Sub().i64ExtendI32U().i64GtU();
    f.select();
  });
  // zero(c, z0, z1, c0, c1): rows [z0, z1) x columns [c0, c1) of a matrix of n columns set to zero.
  const zero = module.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [c, z0, z1, c0, c1] = [0, 1, 2, 3, 4];
    const i = f.local("i32");
    forRange(f, i, { local: z0 }, { local: z1 }, 1, () => {
      f.localGet(c).localGet(i).i32Const(n).i32Mul().localGet(c0).i32Add().i32Const(es).i32Mul().i32Add();
      f.i32Const(0).localGet(c1).localGet(c0).i32Sub().i32Const(es).i32Mul().memoryFill();
    });
  });

  module.addFunction("run", new Array<"i32">(7).fill("i32"), [], (f) => {
    const [a, b, sizes, c, scratch, begin, end] = [0, 1, 2, 3, 4, 5, 6];
    const [slice, sliceEnd, lo, hi, o, c0, c1, start, next, g, x, y, slot, tiles, count] = Array.from({ length: 15 }, () => f.local("i32"));
    /** local = max(value on the stack, 0), signed. */
    const setMax0 = (local: number): void => {
      f.localTee(local).i32Const(0).localGet(local).i32Const(0).i32GtS().select().localSet(local);
    };
    /** local = min(local, value on the stack), signed. */
    const setMinS = (local: number, bound: () => void): void => {
      f.localGet(local); bound(); f.localGet(local); bound(); f.i32LtS().select().localSet(local);
    };
    /** Groups [0, to) walked: start, next = the last one's range. */
    const walk = (to: () => void): void => {
      f.i32Const(0).localSet(next);
      f.block().loop();
      f.localGet(g); to(); f.i32GeU().brIf(1);
      f.localGet(next).localSet(start);
      f.localGet(sizes).localGet(g).localGet(start).call(nextEnd).localSet(next);
      f.localGet(g).i32Const(1).i32Add().localSet(g);
      f.br(0).end().end();
    };
    /** rows(a', b', c', scratch, r0, r1, c0, c1, depth), each pointer given as code pushing it. */
    const callRows = (aAt: () => void, bAt: () => void, cAt: () => void, r0: () => void, r1: () => void, depth: () => void): void => {
      aAt(); bAt(); cAt(); f.localGet(scratch); r0(); r1(); f.localGet(c0).localGet(c1); depth(); f.call(rows);
    };
    const rowEnd = (tilesTo: number, limit: () => void): void => {
      // min(tilesTo * mr, limit)
      f.localGet(tilesTo).i32Const(mr).i32Mul(); limit(); f.localGet(tilesTo).i32Const(mr).i32Mul(); limit(); f.i32LtU().select();
    };
    const at = (base: number, elements: () => void): void => {
      f.localGet(base); elements(); f.i32Const(es).i32Mul().i32Add();
    };
    // Slices [begin / slots, min(ceil(end / slots), outer * nChunks)).
    f.localGet(end).i32Const(slots - 1).i32Add().i32Const(slots).i32DivU().localSet(sliceEnd);
    setMinS(sliceEnd, () => f.i32Const(outer * nChunks));
    f.localGet(begin).i32Const(slots).i32DivU().localSet(slice);
    forRange(f, slice, { local: slice }, { local: sliceEnd }, 1, () => {
      f.localGet(begin).localGet(slice).i32Const(slots).i32Mul().i32Sub();
      setMax0(lo);
      f.localGet(end).localGet(slice).i32Const(slots).i32Mul().i32Sub().localSet(hi);
      setMinS(hi, () => f.i32Const(slots));
      f.localGet(lo).localGet(hi).i32LtS().if();
      f.localGet(slice).i32Const(nChunks).i32DivU().localSet(o);
      f.localGet(slice).i32Const(nChunks).i32RemU().i32Const(chunk).i32Mul().localTee(c0).i32Const(chunk).i32Add().localSet(c1);
      setMinS(c1, () => f.i32Const(n));
      f.i32Const(0).localSet(g);
      emitBody(f);
      f.end();
    });

    function emitBody(f: FunctionBuilder): void {
      switch (spec.mode) {
        case "nonContracting": {
          // Slots in group order, one a tile of the group's rows; then the tiles of zeros past the last group.
          f.i32Const(0).localSet(slot).i32Const(0).localSet(next);
          forRange(f, g, 0, groups, 1, () => {
            f.localGet(next).localSet(start);
            f.localGet(sizes).localGet(g).localGet(start).call(nextEnd).localSet(next);
            f.localGet(next).localGet(start).i32Sub().i32Const(perIndex).i32Mul().localTee(count).i32Const(mr - 1).i32Add().i32Const(mr).i32DivU().localSet(tiles);
            f.localGet(lo).localGet(slot).i32Sub();
            setMax0(x);
            f.localGet(hi).localGet(slot).i32Sub().localSet(y);
            setMinS(y, () => f.localGet(tiles));
            f.localGet(x).localGet(y).i32LtS().if();
            callRows(
              () => at(a, () => f.localGet(o).i32Const(m * k).i32Mul().localGet(start).i32Const(perIndex * k).i32Mul().i32Add()),
              () => at(b, () => f.localGet(o).i32Const(spec.rhsBatchStride).i32Mul().localGet(g).i32Const(spec.rhsGroupStride).i32Mul().i32Add()),
              () => at(c, () => f.localGet(o).i32Const(m * n).i32Mul().localGet(start).i32Const(perIndex * n).i32Mul().i32Add()),
              () => f.localGet(x).i32Const(mr).i32Mul(), () => rowEnd(y, () => f.localGet(count)), () => f.i32Const(k));
            f.end();
            f.localGet(slot).localGet(tiles).i32Add().localSet(slot);
          });
          f.localGet(slot).localGet(hi).i32LtS().if();
          f.localGet(lo).localGet(slot).i32Sub();
          setMax0(x);
          f.localGet(hi).localGet(slot).i32Sub().localSet(y);
          // Rows from next * perIndex: [first + x*mr, min(first + y*mr, m)).
          at(c, () => f.localGet(o).i32Const(m * n).i32Mul());
          f.localGet(next).i32Const(perIndex).i32Mul().localTee(start).localGet(x).i32Const(mr).i32Mul().i32Add();
          f.localGet(start).localGet(y).i32Const(mr).i32Mul().i32Add().localTee(y).i32Const(m).localGet(y).i32Const(m).i32LtU().select();
          f.localGet(c0).localGet(c1).call(zero);
          f.end();
          break;
        }
        case "contracting": {
          // Group o / batch of batch o % batch over its range of k (none: zeros).
          f.localGet(o).i32Const(batch).i32DivU().localSet(x);
          walk(() => f.localGet(x).i32Const(1).i32Add());
          f.localGet(o).i32Const(batch).i32RemU().localSet(y);
          f.localGet(next).localGet(start).i32Eq().if();
          at(c, () => f.localGet(o).i32Const(m * n).i32Mul());
          f.localGet(lo).i32Const(mr).i32Mul();
          rowEnd(hi, () => f.i32Const(m));
          f.localGet(c0).localGet(c1).call(zero);
          f.else();
          callRows(
            () => at(a, () => f.localGet(y).i32Const(m * k).i32Mul().localGet(start).i32Add()),
            () => at(b, () => f.localGet(y).i32Const(k * n).i32Mul().localGet(start).i32Const(gemm.bK).i32Mul().i32Add()),
            () => at(c, () => f.localGet(o).i32Const(m * n).i32Mul()),
            () => f.localGet(lo).i32Const(mr).i32Mul(), () => rowEnd(hi, () => f.i32Const(m)), () => f.localGet(next).localGet(start).i32Sub());
          f.end();
          break;
        }
        case "batch": {
          // Batch o is ragged index o / perIndex: computed below the groups' end, else zeros.
          walk(() => f.i32Const(groups));
          f.localGet(o).localGet(next).i32Const(perIndex).i32Mul().i32LtU().if();
          callRows(
            () => at(a, () => f.localGet(o).i32Const(m * k).i32Mul()),
            () => at(b, () => f.localGet(o).i32Const(k * n).i32Mul()),
            () => at(c, () => f.localGet(o).i32Const(m * n).i32Mul()),
            () => f.localGet(lo).i32Const(mr).i32Mul(), () => rowEnd(hi, () => f.i32Const(m)), () => f.i32Const(k));
          f.else();
          at(c, () => f.localGet(o).i32Const(m * n).i32Mul());
          f.localGet(lo).i32Const(mr).i32Mul();
          rowEnd(hi, () => f.i32Const(m));
          f.localGet(c0).localGet(c1).call(zero);
          f.end();
          break;
        }
      }
    }
  });
  return {
    name: raggedGemmKernelName(spec),
    bytes: module.finish(),
    operandCount: 3,
    resultCount: 1,
    scratchBytes,
    parallelExtent,
    costPerUnit: schedule.costPerUnit,
    runtimeCheck: { operand: 2, check: "raggedDotGroupSizes" },
  };
}
