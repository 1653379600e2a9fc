// Compiled dynamic-slice and dynamic-update-slice that run on their own: the schedule of
// kernel/dynamic_slice_plan.ts (rows copied with memory.copy, the result's rows split
// across threads, start indices clamped as the interpreter does) as WebAssembly.

import type { Instruction } from "../../../ir/computation.js";
import type { ElementType } from "../../../types/element_type.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import { isDeclined, type Declined } from "../../kernel/declined.js";
import { planDynamicSlice, planDynamicUpdateSlice, type DynamicSlicePlan } from "../../kernel/dynamic_slice_plan.js";
import { emitLoadClampedIndex, forEachElement } from "./common.js";
import { elementCount } from "../../../types/shape.js";

/** Loads each start index (param startParam + d) clamped to [0, hi[d]] into a new local. */
function loadStarts(f: FunctionBuilder, startParam: number, types: readonly ElementType[], hi: readonly number[]): number[] {
  const t32 = f.local("i32");
  const t64 = f.local("i64");
  return hi.map((h, d) => {
    const local = f.local("i32");
    f.localGet(startParam + d);
    emitLoadClampedIndex(f, types[d]!, h, t32, t64);
    f.localSet(local);
    return local;
  });
}

/** The dimensions forEachElement walks for the plan's rows: the outer ones and the row as one element. */
const rowWalk = (plan: DynamicSlicePlan): number[] => (plan.operandDims.length === 0 ? [] : [...plan.rowDims, 1]);

function kernelOf(plan: DynamicSlicePlan, bytes: Uint8Array): WasmKernel {
  const rank = plan.operandDims.length;
  return {
    name: plan.name, bytes, operandCount: plan.firstStart + rank, resultCount: 1, scratchBytes: 0,
    parallelExtent: plan.parallelExtent, costPerUnit: plan.costPerUnit,
  };
}

export function emitDynamicSliceKernel(inst: Instruction<"dynamicSlice">, target: WasmTarget): WasmKernel | Declined {
  const plan = planDynamicSlice(inst);
  if (isDeclined(plan)) return plan;
  const rank = plan.operandDims.length;
  const strides = plan.operandStrides;
  const rowBytes = plan.windowRowBytes;
  const module = new ModuleBuilder().importMemory(target);
  const params = Array.from({ length: rank + 4 }, () => "i32" as const);
  module.addFunction("run", params, [], (f) => {
    const [op, result, begin, end] = [0, rank + 1, rank + 2, rank + 3];
    const starts = loadStarts(f, 1, plan.indexTypes, plan.startLimits);
    const src = f.local("i32");
    const dst = f.local("i32");
    f.localGet(result).localGet(begin).i32Const(rowBytes).i32Mul().i32Add().localSet(dst);
    forEachElement(f, rowWalk(plan), begin, end, () => {}, (coords) => {
      f.localGet(op);
      for (let d = 0; d < rank; d++) {
        f.localGet(starts[d]!);
        if (d < rank - 1) f.localGet(coords[d]!).i32Add();
        f.i32Const(strides[d]!).i32Mul().i32Add();
      }
      f.localSet(src);
      f.localGet(dst).localGet(src).i32Const(rowBytes).memoryCopy();
      f.localGet(dst).i32Const(rowBytes).i32Add().localSet(dst);
    });
  });
  return kernelOf(plan, module.finish());
}

export function emitDynamicUpdateSliceKernel(inst: Instruction<"dynamicUpdateSlice">, target: WasmTarget): WasmKernel | Declined {
  const plan = planDynamicUpdateSlice(inst);
  if (isDeclined(plan)) return plan;
  const rank = plan.operandDims.length;
  const { operandRowBytes: rowBytes, windowRowBytes: updRowBytes, windowRowDims, operandRowStrides, elementBytes: es } = plan;
  const module = new ModuleBuilder().importMemory(target);
  const params = Array.from({ length: rank + 5 }, () => "i32" as const);
  module.addFunction("run", params, [], (f) => {
    const [op, upd, result, begin, end] = [0, 1, rank + 2, rank + 3, rank + 4];
    const starts = loadStarts(f, 2, plan.indexTypes, plan.startLimits);
    const row = f.local("i32");
    const src = f.local("i32");
    const first = f.local("i32");
    const count = f.local("i32");
    // The operand's rows [begin, end), unless the result is the operand's buffer (in place).
    f.localGet(op).localGet(result).i32Ne().if();
    f.localGet(result).localGet(begin).i32Const(rowBytes).i32Mul().i32Add();
    f.localGet(op).localGet(begin).i32Const(rowBytes).i32Mul().i32Add();
    f.localGet(end).localGet(begin).i32Sub().i32Const(rowBytes).i32Mul().memoryCopy();
    f.end();
    // Then each of the update's rows whose result row lies in [begin, end).
    f.localGet(upd).localSet(src);
    f.i32Const(0).localSet(first);
    f.i32Const(elementCount(windowRowDims)).localSet(count);
    forEachElement(f, rank === 0 ? [] : [...windowRowDims, 1], first, count, () => {}, (coords) => {
      f.i32Const(0);
      for (let d = 0; d < rank - 1; d++) f.localGet(starts[d]!).localGet(coords[d]!).i32Add().i32Const(operandRowStrides[d]!).i32Mul().i32Add();
      f.localSet(row);
      // begin <= row < end (unsigned compare covers both ends)
      f.localGet(row).localGet(begin).i32Sub().localGet(end).localGet(begin).i32Sub().i32LtU().if();
      f.localGet(result).localGet(row).i32Const(rowBytes).i32Mul().i32Add();
      if (rank > 0) f.localGet(starts[rank - 1]!).i32Const(es).i32Mul().i32Add();
      f.localGet(src).i32Const(updRowBytes).memoryCopy();
      f.end();
      f.localGet(src).i32Const(updRowBytes).i32Add().localSet(src);
    });
  });
  return kernelOf(plan, module.finish());
}
