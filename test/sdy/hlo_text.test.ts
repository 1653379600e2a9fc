// Shardy in HLO text: sdy ops as "xla.sdy.*" custom calls with their attributes as
// frontend attributes, shardings of instructions, parameters and results, and the
// module's meshes in the header. A module read from StableHLO prints as HLO, reads
// back with the same typed values, and prints the same text again. And XLA's
// `sharding=` text converts to and from Shardy shardings (hand-worked tile assignments).

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHlo, parseStableHlo, printHlo, printStableHlo, type Instruction } from "../../src/index.js";
import { hloShardingToSdy, sdyToHloSharding } from "../../src/sdy/hlo_sharding.js";
import { arrayShape } from "../../src/types/shape.js";
import type { Mesh, TensorSharding } from "../../src/sdy/model.js";

const PROGRAM = `
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p1, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "b"}, {}]>]>} : tensor<8x8xf32>
  %1 = sdy.all_gather [{"b"}, {}] %0 out_sharding=<@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %2 = sdy.all_reduce max {"b"} %1 out_sharding=<@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %3 = sdy.all_to_all [{"a"}: 0->1] %2 out_sharding=<@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  %4 = sdy.reshard %3 <@mesh, [{"a"}, {}], replicated={"b"}> : tensor<8x8xf32>
  %5 = sdy.propagation_barrier %4 allowed_direction=NONE : tensor<8x8xf32>
  %6 = sdy.manual_computation(%5) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<4x8xf32>) {
    %7 = stablehlo.negate %arg1 : tensor<4x8xf32>
    sdy.return %7 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %8 = sdy.named_computation<"f">(%6) out_shardings=[<@mesh, [{}, {}]>] (%arg2: tensor<8x8xf32>) {
    sdy.return %arg2 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  sdy.sharding_group %8 group_id=7 : tensor<8x8xf32>
  %c = sdy.constant dense<2.0> : tensor<8x8xf32>
  %9 = stablehlo.multiply %8, %c : tensor<8x8xf32>
  return %9 : tensor<8x8xf32>
}`;

/** The instructions of every computation with what the IR says about them (ids and names aside). */
function summary(m: ReturnType<typeof parseHlo>): unknown[] {
  return m.computations.flatMap((c) => c.instructions.map((i: Instruction) => ({
    opcode: i.opcode, sdySharding: i.sdySharding ?? null,
    attrs: JSON.parse(JSON.stringify(i.attrs, (k, v) => (k === "body" ? "body" : k === "literal" ? String(v) : v))),
  })));
}

test("sdy ops and shardings go through HLO text and back", () => {
  const fromMlir = parseStableHlo(PROGRAM, "program.mlir");
  const hlo = printHlo(fromMlir);
  assert.match(hlo, /custom-call\(f32\[8,8\]\{1,0\} %\S+\), custom_call_target="xla.sdy.AllReduce"/);
  assert.match(hlo, /xla\.sdy\.meshes=\{mesh = #sdy\.mesh<\["a"=2, "b"=2\]>\}/);
  const back = parseHlo(hlo, "program.hlo");
  assert.equal(printHlo(back), hlo);
  assert.deepEqual(summary(back), summary(fromMlir));
  assert.deepEqual(back.meshes, fromMlir.meshes);
  assert.deepEqual(back.entry.argShardings, fromMlir.entry.argShardings);
  assert.deepEqual(back.entry.resultShardings, fromMlir.entry.resultShardings);
  // And back to StableHLO: the sdy syntax again.
  const again = printStableHlo(back);
  for (const piece of ['sdy.all_reduce max {"b"} %', 'sdy.manual_computation(', 'sdy.sharding_group %', 'group_id=7', 'sdy.constant dense<2.000000e+00>']) {
    assert.ok(again.includes(piece), `missing ${piece}`);
  }
});

test("a malformed xla.sdy attribute is a ParseError at the instruction", () => {
  const hlo = printHlo(parseStableHlo(PROGRAM, "program.mlir")).replace('xla.sdy.allowed_direction="NONE"', 'xla.sdy.allowed_direction="SIDEWAYS"');
  assert.throws(() => parseHlo(hlo, "bad.hlo"), /xla\.sdy\.allowed_direction: expected one of NONE, FORWARD, BACKWARD, BOTH/);
});

const shape2 = arrayShape("f32", [4, 4]);
const mesh2x2: Mesh = { axes: [{ name: "a", size: 2 }, { name: "b", size: 2 }] };
const on = (dims: string[][]): TensorSharding => ({
  meshOrRef: "mesh", dimShardings: dims.map((axes) => ({ axes: axes.map((name) => ({ name })), isClosed: true })), replicatedAxes: [], unreducedAxes: [],
});

test("HloSharding -> Shardy: tile assignments become meshes of axis_i and closed dimension shardings", () => {
  assert.deepEqual(hloShardingToSdy("{devices=[2,1]0,1}", shape2), {
    mesh: { axes: [{ name: "axis_0", size: 2 }] },
    sharding: {
      meshOrRef: { axes: [{ name: "axis_0", size: 2 }] }, dimShardings: [{ axes: [{ name: "axis_0" }], isClosed: true }, { axes: [], isClosed: true }],
      replicatedAxes: [], unreducedAxes: [],
    },
  });
  assert.deepEqual(hloShardingToSdy("{devices=[2,2]0,2,1,3}", shape2)?.mesh, {
    axes: [{ name: "axis_0", size: 2 }, { name: "axis_1", size: 2 }], deviceIds: [0, 2, 1, 3],
  });
  // <=[2,2]T(1,0) is iota(4) as 2x2, transposed: 0,2,1,3.
  assert.deepEqual(hloShardingToSdy("{devices=[2,2]<=[2,2]T(1,0)}", shape2)?.mesh.deviceIds, [0, 2, 1, 3]);
  assert.deepEqual(hloShardingToSdy("{maximal device=3}", shape2)?.mesh, { axes: [], deviceIds: [3] });
  assert.equal(hloShardingToSdy("{{replicated}, {maximal device=0}}", shape2), undefined);
  assert.equal(hloShardingToSdy("{manual}", shape2), undefined);
});

test("Shardy -> HloSharding: each tile's device, the free axes as a replicated last tile dimension", () => {
  // Device (a, b) is a*2+b. [{"b"}, {"a"}]: tile (i, j) is device (a=j, b=i): 0, 2, 1, 3.
  assert.equal(sdyToHloSharding(on([["b"], ["a"]]), mesh2x2), "{devices=[2,2]0,2,1,3}");
  // [{"a"}, {}]: tile 0 on devices a=0 (0, 1), tile 1 on a=1 (2, 3), replicated along b.
  assert.equal(sdyToHloSharding(on([["a"], []]), mesh2x2), "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  assert.equal(sdyToHloSharding(on([[], []]), mesh2x2), "{replicated}");
  assert.equal(sdyToHloSharding(on([]), { axes: [], deviceIds: [5] }), "{maximal device=5}");
  const sub: TensorSharding = { ...on([[], []]), dimShardings: [{ axes: [{ name: "a", subAxis: { preSize: 1, size: 2 } }], isClosed: true }, { axes: [], isClosed: true }] };
  assert.equal(sdyToHloSharding(sub, { axes: [{ name: "a", size: 4 }] }), undefined);
  // Round trip through the HLO form.
  for (const text of ["{devices=[2,1]0,1}", "{devices=[2,2]0,2,1,3}", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"]) {
    const s = hloShardingToSdy(text, shape2)!;
    assert.equal(sdyToHloSharding(s.sharding, s.mesh), text);
  }
});
