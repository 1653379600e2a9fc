// Kernel of Convolution, following StableHLO's definition: with feature_group_count G
// the input features and the kernel output features are split into G groups and group
// g of the output uses group g of the input; with batch_group_count B the input batch
// and the kernel output features are split into B groups the same way. Within a group,
// output(b, o, spatial) sums input(b, i, base position) * kernel(o, i, window position)
// over input features and window positions, where padding and lhs-dilation holes
// contribute nothing. The sum runs over window positions (row-major), then input
// features, in the arithmetic of arith.ts: the order of StableHLO's reference
// interpreter (a dot over the window's spatial dimensions, then the feature), whose
// padding and holes add zero products (the same sums, but for a -0 turned +0 and a
// non-finite kernel value times a padding zero).

import { baseIndexOf } from "../../ir/shape/window.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal, type Scalar } from "../../types/literal.js";
import type { Kernel } from "../context.js";
import { arithFor } from "./arith.js";
import { resultArrayShapes } from "./kernel_util.js";

export const convolutionKernel: Kernel<"convolution"> = (inst, operands, ctx) => {
  const [lhs, rhs] = operands as [Literal, Literal];
  const { window, dimensionNumbers: dn, featureGroupCount: fgc, batchGroupCount: bgc } = inst.attrs;
  const shape = resultArrayShapes(inst.shape)[0]!;
  const arith = arithFor(shape.elementType, [lhs.elementType, rhs.elementType], ctx.accumulation);
  const lv = lhs.values().map((v) => arith.from(v, lhs.elementType));
  const rv = rhs.values().map((v) => arith.from(v, rhs.elementType));
  const ldims = lhs.dimensions, rdims = rhs.dimensions;
  const ls = rowMajorStrides(ldims), rs = rowMajorStrides(rdims);
  const spatialCount = dn.inputSpatialDimensions.length;
  const kernelIn = rdims[dn.kernelInputFeatureDimension]!;
  const outFeatures = rdims[dn.kernelOutputFeatureDimension]!;
  const outPerFeatureGroup = outFeatures / fgc;
  const outPerBatchGroup = outFeatures / bgc;
  const batchPerGroup = ldims[dn.inputBatchDimension]! / bgc;
  const windowSizes = window.map((w) => w.size);
  const baseSizes = dn.inputSpatialDimensions.map((d) => ldims[d]!);

  const result = Literal.zeros(shape);
  let linear = 0;
  const outSpatial = new Array<number>(spatialCount);
  forEachIndex(shape.dimensions, (out) => {
    const b = out[dn.outputBatchDimension]!;
    const o = out[dn.outputFeatureDimension]!;
    for (let s = 0; s < spatialCount; s++) outSpatial[s] = out[dn.outputSpatialDimensions[s]!]!;
    const featureGroup = Math.floor(o / outPerFeatureGroup);
    const batchGroup = Math.floor(o / outPerBatchGroup);
    const lhsBatchOffset = (batchGroup * batchPerGroup + b) * ls[dn.inputBatchDimension]!;
    const rhsOutOffset = o * rs[dn.kernelOutputFeatureDimension]!;
    let acc: Scalar = arith.zero;
    forEachIndex(windowSizes, (k) => {
      let lo = lhsBatchOffset, ro = rhsOutOffset;
      for (let s = 0; s < spatialCount; s++) {
        const base = baseIndexOf(outSpatial[s]!, k[s]!, window[s]!, baseSizes[s]!);
        if (base < 0) return;
        lo += base * ls[dn.inputSpatialDimensions[s]!]!;
        ro += k[s]! * rs[dn.kernelSpatialDimensions[s]!]!;
      }
      for (let i = 0; i < kernelIn; i++) {
        const inFeature = featureGroup * kernelIn + i;
        const x = lv[lo + inFeature * ls[dn.inputFeatureDimension]!]!;
        const w = rv[ro + i * rs[dn.kernelInputFeatureDimension]!]!;
        acc = arith.madd(acc, x, w);
      }
    });
    result.writeLinear(linear++, acc);
  });
  return result;
};
