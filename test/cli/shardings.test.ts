// `xlats shardings`: the command on small programs written here, run as the CLI tests run
// commands (test/cli/helpers.ts), and once through runCli here, for the terminal-color switch.

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runCli, type CliIo } from "../../src/cli/cli.js";
import { tempFiles, xlats } from "./helpers.js";
import { readDoc } from "../support/docs.js";

const PROGRAM = `sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
`;

const dir = tempFiles({
  "p.mlir": PROGRAM,
  "bad_axis.mlir": PROGRAM.replace('[{}, {"x"}]', '[{}, {"z"}]'),
  "two.mlir": `sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @g(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<6xf32>) -> tensor<6xf32> {
  return %arg1 : tensor<6xf32>
}
`,
  "transpose.mlir": `sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
  %0 = stablehlo.tanh %a : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
`,
  "p.hlo": `HloModule m

ENTRY main {
  p0 = f32[8,4] parameter(0), sharding={devices=[2,2]0,2,1,3}
  ROOT n = f32[8,4] negate(p0)
}
`,
});
const file = (name: string): string => join(dir, name);

/** The lines of one tensor's section: from its title to the blank line after it. */
function section(stdout: string, title: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.indexOf(title);
  assert.ok(start >= 0, `no section ${title} in:\n${stdout}`);
  const end = lines.indexOf("", start);
  return lines.slice(start, end < 0 ? undefined : end);
}

test("every sharded tensor of every function, with the mesh's devices once", () => {
  const r = xlats("shardings", file("p.mlir"));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(r.stdout.split("\n").slice(0, 8), [
    'mesh @mesh = <["x"=2, "y"=2]>',
    "        y=0   y=1",
    "      ┌─────┬─────┐",
    "  x=0 │  0  │  1  │",
    "      ├─────┼─────┤",
    "  x=1 │  2  │  3  │",
    "      └─────┴─────┘",
    "",
  ]);
  assert.deepEqual(section(r.stdout, "@main %arg0: tensor<8x8xf32>"), [
    "@main %arg0: tensor<8x8xf32>",
    '  #sdy.sharding<@mesh, [{"x"}, {"y"}]>',
    "  rows: dim 0, columns: dim 1",
    "        0:4   4:8",
    "      ┌─────┬─────┐",
    "  0:4 │  0  │  1  │",
    "      ├─────┼─────┤",
    "  4:8 │  2  │  3  │",
    "      └─────┴─────┘",
    '  dim 0 (8): 2 shards of 4 along "x"',
    '  dim 1 (8): 2 shards of 4 along "y"',
    "  each block on 1 device",
  ]);
  // %1 splits columns along x: devices (x=0: 0, 1) hold the left half.
  assert.deepEqual(section(r.stdout, "@main %1: tensor<8x8xf32>").slice(3, 6), ["        0:4   4:8", "      ┌─────┬─────┐", "  0:8 │ 0,1 │ 2,3 │"]);
  // The result: rows along y, devices (y=0: 0, 2) the top half.
  assert.ok(section(r.stdout, "@main result#0: tensor<8x8xf32>").includes("  0:4 │ 0,2 │"));
  // Unsharded values are left out; no colors into a pipe.
  assert.ok(!r.stdout.includes("%arg1:") && !r.stdout.includes("%0:"));
  assert.ok(!r.stdout.includes("\x1b["));
});

test("--values and --func pick tensors; --propagate shards the rest first", () => {
  const picked = xlats("shardings", file("p.mlir"), "--func", "@main", "--values", "result#0,arg0");
  assert.equal(picked.code, 0, picked.stderr);
  assert.deepEqual(picked.stdout.split("\n").filter((l) => l.startsWith("@")), ["@main result#0: tensor<8x8xf32>", "@main %arg0: tensor<8x8xf32>"]);
  const propagated = xlats("shardings", file("p.mlir"), "--propagate", "--values", "%0");
  assert.equal(propagated.code, 0, propagated.stderr);
  // The add's operand %arg0 is [{x},{y}]: propagation gives the add its sharding.
  assert.deepEqual(section(propagated.stdout, "@main %0: tensor<8x8xf32>").slice(1, 2), ['  #sdy.sharding<@mesh, [{"x"}, {"y"}]>']);
});

test("--values over several functions draws each one's value; --func picks one function", () => {
  const both = xlats("shardings", file("two.mlir"), "--values", "arg0");
  assert.equal(both.code, 0, both.stderr);
  // "x":(1)2 of x=4: devices 0,1 hold 0:4, devices 2,3 hold 4:8.
  assert.deepEqual(section(both.stdout, "@main %arg0: tensor<8xf32>").slice(2, 6), [
    "  columns: dim 0", "     0:4   4:8", "   ┌─────┬─────┐", "   │ 0,1 │ 2,3 │",
  ]);
  // 6 in 4 shards of 2: the last device's shard is all padding.
  assert.ok(section(both.stdout, "@g %arg0: tensor<6xf32>").includes('  dim 0 (6): 4 shards of 2 along "x", padded by 2 elements at the end'));
  const onlyG = xlats("shardings", file("two.mlir"), "--func", "g", "--values", "arg1");
  assert.equal(onlyG.code, 1);
  assert.equal(onlyG.stderr, `${file("two.mlir")}:5:1: error: value %arg1 of @g has no sharding\n`);
  assert.deepEqual(xlats("shardings", file("two.mlir"), "--func", "g").stdout.split("\n").filter((l) => l.startsWith("@")), ["@g %arg0: tensor<6xf32>"]);
});

test("--html writes one self-contained page with a figure per tensor", () => {
  const out = file("out.html");
  const r = xlats("shardings", file("p.mlir"), "--html", out);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `wrote 3 figures to ${out}\n`);
  const page = readFileSync(out, "utf8");
  assert.equal(page.match(/<figure>/g)?.length, 3);
  assert.ok(page.includes("@main %arg0: tensor&lt;8x8xf32&gt;"));
  assert.ok(page.includes("<title>devices 0,2: [0:4, 0:8]</title>"));
  assert.doesNotMatch(page, /\bsrc=|\bhref=|<script/);
});

test("--reshards marks where each reshard happens: the value before it and the value it makes", () => {
  const r = xlats("shardings", file("transpose.mlir"), "--reshards");
  assert.equal(r.code, 0, r.stderr);
  // tanh keeps [{"x"}, {"y"}]; the result wants the axes swapped: one reshard before the return.
  assert.deepEqual(section(r.stdout, "@main %0: tensor<8x8xf32>").slice(0, 2), ["@main %0: tensor<8x8xf32>", '  #sdy.sharding<@mesh, [{"x"}, {"y"}]>']);
  const title = r.stdout.split("\n").find((l) => /^@main %sdyReshard\.\d+: tensor<8x8xf32>$/.test(l))!;
  assert.deepEqual(section(r.stdout, title).slice(1, 9), [
    '  ⇄ sdy.reshard here: %0 #sdy.sharding<@mesh, [{"x"}, {"y"}]> → this sharding, for the return',
    '  #sdy.sharding<@mesh, [{"y"}, {"x"}]>',
    "  rows: dim 0, columns: dim 1",
    "        0:4   4:8",
    "      ┌─────┬─────┐",
    "  0:4 │  0  │  2  │",
    "      ├─────┼─────┤",
    "  4:8 │  1  │  3  │",
  ]);
  assert.equal(r.stdout.match(/⇄/g)?.length, 1);
  // An all_reduce where a contracting dimension is sharded, in the HTML page too.
  const out = file("reshards.html");
  const dot = tempFiles({ "dot.mlir": `sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %b: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
` });
  const h = xlats("shardings", join(dot, "dot.mlir"), "--reshards", "--html", out);
  assert.equal(h.code, 0, h.stderr);
  const page = readFileSync(out, "utf8");
  assert.equal(page.match(/<figure class="reshard">/g)?.length, 1);
  assert.ok(page.includes("⇄ sdy.all_reduce here: %0 holds partial results along [&quot;x&quot;], summed here, for the return"));
  assert.ok(page.includes("after propagation and -sdy-insert-explicit-reshards"));
});

test("HLO text: XLA's sharding= drawn on the mesh it stands for", () => {
  const r = xlats("shardings", file("p.hlo"));
  assert.equal(r.code, 0, r.stderr);
  // {devices=[2,2]0,2,1,3}: tile (0,1) is device 2, tile (1,0) device 1.
  const lines = section(r.stdout, "@main %p0: tensor<8x4xf32>");
  assert.ok(lines.includes("  0:4 │  0  │  2  │") && lines.includes("  4:8 │  1  │  3  │"), lines.join("\n"));
});

test("bad input: FILE:LINE:COL for values, Shardy's verifier for shardings, usage errors exit 2", () => {
  const noSharding = xlats("shardings", file("p.mlir"), "--values", "%0");
  assert.equal(noSharding.code, 1);
  assert.equal(noSharding.stderr, `${file("p.mlir")}:3:3: error: value %0 of @main has no sharding\n`);
  const unknownValue = xlats("shardings", file("p.mlir"), "--values", "%9");
  assert.equal(unknownValue.code, 1);
  assert.match(unknownValue.stderr, /:2:1: error: no value %9 in @main \(its values: %arg0, %arg1, %0, %1, result#0\)/);
  const unknownFunc = xlats("shardings", file("p.mlir"), "--func", "g");
  assert.equal(unknownFunc.code, 1);
  assert.equal(unknownFunc.stderr, `${file("p.mlir")}: error: no function @g (the functions are @main)\n`);
  const badAxis = xlats("shardings", file("bad_axis.mlir"));
  assert.equal(badAxis.code, 1);
  assert.match(badAxis.stderr, /bad_axis\.mlir:4:\d+: error: .*unknown axis name: "z"/);
  assert.equal(xlats("shardings").code, 2);
  assert.equal(xlats("shardings", file("p.mlir"), "--colour").code, 2);
  assert.equal(xlats("shardings", file("p.hlo"), "--propagate").code, 2);
  const help = xlats("--help");
  assert.match(help.stdout, /xlats shardings FILE \[--func NAME\] \[--values A,B,...\] \[--propagate\] \[--reshards\] \[--html OUT.html\]/);
});

test("colors when the caller's terminal wants them", async () => {
  const out: string[] = [];
  const io = (colors: boolean): CliIo => ({
    readFile: () => PROGRAM, isDirectory: () => false, listDirectory: () => [], joinPath: (a, b) => `${a}/${b}`,
    out: (l) => out.push(l), err: (l) => out.push(l), colors,
  });
  assert.equal(await runCli(["shardings", "p.mlir", "--values", "arg0"], io(true)), 0);
  assert.ok(out.join("\n").includes("\x1b[48;5;"));
  out.length = 0;
  assert.equal(await runCli(["shardings", "p.mlir", "--values", "arg0"], io(false)), 0);
  assert.ok(!out.join("\n").includes("\x1b["));
});

test("docs/sharding.md: the xlats shardings example prints what the page shows", () => {
  const page = readDoc("docs/sharding.md");
  const section = page.slice(page.indexOf("## Seeing a sharding"));
  const program = /```mlir\n([\s\S]*?)```/.exec(section)![1]!;
  const shown = /```text\n([\s\S]*?)```/.exec(section)![1]!;
  const command = /`xlats shardings matmul\.mlir ([^`]*)` prints:/.exec(section)![1]!.split(" ");
  const r = xlats("shardings", join(tempFiles({ "matmul.mlir": program }), "matmul.mlir"), ...command);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, shown);
});

test("xlats shardings shows control characters from mesh and axis names escaped, never raw", () => {
  // An axis named ESC "]0;pwned" BEL retitled the terminal, ESC "[2J" cleared it.
  const dir = tempFiles({
    "evil.mlir": `sdy.mesh @mesh = <["x\\1B]0;pwned\\07"=2, "y\\1B[2J"=2]>
func.func @main(%arg0: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x\\1B]0;pwned\\07"}, {"y\\1B[2J"}]>}) -> tensor<4x4xf32> {
  return %arg0 : tensor<4x4xf32>
}
`,
  });
  const r = xlats("shardings", join(dir, "evil.mlir"));
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /[\x00-\x08\x0b-\x1f\x7f]/);
  assert.match(r.stdout, /x\\x1b\]0;pwned\\x07/);
  assert.match(r.stdout, /y\\x1b\[2J/);
});
