// Shardy in HLO text: sdy ops as "xla.sdy.*" custom calls with their attributes as
// frontend attributes, shardings of instructions, parameters and results, and the
// module's meshes in the header. A module read from StableHLO prints as HLO, reads
// back with the same typed values, and prints the same text again. (XLA's `sharding=`
// text and Shardy shardings: hlo_sharding.test.ts.)

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseHlo, parseStableHlo, printHlo, printStableHlo, type Instruction } from "../../src/index.js";

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
