// Output fusions (a dot or convolution with an elementwise epilogue in one kernel): whole
// programs compiled for the WebAssembly backend against the reference interpreter on
// the same inputs, and the plan checked for the fusion (or for its refusal where fusing
// would be wrong or, by the backend's cost rule, slower: the pass fuses shallow
// products, k <= 32, and products past the cache, over 1 MiB). Kernels the pass does
// not form (deep products, several blocks of k) are compiled from explicit fusions,
// as HLO text with kind=kOutput would give them.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, broadcastInDim, constantR0, convGeneralDilated, convertElementType, div, dot, dotGeneral, evaluate, logistic,
  max, mul, parameter, scalarShape, tanh, transpose, tuple, type Computation, type ConvDimensionNumbers, type ElementType, type XlaOp,
} from "../../src/index.js";
import { compile, WasmDevice, type Executable } from "../../src/compiler/index.js";
import type { Instruction } from "../../src/ir/computation.js";
import { InstructionFactory } from "../../src/ir/factory.js";
import { makeDotDimensionNumbers } from "../../src/builder/linalg.js";
import { rng } from "../support/prng.js";
import { elementCount } from "../../src/types/shape.js";

const random = rng(2024);

function randomLiteral(t: ElementType, dims: readonly number[]): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, Array.from({ length: n }, () => random() * 2 - 1));
}

const outputFusions = (exe: Executable): Instruction<"fusion">[] =>
  exe.module!.entry.instructions.filter((i): i is Instruction<"fusion"> => i.opcode === "fusion" && (i as Instruction<"fusion">).attrs.kind === "output");

/**
 * Compiles `c`, runs it on random inputs and compares with the interpreter: floats
 * within `k` products' worth of rounding (the GEMM blocks its sums differently).
 * Returns the executable for the plan checks.
 */
async function check(c: Computation, k: number, device?: WasmDevice): Promise<Executable> {
  const args = c.parameters.map((p) => randomLiteral(p.shape.kind === "array" ? p.shape.elementType : "f32", p.shape.kind === "array" ? p.shape.dimensions : []));
  const exe = await compile(c, device === undefined ? {} : { device });
  const got = exe.run(args);
  const want = evaluate(c, args);
  const leaves = (l: Literal): Literal[] => (l.shape.kind === "tuple" ? l.elements.flatMap(leaves) : [l]);
  leaves(want).forEach((w, j) => {
    const g = leaves(got)[j]!;
    const eps = w.elementType === "f64" ? 2 ** -52 : 2 ** -23;
    const tol = 8 * eps * Math.max(k, 1);
    const a = g.toNumbers(), e = w.toNumbers();
    assert.equal(a.length, e.length);
    for (let i = 0; i < e.length; i++) {
      assert.ok(Math.abs(a[i]! - e[i]!) <= tol * Math.max(1, Math.abs(e[i]!)), `${c.name} result ${j} element ${i}: ${a[i]} vs ${e[i]}`);
    }
  });
  assert.deepEqual(exe.stats.interpreted, [], `${c.name}: every step compiled`);
  return exe;
}

function assertFused(exe: Executable, count = 1): void {
  assert.equal(outputFusions(exe).length, count, exe.dump());
  assert.match(exe.dump(), /with epilogue/);
  assert.ok(exe.log.some((e) => /is the core of/.test(e.message)));
}

function denseRelu(t: ElementType, m: number, k: number, n: number): Computation {
  const b = new XlaBuilder(`dense_relu_${t}_${m}x${k}x${n}`);
  const x = parameter(b, 0, arrayShape(t, [m, k]), "x");
  const w = parameter(b, 1, arrayShape(t, [k, n]), "w");
  const bias = parameter(b, 2, arrayShape(t, [n]), "bias");
  return b.build(max(add(dot(x, w), bias, [1]), constantR0(b, t, 0)));
}

test("dot + bias + relu is one output fusion, f32 and f64: edge tiles, last rows, several blocks of columns, a product past the cache, the one-row (gemv) kernel", async () => {
  for (const t of ["f32", "f64"] as const) {
    for (const [m, k, n] of [[5, 7, 9], [33, 24, 65], [1, 40, 37], [6, 20, 1030], [8, 16, 2000], [3, 2, 5], [261, 40, 1024]] as const) {
      assertFused(await check(denseRelu(t, m, k, n), k));
    }
  }
});

test("the cost rule: a deep product that stays in cache, or one summed over several blocks of k, keeps its own loop kernel", async () => {
  for (const [k, why] of [[200, /stays in cache for a loop kernel/], [300, /accumulates its product over 2 blocks of k/]] as const) {
    const exe = await check(denseRelu("f32", 16, k, 64), k);
    assert.equal(outputFusions(exe).length, 0);
    assert.ok(exe.log.some((e) => why.test(e.message)), exe.dump());
  }
});

test("dot + residual of the same shape, and tanh/logistic of a dot scaled by a scalar parameter", async () => {
  for (const t of ["f32", "f64"] as const) {
    const b = new XlaBuilder(`residual_${t}`);
    const x = parameter(b, 0, arrayShape(t, [19, 24]));
    const w = parameter(b, 1, arrayShape(t, [24, 24]));
    const r = parameter(b, 2, arrayShape(t, [19, 24]));
    assertFused(await check(b.build(add(r, dot(x, w))), 24));
  }
  const b = new XlaBuilder("activations");
  const x = parameter(b, 0, arrayShape("f32", [13, 30]));
  const w = parameter(b, 1, arrayShape("f32", [30, 11]));
  const s = parameter(b, 2, scalarShape("f32"));
  const y = mul(dot(x, w), s);
  assertFused(await check(b.build(add(tanh(y), logistic(y))), 30));
});

test("batched dot + bias over the columns and a per-batch scale; a dot_general whose result the decomposer reshapes", async () => {
  const b = new XlaBuilder("batched");
  const x = parameter(b, 0, arrayShape("f32", [3, 10, 17]));
  const w = parameter(b, 1, arrayShape("f32", [3, 17, 12]));
  const bias = parameter(b, 2, arrayShape("f32", [12]));
  const scale = parameter(b, 3, arrayShape("f32", [3]));
  const d = dotGeneral(x, w, { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1] });
  const y = mul(add(d, broadcastInDim(bias, [3, 10, 12], [2])), broadcastInDim(scale, [3, 10, 12], [0]));
  assertFused(await check(b.build(max(y, constantR0(b, "f32", 0))), 17));

  // [2, 3, K] x [K, 5] -> [2, 3, 5]: a GEMM of 6 x 5, reshaped back to three dimensions.
  const b2 = new XlaBuilder("two_free_dimensions");
  const l = parameter(b2, 0, arrayShape("f64", [2, 3, 9]));
  const r = parameter(b2, 1, arrayShape("f64", [9, 5]));
  const bias2 = parameter(b2, 2, arrayShape("f64", [3]));
  const prod = dotGeneral(l, r, { lhsContractingDimensions: [2], rhsContractingDimensions: [0] });
  assertFused(await check(b2.build(add(prod, broadcastInDim(bias2, [2, 3, 5], [1]))), 9));
});

test("an epilogue that reads the product away from the element it writes is not fused (transpose), nor is a product that is also returned", async () => {
  const b = new XlaBuilder("transposed_epilogue");
  const x = parameter(b, 0, arrayShape("f32", [16, 16]));
  const w = parameter(b, 1, arrayShape("f32", [16, 16]));
  const y = parameter(b, 2, arrayShape("f32", [16, 16]));
  const exe = await check(b.build(add(transpose(dot(x, w), [1, 0]), y)), 16);
  assert.equal(outputFusions(exe).length, 0);
  assert.ok(exe.log.some((e) => /not fusing .* reads the product through transpose/.test(e.message)), exe.dump());

  const b2 = new XlaBuilder("product_returned");
  const x2 = parameter(b2, 0, arrayShape("f32", [8, 8]));
  const d = dot(x2, x2);
  const exe2 = await check(b2.build(tuple(b2, [d, max(d, constantR0(b2, "f32", 0))])), 8);
  assert.equal(outputFusions(exe2).length, 0);
  assert.ok(exe2.log.some((e) => /not fusing .* also read by/.test(e.message)));
});

test("converts: to a type of the same size the epilogue writes over the product; to a narrower one it is refused and runs as its own kernel", async () => {
  const b = new XlaBuilder("to_s32");
  const x = parameter(b, 0, arrayShape("f32", [7, 12]));
  const w = parameter(b, 1, arrayShape("f32", [12, 6]));
  assertFused(await check(b.build(convertElementType(mul(dot(x, w), constantR0(b, "f32", 100)), "s32")), 12));

  // Integer division has no vector form: the tiles are finished after they are written, not in registers.
  const bd = new XlaBuilder("to_s32_divided");
  const xd = parameter(bd, 0, arrayShape("f32", [9, 12]));
  const wd = parameter(bd, 1, arrayShape("f32", [12, 21]));
  const scaled = convertElementType(mul(dot(xd, wd), constantR0(bd, "f32", 1000)), "s32");
  assertFused(await check(bd.build(div(scaled, constantR0(bd, "s32", 7))), 12));

  const b2 = new XlaBuilder("round_trip_bf16");
  const x2 = parameter(b2, 0, arrayShape("f32", [7, 12]));
  const w2 = parameter(b2, 1, arrayShape("f32", [12, 6]));
  assertFused(await check(b2.build(convertElementType(convertElementType(dot(x2, w2), "bf16"), "f32")), 12));

  const b3 = new XlaBuilder("to_f16");
  const x3 = parameter(b3, 0, arrayShape("f32", [7, 12]));
  const w3 = parameter(b3, 1, arrayShape("f32", [12, 6]));
  const exe = await check(b3.build(convertElementType(dot(x3, w3), "f16")), 12);
  assert.equal(outputFusions(exe).length, 0);
  assert.ok(exe.log.some((e) => /elements of another size/.test(e.message)));
});

const NHWC: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
};
const NCHW: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 1, inputSpatialDimensions: [2, 3],
  kernelInputFeatureDimension: 1, kernelOutputFeatureDimension: 0, kernelSpatialDimensions: [2, 3],
  outputBatchDimension: 0, outputFeatureDimension: 1, outputSpatialDimensions: [2, 3],
};

/** 3x3 convolution, SAME padding, + bias, relu (with c = 3, an image's first layer: k = 27). */
function convBiasRelu(t: ElementType, layout: "NHWC" | "NCHW", n: number, hw: number, c: number, o: number): { computation: Computation; depth: number } {
  const b = new XlaBuilder(`conv_bias_relu_${layout}_${t}`);
  const nhwc = layout === "NHWC";
  const x = parameter(b, 0, arrayShape(t, nhwc ? [n, hw, hw, c] : [n, c, hw, hw]));
  const w = parameter(b, 1, arrayShape(t, nhwc ? [3, 3, c, o] : [o, c, 3, 3]));
  const bias = parameter(b, 2, arrayShape(t, [o]));
  const y: XlaOp = convGeneralDilated(x, w, [1, 1], [[1, 1], [1, 1]], [], [], nhwc ? NHWC : NCHW);
  const outDims = nhwc ? [n, hw, hw, o] : [n, o, hw, hw];
  return { computation: b.build(max(add(y, broadcastInDim(bias, outDims, [nhwc ? 3 : 1])), constantR0(b, t, 0))), depth: 9 * c };
}

test("convolution + bias + relu is one output fusion in NHWC, f32 and f64; in NCHW it compiles as the NHWC kernel and one loop kernel", async () => {
  for (const t of ["f32", "f64"] as const) {
    const nhwc = convBiasRelu(t, "NHWC", 2, 9, 3, 7);
    assertFused(await check(nhwc.computation, nhwc.depth));
    // NCHW: transposed to NHWC around the kernel; the bias and relu read the product through
    // the transpose back (the one pass the NCHW result needs anyway), so no output fusion.
    const nchw = convBiasRelu(t, "NCHW", 2, 9, 3, 7);
    const exe = await check(nchw.computation, nchw.depth);
    assert.equal(outputFusions(exe).length, 0);
    assert.ok(exe.log.some((e) => /not fusing convolution.* reads the product through transpose/.test(e.message)), exe.dump());
    assert.match(exe.dump(), /kernel convolution.*\(conv /);
  }
});

/** A computation whose elementwise root reads a dot or convolution, as the called computation of an output fusion. */
function fusedComputation(name: string, build: (b: XlaBuilder) => XlaOp): Computation {
  const b = new XlaBuilder(`fused_${name}`);
  return b.build(build(b));
}

/** An entry that is one output fusion of `fused` over parameters of its parameters' shapes (as HLO text with kind=kOutput gives it). */
function explicitOutputFusion(fused: Computation): Computation {
  const f = new InstructionFactory(fused.name.replace(/^fused_/, ""));
  const operands = fused.parameters.map((p, i) => f.parameter(i, p.shape));
  return f.finish(f.add("fusion", operands, { kind: "output", calledComputation: fused }));
}

test("explicit output fusions: products summed over several blocks of k (f32 and f64), with edge tiles and last rows, and a deep convolution", async () => {
  for (const t of ["f32", "f64"] as const) {
    const fused = fusedComputation(`deep_${t}`, (b) => {
      const x = parameter(b, 0, arrayShape(t, [33, 300]));
      const w = parameter(b, 1, arrayShape(t, [300, 65]));
      const r = parameter(b, 2, arrayShape(t, [33, 65]));
      const y = add(dot(x, w), r);
      // (tanh has no f64 code yet)
      return t === "f32" ? tanh(y) : max(y, constantR0(b, t, 0));
    });
    assert.match((await check(explicitOutputFusion(fused), 300)).dump(), /with epilogue/);
  }
  // f64, 3x3x64 -> 128: the kernel matrix is past the one-block size, so its depth is blocked by 128.
  const conv = fusedComputation("deep_conv", (b) => {
    const x = parameter(b, 0, arrayShape("f64", [1, 4, 5, 64]));
    const w = parameter(b, 1, arrayShape("f64", [3, 3, 64, 128]));
    const bias = parameter(b, 2, arrayShape("f64", [128]));
    const y = convGeneralDilated(x, w, [1, 1], [[1, 1], [1, 1]], [], [], NHWC);
    return max(add(y, broadcastInDim(bias, [1, 4, 5, 128], [3])), constantR0(b, "f64", 0));
  });
  assert.match((await check(explicitOutputFusion(conv), 576)).dump(), /conv .* with epilogue/);
});

test("an output fusion writes over an operand that dies at it only when its kernel keeps the product in scratch (k in one block)", async () => {
  for (const k of [24, 700]) {
    // 13 x 20: full tiles, a tile on the right edge and a last row of its own.
    const fused = fusedComputation(`residual_k${k}`, (b) =>
      add(dot(parameter(b, 0, arrayShape("f32", [13, k])), parameter(b, 1, arrayShape("f32", [k, 20]))), parameter(b, 2, arrayShape("f32", [13, 20]))));
    // The fusion's third operand r = p·q is a temporary whose last reader is the fusion; its result feeds another dot.
    const f = new InstructionFactory(`over_operand_k${k}`);
    const x = f.parameter(0, arrayShape("f32", [13, k]));
    const w = f.parameter(1, arrayShape("f32", [k, 20]));
    const p = f.parameter(2, arrayShape("f32", [13, 5]));
    const q = f.parameter(3, arrayShape("f32", [5, 20]));
    const v = f.parameter(4, arrayShape("f32", [20, 6]));
    const matmul = { dimensionNumbers: makeDotDimensionNumbers({ lhsContractingDimensions: [1], rhsContractingDimensions: [0] }), precisionConfig: [] };
    const r = f.add("dot", [p, q], matmul);
    const h = f.add("fusion", [x, w, r], { kind: "output", calledComputation: fused });
    const exe = await check(f.finish(f.add("dot", [h, v], matmul)), k * 20);
    const lines = exe.dump().split("\n");
    const placeOf = (re: RegExp): string => /-> temp\d+@(\d+)/.exec(lines.find((l) => re.test(l))!)![1]!;
    const same = placeOf(/\(gemm 13x20x5 /) === placeOf(/with epilogue/);
    assert.equal(same, k === 24, exe.dump());
  }
});

test("1-4 rows against a weight stored [n][k] (x·Wᵀ, dot products of rows) with bias and relu: one output fusion; written over a dying operand, the kernel that keeps the product in scratch", async () => {
  const nt = { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [1], rhsContractingDimensions: [1] };
  for (const t of ["f32", "f64"] as const) {
    for (const [m, k, n] of [[1, 70, 37], [3, 16, 130]] as const) {
      const fused = fusedComputation(`linear_${t}_${m}x${k}x${n}`, (b) => max(add(
        dotGeneral(parameter(b, 0, arrayShape(t, [m, k])), parameter(b, 1, arrayShape(t, [n, k])), nt), parameter(b, 2, arrayShape(t, [n])), [1]), constantR0(b, t, 0)));
      const exe = await check(explicitOutputFusion(fused), k);
      assert.match(exe.dump(), /with epilogue \(row dots\)/);
    }
  }
  // r = p·q dies at the fusion, which writes over it: the product must wait in scratch.
  const fused = fusedComputation("residual_nt", (b) =>
    add(dotGeneral(parameter(b, 0, arrayShape("f32", [3, 24])), parameter(b, 1, arrayShape("f32", [20, 24])), nt), parameter(b, 2, arrayShape("f32", [3, 20]))));
  const f = new InstructionFactory("over_operand_nt");
  const x = f.parameter(0, arrayShape("f32", [3, 24]));
  const w = f.parameter(1, arrayShape("f32", [20, 24]));
  const p = f.parameter(2, arrayShape("f32", [3, 5]));
  const q = f.parameter(3, arrayShape("f32", [5, 20]));
  const v = f.parameter(4, arrayShape("f32", [20, 6]));
  const matmul = { dimensionNumbers: makeDotDimensionNumbers({ lhsContractingDimensions: [1], rhsContractingDimensions: [0] }), precisionConfig: [] };
  const h = f.add("fusion", [x, w, f.add("dot", [p, q], matmul)], { kind: "output", calledComputation: fused });
  const exe = await check(f.finish(f.add("dot", [h, v], matmul)), 24 * 20);
  const lines = exe.dump().split("\n");
  const placeOf = (re: RegExp): string => /-> temp\d+@(\d+)/.exec(lines.find((l) => re.test(l))!)![1]!;
  assert.equal(placeOf(/\(gemm 3x20x5 /), placeOf(/with epilogue/), exe.dump());
  assert.doesNotMatch(exe.dump(), /row dots/);
});

test("an output fusion split across threads matches the interpreter", async (t) => {
  const device = await WasmDevice.create({ threads: 2 });
  if (device.threads < 2) {
    t.skip("no shared memory: the device runs on one thread");
    return;
  }
  try {
    for (const [m, k, n] of [[64, 24, 96], [8, 16, 2000], [1, 300, 800]] as const) assertFused(await check(denseRelu("f32", m, k, n), k, device));
    const { computation, depth } = convBiasRelu("f32", "NHWC", 3, 16, 3, 16);
    assertFused(await check(computation, depth, device));
  } finally {
    await device.close();
  }
});
