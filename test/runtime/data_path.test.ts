// The all-reduce data path: contributions read in place from argument buffers or copied
// through the mailbox, each device reducing its slice into one result its group shares,
// result memory reused once results are deleted, and the gather fallback when the
// arena is full. Expected values are computed here in plain JS (Math.fround after every
// step, in group order).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  add, allReduce, arrayShape, compare, constantR0, ExecutionError, getTupleElement, Literal, neg, parameter, scalarReducer,
  tuple, tupleShape, whileLoop, XlaBuilder,
} from "../../src/index.js";
import { createClient, type Client, type DeviceBuffer } from "../../src/runtime/index.js";
import { program, rng, shape } from "./helpers.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 8, collectiveTimeoutMs: 30_000 }); // generous: on a loaded machine the device workers can take seconds to meet
});
after(async () => {
  await client.close();
});

/** f32 sum of `inputs[group[0]], inputs[group[1]], ...`, rounded after every step. */
function foldF32(inputs: readonly Float32Array[], group: readonly number[]): number[] {
  const n = inputs[0]!.length;
  return Array.from({ length: n }, (_, i) => {
    let acc = inputs[group[0]!]![i]!;
    for (const d of group.slice(1)) acc = Math.fround(acc + inputs[d]![i]!);
    return acc;
  });
}

/** Values whose f32 sum depends on the order: large and small magnitudes of both signs. */
function orderSensitive(seed: number, devices: number, n: number): Float32Array[] {
  const next = rng(seed);
  return Array.from({ length: devices }, () =>
    Float32Array.from({ length: n }, () => (next() - 0.5) * 10 ** Math.floor(next() * 9)));
}

async function upload(values: readonly Float32Array[]): Promise<DeviceBuffer[][]> {
  return Promise.all(values.map(async (v, d) =>
    [await client.bufferFromLiteral(Literal.fromStorage(arrayShape("f32", [v.length]), v), client.devices[d])]));
}

async function numbers(b: DeviceBuffer): Promise<number[]> {
  return (await b.toLiteral()).toNumbers();
}

test("the f32 sum follows a permuted group's order, for argument contributions (in place) and computed ones (mailbox)", async () => {
  const group = [2, 0, 3, 1];
  // Lengths not divisible by the group size, and one shorter than it (empty slices).
  for (const n of [1001, 3]) {
    const inputs = orderSensitive(n, 4, n);
    // Independent check that the order matters here: the sorted order gives another sum.
    if (n > 3) assert.notDeepEqual(foldF32(inputs, group), foldF32(inputs, [0, 1, 2, 3]));
    const direct = program("ar", [shape("f32", [n])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "f32"), { replicaGroups: [group] }));
    const negated = program("ar", [shape("f32", [n])], (b, [x]) => allReduce(neg(x!), scalarReducer(b, "add", "f32"), { replicaGroups: [group] }));
    const expected = foldF32(inputs, group);
    const args = await upload(inputs);
    for (const r of await client.execute(await client.compile(direct, { replicas: 4 }), args)) assert.deepEqual(await numbers(r), expected);
    // Negation is exact and rounding is symmetric: the negated sum is minus the sum.
    const out = await client.run(negated, inputs.map((v) => [Literal.fromStorage(arrayShape("f32", [n]), v)]), { replicas: 4 });
    for (const r of out) assert.deepEqual(r.toNumbers(), expected.map((v) => (v === 0 ? 0 : -v)));
  }
});

test("two groups each share one result; results held across executions keep their values", async () => {
  const n = 4099;
  const c = program("ar", [shape("f32", [n])], (b, [x]) =>
    allReduce(x!, scalarReducer(b, "add", "f32"), { replicaGroups: [[0, 2, 4, 6], [7, 5, 3, 1]] }));
  const exe = await client.compile(c, { replicas: 8 });
  const first = orderSensitive(1, 8, n);
  const second = orderSensitive(2, 8, n);
  const expectedFor = (inputs: Float32Array[]) => (d: number) => foldF32(inputs, d % 2 === 0 ? [0, 2, 4, 6] : [7, 5, 3, 1]);
  const held = await client.execute(exe, await upload(first));
  const next = await client.execute(exe, await upload(second));
  for (const [d, r] of held.entries()) assert.deepEqual(await numbers(r), expectedFor(first)(d));
  for (const [d, r] of next.entries()) assert.deepEqual(await numbers(r), expectedFor(second)(d));
  // Deleting the first results lets a later execution reuse their memory; the second
  // results, still held, are untouched by it.
  for (const r of held) r.delete();
  const again = await client.execute(exe, await upload(first));
  for (const [d, r] of again.entries()) assert.deepEqual(await numbers(r), expectedFor(first)(d));
  for (const [d, r] of next.entries()) assert.deepEqual(await numbers(r), expectedFor(second)(d));
});

test("a result passed back as an argument, then deleted, while the next execution runs", async () => {
  const n = 513;
  const c = program("ar", [shape("f32", [n])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "f32")));
  const exe = await client.compile(c, { replicas: 2 });
  const ones = Array.from({ length: 2 }, (_, d) => new Float32Array(n).fill(d + 1));
  let results = await client.execute(exe, await upload(ones));
  for (let step = 0; step < 4; step++) {
    const running = client.execute(exe, results.map((r) => [r]));
    for (const r of results) r.delete();
    results = await running;
  }
  // 3, then doubled four times.
  for (const r of results) assert.deepEqual(await numbers(r), new Array(n).fill(48));
});

test("a deleted buffer cannot be read or passed to execute", async () => {
  const c = program("ar", [shape("f32", [2])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "f32")));
  const exe = await client.compile(c, { replicas: 2 });
  const args = await upload([Float32Array.of(1, 2), Float32Array.of(3, 4)]);
  const out = await client.execute(exe, args);
  out[0]!.delete();
  out[0]!.delete();
  assert.equal(out[0]!.isDeleted, true);
  await assert.rejects(out[0]!.toLiteral(), (e: Error) => e instanceof ExecutionError && /has been deleted/.test(e.message));
  await assert.rejects(client.execute(exe, [[out[0]!], [out[1]!]]), /execute: process 0 argument 0: the buffer on \w+:0 has been deleted/);
  assert.deepEqual(await numbers(out[1]!), [4, 6]);
});

test("an all-reduce in a loop: runs beyond the arena's room gather their own results", async () => {
  // state (i, x): while i < 3: x = all-reduce(x). The arena holds one run; the other two
  // take the gather path. x starts at d + 1 on device d of 4: 10, 40, 160.
  const n = 37;
  const state = tupleShape([shape("s32", []), shape("f32", [n])]);
  const b = new XlaBuilder("loop");
  const cond = b.createSubBuilder("cond");
  const cs = parameter(cond, 0, state);
  const condition = cond.build(compare(getTupleElement(cs, 0), constantR0(cond, "s32", 3), "LT"));
  const body = b.createSubBuilder("body");
  const bs = parameter(body, 0, state);
  const step = body.build(tuple(body, [
    add(getTupleElement(bs, 0), constantR0(body, "s32", 1)),
    allReduce(getTupleElement(bs, 1), scalarReducer(body, "add", "f32")),
  ]));
  const x = parameter(b, 0, shape("f32", [n]));
  const c = b.build(getTupleElement(whileLoop(condition, step, tuple(b, [constantR0(b, "s32", 0), x])), 1));
  const out = await client.run(c, Array.from({ length: 4 }, (_, d) => [Literal.fromStorage(arrayShape("f32", [n]), new Float32Array(n).fill(d + 1))]), { replicas: 4 });
  for (const r of out) assert.deepEqual(r.toNumbers(), new Array(n).fill(160));
});
