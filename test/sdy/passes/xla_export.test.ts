// -xla-sdy-stablehlo-export-pipeline against what JAX writes: the same program lowered
// by JAX with Shardy (test/fixtures/sdy_export/program_sdy.mlir) is exported here and
// compared with JAX's own lowering without Shardy (program_gspmd.mlir): the same
// mhlo.sharding strings on main's arguments and results and the same custom calls
// (@Sharding, @SPMDFullToShardShape, @SPMDShardToFullShape) in the same order. Then the
// exported text reads back: HLO text's sharding= and the strings give back the
// shardings, on the mesh, that the program had; -xla-sdy-import-shardings makes them
// Shardy shardings again, on a mesh of its own whose blocks are the same on every device.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseHlo, parseStableHlo, printHlo, printStableHlo, type Instruction } from "../../../src/index.js";
import { parseHloSharding } from "../../../src/sharding/hlo_sharding.js";
import { hloShardingOnMesh } from "../../../src/sdy/hlo_sharding_convert.js";
import { shardIndex } from "../../../src/sharding/local_shapes.js";
import type { Mesh, TensorSharding } from "../../../src/sharding/model.js";
import { opt } from "./opt.js";

const FIXTURES = resolve(process.cwd(), "test/fixtures/sdy_export");
const EXPORT = "-xla-sdy-stablehlo-export-pipeline";

/** main's argument and result shardings and its custom calls (target and sharding), in text order. */
function mainShardings(text: string): { signature: string[]; calls: string[] } {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /func\.func (public )?@main/.test(l));
  const end = lines.findIndex((l, i) => i > start && /^ {2}\}/.test(l));
  const signature = [...lines[start]!.matchAll(/mhlo\.sharding = "([^"]*)"/g)].map((m) => m[1]!);
  const calls = lines.slice(start + 1, end).flatMap((l) => {
    const m = /custom_call @(\w+)\(.*mhlo\.sharding = "([^"]*)"/.exec(l);
    return m === null ? [] : [`${m[1]} ${m[2]}`];
  });
  return { signature, calls };
}

test("the exported program says what JAX says without Shardy: the same strings and custom calls", () => {
  const sdy = readFileSync(resolve(FIXTURES, "program_sdy.mlir"), "utf8");
  const gspmd = readFileSync(resolve(FIXTURES, "program_gspmd.mlir"), "utf8");
  const exported = opt(sdy, EXPORT);
  assert.doesNotMatch(exported, /sdy\./);
  const want = mainShardings(gspmd);
  assert.equal(want.calls.length, 5);
  assert.deepEqual(mainShardings(exported), want);
  // The shard_map body is a private function called from main, its ops manual along x.
  assert.match(exported, /call @shmap_body\(/);
  assert.match(exported, /func\.func private @shmap_body/);
  assert.match(exported, /stablehlo\.reduce.*mhlo\.sharding = "\{devices=\[1,2,2\]<=\[4\] last_tile_dims=\{manual, replicated\}\}"/);
  assert.match(exported, /mhlo\.num_partitions = 4 : i32/);
});

test("exported shardings read back: mhlo.sharding strings and HLO text's sharding= give the program's shardings", () => {
  const text = `
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2}, {"y"}]>}) -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>}) {
  %0 = stablehlo.tanh %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x6xf32>
  %1 = sdy.reshard %0 <@mesh, [{"y", "x"}, {}]> : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}`;
  const m = parseStableHlo(text, "in.mlir");
  const mesh = m.meshes![0]!.mesh;
  const exported = parseStableHlo(opt(text, EXPORT), "out.mlir");
  const arg = JSON.parse(exported.entry.argAttributes![0]!["mhlo.sharding"]!) as string;
  const result = JSON.parse(exported.entry.resultAttributes![0]!["mhlo.sharding"]!) as string;
  // Pieces x:(1)2, x:(2)2, y of iota(8) as 2x2x2: dimension 0 along the minor half of x,
  // dimension 1 along y, the major half of x replicated: T(1,2,0), whose 1,2 merge into one 4.
  assert.equal(arg, "{devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  assert.deepEqual(hloShardingOnMesh(parseHloSharding(arg), mesh, 2).sharding.dimShardings, m.entry.argShardings![0]!.dimShardings);
  assert.deepEqual(hloShardingOnMesh(parseHloSharding(result), mesh, 2).sharding.dimShardings, m.entry.resultShardings![0]!.dimShardings);
  const ops = exported.entry.instructions.filter((i) => i.sharding !== undefined);
  assert.deepEqual(ops.map((i) => i.opcode), ["tanh", "customCall"]);
  // Through HLO text: sharding= on the instructions, and back to the same strings.
  const hlo = printHlo(exported);
  assert.match(hlo, /tanh\(.*\), sharding=\{devices=\[4,1,2\]<=\[8\] last_tile_dim_replicate\}/);
  assert.match(hlo, /custom_call_target="Sharding", sharding=\{devices=\[8,1\]<=\[4,2\]T\(1,0\)\}/);
  const again = parseHlo(hlo, "out.hlo");
  // The parameter takes its argument's sharding in HLO text; the ops keep theirs.
  assert.deepEqual(again.entry.instructions.flatMap((i) => (i.sharding === undefined ? [] : [i.sharding])), [arg, ...ops.map((i) => i.sharding)]);
  assert.match(printStableHlo(again), /stablehlo\.tanh .*mhlo\.sharding = "\{devices=\[4,1,2\]<=\[8\] last_tile_dim_replicate\}"/);
  assert.deepEqual(hloShardingOnMesh(parseHloSharding(ops[1]!.sharding!), mesh, 2).sharding.dimShardings.map((d) => d.axes.map((a) => a.name)), [["y", "x"], []]);
});

test("a named computation is a call of a private function of its name, its shardings on the function", () => {
  const exported = opt(`
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
  %0 = sdy.named_computation<"foo">(%a) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{}]>] (%arg1: tensor<4xf32>) {
    %1 = stablehlo.negate %arg1 : tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`, EXPORT);
  assert.match(exported, /= call @foo\(%arg0\) : \(tensor<4xf32>\) -> tensor<4xf32>/);
  assert.match(exported, /func\.func private @foo\(%arg0: tensor<4xf32> \{mhlo\.sharding = "\{devices=\[2\]<=\[2\]\}"\}\) -> \(tensor<4xf32> \{mhlo\.sharding = "\{replicated\}"\}\)/);
  assert.doesNotMatch(exported, /sdy\./);
});

test("through HLO text and back: parameters and the ROOT carry main's argument and result shardings, as in XLA", () => {
  const exported = opt(readFileSync(resolve(FIXTURES, "program_sdy.mlir"), "utf8"), EXPORT);
  const hlo = printHlo(parseStableHlo(exported, "out.mlir"));
  assert.match(hlo, /parameter\(0\), sharding=\{devices=\[2,1,2\]<=\[4\] last_tile_dim_replicate\}/);
  assert.match(hlo, /ROOT %\S+ = \(f32\[6\]\{0\}, f32\[8,6\]\{1,0\}\) tuple\(.*\), sharding=\{\{replicated\}, \{devices=\[2,2\]<=\[4\]\}\}/);
  const back = printStableHlo(parseHlo(hlo, "out.hlo"));
  assert.deepEqual(mainShardings(back).signature, mainShardings(exported).signature);
  assert.deepEqual(mainShardings(back).calls, mainShardings(exported).calls);
});

test("unreduced axes export as XLA writes them (an unreduced subgroup) and -xla-sdy-import-shardings reads them back", () => {
  const text = `
sdy.mesh @mesh = <["i"=2, "j"=2]>
func.func @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"j"}, {}], unreduced={"i"}>}) -> (tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) {
  %0 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"i", "j"}>]>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}`;
  const exported = opt(text, EXPORT);
  // XLA's export_shardings tests print these strings for the same shardings.
  assert.match(exported, /%arg0: tensor<4x8xf32> \{mhlo\.sharding = "\{devices=\[2,1,2\]<=\[2,2\]T\(1,0\) last_tile_dims=\{unreduced\}\}"\}/);
  assert.match(exported, /stablehlo\.add %arg0, %arg0 \{mhlo\.sharding = "\{unreduced\}"\}/);
  const back = opt(exported, "-xla-sdy-import-shardings");
  // The imported mesh names its axes _axis_0 (i) and _axis_1 (j).
  assert.match(back, /sdy\.mesh @mesh = <\["_axis_0"=2, "_axis_1"=2\]>/);
  assert.match(back, /%arg0: tensor<4x8xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"_axis_1"\}, \{\}\], unreduced=\{"_axis_0"\}>\}/);
  assert.match(back, /stablehlo\.add %arg0, %arg0 \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{\}, \{\}\], unreduced=\{"_axis_0", "_axis_1"\}>\]>\}/);
});

test("unreduced axes inside a manual computation (XLA has no HloSharding for both) are a HloShardingError naming the value", () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<4xf32> {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%b: tensor<2xf32>) {
    %1 = stablehlo.negate %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={"y"}>]>} : tensor<2xf32>
    sdy.return %1 : tensor<2xf32>
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`;
  assert.throws(() => opt(text, EXPORT), /negate .1.: sharding unreduced along "y" inside a manual computation \(manual axes x\): XLA.s HloSharding has no form with both unreduced and manual axes/);
});

test("-xla-sdy-import-shardings reads the exported strings back: every device holds the same block as before", () => {
  const text = `
sdy.mesh @mesh = <["x"=4, "y"=2, "z"=3]>
func.func @main(%a: tensor<8x6x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2, "y"}, {"z"}, {}]>},
                %b: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x"}, {}]>}) -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"z"}]>}) {
  %0 = stablehlo.slice %a [0:8, 0:6, 0:1] : (tensor<8x6x6xf32>) -> tensor<8x6x1xf32>
  %1 = stablehlo.reshape %0 : (tensor<8x6x1xf32>) -> tensor<8x6xf32>
  %2 = stablehlo.add %1, %b : tensor<8x6xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{"z", "x":(1)2}, {}]> : tensor<8x6xf32>
  return %3 : tensor<8x6xf32>
}`;
  const original = parseStableHlo(text, "in.mlir");
  const back = parseStableHlo(opt(opt(text, EXPORT), "-xla-sdy-import-shardings"), "back.mlir");
  const meshOf = (m: typeof original): Mesh => m.meshes!.find((n) => n.name === "mesh")!.mesh;
  const before = meshOf(original);
  const after = meshOf(back);
  assert.deepEqual(after.axes.map((a) => a.name), ["_axis_0", "_axis_1", "_axis_2", "_axis_3"]);
  const sameBlocks = (s: TensorSharding, t: TensorSharding, what: string): void => {
    for (let device = 0; device < 24; device++) {
      s.dimShardings.forEach((d, k) => {
        assert.equal(shardIndex(device, after, t.dimShardings[k]!.axes), shardIndex(device, before, d.axes), `${what}: device ${device}, dimension ${k}`);
      });
    }
  };
  original.entry.argShardings!.forEach((s, i) => sameBlocks(s!, back.entry.argShardings![i]!, `argument ${i}`));
  sameBlocks(original.entry.resultShardings![0]!, back.entry.resultShardings![0]!, "result");
  const constraint = (m: typeof original): TensorSharding => (m.entry.instructions.find((i) => i.opcode === "sdyShardingConstraint") as Instruction<"sdyShardingConstraint">).attrs.sharding;
  sameBlocks(constraint(original), constraint(back), "the constraint");
});
