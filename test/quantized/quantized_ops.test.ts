// Quantized types end to end: StableHLO text in, the interpreter's results out. Every
// expected value is worked out by hand from the spec's formulas (comments show the
// arithmetic): quantize q = round_half_even(clamp(x / scale + zero_point)),
// dequantize x = (q - zero_point) * scale.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { Literal } from "../../src/types/literal.js";

const Q = (body: string): string => `!quant.uniform<${body}>`;

/** Runs the `main` of a StableHLO module on the interpreter. */
function run(text: string, args: readonly Literal[] = []): Literal {
  return evaluate(parseStableHlo(text).entry, args);
}

test("per-axis uniform_quantize: one (scale, zero point) per index of the quantization dimension, clamped to a narrowed range", () => {
  const q = Q("i8<-127:127>:f32:1, {0.1:-1,0.2:0,0.5}");
  const out = run(`func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3x${q}> {
    %0 = stablehlo.uniform_quantize %x : (tensor<2x3xf32>) -> tensor<2x3x${q}>
    return %0 : tensor<2x3x${q}>
  }`, [Literal.from("f32", [[1, 2, 3], [-20, 0.3, 0.26]])]);
  // column 0: 1/0.1 - 1 = 9, -20/0.1 - 1 = -201 -> clamped to -127 (not -128: the range is narrowed)
  // column 1: 2/0.2 = 10, 0.3/0.2 = 1.5 -> 2 (ties to even); column 2: 3/0.5 = 6, 0.26/0.5 = 0.52 -> 1
  assert.deepEqual(out.toNested(), [[9, 10, 6], [-127, 2, 1]]);
  assert.equal(out.arrayShape.quantization?.quantizationDimension, 1);
});

test("per-axis uniform_dequantize", () => {
  const q = Q("i8:f32:0, {0.5:2,0.25:-4}");
  const out = run(`func.func @main(%x: tensor<2x2xi8>) -> tensor<2x2xf32> {
    %0 = stablehlo.bitcast_convert %x : (tensor<2x2xi8>) -> tensor<2x2x${q}>
    %1 = stablehlo.uniform_dequantize %0 : (tensor<2x2x${q}>) -> tensor<2x2xf32>
    return %1 : tensor<2x2xf32>
  }`, [Literal.from("s8", [[2, 6], [-4, 0]])]);
  // row 0: (2-2)*0.5 = 0, (6-2)*0.5 = 2; row 1: (-4+4)*0.25 = 0, (0+4)*0.25 = 1
  assert.deepEqual(out.toNested(), [[0, 2], [0, 1]]);
});

test("uniform_quantize of a quantized operand requantizes through the expressed type, into u8 and a narrowed range", () => {
  const from = Q("i8:f32, 0.5:-20");
  const to = Q("u8<0:60>:f32, 0.25:10");
  const out = run(`func.func @main(%x: tensor<3xi8>) -> tensor<3xui8> {
    %0 = stablehlo.bitcast_convert %x : (tensor<3xi8>) -> tensor<3x${from}>
    %1 = stablehlo.uniform_quantize %0 : (tensor<3x${from}>) -> tensor<3x${to}>
    %2 = stablehlo.bitcast_convert %1 : (tensor<3x${to}>) -> tensor<3xui8>
    return %2 : tensor<3xui8>
  }`, [Literal.from("s8", [0, 10, -40])]);
  // dequantized: (0+20)*0.5 = 10, (10+20)*0.5 = 15, (-40+20)*0.5 = -10
  // requantized: 10/0.25+10 = 50, 15/0.25+10 = 70 -> 60 (storage_max), -10/0.25+10 = -30 -> 0
  assert.deepEqual(out.toNumbers(), [50, 60, 0]);
});

test("narrow storage types: i2, u4 and i4 clamp to their ranges", () => {
  const cases: [string, string, number[]][] = [
    ["i2:f32, 1.0", "i2", [1, -2, -2]], // 3 -> 1 (max), -1.5 -> -2 (tie to even), -7 -> -2 (min)
    ["u4:f32, 1.0:3", "ui4", [15, 2, 0]], // 20+3 -> 15, -1.5+3 = 1.5 -> 2, -7+3 -> 0
    ["i4:f32, 0.5", "i4", [6, -3, -8]], // 3/0.5 = 6, -1.5/0.5 = -3, -14 -> -8
  ];
  for (const [body, storage, expected] of cases) {
    const q = Q(body);
    const input = body.startsWith("u4") ? [20, -1.5, -7] : [3, -1.5, -7];
    const out = run(`func.func @main(%x: tensor<3xf32>) -> tensor<3x${storage}> {
      %0 = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> tensor<3x${q}>
      %1 = stablehlo.bitcast_convert %0 : (tensor<3x${q}>) -> tensor<3x${storage}>
      return %1 : tensor<3x${storage}>
    }`, [Literal.from("f32", input)]);
    assert.deepEqual(out.toNumbers(), expected, body);
  }
});

const LHS = Q("i8:f32, 0.5:1");
const RHS = Q("i8:f32, 2.0");
const dotProgram = (rhsType: string, resultType: string): string => `func.func @main(%l: tensor<2x2xi8>, %r: tensor<2x2xi8>) -> tensor<2x2xi8> {
    %lq = stablehlo.bitcast_convert %l : (tensor<2x2xi8>) -> tensor<2x2x${LHS}>
    %rq = stablehlo.bitcast_convert %r : (tensor<2x2xi8>) -> tensor<2x2x${rhsType}>
    %d = stablehlo.dot_general %lq, %rq, contracting_dims = [1] x [0] : (tensor<2x2x${LHS}>, tensor<2x2x${rhsType}>) -> tensor<2x2x${resultType}>
    %s = stablehlo.bitcast_convert %d : (tensor<2x2x${resultType}>) -> tensor<2x2xi8>
    return %s : tensor<2x2xi8>
  }`;
// lhs stored [[3,5],[1,-1]] -> (q-1)*0.5 = [[1,2],[0,-1]]
const lhsStored = Literal.from("s8", [[3, 5], [1, -1]]);

test("dot_general of per-tensor quantized operands: dequantize, multiply in f32, quantize", () => {
  // rhs stored [[1,0],[2,-1]] * 2 = [[2,0],[4,-2]]; product [[1*2+2*4, 2*-2], [-1*4, -1*-2]] = [[10,-4],[-4,2]]
  // result scale 0.5: [[20,-8],[-8,4]]
  const out = run(dotProgram(RHS, Q("i8:f32, 0.5")), [lhsStored, Literal.from("s8", [[1, 0], [2, -1]])]);
  assert.deepEqual(out.toNested(), [[20, -8], [-8, 4]]);
});

test("dot_general with a per-axis quantized rhs and result along the output dimension", () => {
  // rhs per-axis on dimension 1, scales {1, 4}: stored [[2,0],[4,-1]] -> [[2,0],[4,-4]]
  // product: [[1*2+2*4, 2*-4], [-1*4, -1*-4]] = [[10,-8],[-4,4]]; result scales {0.5, 2} by column: [[20,-4],[-8,2]]
  const out = run(dotProgram(Q("i8:f32:1, {1.0,4.0}"), Q("i8:f32:1, {0.5,2.0}")), [lhsStored, Literal.from("s8", [[2, 0], [4, -1]])]);
  assert.deepEqual(out.toNested(), [[20, -4], [-8, 2]]);
});

test("dot_general hybrid (float lhs, quantized rhs): the result stays float (hybrid_dequantize_then_op)", () => {
  const out = run(`func.func @main(%l: tensor<2x2xf32>, %r: tensor<2x2xi8>) -> tensor<2x2xf32> {
    %rq = stablehlo.bitcast_convert %r : (tensor<2x2xi8>) -> tensor<2x2x${RHS}>
    %d = stablehlo.dot_general %l, %rq, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2x${RHS}>) -> tensor<2x2xf32>
    return %d : tensor<2x2xf32>
  }`, [Literal.from("f32", [[1, 2], [0, -1]]), Literal.from("s8", [[1, 0], [2, -1]])]);
  assert.deepEqual(out.toNested(), [[10, -4], [-4, 2]]);
});

test("convolution of quantized operands", () => {
  const lq = Q("i8:f32, 0.5");
  const kq = Q("i8:f32, 1.0");
  const rq = Q("i8:f32, 0.25:2");
  const out = run(`func.func @main(%l: tensor<1x1x4xi8>, %k: tensor<1x1x2xi8>) -> tensor<1x1x3xi8> {
    %a = stablehlo.bitcast_convert %l : (tensor<1x1x4xi8>) -> tensor<1x1x4x${lq}>
    %b = stablehlo.bitcast_convert %k : (tensor<1x1x2xi8>) -> tensor<1x1x2x${kq}>
    %c = stablehlo.convolution(%a, %b) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x4x${lq}>, tensor<1x1x2x${kq}>) -> tensor<1x1x3x${rq}>
    %d = stablehlo.bitcast_convert %c : (tensor<1x1x3x${rq}>) -> tensor<1x1x3xi8>
    return %d : tensor<1x1x3xi8>
  }`, [Literal.from("s8", [[[2, 4, 6, 8]]]), Literal.from("s8", [[[2, 1]]])]);
  // input [1,2,3,4], kernel [2,1]: [1*2+2, 2*2+3, 3*2+4] = [4,7,10]; /0.25 + 2 = [18, 30, 42]
  assert.deepEqual(out.toNested(), [[[18, 30, 42]]]);
});

// i8 x i8 accumulating in i32: the result's scale is lhs scale * rhs scale, so each stored
// result is the exact integer sum of (lhs - lhs zero point) * (rhs - rhs zero point) plus
// the result's zero point (StableHLO's reference interpreter sums in i32 the same way).
const I32 = (params: string): string => Q(`i32:f32${params}`);

test("dot_general i8 x i8 -> i32: integer accumulation with the lhs zero point, exact past f32's 2^24", () => {
  const lq = Q("i8:f32, 1.0:-1");
  const out = run(`func.func @main(%l: tensor<1x2049xi8>, %r: tensor<2049x1xi8>) -> tensor<1x1xi32> {
    %lq = stablehlo.bitcast_convert %l : (tensor<1x2049xi8>) -> tensor<1x2049x${lq}>
    %rq = stablehlo.bitcast_convert %r : (tensor<2049x1xi8>) -> tensor<2049x1x${Q("i8:f32, 1.0")}>
    %d = stablehlo.dot_general %lq, %rq, contracting_dims = [1] x [0] : (tensor<1x2049x${lq}>, tensor<2049x1x${Q("i8:f32, 1.0")}>) -> tensor<1x1x${I32(", 1.0:5")}>
    %s = stablehlo.bitcast_convert %d : (tensor<1x1x${I32(", 1.0:5")}>) -> tensor<1x1xi32>
    return %s : tensor<1x1xi32>
  }`, [
    // lhs stored 126 (real 127) 2048 times, then 0 (real 1); rhs 127 2048 times, then 1
    Literal.from("s8", [[...Array<number>(2048).fill(126), 0]]),
    Literal.from("s8", [...Array.from({ length: 2048 }, () => [127]), [1]]),
  ]);
  // 2048 * 127 * 127 + 1 * 1 = 33032193, odd and above 2^24 (an f32 sum cannot hold it); + zero point 5
  assert.deepEqual(out.toNested(), [[33032198]]);
});

test("dot_general with a per-axis rhs (a batch dimension) into a per-axis i32 result", () => {
  const lq = Q("i8:f32, 0.5");
  const rq = Q("i8:f32:0, {1.0,3.0}");
  const res = I32(":0, {0.5,1.5}");
  const out = run(`func.func @main(%l: tensor<2x1x2xi8>, %r: tensor<2x2x1xi8>) -> tensor<2x1x1xi32> {
    %lq = stablehlo.bitcast_convert %l : (tensor<2x1x2xi8>) -> tensor<2x1x2x${lq}>
    %rq = stablehlo.bitcast_convert %r : (tensor<2x2x1xi8>) -> tensor<2x2x1x${rq}>
    %d = stablehlo.dot_general %lq, %rq, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x1x2x${lq}>, tensor<2x2x1x${rq}>) -> tensor<2x1x1x${res}>
    %s = stablehlo.bitcast_convert %d : (tensor<2x1x1x${res}>) -> tensor<2x1x1xi32>
    return %s : tensor<2x1x1xi32>
  }`, [Literal.from("s8", [[[1, 2]], [[3, -4]]]), Literal.from("s8", [[[5], [6]], [[7], [8]]])]);
  // batch 0: 1*5 + 2*6 = 17; batch 1: 3*7 - 4*8 = -11; the scales 0.5*1 and 0.5*3 are the result's
  assert.deepEqual(out.toNested(), [[[17]], [[-11]]]);
});

test("convolution i8 -> i32: padding and lhs dilation add real zeros (the lhs zero point), a per-axis kernel with zero points", () => {
  const lq = Q("i8:f32, 0.5:3");
  const kq = Q("i8:f32:0, {1.0:1,2.0:-2}");
  const res = I32(":1, {0.5,0.5}");
  const out = run(`func.func @main(%l: tensor<1x1x3xi8>, %k: tensor<2x1x2xi8>) -> tensor<1x2x6xi32> {
    %a = stablehlo.bitcast_convert %l : (tensor<1x1x3xi8>) -> tensor<1x1x3x${lq}>
    %b = stablehlo.bitcast_convert %k : (tensor<2x1x2xi8>) -> tensor<2x1x2x${kq}>
    %c = stablehlo.convolution(%a, %b) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[1, 1]], lhs_dilate = [2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x3x${lq}>, tensor<2x1x2x${kq}>) -> tensor<1x2x6x${res}>
    %d = stablehlo.bitcast_convert %c : (tensor<1x2x6x${res}>) -> tensor<1x2x6xi32>
    return %d : tensor<1x2x6xi32>
  }`, [Literal.from("s8", [[[5, 7, 1]]]), Literal.from("s8", [[[2, 3]], [[0, -1]]])]);
  // lhs - 3 = [2, 4, -2]; dilated by 2 and padded by 1 with zeros: [0, 2, 0, 4, 0, -2, 0]
  // windows [0,2] [2,0] [0,4] [4,0] [0,-2] [-2,0]; kernel 0 less its zero point 1: [1, 2],
  // kernel 1 less -2: [2, 1]. Feature 0: a + 2b = [4, 2, 8, 4, -4, -2] at scale 0.5*1 (the result's);
  // feature 1: 2a + b = [2, 4, 4, 8, -2, -4] at scale 0.5*2, stored at result scale 0.5 as twice that.
  assert.deepEqual(out.toNested(), [[[4, 2, 8, 4, -4, -2], [4, 8, 8, 16, -4, -8]]]);
});

test("dot_general i8 -> i8 requantizes the exact sum: lhs scale * rhs scale / result scale, ties to even, clamped", () => {
  const out = run(dotProgram(RHS, Q("i8:f32, 4.0:1")), [lhsStored, Literal.from("s8", [[1, 0], [2, -1]])]);
  // real products [[10,-4],[-4,2]] (the first test) / 4 + 1 = [[3.5, 0], [0, 1.5]] -> [[4, 0], [0, 2]]
  assert.deepEqual(out.toNested(), [[4, 0], [0, 2]]);
});

test("data movement keeps the stored integers and moves the per-axis dimension with the data", () => {
  const q0 = Q("i8:f32:0, {1.0:0,10.0:0}");
  const q1 = Q("i8:f32:1, {1.0:0,10.0:0}");
  const out = run(`func.func @main(%x: tensor<2xi8>) -> tensor<3x2xf32> {
    %0 = stablehlo.bitcast_convert %x : (tensor<2xi8>) -> tensor<2x${q0}>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<2x${q0}>) -> tensor<3x2x${q1}>
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<3x2x${q1}>) -> tensor<2x3x${q0}>
    %3 = stablehlo.reshape %2 : (tensor<2x3x${q0}>) -> tensor<2x1x3x${q0}>
    %4 = stablehlo.reshape %3 : (tensor<2x1x3x${q0}>) -> tensor<2x3x${q0}>
    %5 = stablehlo.transpose %4, dims = [1, 0] : (tensor<2x3x${q0}>) -> tensor<3x2x${q1}>
    %6 = stablehlo.uniform_dequantize %5 : (tensor<3x2x${q1}>) -> tensor<3x2xf32>
    return %6 : tensor<3x2xf32>
  }`, [Literal.from("s8", [3, 4])]);
  // column 0 has scale 1, column 1 scale 10: [3, 40] in every row
  assert.deepEqual(out.toNested(), [[3, 40], [3, 40], [3, 40]]);
});

test("slice, concatenate, pad and reverse of per-tensor quantized arrays move stored values", () => {
  const q = Q("i8:f32, 0.5:1");
  const out = run(`func.func @main(%x: tensor<4xi8>) -> tensor<7xi8> {
    %0 = stablehlo.bitcast_convert %x : (tensor<4xi8>) -> tensor<4x${q}>
    %1 = stablehlo.slice %0 [1:3] : (tensor<4x${q}>) -> tensor<2x${q}>
    %2 = stablehlo.reverse %0, dims = [0] : tensor<4x${q}>
    %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<2x${q}>, tensor<4x${q}>) -> tensor<6x${q}>
    %z = stablehlo.constant dense<9> : tensor<${q}>
    %4 = stablehlo.pad %3, %z, low = [1], high = [0], interior = [0] : (tensor<6x${q}>, tensor<${q}>) -> tensor<7x${q}>
    %5 = stablehlo.bitcast_convert %4 : (tensor<7x${q}>) -> tensor<7xi8>
    return %5 : tensor<7xi8>
  }`, [Literal.from("s8", [10, 20, 30, 40])]);
  assert.deepEqual(out.toNumbers(), [9, 20, 30, 40, 30, 20, 10]);
});

test("elementwise ops dequantize, compute and quantize: multiply, maximum, negate; compare dequantizes; select", () => {
  const a = Q("i8:f32, 0.5:-2");
  const b = Q("i8:f32, 0.25");
  const r = Q("i8:f32, 1.0:5");
  const out = run(`func.func @main(%x: tensor<3xi8>, %y: tensor<3xi8>) -> (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi1>, tensor<3xi8>) {
    %xa = stablehlo.bitcast_convert %x : (tensor<3xi8>) -> tensor<3x${a}>
    %yb = stablehlo.bitcast_convert %y : (tensor<3xi8>) -> tensor<3x${b}>
    %m = stablehlo.multiply %xa, %yb : (tensor<3x${a}>, tensor<3x${b}>) -> tensor<3x${r}>
    %mx = stablehlo.maximum %xa, %yb : (tensor<3x${a}>, tensor<3x${b}>) -> tensor<3x${r}>
    %n = stablehlo.negate %xa : (tensor<3x${a}>) -> tensor<3x${r}>
    %c = stablehlo.compare GT, %xa, %yb : (tensor<3x${a}>, tensor<3x${b}>) -> tensor<3xi1>
    %s = stablehlo.select %c, %xa, %xa : tensor<3xi1>, tensor<3x${a}>
    %o1 = stablehlo.bitcast_convert %m : (tensor<3x${r}>) -> tensor<3xi8>
    %o2 = stablehlo.bitcast_convert %mx : (tensor<3x${r}>) -> tensor<3xi8>
    %o3 = stablehlo.bitcast_convert %n : (tensor<3x${r}>) -> tensor<3xi8>
    %o5 = stablehlo.bitcast_convert %s : (tensor<3x${a}>) -> tensor<3xi8>
    return %o1, %o2, %o3, %c, %o5 : tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<3xi1>, tensor<3xi8>
  }`, [Literal.from("s8", [2, 6, -10]), Literal.from("s8", [8, -4, 12])]);
  // x = (q+2)*0.5 = [2, 4, -4]; y = q*0.25 = [2, -1, 3]
  const [mul, max, neg, gt, sel] = out.elements;
  assert.deepEqual(mul!.toNumbers(), [9, 1, -7]); // [4, -4, -12] + 5
  assert.deepEqual(max!.toNumbers(), [7, 9, 8]); // [2, 4, 3] + 5
  assert.deepEqual(neg!.toNumbers(), [3, 1, 9]); // [-2, -4, 4] + 5
  assert.deepEqual(gt!.values(), [false, true, false]);
  assert.deepEqual(sel!.toNumbers(), [2, 6, -10]);
});

test("quantized constants hold stored values; types print back and reparse to the same text", () => {
  const q = Q("i8<-127:127>:f32:1, {0.1:-1,1.0e-07:0}");
  const text = `func.func @main() -> tensor<1x2x${q}> {
    %0 = stablehlo.constant dense<[[5, -7]]> : tensor<1x2x${q}>
    return %0 : tensor<1x2x${q}>
  }`;
  const printed = printStableHlo(parseStableHlo(text));
  // A scale always has a '.', as MLIR's float literals need: 1e-7 prints as 1.0e-7.
  assert.match(printed, /!quant\.uniform<i8<-127:127>:f32:1, \{0\.1:-1,1\.0e-7:0\}>/);
  assert.equal(printStableHlo(parseStableHlo(printed)), printed);
  assert.deepEqual(run(text).toNested(), [[5, -7]]);
  // Defaults are left out: full storage range, zero point 0 written as :0, unsigned storage as uN.
  const u = printStableHlo(parseStableHlo(`func.func @main(%x: tensor<2x${Q("u8<0:255>:bf16, 3")}>) -> tensor<2x${Q("u8:bf16, 3.0:0")}> {
    return %x : tensor<2x${Q("u8:bf16, 3.0:0")}>
  }`));
  assert.match(u, /tensor<2x!quant\.uniform<u8:bf16, 3\.0:0>>/);
});
