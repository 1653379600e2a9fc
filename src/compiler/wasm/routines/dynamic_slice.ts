// Compiled dynamic-slice and dynamic-update-slice that run on their own (the fusion
// pass folds most dynamic slices into loop fusions; dynamic-update-slice is never
// fused). Start indices are scalars in device memory, clamped as the interpreter does:
// start = clamp(index, 0, operand_dim - slice_dim). Both copy rows (the last
// dimension) with memory.copy and split the result's rows across threads; a
// dynamic-update-slice whose result is its operand's buffer (the planner wrote it in
// place: a dying temporary, or a donated parameter such as a decode step's KV cache)
// copies only the update.

import type { Instruction } from "../../../ir/computation.js";
import type { ElementType } from "../../../types/element_type.js";
import type { ArrayShape } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { emitLoadClampedIndex, forEachElement, isIndexType, product, rowCount, storageBytes } from "./common.js";
import { rowMajorStrides } from "../../../types/index_util.js";

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

function indexTypes(inst: Instruction, from: number): ElementType[] | Declined {
  const types = inst.operands.slice(from).map((o) => (o.shape.kind === "array" ? o.shape.elementType : "token"));
  const bad = types.find((t) => t === "token" || !isIndexType(t as ElementType));
  return bad === undefined ? types as ElementType[] : { declined: `${inst.opcode}: start index type ${bad}` };
}

export function emitDynamicSliceKernel(inst: Instruction<"dynamicSlice">, target: WasmTarget): WasmKernel | Declined {
  const operandInst = inst.operands[0];
  if (operandInst === undefined || operandInst.shape.kind !== "array" || inst.shape.kind !== "array") return { declined: "dynamicSlice: operands" };
  const operand = operandInst.shape as ArrayShape;
  const opDims = operand.dimensions;
  const rank = opDims.length;
  const types = indexTypes(inst, 1);
  if (!Array.isArray(types)) return types;
  if (types.length !== rank) return { declined: "dynamicSlice: one start index per dimension expected" };
  const sizes = inst.attrs.sliceSizes;
  if (sizes.some((s, d) => s > opDims[d]!)) return { declined: "dynamicSlice: slice larger than the operand" };
  const es = storageBytes(operand.elementType);
  if (product(opDims) * es >= 2 ** 31) return { declined: "dynamicSlice: operand too large for 32-bit offsets" };
  const strides = rowMajorStrides(opDims).map((s) => s * es);
  const last = rank === 0 ? 1 : sizes[rank - 1]!;
  const rowDims = rank === 0 ? [] : [...sizes.slice(0, -1), 1];

  const module = new ModuleBuilder().importMemory(target);
  const params = Array.from({ length: rank + 4 }, () => "i32" as const);
  module.addFunction("run", params, [], (f) => {
    const [op, result, begin, end] = [0, rank + 1, rank + 2, rank + 3];
    const starts = loadStarts(f, 1, types, sizes.map((s, d) => opDims[d]! - s));
    const src = f.local("i32");
    const dst = f.local("i32");
    f.localGet(result).localGet(begin).i32Const(last * es).i32Mul().i32Add().localSet(dst);
    forEachElement(f, rowDims, begin, end, () => {}, (coords) => {
      f.localGet(op);
      for (let d = 0; d < rank; d++) {
        f.localGet(starts[d]!);
        if (d < rank - 1) f.localGet(coords[d]!).i32Add();
        f.i32Const(strides[d]!).i32Mul().i32Add();
      }
      f.localSet(src);
      f.localGet(dst).localGet(src).i32Const(last * es).memoryCopy();
      f.localGet(dst).i32Const(last * es).i32Add().localSet(dst);
    });
  });
  return {
    name: `dynamic-slice ${operand.elementType} ${opDims.join("x")} -> ${sizes.join("x")}`,
    bytes: module.finish(),
    operandCount: 1 + rank,
    resultCount: 1,
    scratchBytes: 0,
    parallelExtent: rowCount(sizes),
    costPerUnit: last * es + 8,
  };
}

export function emitDynamicUpdateSliceKernel(inst: Instruction<"dynamicUpdateSlice">, target: WasmTarget): WasmKernel | Declined {
  const [operandInst, updateInst] = inst.operands;
  if (operandInst === undefined || updateInst === undefined || inst.shape.kind !== "array") return { declined: "dynamicUpdateSlice: operands" };
  const operand = operandInst.shape as ArrayShape;
  const update = updateInst.shape as ArrayShape;
  const opDims = operand.dimensions;
  const updDims = update.dimensions;
  const rank = opDims.length;
  const types = indexTypes(inst, 2);
  if (!Array.isArray(types)) return types;
  if (types.length !== rank) return { declined: "dynamicUpdateSlice: one start index per dimension expected" };
  if (updDims.some((s, d) => s > opDims[d]!)) return { declined: "dynamicUpdateSlice: update larger than the operand" };
  const es = storageBytes(operand.elementType);
  if (product(opDims) * es >= 2 ** 31) return { declined: "dynamicUpdateSlice: operand too large for 32-bit offsets" };
  const updStrides = rowMajorStrides(updDims).map((s) => s * es);
  const last = rank === 0 ? 1 : opDims[rank - 1]!;
  const updLast = rank === 0 ? 1 : updDims[rank - 1]!;
  const rowDims = rank === 0 ? [] : [...opDims.slice(0, -1), 1];

  const module = new ModuleBuilder().importMemory(target);
  const params = Array.from({ length: rank + 5 }, () => "i32" as const);
  module.addFunction("run", params, [], (f) => {
    const [op, upd, result, begin, end] = [0, 1, rank + 2, rank + 3, rank + 4];
    const starts = loadStarts(f, 2, types, updDims.map((s, d) => opDims[d]! - s));
    const dst = f.local("i32");
    const inside = f.local("i32");
    const src = f.local("i32");
    const row = f.local("i32");
    f.localGet(begin).localSet(row);
    forEachElement(f, rowDims, begin, end, () => {}, (coords) => {
      // The operand's row (unless the result is the operand's buffer, updated in place), then
      // the update's part of it when the row meets the update.
      f.localGet(result).localGet(row).i32Const(last * es).i32Mul().i32Add().localSet(dst);
      f.localGet(op).localGet(result).i32Ne().if();
      f.localGet(dst).localGet(op).localGet(row).i32Const(last * es).i32Mul().i32Add().i32Const(last * es).memoryCopy();
      f.end();
      f.i32Const(1).localSet(inside);
      f.localGet(upd).localSet(src);
      for (let d = 0; d < rank - 1; d++) {
        // 0 <= coord - start < update dim (unsigned compare covers both ends)
        f.localGet(coords[d]!).localGet(starts[d]!).i32Sub().i32Const(updDims[d]!).i32LtU().localGet(inside).i32And().localSet(inside);
        f.localGet(src).localGet(coords[d]!).localGet(starts[d]!).i32Sub().i32Const(updStrides[d]!).i32Mul().i32Add().localSet(src);
      }
      f.localGet(inside).if();
      f.localGet(dst);
      if (rank > 0) f.localGet(starts[rank - 1]!).i32Const(es).i32Mul().i32Add();
      f.localGet(src).i32Const(updLast * es).memoryCopy();
      f.end();
      f.localGet(row).i32Const(1).i32Add().localSet(row);
    });
  });
  return {
    name: `dynamic-update-slice ${operand.elementType} ${updDims.join("x")} into ${opDims.join("x")}`,
    bytes: module.finish(),
    operandCount: 2 + rank,
    resultCount: 1,
    scratchBytes: 0,
    parallelExtent: rowCount(opDims),
    costPerUnit: (last + updLast) * es + 8,
  };
}
