// The single-op workloads as xlats computations, built with the builder. Each takes the
// inputs in the order of specs.ts inputShapes() and returns the outputs of outputShapes().

import {
  XlaBuilder, arrayShape, parameter, constantR0, dot, add, sub, mul, div, tanh, exp, reduce, scalarReducer,
  convGeneralDilated, type Computation, type XlaOp,
} from "../../src/index.js";
import type { Workload } from "./specs.js";

export function f32Parameter(b: XlaBuilder, index: number, dims: readonly number[], name: string): XlaOp {
  return parameter(b, index, arrayShape("f32", [...dims]), name);
}

/** Sum of `x` over `dims` (f32). */
export function sumOver(x: XlaOp, dims: readonly number[]): XlaOp {
  const b = x.builder;
  return reduce(x, constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), dims);
}

/** Maximum of `x` over `dims` (f32). */
export function maxOver(x: XlaOp, dims: readonly number[]): XlaOp {
  const b = x.builder;
  return reduce(x, constantR0(b, "f32", -Infinity), scalarReducer(b, "maximum", "f32"), dims);
}

/** Softmax along the last dimension, shifted by the row maximum. */
export function softmaxLastDim(x: XlaOp): XlaOp {
  const rank = x.arrayShape.dimensions.length;
  const last = rank - 1;
  const keep = Array.from({ length: last }, (_, i) => i);
  const e = exp(sub(x, maxOver(x, [last]), keep));
  return div(e, sumOver(e, [last]), keep);
}

export function buildKernel(w: Exclude<Workload, { kind: "mlp" | "transformer" | "gpt2" | "mlp-infer" }>): Computation {
  const b = new XlaBuilder(w.kind);
  switch (w.kind) {
    case "matmul":
      return b.build(dot(f32Parameter(b, 0, [w.m, w.k], "a"), f32Parameter(b, 1, [w.k, w.n], "b")));
    case "fused": {
      const [x, y, z] = ["a", "b", "c"].map((name, i) => f32Parameter(b, i, [w.n], name)) as [XlaOp, XlaOp, XlaOp];
      return b.build(tanh(add(mul(x, y), z)));
    }
    case "add":
      return b.build(add(f32Parameter(b, 0, [w.n], "a"), f32Parameter(b, 1, [w.n], "b")));
    case "sum":
      return b.build(sumOver(f32Parameter(b, 0, [w.n], "x"), [0]));
    case "softmax":
      return b.build(softmaxLastDim(f32Parameter(b, 0, [w.rows, w.cols], "x")));
    case "conv": {
      const x = f32Parameter(b, 0, [w.batch, w.height, w.width, w.inChannels], "x");
      const k = f32Parameter(b, 1, [w.kernel, w.kernel, w.inChannels, w.outChannels], "kernel");
      const lo = Math.floor((w.kernel - 1) / 2), hi = w.kernel - 1 - lo;
      // NHWC input, HWIO kernel, NHWC output: TensorFlow's layout, the peers' native one.
      return b.build(convGeneralDilated(x, k, [1, 1], [[lo, hi], [lo, hi]], [], [], {
        inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
        kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
        outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
      }));
    }
  }
}
