// Sharding from the front end: Mesh, P, NamedSharding, jit's inShardings/outShardings,
// lax.withShardingConstraint and shardMap with psum, partitioned by Shardy's passes and
// run on the client's device workers. Every sharded result is checked against the same
// function jitted without shardings, on inputs chosen so that float32 arithmetic is exact
// (small multiples of 1/4; sums of a few such products), so the two must agree bit for bit
// whatever order the devices add partial sums in. Device runs are slow to start: the file
// keeps to three sharded programs.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  numpy as np, nn, lax, jit, valueAndGrad, shardMap, devicePut, createClient, Mesh, makeMesh, NamedSharding, P, PartitionSpec,
  ShardingSpecError, FrontendError, type Client, type FrontendArray,
} from "../../src/index.js";
import { elementCount } from "../../src/types/shape.js";

type A = FrontendArray;
let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 4 });
});
after(async () => {
  await client.close();
});

/** A float32 array of `shape` holding multiples of 1/4 in [-3/4, 3/4], varied by `seed`. */
const quarters = (shape: number[], seed: number): A => {
  const n = elementCount(shape);
  const values = Array.from({ length: n }, (_, i) => (((i * 5 + seed * 3) % 7) - 3) / 4);
  return np.reshape(np.array(values, { dtype: "float32" }), shape);
};

interface Params { w1: A; b1: A; w2: A; b2: A }

test("bad meshes and specs are ShardingSpecErrors that say what is wrong", () => {
  const mesh = new Mesh(client, { data: 2, model: 2 });
  assert.deepEqual(mesh.shape, { data: 2, model: 2 });
  assert.equal(mesh.devices.length, 4);
  assert.equal(String(new NamedSharding(mesh, P("data", null))), "NamedSharding(mesh=Mesh('data': 2, 'model': 2), spec=P('data', None))");
  assert.deepEqual(new NamedSharding(mesh, P(["data", "model"])).shardShape([8, 3]), [2, 3]);
  const fails = (f: () => unknown, message: RegExp): void => {
    assert.throws(f, (e: unknown) => e instanceof ShardingSpecError && e instanceof FrontendError && message.test((e as Error).message));
  };
  fails(() => P("data", "data"), /P\('data', 'data'\): the mesh axis 'data' is used twice/);
  fails(() => new PartitionSpec(["model", "model"]), /used twice/);
  fails(() => new NamedSharding(mesh, P("batch")), /the axis 'batch' of P\('batch'\) is not an axis of Mesh\('data': 2, 'model': 2\) \(its axes: data, model\)/);
  fails(() => new Mesh(client, { x: 8 }), /need 8 devices; the client has 4/);
  fails(() => new Mesh(client, [["x", 2], ["x", 2]]), /the axis name 'x' is used twice/);
  fails(() => makeMesh([2], ["x"], { client, devices: [client.devices[0]!, client.devices[0]!] }), /listed twice/);
  const rows = new NamedSharding(mesh, P("data"));
  fails(() => rows.shardShape([3, 4]), /splits dimension 0 over 2 devices, which does not divide its size 3/);
  fails(() => devicePut(np.zeros([4]), new NamedSharding(mesh, P("data", "model"))), /needs an array of rank at least 2; the array's shape is \[4\]/);
  fails(() => jit((x: A) => x, { inShardings: rows }).lower(np.zeros([5, 2])), /jit: argument leaf 0 \(float32\[5,2\]\): .* does not divide its size 5/);
  fails(() => jit((x: A, y: A) => np.add(x, y), { inShardings: [rows] }).lower(np.zeros([4]), np.zeros([4])), /a list of 1 does not match the values there \(a list of 2\)/);
  const other = new NamedSharding(new Mesh(client, { data: 2, model: 2 }), P());
  fails(() => jit((x: A, y: A) => np.add(x, y), { inShardings: [rows, other] }).lower(np.zeros([4]), np.zeros([4])), /a program runs on one mesh/);
  assert.throws(() => lax.psum(np.zeros([2]), "data"), /psum: only inside a shardMap function/);
  const summed = shardMap((x: A) => lax.psum(x, "batch"), { mesh, inSpecs: P("data"), outSpecs: P() });
  fails(() => jit(summed, { inShardings: rows }).lower(np.zeros([4])), /psum: 'batch' is not an axis of Mesh/);
  assert.throws(() => jit(summed)(np.zeros([4])), /shardMap: inside a jit without shardings, which runs on one device/);
});

test("lower(...).asText() carries the mesh and shardings as JAX writes them", () => {
  const mesh = makeMesh([2, 2], ["data", "model"], { client });
  const f = jit((x: A) => lax.withShardingConstraint(np.sin(x), new NamedSharding(mesh, P(null, "model"))), {
    inShardings: new NamedSharding(mesh, P("data")), outShardings: new NamedSharding(mesh, P("data", "model")),
  });
  const text = f.lower(np.zeros([4, 2])).asText();
  assert.match(text, /^ {2}sdy\.mesh @mesh = <\["data"=2, "model"=2\]>$/m);
  assert.match(text, /%arg0: tensor<4x2xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"data"\}, \{\}\]>\}/);
  assert.match(text, /sdy\.sharding_constraint %0 <@mesh, \[\{\}, \{"model"\}\]> : tensor<4x2xf32>/);
  assert.match(text, /-> \(tensor<4x2xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"data"\}, \{"model"\}\]>\}\)/);
});

/** A two-layer perceptron's squared-error loss, with the hidden layer constrained to `hidden` when given. */
const mlpLoss = (hidden?: NamedSharding) => (p: Params, x: A, y: A): A => {
  let h = nn.relu(np.add(np.matmul(x, p.w1), p.b1));
  if (hidden !== undefined) h = lax.withShardingConstraint(h, hidden);
  return np.mean(np.square(np.subtract(np.add(np.matmul(h, p.w2), p.b2), y)));
};

test("a sharded MLP step's loss and gradients equal the unsharded program's, on 4 and 2 devices", async () => {
  const params: Params = { w1: quarters([4, 8], 1), b1: quarters([8], 2), w2: quarters([8, 4], 3), b2: quarters([4], 4) };
  const x = quarters([8, 4], 5);
  const y = quarters([8, 4], 6);
  const [loss, grads] = jit(valueAndGrad(mlpLoss()))(params, x, y) as [A, Params];
  const expected = { loss: loss.tolist(), grads: Object.fromEntries(Object.entries(grads).map(([k, g]) => [k, (g as A).tolist()])) };
  const check = async (step: (p: Params, x: A, y: A) => Promise<unknown>, px: A): Promise<Params> => {
    const [l, g] = await step(params, px, y) as [A, Params];
    assert.deepEqual({ loss: l.tolist(), grads: Object.fromEntries(Object.entries(g).map(([k, v]) => [k, (v as A).tolist()])) }, expected);
    return g;
  };

  // 2 x 2 devices: data parallel over "data", the hidden layer split over "model" (Megatron style).
  const mesh4 = new Mesh(client, { data: 2, model: 2 });
  const s4 = (...dims: (string | null)[]): NamedSharding => new NamedSharding(mesh4, P(...dims));
  const paramShardings = { w1: s4(null, "model"), b1: s4("model"), w2: s4("model", null), b2: s4() };
  const step4 = jit(valueAndGrad(mlpLoss(s4("data", "model"))), { inShardings: [paramShardings, s4("data"), s4("data")], outShardings: null });
  const g4 = await check(step4, x);
  assert.equal(String(g4.w1.sharding?.spec), "P(None, 'model')", "each gradient is sharded as its parameter");
  assert.equal(String(g4.w2.sharding?.spec), "P('model')");

  // 2 devices in reverse order (mesh position 0 on device 1: workers already started), the batch carrying its own sharding (devicePut).
  const mesh2 = new Mesh(client, { data: 2 }, { devices: [client.devices[1]!, client.devices[0]!] });
  const step2 = jit(valueAndGrad(mlpLoss()), { inShardings: [new NamedSharding(mesh2, P()), null, new NamedSharding(mesh2, P("data"))] });
  await check(step2, devicePut(x, new NamedSharding(mesh2, P("data"))));
});

test("shardMap with psum and pmax (of each device's block sum) is an sdy.manual_computation whose results equal the unsharded ones", async () => {
  const mesh = new Mesh(client, { data: 2, model: 2 });
  const x = quarters([4, 6], 7);
  const perBlock = shardMap((block: A) => {
    const partial = np.sum(block, { axis: 0 });
    return { sum: lax.psum(partial, "data"), max: lax.pmax(np.sum(partial), ["data", "model"]) };
  }, { mesh, inSpecs: P("data", "model"), outSpecs: { sum: P("model"), max: P() } });
  const f = jit(perBlock, { inShardings: new NamedSharding(mesh, P("data", "model")) });
  assert.match(f.lower(x).asText(), /sdy\.manual_computation\(%arg0\) in_shardings=\[<@mesh, \[\{"data"\}, \{"model"\}\]>\] out_shardings=\[<@mesh, \[\]>, <@mesh, \[\{"model"\}\]>\] manual_axes=\{"data", "model"\}/);
  const { sum, max } = await f(x) as { sum: A; max: A };
  assert.deepEqual(sum.tolist(), np.sum(x, { axis: 0 }).tolist());
  const blockSums = ["0:2", "2:4"].flatMap((rows) => ["0:3", "3:6"].map((cols) => np.sum(x.index(rows, cols)).item() as number));
  assert.equal(max.item(), Math.max(...blockSums));
});
