// Every collective on 2, 4 and 8 worker devices, checked against results computed here
// in plain JS. All-reduce and reduce-scatter use recognized scalar reducers (built with
// scalarReducer), which take the backend's typed-array fast path; allreduce_arith.test.ts
// covers general reducers run through the interpreter.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  allGather, allGatherDone, allGatherStart, allReduce, allReduceDone, allReduceStart, allToAll, allToAllTuple,
  collectiveBroadcast, collectivePermute, collectivePermuteDone, collectivePermuteStart, crossReplicaSum, Literal,
  partitionId, raggedAllToAll, reduceScatter, replicaId, scalarReducer, tupleShape,
} from "../../src/index.js";
import { createClient, type Client } from "../../src/runtime/index.js";
import { concatRows, program, randomInts, rng, shape, sliceRows } from "./helpers.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 8, collectiveTimeoutMs: 30_000 }); // generous: on a loaded machine the device workers can take seconds to meet
});
after(async () => {
  await client.close();
});

const SIZES = [2, 4, 8];
const ids = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe("all-gather", () => {
  for (const n of SIZES) {
    for (const dim of [0, 1]) {
      test(`${n} devices, dimension ${dim}, s32[2,3]`, async () => {
        const next = rng(n * 10 + dim);
        const inputs = ids(n).map(() => randomInts(next, 6));
        const c = program("ag", [shape("s32", [2, 3])], (_b, [x]) => allGather(x!, dim, n));
        const out = await client.run(c, inputs.map((v) => [Literal.fromValues("s32", [2, 3], v)]), { replicas: n });
        const expected = concatRows(inputs, [2, 3], dim);
        for (const r of out) assert.deepEqual(r.toNumbers(), expected);
        assert.deepEqual(out[0]!.dimensions, dim === 0 ? [2 * n, 3] : [2, 3 * n]);
      });
    }
  }

  test("replica groups {0,2},{1,3}: each group gathers in group order", async () => {
    const c = program("ag", [shape("f32", [1])], (_b, [x]) => allGather(x!, 0, 2, { replicaGroups: [[2, 0], [1, 3]] }));
    const out = await client.run(c, ids(4).map((i) => [Literal.from("f32", [i + 0.5])]), { replicas: 4 });
    assert.deepEqual(out.map((r) => r.toNumbers()), [[2.5, 0.5], [1.5, 3.5], [2.5, 0.5], [1.5, 3.5]]);
  });

  // conformance all_gather.mlir: cross_replica_and_partition_issue_1933 (2 replicas x 2 partitions).
  test("cross replica and partition: partition-major group order", async () => {
    const c = program("ag", [shape("s64", [2, 2])], (_b, [x]) => allGather(x!, 1, 4, { replicaGroups: [[0, 1]], channelId: 1 }));
    const a = Literal.from("s64", [[1n, 2n], [3n, 4n]]);
    const bb = Literal.from("s64", [[5n, 6n], [7n, 8n]]);
    const out = await client.run(c, [[bb], [bb], [a], [bb]], { replicas: 2, partitions: 2 });
    for (const r of out) assert.deepEqual(r.toNumbers(), [5, 6, 1, 2, 5, 6, 5, 6, 7, 8, 3, 4, 7, 8, 7, 8]);
  });

  // conformance all_gather.mlir: flattened_ids and variadic inputs.
  test("flattened ids; two operands gather independently", async () => {
    const c = program("ag", [shape("s64", [2, 2]), shape("s32", [2, 2])], (_b, [x, y]) =>
      allGather([x!, y!], 1, 2, { replicaGroups: [[0, 1]], channelId: 1, useGlobalDeviceIds: true }));
    const out = await client.run(c, [
      [Literal.from("s64", [[1n, 2n], [3n, 4n]]), Literal.from("s32", [[5, 6], [7, 8]])],
      [Literal.from("s64", [[11n, 12n], [13n, 14n]]), Literal.from("s32", [[15, 16], [17, 18]])],
    ], { replicas: 1, partitions: 2 });
    for (const r of out) {
      assert.deepEqual(r.elements[0]!.toNumbers(), [1, 2, 11, 12, 3, 4, 13, 14]);
      assert.deepEqual(r.elements[1]!.toNumbers(), [5, 6, 15, 16, 7, 8, 17, 18]);
    }
  });
});

describe("all-reduce (fast path)", () => {
  for (const n of SIZES) {
    test(`${n} devices: f32 sum rounds after every step, in group order`, async () => {
      const next = rng(100 + n);
      const inputs = ids(n).map(() => Array.from({ length: 37 }, () => (next() - 0.5) * 1e3));
      const f32 = inputs.map((v) => Float32Array.from(v));
      const c = program("ar", [shape("f32", [37])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "f32")));
      const out = await client.run(c, f32.map((v) => [Literal.fromValues("f32", [37], [...v])]), { replicas: n });
      const expected = new Float32Array(37);
      for (let i = 0; i < 37; i++) {
        let acc = f32[0]![i]!;
        for (let k = 1; k < n; k++) acc = Math.fround(acc + f32[k]![i]!);
        expected[i] = acc;
      }
      for (const r of out) assert.deepEqual(r.toNumbers(), [...expected]);
    });

    test(`${n} devices: s32 product wraps, s64 max is exact, u8 min`, async () => {
      const c = program("ar", [shape("s32", [3]), shape("s64", [2]), shape("u8", [2])], (b, [x, y, z]) =>
        allReduce(x!, scalarReducer(b, "multiply", "s32")));
      const big = [0x10001, -7, 3];
      const out = await client.run(c, ids(n).map((i) => [
        Literal.fromValues("s32", [3], big.map((v) => v + i)), Literal.fromValues("s64", [2], [0n, 0n]), Literal.fromValues("u8", [2], [0, 0]),
      ]), { replicas: n });
      const expected = big.map((v) => ids(n).reduce((acc, i) => Math.imul(acc, v + i), 1));
      for (const r of out) assert.deepEqual(r.toNumbers(), expected);

      const c2 = program("ar", [shape("s64", [2])], (b, [y]) => allReduce(y!, scalarReducer(b, "maximum", "s64")));
      const out2 = await client.run(c2, ids(n).map((i) => [Literal.fromValues("s64", [2], [BigInt(i) * (2n ** 60n), -(2n ** 63n) + BigInt(i)])]), { replicas: n });
      for (const r of out2) assert.deepEqual(r.values(), [BigInt(n - 1) * (2n ** 60n), -(2n ** 63n) + BigInt(n - 1)]);

      const c3 = program("ar", [shape("u8", [2])], (b, [z]) => allReduce(z!, scalarReducer(b, "minimum", "u8")));
      const out3 = await client.run(c3, ids(n).map((i) => [Literal.fromValues("u8", [2], [200 - i, 5 + i])]), { replicas: n });
      for (const r of out3) assert.deepEqual(r.toNumbers(), [200 - (n - 1), 5]);
    });
  }

  // conformance all_reduce.mlir: ragged_replica_groups ([[0, 1], [2, -1]]) and variadic.
  test("ragged replica groups with -1 padding", async () => {
    const c = program("ar", [shape("s64", [4])], (b, [x]) =>
      allReduce(x!, scalarReducer(b, "add", "s64"), { replicaGroups: [[0, 1], [2, -1]] }));
    const out = await client.run(c, [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n], [6n, 8n, 10n, 12n]].map((v) => [Literal.fromValues("s64", [4], v)]), { replicas: 3 });
    for (const r of out) assert.deepEqual(r.toNumbers(), [6, 8, 10, 12]);
  });

  test("two operands (variadic) and crossReplicaSum of a tuple", async () => {
    const c = program("ar", [shape("s64", [4]), shape("s64", [5])], (b, [x, y]) =>
      allReduce([x!, y!], scalarReducer(b, "add", "s64"), { replicaGroups: [[0, 1]], channelId: 1 }));
    const out = await client.run(c, [
      [Literal.fromValues("s64", [4], [1n, 2n, 3n, 4n]), Literal.fromValues("s64", [5], [5n, 6n, 7n, 8n, 9n])],
      [Literal.fromValues("s64", [4], [11n, 12n, 13n, 14n]), Literal.fromValues("s64", [5], [15n, 16n, 17n, 18n, 19n])],
    ], { replicas: 2 });
    for (const r of out) {
      assert.deepEqual(r.elements[0]!.toNumbers(), [12, 14, 16, 18]);
      assert.deepEqual(r.elements[1]!.toNumbers(), [20, 22, 24, 26, 28]);
    }
    const t = tupleShape([shape("f32", [2]), shape("f32", [1])]);
    const c2 = program("crs", [t, shape("c64", [1])], (b, [x, z]) => {
      crossReplicaSum(z!);
      return crossReplicaSum(x!);
    });
    const out2 = await client.run(c2, ids(4).map((i) => [
      Literal.tuple([Literal.fromValues("f32", [2], [i, -i]), Literal.fromValues("f32", [1], [0.25])]),
      Literal.fromValues("c64", [1], [{ re: i, im: 1 }]),
    ]), { replicas: 4 });
    for (const r of out2) {
      assert.deepEqual(r.elements[0]!.toNumbers(), [6, -6]);
      assert.deepEqual(r.elements[1]!.toNumbers(), [1]);
    }
    const c3 = program("crs", [shape("c64", [1])], (_b, [z]) => crossReplicaSum(z!));
    const out3 = await client.run(c3, ids(4).map((i) => [Literal.fromValues("c64", [1], [{ re: i, im: 1 }])]), { replicas: 4 });
    for (const r of out3) assert.deepEqual(r.values(), [{ re: 6, im: 4 }]);
  });
});

describe("reduce-scatter", () => {
  for (const n of SIZES) {
    test(`${n} devices, dimension 1`, async () => {
      const next = rng(200 + n);
      const dims = [2, 2 * n];
      const inputs = ids(n).map(() => randomInts(next, 4 * n));
      const c = program("rs", [shape("s32", dims)], (b, [x]) => reduceScatter(x!, scalarReducer(b, "add", "s32"), 1, n));
      const out = await client.run(c, inputs.map((v) => [Literal.fromValues("s32", dims, v)]), { replicas: n });
      const sum = inputs[0]!.map((_, i) => inputs.reduce((a, v) => a + v[i]!, 0));
      out.forEach((r, i) => assert.deepEqual(r.toNumbers(), sliceRows(sum, dims, 1, 2 * i, 2)));
    });
  }

  // conformance reduce_scatter.mlir: cross_replica.
  test("conformance: 2 replicas, s64[2,4] -> s64[2,2]", async () => {
    const c = program("rs", [shape("s64", [2, 4])], (b, [x]) =>
      reduceScatter(x!, scalarReducer(b, "add", "s64"), 1, undefined, { replicaGroups: [[0, 1]] }));
    const out = await client.run(c, [
      [Literal.from("s64", [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n]])],
      [Literal.from("s64", [[9n, 10n, 11n, 12n], [13n, 14n, 15n, 16n]])],
    ], { replicas: 2 });
    assert.deepEqual(out[0]!.toNumbers(), [10, 12, 18, 20]);
    assert.deepEqual(out[1]!.toNumbers(), [14, 16, 22, 24]);
  });
});

describe("all-to-all", () => {
  for (const n of SIZES) {
    test(`${n} devices: split 1, concat 0`, async () => {
      const next = rng(300 + n);
      const dims = [3, 2 * n];
      const inputs = ids(n).map(() => randomInts(next, 6 * n));
      const c = program("a2a", [shape("s16", dims)], (_b, [x]) => allToAll(x!, 1, 0, n));
      const out = await client.run(c, inputs.map((v) => [Literal.fromValues("s16", dims, v)]), { replicas: n });
      out.forEach((r, i) => {
        const blocks = inputs.map((v) => sliceRows(v, dims, 1, 2 * i, 2));
        assert.deepEqual(r.toNumbers(), concatRows(blocks, [3 * n, 2], 0));
        assert.deepEqual(r.dimensions, [3 * n, 2]);
      });
    });

    test(`${n} devices: tuple form`, async () => {
      const c = program("a2a", ids(n).map(() => shape("f64", [1])), (_b, xs) => allToAllTuple(xs));
      const out = await client.run(c, ids(n).map((d) => ids(n).map((k) => Literal.fromValues("f64", [1], [d * 100 + k]))), { replicas: n });
      out.forEach((r, i) => assert.deepEqual(r.elements.map((e) => e.toNumbers()[0]), ids(n).map((d) => d * 100 + i)));
    });
  }

  // conformance all_to_all.mlir: cross_replica_issue_2433 (group [1, 0]) and same_split_concat_dim.
  test("conformance: group order [1, 0]; split and concat on one dimension", async () => {
    const in0 = Literal.from("s64", [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n]]);
    const in1 = Literal.from("s64", [[9n, 10n, 11n, 12n], [13n, 14n, 15n, 16n]]);
    const c = program("a2a", [shape("s64", [2, 4])], (_b, [x]) => allToAll(x!, 1, 0, 2, { replicaGroups: [[1, 0]] }));
    const out = await client.run(c, [[in0], [in1]], { replicas: 2 });
    assert.deepEqual(out[0]!.toNumbers(), [11, 12, 15, 16, 3, 4, 7, 8]);
    assert.deepEqual(out[1]!.toNumbers(), [9, 10, 13, 14, 1, 2, 5, 6]);
    const c2 = program("a2a", [shape("s64", [2, 4])], (_b, [x]) => allToAll(x!, 0, 0, 2));
    const out2 = await client.run(c2, [[in0], [in1]], { replicas: 2 });
    assert.deepEqual(out2[0]!.toNumbers(), [1, 2, 3, 4, 9, 10, 11, 12]);
    assert.deepEqual(out2[1]!.toNumbers(), [5, 6, 7, 8, 13, 14, 15, 16]);
  });

  test("conformance: cross partition with a channel", async () => {
    const c = program("a2a", [shape("s64", [2, 4])], (_b, [x]) => allToAll(x!, 1, 0, 2, { replicaGroups: [[0, 1]], channelId: 1 }));
    const out = await client.run(c, [
      [Literal.from("s64", [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n]])], [Literal.from("s64", [[9n, 10n, 11n, 12n], [13n, 14n, 15n, 16n]])],
    ], { replicas: 1, partitions: 2 });
    assert.deepEqual(out[0]!.toNumbers(), [1, 2, 5, 6, 9, 10, 13, 14]);
    assert.deepEqual(out[1]!.toNumbers(), [3, 4, 7, 8, 11, 12, 15, 16]);
  });
});

describe("ragged all-to-all", () => {
  const build = (rows: number, outRows: number, n: number, updates = 0) => {
    const meta = shape("s32", updates === 0 ? [n] : [n, updates]);
    return program("ragged", [shape("f32", [rows]), meta, meta, shape("f32", [outRows]), meta, meta], (_b, [i, io, ss, o, oo, rs]) =>
      raggedAllToAll(i!, io!, ss!, o!, oo!, rs!));
  };
  const s32 = (v: number[], dims?: number[]) => Literal.fromValues("s32", dims ?? [v.length], v);

  test("seed 000 example: two replicas", async () => {
    const out = await client.run(build(3, 4, 2), [
      [Literal.from("f32", [1, 2, 2]), s32([0, 1]), s32([1, 2]), Literal.from("f32", [0, 0, 0, 0]), s32([0, 0]), s32([1, 1])],
      [Literal.from("f32", [3, 4, 0]), s32([0, 1]), s32([1, 1]), Literal.from("f32", [0, 0, 0, 0]), s32([1, 2]), s32([2, 1])],
    ], { replicas: 2 });
    assert.deepEqual(out[0]!.toNumbers(), [1, 3, 0, 0]);
    assert.deepEqual(out[1]!.toNumbers(), [2, 2, 4, 0]);
  });

  for (const n of SIZES) {
    test(`${n} devices: device d sends d+1 rows of value 10d+j to device j`, async () => {
      // Sender d puts rows for peer j at input offset j*(n+1); receiver j stores sender d's
      // block at output offset sum_{e<d}(e+1). Every output tail keeps the -1 fill.
      const rows = n * (n + 1);
      const outRows = (n * (n + 1)) / 2 + 1;
      const args = ids(n).map((d) => {
        const input: number[] = [];
        for (let j = 0; j < n; j++) for (let k = 0; k < n + 1; k++) input.push(k <= d ? 10 * d + j : 999);
        const start = (d * (d + 1)) / 2;
        return [
          Literal.fromValues("f32", [rows], input), s32(ids(n).map((j) => j * (n + 1))), s32(ids(n).map(() => d + 1)),
          Literal.fromValues("f32", [outRows], new Array(outRows).fill(-1)), s32(ids(n).map(() => start)),
          s32(ids(n).map((e) => e + 1)),
        ];
      });
      const out = await client.run(build(rows, outRows, n), args, { replicas: n });
      out.forEach((r, j) => {
        const expected: number[] = [];
        for (let d = 0; d < n; d++) for (let k = 0; k <= d; k++) expected.push(10 * d + j);
        expected.push(-1);
        assert.deepEqual(r.toNumbers(), expected);
      });
    });
  }

  test("two updates per peer ([num_devices, num_updates] offsets)", async () => {
    const out = await client.run(build(4, 4, 2, 2), ids(2).map((d) => [
      Literal.fromValues("f32", [4], [d * 10, d * 10 + 1, d * 10 + 2, d * 10 + 3]),
      s32([0, 1, 2, 3], [2, 2]), s32([1, 1, 1, 1], [2, 2]),
      Literal.fromValues("f32", [4], [-1, -1, -1, -1]), s32([2 * d, 2 * d + 1, 2 * d, 2 * d + 1], [2, 2]), s32([1, 1, 1, 1], [2, 2]),
    ]), { replicas: 2 });
    assert.deepEqual(out[0]!.toNumbers(), [0, 1, 10, 11]);
    assert.deepEqual(out[1]!.toNumbers(), [2, 3, 12, 13]);
  });
});

describe("collective-permute", () => {
  for (const n of SIZES) {
    test(`${n} devices: ring shift by one, device 0 receives nothing`, async () => {
      const pairs = ids(n - 1).map((i) => [i, i + 1] as [number, number]);
      const c = program("cp", [shape("bf16", [2])], (_b, [x]) => collectivePermute(x!, pairs));
      const out = await client.run(c, ids(n).map((i) => [Literal.fromValues("bf16", [2], [i + 1, -(i + 1)])]), { replicas: n });
      out.forEach((r, i) => assert.deepEqual(r.toNumbers(), i === 0 ? [0, 0] : [i, -i]));
    });
  }

  // conformance collective_permute.mlir: cross_replica_with_self_loops / cross_partition.
  for (const partitions of [1, 5]) {
    test(`conformance: self loops, ${partitions === 1 ? "cross replica" : "cross partition"}`, async () => {
      const pairs: [number, number][] = [[0, 1], [1, 2], [3, 3], [4, 4]];
      const c = program("cp", [shape("s64", [2, 2])], (_b, [x]) => collectivePermute(x!, pairs, partitions === 1 ? undefined : 1));
      const inputs = ids(5).map((i) => [Literal.fromValues("s64", [2, 2], [4 * i + 1, 4 * i + 2, 4 * i + 3, 4 * i + 4].map(BigInt))]);
      const out = await client.run(c, inputs, { replicas: 5 / partitions, partitions });
      assert.deepEqual(out.map((r) => r.toNumbers()), [[0, 0, 0, 0], [1, 2, 3, 4], [5, 6, 7, 8], [13, 14, 15, 16], [17, 18, 19, 20]]);
    });
  }
});

describe("collective-broadcast", () => {
  const operands = ids(4).map((i) => [Literal.from("s64", [[BigInt(2 * i + 1), BigInt(2 * i + 2)]])]);
  const run = async (groups: number[][], channel: number | undefined, replicas: number, partitions: number) => {
    const c = program("cb", [shape("s64", [1, 2])], (_b, [x]) => collectiveBroadcast(x!, groups, channel));
    return (await client.run(c, operands, { replicas, partitions })).map((r) => r.toNumbers());
  };
  // conformance collective_broadcast.mlir.
  test("cross replica: root is the first of the group; others get zeros", async () => {
    assert.deepEqual(await run([[2, 1]], undefined, 4, 1), [[0, 0], [5, 6], [5, 6], [0, 0]]);
    assert.deepEqual(await run([[2, 1, 0]], undefined, 4, 1), [[5, 6], [5, 6], [5, 6], [0, 0]]);
    assert.deepEqual(await run([[0]], undefined, 1, 4), [[1, 2], [3, 4], [5, 6], [7, 8]]);
    assert.deepEqual(await run([[1, 0]], undefined, 2, 2), [[5, 6], [7, 8], [5, 6], [7, 8]]);
  });
  test("cross partition", async () => {
    assert.deepEqual(await run([[2, 1]], 1, 1, 4), [[0, 0], [5, 6], [5, 6], [0, 0]]);
    assert.deepEqual(await run([[0]], 1, 4, 1), [[1, 2], [3, 4], [5, 6], [7, 8]]);
    assert.deepEqual(await run([[1, 0]], 1, 2, 2), [[3, 4], [3, 4], [7, 8], [7, 8]]);
  });
  for (const n of SIZES) {
    test(`${n} devices: broadcast from the last device`, async () => {
      const c = program("cb", [shape("u32", [3])], (_b, [x]) => collectiveBroadcast(x!, [[n - 1, ...ids(n - 1)]]));
      const out = await client.run(c, ids(n).map((i) => [Literal.fromValues("u32", [3], [i, 2 ** 32 - 1 - i, 7])]), { replicas: n });
      for (const r of out) assert.deepEqual(r.toNumbers(), [n - 1, 2 ** 32 - n, 7]);
    });
  }
});

describe("replica-id and partition-id", () => {
  test("2 replicas x 4 partitions, u32 scalars", async () => {
    const c = program("ids", [], (b) => replicaId(b));
    const c2 = program("ids", [], (b) => partitionId(b));
    const r = await client.run(c, ids(8).map(() => []), { replicas: 2, partitions: 4 });
    const p = await client.run(c2, ids(8).map(() => []), { replicas: 2, partitions: 4 });
    assert.deepEqual(r.map((l) => l.toNumbers()[0]), [0, 0, 0, 0, 1, 1, 1, 1]);
    assert.deepEqual(p.map((l) => l.toNumbers()[0]), [0, 1, 2, 3, 0, 1, 2, 3]);
    assert.equal(r[0]!.elementType, "u32");
  });

  test("a device assignment moves processes, not ids", async () => {
    const c = program("ids", [], (b) => replicaId(b));
    const out = await client.run(c, [[], [], []], { replicas: 3, deviceAssignment: [[7], [3], [5]] });
    assert.deepEqual(out.map((l) => l.toNumbers()[0]), [0, 1, 2]);
  });
});

describe("async start/done forms", () => {
  test("all-gather, all-reduce and collective-permute start/done on 4 devices", async () => {
    const args = ids(4).map((i) => [Literal.from("f32", [i, 1])]);
    const f32x2 = [shape("f32", [2])];
    const g = await client.run(program("ag", f32x2, (_b, [x]) => allGatherDone(allGatherStart(x!, 0, 4))), args, { replicas: 4 });
    const r = await client.run(program("ar", f32x2, (b, [x]) => allReduceDone(allReduceStart(x!, scalarReducer(b, "add", "f32")))), args, { replicas: 4 });
    const p = await client.run(program("cp", f32x2, (_b, [x]) => collectivePermuteDone(collectivePermuteStart(x!, [[0, 3], [3, 0]]))), args, { replicas: 4 });
    const handle = await client.run(program("cps", f32x2, (_b, [x]) => collectivePermuteStart(x!, [[0, 3], [3, 0]])), args, { replicas: 4 });
    for (let i = 0; i < 4; i++) {
      assert.deepEqual(g[i]!.toNumbers(), [0, 1, 1, 1, 2, 1, 3, 1]);
      assert.deepEqual(r[i]!.toNumbers(), [6, 4]);
      assert.deepEqual(p[i]!.toNumbers(), i === 0 ? [3, 1] : i === 3 ? [0, 1] : [0, 0]);
      // The start op's value is the (operand, result) pair.
      assert.deepEqual(handle[i]!.elements.map((e) => e.toNumbers()), [[i, 1], p[i]!.toNumbers()]);
    }
  });
});
