// -xla-sdy-import-shardings on the shard_map pattern JAX writes (@Sharding +
// @SPMDFullToShardShape, a call of @shmap_body, @Sharding + @SPMDShardToFullShape, with
// mhlo.sharding strings): the call becomes an sdy.manual_computation with the in/out
// shardings and manual axes the strings say, and the program runs sharded on four
// devices. Expected values are computed here from the inputs (the body's own math), not
// from the program; JAX's own lowering of one program without Shardy
// (test/fixtures/sdy_export/program_gspmd.mlir) runs as its lowering with Shardy does.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Literal, parseStableHlo, partition, runPartitioned } from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import { importShardings, needsShardingImport } from "../../../src/sdy/passes/xla_import.js";
import { line, opt } from "./opt.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 4, collectiveTimeoutMs: 10_000 });
});
after(async () => {
  await client.close();
});

const IMPORT = "-xla-sdy-import-shardings";

/** JAX's shard_map of `body` over operands and results of the given shardings (global and local types). */
function shardMap(args: { global: string; local: string; sharding: string; manual: string }[], results: typeof args, body: string): string {
  const params = args.map((a, i) => `%arg${i}: tensor<${a.global}> {mhlo.sharding = "${a.sharding}"}`).join(", ");
  const outs = results.map((r) => `tensor<${r.global}> {mhlo.sharding = "${r.sharding}"}`).join(", ");
  const lines: string[] = [];
  args.forEach((a, i) => {
    lines.push(`%s${i} = stablehlo.custom_call @Sharding(%arg${i}) {mhlo.sharding = "${a.sharding}"} : (tensor<${a.global}>) -> tensor<${a.global}>`);
    lines.push(`%l${i} = stablehlo.custom_call @SPMDFullToShardShape(%s${i}) {mhlo.sharding = "${a.manual}"} : (tensor<${a.global}>) -> tensor<${a.local}>`);
  });
  const n = results.length;
  lines.push(`%r${n > 1 ? `:${n}` : ""} = call @shmap_body(${args.map((_, i) => `%l${i}`).join(", ")}) : (${args.map((a) => `tensor<${a.local}>`).join(", ")}) -> (${results.map((r) => `tensor<${r.local}>`).join(", ")})`);
  results.forEach((r, j) => {
    const v = n > 1 ? `%r#${j}` : "%r";
    lines.push(`%m${j} = stablehlo.custom_call @Sharding(${v}) {mhlo.sharding = "${r.manual}"} : (tensor<${r.local}>) -> tensor<${r.local}>`);
    lines.push(`%y${j} = stablehlo.custom_call @SPMDShardToFullShape(%m${j}) {mhlo.sharding = "${r.sharding}"} : (tensor<${r.local}>) -> tensor<${r.global}>`);
  });
  lines.push(`return ${results.map((_, j) => `%y${j}`).join(", ")} : ${results.map((r) => `tensor<${r.global}>`).join(", ")}`);
  return `module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(${params}) -> (${outs}) {
    ${lines.join("\n    ")}
  }
  ${body}
}`;
}

const grid = (rows: number, cols: number): number[] => Array.from({ length: rows * cols }, (_, i) => ((i * 5) % 13) - 6);

async function runSharded(text: string, args: Literal[]): Promise<Literal[]> {
  const m = parseStableHlo(text, "jax.mlir");
  assert.ok(needsShardingImport(m));
  return runPartitioned(client, partition(importShardings(m)), args);
}

test("a shard_map manual over every axis ({manual}) imports as a manual computation over both axes and runs as its body says", async () => {
  const tiled = "{devices=[2,2]<=[4]}";
  const text = shardMap(
    [{ global: "8x4xf32", local: "4x2xf32", sharding: tiled, manual: "{manual}" }],
    [{ global: "8x4xf32", local: "4x2xf32", sharding: tiled, manual: "{manual}" }],
    `func.func private @shmap_body(%a: tensor<4x2xf32> {mhlo.sharding = "{manual}"}) -> (tensor<4x2xf32> {mhlo.sharding = "{manual}"}) {
    %0 = stablehlo.multiply %a, %a : tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }`);
  const out = opt(text, IMPORT);
  assert.equal(line(out, "sdy.manual_computation"),
    '%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"_axis_0"}, {"_axis_1"}]>] out_shardings=[<@mesh, [{"_axis_0"}, {"_axis_1"}]>] manual_axes={"_axis_0", "_axis_1"} (%arg1: tensor<4x2xf32>) {');
  // No custom call, no shmap_body function, no mhlo.sharding left.
  assert.doesNotMatch(out, /custom_call|shmap_body|mhlo\.sharding/);
  const x = grid(8, 4);
  const [got] = await runSharded(text, [Literal.fromValues("f32", [8, 4], x)]);
  assert.deepEqual((got!.toNested() as number[][]).flat(), x.map((v) => v * v));
});

test("a shard_map manual along one axis keeps the other (free) axis in its body's shardings, and runs as its body says", async () => {
  const rows = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}";
  const manualX = "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}";
  const text = shardMap(
    [{ global: "8x4xf32", local: "4x4xf32", sharding: rows, manual: manualX }],
    [{ global: "8x4xf32", local: "4x4xf32", sharding: rows, manual: manualX }],
    `func.func private @shmap_body(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = stablehlo.negate %a {mhlo.sharding = "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}"} : tensor<4x4xf32>
    %1 = stablehlo.add %0, %a : tensor<4x4xf32>
    %2 = stablehlo.add %1, %a : tensor<4x4xf32>
    return %2 : tensor<4x4xf32>
  }`);
  const out = opt(text, IMPORT);
  assert.match(line(out, "sdy.manual_computation"), /in_shardings=\[<@mesh, \[\{"_axis_0"\}, \{\}\]>\] out_shardings=\[<@mesh, \[\{"_axis_0"\}, \{\}\]>\] manual_axes=\{"_axis_0"\}/);
  // Inside the body the negate is sharded along the free axis only (its dimension 1 along _axis_1).
  assert.match(line(out, "stablehlo.negate"), /sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{\}, \{"_axis_1"\}\]>\]>/);
  const x = grid(8, 4);
  const [got] = await runSharded(text, [Literal.fromValues("f32", [8, 4], x)]);
  // -a + a + a = a
  assert.deepEqual((got!.toNested() as number[][]).flat(), x);
});

test("a shard_map with two results and a psum in its body: the all_reduce sums the four blocks", async () => {
  const tiled = "{devices=[2,2]<=[4]}";
  const arg = { global: "4x4xi32", local: "2x2xi32", sharding: tiled, manual: "{manual}" };
  const text = shardMap([arg], [arg, { ...arg }], `func.func private @shmap_body(%a: tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>) {
    %0 = "stablehlo.all_reduce"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%p: tensor<i32>, %q: tensor<i32>):
      %s = stablehlo.add %p, %q : tensor<i32>
      stablehlo.return %s : tensor<i32>
    }) : (tensor<2x2xi32>) -> tensor<2x2xi32>
    return %0, %a : tensor<2x2xi32>, tensor<2x2xi32>
  }`);
  assert.match(line(opt(text, IMPORT), "sdy.manual_computation"), /^%0:2 = sdy\.manual_computation\(%arg0\)/);
  const x = Array.from({ length: 16 }, (_, i) => i);
  const [sum, same] = await runSharded(text, [Literal.fromValues("s32", [4, 4], x)]);
  // Each 2x2 block becomes the sum of the four blocks at the same place in each.
  const at = (r: number, c: number): number => x[r * 4 + c]!;
  const blockSum = (r: number, c: number): number => at(r % 2, c % 2) + at(r % 2, c % 2 + 2) + at(r % 2 + 2, c % 2) + at(r % 2 + 2, c % 2 + 2);
  assert.deepEqual(sum!.toNested(), [0, 1, 2, 3].map((r) => [0, 1, 2, 3].map((c) => blockSum(r, c))));
  assert.deepEqual((same!.toNested() as number[][]).flat(), x);
});

test("our own export of a manual computation imports back to one with the same shardings and manual axes", () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%b: tensor<4x4xf32>) {
    %1 = stablehlo.abs %b : tensor<4x4xf32>
    sdy.return %1 : tensor<4x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}`;
  const back = opt(opt(text, "-xla-sdy-stablehlo-export-pipeline"), IMPORT);
  // x and y are the imported mesh's _axis_0 and _axis_1.
  assert.match(back, /sdy\.mesh @mesh = <\["_axis_0"=2, "_axis_1"=2\]>/);
  assert.match(line(back, "sdy.manual_computation"),
    /in_shardings=\[<@mesh, \[\{"_axis_0"\}, \{"_axis_1"\}\]>\] out_shardings=\[<@mesh, \[\{"_axis_0"\}, \{\}\]>\] manual_axes=\{"_axis_0"\} \(%arg1: tensor<4x4xf32>\)/);
  assert.match(back, /stablehlo\.abs %arg1/);
  assert.doesNotMatch(back, /custom_call|shmap_body/);
});

test("a shmap_body call not in the shard_map shape is an error naming the call and what it lacks", () => {
  const tiled = "{devices=[2,2]<=[4]}";
  const text = `module {
  func.func @main(%arg0: tensor<4x2xf32> {mhlo.sharding = "${tiled}"}) -> tensor<4x2xf32> {
    %0 = call @shmap_body(%arg0) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
  func.func private @shmap_body(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
    return %a : tensor<4x2xf32>
  }
}`;
  assert.throws(() => opt(text, IMPORT), /call .* of shmap_body: not the shard_map pattern: operand 0 is not an SPMDFullToShardShape custom call/);
});

test("JAX's own lowering without Shardy (a shard_map with a psum) runs sharded as JAX's lowering with Shardy does, and as its math says", async () => {
  const fixtures = resolve(process.cwd(), "test/fixtures/sdy_export");
  const a = Array.from({ length: 32 }, (_, i) => ((i * 7) % 9 - 4) / 4);
  const b = Array.from({ length: 24 }, (_, i) => ((i * 5) % 7 - 3) / 5);
  const args = [Literal.fromValues("f32", [8, 4], a), Literal.fromValues("f32", [4, 6], b)];
  const gspmd = await runSharded(readFileSync(resolve(fixtures, "program_gspmd.mlir"), "utf8"), args);
  const sdy = await runPartitioned(client, partition(parseStableHlo(readFileSync(resolve(fixtures, "program_sdy.mlir"), "utf8"), "sdy.mlir")), args);
  assert.deepEqual(gspmd.map((r) => r.toNested()), sdy.map((r) => r.toNested()));
  // f(a, b) = (column sums of t, t) with t = tanh(a @ b): the shard_map sums its rows, the psum the two row blocks.
  const t = Array.from({ length: 8 }, (_, i) => Array.from({ length: 6 }, (_, j) => Math.tanh([0, 1, 2, 3].reduce((s, k) => s + a[i * 4 + k]! * b[k * 6 + j]!, 0))));
  const sums = [0, 1, 2, 3, 4, 5].map((j) => t.reduce((s, row) => s + row[j]!, 0));
  (gspmd[0]!.toNested() as number[]).forEach((v, j) => assert.ok(Math.abs(v - sums[j]!) < 1e-5, `sum ${j}: ${v} vs ${sums[j]}`));
  (gspmd[1]!.toNested() as number[][]).forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - t[i]![j]!) < 1e-6)));
});
