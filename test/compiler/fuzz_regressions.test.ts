// Bugs `npm run fuzz` found past the parsers (its compiled and sharded surfaces), each as
// the smallest program that showed it, compared with values known independently.

import { spawnSync } from "node:child_process";
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, arrayShape, broadcastInDim, constantR0, createClient, eq, Literal, max, min, mul, or, parameter, partition, reduce, runPartitioned, scalarShape,
  sharding, XlaBuilder, XlaError,
} from "../../src/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { compileSync } from "../../src/compiler/index.js";
import { join } from "node:path";
import { tempFiles, xlats } from "../cli/helpers.js";

const compiledBackends = (["wasm", "native"] as const).filter((b) => BACKENDS[b].available() === true);

test("a broadcast_in_dim that transposes while adding a size-1 dimension is not a reshape (fuzz compiled seed 11, program 2144)", () => {
  // The simplifier's transpose-or-broadcast-is-reshape took broadcast_in_dim(f32[3,3] ->
  // f32[3,3,1], dimensions={1,0}) for a reshape: sizes matched, the order was not checked.
  const b = new XlaBuilder("transposing_broadcast");
  const p = parameter(b, 0, arrayShape("f32", [3, 3]), "p");
  const c = b.build(broadcastInDim(add(p, p), [3, 3, 1], [1, 0]));
  const x = Literal.fromValues("f32", [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // out[i][j][0] = 2 · x[j][i]
  for (const backend of compiledBackends) {
    const executable = compileSync(c, { backend });
    try {
      assert.deepEqual(executable.run([x]).toNumbers(), [2, 8, 14, 4, 10, 16, 6, 12, 18], backend);
    } finally {
      executable.delete();
    }
  }
});

test("polygamma and zeta at q = -∞ end, with XLA's values (fuzz compiled seed 11, batches 513 and 5699)", () => {
  // The Hurwitz sum ran from k = ∞ down: -∞ is no integer to Number.isInteger, but XLA's
  // test, q == floor(q), takes it for a non-positive integer: ζ(s, -∞) = +∞, and
  // ψ⁽ⁿ⁾(-∞) = (-1)^(n+1) n! ζ(n+1, -∞): +∞ for odd n, -∞ for even n. In a child
  // process with a time limit: a kernel's endless loop is out of reach of any deadline.
  const index = new URL("../../src/index.js", import.meta.url).href;
  const script = `
    import { arrayShape, binaryOp, evaluate, Literal, parameter, XlaBuilder } from ${JSON.stringify(index)};
    const run = (opcode, first) => {
      const b = new XlaBuilder(opcode);
      const c = b.build(binaryOp(opcode, parameter(b, 0, arrayShape("f64", [3]), "a"), parameter(b, 1, arrayShape("f64", [3]), "q")));
      return evaluate(c, [Literal.fromValues("f64", [3], first), Literal.fromValues("f64", [3], [-Infinity, -Infinity, -Infinity])]).toNumbers().map(String);
    };
    console.log(JSON.stringify([run("polygamma", [1, 2, 3]), run("zeta", [2, 3, 4.5])]));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.signal, null, "the evaluation did not end");
  assert.equal(r.status, 0, r.stderr);
  const [polygamma, zeta] = JSON.parse(r.stdout) as string[][];
  assert.deepEqual(polygamma, ["Infinity", "-Infinity", "Infinity"]);
  assert.deepEqual(zeta, ["Infinity", "Infinity", "Infinity"]);
});

test("a max or min reduction over a sharded dimension combines the devices' results by max or min (fuzz sharded seed 1, programs 352, 1354)",
  async () => {
    // f64[8] split over x=8, reduced by min from +inf: each device's minimum, then an
    // all_reduce whose body was add (insert-explicit-reshards did not carry the reduce's
    // reducer to the sdy.all_reduce), so 10 + 11 + ... + 17 = 108 came back instead of 10.
    const client = await createClient({ backend: "interpreter", deviceCount: 8 });
    try {
      for (const [combine, init, expected] of [[min, Infinity, 10], [max, -Infinity, 17]] as const) {
        const b = new XlaBuilder("sharded_extremum");
        const mesh = b.mesh("mesh", { x: 8 });
        const p = parameter(b, 0, arrayShape("f64", [8]), { name: "p", sharding: sharding(mesh, [["x"]]) });
        const sub = b.createSubBuilder("reducer");
        const body = sub.build(combine(parameter(sub, 0, scalarShape("f64")), parameter(sub, 1, scalarShape("f64"))));
        const program = partition(b.buildModule(reduce(p, constantR0(b, "f64", init), body, [0])));
        const [result] = await runPartitioned(client, program, [Literal.fromValues("f64", [8], [10, 11, 12, 13, 14, 15, 16, 17])]);
        assert.deepEqual(result!.toNumbers(), [expected]);
      }
      // Over booleans `or` is a max: true where one shard holds a true.
      const b = new XlaBuilder("sharded_any");
      const mesh = b.mesh("mesh", { x: 8 });
      const p = parameter(b, 0, arrayShape("pred", [8]), { name: "p", sharding: sharding(mesh, [["x"]]) });
      const sub = b.createSubBuilder("or");
      const body = sub.build(or(parameter(sub, 0, scalarShape("pred")), parameter(sub, 1, scalarShape("pred"))));
      const program = partition(b.buildModule(reduce(p, constantR0(b, "pred", false), body, [0])));
      const [any] = await runPartitioned(client, program, [Literal.fromValues("pred", [8], [false, false, false, false, false, true, false, false])]);
      assert.deepEqual(any!.toNumbers(), [1]);
    } finally {
      await client.close();
    }
  });

test("a reduction over a sharded dimension whose body no all-reduce can redo (a product) is a typed error, not a sum of products", () => {
  const b = new XlaBuilder("sharded_product");
  const mesh = b.mesh("mesh", { x: 8 });
  const p = parameter(b, 0, arrayShape("f64", [8]), { name: "p", sharding: sharding(mesh, [["x"]]) });
  const sub = b.createSubBuilder("mul");
  const body = sub.build(mul(parameter(sub, 0, scalarShape("f64")), parameter(sub, 1, scalarShape("f64"))));
  const module = b.buildModule(reduce(p, constantR0(b, "f64", 1), body, [0]));
  assert.throws(() => partition(module), (e: unknown) => e instanceof XlaError && /not one add, maximum or minimum/.test((e as Error).message));
});

test("a reduction over an unevenly sharded dimension does not reduce the padding (fuzz sharded seed 7, program 18688)", async () => {
  // A dimension of 2 on x=3 is padded to 3; the padding held zeros, so `or` over
  // compare(p, q) saw 0 == 0 and gave true for every row, and a min of positive values
  // (max of negative ones) gave 0. The padding must hold the reduction's init value.
  const client = await createClient({ backend: "interpreter", deviceCount: 3 });
  try {
    const p = Literal.fromValues("f32", [4, 2], [-3, 2, -6, -1, 4, -4, 1, 6]);
    const q = Literal.fromValues("f32", [4, 2], [0, 5, -3, 2, 4, 1, 0, 0]);
    {
      const b = new XlaBuilder("uneven_any_equal");
      const mesh = b.mesh("mesh", { x: 3 });
      const x = parameter(b, 0, arrayShape("f32", [4, 2]), { name: "p", sharding: sharding(mesh, [[], ["x"]]) });
      const y = parameter(b, 1, arrayShape("f32", [4, 2]), { name: "q" });
      const sub = b.createSubBuilder("or");
      const body = sub.build(or(parameter(sub, 0, scalarShape("pred")), parameter(sub, 1, scalarShape("pred"))));
      const program = partition(b.buildModule(reduce(eq(x, y), constantR0(b, "pred", false), body, [1])));
      const [any] = await runPartitioned(client, program, [p, q]);
      // Rows: (-3 vs 0, 2 vs 5), (-6 vs -3, -1 vs 2), (4 vs 4, -4 vs 1), (1 vs 0, 6 vs 0).
      assert.deepEqual(any!.toNumbers(), [0, 0, 1, 0]);
    }
    for (const [combine, init, values, expected] of [[min, Infinity, [3, 5], 3], [max, -Infinity, [-3, -5], -3]] as const) {
      const b = new XlaBuilder("uneven_extremum");
      const mesh = b.mesh("mesh", { x: 3 });
      const x = parameter(b, 0, arrayShape("f32", [2]), { name: "p", sharding: sharding(mesh, [["x"]]) });
      const sub = b.createSubBuilder("reducer");
      const body = sub.build(combine(parameter(sub, 0, scalarShape("f32")), parameter(sub, 1, scalarShape("f32"))));
      const program = partition(b.buildModule(reduce(x, constantR0(b, "f32", init), body, [0])));
      const [result] = await runPartitioned(client, program, [Literal.fromValues("f32", [2], [...values])]);
      assert.deepEqual(result!.toNumbers(), [expected]);
    }
  } finally {
    await client.close();
  }
});

// Fuzz sharded seed 7, program 47475: a pad whose operand is unevenly sharded along a
// padded dimension (size 1 on y=2: device 1's piece is all padding) let the operand's
// padding (here compare(0, 0) = true) land in the result where the pad value belongs:
// pad_for_divisibility set that padding to the pad value only when the result's high
// edge shrank, not whenever the padding lands inside the true result. Every compare
// below is false (the values differ pairwise), so every element of the padded result is
// false.
const UNEVEN_PAD = `HloModule uneven_pad, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=1, "y"=2]>}}

ENTRY %main (p0: u8[8,1], p1: u8[8,1]) -> (pred[16,3], u8[8,1]) {
  %p0 = u8[8,1]{1,0} parameter(0)
  %p1 = u8[8,1]{1,0} parameter(1), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}, {\\"y\\"}]>"}
  %eq = pred[8,1]{1,0} compare(u8[8,1]{1,0} %p0, u8[8,1]{1,0} %p1), direction=EQ
  %false = pred[] constant(false)
  %pad = pred[16,3]{1,0} pad(pred[8,1]{1,0} %eq, pred[] %false), padding=1_0_1x1_1_0
  ROOT %t = (pred[16,3]{1,0}, u8[8,1]{1,0}) tuple(pred[16,3]{1,0} %pad, u8[8,1]{1,0} %p1), frontend_attributes={xla.sdy.result_shardings="{0 = #sdy.sharding<@mesh, [{\\"x\\"}, {}]>, 1 = #sdy.sharding<@mesh, [{\\"y\\"}, {\\"x\\"}]>}"}
}
`;

test("a pad of an unevenly sharded operand keeps the operand's padding out of the result (fuzz sharded seed 7, program 47475)", () => {
  const dir = tempFiles({ "pad.hlo": UNEVEN_PAD });
  const r = xlats("run", join(dir, "pad.hlo"), "--backend", "interpreter",
    "--arg", "dense<[[0], [5], [10], [2], [3], [8], [0], [5]]> : tensor<8x1xui8>",
    "--arg", "dense<[[6], [11], [3], [8], [0], [5], [10], [2]]> : tensor<8x1xui8>");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split("\n")[0], "dense<false> : tensor<16x3xi1>");
});
