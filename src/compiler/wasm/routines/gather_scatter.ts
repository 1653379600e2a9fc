// Compiled gather and scatter with XLA's general dimension numbers, with the
// interpreter's out-of-bounds rules (src/interpreter/kernels/gather_scatter.ts):
// gather clamps each start index to [0, operand_dim - slice_size]; scatter computes
// each update element's input index without clamping and skips the element when it
// falls outside the input.
//
// Both are affine in the result's (or updates') coordinates apart from the index
// values: address = sum(coord[d] * coef[d]) + sum(index_k * stride[map_k]), with the
// coefficients worked out here once. Gather copies elements of any width (a row at a
// time with memory.copy when the last result dimension runs along the operand's last
// dimension) and splits its rows across threads. Scatter's units are the input's
// rows along dimension 0: a call copies its rows of the input, then walks ALL the
// updates in row-major order and applies those that land in its rows. Two updates may
// land on one element and must combine in update order, which holds because one call
// owns each element; calls on disjoint ranges never write the same element. (Each
// call repeats the index arithmetic of every update; that is the price of threads.)

import type { Instruction } from "../../../ir/computation.js";
import { complementDims } from "../../../ir/shape/dim_checks.js";
import type { ElementType } from "../../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { computeType } from "../wasm_types.js";
import {
  binaryReducerOf, emitBinary, emitCopyElement, emitLoadClampedIndex, forEachElement, isArithmeticType, isIndexType,
  loadIndexI32, loadScalar, rowCount, storageBytes, storeScalar, type BinaryReducer,
} from "./common.js";
import { rowMajorStrides } from "../../../types/index_util.js";
import { range } from "../../../types/arrays.js";

/** Largest element count (and index magnitude) the 32-bit address arithmetic here allows. */
const LIMIT = 2 ** 30;

/** Position, among the batch (or update-scatter) dims, of each indices batching dim. */
function batchPositions(indicesBatchingDims: readonly number[], indexVectorDim: number): number[] {
  return indicesBatchingDims.map((d) => (d < indexVectorDim ? d : d - 1));
}

/** Where the index vectors live: byte strides of the batch dimensions, and of one vector entry. */
function indexLayout(indices: ArrayShape, indexVectorDim: number): { batchStrides: number[]; entryStride: number } {
  const ib = storageBytes(indices.elementType);
  const strides = rowMajorStrides(indices.dimensions);
  const batchStrides = indices.dimensions.flatMap((_, d) => (d === indexVectorDim ? [] : [strides[d]! * ib]));
  const entryStride = indexVectorDim < indices.dimensions.length ? strides[indexVectorDim]! * ib : 0;
  return { batchStrides, entryStride };
}

/** local = base + sum(coords[d] * coef[d]) over the dims with a non-zero coefficient. */
function emitAffine(f: FunctionBuilder, local: number, base: number, coords: readonly number[], coef: readonly number[], dims?: readonly number[]): void {
  f.localGet(base);
  coef.forEach((c, d) => {
    if (c === 0 || (dims !== undefined && !dims.includes(d))) return;
    f.localGet(coords[d]!).i32Const(c).i32Mul().i32Add();
  });
  f.localSet(local);
}

export function emitGatherKernel(inst: Instruction<"gather">, target: WasmTarget): WasmKernel | Declined {
  const [operandInst, indicesInst] = inst.operands;
  if (operandInst === undefined || indicesInst === undefined || inst.shape.kind !== "array") return { declined: "gather: operands" };
  const operand = operandInst.shape as ArrayShape;
  const indices = indicesInst.shape as ArrayShape;
  const it = indices.elementType;
  if (!isIndexType(it)) return { declined: `gather: index type ${it}` };
  const t = operand.elementType;
  const es = storageBytes(t);
  if (![1, 2, 4, 8].includes(es)) return { declined: `gather: element type ${t}` };
  const { dimensionNumbers: dn, sliceSizes } = inst.attrs;
  const opDims = operand.dimensions;
  const outDims = inst.shape.dimensions;
  if (sliceSizes.some((s, d) => s > opDims[d]!)) return { declined: "gather: a slice size exceeds its operand dimension" };
  if ([elementCount(opDims), elementCount(outDims), elementCount(indices.dimensions)].some((n) => n * 8 >= LIMIT * 2)) return { declined: "gather: too large for 32-bit offsets" };
  const r = opDims.length;
  const outRank = outDims.length;
  const outBatchDims = complementDims(outRank, dn.offsetDims);
  const offsetOperandDims = complementDims(r, [...dn.collapsedSliceDims, ...dn.operandBatchingDims]);
  const batchPos = batchPositions(dn.startIndicesBatchingDims, dn.indexVectorDim);
  const opStrides = rowMajorStrides(opDims).map((s) => s * es);
  const { batchStrides, entryStride } = indexLayout(indices, dn.indexVectorDim);
  // Coefficients of the result coordinates in the operand address and in the index address.
  const opCoef = new Array<number>(outRank).fill(0);
  const idxCoef = new Array<number>(outRank).fill(0);
  dn.offsetDims.forEach((outDim, k) => { opCoef[outDim] = opStrides[offsetOperandDims[k]!]!; });
  outBatchDims.forEach((outDim, b) => { idxCoef[outDim] = batchStrides[b]!; });
  dn.operandBatchingDims.forEach((od, i) => { opCoef[outBatchDims[batchPos[i]!]!]! += opStrides[od]!; });
  const lastDim = outRank - 1;
  // The last result dimension walks the operand's last dimension contiguously: copy rows.
  const rowCopy = outRank > 0 && opCoef[lastDim] === es && idxCoef[lastDim] === 0;
  const last = outRank === 0 ? 1 : outDims[lastDim]!;
  // The index vector depends on the batch coordinates only.
  const startPerRow = outRank === 0 || idxCoef[lastDim] === 0;

  const module = new ModuleBuilder().importMemory(target);
  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [op, idx, result, begin, end] = [0, 1, 2, 3, 4];
    const start = f.local("i32");
    const ip = f.local("i32");
    const src = f.local("i32");
    const outPtr = f.local("i32");
    const t32 = f.local("i32");
    const t64 = f.local("i64");
    const emitStart = (coords: readonly number[]): void => {
      emitAffine(f, ip, idx, coords, idxCoef);
      f.localGet(op);
      dn.startIndexMap.forEach((od, k) => {
        f.localGet(ip).i32Const(k * entryStride).i32Add();
        emitLoadClampedIndex(f, it, opDims[od]! - sliceSizes[od]!, t32, t64);
        f.i32Const(opStrides[od]!).i32Mul().i32Add();
      });
      f.localSet(start);
    };
    f.localGet(result).localGet(begin).i32Const(last * es).i32Mul().i32Add().localSet(outPtr);
    const loopDims = rowCopy ? [...outDims.slice(0, -1), 1] : outDims;
    forEachElement(f, loopDims, begin, end, (coords) => {
      if (startPerRow) emitStart(coords);
    }, (coords) => {
      if (!startPerRow) emitStart(coords);
      emitAffine(f, src, start, coords, opCoef, rowCopy ? range(lastDim) : undefined);
      if (rowCopy) {
        f.localGet(outPtr).localGet(src).i32Const(last * es).memoryCopy();
        f.localGet(outPtr).i32Const(last * es).i32Add().localSet(outPtr);
      } else {
        f.localGet(outPtr).localGet(src);
        emitCopyElement(f, es);
        f.localGet(outPtr).i32Const(es).i32Add().localSet(outPtr);
      }
    });
  });
  return {
    name: `gather ${t} ${opDims.join("x")} -> ${outDims.join("x")}`,
    bytes: module.finish(),
    operandCount: 2,
    resultCount: 1,
    scratchBytes: 0,
    parallelExtent: rowCount(outDims),
    costPerUnit: last * (es + 4),
  };
}

type Combiner = BinaryReducer | "replace";

export function emitScatterKernel(inst: Instruction<"scatter">, target: WasmTarget): WasmKernel | Declined {
  if (inst.operands.length !== 3 || inst.shape.kind !== "array") return { declined: "scatter: variadic (several inputs)" };
  const [inputInst, indicesInst, updatesInst] = inst.operands as [Instruction, Instruction, Instruction];
  const input = inputInst.shape as ArrayShape;
  const indices = indicesInst.shape as ArrayShape;
  const updates = updatesInst.shape as ArrayShape;
  const it = indices.elementType;
  if (!isIndexType(it)) return { declined: `scatter: index type ${it}` };
  const t: ElementType = input.elementType;
  const es = storageBytes(t);
  const { toApply } = inst.attrs;
  let combiner: Combiner | undefined;
  if (toApply.parameters.length === 2 && toApply.root === toApply.parameters[1]) combiner = "replace";
  else combiner = binaryReducerOf(toApply);
  if (combiner === undefined) return { declined: "scatter: the update computation is not a replace or one add/multiply/maximum/minimum" };
  if (combiner === "replace" ? ![1, 2, 4, 8].includes(es) : !isArithmeticType(t)) return { declined: `scatter: element type ${t}` };
  const dn = inst.attrs.dimensionNumbers;
  const inDims = input.dimensions;
  const updDims = updates.dimensions;
  if ([elementCount(inDims), elementCount(updDims), elementCount(indices.dimensions)].some((n) => n * 8 >= LIMIT * 2) || inDims.some((d) => d >= LIMIT)) {
    return { declined: "scatter: too large for 32-bit offsets" };
  }
  const r = inDims.length;
  const updRank = updDims.length;
  const updateScatterDims = complementDims(updRank, dn.updateWindowDims);
  const windowInputDims = complementDims(r, [...dn.insertedWindowDims, ...dn.inputBatchingDims]);
  const batchPos = batchPositions(dn.scatterIndicesBatchingDims, dn.indexVectorDim);
  const inStrides = rowMajorStrides(inDims).map((s) => s * es);
  const { batchStrides, entryStride } = indexLayout(indices, dn.indexVectorDim);
  // For each input dimension: which update coordinates add to it (window, batching).
  const parts: { updDim: number }[][] = inDims.map(() => []);
  dn.updateWindowDims.forEach((ud, k) => { parts[windowInputDims[k]!]!.push({ updDim: ud }); });
  dn.inputBatchingDims.forEach((od, i) => { parts[od]!.push({ updDim: updateScatterDims[batchPos[i]!]! }); });
  const idxCoef = new Array<number>(updRank).fill(0);
  updateScatterDims.forEach((ud, b) => { idxCoef[ud] = batchStrides[b]!; });
  const ct = computeType(t);
  const ib = storageBytes(it);
  const rows0 = r === 0 ? 1 : inDims[0]!;
  const rowBytes = r === 0 ? es : inStrides[0]!;

  const module = new ModuleBuilder().importMemory(target);
  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [inp, idx, upd, result, begin, end] = [0, 1, 2, 3, 4, 5];
    const ip = f.local("i32");
    const up = f.local("i32");
    const addr = f.local("i32");
    const ok = f.local("i32");
    const full = f.local("i32");
    const t64 = f.local("i64");
    const zero = f.local("i32");
    const rows = f.local("i32");
    const ta = f.local(ct);
    const tb = f.local(ct);
    f.localGet(begin).localGet(end).i32GeU().if().return().end();
    // This call's rows of the input, then the updates that land in them.
    f.localGet(result).localGet(begin).i32Const(rowBytes).i32Mul().i32Add();
    f.localGet(inp).localGet(begin).i32Const(rowBytes).i32Mul().i32Add();
    f.localGet(end).localGet(begin).i32Sub().i32Const(rowBytes).i32Mul().memoryCopy();
    f.localGet(upd).localSet(up);
    f.i32Const(0).localSet(zero);
    f.i32Const(rowCount(updDims)).localSet(rows);
    forEachElement(f, updDims, zero, rows, () => {}, (u) => {
      emitAffine(f, ip, idx, u, idxCoef);
      f.i32Const(1).localSet(ok);
      f.localGet(result).localSet(addr);
      for (let d = 0; d < r; d++) {
        const k = dn.scatterDimsToOperandDims.indexOf(d);
        if (k < 0 && parts[d]!.length === 0) {
          // index 0 along this dimension; along dimension 0 it must be one of this call's rows
          if (d === 0) f.localGet(begin).i32Eqz().localGet(ok).i32And().localSet(ok);
          continue;
        }
        f.i32Const(0);
        if (k >= 0) {
          f.localGet(ip).i32Const(k * entryStride).i32Add();
          if (it === "s32" || ib < 4) {
            loadIndexI32(f, it);
          } else {
            // Wider or unsigned 32-bit indices: anything outside ±2^30 is out of bounds anyway.
            if (ib === 8) f.i64Load(); else f.i64Load32U();
            f.localTee(t64).i64Const(LIMIT).i64Add().i64Const(2 * LIMIT).i64GtU().if().i32Const(0).localSet(ok).end();
            f.localGet(t64).i32WrapI64();
          }
          f.i32Add();
        }
        for (const { updDim } of parts[d]!) f.localGet(u[updDim]!).i32Add();
        f.localTee(full);
        f.i32Const(inDims[d]!).i32LtU().localGet(ok).i32And().localSet(ok);
        if (d === 0) f.localGet(full).localGet(begin).i32Sub().localGet(end).localGet(begin).i32Sub().i32LtU().localGet(ok).i32And().localSet(ok);
        f.localGet(addr).localGet(full).i32Const(inStrides[d]!).i32Mul().i32Add().localSet(addr);
      }
      f.localGet(ok).if();
      if (combiner === "replace") {
        f.localGet(addr).localGet(up);
        emitCopyElement(f, es);
      } else {
        f.localGet(addr).localGet(addr);
        loadScalar(f, t);
        f.localGet(up);
        loadScalar(f, t);
        emitBinary(f, combiner, t, ta, tb);
        storeScalar(f, t);
      }
      f.end();
      f.localGet(up).i32Const(es).i32Add().localSet(up);
    });
  });
  return {
    name: `scatter ${combiner} ${t} ${updDims.join("x")} into ${inDims.join("x")}`,
    bytes: module.finish(),
    operandCount: 3,
    resultCount: 1,
    scratchBytes: 0,
    parallelExtent: rows0,
    costPerUnit: (elementCount(inDims) * es + elementCount(updDims) * (es * 2 + 8)) / rows0,
  };
}
