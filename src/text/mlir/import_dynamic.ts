// StableHLO's shape-polymorphic ops at import. Each becomes its static op when its shape
// operands are constants (what StableHLO's canonicalizer does), else stays a dynamic op
// until refine-shapes or the interpreter knows the values (ir/dynamic_ops.ts).

import type { Instruction } from "../../ir/computation.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import {
  constantInts, gatherAttributes, lowerConvolution, lowerGather, resultArray, type LowerContext,
} from "./import_ops.js";

/** The declared result of a shape-polymorphic op (`?` dimensions allowed). */
function dynamicResult(ctx: LowerContext): ArrayShape {
  return resultArray(ctx, 0, false);
}

function isConstant(inst: Instruction | undefined): inst is Instruction<"constant"> {
  return inst?.opcode === "constant";
}

export const DYNAMIC_SUGAR: Readonly<Record<string, (ctx: LowerContext) => Instruction>> = {
  "stablehlo.dynamic_broadcast_in_dim": (ctx) => {
    const broadcastDimensions = ctx.r.ints(["broadcast_dimensions", "dims"]);
    const known = (key: string): number[] | undefined => (ctx.r.get(key) === undefined ? undefined : ctx.r.ints(key));
    const knownExpandingDimensions = known("known_expanding_dimensions");
    const knownNonexpandingDimensions = known("known_nonexpanding_dimensions");
    if (!isConstant(ctx.operands[1])) {
      return ctx.add("dynamicBroadcastInDim", ctx.operands, {
        shape: dynamicResult(ctx), broadcastDimensions,
        ...(knownExpandingDimensions !== undefined ? { knownExpandingDimensions } : {}),
        ...(knownNonexpandingDimensions !== undefined ? { knownNonexpandingDimensions } : {}),
      }, ctx.declared);
    }
    return ctx.add("broadcastInDim", [ctx.operands[0]!],
      { dimensions: constantInts(ctx, ctx.operands[1]!, "output_dimensions"), broadcastDimensions }, ctx.declared);
  },
  "stablehlo.dynamic_iota": (ctx) => {
    const iotaDimension = ctx.r.int(["iota_dimension", "dim"]);
    if (!isConstant(ctx.operands[0])) return ctx.add("dynamicIota", ctx.operands, { shape: dynamicResult(ctx), iotaDimension }, ctx.declared);
    const dims = constantInts(ctx, ctx.operands[0]!, "output_shape");
    return ctx.add("iota", [], { shape: arrayShape(dynamicResult(ctx).elementType, dims), iotaDimension }, ctx.declared);
  },
  "stablehlo.dynamic_pad": (ctx) => {
    if (!ctx.operands.slice(2, 5).every(isConstant)) return ctx.add("dynamicPad", ctx.operands, { shape: dynamicResult(ctx) }, ctx.declared);
    return ctx.add("pad", ctx.operands.slice(0, 2), {
      edgePaddingLow: constantInts(ctx, ctx.operands[2]!, "edge_padding_low"),
      edgePaddingHigh: constantInts(ctx, ctx.operands[3]!, "edge_padding_high"),
      interiorPadding: constantInts(ctx, ctx.operands[4]!, "interior_padding"),
    }, ctx.declared);
  },
  "stablehlo.dynamic_gather": (ctx) => {
    if (!isConstant(ctx.operands[2])) {
      const gather = gatherAttributes(ctx, []);
      return ctx.add("dynamicGather", ctx.operands, {
        shape: dynamicResult(ctx), dimensionNumbers: gather.dimensionNumbers, indicesAreSorted: gather.indicesAreSorted,
      }, ctx.declared);
    }
    return lowerGather(ctx, constantInts(ctx, ctx.operands[2]!, "slice_sizes"), ctx.operands.slice(0, 2));
  },
  "stablehlo.dynamic_conv": (ctx) => {
    const padding = ctx.operands[2];
    if (!isConstant(padding)) return lowerConvolution(ctx, ctx.operands.slice(0, 2), undefined, padding);
    const flat = constantInts(ctx, padding, "padding");
    const rows: number[][] = [];
    for (let i = 0; i < flat.length; i += 2) rows.push([flat[i]!, flat[i + 1]!]);
    return lowerConvolution(ctx, ctx.operands.slice(0, 2), rows);
  },
  "stablehlo.real_dynamic_slice": (ctx) => {
    if (!ctx.operands.slice(1, 4).every(isConstant)) return ctx.add("realDynamicSlice", ctx.operands, { shape: dynamicResult(ctx) }, ctx.declared);
    return ctx.add("slice", [ctx.operands[0]!], {
      startIndices: constantInts(ctx, ctx.operands[1]!, "start_indices"), limitIndices: constantInts(ctx, ctx.operands[2]!, "limit_indices"),
      strides: constantInts(ctx, ctx.operands[3]!, "strides"),
    }, ctx.declared);
  },
};
