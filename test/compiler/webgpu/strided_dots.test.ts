// Dots the WebGPU kernels read in place (kernel/gemm_plan.ts stridedGemmOfDot): batch
// dimensions not leading, contracting dimensions in the middle or first, attention's
// heads as JAX exports them, with no transpose kernel before or after the GEMM (the dot
// decomposer leaves them: webgpu/program.ts GPU_DOT_DECOMPOSER). Each against the
// interpreter: f32 within the dot bound (2 gamma(k) sum |a||b|, as products.test.ts),
// half results within that plus their rounding, integers bit for bit; both stagings of
// the tiled kernel (a GPU's workgroup memory, a software adapter's registers) and the
// skinny kernel. Plans are checked without a device (the strides and vector loads each
// form gets), then run where WebGPU can run here (skipped, saying so, elsewhere).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../../src/index.js";
import type { Computation } from "../../../src/ir/computation.js";
import { Literal } from "../../../src/types/literal.js";
import type { ArrayShape } from "../../../src/types/shape.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/** Deterministic values in [-1, 1) with a few exact zeros; integers in [-8, 8). */
function values(count: number, seed: number, integers: boolean): number[] {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    if (integers) return ((s >>> 8) % 16) - 8;
    return (s >>> 8) % 97 === 0 ? 0 : (s >>> 8) / 2 ** 23 - 1;
  });
}

const isInteger = (t: string): boolean => /^[su]\d+$/.test(t);

function argumentsOf(c: Computation): { args: Literal[]; magnitudes: Literal[] } {
  const args = c.parameters.map((p, i) => {
    const s = p.shape as ArrayShape;
    return Literal.fromValues(s.elementType, s.dimensions, values(s.dimensions.reduce((a, b) => a * b, 1), 11 + 7 * i, isInteger(s.elementType)));
  });
  const magnitudes = args.map((a) => Literal.fromValues((a.shape as ArrayShape).elementType, (a.shape as ArrayShape).dimensions, a.values().map((v) => Math.abs(Number(v)))));
  return { args, magnitudes };
}

/** Half the spacing of a result type's values relative to a value (its rounding): 0 for f32 (the dot bound covers it) and integers. */
const ROUNDING: Record<string, number> = { f16: 2 ** -11, bf16: 2 ** -8 };

/**
 * Runs StableHLO `text` (a dot_general, maybe with an elementwise epilogue linear in the
 * product up to a relu) on webgpu with GEMM staging `staging`; checks there are `kernels`
 * distinct kernels and no host step, and that it agrees with the interpreter (floats within 2
 * gamma(depth) times the result on the arguments' magnitudes, plus a half result's
 * roundings; integers exactly). Returns the plan's dump.
 */
async function checkInPlace(text: string, depth: number, staging: "registers" | "workgroup" = "registers", kernels = 1): Promise<string> {
  const c = parseStableHlo(text).entry;
  const { args, magnitudes } = argumentsOf(c);
  const before = process.env["XLATS_WEBGPU_GEMM_STAGING"];
  process.env["XLATS_WEBGPU_GEMM_STAGING"] = staging;
  try {
    const { want, got, exe } = await both(c, args);
    const dump = exe.dump();
    assert.deepEqual(exe.stats.interpreted, [], dump);
    assert.match(dump, new RegExp(` ${kernels} kernel\\(s\\), 0 host step\\(s\\)`), dump);
    const type = (want.shape as ArrayShape).elementType;
    const [w, g] = [want.values().map(Number), got.values().map(Number)];
    assert.equal(g.length, w.length);
    if (isInteger(type)) {
      assert.deepEqual(g, w);
      return dump;
    }
    const scale = evaluate(c, magnitudes).values().map(Number);
    const gamma = (depth * 2 ** -24) / (1 - depth * 2 ** -24);
    // A half result: the product and each epilogue step rounded once more (the scale bounds each value).
    const rounding = ROUNDING[type] ?? 0;
    for (let i = 0; i < w.length; i++) {
      const bound = (2 * gamma + 4 * rounding) * scale[i]! + 2 ** -24;
      assert.ok(Math.abs(g[i]! - w[i]!) <= bound, `element ${i}: ${g[i]}, want ${w[i]} (bound ${bound})\n${dump}`);
    }
    return dump;
  } finally {
    if (before === undefined) delete process.env["XLATS_WEBGPU_GEMM_STAGING"];
    else process.env["XLATS_WEBGPU_GEMM_STAGING"] = before;
  }
}

// The encoder's attention (bench/workloads/transformer.ts): q, k, v as [s, h, d], the scores
// [h, s, s] scaled (an epilogue), the context [h, s, d] from the weights and v [s, h, d].
const ENCODER_SCORES = `func.func @main(%q: tensor<24x4x16xf32>, %k: tensor<20x4x16xf32>) -> tensor<4x24x20xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [1] x [1], contracting_dims = [2] x [2] : (tensor<24x4x16xf32>, tensor<20x4x16xf32>) -> tensor<4x24x20xf32>
  %c = stablehlo.constant dense<0.25> : tensor<4x24x20xf32>
  %1 = stablehlo.multiply %0, %c : tensor<4x24x20xf32>
  return %1 : tensor<4x24x20xf32>
}`;
const ENCODER_CONTEXT = `func.func @main(%p: tensor<4x24x20xf32>, %v: tensor<20x4x16xf32>) -> tensor<4x24x16xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<4x24x20xf32>, tensor<20x4x16xf32>) -> tensor<4x24x16xf32>
  return %0 : tensor<4x24x16xf32>
}`;
// JAX's multi-head attention on [batch, seq, heads, dh] (jnp.einsum "bqhd,bkhd->bhqk" and
// "bhqk,bkhd->bhqd"): two batch dimensions apart in memory, the heads' the inner one.
const JAX_SCORES = `func.func @main(%q: tensor<2x12x3x8xf32>, %k: tensor<2x9x3x8xf32>, %bias: tensor<2x3x12x9xf32>) -> tensor<2x3x12x9xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x12x3x8xf32>, tensor<2x9x3x8xf32>) -> tensor<2x3x12x9xf32>
  %1 = stablehlo.add %0, %bias : tensor<2x3x12x9xf32>
  %z = stablehlo.constant dense<0.0> : tensor<2x3x12x9xf32>
  %2 = stablehlo.maximum %1, %z : tensor<2x3x12x9xf32>
  return %2 : tensor<2x3x12x9xf32>
}`;
const JAX_CONTEXT = `func.func @main(%p: tensor<2x3x12x9xf32>, %v: tensor<2x9x3x8xf32>) -> tensor<2x3x12x8xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<2x3x12x9xf32>, tensor<2x9x3x8xf32>) -> tensor<2x3x12x8xf32>
  return %0 : tensor<2x3x12x8xf32>
}`;
// The batch dimension last on both sides, the lhs's contracting dimension between its free
// one and the batch: no dimension of stride 1 but the batch's (scalar loads), odd sizes.
const BATCH_LAST = `func.func @main(%a: tensor<7x13x3xf32>, %b: tensor<13x5x3xf32>) -> tensor<3x7x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [2], contracting_dims = [1] x [0] : (tensor<7x13x3xf32>, tensor<13x5x3xf32>) -> tensor<3x7x5xf32>
  return %0 : tensor<3x7x5xf32>
}`;
// The same with sizes multiples of 4: still no dimension of stride 1 to load vec4s along.
const BATCH_LAST_ALIGNED = `func.func @main(%a: tensor<8x12x3xf32>, %b: tensor<12x8x3xf32>) -> tensor<3x8x8xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [2], contracting_dims = [1] x [0] : (tensor<8x12x3xf32>, tensor<12x8x3xf32>) -> tensor<3x8x8xf32>
  return %0 : tensor<3x8x8xf32>
}`;
// Two contracting dimensions, contiguous in their listed order (merged into one k), with the batch in the middle of the rhs.
const TWO_CONTRACTING = `func.func @main(%a: tensor<6x2x4x5xf32>, %b: tensor<4x5x2x8xf32>) -> tensor<2x6x8xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [1] x [2], contracting_dims = [2, 3] x [0, 1] : (tensor<6x2x4x5xf32>, tensor<4x5x2x8xf32>) -> tensor<2x6x8xf32>
  return %0 : tensor<2x6x8xf32>
}`;
// GPT-2's decode step: one query row a head against the keys [s, h, d]: the skinny kernel, m = 1.
const DECODE_SCORES = `func.func @main(%q: tensor<1x4x16xf32>, %k: tensor<33x4x16xf32>) -> tensor<4x1x33xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [1] x [1], contracting_dims = [2] x [2] : (tensor<1x4x16xf32>, tensor<33x4x16xf32>) -> tensor<4x1x33xf32>
  return %0 : tensor<4x1x33xf32>
}`;

/** What the plan's kernels are (no device: WebGPU's guaranteed limits). */
const kernelsOf = (c: Computation): string => planGpuProgram(c, {}).kernels.map((k) => k.what).join("\n");

/** The strides the plan names for its one in-place GEMM (codegen.ts stridedGemmName), or undefined. */
const inPlaceStrides = (c: Computation): string | undefined => /in place \(strides ([^)]*)\)/.exec(kernelsOf(c))?.[1];

test("dots not in GEMM form are planned as one GEMM reading its operands in place, with their strides (no device)", () => {
  const expected: [string, string][] = [
    [ENCODER_SCORES, "A 16;64;1, B 16;64;1"],
    [ENCODER_CONTEXT, "A 480;20;1, B 16;1;64"],
    [JAX_SCORES, "A 288,8;24;1, B 216,8;24;1"],
    [JAX_CONTEXT, "A 324,108;9;1, B 216,8;1;24"],
    [BATCH_LAST, "A 1;39;3, B 1;3;15"],
    [BATCH_LAST_ALIGNED, "A 1;36;3, B 1;3;24"],
    [TWO_CONTRACTING, "A 20;40;1, B 8;1;16"],
    [DECODE_SCORES, "A 16;0;1, B 16;64;1"],
  ];
  for (const [text, strides] of expected) {
    const c = parseStableHlo(text).entry;
    assert.equal(planGpuProgram(c, {}).kernels.length, 1, kernelsOf(c));
    assert.equal(inPlaceStrides(c), strides, text);
  }
});

test("a dot whose free or contracting dimensions are apart in memory is still decomposed (a transpose kernel, then the GEMM)", () => {
  // The lhs's free dimensions 0 and 2 around its contracting one: not one stride.
  const c = parseStableHlo(`func.func @main(%a: tensor<3x5x4xf32>, %b: tensor<5x6xf32>) -> tensor<3x4x6xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x5x4xf32>, tensor<5x6xf32>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}`).entry;
  const what = kernelsOf(c);
  assert.doesNotMatch(what, /in place/);
  assert.match(what, /gemm 12x6x5 NN f32/);
  assert.equal(planGpuProgram(c, {}).kernels.length, 2, what);
});

test("attention's dots read in place: the encoder's and JAX's forms, epilogues fused, both stagings", { skip }, async () => {
  for (const staging of ["registers", "workgroup"] as const) {
    assert.match(await checkInPlace(ENCODER_SCORES, 16, staging), /gemm 4x24x20x16 in place .*epilogue fused/);
    assert.match(await checkInPlace(ENCODER_CONTEXT, 20, staging), /gemm 4x24x16x20 in place/);
    assert.match(await checkInPlace(JAX_SCORES, 8, staging), /gemm 6x12x9x8 in place .*epilogue fused/);
    assert.match(await checkInPlace(JAX_CONTEXT, 9, staging), /gemm 6x12x8x9 in place/);
  }
});

test("batch dimensions last, contracting dimensions in the middle or merged, and the skinny kernel read in place", { skip }, async () => {
  for (const staging of ["registers", "workgroup"] as const) {
    assert.match(await checkInPlace(BATCH_LAST, 13, staging), /gemm 3x7x5x13 in place/);
    assert.match(await checkInPlace(BATCH_LAST_ALIGNED, 12, staging), /gemm 3x8x8x12 in place/);
    assert.match(await checkInPlace(TWO_CONTRACTING, 20, staging), /gemm 2x6x8x20 in place/);
  }
  assert.match(await checkInPlace(DECODE_SCORES, 16), /in place .*skinny/);
});

test("half and integer operands read in place: f16 to f32, bf16 to bf16 with an epilogue, s8 to s32", { skip }, async () => {
  assert.match(await checkInPlace(ENCODER_SCORES.replaceAll("x16xf32>", "x16xf16>"), 16), /in place .* from f16 to f32/);
  const bf16 = `func.func @main(%q: tensor<2x12x3x8xbf16>, %k: tensor<2x9x3x8xbf16>, %bias: tensor<2x3x12x9xbf16>) -> tensor<2x3x12x9xbf16> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x12x3x8xbf16>, tensor<2x9x3x8xbf16>) -> tensor<2x3x12x9xbf16>
  %1 = stablehlo.add %0, %bias : tensor<2x3x12x9xbf16>
  return %1 : tensor<2x3x12x9xbf16>
}`;
  assert.match(await checkInPlace(bf16, 8), /in place .* from bf16 to bf16.*epilogue fused/);
  const s8 = `func.func @main(%a: tensor<7x13x3xi8>, %b: tensor<13x5x3xi8>) -> tensor<3x7x5xi32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [2], contracting_dims = [1] x [0] : (tensor<7x13x3xi8>, tensor<13x5x3xi8>) -> tensor<3x7x5xi32>
  return %0 : tensor<3x7x5xi32>
}`;
  assert.match(await checkInPlace(s8, 13), /in place .* from s8 to s32/);
  assert.match(await checkInPlace(JAX_CONTEXT.replaceAll("xf32>", "xi16>"), 9), /in place .* from s16 to s16/);
});

// The heads' outputs back to [s, h·d] before the output projection (the encoder's, GPT-2's):
// the transpose after the dot is folded into its store (kernel/transposed_dots.ts dotsTransposedAfter).
const ENCODER_MERGE = `func.func @main(%p: tensor<4x24x20xf32>, %v: tensor<20x4x16xf32>) -> tensor<24x64xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<4x24x20xf32>, tensor<20x4x16xf32>) -> tensor<4x24x16xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<4x24x16xf32>) -> tensor<24x4x16xf32>
  %2 = stablehlo.reshape %1 : (tensor<24x4x16xf32>) -> tensor<24x64xf32>
  return %2 : tensor<24x64xf32>
}`;
// JAX's "bhqk,bkhd->bqhd": the dot_general's [b, h, q, d] then transposed.
const JAX_MERGE = `func.func @main(%p: tensor<2x3x12x9xf32>, %v: tensor<2x9x3x8xf32>) -> tensor<2x12x3x8xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<2x3x12x9xf32>, tensor<2x9x3x8xf32>) -> tensor<2x3x12x8xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1, 3] : (tensor<2x3x12x8xf32>) -> tensor<2x12x3x8xf32>
  return %1 : tensor<2x12x3x8xf32>
}`;
// The heads' outputs stored [s, d, h]: a permutation that is not its own inverse.
const HEADS_CYCLED = `func.func @main(%p: tensor<4x24x20xf32>, %v: tensor<20x4x16xf32>) -> tensor<24x16x4xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<4x24x20xf32>, tensor<20x4x16xf32>) -> tensor<4x24x16xf32>
  %1 = stablehlo.transpose %0, dims = [1, 2, 0] : (tensor<4x24x16xf32>) -> tensor<24x16x4xf32>
  return %1 : tensor<24x16x4xf32>
}`;
// A GEMM-form product stored with its rows and columns swapped (C^T: columns no longer consecutive).
const GEMM_TRANSPOSED = `func.func @main(%a: tensor<3x9x6xf32>, %b: tensor<3x6x8xf32>) -> tensor<3x8x9xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x9x6xf32>, tensor<3x6x8xf32>) -> tensor<3x9x8xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1] : (tensor<3x9x8xf32>) -> tensor<3x8x9xf32>
  return %1 : tensor<3x8x9xf32>
}`;

test("a transpose after a dot is written by the GEMM's store (no device): strides of the result, and where it is not", () => {
  const expected: [string, string][] = [
    [ENCODER_MERGE, "A 480;20;1, B 16;1;64, C 16;64;1"],
    [JAX_MERGE, "A 324,108;9;1, B 216,8;1;24, C 288,8;24;1"],
    [GEMM_TRANSPOSED, "A 54;6;1, B 48;1;8, C 72;1;9"],
    [HEADS_CYCLED, "A 480;20;1, B 16;1;64, C 1;64;4"],
  ];
  for (const [text, strides] of expected) {
    const c = parseStableHlo(text).entry;
    assert.equal(planGpuProgram(c, {}).kernels.length, 1, kernelsOf(c));
    assert.equal(inPlaceStrides(c), strides, text);
  }
  // The lhs's two free dimensions swapped: rows no longer one stride, the transpose stays a kernel.
  const split = parseStableHlo(`func.func @main(%a: tensor<3x4x5xf32>, %b: tensor<5x6xf32>) -> tensor<4x3x6xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [2] x [0] : (tensor<3x4x5xf32>, tensor<5x6xf32>) -> tensor<3x4x6xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<3x4x6xf32>) -> tensor<4x3x6xf32>
  return %1 : tensor<4x3x6xf32>
}`).entry;
  assert.equal(planGpuProgram(split, {}).kernels.length, 2, kernelsOf(split));
  // The product used again (returned as it is): it must exist untransposed.
  const twice = parseStableHlo(`func.func @main(%p: tensor<4x24x20xf32>, %v: tensor<20x4x16xf32>) -> (tensor<4x24x16xf32>, tensor<24x4x16xf32>) {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<4x24x20xf32>, tensor<20x4x16xf32>) -> tensor<4x24x16xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<4x24x16xf32>) -> tensor<24x4x16xf32>
  return %0, %1 : tensor<4x24x16xf32>, tensor<24x4x16xf32>
}`).entry;
  assert.doesNotMatch(kernelsOf(twice), /, C /);
});

test("results written transposed: the encoder's and JAX's heads merged, C^T, f16 by pairs and by bytes, s8 to s32", { skip }, async () => {
  for (const staging of ["registers", "workgroup"] as const) {
    assert.match(await checkInPlace(ENCODER_MERGE, 20, staging), /gemm 4x24x16x20 in place .*, C 16;64;1\)/);
    assert.match(await checkInPlace(JAX_MERGE, 9, staging), /gemm 6x12x8x9 in place .*, C 288,8;24;1\) f32/);
    assert.match(await checkInPlace(GEMM_TRANSPOSED, 6, staging), /gemm 3x9x8x6 in place .*, C 72;1;9\)/);
    assert.match(await checkInPlace(HEADS_CYCLED, 20, staging), /gemm 4x24x16x20 in place .*, C 1;64;4\)/);
  }
  // f16 stored transposed with its columns consecutive (pairs of a word), and not (element by element, the memory's words atomic).
  assert.match(await checkInPlace(ENCODER_MERGE.replaceAll("xf32>", "xf16>"), 20), /, C 16;64;1\) f32 from f16 to f16/);
  assert.match(await checkInPlace(GEMM_TRANSPOSED.replaceAll("xf32>", "xf16>"), 6), /, C 72;1;9\) f32 from f16 to f16/);
  const s8 = `func.func @main(%a: tensor<3x9x6xi8>, %b: tensor<3x6x8xi8>) -> tensor<3x8x9xi32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x9x6xi8>, tensor<3x6x8xi8>) -> tensor<3x9x8xi32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1] : (tensor<3x9x8xi32>) -> tensor<3x8x9xi32>
  return %1 : tensor<3x8x9xi32>
}`;
  assert.match(await checkInPlace(s8, 6), /, C 72;1;9\) f32 from s8 to s32/);
});

// The encoder's projections to heads: each product reshaped to [s, h, d] (an output fusion
// whose epilogue only reshapes: the GEMM's plain stores), then the scores read in place.
const PROJECTED_SCORES = `func.func @main(%x: tensor<24x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>) -> tensor<4x24x24xf32> {
  %0 = stablehlo.dot_general %x, %wq, contracting_dims = [1] x [0] : (tensor<24x64xf32>, tensor<64x64xf32>) -> tensor<24x64xf32>
  %1 = stablehlo.reshape %0 : (tensor<24x64xf32>) -> tensor<24x4x16xf32>
  %2 = stablehlo.dot_general %x, %wk, contracting_dims = [1] x [0] : (tensor<24x64xf32>, tensor<64x64xf32>) -> tensor<24x64xf32>
  %3 = stablehlo.reshape %2 : (tensor<24x64xf32>) -> tensor<24x4x16xf32>
  %4 = stablehlo.dot_general %1, %3, batching_dims = [1] x [1], contracting_dims = [2] x [2] : (tensor<24x4x16xf32>, tensor<24x4x16xf32>) -> tensor<4x24x24xf32>
  return %4 : tensor<4x24x24xf32>
}`;

test("projections reshaped to heads are plain GEMMs (the reshape fused, no epilogue), the scores read in place", { skip }, async () => {
  const what = kernelsOf(parseStableHlo(PROJECTED_SCORES).entry);
  assert.match(what, /gemm 24x64x64 NN f32, .*reshape fused/);
  // Scales: the scores sum 16 products of the projections' sums of 64.
  // Three steps, two kernels: the projections share one.
  const dump = await checkInPlace(PROJECTED_SCORES, 16 + 64, "registers", 2);
  assert.match(dump, /gemm 4x24x24x16 in place \(strides A 16;64;1, B 16;64;1\)/);
});
