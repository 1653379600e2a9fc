import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, conv, convGeneral, convGeneralDilated, convWithGeneralDimensions, convWithGeneralPadding,
  createDefaultConvDimensionNumbers, dotGeneral, Literal, parameter, XlaBuilder, type ConvDimensionNumbers,
} from "../../src/index.js";
import { assertClose, rng, run } from "../reduction/support.js";
import { elementCount } from "../../src/types/shape.js";

// [b, 0, 1, f] x [0, 1, i, o] -> [b, 0, 1, f] (NHWC / HWIO), as in StableHLO's convolution.mlir.
const NHWC: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelOutputFeatureDimension: 3, kernelInputFeatureDimension: 2, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
};
const base4x4 = [[[[1], [2], [5], [6]], [[3], [4], [7], [8]], [[10], [11], [14], [15]], [[12], [13], [16], [17]]]];
const filled = (t: "s64" | "s8", dims: number[], v: number) =>
  Literal.fromValues(t, dims, new Array(elementCount(dims)).fill(t === "s64" ? BigInt(v) : v));
const big = (nested: number[][][][]) => Literal.from("s64", nested.map((a) => a.map((b) => b.map((c) => c.map(BigInt)))));

test("convolution: conformance lhs dilation and stride (s64, s8 -> s32)", () => {
  const r = run([big(base4x4), filled("s64", [3, 3, 1, 1], 1)], (_, [l, k]) =>
    convGeneralDilated(l!, k!, [4, 4], [[0, 0], [0, 0]], [2, 2], [1, 1], NHWC));
  assert.deepEqual(r.toNested(), [[[[10n], [26n]], [[46n], [62n]]]]);
  const s8 = Literal.fromValues("s8", [1, 4, 4, 1], base4x4.flat(3));
  const r8 = run([s8, filled("s8", [3, 3, 1, 1], 10)], (_, [l, k]) =>
    convGeneralDilated(l!, k!, [4, 4], [[0, 0], [0, 0]], [2, 2], [1, 1], NHWC, 1, 1, { preferredElementType: "s32" }));
  assert.equal(r8.elementType, "s32");
  assert.deepEqual(r8.toNested(), [[[[100], [260]], [[460], [620]]]]);
});

test("convolution: conformance padding with lhs dilation", () => {
  const r = run([big(base4x4), filled("s64", [3, 3, 1, 1], 1)], (_, [l, k]) =>
    convGeneralDilated(l!, k!, [4, 4], [[1, 1], [1, 1]], [2, 2], [1, 1], NHWC));
  assert.deepEqual(r.toNested(), [[[[1n], [5n]], [[10n], [14n]]]]);
});

test("convolution: conformance batch_group_count = 4 and feature_group_count = 2", () => {
  // [0, b, 1, f] x [0, 1, i, o] -> [b, 0, 1, f]
  const bg: ConvDimensionNumbers = { ...NHWC, inputBatchDimension: 1, inputSpatialDimensions: [0, 2] };
  const r = run([big(base4x4), filled("s64", [1, 2, 1, 4], 1)], (_, [l, k]) =>
    convGeneralDilated(l!, k!, [4, 4], [[0, 0], [0, 0]], [2, 2], [1, 1], bg, 1, 4));
  assert.deepEqual(r.toNested(), [[[[1n, 3n, 10n, 12n], [5n, 7n, 14n, 16n]]]]);
  // [b, 0, f, 1] x [0, i, 1, o] -> [b, 0, 1, f]
  const fg: ConvDimensionNumbers = {
    ...NHWC, inputFeatureDimension: 2, inputSpatialDimensions: [1, 3], kernelInputFeatureDimension: 1, kernelSpatialDimensions: [0, 2],
  };
  const r2 = run([big(base4x4), filled("s64", [1, 2, 1, 4], 1)], (_, [l, k]) =>
    convGeneralDilated(l!, k!, [4, 4], [[0, 0], [0, 0]], [2, 2], [1, 1], fg, 2, 1));
  assert.deepEqual(r2.toNested(), [[[[3n, 3n, 11n, 11n]], [[21n, 21n, 29n, 29n]]]]);
});

test("conv: VALID and SAME padding with default dimension numbers; strides", () => {
  const x = Literal.from("f32", [[[1, 2, 3, 4, 5]]]); // [batch 1, feature 1, width 5]
  const k = Literal.from("f32", [[[1, 1, 1]]]);
  assert.deepEqual(run([x, k], (_, [l, w]) => conv(l!, w!, [1], "VALID")).toNumbers(), [6, 9, 12]);
  assert.deepEqual(run([x, k], (_, [l, w]) => conv(l!, w!, [1], "SAME")).toNumbers(), [3, 6, 9, 12, 9]);
  assert.deepEqual(run([x, k], (_, [l, w]) => conv(l!, w!, [2], "SAME")).toNumbers(), [3, 9, 9]);
  assert.deepEqual(run([x, k], (_, [l, w]) => convWithGeneralPadding(l!, w!, [1], [[-1, 2]])).toNumbers(), [9, 12, 9, 5]);
  assert.deepEqual(run([x, k], (_, [l, w]) => convWithGeneralDimensions(l!, w!, [1], "VALID", createDefaultConvDimensionNumbers(1))).toNumbers(), [6, 9, 12]);
  assert.deepEqual(run([x, Literal.from("f32", [[[1, 0, -1]]])], (_, [l, w]) =>
    convGeneralDilated(l!, w!, [1], [[0, 0]], [], [], createDefaultConvDimensionNumbers(1), 1, 1, { windowReversal: [true] })).toNumbers(), [2, 2, 2]);
  // rhs dilation 2: taps at offsets 0, 2, 4.
  assert.deepEqual(run([x, k], (_, [l, w]) => convGeneralDilated(l!, w!, [1], [[0, 0]], [1], [2], createDefaultConvDimensionNumbers(1))).toNumbers(), [9]);
});

test("conv: depthwise (feature_group_count = features) by hand", () => {
  // Two channels, each convolved with its own kernel: [1,2,3]*[1,1] and [10,20,30]*[1,-1].
  const x = Literal.from("f32", [[[1, 2, 3], [10, 20, 30]]]);
  const k = Literal.from("f32", [[[1, 1]], [[1, -1]]]); // [out 2, in 1, width 2]
  assert.deepEqual(run([x, k], (_, [l, w]) => conv(l!, w!, [1], "VALID", 2)).toNested(), [[[3, 5], [-10, -10]]]);
});

/** Direct convolution on an NCHW-shaped nested problem, following the seed's pseudo-code (with dilations). */
function directConv2d(
  input: number[], [N, C, H, W]: number[], kernel: number[], [O, , KH, KW]: number[], stride: number[], pad: [number, number][],
  lhsDil: number[], rhsDil: number[],
): { values: number[]; dims: number[] } {
  const dh = (H - 1) * lhsDil[0]! + 1, dw = (W - 1) * lhsDil[1]! + 1;
  const spanH = (KH - 1) * rhsDil[0]! + 1, spanW = (KW - 1) * rhsDil[1]! + 1;
  const OH = Math.floor((dh + pad[0]![0] + pad[0]![1] - spanH) / stride[0]!) + 1;
  const OW = Math.floor((dw + pad[1]![0] + pad[1]![1] - spanW) / stride[1]!) + 1;
  const values: number[] = [];
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++) {
    let s = 0;
    for (let c = 0; c < C; c++) for (let ky = 0; ky < KH; ky++) for (let kx = 0; kx < KW; kx++) {
      const py = oy * stride[0]! + ky * rhsDil[0]! - pad[0]![0], px = ox * stride[1]! + kx * rhsDil[1]! - pad[1]![0];
      if (py < 0 || px < 0 || py >= dh || px >= dw || py % lhsDil[0]! !== 0 || px % lhsDil[1]! !== 0) continue;
      s += input[((n * C + c) * H + py / lhsDil[0]!) * W + px / lhsDil[1]!]! * kernel[((o * C + c) * KH + ky) * KW + kx]!;
    }
    values.push(s);
  }
  return { values, dims: [N, O, Math.max(OH, 0), Math.max(OW, 0)] };
}

test("convolution: property, random 2D convolutions agree with the direct pseudo-code loop", () => {
  const next = rng(21);
  const pick = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  for (let trial = 0; trial < 25; trial++) {
    const dims = [pick(1, 2), pick(1, 3), pick(2, 5), pick(2, 5)];
    const kdims = [pick(1, 3), dims[1]!, pick(1, 2), pick(1, 2)];
    const stride = [pick(1, 2), pick(1, 2)], lhsDil = [pick(1, 2), pick(1, 2)], rhsDil = [pick(1, 2), pick(1, 2)];
    const pad: [number, number][] = [[pick(-1, 2), pick(-1, 2)], [pick(-1, 2), pick(0, 2)]];
    const input = Array.from({ length: elementCount(dims) }, () => pick(-5, 5));
    const kernel = Array.from({ length: elementCount(kdims) }, () => pick(-5, 5));
    const expected = directConv2d(input, dims, kernel, kdims, stride, pad, lhsDil, rhsDil);
    if (expected.dims.some((d) => d <= 0)) continue;
    const r = run([Literal.fromValues("f64", dims, input), Literal.fromValues("f64", kdims, kernel)], (_, [l, k]) =>
      convGeneralDilated(l!, k!, stride, pad, lhsDil, rhsDil, createDefaultConvDimensionNumbers(2)));
    assert.deepEqual(r.dimensions, expected.dims, `trial ${trial}`);
    assertClose(r.toNumbers(), expected.values, 0, `trial ${trial}`);
  }
});

test("convolution: property, a strided VALID convolution equals a dot on im2col patches", () => {
  const next = rng(3);
  for (let trial = 0; trial < 10; trial++) {
    const [C, H, W, O, KH, KW, S] = [1 + (trial % 3), 4, 5, 2, 2, 3, 1 + (trial % 2)];
    const input = Array.from({ length: C * H * W }, () => Math.round(next() * 10 - 5));
    const kernel = Array.from({ length: O * C * KH * KW }, () => Math.round(next() * 10 - 5));
    const OH = Math.floor((H - KH) / S) + 1, OW = Math.floor((W - KW) / S) + 1;
    // Patches [OH*OW, C*KH*KW] in the kernel's (c, ky, kx) order.
    const patches: number[] = [];
    for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++)
      for (let c = 0; c < C; c++) for (let ky = 0; ky < KH; ky++) for (let kx = 0; kx < KW; kx++)
        patches.push(input[(c * H + oy * S + ky) * W + ox * S + kx]!);
    const viaDot = run([Literal.fromValues("f32", [OH * OW, C * KH * KW], patches), Literal.fromValues("f32", [O, C * KH * KW], kernel)],
      (_, [p, k]) => dotGeneral(k!, p!, { lhsContractingDimensions: [1], rhsContractingDimensions: [1] })); // [O, OH*OW]
    const viaConv = run([Literal.fromValues("f32", [1, C, H, W], input), Literal.fromValues("f32", [O, C, KH, KW], kernel)],
      (_, [l, k]) => conv(l!, k!, [S, S], "VALID"));
    assert.deepEqual(viaConv.dimensions, [1, O, OH, OW]);
    assert.deepEqual(viaConv.toNumbers(), viaDot.toNumbers());
  }
});

test("convolution: shape errors", () => {
  const b = new XlaBuilder("bad");
  const x = parameter(b, 0, arrayShape("f32", [1, 4, 5]));
  const k3 = parameter(b, 1, arrayShape("f32", [2, 3, 2]));
  const k4 = parameter(b, 2, arrayShape("f32", [2, 4, 2]));
  assert.throws(() => conv(x, k3, [1], "VALID"),
    /convolution: rhs: kernel input feature dimension has size 3 but input features \/ feature_group_count = 4 \/ 1 = 4/);
  assert.throws(() => conv(x, k4, [1], "VALID", 2, 2), /one of them must be 1/);
  assert.throws(() => conv(x, k4, [1], "VALID", 3), /3 does not divide the 4 input features/);
  assert.throws(() => convGeneral(x, k4, [1], [[0, 0]], { ...createDefaultConvDimensionNumbers(1), inputSpatialDimensions: [1] }),
    /input dimensions \[0, 1, 1\] must be a permutation of 0..2/);
  assert.throws(() => conv(x, k4, [0], "VALID"), /stride must be an integer >= 1/);
});
