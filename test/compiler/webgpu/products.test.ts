// Dots and convolutions inside the WebGPU backend: compiled to the tiled, skinny and
// implicit-GEMM kernels (reading the device memory through offsets), their epilogues
// (bias, activation, residual) rendered into the kernel's store, nothing on the host.
// Compared with the interpreter within the f32 dot bound: |got - want| <= 2 gamma(k) sum |a||b| (both sides round a sum of k
// products; the scale sum |a||b| is the same program interpreted on |a| and |b|).
// Skips as webgpu.test.ts does where there is nothing to run WebGPU on. Few shapes:
// SwiftShader takes seconds to compile each GEMM kernel, the skinny kernel most (6 to
// 12 s at load 13), so it is left to gemm.test.ts with the standalone kernels' edge
// shapes and conv.test.ts: the backend's kernels differ from those only in how
// operands are read and the result stored (KernelMemory "device"), which these cover.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import type { ArrayShape } from "../../../src/types/shape.js";
import { elementCount } from "../../../src/types/shape.js";

const hasDriver = process.env["VK_ICD_FILENAMES"] !== undefined || existsSync("/usr/lib/chromium/vk_swiftshader_icd.json");
const hasPackage = await import("webgpu" as string).then(() => true, () => false);
const skip = !hasPackage && !hasDriver ? "neither the webgpu package nor a Vulkan driver is installed: nothing to run WebGPU on" : false;

after(() => releaseGpu());

/** Deterministic values in [-1, 1) with a few exact zeros. */
function values(count: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s >>> 8) % 97 === 0 ? 0 : (s >>> 8) / 2 ** 23 - 1;
  });
}

/**
 * Runs `text` (a StableHLO function of f32 arrays whose result is linear in each
 * argument, up to a final relu) on webgpu; checks it has no host step and agrees with
 * the interpreter within 2 gamma(depth) times the result on the arguments' magnitudes.
 */
async function checkProduct(text: string, depth: number): Promise<string> {
  const computation = parseStableHlo(text).entry;
  const args = computation.parameters.map((p, i) => {
    const s = p.shape as ArrayShape;
    return Literal.fromValues("f32", s.dimensions, values(elementCount(s.dimensions), 7 + i));
  });
  const magnitudes = args.map((a) => Literal.fromValues("f32", (a.shape as ArrayShape).dimensions, a.values().map((v) => Math.abs(v as number))));
  const exe = await compile(computation, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    const got = (await exe.run(args)).values() as number[];
    const want = evaluate(computation, args).values() as number[];
    const scale = evaluate(computation, magnitudes).values() as number[];
    const gamma = (depth * 2 ** -24) / (1 - depth * 2 ** -24);
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) {
      const bound = 2 * gamma * scale[i]! + 2 ** -126;
      assert.ok(Math.abs(got[i]! - want[i]!) <= bound, `element ${i}: ${got[i]}, want ${want[i]} (bound ${bound})\n${exe.dump()}`);
    }
    return exe.dump();
  } finally {
    exe.delete();
  }
}

test("an MLP layer (dot, bias, relu) is one GEMM kernel, its epilogue in the store, no host step", { skip }, async () => {
  const dump = await checkProduct(`func.func @main(%x: tensor<8x20xf32>, %w: tensor<20x36xf32>, %b: tensor<36xf32>) -> tensor<8x36xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x20xf32>, tensor<20x36xf32>) -> tensor<8x36xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<36xf32>) -> tensor<8x36xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x36xf32>
  %z = stablehlo.constant dense<0.0> : tensor<8x36xf32>
  %3 = stablehlo.maximum %2, %z : tensor<8x36xf32>
  return %3 : tensor<8x36xf32>
}`, 20);
  assert.match(dump, /1 kernel\(s\), 0 host step\(s\)/);
  assert.match(dump, /gemm 8x36x20 NN f32, tiled .*epilogue fused/);
});

test("dot_general: batched, both operands transposed", { skip }, async () => {
  // Batched, both operands transposed ([b][k][m] x [b][n][k]).
  const dump = await checkProduct(`func.func @main(%a: tensor<3x9x6xf32>, %b: tensor<3x5x9xf32>) -> tensor<3x6x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<3x9x6xf32>, tensor<3x5x9xf32>) -> tensor<3x6x5xf32>
  return %0 : tensor<3x6x5xf32>
}`, 9);
  assert.match(dump, /gemm 3x6x5x9 TT f32, tiled/);
});

test("a convolution (NHWC, stride, padding, feature groups) is the implicit-GEMM kernel", { skip }, async () => {
  const dump = await checkProduct(`func.func @main(%x: tensor<2x7x6x8xf32>, %w: tensor<3x3x4x12xf32>) -> tensor<2x4x3x12xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 0]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x7x6x8xf32>, tensor<3x3x4x12xf32>) -> tensor<2x4x3x12xf32>
  return %0 : tensor<2x4x3x12xf32>
}`, 36);
  assert.match(dump, /convolution .*tiled/);
});

test("a convolution with bias and residual is one kernel, the epilogue reading both from the device memory", { skip }, async () => {
  // The residual's layout is the output's; the bias is broadcast along the features (the product's columns).
  const dump = await checkProduct(`func.func @main(%x: tensor<1x5x4x3xf32>, %w: tensor<3x3x3x8xf32>, %b: tensor<8xf32>, %r: tensor<1x5x4x8xf32>) -> tensor<1x5x4x8xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x4x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x4x8xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<8xf32>) -> tensor<1x5x4x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<1x5x4x8xf32>
  %3 = stablehlo.add %2, %r : tensor<1x5x4x8xf32>
  return %3 : tensor<1x5x4x8xf32>
}`, 27);
  assert.match(dump, /1 kernel\(s\), 0 host step\(s\)/);
  assert.match(dump, /convolution .*tiled .*epilogue fused/);
});

/** Runs `body` with XLATS_WEBGPU_GEMM_STAGING set to `staging` (codegen.ts productStagingFor: read at each compile), restoring it after. */
async function withStaging<T>(staging: string | undefined, body: () => Promise<T>): Promise<T> {
  const before = process.env["XLATS_WEBGPU_GEMM_STAGING"];
  if (staging === undefined) delete process.env["XLATS_WEBGPU_GEMM_STAGING"];
  else process.env["XLATS_WEBGPU_GEMM_STAGING"] = staging;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env["XLATS_WEBGPU_GEMM_STAGING"];
    else process.env["XLATS_WEBGPU_GEMM_STAGING"] = before;
  }
}

// Both stagings of the backend's kernels whatever the adapter (a software one reads from
// storage by default, a GPU stages in workgroup memory): a batched, transposed product of
// odd sizes with a bias, a residual and a relu fused into its store, and a convolution.
test("both stagings of the GEMM and convolution kernels (XLATS_WEBGPU_GEMM_STAGING): odd batched shapes, fused epilogues", { skip }, async () => {
  const dot = `func.func @main(%a: tensor<3x37x21xf32>, %b: tensor<3x29x37xf32>, %c: tensor<29xf32>, %r: tensor<3x21x29xf32>) -> tensor<3x21x29xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [1] x [2] : (tensor<3x37x21xf32>, tensor<3x29x37xf32>) -> tensor<3x21x29xf32>
  %1 = stablehlo.broadcast_in_dim %c, dims = [2] : (tensor<29xf32>) -> tensor<3x21x29xf32>
  %2 = stablehlo.add %0, %1 : tensor<3x21x29xf32>
  %3 = stablehlo.add %2, %r : tensor<3x21x29xf32>
  %z = stablehlo.constant dense<0.0> : tensor<3x21x29xf32>
  %4 = stablehlo.maximum %3, %z : tensor<3x21x29xf32>
  return %4 : tensor<3x21x29xf32>
}`;
  const conv = `func.func @main(%x: tensor<2x7x6x8xf32>, %w: tensor<3x3x8x12xf32>) -> tensor<2x4x3x12xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x7x6x8xf32>, tensor<3x3x8x12xf32>) -> tensor<2x4x3x12xf32>
  return %0 : tensor<2x4x3x12xf32>
}`;
  for (const staging of ["registers", "workgroup"]) {
    const fromStorage = staging === "registers" ? /from storage/ : /tiled \d+x\d+x\d+ \(/;
    const dump = await withStaging(staging, () => checkProduct(dot, 37));
    assert.match(dump, /1 kernel\(s\), 0 host step\(s\)/);
    assert.match(dump, /gemm 3x21x29x37 TT f32, tiled .*epilogue fused/);
    assert.match(dump, fromStorage);
    assert.match(await withStaging(staging, () => checkProduct(conv, 72)), fromStorage);
  }
  await assert.rejects(withStaging("shared", () => checkProduct(conv, 72)), /XLATS_WEBGPU_GEMM_STAGING must be "workgroup" or "registers", not "shared"/);
});
