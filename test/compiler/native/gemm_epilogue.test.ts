// Output fusions on the native backend (native/epilogue_c.ts): a dot or convolution with
// an elementwise epilogue as one C kernel, whole programs against the interpreter; and
// one written over an operand its epilogue reads (the product kept in scratch).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, broadcastInDim, constantR0, convGeneralDilated, dot, dotGeneral, evaluate, max, mul, parameter, tanh, tuple,
  type Computation, type ConvDimensionNumbers, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { compile, compileManySync, type Executable } from "../../../src/compiler/index.js";
import { InstructionFactory } from "../../../src/ir/factory.js";
import { makeDotDimensionNumbers } from "../../../src/builder/linalg.js";
import { rng } from "../../support/prng.js";
import { nativeSkipReason } from "./gemm_harness.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = nativeSkipReason();
if (skip !== undefined) console.log(`# native output fusion tests skipped: ${skip}`);
const random = rng(99);

const NHWC: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
};

function randomLiteral(t: ElementType, dims: readonly number[]): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, Array.from({ length: n }, () => random() * 2 - 1));
}

/** An entry that is one output fusion of the computation `build` returns (as HLO text with kind=kOutput gives it). */
function explicitOutputFusion(name: string, build: (b: XlaBuilder) => XlaOp): Computation {
  const b = new XlaBuilder(`fused_${name}`);
  const fused = b.build(build(b));
  const f = new InstructionFactory(name);
  const operands = fused.parameters.map((p, i) => f.parameter(i, p.shape));
  return f.finish(f.add("fusion", operands, { kind: "output", calledComputation: fused }));
}

/** Compiles on the native backend, compares with the interpreter (k products' worth of rounding), and checks the kernel is C with an epilogue. */
async function check(c: Computation, k: number, threads = 1): Promise<void> {
  const args = c.parameters.map((p) => randomLiteral(p.shape.kind === "array" ? p.shape.elementType : "f32", p.shape.kind === "array" ? p.shape.dimensions : []));
  const exe = await compile(c, { backend: "native", threads });
  const got = exe.run(args).toNumbers();
  const want = evaluate(c, args).toNumbers();
  const t = c.root.shape.kind === "array" ? c.root.shape.elementType : "f32";
  const tol = 8 * (t === "f64" ? 2 ** -52 : 2 ** -23) * Math.max(k, 1);
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i]! - want[i]!) <= tol * Math.max(1, Math.abs(want[i]!)), `${c.name} element ${i}: ${got[i]} vs ${want[i]}`);
  }
  const dump = exe.dump();
  assert.match(dump, /with epilogue/, dump);
  assert.match(dump, /C xk_outfusion_/, dump);
  assert.deepEqual(exe.stats.interpreted, []);
}

test("native output fusions: dot + bias + relu / tanh, f32 and f64, edge tiles, several blocks of k, batches, one row", { skip }, async () => {
  for (const t of ["f32", "f64"] as const) {
    // [3, 40, 2100]: a few rows streamed over B in several tiles of C.
    for (const [m, k, n] of [[33, 300, 65], [5, 7, 3], [1, 40, 300], [20, 3, 17], [3, 40, 2100]] as const) {
      await check(explicitOutputFusion(`dense_${t}_${m}x${k}x${n}`, (b) => {
        const x = parameter(b, 0, arrayShape(t, [m, k]));
        const w = parameter(b, 1, arrayShape(t, [k, n]));
        const bias = parameter(b, 2, arrayShape(t, [n]));
        const y = add(dot(x, w), broadcastInDim(bias, [m, n], [1]));
        return t === "f32" ? tanh(y) : max(y, constantR0(b, t, 0));
      }), k);
    }
  }
  // Batched, the rhs transposed; the residual read at the element written.
  await check(explicitOutputFusion("batched", (b) => {
    const x = parameter(b, 0, arrayShape("f32", [3, 9, 20]));
    const w = parameter(b, 1, arrayShape("f32", [3, 11, 20]));
    const r = parameter(b, 2, arrayShape("f32", [3, 9, 11]));
    const d = dotGeneral(x, w, { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [2] });
    return mul(add(d, r), constantR0(b, "f32", 0.5));
  }), 20);
  // A few rows against B stored [n][k] (the kernel of row dots), batched, on two threads.
  await check(explicitOutputFusion("row_dots", (b) => {
    const x = parameter(b, 0, arrayShape("f32", [4, 2, 70]));
    const w = parameter(b, 1, arrayShape("f32", [4, 301, 70]));
    const r = parameter(b, 2, arrayShape("f32", [4, 2, 301]));
    const d = dotGeneral(x, w, { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [2] });
    return tanh(add(d, r));
  }), 70, 2);
});

test("native output fusions: convolution + bias + relu (one and several blocks of depth), and across threads", { skip }, async () => {
  for (const [c, o] of [[8, 16], [300, 200]] as const) {
    await check(explicitOutputFusion(`conv_${c}_${o}`, (b) => {
      const x = parameter(b, 0, arrayShape("f32", [2, 6, 5, c]));
      const w = parameter(b, 1, arrayShape("f32", [3, 3, c, o]));
      const bias = parameter(b, 2, arrayShape("f32", [o]));
      const y = convGeneralDilated(x, w, [1, 1], [[1, 1], [1, 1]], [], [], NHWC);
      return max(add(y, broadcastInDim(bias, [2, 6, 5, o], [3])), constantR0(b, "f32", 0));
    }), 9 * c);
  }
  await check(explicitOutputFusion("dense_threads", (b) => {
    const x = parameter(b, 0, arrayShape("f32", [200, 64]));
    const w = parameter(b, 1, arrayShape("f32", [64, 300]));
    const bias = parameter(b, 2, arrayShape("f32", [300]));
    return max(add(dot(x, w), broadcastInDim(bias, [200, 300], [1])), constantR0(b, "f32", 0));
  }), 64, 2);
});

test("a native output fusion written over an operand its epilogue reads keeps the product in scratch (k in one block), in C", { skip }, async () => {
  for (const [m, k, n, threads] of [[13, 24, 20, 1], [130, 10, 70, 1], [300, 16, 200, 2]] as const) {
    // The fusion's last operand r = p·q is a temporary whose last reader is the fusion; its result feeds another dot.
    const b = new XlaBuilder(`fused_residual_${m}x${k}x${n}`);
    const fused = b.build(add(dot(parameter(b, 0, arrayShape("f32", [m, k])), parameter(b, 1, arrayShape("f32", [k, n]))), parameter(b, 2, arrayShape("f32", [m, n]))));
    const f = new InstructionFactory(`over_operand_${m}x${k}x${n}`);
    const x = f.parameter(0, arrayShape("f32", [m, k]));
    const w = f.parameter(1, arrayShape("f32", [k, n]));
    const p = f.parameter(2, arrayShape("f32", [m, 5]));
    const q = f.parameter(3, arrayShape("f32", [5, n]));
    const v = f.parameter(4, arrayShape("f32", [n, 6]));
    const matmul = { dimensionNumbers: makeDotDimensionNumbers({ lhsContractingDimensions: [1], rhsContractingDimensions: [0] }), precisionConfig: [] };
    const r = f.add("dot", [p, q], matmul);
    const h = f.add("fusion", [x, w, r], { kind: "output", calledComputation: fused });
    const c = f.finish(f.add("dot", [h, v], matmul));
    const args = c.parameters.map((param) => randomLiteral("f32", param.shape.kind === "array" ? param.shape.dimensions : []));
    const exe = await compile(c, { backend: "native", threads });
    const got = exe.run(args).toNumbers();
    const want = evaluate(c, args).toNumbers();
    const tol = 8 * 2 ** -23 * (k + n);
    for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got[i]! - want[i]!) <= tol * Math.max(1, Math.abs(want[i]!)), `${c.name} element ${i}: ${got[i]} vs ${want[i]}`);
    const lines = exe.dump().split("\n");
    const step = (re: RegExp): string => lines.find((l) => re.test(l)) ?? assert.fail(exe.dump());
    const placeOf = (re: RegExp): string => /-> temp\d+@(\d+)/.exec(step(re))![1]!;
    assert.equal(placeOf(new RegExp(`\\(gemm ${m}x${n}x5 `)), placeOf(/with epilogue/), "written in place");
    assert.match(step(/with epilogue/), /C xk_outfusion_/);
  }
});

/**
 * A dense layer's epilogue over `p` (the product, [m, n]): bias + relu, a residual add,
 * or bias + tanh. Each op rounds once, so the epilogue applied to the same product gives
 * the same bits wherever it runs (tanh: on the same C code, the loop kernel's and the
 * epilogue's printer being one).
 */
function epilogueOf(b: XlaBuilder, kind: "relu" | "residual" | "tanh", p: XlaOp, t: ElementType, m: number, n: number, first: number): XlaOp {
  if (kind === "residual") return add(parameter(b, first, arrayShape(t, [m, n])), p);
  const y = add(p, broadcastInDim(parameter(b, first, arrayShape(t, [n])), [m, n], [1]));
  return kind === "relu" ? max(y, constantR0(b, t, 0)) : tanh(y);
}

test("native: the fusion pass fuses epilogues over products of several blocks of k and products in cache, the same bits as the product's own kernel and a loop kernel", { skip }, () => {
  // k 200: one block, a product in cache (the WebAssembly kernels' cost rule declines it,
  // output_fusion.test.ts); 300 and 784: 2 and 4 blocks of k (the last short), edge tiles
  // and a last tile of fewer rows; f64 with its blocks of 128; on two threads the split
  // product's epilogue runs on each core's part.
  const cases = [
    ["f32", 16, 200, 64, "relu", 1], ["f32", 33, 300, 65, "residual", 2], ["f32", 64, 784, 130, "relu", 2],
    ["f32", 30, 520, 40, "tanh", 1], ["f64", 21, 300, 37, "relu", 2],
  ] as const;
  const programs = cases.map(([t, m, k, n, kind, threads]) => {
    const name = `${kind}_${t}_${m}x${k}x${n}_${threads}t`;
    const fusedProgram = new XlaBuilder(`layer_${name}`);
    const x = parameter(fusedProgram, 0, arrayShape(t, [m, k]));
    const w = parameter(fusedProgram, 1, arrayShape(t, [k, n]));
    const fused = fusedProgram.build(epilogueOf(fusedProgram, kind, dot(x, w), t, m, n, 2));
    // The same layer with the product also returned: the product keeps its own GEMM kernel and the epilogue is a loop kernel.
    const apart = new XlaBuilder(`apart_${name}`);
    const product = dot(parameter(apart, 0, arrayShape(t, [m, k])), parameter(apart, 1, arrayShape(t, [k, n])));
    const separate = apart.build(tuple(apart, [product, epilogueOf(apart, kind, product, t, m, n, 2)]));
    const onProduct = new XlaBuilder(`epilogue_${name}`);
    const epilogue = onProduct.build(epilogueOf(onProduct, kind, parameter(onProduct, 0, arrayShape(t, [m, n])), t, m, n, 1));
    return { name, t, kind, threads, fused, separate, epilogue };
  });
  // The programs of each thread count built as one module (compileManySync).
  const exes = new Map<object, Executable>();
  for (const threads of [1, 2]) {
    const mine = programs.filter((p) => p.threads === threads);
    const built = compileManySync(mine.flatMap((p) => [p.fused, p.separate]), { backend: "native", threads });
    mine.forEach((p, i) => { exes.set(p.fused, built[2 * i]!); exes.set(p.separate, built[2 * i + 1]!); });
  }
  for (const { name, t, kind, fused, separate, epilogue } of programs) {
    const exe = exes.get(fused)!, apartExe = exes.get(separate)!;
    assert.ok(exe.log.some((e) => /is the core of/.test(e.message)), exe.dump());
    assert.match(exe.dump(), /C xk_outfusion_/, exe.dump());
    assert.match(apartExe.dump(), /not fusing .*also read by/);
    const args = fused.parameters.map((p) => randomLiteral(t, p.shape.kind === "array" ? p.shape.dimensions : []));
    const got = exe.run(args).toNumbers();
    const [p, loop] = apartExe.run(args).elements;
    const loopValues = loop!.toNumbers();
    // The epilogue on the interpreter over the C kernel's product: one rounding per op, so the same bits (relu, residual).
    const want = kind === "tanh" ? loopValues : evaluate(epilogue, [p!, args[2]!]).toNumbers();
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) {
      if (!Object.is(got[i], want[i]) || !Object.is(loopValues[i], want[i])) assert.fail(`${name} element ${i}: fused ${got[i]}, loop kernel ${loopValues[i]}, epilogue over the product ${want[i]}`);
    }
  }
});
