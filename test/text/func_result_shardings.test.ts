// XLA's round-trip form of function result shardings (custom calls
// `xla.sdy.FuncResultSharding` / `local_xla.sdy.FuncResultSharding` around returned
// values), read back on import as Shardy's import does: a returned call gives its
// result its sharding; a call also used elsewhere becomes a sharding constraint; an
// unused call around a returned value still shards that result; the calls go. The
// program computes what it did (values checked by hand). XLA's 64-bit split (two 32-bit
// halves through one call into an X64Combine) reads back as Shardy's round-trip import does.

import assert from "node:assert/strict";
import { test } from "node:test";
import { evaluate, Literal, parseHlo, parseStableHlo, printStableHlo } from "../../src/index.js";
import { printTensorSharding } from "../../src/text/mlir/sdy_attr_text.js";
import { ShardingError } from "../../src/sharding/axis.js";

const X = Literal.fromValues("f32", [8], [1, 2, 3, 4, 5, 6, 7, 8]);
const Y = Literal.fromValues("f32", [8], [2, 2, 2, 2, -1, -1, -1, -1]);

const MLIR = `module @m {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<8xf32>
    %1 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%0) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>"}} : (tensor<8xf32>) -> tensor<8xf32>
    %2 = stablehlo.add %1, %arg1 : tensor<8xf32>
    %3 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%2) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"b\\"}]>]>"}} : (tensor<8xf32>) -> tensor<8xf32>
    %4 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%arg0) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"a\\", \\"b\\"}]>]>"}} : (tensor<8xf32>) -> tensor<8xf32>
    return %1, %3, %arg0 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}`;

test("StableHLO: returned calls shard their results, a call used elsewhere becomes a constraint, an unused one still shards what it wraps", () => {
  const m = parseStableHlo(MLIR, "frs.mlir");
  assert.deepEqual(m.entry.resultShardings?.map((s) => (s === undefined ? undefined : printTensorSharding(s))),
    ['#sdy.sharding<@mesh, [{"a"}]>', '#sdy.sharding<@mesh, [{"b"}]>', '#sdy.sharding<@mesh, [{"a", "b"}]>']);
  const text = printStableHlo(m);
  assert.doesNotMatch(text, /FuncResultSharding|xla\.sdy\.sharding/);
  // %1 feeds the add: it stays, as a constraint; %3 was only returned and is gone.
  assert.match(text, /%1 = sdy\.sharding_constraint %0 <@mesh, \[\{"a"\}\]> : tensor<8xf32>/);
  assert.equal((text.match(/sharding_constraint/g) ?? []).length, 1);
  const [xy, sum, x] = evaluate(m.entry, [X, Y]).elements!;
  assert.deepEqual(xy!.toNumbers(), [2, 4, 6, 8, -5, -6, -7, -8]);
  assert.deepEqual(sum!.toNumbers(), [4, 6, 8, 10, -6, -7, -8, -9]);
  assert.deepEqual(x!.toNumbers(), [1, 2, 3, 4, 5, 6, 7, 8]);
});

test("HLO text: a ROOT FuncResultSharding shards the entry's result and goes", () => {
  const m = parseHlo(`HloModule m, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\\"a\\"=2]>}"}

ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  s = f32[8] subtract(p0, p1)
  ROOT r = f32[8] custom-call(s), custom_call_target="xla.sdy.FuncResultSharding", frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>"}
}`);
  assert.equal(m.entry.root.opcode, "subtract");
  assert.equal(printTensorSharding(m.entry.resultShardings![0]!), '#sdy.sharding<@mesh, [{"a"}]>');
  assert.deepEqual(evaluate(m.entry, [X, Y]).toNumbers(), [-1, 0, 1, 2, 6, 7, 8, 9]);
});

test("a FuncResultSharding without one sharding, or over several values outside XLA's 64-bit split, is a ShardingError naming the call", () => {
  const bad = MLIR.replace('#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>', "#sdy.sharding_per_value<[]>");
  assert.throws(() => parseStableHlo(bad, "bad.mlir"), (e: unknown) => e instanceof ShardingError && /local_xla\.sdy\.FuncResultSharding .*exactly one sharding/.test(e.message));
  // Two values returned as they are: not halves going into one X64Combine.
  const pair = `module @m {
  sdy.mesh @mesh = <["a"=2]>
  func.func @main(%arg0: tensor<8xui32>, %arg1: tensor<8xui32>) -> (tensor<8xui32>, tensor<8xui32>) {
    %0:2 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%arg0, %arg1) {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>"}} : (tensor<8xui32>, tensor<8xui32>) -> (tensor<8xui32>, tensor<8xui32>)
    return %0#0, %0#1 : tensor<8xui32>, tensor<8xui32>
  }
}`;
  assert.throws(() => parseStableHlo(pair, "pair.mlir"), (e: unknown) => e instanceof ShardingError && /several values is read only in XLA's 64-bit split form/.test(e.message));
});

// XLA's 64-bit split (for TPUs) as its round-trip export writes it (XLA's
// sdy_round_trip_import_pipeline.mlir): the two 32-bit halves of an s64 result pass
// through one FuncResultSharding, as a tuple or as two operands, into an X64Combine.
const SPLIT_AS_TUPLE = `module @m {
  sdy.mesh @mesh = <["a"=2]>
  func.func @main(%arg0: tensor<8xi64>) -> tensor<8xi64> {
    %x = stablehlo.add %arg0, %arg0 : tensor<8xi64>
    %0 = stablehlo.custom_call @X64SplitLow(%x) : (tensor<8xi64>) -> tensor<8xui32>
    %1 = stablehlo.custom_call @X64SplitHigh(%x) : (tensor<8xi64>) -> tensor<8xui32>
    %2 = stablehlo.tuple %0, %1 : tuple<tensor<8xui32>, tensor<8xui32>>
    %3 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%2) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>"}} : (tuple<tensor<8xui32>, tensor<8xui32>>) -> tuple<tensor<8xui32>, tensor<8xui32>>
    %4 = stablehlo.get_tuple_element %3[0] : (tuple<tensor<8xui32>, tensor<8xui32>>) -> tensor<8xui32>
    %5 = stablehlo.get_tuple_element %3[1] : (tuple<tensor<8xui32>, tensor<8xui32>>) -> tensor<8xui32>
    %6 = stablehlo.custom_call @X64Combine(%4, %5) : (tensor<8xui32>, tensor<8xui32>) -> tensor<8xi64>
    return %6 : tensor<8xi64>
  }
}`;

const SPLIT_AS_OPERANDS = `module @m {
  sdy.mesh @mesh = <["a"=2]>
  func.func @main(%arg0: tensor<8xui32>, %arg1: tensor<8xui32>) -> (tensor<8xi64>, tensor<8xi64>) {
    %0:2 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%arg0, %arg1) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>"}} : (tensor<8xui32>, tensor<8xui32>) -> (tensor<8xui32>, tensor<8xui32>)
    %1 = stablehlo.custom_call @X64Combine(%0#0, %0#1) : (tensor<8xui32>, tensor<8xui32>) -> tensor<8xi64>
    %2 = stablehlo.add %1, %1 : tensor<8xi64>
    return %1, %2 : tensor<8xi64>, tensor<8xi64>
  }
}`;

const S64 = Literal.fromValues("s64", [8], [-3n, 2n ** 40n, 7n, -(2n ** 62n), 0n, 1n, -1n, 2n ** 33n + 9n]);

test("XLA's 64-bit split through a FuncResultSharding (halves as a tuple): the X64Combine and the result take the sharding, the values stay", () => {
  const m = parseStableHlo(SPLIT_AS_TUPLE, "split.mlir");
  assert.deepEqual(m.entry.resultShardings?.map((s) => s && printTensorSharding(s)), ['#sdy.sharding<@mesh, [{"a"}]>']);
  const text = printStableHlo(m);
  assert.doesNotMatch(text, /FuncResultSharding|xla\.sdy\.sharding|get_tuple_element/);
  assert.match(text, /stablehlo\.custom_call @X64Combine\(%\w+, %\w+\) \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"a"\}\]>\]>\}/);
  assert.deepEqual(evaluate(m.entry, [S64]).values(), S64.values().map((v) => 2n * (v as bigint)));
});

test("XLA's 64-bit split through a FuncResultSharding (halves as two operands), its X64Combine also used by another op", () => {
  const m = parseStableHlo(SPLIT_AS_OPERANDS, "split.mlir");
  // As Shardy's import: the returned X64Combine's result is sharded; the add's result is not.
  assert.deepEqual(m.entry.resultShardings?.map((s) => s && printTensorSharding(s)), ['#sdy.sharding<@mesh, [{"a"}]>', undefined]);
  assert.doesNotMatch(printStableHlo(m), /FuncResultSharding|sharding_constraint/);
  const low = Literal.fromValues("u32", [8], [0xfffffffd, 0, 7, 0, 0, 1, 0xffffffff, 9]);
  const high = Literal.fromValues("u32", [8], [0xffffffff, 256, 0, 0xc0000000, 0, 0, 0xffffffff, 2]);
  const [combined, doubled] = evaluate(m.entry, [low, high]).elements;
  assert.deepEqual(combined!.values(), S64.values());
  assert.deepEqual(doubled!.values(), S64.values().map((v) => 2n * (v as bigint)));
});

test("HLO text: XLA's 64-bit split through a FuncResultSharding reads back as in StableHLO", () => {
  const m = parseHlo(`HloModule m, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\\"a\\"=2]>}"}
ENTRY main {
  p = s64[8] parameter(0)
  lo = u32[8] custom-call(p), custom_call_target="X64SplitLow"
  hi = u32[8] custom-call(p), custom_call_target="X64SplitHigh"
  t = (u32[8], u32[8]) tuple(lo, hi)
  f = (u32[8], u32[8]) custom-call(t), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\\"a\\"}]>]>"}
  g0 = u32[8] get-tuple-element(f), index=0
  g1 = u32[8] get-tuple-element(f), index=1
  ROOT c = s64[8] custom-call(g0, g1), custom_call_target="X64Combine"
}`, "split.hlo");
  assert.deepEqual(m.entry.resultShardings?.map((s) => s && printTensorSharding(s)), ['#sdy.sharding<@mesh, [{"a"}]>']);
  assert.match(printStableHlo(m), /@X64Combine\(%0, %1\) \{sdy\.sharding = /);
  assert.deepEqual(evaluate(m.entry, [S64]).values(), S64.values());
});
