import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, type ConvDimensionNumbers } from "../../../src/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { emitConvKernel } from "../../../src/compiler/wasm/conv.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { rng } from "../../support/prng.js";
import { buildConv, NHWC, type ConvCase } from "../../support/kernel_cases.js";
import { runKernel } from "./kernel_harness.js";
import { elementCount } from "../../../src/types/shape.js";

const random = rng(11);

function checkConv(c: ConvCase, splits = 1, type: "f32" | "f64" = "f32"): void {
  const target = detectWasmTarget();
  const { computation, conv } = buildConv(c, type);
  const F = type === "f32" ? Float32Array : Float64Array;
  const x = new F(elementCount(c.input)).map(() => random() * 2 - 1);
  const w = new F(elementCount(c.kernel)).map(() => random() * 2 - 1);
  const want = evaluate(computation, [Literal.fromValues(type, c.input, [...x]), Literal.fromValues(type, c.kernel, [...w])]).toNumbers();
  const kernel = emitConvKernel(conv, target);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  assert.ok(WebAssembly.validate(kernel.bytes));
  const [bytes] = runKernel(kernel, target, [x, w], [want.length * F.BYTES_PER_ELEMENT], splits);
  const got = new F(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, want.length);
  const depth = c.kernel[0]! * c.kernel[1]! * c.kernel[2]!;
  const tol = 4 * (type === "f32" ? 2 ** -23 : 2 ** -52) * Math.sqrt(depth) * 4;
  want.forEach((v, i) => assert.ok(Math.abs(got[i]! - v) <= tol * Math.max(1, Math.abs(v)), `${kernel.name} (${JSON.stringify(c)}) element ${i}: ${got[i]} vs ${v}`));
}

test("conv f32 NHWC/HWIO: valid, same padding, strides, dilation, odd channel counts vs the interpreter", () => {
  checkConv({ input: [1, 5, 5, 1], kernel: [3, 3, 1, 1] });
  checkConv({ input: [2, 8, 8, 4], kernel: [3, 3, 4, 8], padding: [[1, 1], [1, 1]] });
  checkConv({ input: [1, 9, 7, 3], kernel: [3, 2, 3, 5], strides: [2, 3], padding: [[2, 0], [1, 2]] });
  checkConv({ input: [2, 10, 11, 6], kernel: [3, 3, 6, 7], rhsDilation: [2, 3], padding: [[2, 2], [3, 1]] });
  checkConv({ input: [1, 6, 6, 40], kernel: [1, 1, 40, 9] });
  checkConv({ input: [3, 12, 12, 16], kernel: [5, 5, 16, 13], padding: [[2, 2], [2, 2]] }, 3);
  checkConv({ input: [1, 4, 4, 200], kernel: [2, 2, 200, 3], padding: [[1, 0], [0, 1]] });
});

test("conv: other batch/spatial orders with features innermost (HWNC input, WHIO kernel, output WNHC)", () => {
  const dn: ConvDimensionNumbers = {
    inputBatchDimension: 2, inputFeatureDimension: 3, inputSpatialDimensions: [0, 1],
    kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [1, 0],
    outputBatchDimension: 1, outputFeatureDimension: 3, outputSpatialDimensions: [2, 0],
  };
  checkConv({ input: [7, 6, 2, 3], kernel: [2, 3, 3, 4], dn, padding: [[1, 1], [0, 1]], strides: [1, 2] }, 2);
});

test("conv: unsupported forms say why", () => {
  const target = detectWasmTarget();
  const nchw: ConvDimensionNumbers = { ...NHWC, inputFeatureDimension: 1, inputSpatialDimensions: [2, 3] };
  const cases: ConvCase[] = [
    { input: [1, 4, 6, 6], kernel: [3, 3, 4, 2], dn: nchw },
    { input: [1, 6, 6, 4], kernel: [3, 3, 2, 4], featureGroupCount: 2 },
    { input: [1, 6, 6, 4], kernel: [3, 3, 4, 4], lhsDilation: [2, 2] },
  ];
  for (const c of cases) {
    const k = emitConvKernel(buildConv(c).conv, target);
    assert.ok(isDeclined(k), JSON.stringify(c));
  }
});

test("conv f64 NHWC/HWIO vs the interpreter (the GEMM's f64 tiles; 8-byte im2col copies)", () => {
  checkConv({ input: [1, 5, 5, 1], kernel: [3, 3, 1, 1] }, 1, "f64");
  checkConv({ input: [2, 9, 7, 3], kernel: [3, 2, 3, 5], strides: [2, 1], padding: [[1, 1], [0, 1]] }, 2, "f64");
  checkConv({ input: [1, 6, 6, 70], kernel: [2, 2, 70, 9], rhsDilation: [2, 1] }, 1, "f64");
});
