// The schedule of a dynamic-slice or dynamic-update-slice that runs on its own (the
// fusion pass folds most dynamic slices into loop fusions; dynamic-update-slice is never
// fused), which the WebAssembly and the C renderers print (wasm/routines/dynamic_slice.ts,
// native/dynamic_slice_c.ts).
//
// Start indices are scalars in device memory, clamped as the interpreter does (XLA's
// rule): start[d] = clamp(index[d], 0, operand_dim[d] - window_dim[d]), exact for every
// integer index type (64-bit ones clamp before narrowing). Both ops copy rows (the last
// dimension), and a unit of work is one row of the result:
// - dynamic-slice: result row r (coordinates c over the slice's outer dimensions) is
//   the operand's row at start + c, from column start[last];
// - dynamic-update-slice: result rows [begin, end) are the operand's rows, copied in one
//   piece unless the result is the operand's buffer (the planner wrote it in place: a
//   dying temporary, or a donated parameter such as a decode step's KV cache); then the
//   update's rows are visited (coordinates u over its outer dimensions), and each whose
//   result row (start + u) lies in [begin, end) is copied over columns [start[last],
//   start[last] + update's last). Visiting the update's rows rather than testing every
//   result row keeps an in-place write as cheap as the update: a decode step's
//   [12,1,64] into [12,128,64] visits 12 rows, not 1536.

import type { Instruction } from "../../ir/computation.js";
import { storageBytes, type ElementType } from "../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../types/shape.js";
import { rowMajorStrides } from "../../types/index_util.js";
import type { Declined } from "./declined.js";

/** Element types a start index may have. */
const INDEX_TYPES: ReadonlySet<ElementType> = new Set<ElementType>(["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]);

export const isIndexType = (t: ElementType): boolean => INDEX_TYPES.has(t);

/** Buffers this large need offsets past 32 bits, which the CPU kernels' contract does not have. */
const OFFSET_LIMIT = 2 ** 31;

export interface DynamicSlicePlan {
  readonly kind: "dynamicSlice" | "dynamicUpdateSlice";
  /** For dumps: `dynamic-slice f32 4x8 -> 2x8`, `dynamic-update-slice f32 1x64 into 128x64`. */
  readonly name: string;
  readonly elementBytes: number;
  readonly operandDims: readonly number[];
  /** The slice's sizes, or the update's dimensions. */
  readonly windowDims: readonly number[];
  /** The type of each start index (one per dimension; operands 1.. of a slice, 2.. of an update). */
  readonly indexTypes: readonly ElementType[];
  /** start[d] is clamped to [0, startLimits[d]]. */
  readonly startLimits: readonly number[];
  /** The outer dimensions of the result's rows, which the units of work number in row-major order ([] for rank 0 and 1). */
  readonly rowDims: readonly number[];
  /** Bytes a row of the operand, of the window (an element each for rank 0). */
  readonly operandRowBytes: number;
  readonly windowRowBytes: number;
  /** The window's outer dimensions (a dynamic-update-slice visits their rows); [] for rank 0 and 1. */
  readonly windowRowDims: readonly number[];
  /** Rows between consecutive indices of each of the operand's outer dimensions. */
  readonly operandRowStrides: readonly number[];
  /** Bytes between consecutive indices of each dimension, of the operand and of the window. */
  readonly operandStrides: readonly number[];
  readonly windowStrides: readonly number[];
  /** Index of the first start index among the instruction's operands. */
  readonly firstStart: number;
  readonly parallelExtent: number;
  readonly costPerUnit: number;
}

function arrayOf(inst: Instruction | undefined): ArrayShape | undefined {
  return inst !== undefined && inst.shape.kind === "array" ? inst.shape : undefined;
}

function common(
  inst: Instruction, kind: DynamicSlicePlan["kind"], operand: ArrayShape, windowDims: readonly number[], firstStart: number, name: string,
): DynamicSlicePlan | Declined {
  const opDims = operand.dimensions;
  const rank = opDims.length;
  const indexTypes: ElementType[] = [];
  for (const o of inst.operands.slice(firstStart)) {
    const t = arrayOf(o)?.elementType;
    if (t === undefined || !isIndexType(t)) return { declined: `${kind}: start index type ${t ?? "token"}` };
    indexTypes.push(t);
  }
  if (indexTypes.length !== rank) return { declined: `${kind}: one start index per dimension expected` };
  if (windowDims.some((s, d) => s > opDims[d]!)) return { declined: `${kind}: window larger than the operand` };
  const es = storageBytes(operand.elementType);
  if (elementCount(opDims) * es >= OFFSET_LIMIT) return { declined: `${kind}: operand too large for 32-bit offsets` };
  const operandRowBytes = (rank === 0 ? 1 : opDims[rank - 1]!) * es;
  const windowRowBytes = (rank === 0 ? 1 : windowDims[rank - 1]!) * es;
  const rowDims = (kind === "dynamicSlice" ? windowDims : opDims).slice(0, -1);
  // Bytes copied a row (a slice: a window row; an update: an operand row, unless in
  // place, and maybe a window row), and 8 for the row's own bookkeeping.
  const costPerUnit = (kind === "dynamicSlice" ? windowRowBytes : operandRowBytes + windowRowBytes) + 8;
  return {
    kind, name, elementBytes: es, operandDims: opDims, windowDims, indexTypes,
    startLimits: windowDims.map((s, d) => opDims[d]! - s),
    rowDims, operandRowBytes, windowRowBytes,
    windowRowDims: windowDims.slice(0, -1), operandRowStrides: rowMajorStrides(opDims.slice(0, -1)),
    operandStrides: rowMajorStrides(opDims).map((s) => s * es),
    windowStrides: rowMajorStrides(windowDims).map((s) => s * es),
    firstStart, parallelExtent: elementCount(rowDims), costPerUnit,
  };
}

export function planDynamicSlice(inst: Instruction<"dynamicSlice">): DynamicSlicePlan | Declined {
  const operand = arrayOf(inst.operands[0]);
  if (operand === undefined || inst.shape.kind !== "array") return { declined: "dynamicSlice: operands" };
  const sizes = inst.attrs.sliceSizes;
  return common(inst, "dynamicSlice", operand, sizes, 1,
    `dynamic-slice ${operand.elementType} ${operand.dimensions.join("x")} -> ${sizes.join("x")}`);
}

export function planDynamicUpdateSlice(inst: Instruction<"dynamicUpdateSlice">): DynamicSlicePlan | Declined {
  const operand = arrayOf(inst.operands[0]);
  const update = arrayOf(inst.operands[1]);
  if (operand === undefined || update === undefined || inst.shape.kind !== "array") return { declined: "dynamicUpdateSlice: operands" };
  return common(inst, "dynamicUpdateSlice", operand, update.dimensions, 2,
    `dynamic-update-slice ${operand.elementType} ${update.dimensions.join("x")} into ${operand.dimensions.join("x")}`);
}
