// Rows of the primitive table for gather, the scatters and the dynamic slices
// (primitives.ts spreads them into PRIMITIVES). Their semantics are XLA's: gather and
// dynamic_slice clamp each start index so that the slice lies inside the operand;
// scatter skips each update element whose operand index falls outside the operand.
//
// The derivatives follow JAX's: gather's transpose is a scatter-add (of explicitly
// clamped indices, so that no cotangent is dropped where the gather clamped); a
// scatter that replaces (or takes a min or max) finds which update won each element by
// scattering update ids, and differentiates through the winners only. Batching moves
// the batch dimension in front and makes it a window dimension (operand batched), or a
// batching dimension of operand and indices (indices batched), as JAX's rules do.
//
// Nothing here runs when the module loads: primitives.ts imports this module while
// itself loading, so the helpers it exports are only used inside the rules.

import { XlaBuilder, parameter, type XlaOp } from "../builder/xla_builder.js";
import { dynamicSlice as dynamicSliceOp, dynamicUpdateSlice as dynamicUpdateSliceOp, gather as gatherOp, scatter as scatterOp } from "../builder/data_movement.js";
import type { GatherDimensionNumbers, ScatterDimensionNumbers } from "../ir/attributes.js";
import type { Opcode } from "../ir/opcodes.js";
import { scalarShape } from "../types/shape.js";
import { asArrayValue, type ArrayBase } from "./core.js";
import { DTYPES } from "./dtypes.js";
import * as lax from "./lax.js";
import {
  bindRow, dtypeOfOp, moveBatchToFront, range, without, zerosLike,
  type BatchRule, type PrimitiveParams, type PrimitiveRow,
} from "./primitives.js";

type V = ArrayBase;

/** The tangent of `x`, zeros where it is null. */
const tangentOf = (t: V | null | undefined, x: V): V => t ?? zerosLike(x);

export interface GatherParams {
  readonly dimensionNumbers: GatherDimensionNumbers;
  readonly sliceSizes: readonly number[];
  readonly indicesAreSorted: boolean;
}

export interface ScatterParams {
  readonly dimensionNumbers: ScatterDimensionNumbers;
  readonly indicesAreSorted: boolean;
  readonly uniqueIndices: boolean;
}

type ScatterName = "scatter" | "scatterAdd" | "scatterMul" | "scatterMin" | "scatterMax";

const shift = (ds: readonly number[]): number[] => ds.map((d) => d + 1);

/** A gather and the scatter that writes where it reads (same index vectors, same windows). */
const toScatter = (g: GatherDimensionNumbers): ScatterDimensionNumbers => ({
  updateWindowDims: g.offsetDims, insertedWindowDims: g.collapsedSliceDims, scatterDimsToOperandDims: g.startIndexMap,
  inputBatchingDims: g.operandBatchingDims, scatterIndicesBatchingDims: g.startIndicesBatchingDims, indexVectorDim: g.indexVectorDim,
});

/** The index vectors' components (k arrays, each of the indices' shape without the index vector dimension). */
function indexComponents(indices: V, indexVectorDim: number): V[] {
  if (indexVectorDim === indices.ndim) return [indices];
  const batchShape = indices.shape.filter((_, i) => i !== indexVectorDim);
  return range(indices.shape[indexVectorDim]!).map((k) => {
    const start = indices.shape.map((_, i) => (i === indexVectorDim ? k : 0));
    const limit = indices.shape.map((n, i) => (i === indexVectorDim ? k + 1 : n));
    return lax.reshape(lax.slice(indices, start, limit), batchShape);
  });
}

/** `indices` clamped as gather clamps them: component k to [0, operand dim - slice size] of the dim it starts. */
function clampGatherIndices(indices: V, operandShape: readonly number[], p: GatherParams): V {
  const dn = p.dimensionNumbers;
  const bounds = dn.startIndexMap.map((d) => operandShape[d]! - p.sliceSizes[d]!);
  const hi = dn.indexVectorDim === indices.ndim
    ? lax.full(indices.shape, bounds[0]!, indices.dtype)
    : lax.broadcastInDim(asArrayValue(bounds, indices.dtype), indices.shape, [dn.indexVectorDim]);
  return lax.max(lax.min(indices, hi), 0);
}

/** The index dtype the coordinates are computed in (wide enough for the indices' values). */
const coordinateDtype = (indices: V): "int32" | "int64" => (indices.dtype === "int64" || indices.dtype === "uint64" ? "int64" : "int32");

/**
 * For every element of a scatter's updates, the operand index it lands on (an array of
 * the updates' shape + [operand rank]) and whether that index is inside the operand.
 */
export function updateCoordinates(operandShape: readonly number[], indices: V, dn: ScatterDimensionNumbers, updatesShape: readonly number[]): { coords: V; inBounds: V } {
  const dtype = coordinateDtype(indices);
  const windowOperandDims = without(range(operandShape.length), dn.insertedWindowDims, dn.inputBatchingDims);
  const updateScatterDims = without(range(updatesShape.length), dn.updateWindowDims);
  const indexBatchDims = without(range(indices.ndim), [dn.indexVectorDim]);
  const toUpdates = (component: V): V => lax.broadcastInDim(lax.convertElementType(component, dtype), updatesShape, updateScatterDims);
  const components = indexComponents(indices, dn.indexVectorDim);
  const iota = (dim: number): V => lax.broadcastedIota(dtype, updatesShape, dim);
  const coordinates = operandShape.map((_, od) => {
    const batching = dn.inputBatchingDims.indexOf(od);
    if (batching >= 0) return iota(updateScatterDims[indexBatchDims.indexOf(dn.scatterIndicesBatchingDims[batching]!)]!);
    const k = dn.scatterDimsToOperandDims.indexOf(od);
    const start = k >= 0 ? toUpdates(components[k]!) : undefined;
    const w = windowOperandDims.indexOf(od);
    if (w < 0) return start ?? lax.full(updatesShape, 0, dtype);
    const offset = iota(dn.updateWindowDims[w]!);
    return start === undefined ? offset : lax.add(start, offset);
  });
  const inBounds = coordinates.map((c, od) => lax.and(lax.ge(c, 0), lax.lt(c, operandShape[od]!)))
    .reduce((acc, b) => lax.and(acc, b), lax.full(updatesShape, true, "bool"));
  const coords = lax.concatenate(coordinates.map((c) => lax.reshape(c, [...updatesShape, 1])), updatesShape.length);
  return { coords, inBounds };
}

/** x at each of `coords`' index vectors (its last dimension): a gather of single elements. */
export function gatherPoints(x: V, coords: V): V {
  const rank = x.ndim;
  return lax.gather(x, coords, {
    offsetDims: [], collapsedSliceDims: range(rank), startIndexMap: range(rank), indexVectorDim: coords.ndim - 1,
  }, x.shape.map(() => 1));
}

const scatterWith = (name: ScatterName) => (x: V, indices: V, updates: V, p: ScatterParams): V => bindRow(name)([x, indices, updates], p)[0]!;
const scatterAdd = scatterWith("scatterAdd");

/** The update elements that land inside the operand and win their element (the last one written, as XLA writes in order), and the operand elements no update writes. */
function replacementWinners(x: V, indices: V, u: V, p: ScatterParams): { winner: V; untouched: V; coords: V } {
  const { coords, inBounds } = updateCoordinates(x.shape, indices, p.dimensionNumbers, u.shape);
  const ids = lax.add(lax.reshape(lax.iota("int32", u.size), u.shape), 1);
  const written = scatterWith("scatter")(lax.full(x.shape, 0, "int32"), indices, ids, p);
  return { winner: lax.and(inBounds, lax.eq(gatherPoints(written, coords), ids)), untouched: lax.eq(written, 0), coords };
}

/** Where a scatter-min or -max takes its value from: the operand element, the updates equal to the result, and how many tie. */
function extremalSources(x: V, indices: V, u: V, out: V, p: ScatterParams): { fromOperand: V; fromUpdate: V; count: V; coords: V } {
  const { coords, inBounds } = updateCoordinates(x.shape, indices, p.dimensionNumbers, u.shape);
  const fromUpdate = lax.and(inBounds, lax.eq(u, gatherPoints(out, coords)));
  const fromOperand = lax.eq(x, out);
  const count = lax.add(lax.convertElementType(fromOperand, x.dtype), scatterAdd(zerosLike(x), indices, lax.convertElementType(fromUpdate, x.dtype), p));
  return { fromOperand, fromUpdate, count, coords };
}

/**
 * For a scatter-multiply: d out / d operand (the product of the updates landing on each
 * element) and d out / d update (the operand element times the other updates landing on
 * it). The product of the others is computed without dividing by a zero update: from
 * the product of the nonzero updates and the count of zero ones at each element.
 */
function productPartials(x: V, indices: V, u: V, p: ScatterParams): { dOperand: V; dUpdates: V; coords: V } {
  const { coords, inBounds } = updateCoordinates(x.shape, indices, p.dimensionNumbers, u.shape);
  const ones = lax.full(x.shape, 1, x.dtype);
  const isZero = lax.eq(u, 0);
  const nonzero = lax.selectN(isZero, u, lax.full(u.shape, 1, u.dtype));
  const productNonzero = gatherPoints(scatterWith("scatterMul")(ones, indices, nonzero, p), coords);
  const zeros = gatherPoints(scatterAdd(zerosLike(x), indices, lax.convertElementType(isZero, x.dtype), p), coords);
  const none = zerosLike(u);
  const others = lax.selectN(isZero,
    lax.selectN(lax.eq(zeros, 0), none, lax.div(productNonzero, nonzero)),
    lax.selectN(lax.eq(zeros, 1), none, productNonzero));
  const dUpdates = lax.selectN(inBounds, none, lax.mul(gatherPoints(x, coords), others));
  return { dOperand: scatterWith("scatterMul")(ones, indices, u, p), dUpdates, coords };
}

/** The derivative rules of each scatter (operand 1, the indices, has none). */
const SCATTER_DERIVATIVES: { readonly [N in ScatterName]: Pick<PrimitiveRow<ScatterParams>, "jvp" | "vjp"> } = {
  scatterAdd: {
    jvp: (t, [x, indices, u], _y, p) => {
      const [tx, tu] = [tangentOf(t[0], x!), tangentOf(t[2], u!)];
      return [scatterAdd(tx!, indices!, tu!, p)];
    },
    vjp: ([ct], [x, indices, u], _y, p) => {
      const { coords, inBounds } = updateCoordinates(x!.shape, indices!, p.dimensionNumbers, u!.shape);
      return [ct!, null, lax.selectN(inBounds, zerosLike(u!), gatherPoints(ct!, coords))];
    },
  },
  scatter: {
    jvp: (t, [x, indices, u], _y, p) => {
      const [tx, tu] = [tangentOf(t[0], x!), tangentOf(t[2], u!)];
      const { winner, untouched } = replacementWinners(x!, indices!, u!, p);
      return [scatterAdd(lax.selectN(untouched, zerosLike(x!), tx!), indices!, lax.selectN(winner, zerosLike(u!), tu!), p)];
    },
    vjp: ([ct], [x, indices, u], _y, p) => {
      const { winner, untouched, coords } = replacementWinners(x!, indices!, u!, p);
      return [lax.selectN(untouched, zerosLike(x!), ct!), null, lax.selectN(winner, zerosLike(u!), gatherPoints(ct!, coords))];
    },
  },
  scatterMul: {
    jvp: (t, [x, indices, u], _y, p) => {
      const [tx, tu] = [tangentOf(t[0], x!), tangentOf(t[2], u!)];
      const { dOperand, dUpdates } = productPartials(x!, indices!, u!, p);
      return [lax.add(lax.mul(tx!, dOperand), scatterAdd(zerosLike(x!), indices!, lax.mul(tu!, dUpdates), p))];
    },
    vjp: ([ct], [x, indices, u], _y, p) => {
      const { dOperand, dUpdates, coords } = productPartials(x!, indices!, u!, p);
      return [lax.mul(ct!, dOperand), null, lax.mul(gatherPoints(ct!, coords), dUpdates)];
    },
  },
  scatterMin: extremalDerivatives(),
  scatterMax: extremalDerivatives(),
};

/** A scatter-min or -max: the tangent (cotangent) is shared evenly between the sources that attain the result, as JAX's rule does. */
function extremalDerivatives(): Pick<PrimitiveRow<ScatterParams>, "jvp" | "vjp"> {
  return {
    jvp: (t, [x, indices, u], [out], p) => {
      const [tx, tu] = [tangentOf(t[0], x!), tangentOf(t[2], u!)];
      const { fromOperand, fromUpdate, count } = extremalSources(x!, indices!, u!, out!, p);
      const sum = lax.add(lax.selectN(fromOperand, zerosLike(x!), tx!), scatterAdd(zerosLike(x!), indices!, lax.selectN(fromUpdate, zerosLike(u!), tu!), p));
      return [lax.div(sum, count)];
    },
    vjp: ([ct], [x, indices, u], [out], p) => {
      const { fromOperand, fromUpdate, count, coords } = extremalSources(x!, indices!, u!, out!, p);
      const share = lax.div(ct!, count);
      return [lax.selectN(fromOperand, zerosLike(x!), share), null, lax.selectN(fromUpdate, zerosLike(u!), gatherPoints(share, coords))];
    },
  };
}

/** Gather's batching rule (JAX's): a batched operand gets a window dimension in front; batched indices a batching dimension. */
const gatherBatch: BatchRule<GatherParams> = ([x, indices], [xd, id], p, size) => {
  const dn = p.dimensionNumbers;
  if (id === null) {
    const q: GatherParams = {
      ...p,
      dimensionNumbers: { ...dn, offsetDims: [0, ...shift(dn.offsetDims)], collapsedSliceDims: shift(dn.collapsedSliceDims), startIndexMap: shift(dn.startIndexMap), operandBatchingDims: shift(dn.operandBatchingDims) },
      sliceSizes: [size, ...p.sliceSizes],
    };
    return { values: bindRow("gather")([moveBatchToFront(x!, xd!, size), indices!], q), dims: [0] };
  }
  const i = moveBatchToFront(indices!, id, size);
  if (xd === null) {
    const q: GatherParams = { ...p, dimensionNumbers: { ...dn, offsetDims: shift(dn.offsetDims), startIndicesBatchingDims: shift(dn.startIndicesBatchingDims), indexVectorDim: dn.indexVectorDim + 1 } };
    return { values: bindRow("gather")([x!, i], q), dims: [0] };
  }
  const q: GatherParams = {
    ...p,
    dimensionNumbers: {
      offsetDims: shift(dn.offsetDims), collapsedSliceDims: shift(dn.collapsedSliceDims), startIndexMap: shift(dn.startIndexMap),
      operandBatchingDims: [0, ...shift(dn.operandBatchingDims)], startIndicesBatchingDims: [0, ...shift(dn.startIndicesBatchingDims)], indexVectorDim: dn.indexVectorDim + 1,
    },
    sliceSizes: [1, ...p.sliceSizes],
  };
  return { values: bindRow("gather")([moveBatchToFront(x!, xd!, size), i], q), dims: [0] };
};

/** Scatter's batching rule: operand and updates get the batch in front, a window dimension (indices unbatched) or a batching dimension. */
const scatterBatch = (name: ScatterName): BatchRule<ScatterParams> => ([x, indices, u], [xd, id, ud], p, size) => {
  const dn = p.dimensionNumbers;
  const operand = moveBatchToFront(x!, xd!, size);
  const updates = moveBatchToFront(u!, ud!, size);
  const common = { insertedWindowDims: shift(dn.insertedWindowDims), scatterDimsToOperandDims: shift(dn.scatterDimsToOperandDims) };
  if (id === null) {
    const q: ScatterParams = { ...p, dimensionNumbers: { ...dn, ...common, updateWindowDims: [0, ...shift(dn.updateWindowDims)], inputBatchingDims: shift(dn.inputBatchingDims) } };
    return { values: bindRow(name)([operand, indices!, updates], q), dims: [0] };
  }
  const q: ScatterParams = {
    ...p,
    dimensionNumbers: {
      ...common, updateWindowDims: shift(dn.updateWindowDims), inputBatchingDims: [0, ...shift(dn.inputBatchingDims)],
      scatterIndicesBatchingDims: [0, ...shift(dn.scatterIndicesBatchingDims)], indexVectorDim: dn.indexVectorDim + 1,
    },
  };
  return { values: bindRow(name)([operand, moveBatchToFront(indices!, id, size), updates], q), dims: [0] };
};

/** The update computation of a scatter: the new value from the current one and the update. */
function updateComputation(b: XlaBuilder, name: ScatterName, operand: XlaOp): ReturnType<XlaBuilder["build"]> {
  const sb = b.createSubBuilder(name);
  const s = scalarShape(DTYPES[dtypeOfOp(operand)]);
  const [current, update] = [parameter(sb, 0, s), parameter(sb, 1, s)];
  const opcode: Opcode | undefined = ({ scatter: undefined, scatterAdd: "add", scatterMul: "multiply", scatterMin: "minimum", scatterMax: "maximum" } as const)[name];
  return sb.build(opcode === undefined ? update : sb.addInstruction(opcode as "add", [current, update], {}));
}

function scatterRow(name: ScatterName): PrimitiveRow<ScatterParams> {
  return {
    lower: (b, [x, indices, u], p) => [scatterOp(x!, indices!, u!, updateComputation(b, name, x!), p.dimensionNumbers, { indicesAreSorted: p.indicesAreSorted, uniqueIndices: p.uniqueIndices })],
    ...SCATTER_DERIVATIVES[name],
    batch: scatterBatch(name),
    // Rows 0..4 of a [5, 6] operand; indices -1 and 5 are outside it (those updates are dropped), and repeats collide.
    example: {
      args: [{ shape: [5, 6] }, { shape: [4, 1], kind: "int32", range: [-1, 6] }, { shape: [4, 6] }],
      params: {
        dimensionNumbers: { updateWindowDims: [1], insertedWindowDims: [0], scatterDimsToOperandDims: [0], inputBatchingDims: [], scatterIndicesBatchingDims: [], indexVectorDim: 1 },
        indicesAreSorted: false, uniqueIndices: false,
      },
    },
  };
}

/** dynamic_slice as a gather of one window (its start indices stacked into one index vector): for batched start indices. */
function dynamicSliceAsGather(sliceSizes: readonly number[]): GatherParams {
  const all = range(sliceSizes.length);
  return {
    dimensionNumbers: { offsetDims: all, collapsedSliceDims: [], startIndexMap: all, operandBatchingDims: [], startIndicesBatchingDims: [], indexVectorDim: 0 },
    sliceSizes, indicesAreSorted: true,
  };
}

/** Start indices with a batch dimension each, stacked into [size, rank] index vectors (batch dimension 0). */
function stackStarts(starts: readonly V[], dims: readonly (number | null)[], size: number): V {
  const columns = starts.map((s, i) => lax.reshape(moveBatchToFront(lax.convertElementType(s, "int32"), dims[i]!, size), [size, 1]));
  return lax.concatenate(columns, 1);
}

export const GATHER_SCATTER_ROWS: { readonly [N in "gather" | ScatterName | "dynamicSlice" | "dynamicUpdateSlice"]: PrimitiveRow<PrimitiveParams[N]> } = {
  gather: {
    lower: (_b, [x, indices], p) => [gatherOp(x!, indices!, p.dimensionNumbers, p.sliceSizes, { indicesAreSorted: p.indicesAreSorted })],
    jvp: (t, [x, indices], _y, p) => bindRow("gather")([tangentOf(t[0], x!), indices!], p),
    vjp: ([ct], [x, indices], _y, p) => {
      const clamped = clampGatherIndices(indices!, x!.shape, p);
      return [scatterAdd(zerosLike(x!), clamped, ct!, { dimensionNumbers: toScatter(p.dimensionNumbers), indicesAreSorted: p.indicesAreSorted, uniqueIndices: false }), null];
    },
    batch: gatherBatch,
    // Windows of [1, 3] from a [5, 6] operand at two-component indices, some out of range (clamped) and some repeated.
    example: {
      args: [{ shape: [5, 6] }, { shape: [3, 2], kind: "int32", range: [-1, 7] }],
      params: {
        dimensionNumbers: { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0, 1], operandBatchingDims: [], startIndicesBatchingDims: [], indexVectorDim: 1 },
        sliceSizes: [1, 3], indicesAreSorted: false,
      },
    },
  },
  scatter: scatterRow("scatter"),
  scatterAdd: scatterRow("scatterAdd"),
  scatterMul: scatterRow("scatterMul"),
  scatterMin: scatterRow("scatterMin"),
  scatterMax: scatterRow("scatterMax"),

  dynamicSlice: {
    lower: (_b, [x, ...starts], { sliceSizes }) => [dynamicSliceOp(x!, starts, sliceSizes)],
    jvp: (t, [x, ...starts], _y, p) => bindRow("dynamicSlice")([tangentOf(t[0], x!), ...starts], p),
    // dynamic_update_slice clamps its start indices as dynamic_slice does: the cotangent lands where the slice was read.
    vjp: ([ct], [x, ...starts]) => [lax.dynamicUpdateSlice(zerosLike(x!), ct!, starts), ...starts.map(() => null)],
    batch: ([x, ...starts], [xd, ...sd], p, size) => {
      if (sd.every((d) => d === null)) {
        return { values: bindRow("dynamicSlice")([moveBatchToFront(x!, xd!, size), lax.full([], 0, starts[0]?.dtype ?? "int32"), ...starts], { sliceSizes: [size, ...p.sliceSizes] }), dims: [0] };
      }
      return gatherBatch([x!, stackStarts(starts, sd, size)], [xd!, 0], dynamicSliceAsGather(p.sliceSizes), size);
    },
    example: { args: [{ shape: [5, 6] }, { shape: [], kind: "int32", range: [-1, 5] }, { shape: [], kind: "int32", range: [-1, 6] }], params: { sliceSizes: [2, 3] } },
  },

  dynamicUpdateSlice: {
    lower: (_b, [x, update, ...starts]) => [dynamicUpdateSliceOp(x!, update!, starts)],
    jvp: (t, [x, update, ...starts]) => {
      return [lax.dynamicUpdateSlice(tangentOf(t[0], x!), tangentOf(t[1], update!), starts)];
    },
    vjp: ([ct], [, update, ...starts]) => [
      lax.dynamicUpdateSlice(ct!, zerosLike(update!), starts), lax.dynamicSlice(ct!, starts, update!.shape), ...starts.map(() => null),
    ],
    batch: ([x, update, ...starts], [xd, ud, ...sd], _p, size) => {
      const operand = moveBatchToFront(x!, xd!, size);
      const upd = moveBatchToFront(update!, ud!, size);
      if (sd.every((d) => d === null)) {
        return { values: [lax.dynamicUpdateSlice(operand, upd, [lax.full([], 0, starts[0]?.dtype ?? "int32"), ...starts])], dims: [0] };
      }
      // Clamped as dynamic_update_slice clamps, then a scatter of one window per batch element (JAX's rule).
      const bounds = upd.shape.slice(1).map((n, i) => operand.shape[i + 1]! - n);
      const clamped = starts.map((s, i) => lax.max(lax.min(lax.convertElementType(s, "int32"), bounds[i]!), 0));
      const all = range(starts.length);
      const p: ScatterParams = {
        dimensionNumbers: { updateWindowDims: all, insertedWindowDims: [], scatterDimsToOperandDims: all, inputBatchingDims: [], scatterIndicesBatchingDims: [], indexVectorDim: 0 },
        indicesAreSorted: true, uniqueIndices: true,
      };
      return scatterBatch("scatter")([operand, stackStarts(clamped, sd, size), upd], [0, 0, 0], p, size);
    },
    example: {
      args: [{ shape: [5, 6] }, { shape: [2, 3] }, { shape: [], kind: "int32", range: [-1, 5] }, { shape: [], kind: "int32", range: [-1, 6] }],
      params: {},
    },
  },
};
