// HLO ops StableHLO has no op for travel through StableHLO text as the custom calls XLA
// itself emits (call_target_name = "mhlo.<op>", attributes under mhlo.attributes;
// ragged_all_to_all as JAX writes it) or as CHLO ops, and come back as the same HLO.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { parseHlo, printHlo } from "../../../src/text/hlo/index.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";
import { CONTROL, DISTRIBUTED, ELEMENTWISE, withoutNames } from "./modules.js";

const XLA_ONLY = `HloModule xla_only, entry_computation_layout={(f32[4]{0}, s32[], f32[2,3]{1,0}, f32[3,2]{1,0}, f32[2,1]{1,0}, f32[1,2]{1,0}, s32[2]{0})->f32[4]{0}}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (v: f32[4], n: s32[], a: f32[2,3], b: f32[3,2], sa: f32[2,1], sb: f32[1,2], off: s32[2]) -> f32[4] {
  %v = f32[4]{0} parameter(0)
  %n = s32[] parameter(1)
  %a = f32[2,3]{1,0} parameter(2)
  %b = f32[3,2]{1,0} parameter(3)
  %sa = f32[2,1]{1,0} parameter(4)
  %sb = f32[1,2]{1,0} parameter(5)
  %off = s32[2]{0} parameter(6)
  %sds = f32[<=4]{0} set-dimension-size(f32[4]{0} %v, s32[] %n), dimensions={0}
  %erf = f32[4]{0} erf(f32[4]{0} %v)
  %small = (f32[2]{0}, s32[2]{0}) topk(f32[4]{0} %v), k=2, largest=false
  %sdot = f32[2,2]{1,0} scaled-dot(f32[2,3]{1,0} %a, f32[3,2]{1,0} %b, f32[2,1]{1,0} %sa, f32[1,2]{1,0} %sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %ra2a = f32[4]{0} ragged-all-to-all(f32[4]{0} %v, f32[4]{0} %v, s32[2]{0} %off, s32[2]{0} %off, s32[2]{0} %off, s32[2]{0} %off), replica_groups={{0,1}}
  %ags = (f32[4]{0}, f32[8]{0}) all-gather-start(f32[4]{0} %v), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  %agd = f32[8]{0} all-gather-done((f32[4]{0}, f32[8]{0}) %ags)
  %ars = f32[4]{0} all-reduce-start(f32[4]{0} %v), replica_groups={{0,1}}, to_apply=%add
  %ard = f32[4]{0} all-reduce-done(f32[4]{0} %ars)
  %cps = (f32[4]{0}, f32[4]{0}) collective-permute-start(f32[4]{0} %v), channel_id=2, source_target_pairs={{0,1},{1,0}}
  ROOT %cpd = f32[4]{0} collective-permute-done((f32[4]{0}, f32[4]{0}) %cps)
}
`;

/** XLA's dynamic-reshape takes scalar sizes; StableHLO's dynamic_reshape one shape vector. */
const DYNAMIC_RESHAPE = `HloModule dynamic_reshape, entry_computation_layout={(f32[8]{0}, s32[], s32[])->f32[<=4,2]{1,0}}

ENTRY %main (x: f32[8], a: s32[], b: s32[]) -> f32[<=4,2] {
  %x = f32[8]{0} parameter(0)
  %a = s32[] parameter(1)
  %b = s32[] parameter(2)
  ROOT %r = f32[<=4,2]{1,0} dynamic-reshape(f32[8]{0} %x, s32[] %a, s32[] %b)
}
`;

for (const [name, hlo] of Object.entries({ XLA_ONLY, DISTRIBUTED, DYNAMIC_RESHAPE })) {
  test(`HLO → StableHLO → HLO keeps the program: ${name.toLowerCase()}`, () => {
    const mlir = printStableHlo(parseHlo(hlo));
    assert.equal(withoutNames(printHlo(parseStableHlo(mlir, "converted.mlir"))), withoutNames(hlo));
    assert.equal(printStableHlo(parseStableHlo(mlir)), mlir);
  });
}

// The expected texts are StableHLO's own printed forms (its ops' assembly formats;
// stablehlo/tests/print_stablehlo.mlir shows the same spellings).
test("XLA-only ops print as XLA's custom calls and CHLO ops", () => {
  const mlir = printStableHlo(parseHlo(XLA_ONLY));
  for (const expected of [
    `stablehlo.set_dimension_size %arg0, %arg1, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>`,
    `chlo.erf %arg0 : tensor<4xf32> -> tensor<4xf32>`,
    `stablehlo.custom_call @mhlo.topk(%arg0) {mhlo.attributes = {k = 2 : i64, largest = false}}`,
    `@mhlo.scaled_dot(%arg2, %arg3, %arg4, %arg5) {mhlo.attributes = {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}}`,
    `@ragged_all_to_all(%arg0, %arg0, %arg6, %arg6, %arg6, %arg6) {api_version = 4 : i32, backend_config = {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}}`,
    `@mhlo.all_reduce_start(%arg0) {called_computations = [@add], mhlo.attributes = {replica_groups`,
    `-> tuple<tensor<4xf32>, tensor<8xf32>>`,
  ]) assert.ok(mlir.includes(expected), `missing ${expected} in\n${mlir}`);
  const control = printStableHlo(parseHlo(CONTROL));
  assert.match(control, /stablehlo\.custom_call @mhlo\.add_dependency\(%arg0, %\d+\) : \(tensor<f32>, !stablehlo.token\) -> tensor<f32>/);
});

test("top_k keeping the largest prints as chlo.top_k; CHLO's pretty syntax reads back", () => {
  const m = parseStableHlo(`func.func @main(%x: tensor<5x3xf32>) -> (tensor<5x2xf32>, tensor<5x2xi32>) {
    %0:2 = chlo.top_k(%x, k = 2) : tensor<5x3xf32> -> (tensor<5x2xf32>, tensor<5x2xi32>)
    %e = chlo.erf %x : tensor<5x3xf32> -> tensor<5x3xf32>
    func.return %0#0, %0#1 : tensor<5x2xf32>, tensor<5x2xi32>
  }`);
  const topk = m.entry.instructions.find((i) => i.opcode === "topK");
  assert.deepEqual(topk?.attrs, { k: 2, largest: true });
  assert.ok(m.entry.instructions.some((i) => i.opcode === "erf"));
  // top_k's two results are named after its ODS results, as MLIR names them.
  assert.match(printStableHlo(m), /%values, %indices = chlo\.top_k\(%arg0, k = 2\) : tensor<5x3xf32> -> \(tensor<5x2xf32>, tensor<5x2xi32>\)/);
});

test("result_accuracy and XLA frontend attributes are spelled as StableHLO and XLA spell them", () => {
  const mlir = printStableHlo(parseHlo(ELEMENTWISE));
  // StableHLO's printer leaves out the tolerances that are zero.
  assert.ok(mlir.includes(`result_accuracy = #stablehlo.result_accuracy<atol = 5.000000e-01, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>`), mlir);
  assert.ok(mlir.includes(`mode = #stablehlo.result_accuracy_mode<HIGHEST>`), mlir);
  const distributed = printStableHlo(parseHlo(DISTRIBUTED));
  assert.ok(distributed.includes(`mhlo.frontend_attributes = {_xla_send_recv_source_target_pairs = "{{0,1}}"}`), distributed);
});

test("dynamic_reshape with a computed shape vector imports as XLA's dynamic-reshape", () => {
  const m = parseStableHlo(`func.func @main(%x: tensor<8xf32>, %s: tensor<2xi32>) -> tensor<?x2xf32, #stablehlo.bounds<4, ?>> {
    %0 = stablehlo.dynamic_reshape %x, %s : (tensor<8xf32>, tensor<2xi32>) -> tensor<?x2xf32, #stablehlo.bounds<4, ?>>
    func.return %0 : tensor<?x2xf32, #stablehlo.bounds<4, ?>>
  }`);
  assert.equal(m.entry.root.opcode, "dynamicReshape");
  assert.equal(m.entry.root.operands.length, 3);
  assert.deepEqual(m.entry.root.operands.slice(1).map((o) => o.opcode), ["reshape", "reshape"]);
});
