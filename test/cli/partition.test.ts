// `xlats run` on a program with a mesh partitions it and says so; `xlats partition`
// prints the per-device program or (--report) its costs. Values worked out by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempFiles, xlats } from "./helpers.js";

const ELEMENTWISE = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %b: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %0 = stablehlo.add %a, %b : tensor<4x4xi32>
  %1 = stablehlo.multiply %0, %a : tensor<4x4xi32>
  return %1 : tensor<4x4xi32>
}`;

const A = "dense<[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]> : tensor<4x4xi32>";

test("xlats run: a program with a mesh runs on its 4 devices and the global result is assembled", () => {
  const dir = tempFiles({ "p.mlir": ELEMENTWISE });
  const r = xlats("run", join(dir, "p.mlir"), "--arg", A, "--arg", A);
  assert.equal(r.code, 0, r.stderr);
  // (a + a) * a = 2a²
  assert.equal(r.stdout.trim(), "dense<[[2, 8, 18, 32], [50, 72, 98, 128], [162, 200, 242, 288], [338, 392, 450, 512]]> : tensor<4x4xi32>");
  assert.match(r.stderr, /ran sharded on 4 devices \(mesh @mesh <\["x"=2, "y"=2\]>\); results assembled from the shards/);
});

test("xlats run: a JAX shard_map export (mhlo.sharding strings, no mesh) is read by Shardy and runs sharded", () => {
  // JAX's lowering without Shardy: @Sharding + @SPMDFullToShardShape, a call of @shmap_body, @Sharding + @SPMDShardToFullShape.
  const text = `module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xi32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) -> (tensor<4x4xi32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<4x4xi32>) -> tensor<4x4xi32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x4xi32>) -> tensor<2x2xi32>
    %2 = call @shmap_body(%1) : (tensor<2x2xi32>) -> tensor<2x2xi32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<2x2xi32>) -> tensor<2x2xi32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[2,2]<=[4]}"} : (tensor<2x2xi32>) -> tensor<4x4xi32>
    return %4 : tensor<4x4xi32>
  }
  func.func private @shmap_body(%a: tensor<2x2xi32>) -> tensor<2x2xi32> {
    %0 = stablehlo.multiply %a, %a : tensor<2x2xi32>
    return %0 : tensor<2x2xi32>
  }
}`;
  const dir = tempFiles({ "jax.mlir": text });
  const r = xlats("run", join(dir, "jax.mlir"), "--arg", A);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), "dense<[[1, 4, 9, 16], [25, 36, 49, 64], [81, 100, 121, 144], [169, 196, 225, 256]]> : tensor<4x4xi32>");
  assert.match(r.stderr, /ran sharded on 4 devices/);
});

test("xlats partition prints the per-device program; --report its collectives, bytes and memory", () => {
  const dir = tempFiles({ "p.mlir": ELEMENTWISE });
  const p = xlats("partition", join(dir, "p.mlir"));
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stdout, /func\.func @main\(%arg0: tensor<2x2xi32>, %arg1: tensor<2x2xi32>\) -> tensor<2x2xi32>/);
  assert.doesNotMatch(p.stdout, /sdy\./);
  const r = xlats("partition", join(dir, "p.mlir"), "--report");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^devices: 4$/m);
  assert.match(r.stdout, /^collectives: 0$/m);
  assert.match(r.stdout, /^bytes sent per device: 0 B on each device$/m);
  // Per device: two 2x2 i32 arguments (16 B each) and the sum alive together, then the product: 48 B; unsharded 4x the data.
  assert.match(r.stdout, /^peak memory per device: 48 B on each device \(unsharded: 192 B\)$/m);
});

test("xlats run refuses a sharded program that needs a pass the build lacks, naming the op", () => {
  const dir = tempFiles({ "p.mlir": `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = stablehlo.reverse %a, dims = [0] : tensor<4xi32>
  return %0 : tensor<4xi32>
}` });
  const r = xlats("run", join(dir, "p.mlir"), "--arg", "dense<[1, 2, 3, 4]> : tensor<4xi32>");
  if (r.code === 0) {
    // A build with the reshard passes partitions it: then the answer must be right.
    assert.equal(r.stdout.trim(), "dense<[4, 3, 2, 1]> : tensor<4xi32>");
    return;
  }
  assert.equal(r.code, 1);
  // Reversing each device's half in place would give [2, 1, 4, 3]: it must be refused instead.
  assert.match(r.stderr, /error: partition: stablehlo\.reverse '0': it moves elements along a dimension sharded along \["x"\], which needs a collective_permute.*-sdy-resolve-permutation-factors/);
});

test("xlats run --timeout stops a sharded run that does not end (an endless loop on every device)", () => {
  const dir = tempFiles({ "loop.mlir": `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %r = stablehlo.while(%i = %zero) : tensor<i64>
  cond {
    %c = stablehlo.compare GE, %i, %zero : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i64>
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %n : tensor<i64>
  }
  %b = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<i64>) -> tensor<4xi64>
  %s = stablehlo.add %a, %b : tensor<4xi64>
  return %s : tensor<4xi64>
}` });
  const started = Date.now();
  const r = xlats("run", join(dir, "loop.mlir"), "--arg", "dense<[1, 2, 3, 4]> : tensor<4xi64>", "--timeout", "1");
  assert.equal(r.code, 1, r.stdout);
  // The run's own deadline check stops it, or, when starting the devices took longer than that on a busy machine, its supervisor.
  assert.match(r.stderr, /main on 2 devices: the sharded run passed its deadline|still running 1 s past its --timeout of 1 s: stopped/);
  // The helper's own limit is 30 s: the run stopped near its 1 s deadline, not there.
  assert.ok(Date.now() - started < 20_000);
});

test("xlats partition --report: the all-reduce a sharded contracting dimension needs, its bytes, the peak memory", () => {
  const dir = tempFiles({ "dot.mlir": `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %b: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}` });
  const r = xlats("partition", join(dir, "dot.mlir"), "--report");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^collectives: 1$/m);
  // Each device's partial 4x4 f32 product (64 B), all-reduced in a group of 2: 2 * 64 * 1/2 = 64 B sent.
  assert.match(r.stdout, /^ {2}allReduce \S+ of %0 f32\[4,4\]: groups of 2, sends 64 B on each device$/m);
  assert.match(r.stdout, /^bytes sent per device: 64 B on each device$/m);
  // 4x4 pieces of a and b (64 B each) and the product alive together: 192 B; unsharded 128 + 128 + 64.
  assert.match(r.stdout, /^peak memory per device: 192 B on each device \(unsharded: 320 B\)$/m);
});
