// -sdy-per-instruction-partitioning beyond Shardy's lit file (which the conformance test
// runs): the filter's items select ops by their number among the candidates and by name;
// an op whose per-device code needs a collective gets it inside its manual computation,
// and the program with the op partitioned alone, then partitioned as a whole and run on
// the devices, equals the unsharded program (the interpreter's run, exact integers).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { evaluate, Literal, parseStableHlo, partition, runPartitioned } from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import { meshTable } from "../../../src/sharding/mesh.js";
import { parseFilter } from "../../../src/sdy/passes/per_instruction_partitioning.js";
import { opt } from "./opt.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 4, collectiveTimeoutMs: 10_000 });
});
after(async () => {
  await client.close();
});

const PROGRAM = `sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                %b: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<4x8xi32>, tensor<8x4xi32>) -> tensor<4x4xi32>
  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<4x4xi32>
  %2 = stablehlo.multiply %1, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<4x4xi32>
  return %2 : tensor<4x4xi32>
}`;

const count = (text: string, needle: string): number => text.split(needle).length - 1;

test("the filter: bounds and names in any order, quoted or not, and a typed error for a bound that is no integer", () => {
  assert.deepEqual(parseFilter("'selectHigh=3, selectLow=1'"), { selectLow: 1, selectHigh: 3, opNames: [], selectAll: false });
  assert.deepEqual(parseFilter(" dot , pad "), { selectLow: -1, selectHigh: -1, opNames: ["dot", "pad"], selectAll: false });
  assert.equal(parseFilter("").selectAll, true);
  assert.throws(() => parseFilter("selectLow=a"), /selectLow takes an integer, got 'a'/);
});

test("ops are numbered among the candidates in program order: selectLow/selectHigh and names pick which are wrapped", () => {
  const flag = (filter: string): string => `--sdy-per-instruction-partitioning=filter='${filter}'`;
  // Ops 0 (dot), 1 (add), 2 (multiply).
  const first = opt(PROGRAM, flag("selectLow=1, selectHigh=1"));
  assert.equal(count(first, "sdy.manual_computation"), 1);
  assert.match(first, /sdy\.manual_computation[^\n]*\n\s*%\d+ = stablehlo\.add/);
  assert.equal(count(opt(PROGRAM, flag("selectLow=1")), "sdy.manual_computation"), 2);
  assert.equal(count(opt(PROGRAM, flag("multiply, dot")), "sdy.manual_computation"), 2);
  assert.equal(count(opt(PROGRAM, "--sdy-per-instruction-partitioning"), "sdy.manual_computation"), 3);
});

test("a dot summing over a sharded dimension gets its all_reduce inside its manual computation; run on devices it equals the unsharded program", async () => {
  const text = opt(PROGRAM, "--sdy-per-instruction-partitioning=filter=dot");
  assert.match(text, /manual_axes=\{"x", "y"\} \(%arg2: tensor<4x4xi32>, %arg3: tensor<4x2xi32>\)/);
  assert.ok(text.includes("stablehlo.all_reduce"), text);
  const args = [
    Literal.fromValues("s32", [4, 8], Array.from({ length: 32 }, (_, i) => (i % 7) - 3)),
    Literal.fromValues("s32", [8, 4], Array.from({ length: 32 }, (_, i) => (i % 5) - 2)),
  ];
  const original = parseStableHlo(PROGRAM, "test.mlir");
  const want = evaluate(original.entry, args, { meshes: meshTable(original) });
  const [got] = await runPartitioned(client, partition(parseStableHlo(text, "test.mlir")), args);
  assert.deepEqual(got!.toNested(), want.toNested());
});
