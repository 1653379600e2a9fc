// The backend-neutral schedule of input fusions (kernel/schedule_reduce.ts), checked on
// its own: the stages of softmax and layer norm, which value a later stage stores rather
// than recomputes, the accumulators and lane folds each target gets, the reductions that
// run in the interpreter's order, and what each target declines. The kernels rendered
// from it are checked against the interpreter by reduce.test.ts and row_pipeline.test.ts.

import { OP_TABLE } from "../../../src/ir/opcodes.js";
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  XlaBuilder, add, arrayShape, constantR0, div, exp, max, mul, parameter, reduce, scalarShape, sub, tanh, tuple,
  type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { lowerFusion, type FusedKernelIR } from "../../../src/compiler/kernel/lower_fusion.js";
import { accumulatorsFor, identity, scheduleReduce, type ReduceSchedule, type ReduceTarget } from "../../../src/compiler/kernel/schedule_reduce.js";
import { bodyCost, OP_PROPERTIES } from "../../../src/compiler/kernel/op_properties.js";
import { WASM_REDUCE_TARGET } from "../../../src/compiler/wasm/emit_reduce.js";
import { C_REDUCE_TARGET } from "../../../src/compiler/native/emit_c_reduce.js";

function reducer(b: XlaBuilder, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp, name: string): Computation {
  const sb = b.createSubBuilder(`${name}_${t}`);
  return sb.build(op(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

function lowered(c: Computation): FusedKernelIR {
  const ir = lowerFusion(c);
  if ("declined" in ir) throw new Error(ir.declined);
  return ir;
}

function schedule(c: Computation, target: ReduceTarget): ReduceSchedule {
  const s = scheduleReduce(lowered(c), target);
  if ("declined" in s) throw new Error(s.declined);
  return s;
}

function softmax(t: ElementType, rows: number, cols: number): Computation {
  const b = new XlaBuilder("softmax");
  const x = parameter(b, 0, arrayShape(t, [rows, cols]), "x");
  const m = reduce(x, constantR0(b, t, -Infinity), reducer(b, t, max, "max"), [1]);
  const e = exp(sub(x, m, [0]));
  return b.build(div(e, reduce(e, constantR0(b, t, 0), reducer(b, t, add, "add"), [1]), [0]));
}

function rowSum(t: ElementType, rows: number, cols: number, body: (x: XlaOp) => XlaOp = (x) => x, kind = add): Computation {
  const b = new XlaBuilder("row_sum");
  const x = parameter(b, 0, arrayShape(t, [rows, cols]), "x");
  return b.build(reduce(body(x), constantR0(b, t, kind === mul ? 1 : 0), reducer(b, t, kind, "r"), [1]));
}

test("softmax: three skewed stages, exp(x - max) stored by the stage that first computes it", () => {
  for (const target of [WASM_REDUCE_TARGET, C_REDUCE_TARGET]) {
    const s = schedule(softmax("f32", 64, 256), target);
    assert.equal(s.stages, 3);
    assert.deepEqual(s.reductions.map((r) => [r.kind, r.stage]), [["max", 0], ["add", 1]]);
    assert.deepEqual([...s.fullStage], [[0, 2]]);
    assert.equal(s.skewed, true);
    assert.equal(s.ringSlots, 3);
    assert.equal(s.rowBuffers.length, 1);
    const buffer = s.rowBuffers[0]!;
    assert.equal(s.loops.graph.node(buffer.node).op, "exp");
    assert.equal(buffer.stage, 1);
    assert.equal(s.reductions[0]!.extremumSides, true);
    assert.equal(s.reductions[0]!.identity, -Infinity);
    assert.equal(s.parallelExtent, 64);
  }
});

test("row buffers stay within the target's budget", () => {
  // 40000 f32 a row in a ring of 3 slots: 480 KB, over C's 128 KiB of stack; WebAssembly's scratch has no limit.
  assert.equal(schedule(softmax("f32", 16, 40000), C_REDUCE_TARGET).rowBuffers.length, 0);
  assert.equal(schedule(softmax("f32", 16, 40000), WASM_REDUCE_TARGET).rowBuffers.length, 1);
});

test("accumulators: four vectors, one for a costly body; lanes fold by halving on C but for float products", () => {
  const cheap = schedule(rowSum("f32", 8, 300), WASM_REDUCE_TARGET);
  assert.equal(accumulatorsFor(cheap, bodyCost(["load", "add"])), 4);
  assert.equal(accumulatorsFor(cheap, bodyCost(["load", "exp"])), 1);
  assert.equal(cheap.unroll, 4);
  assert.equal(cheap.reductions[0]!.fold, "inOrder");
  const c = schedule(rowSum("f32", 8, 300), C_REDUCE_TARGET);
  assert.equal(c.lanes, 64);
  assert.equal(c.useLanes, true);
  assert.equal(c.reductions[0]!.fold, "halving");
  assert.equal(schedule(rowSum("f32", 8, 300, (x) => x, mul), C_REDUCE_TARGET).reductions[0]!.fold, "inOrder");
  assert.equal(schedule(rowSum("f64", 8, 300), C_REDUCE_TARGET).lanes, 32);
  assert.equal(schedule(rowSum("f32", 8, 40), C_REDUCE_TARGET).useLanes, false);
  assert.equal(accumulatorsFor(c, bodyCost(["load", "tanh"])), 4, "C's lane count does not depend on the body");
});

test("column reductions: one accumulator, C's blocks of outputs", () => {
  const b = new XlaBuilder("column");
  const x = parameter(b, 0, arrayShape("f32", [40, 700]), "x");
  const col = b.build(reduce(x, constantR0(b, "f32", 0), reducer(b, "f32", add, "add"), [0]));
  const w = schedule(col, WASM_REDUCE_TARGET);
  assert.equal(w.column, true);
  assert.equal(w.accumulators, 1);
  assert.equal(w.columnBlock, undefined);
  assert.equal(schedule(col, C_REDUCE_TARGET).columnBlock, 256);
});

test("halves: in the interpreter's order on C, declined by WebAssembly; pipelines of them only on C", () => {
  const c = schedule(rowSum("bf16", 8, 300), C_REDUCE_TARGET);
  assert.equal(c.reductions[0]!.sequential, true);
  assert.equal(c.skewed, false);
  assert.equal(c.ringSlots, 1);
  assert.ok("declined" in scheduleReduce(lowered(rowSum("bf16", 8, 300)), WASM_REDUCE_TARGET));
  const pipeline = schedule(softmax("bf16", 8, 300), C_REDUCE_TARGET);
  assert.equal(pipeline.stages, 3);
  assert.equal(pipeline.skewed, false);
  const declined = scheduleReduce(lowered(softmax("bf16", 8, 300)), WASM_REDUCE_TARGET);
  assert.ok("declined" in declined && declined.declined.startsWith("row pipeline"));
});

test("C's vector form: f32 rows of enough elements, their large full outputs streamed", () => {
  assert.equal(schedule(softmax("f32", 64, 256), C_REDUCE_TARGET).vectorForm, true);
  assert.equal(schedule(softmax("f32", 4, 256), C_REDUCE_TARGET).vectorForm, false);
  assert.equal(schedule(softmax("f64", 64, 256), C_REDUCE_TARGET).vectorForm, false);
  assert.deepEqual(schedule(softmax("f32", 4096, 1024), C_REDUCE_TARGET).streamedOutputs, [0]);
  assert.deepEqual(schedule(softmax("f32", 64, 256), C_REDUCE_TARGET).streamedOutputs, []);
  assert.equal(schedule(softmax("f32", 64, 256), WASM_REDUCE_TARGET).vectorForm, false);
});

test("a multi-output reduction with a full output has one stage", () => {
  const b = new XlaBuilder("multi");
  const x = parameter(b, 0, arrayShape("f32", [16, 64]), "x");
  const sum = reducer(b, "f32", add, "add");
  const s = schedule(b.build(tuple(b, [reduce(x, constantR0(b, "f32", 0), sum, [1]), reduce(mul(x, x), constantR0(b, "f32", 0), sum, [1]), tanh(x)])), C_REDUCE_TARGET);
  assert.equal(s.stages, 1);
  assert.deepEqual(s.fullOutputs, [2]);
  assert.deepEqual(s.rowOutputs, [0, 1]);
});

test("identities and op properties", () => {
  assert.ok(Object.is(identity("add", "f32"), -0));
  assert.equal(identity("max", "s32"), -2147483648);
  assert.equal(identity("min", "u64"), 18446744073709551615n);
  assert.equal(identity("and", "pred"), 1);
  assert.equal(identity("and", "s8"), -1);
  assert.equal(OP_PROPERTIES.exp.storeRatherThanRecompute, true);
  assert.equal(OP_PROPERTIES.add.storeRatherThanRecompute, false);
  assert.equal(OP_PROPERTIES.atan2.cost, 20);
  // Algebraic facts live in the op table, once (the kernel's table holds only scheduling facts).
  assert.equal(OP_TABLE.subtract.commutative, false);
  assert.equal(OP_TABLE.maximum.associative, true);
});
