// Weights marked by the caller (compile's `weights`): a GEMM whose B is such a parameter
// reads it in its panel layout, packed once per device array by the executable
// (CompiledProgram.packedWeights). Results against the interpreter's on the WebAssembly
// and native backends; a packed copy reused while the array is the same (shown by
// changing its bytes behind the contract's back), packed again for another array, and
// a plain `run` (new buffers every call) right every time.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CompileError, Literal, XlaBuilder, add, arrayShape, constantLiteral, constantR0, convGeneralDilated, dot, dotGeneral, evaluate, max, parameter, tuple, tupleShape,
  type Computation, type ElementType,
} from "../../src/index.js";
import { NHWC } from "../support/kernel_cases.js";
import { compile, type DeviceArray, type Executable } from "../../src/compiler/index.js";
import { rng } from "../support/prng.js";
import { nativeSkipReason } from "./native/gemm_harness.js";
import { elementCount } from "../../src/types/shape.js";

const random = rng(2024);

function randomLiteral(t: ElementType, dims: readonly number[]): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, Array.from({ length: n }, () => random() * 2 - 1));
}

/**
 * x·W with bias and relu (an output fusion), y·W (the same weight again), a batched
 * product with B stored [n][k], and an f64 product; parameters 1, 4 and 6 are weights.
 * m 20 (more rows than the few-row kernels take, which read B as stored), k 530 (several
 * blocks of k), n 300 (a partial panel).
 */
function program(): { c: Computation; weights: number[]; packedKernels: number } {
  const b = new XlaBuilder("weights");
  const x = parameter(b, 0, arrayShape("f32", [20, 530]), "x");
  const w = parameter(b, 1, arrayShape("f32", [530, 300]), "w");
  const bias = parameter(b, 2, arrayShape("f32", [300]), "bias");
  const y = parameter(b, 3, arrayShape("f32", [20, 530]), "y");
  const wt = parameter(b, 4, arrayShape("f32", [3, 56, 40]), "wt");
  const xb = parameter(b, 5, arrayShape("f32", [3, 20, 40]), "xb");
  const wd = parameter(b, 6, arrayShape("f64", [64, 48]), "wd");
  const xd = parameter(b, 7, arrayShape("f64", [20, 64]), "xd");
  const fused = max(add(dot(x, w), bias, [1]), constantR0(b, "f32", 0));
  const batched = dotGeneral(xb, wt, { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [2] });
  return { c: b.build(tuple(b, [fused, dot(y, w), batched, dot(xd, wd)])), weights: [1, 4, 6], packedKernels: 4 };
}

const randomArgs = (c: Computation): Literal[] =>
  c.parameters.map((p) => randomLiteral(p.shape.kind === "array" ? p.shape.elementType : "f32", p.shape.kind === "array" ? p.shape.dimensions : []));

/** Each output of `got` within a few rounding errors a step of k of the interpreter's on `args`. */
function assertMatches(c: Computation, args: readonly Literal[], got: readonly Literal[], what: string): void {
  const want = evaluate(c, args);
  want.elements.forEach((w, o) => {
    const g = got[o]!.toNumbers(), ws = w.toNumbers();
    const eps = w.shape.kind === "array" && w.shape.elementType === "f64" ? 2 ** -52 : 2 ** -23;
    for (let i = 0; i < ws.length; i++) {
      assert.ok(Math.abs(g[i]! - ws[i]!) <= 8 * eps * 530 * Math.max(1, Math.abs(ws[i]!)), `${what}: output ${o} element ${i}: ${g[i]} vs ${ws[i]}`);
    }
  });
}

const outputs = (exe: Executable, args: readonly DeviceArray[]): Literal[] => exe.execute(args).map((o) => {
  const l = o.toLiteral();
  o.delete();
  return l;
});

for (const backend of ["wasm", "native"] as const) {
  const skip = backend === "native" ? nativeSkipReason() : undefined;
  test(`${backend}: GEMMs read weight parameters packed once per device array, and answer as the interpreter does`, { skip }, async () => {
    const { c, weights, packedKernels } = program();
    const exe = await compile(c, { backend, weights });
    const packedLines = exe.dump().split("\n").filter((l) => l.includes("B pre-packed"));
    assert.equal(packedLines.length, packedKernels, packedLines.join("\n"));
    // w's two products share one packed copy.
    assert.equal(exe.program.packedWeights.length, 3);
    assert.deepEqual(exe.stats.interpreted, []);

    const args = randomArgs(c);
    const device = exe.device;
    const arrays = args.map((a) => device.bufferFromLiteral(a));
    const first = outputs(exe, arrays);
    assertMatches(c, args, first, "first call");
    // The packed copies are kept: w's own bytes changed behind the contract's back do not reach the products.
    (device.view(arrays[1]!.shape, arrays[1]!.offset) as Float32Array).fill(0);
    const again = outputs(exe, arrays);
    again.forEach((l, o) => assert.deepEqual(l.toNumbers(), first[o]!.toNumbers(), `output ${o} from the kept packed copy`));

    // Another array for w is packed again: the new weights' answer.
    const newArgs = [...args];
    newArgs[1] = randomLiteral("f32", [530, 300]);
    const newW = device.bufferFromLiteral(newArgs[1]);
    assertMatches(c, newArgs, outputs(exe, arrays.map((a, i) => (i === 1 ? newW : a))), "another array for w");
    // And the first array again (now all zeros): packed again from what it holds now.
    const zeroArgs = [...args];
    zeroArgs[1] = Literal.fromValues("f32", [530, 300], new Array<number>(530 * 300).fill(0));
    assertMatches(c, zeroArgs, outputs(exe, arrays), "the first array again");

    // run: host literals, new buffers every call, so packed every call.
    for (let i = 0; i < 2; i++) {
      const fresh = randomArgs(c);
      assertMatches(c, fresh, exe.run(fresh).elements, `run ${i}`);
    }
    for (const a of [...arrays, newW]) a.delete();
    exe.delete();
  });
}

test("wasm: one row of A against a weight or a constant B reads it packed into panels (with an epilogue, n off the panel), as the interpreter computes", async () => {
  const b = new XlaBuilder("gemv_weights");
  const x = parameter(b, 0, arrayShape("f32", [1, 531]), "x");
  const w = parameter(b, 1, arrayShape("f32", [531, 300]), "w");
  const bias = parameter(b, 2, arrayShape("f32", [300]), "bias");
  const wc = constantLiteral(b, randomLiteral("f32", [300, 77]));
  const hidden = max(add(dot(x, w), bias, [1]), constantR0(b, "f32", 0));
  const c = b.build(tuple(b, [hidden, dot(hidden, wc)]));
  const exe = await compile(c, { backend: "wasm", weights: [1] });
  const panelLines = exe.dump().split("\n").filter((l) => l.includes("B in panels"));
  assert.equal(panelLines.length, 2, exe.dump());
  assert.equal(exe.program.packedWeights.length, 1);
  const args = randomArgs(c);
  const arrays = args.map((a) => exe.device.bufferFromLiteral(a));
  assertMatches(c, args, outputs(exe, arrays), "first call");
  const newArgs = [...args];
  newArgs[1] = randomLiteral("f32", [531, 300]);
  const newW = exe.device.bufferFromLiteral(newArgs[1]);
  assertMatches(c, newArgs, outputs(exe, arrays.map((a, i) => (i === 1 ? newW : a))), "another array for w");
  for (const a of [...arrays, newW]) a.delete();
  exe.delete();
});

test("native convolutions read a weight or constant filter packed: plain, with bias and relu, filter blocks of several chunks of columns", { skip: nativeSkipReason() }, async () => {
  // f (3x3, padding 1) as the filter of a plain convolution; e (1x1, depth 4: shallow, so
  // fused with its bias and relu) of an output fusion; g (1x1, 300 -> 600: its kernel
  // matrix past L2, so columns in blocks of 512 and 88, depth in blocks); h a constant.
  const b = new XlaBuilder("conv_weights");
  const x = parameter(b, 0, arrayShape("f32", [2, 8, 8, 4]), "x");
  const f = parameter(b, 1, arrayShape("f32", [3, 3, 4, 8]), "f");
  const bias = parameter(b, 2, arrayShape("f32", [8]), "bias");
  const y = parameter(b, 3, arrayShape("f32", [1, 3, 3, 300]), "y");
  const g = parameter(b, 4, arrayShape("f32", [1, 1, 300, 600]), "g");
  const x2 = parameter(b, 5, arrayShape("f32", [2, 8, 8, 4]), "x2");
  const e = parameter(b, 6, arrayShape("f32", [1, 1, 4, 8]), "e");
  const pad: [number, number][] = [[1, 1], [1, 1]];
  const conv = (input: typeof x, filter: typeof x, padding: [number, number][] = [[0, 0], [0, 0]]) => convGeneralDilated(input, filter, [1, 1], padding, [], [], NHWC, 1);
  const h = constantLiteral(b, randomLiteral("f32", [3, 3, 4, 8]));
  const c = b.build(tuple(b, [
    conv(x, f, pad), max(add(conv(x2, e), bias, [3]), constantR0(b, "f32", 0)), conv(y, g), conv(x, h, pad),
  ]));
  const exe = await compile(c, { backend: "native", weights: [1, 4, 6] });
  const packedLines = exe.dump().split("\n").filter((l) => l.includes("B pre-packed"));
  assert.equal(packedLines.length, 4, packedLines.join("\n"));
  assert.ok(packedLines.some((l) => l.includes("with epilogue")), packedLines.join("\n"));
  assert.equal(exe.program.packedWeights.length, 3);
  const args = randomArgs(c);
  const arrays = args.map((a) => exe.device.bufferFromLiteral(a));
  assertMatches(c, args, outputs(exe, arrays), "first call");
  const newArgs = [...args];
  newArgs[4] = randomLiteral("f32", [1, 1, 300, 600]);
  const newG = exe.device.bufferFromLiteral(newArgs[4]);
  assertMatches(c, newArgs, outputs(exe, arrays.map((a, i) => (i === 4 ? newG : a))), "another array for g");
  for (const a of [...arrays, newG]) a.delete();
  exe.delete();
});

test("weights: a number that is not a parameter, or a tuple parameter, is a CompileError naming the option", async () => {
  const { c } = program();
  await assert.rejects(compile(c, { weights: [8] }), (e: unknown) => e instanceof CompileError && /weights: 8 is not a parameter number/.test(e.message));
  await assert.rejects(compile(c, { weights: [1.5] }), (e: unknown) => e instanceof CompileError && /weights: 1.5 is not a parameter number/.test(e.message));
  const b = new XlaBuilder("tuple_weight");
  const p = parameter(b, 0, tupleShape([arrayShape("f32", [2, 2])]), "p");
  const t = b.build(p);
  await assert.rejects(compile(t, { weights: [0] }), (e: unknown) => e instanceof CompileError && /weights: parameter 0 is .* not an array/.test(e.message));
});
