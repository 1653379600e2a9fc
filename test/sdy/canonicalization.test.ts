// Shardy's canonicalization patterns under `-canonicalize`, on programs other than the
// lit test's; the expected programs follow by hand from each pattern's definition in
// Shardy (canonicalization.td / .cc) and MLIR's dead-code rule (reshard is pure, the
// collectives are not).

import assert from "node:assert/strict";
import { test } from "node:test";
import { runPasses } from "../../src/passes/pass.js";
import { passFromFlag } from "../../src/cli/pass_registry.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";

const MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2, "c"=4]>';

/** The body lines of `main` after -canonicalize, trimmed. */
function canonicalize(args: string, results: string, lines: string): string[] {
  const text = `${MESH}\nfunc.func @main(${args}) -> (${results}) {\n${lines}\n}`;
  const out = runPasses(parseStableHlo(text), [passFromFlag("-canonicalize")!], { verify: true }).module;
  return printStableHlo(out).split("\n").map((l) => l.trim()).filter((l) => l.startsWith("%") || l.startsWith("return"));
}

const T = "tensor<8x8xf32>";

test("reshard of a single-use reshard is one reshard; a reshard of a value resharded the same way earlier is that one", () => {
  const out = canonicalize(`%arg0: ${T} {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}`, `${T}, ${T}, ${T}, ${T}`, `
  %0 = sdy.reshard %arg0 <@mesh, [{"b"}, {}]> : ${T}
  %1 = sdy.reshard %0 <@mesh, [{}, {"c"}]> : ${T}
  %2 = sdy.reshard %arg0 <@mesh, [{"a"}, {"b"}]> : ${T}
  %3 = sdy.reshard %2 <@mesh, [{}, {"b"}]> : ${T}
  %4 = sdy.reshard %arg0 <@mesh, [{"a"}, {"b"}]> : ${T}
  %5 = sdy.reshard %arg0 <@mesh, [{}, {"a"}]> : ${T}
  return %1, %3, %4, %2 : ${T}, ${T}, ${T}, ${T}`);
  // %1 -> reshard(%arg0) and %0 dies; %2 has two uses so %3 stays; %4 is %2; %5 is unused (reshard is pure).
  assert.deepEqual(out, [
    `%0 = sdy.reshard %arg0 <@mesh, [{}, {"c"}]> : ${T}`,
    `%1 = sdy.reshard %arg0 <@mesh, [{"a"}, {"b"}]> : ${T}`,
    `%2 = sdy.reshard %1 <@mesh, [{}, {"b"}]> : ${T}`,
    `return %0, %2, %1, %1 : ${T}, ${T}, ${T}, ${T}`,
  ]);
});

test("all_to_alls on distinct dimensions fuse, parameters sorted by source dimension; overlapping ones stay", () => {
  const T4 = "tensor<8x8x8x8xf32>";
  const out = canonicalize(`%arg0: ${T4} {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}, {}, {}]>}`, T4, `
  %0 = sdy.all_to_all [{"b"}: 1->3] %arg0 out_sharding=<@mesh, [{"a"}, {}, {}, {"b"}]> : ${T4}
  %1 = sdy.all_to_all [{"a"}: 0->2] %0 out_sharding=<@mesh, [{}, {}, {"a"}, {"b"}]> : ${T4}
  return %1 : ${T4}`);
  assert.deepEqual(out, [`%0 = sdy.all_to_all [{"a"}: 0->2, {"b"}: 1->3] %arg0 out_sharding=<@mesh, [{}, {}, {"a"}, {"b"}]> : ${T4}`, `return %0 : ${T4}`]);
  const T3 = "tensor<8x8x8xf32>";
  const kept = canonicalize(`%arg0: ${T3} {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}, {"c"}]>}`, T3, `
  %0 = sdy.all_to_all [{"c"}: 2->1] %arg0 out_sharding=<@mesh, [{"a"}, {"c"}, {}]> : ${T3}
  %1 = sdy.all_to_all [{"a"}: 0->2] %0 out_sharding=<@mesh, [{}, {"c"}, {"a"}]> : ${T3}
  return %1 : ${T3}`);
  assert.equal(kept.length, 3, kept.join("\n"));
});

test("all_reduce of sharded_to_unreduced on the same axes (in mesh order) is an all_gather; the sharded_to_unreduced stays", () => {
  const out = canonicalize(`%arg0: ${T} {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {"a"}]>}`, T, `
  %0 = sdy.sharded_to_unreduced [{"b"}, {"a"}] %arg0 out_sharding=<@mesh, [{}, {}], unreduced={"a", "b"}> : ${T}
  %1 = sdy.all_reduce {"a", "b"} %0 out_sharding=<@mesh, [{}, {}]> : ${T}
  return %1 : ${T}`);
  assert.deepEqual(out, [
    `%0 = sdy.sharded_to_unreduced [{"b"}, {"a"}] %arg0 out_sharding=<@mesh, [{}, {}], unreduced={"a", "b"}> : ${T}`,
    `%1 = sdy.all_gather [{"b"}, {"a"}] %arg0 out_sharding=<@mesh, [{}, {}]> : ${T}`,
    `return %1 : ${T}`,
  ]);
});

test("all_reduce then all_slice: a reduce_scatter of the reduced prefix, then an all_slice of the rest", () => {
  const T2 = "tensor<16x8xf32>";
  const out = canonicalize(`%arg0: ${T2} {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}`, T2, `
  %0 = sdy.all_reduce min {"a"} %arg0 out_sharding=<@mesh, [{"b"}, {}]> : ${T2}
  %1 = sdy.all_slice [{"a", "c"}, {}] %0 out_sharding=<@mesh, [{"b", "a", "c"}, {}]> : ${T2}
  return %1 : ${T2}`);
  assert.deepEqual(out, [
    `%0 = sdy.reduce_scatter min [{"a"}, {}] %arg0 out_sharding=<@mesh, [{"b", "a"}, {}]> : ${T2}`,
    `%1 = sdy.all_slice [{"c"}, {}] %0 out_sharding=<@mesh, [{"b", "a", "c"}, {}]> : ${T2}`,
    `return %1 : ${T2}`,
  ]);
  // A reduction axis that no dimension's slicing starts with: nothing fuses.
  const kept = canonicalize(`%arg0: ${T2} {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}`, T2, `
  %0 = sdy.all_reduce {"a"} %arg0 out_sharding=<@mesh, [{"b"}, {}]> : ${T2}
  %1 = sdy.all_slice [{"c", "a"}, {}] %0 out_sharding=<@mesh, [{"b", "c", "a"}, {}]> : ${T2}
  return %0 : ${T2}`);
  assert.ok(kept.some((l) => l.includes("sdy.all_reduce")) && !kept.some((l) => l.includes("reduce_scatter")), kept.join("\n"));
});

test("collectives that move nothing fold to their operand; a collective_permute to another mesh does not", () => {
  const out = canonicalize(`%arg0: ${T} {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {}]>}`, `${T}, ${T}`, `
  %0 = sdy.all_slice [{}, {}] %arg0 out_sharding=<@mesh, [{"a"}, {}]> : ${T}
  %1 = sdy.collective_permute %0 out_sharding=<@mesh, [{"a"}, {}]> : ${T}
  %2 = sdy.reduce_scatter [{}, {}] %1 out_sharding=<@mesh, [{"a"}, {}]> : ${T}
  %3 = sdy.all_gather [{"a"}, {}] %2 out_sharding=<@mesh, [{}, {}]> : ${T}
  %4 = sdy.all_slice [{"a"}, {}] %3 out_sharding=<@mesh, [{"a"}, {}]> : ${T}
  return %4, %3 : ${T}, ${T}`);
  // The chain collapses to %arg0; the all_gather is used (returned) and stays.
  assert.deepEqual(out, [`%0 = sdy.all_gather [{"a"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : ${T}`, `return %arg0, %0 : ${T}, ${T}`]);
});

test("manual_computation: unused body arguments go with their operands and in_shardings", () => {
  const out = canonicalize(`%arg0: ${T}, %arg1: ${T}, %arg2: ${T}`, `${T}, ${T}`, `
  %0:2 = sdy.manual_computation(%arg0, %arg1, %arg2) in_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{"b"}, {}]>, <@mesh, [{}, {"a"}]>] out_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{}, {"a"}]>] manual_axes={"a"} (%arg3: tensor<4x8xf32>, %arg4: tensor<8x8xf32>, %arg5: tensor<8x4xf32>) {
    %1 = stablehlo.abs %arg3 : tensor<4x8xf32>
    %2 = stablehlo.negate %arg5 : tensor<8x4xf32>
    sdy.return %1, %2 : tensor<4x8xf32>, tensor<8x4xf32>
  } : (${T}, ${T}, ${T}) -> (${T}, ${T})
  return %0#0, %0#1 : ${T}, ${T}`);
  assert.deepEqual(out, [
    `%0:2 = sdy.manual_computation(%arg0, %arg2) in_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{}, {"a"}]>] out_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{}, {"a"}]>] manual_axes={"a"} (%arg3: tensor<4x8xf32>, %arg4: tensor<8x4xf32>) {`,
    "%1 = stablehlo.abs %arg3 : tensor<4x8xf32>",
    "%2 = stablehlo.negate %arg4 : tensor<8x4xf32>",
    `return %0#0, %0#1 : ${T}, ${T}`,
  ]);
});

test("manual_computation over manual axes of total size 1 is inlined; one with no values and an empty body is erased", () => {
  const text = `sdy.mesh @mesh = <["a"=1, "b"=2]>
func.func @main(%arg0: ${T}, %arg1: ${T}) -> (${T}, ${T}) {
  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={} () {
    sdy.return
  } : () -> ()
  %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{"b"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{"b"}, {}]>] manual_axes={"a"} (%arg2: ${T}, %arg3: ${T}) {
    %1 = stablehlo.add %arg2, %arg3 : ${T}
    %2 = stablehlo.negate %arg3 : ${T}
    sdy.return %1, %2 : ${T}, ${T}
  } : (${T}, ${T}) -> (${T}, ${T})
  return %0#1, %0#0 : ${T}, ${T}
}`;
  const out = printStableHlo(runPasses(parseStableHlo(text), [passFromFlag("-canonicalize")!], { verify: true }).module);
  const lines = out.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("%") || l.startsWith("return") || l.startsWith("sdy.manual"));
  assert.deepEqual(lines, [
    `%0 = stablehlo.add %arg0, %arg1 : ${T}`,
    `%1 = stablehlo.negate %arg1 : ${T}`,
    `return %1, %0 : ${T}, ${T}`,
  ]);
});
