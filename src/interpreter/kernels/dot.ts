// Kernels of Dot (DotGeneral), ScaledDot and RaggedDot. All three are "for every result
// element, sum products over the contracting index space"; they differ in which
// operand elements take part. The contraction offsets are computed once per op.

import type { DotDimensionNumbers } from "../../ir/attributes.js";
import { checkDotDimensions, raggedDotMode } from "../../ir/shape/dot.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal, type Scalar } from "../../types/literal.js";
import type { ArrayShape } from "../../types/shape.js";
import type { KernelTable } from "../context.js";
import { arithFor, toNumber, type Arith } from "./arith.js";
import { resultArrayShapes } from "./kernel_util.js";

interface Contraction {
  /** lhs and rhs offsets of each point of the contracting index space. */
  readonly lhsOffsets: number[];
  readonly rhsOffsets: number[];
  /** For each point, its coordinate along `coordinateOf` (a ragged contracting dim), else 0. */
  readonly coordinate: number[];
}

function contractionOf(lhs: ArrayShape, rhs: ArrayShape, dn: DotDimensionNumbers, coordinateOf = -1): Contraction {
  const ls = rowMajorStrides(lhs.dimensions), rs = rowMajorStrides(rhs.dimensions);
  const lc = dn.lhsContractingDimensions, rc = dn.rhsContractingDimensions;
  const out: Contraction = { lhsOffsets: [], rhsOffsets: [], coordinate: [] };
  forEachIndex(lc.map((d) => lhs.dimensions[d]!), (idx) => {
    let lo = 0, ro = 0, coord = 0;
    idx.forEach((v, i) => {
      lo += v * ls[lc[i]!]!;
      ro += v * rs[rc[i]!]!;
      if (lc[i] === coordinateOf) coord = v;
    });
    out.lhsOffsets.push(lo);
    out.rhsOffsets.push(ro);
    out.coordinate.push(coord);
  });
  return out;
}

/**
 * Runs a dot: calls `element` for every result index with the lhs and rhs base offsets
 * (batch and free dimensions) and the result's lhs-free index, and stores its value.
 */
function runDot(
  resultShape: ArrayShape, lhs: ArrayShape, rhs: ArrayShape, dn: DotDimensionNumbers, rhsExcluded: readonly number[],
  element: (lhsBase: number, rhsBase: number, resultIndex: readonly number[]) => Scalar, resultPrefix = 0,
): Literal {
  const { lhsFree, rhsFree } = checkDotDimensions("dot", lhs, rhs, dn, rhsExcluded);
  const ls = rowMajorStrides(lhs.dimensions), rs = rowMajorStrides(rhs.dimensions);
  const result = Literal.zeros(resultShape);
  const nb = dn.lhsBatchDimensions.length;
  let linear = 0;
  forEachIndex(resultShape.dimensions, (full) => {
    const idx = full.slice(resultPrefix);
    let lb = 0, rb = 0;
    for (let i = 0; i < nb; i++) {
      lb += idx[i]! * ls[dn.lhsBatchDimensions[i]!]!;
      rb += idx[i]! * rs[dn.rhsBatchDimensions[i]!]!;
    }
    lhsFree.forEach((d, i) => { lb += idx[nb + i]! * ls[d]!; });
    rhsFree.forEach((d, i) => { rb += idx[nb + lhsFree.length + i]! * rs[d]!; });
    result.writeLinear(linear++, element(lb, rb, full));
  });
  return result;
}

/** Sum over the contraction of lhs[lb + .] * rhs[rb + .], in order, for the points `include` accepts. */
function sumProducts(
  arith: Arith, lhs: Scalar[], rhs: Scalar[], c: Contraction, lb: number, rb: number, include?: (coordinate: number) => boolean,
): Scalar {
  let acc = arith.zero;
  for (let j = 0; j < c.lhsOffsets.length; j++) {
    if (include !== undefined && !include(c.coordinate[j]!)) continue;
    acc = arith.madd(acc, lhs[lb + c.lhsOffsets[j]!]!, rhs[rb + c.rhsOffsets[j]!]!);
  }
  return acc;
}

/** An operand's elements in the accumulation domain. */
const operandValues = (arith: Arith, operand: Literal): Scalar[] =>
  operand.values().map((v) => arith.from(v, operand.elementType));

/**
 * Raises ragged-dot's ExecutionError for a negative group size. The CPU backends run it
 * before their kernels (a check step), so every backend raises the same error.
 */
export function checkGroupSizes(groupSizes: Literal): void {
  groupSizes.values().forEach((s, k) => {
    if (Number(s) < 0) throw negativeGroupSizeError(k, s as number | bigint);
  });
}

/** The error of group size `size` at `index`, negative (the WebGPU kernel reports one in a status word: webgpu/ragged_dot_wgsl.ts). */
export const negativeGroupSizeError = (index: number, size: number | bigint): ExecutionError =>
  new ExecutionError(`ragged-dot: group_sizes[${index}] is ${size}; group sizes must be non-negative`);

/** Start offsets of each group from the group sizes (a prefix sum). */
function groupStarts(groupSizes: Literal): number[] {
  checkGroupSizes(groupSizes);
  const starts = [0];
  for (const s of groupSizes.values()) starts.push(starts.at(-1)! + Number(s));
  return starts;
}

/** The group that `index` falls in, or -1 past the last group. */
function groupOf(starts: readonly number[], index: number): number {
  for (let k = 0; k + 1 < starts.length; k++) if (index >= starts[k]! && index < starts[k + 1]!) return k;
  return -1;
}

/** Each element of `operand` multiplied by its scale (the scale repeats over blocks). */
function applyBlockScale(operand: Literal, scale: Literal): number[] {
  const dims = operand.dimensions, sdims = scale.dimensions;
  const block = dims.map((d, i) => (sdims[i] === 0 ? 1 : d / sdims[i]!));
  const sStrides = rowMajorStrides(sdims);
  const values = operand.values(), scales = scale.values().map(toNumber);
  const out: number[] = [];
  let k = 0;
  forEachIndex(dims, (idx) => {
    let so = 0;
    idx.forEach((v, i) => { so += Math.floor(v / block[i]!) * sStrides[i]!; });
    out.push(toNumber(values[k++]!) * scales[so]!);
  });
  return out;
}

export const dotKernels: KernelTable<"dot" | "scaledDot" | "raggedDot"> = {
  dot: (inst, operands, ctx) => {
    const [lhs, rhs] = operands as [Literal, Literal];
    const shape = resultArrayShapes(inst.shape)[0]!;
    const arith = arithFor(shape.elementType, [lhs.elementType, rhs.elementType], ctx.accumulation);
    const dn = inst.attrs.dimensionNumbers;
    const lv = operandValues(arith, lhs), rv = operandValues(arith, rhs);
    const c = contractionOf(lhs.arrayShape, rhs.arrayShape, dn);
    return runDot(shape, lhs.arrayShape, rhs.arrayShape, dn, [], (lb, rb) => sumProducts(arith, lv, rv, c, lb, rb));
  },

  scaledDot: (inst, operands, ctx) => {
    const [lhs, rhs, lhsScale, rhsScale] = operands as [Literal, Literal, Literal, Literal];
    const shape = resultArrayShapes(inst.shape)[0]!;
    const arith = arithFor(shape.elementType, [lhs.elementType, rhs.elementType], ctx.accumulation);
    const dn = inst.attrs.dimensionNumbers;
    // The scaled values are exact products in doubles, converted once to the accumulation type.
    const lv = applyBlockScale(lhs, lhsScale).map((v) => arith.from(v, "f64"));
    const rv = applyBlockScale(rhs, rhsScale).map((v) => arith.from(v, "f64"));
    const c = contractionOf(lhs.arrayShape, rhs.arrayShape, dn);
    return runDot(shape, lhs.arrayShape, rhs.arrayShape, dn, [], (lb, rb) => sumProducts(arith, lv, rv, c, lb, rb));
  },

  // chlo.ragged_dot: group k of the ragged lhs dimension covers the next group_sizes[k]
  // indices. Non-contracting: rows of group k use rhs slice k of the group dimension.
  // Contracting: result slice k sums only over group k's indices. Batch: a plain dot on
  // the grouped batch entries. Indices past the last group give zeros.
  raggedDot: (inst, operands, ctx) => {
    const [lhs, rhs, groupSizes] = operands as [Literal, Literal, Literal];
    const shape = resultArrayShapes(inst.shape)[0]!;
    const arith = arithFor(shape.elementType, [lhs.elementType, rhs.elementType], ctx.accumulation);
    const rdn = inst.attrs.dimensionNumbers;
    const dn = rdn.dotDimensionNumbers;
    const mode = raggedDotMode(lhs.arrayShape, rhs.arrayShape, groupSizes.arrayShape, rdn);
    const starts = groupStarts(groupSizes);
    const lv = operandValues(arith, lhs), rv = operandValues(arith, rhs);
    const c = contractionOf(lhs.arrayShape, rhs.arrayShape, dn, mode.raggedDim);
    const { lhsFree } = checkDotDimensions("raggedDot", lhs.arrayShape, rhs.arrayShape, dn, rdn.rhsGroupDimensions);
    const nb = dn.lhsBatchDimensions.length;
    if (mode.kind === "contracting") {
      return runDot(shape, lhs.arrayShape, rhs.arrayShape, dn, [], (lb, rb, full) => {
        const k = full[0]!;
        return sumProducts(arith, lv, rv, c, lb, rb, (coord) => coord >= starts[k]! && coord < starts[k + 1]!);
      }, 1);
    }
    // The result index of the ragged dimension: a batch position or an lhs-free position.
    const raggedResultPos = mode.kind === "batch"
      ? dn.lhsBatchDimensions.indexOf(mode.raggedDim) : nb + lhsFree.indexOf(mode.raggedDim);
    const groupStride = mode.kind === "nonContracting"
      ? rowMajorStrides(rhs.dimensions)[rdn.rhsGroupDimensions[0]!]! : 0;
    return runDot(shape, lhs.arrayShape, rhs.arrayShape, dn, rdn.rhsGroupDimensions, (lb, rb, full) => {
      const k = groupOf(starts, full[raggedResultPos]!);
      if (k < 0) return arith.zero;
      return sumProducts(arith, lv, rv, c, lb, rb + k * groupStride);
    });
  },
};
