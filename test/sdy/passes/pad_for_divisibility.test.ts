// -sdy-pad-for-divisibility: a dimension its sharding does not divide is padded at the
// high end to the next multiple of its shard count; collectives pad their operands for
// their out sharding and slice gathered dimensions back; a dot_general's contracting
// dimensions get zeros in their padding (a select on an iota mask unless the pass made
// the padding itself); a stablehlo.pad whose high edge shrinks sets the operand's own
// padding to the pad value first. The expected programs follow from those rules by hand
// (Shardy's lit tests in /work/shared cover the cases its authors wrote).

import assert from "node:assert/strict";
import { test } from "node:test";
import { divisiblePaddedDims } from "../../../src/sdy/passes/pad_for_divisibility.js";
import { mesh, sharding } from "../helpers.js";
import { runOpt } from "./opt.js";

const run = (text: string): { rc: number; out: string; err: string } => runOpt(text, "-sdy-pad-for-divisibility");

/** The printed body of the one function: its lines between the header and the closing brace, trimmed. */
function body(text: string): string[] {
  const { rc, out, err } = run(text);
  assert.equal(rc, 0, err);
  const lines = out.split("\n").map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith("func.func"));
  return lines.slice(start + 1, lines.indexOf("}", start));
}

const X = "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}]>]>}";
const XY = "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}, {\"y\"}]>]>}";

test("padded sizes round each sharded dimension up to a multiple of its shard count", () => {
  const meshes = new Map([["mesh", mesh({ x: 4, y: 2 })]]);
  assert.deepEqual(divisiblePaddedDims([7, 8], sharding('[{"x"}, {}]'), meshes), [8, 8]);
  assert.deepEqual(divisiblePaddedDims([6, 3], sharding('[{"x", "y"}, {"y"}]'), meshes), [8, 4]);
  // A sub-axis of size 2 of "x" splits 5 into 2 shards of 3.
  assert.deepEqual(divisiblePaddedDims([5], sharding('[{"x":(1)2}]'), meshes), [6]);
  assert.deepEqual(divisiblePaddedDims([7, 7], sharding("[{}, {}]"), meshes), [7, 7]);
  assert.deepEqual(divisiblePaddedDims([7], undefined, meshes), [7]);
});

test("a pad whose high edge shrinks masks the operand's padding with the pad value; the gather is trimmed", () => {
  // 6 padded to 8 for the all_slice; the pad's 13 must become 16 = 8 + 0 + 7*1 + high, so high = 1 < 2:
  // the operand's 2 padding elements now sit inside the result and must hold %arg1.
  assert.deepEqual(body(`sdy.mesh @mesh = <["x"=4]>
func.func @f(%arg0: tensor<6xf32>, %arg1: tensor<f32>) -> tensor<13xf32> {
  %0 = sdy.all_slice [{"x"}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<6xf32>
  %1 = stablehlo.pad %0, %arg1, low = [0], high = [2], interior = [1] ${X} : (tensor<6xf32>, tensor<f32>) -> tensor<13xf32>
  %2 = sdy.all_gather [{"x"}] %1 out_sharding=<@mesh, [{}]> : tensor<13xf32>
  return %2 : tensor<13xf32>
}`), [
    "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
    "%0 = stablehlo.pad %arg0, %cst, low = [0], high = [2], interior = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<8xf32>",
    "%1 = sdy.all_slice [{\"x\"}] %0 out_sharding=<@mesh, [{\"x\"}]> : tensor<8xf32>",
    `%2 = stablehlo.iota dim = 0 ${X} : tensor<8xi32>`,
    "%c = stablehlo.constant dense<6> : tensor<i32>",
    `%3 = stablehlo.broadcast_in_dim %c, dims = [] ${X} : (tensor<i32>) -> tensor<8xi32>`,
    `%4 = stablehlo.compare LT, %2, %3 ${X} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>`,
    `%5 = stablehlo.broadcast_in_dim %arg1, dims = [] ${X} : (tensor<f32>) -> tensor<8xf32>`,
    `%6 = stablehlo.select %4, %1, %5 ${X} : tensor<8xi1>, tensor<8xf32>`,
    `%7 = stablehlo.pad %6, %arg1, low = [0], high = [1], interior = [1] ${X} : (tensor<8xf32>, tensor<f32>) -> tensor<16xf32>`,
    "%8 = sdy.all_gather [{\"x\"}] %7 out_sharding=<@mesh, [{}]> : tensor<16xf32>",
    "%9 = stablehlo.slice %8 [0:13] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : (tensor<16xf32>) -> tensor<13xf32>",
    "return %9 : tensor<13xf32>",
  ]);
});

test("a dot_general masks an operand whose padding an op made unknown, on both contracting dims; a freshly padded one needs no mask", () => {
  assert.deepEqual(body(`sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @g(%arg0: tensor<7x7xf32>, %arg1: tensor<7x7xf32>) -> tensor<f32> {
  %0 = sdy.all_slice [{"x"}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<7x7xf32>
  %1 = stablehlo.negate %0 ${XY} : tensor<7x7xf32>
  %2 = sdy.all_slice [{"x"}, {"y"}] %arg1 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<7x7xf32>
  %3 = stablehlo.dot_general %1, %2, contracting_dims = [0, 1] x [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : (tensor<7x7xf32>, tensor<7x7xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}`), [
    "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
    "%0 = stablehlo.pad %arg0, %cst, low = [0, 0], high = [1, 1], interior = [0, 0] : (tensor<7x7xf32>, tensor<f32>) -> tensor<8x8xf32>",
    "%1 = sdy.all_slice [{\"x\"}, {\"y\"}] %0 out_sharding=<@mesh, [{\"x\"}, {\"y\"}]> : tensor<8x8xf32>",
    `%2 = stablehlo.negate %1 ${XY} : tensor<8x8xf32>`,
    "%cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
    "%3 = stablehlo.pad %arg1, %cst_0, low = [0, 0], high = [1, 1], interior = [0, 0] : (tensor<7x7xf32>, tensor<f32>) -> tensor<8x8xf32>",
    "%4 = sdy.all_slice [{\"x\"}, {\"y\"}] %3 out_sharding=<@mesh, [{\"x\"}, {\"y\"}]> : tensor<8x8xf32>",
    "%cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
    `%5 = stablehlo.iota dim = 0 ${XY} : tensor<8x8xi32>`,
    "%c = stablehlo.constant dense<7> : tensor<i32>",
    `%6 = stablehlo.broadcast_in_dim %c, dims = [] ${XY} : (tensor<i32>) -> tensor<8x8xi32>`,
    `%7 = stablehlo.compare LT, %5, %6 ${XY} : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>`,
    `%8 = stablehlo.iota dim = 1 ${XY} : tensor<8x8xi32>`,
    "%c_2 = stablehlo.constant dense<7> : tensor<i32>",
    `%9 = stablehlo.broadcast_in_dim %c_2, dims = [] ${XY} : (tensor<i32>) -> tensor<8x8xi32>`,
    `%10 = stablehlo.compare LT, %8, %9 ${XY} : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>`,
    `%11 = stablehlo.and %7, %10 ${XY} : tensor<8x8xi1>`,
    `%12 = stablehlo.broadcast_in_dim %cst_1, dims = [] ${XY} : (tensor<f32>) -> tensor<8x8xf32>`,
    `%13 = stablehlo.select %11, %2, %12 ${XY} : tensor<8x8xi1>, tensor<8x8xf32>`,
    "%14 = stablehlo.dot_general %13, %4, contracting_dims = [0, 1] x [0, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<f32>",
    "return %14 : tensor<f32>",
  ]);
});

test("a program whose shardings all divide is left as it is", () => {
  const text = `sdy.mesh @mesh = <["x"=4]>
func.func @h(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 ${X} : tensor<8xf32>
  %1 = sdy.all_gather [{"x"}] %0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}`;
  assert.deepEqual(body(text), [
    `%0 = stablehlo.negate %arg0 ${X} : tensor<8xf32>`,
    "%1 = sdy.all_gather [{\"x\"}] %0 out_sharding=<@mesh, [{}]> : tensor<8xf32>",
    "return %1 : tensor<8xf32>",
  ]);
});

test("function arguments and results must divide", () => {
  const arg = run(`sdy.mesh @mesh = <["x"=4]>
func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<6xf32> {
  return %arg1 : tensor<6xf32>
}`);
  assert.equal(arg.rc, 1);
  assert.match(arg.err, /2:1: error: 'func.func' op argument #1 has a non-divisible sharding\. Shardy expects function IO to be divisible\./);
  assert.match(arg.err, /error: failed to legalize operation 'func.func'/);
  const result = run(`sdy.mesh @mesh = <["x"=4]>
func.func @f(%arg0: tensor<6xf32>) -> (tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  return %arg0 : tensor<6xf32>
}`);
  assert.equal(result.rc, 1);
  assert.match(result.err, /'func.func' op result #0 has a non-divisible sharding/);
});

test("cases the rewrite does not cover fail with a typed error naming the op", () => {
  // The negate is rebuilt on the padded operand (its result has no sharding, so it stays 8 long);
  // the abs needs no padding itself, and Shardy would hand it a cast back to 6.
  const unconverted = run(`sdy.mesh @mesh = <["x"=4]>
func.func @f(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  %0 = sdy.all_slice [{"x"}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<6xf32>
  %1 = stablehlo.negate %0 : tensor<6xf32>
  %2 = stablehlo.abs %1 : tensor<6xf32>
  return %2 : tensor<6xf32>
}`);
  assert.equal(unconverted.rc, 1);
  assert.match(unconverted.err, /sdy-pad-for-divisibility: 'stablehlo.abs' \(.*\): an operand was padded/);
  // The output feature dimension (2) sharded 4 ways would need padding the convolution cannot produce.
  const conv = run(`sdy.mesh @mesh = <["x"=4]>
func.func @c(%arg0: tensor<1x8x3xf32>, %arg1: tensor<3x3x2xf32>) -> tensor<1x6x2xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}]>]>} : (tensor<1x8x3xf32>, tensor<3x3x2xf32>) -> tensor<1x6x2xf32>
  return %0 : tensor<1x6x2xf32>
}`);
  assert.equal(conv.rc, 1);
  // Inside a manual computation the negate's 4 local elements do not divide 3 ways; bodies are not rewritten.
  const region = run(`sdy.mesh @mesh = <["x"=4, "y"=3]>
func.func @m(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<4xf32>) {
    %1 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}`);
  assert.equal(region.rc, 1);
  assert.match(region.err, /'stablehlo.negate' .*needs padding; only function bodies are rewritten/);
  assert.match(conv.err, /sdy-pad-for-divisibility: 'stablehlo.convolution'.*result dimension 2 comes out as 2, not the 4/);
});
