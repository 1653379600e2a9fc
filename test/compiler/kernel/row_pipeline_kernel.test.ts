// The statements of row pipelines (kernel/row_pipeline_kernel.ts), checked on their own:
// softmax for a plain 128-bit vector target and WebAssembly's schedule (three skewed
// stages, the rings of results, the row buffer of exp(x - max) stored by stage 1 and
// read by stage 2, the steps where only some stages have a row), layer norm for the C
// targets (no row buffer, lane arrays and their AVX-512 form, halving folds), and a bf16
// softmax in the interpreter's order (one row at a time, the stages in turn, one ring
// slot). What the printed kernels compute is checked against the interpreter by
// test/compiler/row_pipeline_results.test.ts.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Computation } from "../../../src/index.js";
import { lowerFusion, type FusedKernelIR } from "../../../src/compiler/kernel/lower_fusion.js";
import { scheduleReduce, type ReduceTarget } from "../../../src/compiler/kernel/schedule_reduce.js";
import type { ReduceKernelTarget } from "../../../src/compiler/kernel/reduce_kernel.js";
import { rowPipelineKernel } from "../../../src/compiler/kernel/row_pipeline_kernel.js";
import { constant, statements, type IndexExpr, type Kernel, type Stmt } from "../../../src/compiler/kernel/kernel_ir.js";
import { WASM_REDUCE_TARGET } from "../../../src/compiler/wasm/emit_reduce.js";
import { C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET } from "../../../src/compiler/native/emit_c_reduce.js";
import { layerNorm, softmax, VECTOR128_TARGET as TARGET } from "./programs.js";

function kernelOf(c: Computation, reduceTarget: ReduceTarget, target: ReduceKernelTarget): Kernel {
  const ir = lowerFusion(c);
  if ("declined" in ir) throw new Error(ir.declined);
  const s = scheduleReduce(ir as FusedKernelIR, reduceTarget);
  if ("declined" in s) throw new Error(s.declined);
  const k = rowPipelineKernel(ir as FusedKernelIR, s, target);
  assert.ok(k !== undefined, "not a row pipeline");
  return k;
}

const only = <S extends Stmt["s"]>(body: readonly Stmt[], s: S): Extract<Stmt, { s: S }>[] =>
  [...statements(body)].filter((x): x is Extract<Stmt, { s: S }> => x.s === s);
/** An index expression written out: `t - 1`, `row1 % 3`. */
const text = (e: IndexExpr): string => {
  switch (e.op) {
    case "const": return String(e.value);
    case "index": return e.name;
    case "node": return `n${e.id}`;
    default: return `${text(e.a)} ${{ add: "+", sub: "-", mul: "*", div: "/", rem: "%", min: "min" }[e.op]} ${text(e.b)}`;
  }
};
const conditions = (st: Extract<Stmt, { s: "if" }>): string[] => st.less.map((x) => `${text(x.a)} < ${text(x.b)}`);

test("softmax (WebAssembly's schedule): three skewed stages, rings of max and sum, exp(x - max) in a row buffer, and the partial steps", () => {
  const k = kernelOf(softmax("f32", [8, 1000], false), WASM_REDUCE_TARGET, TARGET);
  assert.deepEqual(k.scratch, [
    { name: "h0", type: "f32", slots: 3, length: 1 },
    { name: "h1", type: "f32", slots: 3, length: 1 },
    { name: "m0", type: "f32", slots: 3, length: 1000 },
  ]);
  assert.deepEqual(k.units, { index: "t", from: "begin", to: "last" });
  assert.deepEqual(only(k.prologue!, "index").map((x) => [x.name, text(x.value)]), [["j", "0"], ["last", "end + 2"]]);
  // No per-row outputs: the unit is one choice, all three stages or those that have a row.
  assert.equal(k.unit.length, 1);
  const top = k.unit[0] as Extract<Stmt, { s: "if" }>;
  assert.equal(top.s, "if");
  assert.deepEqual(conditions(top), ["begin + 2 < t + 1", "t < end + 0"]);
  const all = top.then;
  assert.deepEqual(only(all, "index").filter((x) => x.name.startsWith("row")).map((x) => [x.name, text(x.value)]), [
    ["row0", "t"], ["row1", "t - 1"], ["row2", "t - 2"],
  ]);
  // Stage 1 reads the max of its row, stage 2 the sum of its row (its e is the row buffer's).
  assert.deepEqual(only(all, "scratchLoad").map((x) => [x.scratch, text(x.slot)]), [["h0", "row1 % 3"], ["h1", "row2 % 3"]]);
  assert.deepEqual(only(all, "scratchStore").map((x) => [x.scratch, text(x.slot)]), [["h0", "row0 % 3"], ["h1", "row1 % 3"]]);
  assert.deepEqual(only(all, "slot").map((x) => [x.name, x.scratch, text(x.slot), x.output]), [
    ["m0_1", "m0", "row1 % 3", true], ["m0_2", "m0", "row2 % 3", false],
  ]);
  // Stage 2 reads e through the slot's pointer, as a row load of stride 1.
  const bufferLoads = [...k.rowLoads].filter(([id]) => (k.graph.node(id).attr as number) >= k.buffers);
  assert.deepEqual(bufferLoads.map(([, r]) => r), [{ pointer: "m0_2", stride: 1 }]);
  // One vector loop of all stages: e into the row buffer, e / sum out, max and sum accumulated.
  const loops = only(all, "loop");
  assert.deepEqual(loops.map((l) => [l.lanes, l.copies]), [[4, 4], [4, 1], [1, 1]]);
  assert.deepEqual(loops[0]!.body.filter((x) => x.s === "store").map((x) => (x as { pointer: string }).pointer), ["m0_1", "out0"]);
  assert.deepEqual(loops[0]!.body.filter((x) => x.s === "combine").map((x) => (x as { acc: string }).acc), ["a0", "a1"]);
  // exp makes the body costly: one accumulator per reduction; the max keeps its side accumulators.
  assert.deepEqual(only(all, "accumulator").filter((a) => a.lanes > 1).map((a) => [a.name, a.kind, a.lanes, a.copies, a.sides]), [
    ["a0", "max", 4, 1, true], ["a1", "add", 4, 1, false],
  ]);
  assert.deepEqual(only(all, "fold").map((f) => [f.order, f.accs]), [["inOrder", [{ acc: "a0", into: "s0" }, { acc: "a1", into: "s1" }]]]);
  // Where not every stage has a row (the first and last two steps of a range): each stage that has one, alone.
  assert.equal(top.otherwise.length, 3);
  top.otherwise.forEach((st, c) => {
    assert.equal(st.s, "if");
    const alone = st as Extract<Stmt, { s: "if" }>;
    assert.deepEqual(conditions(alone), [`begin + ${c} < t + 1`, `t < end + ${c}`]);
    assert.deepEqual(only(alone.then, "scratchStore").map((x) => x.scratch), c < 2 ? [`h${c}`] : []);
    assert.deepEqual(only(alone.then, "slot").map((x) => x.name), c === 0 ? [] : [`m0_${c}`]);
  });
});

test("layer norm (the C targets): two sums and the normalization, no row buffer, lane arrays with their vector form, halving folds", () => {
  const k = kernelOf(layerNorm(64, 768), C_REDUCE_TARGET, C_REDUCE_KERNEL_TARGET);
  // x - mean is cheap to compute again: nothing is buffered.
  assert.deepEqual(k.scratch, [{ name: "h0", type: "f32", slots: 3, length: 1 }, { name: "h1", type: "f32", slots: 3, length: 1 }]);
  assert.equal(only(k.unit, "slot").length, 0);
  const all = (k.unit[0] as Extract<Stmt, { s: "if" }>).then;
  // Stage 1 reads the mean; stage 2 the mean and the variance.
  assert.deepEqual(only(all, "scratchLoad").map((x) => [x.scratch, text(x.slot)]), [["h0", "row1 % 3"], ["h0", "row2 % 3"], ["h1", "row2 % 3"]]);
  const vector = only(all, "vector").find((v) => v.otherwise !== undefined)!;
  assert.deepEqual(only(vector.body, "accumulator").map((a) => [a.name, a.lanes, a.copies]), [["a0", 16, 4], ["a1", 16, 4]]);
  assert.deepEqual(only(vector.otherwise!, "accumulator").map((a) => [a.name, a.lanes, a.copies]), [["l0", 64, 1], ["l1", 64, 1]]);
  for (const body of [vector.body, vector.otherwise!]) {
    assert.deepEqual(only(body, "fold").map((f) => [f.order, f.accs.map((x) => x.into)]), [["halving", ["s0", "s1"]]]);
  }
  // The vector loop runs the 64 lanes as four vectors; the scalar tail follows.
  assert.deepEqual(only(vector.body, "loop").map((l) => [l.lanes, l.copies]), [[16, 4]]);
  assert.deepEqual(only(vector.otherwise!, "loop").map((l) => [l.lanes, l.copies]), [[64, 1]]);
  assert.equal(k.fence, false);
});

test("a bf16 softmax (C: sums of halves in the interpreter's order) runs one row at a time, each stage in a scope, one ring slot", () => {
  const k = kernelOf(softmax("bf16", [8, 1000], false), C_REDUCE_TARGET, C_REDUCE_KERNEL_TARGET);
  assert.deepEqual(k.units, { index: "row", from: "begin", to: "end" });
  assert.deepEqual(k.scratch!.map((x) => [x.name, x.type, x.slots, x.length]), [["h0", "bf16", 1, 1], ["h1", "bf16", 1, 1], ["m0", "bf16", 1, 1000]]);
  assert.deepEqual(k.unit.map((x) => x.s), ["scope", "scope", "scope"]);
  for (const x of [...only(k.unit, "scratchLoad"), ...only(k.unit, "scratchStore"), ...only(k.unit, "slot")]) assert.deepEqual(x.slot, constant(0));
  // The reductions start from their inits and take no init at the end; nothing runs in vectors or lanes but the last stage's stores.
  const accumulators = only(k.unit, "accumulator");
  assert.deepEqual(accumulators.map((a) => [a.name, "node" in a.start]), [["s0", true], ["s1", true]]);
  assert.deepEqual(only(k.unit, "result").map((r) => r.init), [undefined, undefined]);
  assert.deepEqual(only(k.unit, "loop").map((l) => l.lanes), [1, 1, 128, 1]);
  assert.equal(only(k.unit, "vector").length, 0);
});
