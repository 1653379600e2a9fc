// -sdy-insert-explicit-reshards on a reshape whose sharding overflows its factors (Shardy's
// processReshapeWithOverflowAxes; its lit case is in the conformance run). By hand: 24
// elements on x=6 reshaped to 4x6 (factors 4 and 6): the factor of 4 takes x's leading 2,
// the factor of 6 the remaining 3; written back, the operand's two parts make "x" again,
// which projects with the 3 overflowing, so the common prefix keeps only x:(1)2 on the
// factor of 4: the operand is resharded to [{"x":(1)2}], the reshape computes
// [{"x":(1)2}, {}] and its result is resharded to what its users want. Partitioned and
// run on 6 devices it equals the unsharded reshape.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { evaluate, Literal, parseStableHlo, partition, runPartitioned } from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import { meshTable } from "../../../src/sharding/mesh.js";
import { line, opt } from "./opt.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 6, collectiveTimeoutMs: 10_000 });
});
after(async () => {
  await client.close();
});

const TEXT = `sdy.mesh @mesh = <["x"=6]>
func.func @main(%arg0: tensor<24xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<24xi32>) -> tensor<4x6xi32>
  return %0 : tensor<4x6xi32>
}`;

test("the factors of a reshape share the axes of the side sharded over more devices, axis by axis", () => {
  const out = opt(TEXT, "-sdy-insert-explicit-reshards=enable-full-version=true");
  assert.equal(line(out, "sdy.reshard %arg0"), `%0 = sdy.reshard %arg0 <@mesh, [{"x":(1)2}]> : tensor<24xi32>`);
  assert.match(line(out, "stablehlo.reshape"), /stablehlo\.reshape %0 \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"x":\(1\)2\}, \{\}\]>\]>/);
  assert.equal(line(out, "sdy.reshard %1"), `%2 = sdy.reshard %1 <@mesh, [{}, {}]> : tensor<4x6xi32>`);
});

test("partitioned and run on the devices, the reshape equals the unsharded one", async () => {
  const args = [Literal.fromValues("s32", [24], Array.from({ length: 24 }, (_, i) => i * 3 - 20))];
  const m = parseStableHlo(TEXT, "test.mlir");
  const [got] = await runPartitioned(client, partition(m), args);
  assert.deepEqual(got!.toNested(), evaluate(m.entry, args, { meshes: meshTable(m) }).toNested());
});
