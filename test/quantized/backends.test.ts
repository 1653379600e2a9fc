// Quantized programs built with XlaBuilder, run on the interpreter, through the
// compiler (which leaves quantized ops to the interpreter's kernels and says so in
// its dump) and through a runtime client's default backend: the same hand-worked values.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, dotGeneral, Literal, parameter, perAxis, perTensor, uniformDequantize, uniformQuantize, XlaBuilder,
} from "../../src/index.js";
import { compile } from "../../src/compiler/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { createClient } from "../../src/runtime/index.js";
import { ShapeError } from "../../src/types/errors.js";

/**
 * x (f32[2,2]) quantized per-tensor (i8, scale 0.5), times weights stored per-axis
 * (i8, scales {1, 4} along the output dimension 1, zero points 0), the product
 * quantized per-axis (scales {0.5, 2}), plus itself requantized, then dequantized.
 */
function quantizedMatmul(): ReturnType<XlaBuilder["build"]> {
  const b = new XlaBuilder("qmatmul");
  const x = parameter(b, 0, arrayShape("f32", [2, 2]), "x");
  const w = parameter(b, 1, arrayShape("s8", [2, 2], { quantization: perAxis("s8", "f32", 1, [1, 4], [0, 0]) }), "w");
  const xq = uniformQuantize(x, perTensor("s8", "f32", 0.5, 0));
  const product = dotGeneral(xq, w, { lhsContractingDimensions: [1], rhsContractingDimensions: [0] },
    { resultQuantization: perAxis("s8", "f32", 1, [0.5, 2], [0, 0]) });
  const doubled = b.addInstruction("add", [product, product], {}, { resultQuantization: perAxis("s8", "f32", 1, [1, 4], [0, 0]) });
  return b.build(uniformDequantize(doubled));
}

// x = [[1, 2], [0, -1]] quantizes exactly (scale 0.5); w stored [[2, 0], [4, -1]] is [[2, 0], [4, -4]].
// x·w = [[1*2+2*4, 2*-4], [-1*4, -1*-4]] = [[10, -8], [-4, 4]]: exact in the product's scales.
// doubled: [[20, -16], [-8, 8]], stored with scales {1, 4}: [[20, -4], [-8, 2]], dequantized back exactly.
const args = [Literal.from("f32", [[1, 2], [0, -1]]), Literal.fromStorage(
  arrayShape("s8", [2, 2], { quantization: perAxis("s8", "f32", 1, [1, 4], [0, 0]) }), Int8Array.from([2, 0, 4, -1]))];
const expected = [[20, -16], [-8, 8]];

test("builder: per-axis quantized dot_general and add with chosen result types, on the interpreter", () => {
  assert.deepEqual(evaluate(quantizedMatmul(), args).toNested(), expected);
});

test("compile: quantized ops run as the interpreter's kernels, and the dump says so (printed as StableHLO)", async () => {
  const exe = await compile(quantizedMatmul());
  try {
    assert.deepEqual(exe.run(args).toNested(), expected);
    assert.equal(exe.stats.kernels, 0);
    const dump = exe.dump();
    assert.match(dump, /!quant\.uniform<i8:f32:1, \{1\.0:0,4\.0:0\}>/);
    assert.match(dump, /quantized types run on the interpreter's kernels/);
  } finally {
    exe.delete();
  }
});

test("runtime client, default backend: the quantized program gives the same values", async () => {
  const client = await createClient();
  try {
    const exe = await client.compile(quantizedMatmul());
    const [out] = await client.execute(exe, [args]);
    assert.deepEqual((await out!.toLiteral()).toNested(), expected);
  } finally {
    await client.close();
  }
});

test("builder: a result quantization the op does not allow is refused with the rule", () => {
  const b = new XlaBuilder("bad");
  const x = parameter(b, 0, arrayShape("s8", [2], { quantization: perTensor("s8", "f32", 1, 0) }));
  assert.throws(() => b.addInstruction("add", [x, x], {}, { resultQuantization: perTensor("s16", "f32", 1, 0) }),
    (e: Error) => e instanceof ShapeError && /must have the storage type, storage range and expressed type/.test(e.message));
  assert.throws(() => b.addInstruction("add", [x, uniformDequantize(x)], {}),
    (e: Error) => e instanceof ShapeError && /operand 1: must be quantized as the other operands are/.test(e.message));
});

test("builder: i8 x i8 -> i32 dot_general on the interpreter and compiled: the exact integer sums", async () => {
  const b = new XlaBuilder("qaccumulate");
  const q8 = (zeroPoint: number) => perTensor("s8", "f32", 0.25, zeroPoint);
  const x = parameter(b, 0, arrayShape("s8", [1, 3], { quantization: q8(-2) }), "x");
  const w = parameter(b, 1, arrayShape("s8", [3, 2], { quantization: q8(0) }), "w");
  // Scale 0.25 * 0.25: the result stores the sum of (x + 2) * w itself, plus its zero point 7.
  const product = dotGeneral(x, w, { lhsContractingDimensions: [1], rhsContractingDimensions: [0] },
    { resultQuantization: perTensor("s32", "f32", 0.0625, 7) });
  const program = b.build(product);
  const inputs = [
    Literal.fromStorage(arrayShape("s8", [1, 3], { quantization: q8(-2) }), Int8Array.from([125, -2, 0])),
    Literal.fromStorage(arrayShape("s8", [3, 2], { quantization: q8(0) }), Int8Array.from([127, -128, 5, 5, 3, -1])),
  ];
  // x + 2 = [127, 0, 2]: [127*127 + 0*5 + 2*3, 127*-128 + 0*5 + 2*-1] = [16135, -16258], + 7
  const sums = [[16142, -16251]];
  assert.deepEqual(evaluate(program, inputs).toNested(), sums);
  const exe = await compile(program);
  try {
    assert.deepEqual(exe.run(inputs).toNested(), sums);
  } finally {
    exe.delete();
  }
});
