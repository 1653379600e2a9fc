// Shared by the wasm and native kernel tests of GEMM and convolution: the independent
// double-precision GEMM reference, and convolutions built with the builder.

import { arrayShape, convGeneralDilated, parameter, XlaBuilder, type ConvDimensionNumbers } from "../../src/index.js";
import type { Instruction } from "../../src/ir/computation.js";
import type { GemmSpec } from "../../src/compiler/kernel/gemm_plan.js";

/** C = A B in doubles from the stored layouts: the independent reference. */
export function gemmReference(spec: GemmSpec, a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const { batch, m, n, k } = spec;
  const c = new Float64Array(batch * m * n);
  for (let bi = 0; bi < batch; bi++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let p = 0; p < k; p++) {
          const av = spec.lhsTransposed ? a[bi * m * k + p * m + i]! : a[bi * m * k + i * k + p]!;
          const bv = spec.rhsTransposed ? b[bi * k * n + j * k + p]! : b[bi * k * n + p * n + j]!;
          sum += av * bv;
        }
        c[bi * m * n + i * n + j] = sum;
      }
    }
  }
  return c;
}

export const NHWC: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
};

export interface ConvCase {
  input: number[];
  kernel: number[];
  strides?: number[];
  padding?: [number, number][];
  rhsDilation?: number[];
  lhsDilation?: number[];
  dn?: ConvDimensionNumbers;
  featureGroupCount?: number;
}

/** The convolution a case describes (NHWC/HWIO unless `dn` says otherwise), as a computation. */
export function buildConv(c: ConvCase, type: "f32" | "f64" = "f32") {
  const b = new XlaBuilder("conv");
  const x = parameter(b, 0, arrayShape(type, c.input));
  const w = parameter(b, 1, arrayShape(type, c.kernel));
  const root = convGeneralDilated(x, w, c.strides ?? [1, 1], c.padding ?? [[0, 0], [0, 0]], c.lhsDilation ?? [], c.rhsDilation ?? [], c.dn ?? NHWC, c.featureGroupCount ?? 1);
  return { computation: b.build(root), conv: root.instruction as Instruction<"convolution"> };
}
