// The collectives on one device through evaluate(): every group is the device alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  allGather, allGatherDone, allGatherStart, allReduce, allToAll, allToAllTuple, arrayShape, collectiveBroadcast,
  collectivePermute, collectivePermuteDone, collectivePermuteStart, ExecutionError, inferShape, Literal,
  parameter, partitionId, raggedAllToAll, reduceScatter, replicaId, scalarReducer, shapesEqual, ShapeError, XlaBuilder,
  type Computation, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { elementCount } from "../../src/types/shape.js";

function build(params: readonly [string, number[]][], body: (b: XlaBuilder, ps: XlaOp[]) => XlaOp): Computation {
  const b = new XlaBuilder("t");
  const ps = params.map(([t, dims], i) => parameter(b, i, arrayShape(t as "f32", dims)));
  return b.build(body(b, ps));
}

const x = Literal.from("f32", [[1, 2], [3, 4]]);

test("one participant: all-gather, all-reduce, reduce-scatter, all-to-all return the operand", () => {
  const cases: Computation[] = [
    build([["f32", [2, 2]]], (_b, [p]) => allGather(p!, 1, 1)),
    build([["f32", [2, 2]]], (b, [p]) => allReduce(p!, scalarReducer(b, "add", "f32"))),
    build([["f32", [2, 2]]], (b, [p]) => reduceScatter(p!, scalarReducer(b, "maximum", "f32"), 0, 1)),
    build([["f32", [2, 2]]], (_b, [p]) => allToAll(p!, 0, 1, 1)),
    build([["f32", [2, 2]]], (_b, [p]) => collectiveBroadcast(p!, [[0]])),
    build([["f32", [2, 2]]], (_b, [p]) => collectivePermute(p!, [[0, 0]])),
    build([["f32", [2, 2]]], (_b, [p]) => allGatherDone(allGatherStart(p!, 0, 1))),
    build([["f32", [2, 2]]], (_b, [p]) => collectivePermuteDone(collectivePermuteStart(p!, [[0, 0]]))),
  ];
  for (const c of cases) {
    const r = evaluate(c, [x]);
    assert.deepEqual(r.toNumbers(), [1, 2, 3, 4], c.root.name);
    assert.ok(shapesEqual(r.shape, c.root.shape));
  }
  const t = evaluate(build([["s8", [1]], ["s8", [1]]], (_b, ps) => allToAllTuple(ps.slice(0, 1))), [Literal.from("s8", [-5]), Literal.from("s8", [1])]);
  assert.deepEqual(t.elements[0]!.toNumbers(), [-5]);
});

test("one participant: a permute with no pair gives zeros; ids are u32 zeros", () => {
  assert.deepEqual(evaluate(build([["f32", [2, 2]]], (_b, [p]) => collectivePermute(p!, [])), [x]).toNumbers(), [0, 0, 0, 0]);
  const r = evaluate(build([], (b) => replicaId(b)), []);
  assert.equal(r.elementType, "u32");
  assert.deepEqual(r.toNumbers(), [0]);
  assert.deepEqual(evaluate(build([], (b) => partitionId(b)), [], { partitionId: 0 }).toNumbers(), [0]);
});

test("one participant: ragged all-to-all copies its own block", () => {
  const c = build([["s32", [3]], ["s32", [1]], ["s32", [1]], ["s32", [4]], ["s32", [1]], ["s32", [1]]],
    (_b, [i, io, ss, o, oo, rs]) => raggedAllToAll(i!, io!, ss!, o!, oo!, rs!));
  const s = (v: number[]) => Literal.fromValues("s32", [v.length], v);
  const r = evaluate(c, [s([7, 8, 9]), s([1]), s([2]), s([0, 0, 0, 0]), s([2]), s([2])]);
  assert.deepEqual(r.toNumbers(), [0, 0, 8, 9]);
  assert.throws(() => evaluate(c, [s([7, 8, 9]), s([2]), s([2]), s([0, 0, 0, 0]), s([2]), s([2])]), /input offset 2 is out of range/);
});

test("groups that need several devices are an ExecutionError on one device", () => {
  const c = build([["f32", [2, 2]]], (_b, [p]) => allGather(p!, 0, 2, { replicaGroups: [[0, 1]] }));
  assert.throws(() => evaluate(c, [x]), (e: Error) => e instanceof ExecutionError && /replica id 1 is out of range/.test(e.message));
});

test("shape rules: results and errors", () => {
  const f = arrayShape("f32", [4, 6]);
  const ag = inferShape("allGather", [f], { replicaGroups: [[0, 1, 2]], allGatherDimension: 1 });
  assert.deepEqual(ag.kind === "array" && ag.dimensions, [4, 18]);
  assert.throws(() => inferShape("allGather", [f], { replicaGroups: [], allGatherDimension: 0 }), (e: Error) =>
    e instanceof ShapeError && /shard_count: is needed when replica_groups is empty/.test(e.message));
  assert.throws(() => inferShape("allGather", [f], { replicaGroups: [], allGatherDimension: 2, shardCount: 2 }), /all_gather_dimension: 2 is out of range/);
  const a2a = inferShape("allToAll", [f], { replicaGroups: [], splitDimension: 1, concatDimension: 0, splitCount: 3 });
  assert.deepEqual(a2a.kind === "array" && a2a.dimensions, [12, 2]);
  assert.throws(() => inferShape("allToAll", [f], { replicaGroups: [], splitDimension: 0, concatDimension: 1, splitCount: 3 }), /not divisible by split_count 3/);
  const b = new XlaBuilder("r");
  const red = scalarReducer(b, "add", "s32");
  assert.throws(() => inferShape("allReduce", [f], { replicaGroups: [], toApply: red }), /element type f32 does not match the computation's s32/);
  assert.throws(() => inferShape("reduceScatter", [arrayShape("s32", [5])], { replicaGroups: [], toApply: red, scatterDimension: 0, shardCount: 2 }),
    /dimension 0 of size 5 is not divisible by the shard count 2/);
  assert.throws(() => inferShape("collectivePermute", [f], { sourceTargetPairs: [[0, 1], [2, 1]] }), /target 1 appears in two pairs/);
  assert.throws(() => inferShape("allGather", [f], { replicaGroups: [[0, 1], [1]], allGatherDimension: 0 }), /an id appears more than once/);
  const start = inferShape("allGatherStart", [f], { replicaGroups: [[0, 1]], allGatherDimension: 0 });
  assert.equal(start.kind, "tuple");
  assert.throws(() => inferShape("allGatherDone", [f], {}), /must be the \(operand, result\) tuple/);
  const rid = inferShape("replicaId", [], {});
  assert.ok(shapesEqual(rid, arrayShape("u32", [])));
});

test("property: inferred shapes equal the interpreter's result shapes on random valid inputs", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let trial = 0; trial < 30; trial++) {
    const rank = 1 + Math.floor(next() * 3);
    const dims = Array.from({ length: rank }, () => 1 + Math.floor(next() * 3));
    const dim = Math.floor(next() * rank);
    const c = build([["s32", dims]], (b, [p]) => {
      const ops = [allGather(p!, dim, 1), allToAll(p!, dim, rank - 1 - dim, 1), reduceScatter(p!, scalarReducer(b, "add", "s32"), dim, 1)];
      return ops[trial % 3]!;
    });
    const n = elementCount(dims);
    const r = evaluate(c, [Literal.fromValues("s32", dims, Array.from({ length: n }, (_, i) => i))]);
    assert.ok(shapesEqual(r.shape, c.root.shape));
  }
});
