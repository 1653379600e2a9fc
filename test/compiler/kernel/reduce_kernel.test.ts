// The statements of a one-stage row reduction (kernel/reduce_kernel.ts), checked on
// their own for a plain 128-bit vector target: which rows run in vectors, the vector
// accumulators' lanes and copies (four to hide an add's latency, one under an exp), the
// unrolled and single-copy loops, the fold, the side accumulators of float max, the
// generic reducers' update in the interpreter's order, and the forms it leaves to the
// backends. What the printed kernels compute is checked against the interpreter by
// test/compiler/fused/reduce.test.ts and multi_output.test.ts.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  XlaBuilder, add, arrayShape, constantR0, div, exp, max, mul, parameter, reduce, sub,
  type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { lowerFusion, type FusedKernelIR } from "../../../src/compiler/kernel/lower_fusion.js";
import { identity, scheduleReduce } from "../../../src/compiler/kernel/schedule_reduce.js";
import { integerRange } from "../../../src/types/element_type.js";
import { rowReduceKernel } from "../../../src/compiler/kernel/reduce_kernel.js";
import { statements, type Kernel } from "../../../src/compiler/kernel/kernel_ir.js";
import { WASM_REDUCE_TARGET } from "../../../src/compiler/wasm/emit_reduce.js";
import { C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET } from "../../../src/compiler/native/emit_c_reduce.js";
import { all, only, reducer, VECTOR128_TARGET } from "./programs.js";

const TARGET = VECTOR128_TARGET;

function kernelOf(c: Computation, target = TARGET, reduceTarget = WASM_REDUCE_TARGET): Kernel | undefined {
  const ir = lowerFusion(c);
  if ("declined" in ir) throw new Error(ir.declined);
  const s = scheduleReduce(ir as FusedKernelIR, reduceTarget);
  if ("declined" in s) throw new Error(s.declined);
  return rowReduceKernel(ir as FusedKernelIR, s, target);
}

function rowReduce(dims: number[], body: (x: XlaOp) => XlaOp, op: (x: XlaOp, y: XlaOp) => XlaOp, init: number, t: ElementType = "f32"): Computation {
  const b = new XlaBuilder("row_reduce");
  const x = parameter(b, 0, arrayShape(t, dims), "x");
  return b.build(reduce(body(x), constantR0(b, t, init), reducer(b, t, op), [dims.length - 1]));
}

test("a row sum: four vector accumulators of four lanes, loops of four copies then one, folded in order, a scalar tail", () => {
  const k = kernelOf(rowReduce([8, 1000], (x) => x, add, 0))!;
  assert.deepEqual(only(k, "accumulator").map((a) => [a.name, a.lanes, a.copies, a.sides, a.start]), [
    ["s0", 1, 1, false, { identity: -0 }],
    ["a0", 4, 4, false, { identity: -0 }],
  ]);
  assert.deepEqual(only(k, "loop").map((l) => [l.stop, l.lanes, l.copies]), [[1000, 4, 4], [1000, 4, 1], [1000, 1, 1]]);
  assert.deepEqual(only(k, "combine").map((c) => c.acc), ["a0", "a0", "s0"]);
  assert.deepEqual(only(k, "fold").map((f) => [f.order, f.accs]), [["inOrder", [{ acc: "a0", into: "s0" }]]]);
  assert.equal(only(k, "result").length, 1);
  assert.equal(only(k, "storeElement").length, 1);
  assert.deepEqual(k.units, { index: "row", from: "begin", to: "end" });
  // A vector section holds the splats, then the rows' pointers and i = 0 stand outside it (a
  // renderer may leave the vector sections out), then a vector section holds the vector
  // accumulators, both vector loops and the fold; the tail follows it.
  const sections = k.unit.filter((x) => x.s === "vector");
  assert.deepEqual(sections.map((x) => x.body.map((y) => y.s)), [["splat"], ["accumulator", "loop", "loop", "fold"]]);
  const start = k.unit.findIndex((x) => x.s === "index" && x.name === "i");
  assert.ok(k.unit.indexOf(sections[0]!) < start && start < k.unit.indexOf(sections[1]!));
  assert.ok(k.unit.indexOf(sections[1]!) < k.unit.findIndex((x) => x.s === "loop"));
});

test("a row max of f32 keeps side accumulators; a row under an exp keeps one vector accumulator", () => {
  const m = kernelOf(rowReduce([4, 64], (x) => x, max, -Infinity))!;
  assert.deepEqual(only(m, "accumulator").map((a) => [a.name, a.sides, a.start]), [["s0", false, { identity: -Infinity }], ["a0", true, { identity: -Infinity }]]);
  const e = kernelOf(rowReduce([4, 64], (x) => exp(x), add, 0))!;
  assert.deepEqual(only(e, "accumulator").map((a) => [a.name, a.copies]), [["s0", 1], ["a0", 1]]);
  // Still four copies of the body an iteration, each into the one accumulator.
  assert.deepEqual(only(e, "loop").map((l) => l.copies), [4, 1, 1]);
});

test("rows shorter than a vector, and reducers without a vector combine, stay scalar", () => {
  for (const k of [
    kernelOf(rowReduce([4, 3], (x) => x, add, 0))!,
    kernelOf(rowReduce([4, 64], (x) => x, mul, 1), { ...TARGET, vectorCombines: (kind) => kind !== "mul" })!,
  ]) {
    assert.equal(all(k).some((x) => x.s === "vector" || x.s === "fold"), false);
    assert.deepEqual(only(k, "loop").map((l) => [l.lanes, l.copies]), [[1, 1]]);
    assert.deepEqual(only(k, "combine").map((c) => c.acc), ["s0"]);
  }
});

test("a generic reducer starts at its init and updates in the interpreter's order", () => {
  // acc + x · x is no recognized reducer: it runs its body, one element at a time.
  const k = kernelOf(rowReduce([4, 64], (x) => x, (a, x) => add(a, mul(x, x)), 0))!;
  assert.equal(all(k).some((x) => x.s === "vector"), false);
  const [acc] = only(k, "accumulator");
  assert.ok(acc !== undefined && acc.kind === "generic" && "node" in acc.start);
  const [update] = only(k, "update");
  assert.ok(update !== undefined);
  assert.deepEqual(update.accs, ["s0"]);
  assert.equal(update.params.length, 2);
  assert.deepEqual(only(k, "result").map((r) => r.init), [undefined]);
  assert.equal(only(k, "combine").length, 0);
});

test("column reductions and row pipelines are left to the backends", () => {
  const b = new XlaBuilder("column");
  const x = parameter(b, 0, arrayShape("f32", [16, 32]), "x");
  const column = b.build(reduce(x, constantR0(b, "f32", 0), reducer(b, "f32", add), [0]));
  assert.equal(kernelOf(column), undefined);
  const s = new XlaBuilder("softmax");
  const y = parameter(s, 0, arrayShape("f32", [4, 64]), "y");
  const m = reduce(y, constantR0(s, "f32", -Infinity), reducer(s, "f32", max), [1]);
  const e = exp(sub(y, m, [0]));
  const softmax = s.build(div(e, reduce(e, constantR0(s, "f32", 0), reducer(s, "f32", add), [1]), [0]));
  assert.equal(kernelOf(softmax), undefined);
});

test("C: lane arrays of 64 scalars (in vectors of 16 f32 × 4 copies where the target has them), folded by halving", () => {
  const k = kernelOf(rowReduce([64, 1000], (x) => x, add, 0), C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET)!;
  const sections = k.unit.filter((x) => x.s === "vector");
  assert.equal(sections.length, 2);
  const vector = sections[1]!;
  assert.ok(vector.s === "vector" && vector.otherwise !== undefined);
  // The vector form: 16 lanes × 4 copies, one loop of all four (no single-copy loop, so both forms hold the same lanes).
  const inside = [...statements(vector.body)];
  assert.deepEqual(inside.flatMap((x) => (x.s === "accumulator" ? [[x.name, x.lanes, x.copies]] : [])), [["a0", 16, 4]]);
  assert.deepEqual(inside.flatMap((x) => (x.s === "loop" ? [[x.lanes, x.copies]] : [])), [[16, 4]]);
  // The other form: a lane array of 64, a lane loop of scalar values.
  const other = [...statements(vector.otherwise!)];
  assert.deepEqual(other.flatMap((x) => (x.s === "accumulator" ? [[x.name, x.lanes, x.copies]] : [])), [["l0", 64, 1]]);
  assert.deepEqual(other.flatMap((x) => (x.s === "loop" ? [[x.lanes, x.copies, x.body.some((y) => y.s === "values")]] : [])), [[64, 1, true]]);
  for (const body of [inside, other]) assert.deepEqual(body.flatMap((x) => (x.s === "fold" ? [x.order] : [])), ["halving"]);
  // The rows' pointers and i = 0 precede the guarded section.
  assert.ok(k.unit.findIndex((x) => x.s === "index" && x.name === "i") < k.unit.indexOf(vector));
});

test("C: a float product folds in order; short rows and halves keep one accumulator", () => {
  const p = kernelOf(rowReduce([64, 1000], (x) => x, mul, 1), C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET)!;
  assert.deepEqual(only(p, "fold").map((f) => f.order), ["inOrder", "inOrder"]);
  const short = kernelOf(rowReduce([4, 63], (x) => x, add, 0), C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET)!;
  assert.deepEqual(only(short, "accumulator").map((a) => a.name), ["s0"]);
  // bf16 sums run in the interpreter's order: from the init, no lanes, the result the accumulator itself.
  const half = kernelOf(rowReduce([4, 1000], (x) => x, add, 0, "bf16"), C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET)!;
  assert.deepEqual(only(half, "accumulator").map((a) => [a.name, a.lanes, "node" in a.start]), [["s0", 1, true]]);
  assert.deepEqual(only(half, "result").map((r) => r.init), [undefined]);
});

test("each integer reducer's identity is a value of its type that leaves every value as it is", () => {
  const combine = { add: (x: bigint, y: bigint) => x + y, mul: (x: bigint, y: bigint) => x * y, and: (x: bigint, y: bigint) => x & y,
    or: (x: bigint, y: bigint) => x | y, max: (x: bigint, y: bigint) => (x > y ? x : y), min: (x: bigint, y: bigint) => (x < y ? x : y) };
  for (const t of ["s4", "u4", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"] as const) {
    const { min, max } = integerRange(t);
    for (const [kind, op] of Object.entries(combine) as [keyof typeof combine, (x: bigint, y: bigint) => bigint][]) {
      const id = BigInt(identity(kind, t));
      assert.ok(id >= min && id <= max, `${kind} of ${t}: identity ${id} outside [${min}, ${max}]`);
      for (const x of [min, min + 1n, 0n, 1n, max - 1n, max]) assert.equal(op(x, id), x, `${kind} of ${t}: ${x} with ${id}`);
    }
  }
});
