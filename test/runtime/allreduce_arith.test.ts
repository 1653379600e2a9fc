// All-reduce and reduce-scatter with reducers the fast path does not recognize: the
// reducer runs per element through the interpreter (built with the elementwise ops).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { add, allReduce, arrayShape, constantLiteral, Literal, mul, parameter, reduceScatter, scalarShape, XlaBuilder, type Computation } from "../../src/index.js";
import { createClient, type Client } from "../../src/runtime/index.js";
import { program, shape } from "./helpers.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 8, collectiveTimeoutMs: 30_000 }); // generous: on a loaded machine the device workers can take seconds to meet
});
after(async () => {
  await client.close();
});

/** f(acc, v) = acc * 10 + v: not commutative, so the result shows the group order. */
function digits(b: XlaBuilder): Computation {
  const sub = b.createSubBuilder("digits");
  const acc = parameter(sub, 0, scalarShape("s32"));
  const v = parameter(sub, 1, scalarShape("s32"));
  const ten = constantLiteral(sub, Literal.scalar("s32", 10));
  return sub.build(add(mul(acc, ten), v));
}

for (const n of [2, 4, 8]) {
  test(`${n} devices: a general reducer folds contributions in group order`, async () => {
    const groups = [Array.from({ length: n }, (_, i) => n - 1 - i)];
    const c = program("ar", [shape("s32", [2])], (b, [x]) => allReduce(x!, digits(b), { replicaGroups: groups }));
    const out = await client.run(c, Array.from({ length: n }, (_, d) => [Literal.fromValues("s32", [2], [d, 1])]), { replicas: n });
    const expected = [groups[0]!.reduce((acc, d) => acc * 10 + d), Number("1".repeat(n))];
    for (const r of out) assert.deepEqual(r.toNumbers(), expected);
  });
}

test("reduce-scatter with a general reducer (conformance reduce_scatter.mlir values)", async () => {
  const b = new XlaBuilder("rs");
  const x = parameter(b, 0, arrayShape("s64", [2, 4]));
  const sub = b.createSubBuilder("add");
  const p = parameter(sub, 0, scalarShape("s64"));
  const q = parameter(sub, 1, scalarShape("s64"));
  const zero = constantLiteral(sub, Literal.scalar("s64", 0n));
  const sumPlusZero = sub.build(add(add(p, zero), q));
  const c = b.build(reduceScatter(x, sumPlusZero, 1, 2, { replicaGroups: [[0, 1]], channelId: 1, useGlobalDeviceIds: true }));
  const out = await client.run(c, [
    [Literal.from("s64", [[1n, 2n, 3n, 4n], [5n, 6n, 7n, 8n]])], [Literal.from("s64", [[9n, 10n, 11n, 12n], [13n, 14n, 15n, 16n]])],
  ], { replicas: 1, partitions: 2 });
  assert.deepEqual(out[0]!.toNumbers(), [10, 12, 18, 20]);
  assert.deepEqual(out[1]!.toNumbers(), [14, 16, 22, 24]);
});
