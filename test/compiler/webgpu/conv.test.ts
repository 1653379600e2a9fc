// The WGSL implicit-GEMM convolution on a real WebGPU device (Dawn on SwiftShader here)
// against float64 references: the interpreter evaluating the same convolution in f64
// (every layout, groups, dilations, reversal), and a direct loop written here for
// NHWC/HWIO with feature groups. The bound is the f32 dot bound over the window:
// gamma(depth) * (the convolution of |x| by |w|).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { arrayShape, convGeneralDilated, Literal, parameter, XlaBuilder, type ConvDimensionNumbers } from "../../../src/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import type { Instruction } from "../../../src/ir/computation.js";
import { convKernel, convWgslGeometry, convWgslGeometryOfPlan, type ConvWgslOptions } from "../../../src/compiler/webgpu/conv_wgsl.js";
import { SOFTWARE_TILES } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";
/** The float types these standalone kernels are tested with. */
type StorageType = "f32" | "f16" | "bf16";
import { convGeometry } from "../../../src/compiler/kernel/conv_plan.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { decodeFloatBits, encodeFloatBits } from "../../../src/types/float_codec.js";
import { rng } from "../../support/prng.js";
import { NHWC } from "../../support/kernel_cases.js";
import { acquireDevice, runOnce, type TestDevice } from "./gemm_device.js";
import { elementCount } from "../../../src/types/shape.js";

const acquired = await acquireDevice();
const dev: TestDevice | undefined = typeof acquired === "string" ? undefined : acquired;
const skip = typeof acquired === "string" ? `no WebGPU device: ${acquired}` : false;
after(() => dev?.device.destroy());

const random = rng(29);

interface Case {
  readonly input: readonly number[];
  readonly kernel: readonly number[];
  readonly dn?: ConvDimensionNumbers;
  readonly strides?: readonly number[];
  readonly padding?: readonly (readonly [number, number])[];
  readonly lhsDilation?: readonly number[];
  readonly rhsDilation?: readonly number[];
  readonly groups?: number;
  readonly reversal?: readonly boolean[];
}

const NCHW: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 1, inputSpatialDimensions: [2, 3],
  kernelInputFeatureDimension: 1, kernelOutputFeatureDimension: 0, kernelSpatialDimensions: [2, 3],
  outputBatchDimension: 0, outputFeatureDimension: 1, outputSpatialDimensions: [2, 3],
};

function build(c: Case, type: "f32" | "f64" | "f16" | "bf16") {
  const spatial = (c.dn ?? NHWC).inputSpatialDimensions.length;
  const b = new XlaBuilder("conv");
  const x = parameter(b, 0, arrayShape(type, c.input));
  const w = parameter(b, 1, arrayShape(type, c.kernel));
  const root = convGeneralDilated(
    x, w, c.strides ?? new Array(spatial).fill(1), c.padding ?? new Array(spatial).fill([0, 0]), c.lhsDilation ?? [], c.rhsDilation ?? [],
    c.dn ?? NHWC, c.groups ?? 1, 1, c.reversal !== undefined ? { windowReversal: c.reversal } : {},
  );
  return { computation: b.build(root), conv: root.instruction as Instruction<"convolution"> };
}


/** Values in [-1, 1) exactly representable in f16 (and in bf16 with `bf16`: an f16 value of [-1, 1) rounded to bf16 is still one). */
const randomHalves = (n: number, bf16 = false): Float32Array => new Float32Array(n).map(() => {
  const v = decodeFloatBits("f16", encodeFloatBits("f16", random() * 2 - 1));
  return bf16 ? decodeFloatBits("bf16", encodeFloatBits("bf16", v)) : v;
});

/** Checks the kernel of `c` with its input in `types.input` (f32 unless said), its kernel in `types.kernel` and its output in `types.output` (the input's unless said). */
async function checkConv(c: Case, options: ConvWgslOptions = {}, direct?: (x: Float32Array, w: Float32Array) => Float64Array, types: { input?: StorageType; kernel?: StorageType; output?: StorageType } = {}) {
  const bf16 = types.input === "bf16" || types.kernel === "bf16";
  const x = randomHalves(elementCount(c.input), bf16);
  const w = randomHalves(elementCount(c.kernel), bf16);
  const { computation } = build(c, "f64");
  const want = evaluate(computation, [Literal.fromValues("f64", c.input, Array.from(x)), Literal.fromValues("f64", c.kernel, Array.from(w))]).toNumbers();
  const scale = evaluate(computation, [Literal.fromValues("f64", c.input, Array.from(x, Math.abs)), Literal.fromValues("f64", c.kernel, Array.from(w, Math.abs))]).toNumbers();
  if (direct !== undefined) {
    // The hand-written loop and the interpreter agree (in f64, up to the order of the sums).
    const mine = direct(x, w);
    mine.forEach((v, i) => assert.ok(Math.abs(v - want[i]!) <= 1e-12, `direct loop element ${i}: ${v} vs interpreter ${want[i]}`));
  }
  const built = convWgslGeometry(build(c, types.input ?? "f32").conv);
  if (isDeclined(built)) throw new Error(built.declined);
  const g = { ...built, kernelType: types.kernel ?? built.kernelType, outputType: types.output ?? built.outputType };
  const kernel = convKernel(g, dev!.limits, options);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  const stored = (v: Float32Array, t: StorageType): ArrayBufferView => (t === "f32" ? v : Uint16Array.from(v, (e) => encodeFloatBits(t, e)));
  const bytes = await runOnce(dev!, kernel, new Map<number, ArrayBufferView>([[0, stored(x, g.inputType as StorageType)], [1, stored(w, g.kernelType as StorageType)]]));
  const outputType = g.outputType;
  const got = outputType === "f32"
    ? Array.from(new Float32Array(bytes.buffer, 0, want.length))
    : Array.from(new Uint16Array(bytes.buffer, 0, want.length), (h) => decodeFloatBits(outputType, h));
  const depth = elementCount(c.kernel) / (g.outputFeatures);
  const gamma = (depth * 2 ** -24) / (1 - depth * 2 ** -24);
  const label = `${JSON.stringify(c)} ${JSON.stringify(kernel.choice)}`;
  for (let i = 0; i < want.length; i++) {
    let bound = gamma * scale[i]! + 2 ** -120;
    // A half result rounds once more (half an ulp: 2^-11 for f16, and its subnormal spacing; 2^-8 for bf16).
    if (outputType === "f16") bound += 2 ** -11 * (Math.abs(want[i]!) + bound) + 2 ** -25;
    if (outputType === "bf16") bound += 2 ** -8 * (Math.abs(want[i]!) + bound);
    if (!(Math.abs(got[i]! - want[i]!) <= bound)) assert.fail(`${label}: element ${i} is ${got[i]}, want ${want[i]} (bound ${bound})`);
  }
  return kernel;
}

/** NHWC input, HWIO kernel (I = C / groups), NHWC output, stride and low/high padding: the definition, summed in f64. */
function directNhwc(c: Case): (x: Float32Array, w: Float32Array) => Float64Array {
  return (x, w) => {
    const [N, H, W, C] = c.input as [number, number, number, number];
    const [KH, KW, CG, O] = c.kernel as [number, number, number, number];
    const G = c.groups ?? 1;
    const OG = O / G;
    const [sh, sw] = c.strides ?? [1, 1];
    const [[ph0, ph1], [pw0, pw1]] = c.padding ?? [[0, 0], [0, 0]];
    const OH = Math.floor((H + ph0! + ph1! - KH) / sh!) + 1;
    const OW = Math.floor((W + pw0! + pw1! - KW) / sw!) + 1;
    const out = new Float64Array(N * OH * OW * O);
    for (let n = 0; n < N; n++) for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++) for (let o = 0; o < O; o++) {
      const grp = Math.floor(o / OG);
      let sum = 0;
      for (let ky = 0; ky < KH; ky++) for (let kx = 0; kx < KW; kx++) for (let ci = 0; ci < CG; ci++) {
        const iy = oy * sh! + ky - ph0!, ix = ox * sw! + kx - pw0!;
        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
        sum += x[((n * H + iy) * W + ix) * C + grp * CG + ci]! * w[((ky * KW + kx) * CG + ci) * O + o]!;
      }
      out[((n * OH + oy) * OW + ox) * O + o] = sum;
    }
    return out;
  };
}

test("conv NHWC/HWIO: valid and padded windows, strides, feature groups, against a direct float64 loop and the interpreter", { skip }, async () => {
  const cases: Case[] = [
    { input: [1, 5, 5, 1], kernel: [3, 3, 1, 1] },
    { input: [2, 9, 7, 3], kernel: [3, 2, 3, 5], strides: [2, 3], padding: [[2, 0], [1, 2]] },
    { input: [2, 8, 8, 8], kernel: [3, 3, 2, 12], groups: 4, padding: [[1, 1], [1, 1]] },
    { input: [1, 7, 6, 8], kernel: [3, 3, 1, 8], groups: 8, padding: [[1, 1], [1, 1]] },
    { input: [2, 6, 6, 8], kernel: [3, 3, 8, 16], padding: [[1, 1], [1, 1]] },
    { input: [1, 4, 4, 37], kernel: [2, 2, 37, 3], padding: [[1, 0], [0, 1]] },
  ];
  for (const c of cases) await checkConv(c, {}, directNhwc(c));
});

test("conv: NCHW/OIHW, window and base dilation, window reversal, negative padding, 1-D and 3-D, against the interpreter", { skip }, async () => {
  await checkConv({ input: [2, 3, 9, 8], kernel: [5, 3, 3, 2], dn: NCHW, strides: [2, 1], padding: [[1, 1], [0, 2]] });
  await checkConv({ input: [1, 4, 6, 6], kernel: [6, 2, 3, 3], dn: NCHW, groups: 2, padding: [[1, 1], [1, 1]] });
  await checkConv({ input: [2, 10, 11, 6], kernel: [3, 3, 6, 7], rhsDilation: [2, 3], padding: [[2, 2], [3, 1]] });
  await checkConv({ input: [1, 5, 4, 4], kernel: [3, 3, 4, 4], lhsDilation: [2, 3], padding: [[2, 2], [1, 2]], strides: [1, 2] });
  await checkConv({ input: [1, 6, 5, 2], kernel: [3, 2, 2, 3], reversal: [true, false], padding: [[1, 1], [0, 0]] });
  await checkConv({ input: [1, 8, 8, 3], kernel: [3, 3, 3, 2], padding: [[-1, 0], [2, -2]] });
  const nwc: ConvDimensionNumbers = {
    inputBatchDimension: 0, inputFeatureDimension: 2, inputSpatialDimensions: [1],
    kernelInputFeatureDimension: 1, kernelOutputFeatureDimension: 2, kernelSpatialDimensions: [0],
    outputBatchDimension: 0, outputFeatureDimension: 2, outputSpatialDimensions: [1],
  };
  await checkConv({ input: [2, 20, 4], kernel: [5, 4, 8], dn: nwc, strides: [2], padding: [[2, 2]] });
  const ncdhw: ConvDimensionNumbers = {
    inputBatchDimension: 0, inputFeatureDimension: 1, inputSpatialDimensions: [2, 3, 4],
    kernelInputFeatureDimension: 1, kernelOutputFeatureDimension: 0, kernelSpatialDimensions: [2, 3, 4],
    outputBatchDimension: 0, outputFeatureDimension: 1, outputSpatialDimensions: [2, 3, 4],
  };
  await checkConv({ input: [1, 2, 4, 5, 3], kernel: [3, 2, 2, 3, 2], dn: ncdhw, padding: [[0, 1], [1, 1], [1, 0]] });
});

test("conv: vector and scalar loads, a forced 128x128 tile with groups, f16 and bf16 inputs and outputs", { skip }, async () => {
  const c: Case = { input: [2, 7, 7, 8], kernel: [3, 3, 8, 12], padding: [[1, 1], [1, 1]] };
  const vectored = await checkConv(c);
  assert.deepEqual(vectored.choice.kind === "tiled" && vectored.choice.vectorLoads, { lhs: true, rhs: true });
  const scalar = await checkConv(c, { vectorLoads: false });
  assert.deepEqual(scalar.choice.kind === "tiled" && scalar.choice.vectorLoads, { lhs: false, rhs: false });
  await checkConv(c, {}, undefined, { input: "f16", output: "f32" });
  await checkConv({ input: [1, 5, 6, 3], kernel: [2, 3, 3, 5] }, {}, undefined, { input: "f16", output: "f32" });
  await checkConv(c, {}, undefined, { input: "f16" });
  // bf16 through the vector loads to a bf16 result (by vec4s; by pairs of its 6 features); an f32 input with a bf16 kernel (scalar loads of the kernel: 5 output features).
  await checkConv(c, {}, undefined, { input: "bf16" });
  await checkConv({ input: [1, 5, 6, 3], kernel: [2, 3, 3, 6] }, {}, undefined, { input: "bf16" });
  await checkConv({ input: [1, 5, 6, 3], kernel: [2, 3, 3, 5] }, {}, undefined, { input: "f32", kernel: "bf16" });
  await checkConv({ ...c, groups: 2, kernel: [3, 3, 4, 12] }, { tile: { threadsX: 16, threadsY: 16, rowsPerThread: 8, vec4sPerThread: 2, depth: 8 } });
});

// A software adapter's tiles read from storage (gemm_tiles_wgsl.ts staging "registers"):
// the patch gathered by each invocation for its own rows, clamped at the edges.
test("conv: tiles read from storage, vector and scalar loads, groups, a half result", { skip }, async () => {
  const c: Case = { input: [2, 7, 7, 8], kernel: [3, 3, 8, 12], padding: [[1, 1], [1, 1]] };
  for (const options of [{ staging: "registers" }, { staging: "registers", vectorLoads: false }, { tile: SOFTWARE_TILES[0]! }] as const) {
    const kernel = await checkConv(c, options);
    assert.ok(kernel.choice.kind === "tiled" && kernel.choice.tile.staging === "registers" && !/workgroupBarrier/.test(kernel.code));
  }
  await checkConv({ ...c, groups: 2, kernel: [3, 3, 4, 12], strides: [2, 1] }, { staging: "registers" });
  await checkConv({ input: [1, 5, 6, 3], kernel: [2, 3, 3, 6] }, { staging: "registers" }, undefined, { input: "bf16" });
});

test("conv: an epilogue hook (bias + relu) gets each element's output feature and offset", { skip }, async () => {
  const c: Case = { input: [1, 6, 5, 3], kernel: [3, 3, 1, 6], groups: 3, padding: [[1, 1], [1, 1]] };
  const x = randomHalves(elementCount(c.input)), w = randomHalves(elementCount(c.kernel)), bias = randomHalves(6);
  const g = convWgslGeometry(build(c, "f32").conv);
  if (isDeclined(g)) throw new Error(g.declined);
  const kernel = convKernel(g, dev!.limits, {
    epilogue: {
      declarations: "@group(0) @binding(3) var<storage, read> bias: array<f32>;",
      bindings: [{ binding: 3, name: "bias", role: "epilogue", access: "read", byteSize: 24 }],
      store: ({ value, col, index }) => `out[${index}] = max(${value} + bias[${col}], 0.0);`,
    },
  });
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  const bytes = await runOnce(dev!, kernel, new Map<number, ArrayBufferView>([[0, x], [1, w], [3, bias]]));
  const want = directNhwc(c)(x, w);
  const got = new Float32Array(bytes.buffer, 0, want.length);
  let clamped = 0;
  want.forEach((v, i) => {
    const exact = Math.max(v + bias[i % 6]!, 0);
    if (exact === 0) clamped++;
    assert.ok(Math.abs(got[i]! - exact) <= 1e-5, `element ${i}: ${got[i]} vs ${exact}`);
  });
  assert.ok(clamped > 0 && clamped < want.length);
});

test("conv: the CPU plan's geometry converts to the same WGSL geometry; batch groups, f64 and unaligned f16 results are declined", { skip }, () => {
  const hwnc: ConvDimensionNumbers = {
    inputBatchDimension: 2, inputFeatureDimension: 3, inputSpatialDimensions: [0, 1],
    kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [1, 0],
    outputBatchDimension: 1, outputFeatureDimension: 3, outputSpatialDimensions: [2, 0],
  };
  for (const c of [{ input: [2, 9, 7, 3], kernel: [3, 2, 3, 5], strides: [2, 3], padding: [[2, 0], [1, 2]] }, { input: [7, 6, 2, 3], kernel: [2, 3, 3, 4], dn: hwnc, padding: [[1, 1], [0, 1]] }] as Case[]) {
    const { conv } = build(c, "f32");
    const plan = convGeometry(conv);
    if (isDeclined(plan)) throw new Error(plan.declined);
    assert.deepEqual(convWgslGeometryOfPlan(plan), convWgslGeometry(conv));
  }
  const f64 = convWgslGeometry(build({ input: [1, 4, 4, 2], kernel: [2, 2, 2, 2] }, "f64").conv);
  assert.ok(isDeclined(f64) && /f64 x f64 -> f64/.test(f64.declined));
  // An f16 result with its features not innermost (NCHW output here) is stored element by element, which needs the backend's atomic device memory.
  const nchwHalf = convWgslGeometry(build({ input: [1, 4, 5, 5], kernel: [4, 4, 3, 3], dn: NCHW }, "f16").conv);
  if (isDeclined(nchwHalf)) throw new Error(nchwHalf.declined);
  const refused = convKernel(nchwHalf, dev!.limits);
  assert.ok(isDeclined(refused) && /f16 output would be stored element by element, which needs memory "device"/.test(refused.declined), JSON.stringify(refused));
  const b = new XlaBuilder("bg");
  const x = parameter(b, 0, arrayShape("f32", [4, 5, 5, 2]));
  const w = parameter(b, 1, arrayShape("f32", [3, 3, 2, 4]));
  const root = convGeneralDilated(x, w, [1, 1], [[0, 0], [0, 0]], [], [], NHWC, 1, 2);
  const g = convWgslGeometry(root.instruction as Instruction<"convolution">);
  assert.ok(isDeclined(g) && /batch_group_count 2/.test(g.declined));
});
