// The text grids and the HTML page of sharding layouts: grids drawn by hand, the
// summary's sentences, colors only on request, a page that loads nothing.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import type { Mesh } from "../../../src/sharding/model.js";
import { deviceColor, escapeHtml, renderShardingsHtml, type ShardingFigure } from "../../../src/sdy/visualize/html.js";
import { shardingLayout } from "../../../src/sdy/visualize/layout.js";
import { describeLayout, deviceListLabel, renderLayoutGrid, renderMeshLegend } from "../../../src/sdy/visualize/text.js";
import { mesh, sharding } from "../helpers.js";

const x2y2 = mesh({ x: 2, y: 2 });

test("device lists: sorted, runs of three or more as ranges", () => {
  assert.equal(deviceListLabel([3, 0, 1, 2, 6]), "0-3,6");
  assert.equal(deviceListLabel([2, 0]), "0,2");
  assert.equal(deviceListLabel([4, 5, 7, 8, 9]), "4,5,7-9");
});

test("an 8x8 tensor as [{x},{y}]: the 2x2 grid of devices 0 1 / 2 3", () => {
  const layout = shardingLayout(sharding('[{"x"}, {"y"}]'), x2y2, [8, 8]);
  assert.deepEqual(renderLayoutGrid(layout), [
    "rows: dim 0, columns: dim 1",
    "      0:4   4:8",
    "    ┌─────┬─────┐",
    "0:4 │  0  │  1  │",
    "    ├─────┼─────┤",
    "4:8 │  2  │  3  │",
    "    └─────┴─────┘",
  ]);
  assert.deepEqual(describeLayout(layout), ['dim 0 (8): 2 shards of 4 along "x"', 'dim 1 (8): 2 shards of 4 along "y"', "each block on 1 device"]);
});

test("replication, padding, unreduced axes and open dimensions in the grid and the summary", () => {
  const replicated = shardingLayout(sharding('[{"y"}, {?}]'), x2y2, [8, 8]);
  assert.deepEqual(renderLayoutGrid(replicated).slice(1), [
    "      0:8",
    "    ┌─────┐",
    "0:4 │ 0,2 │",
    "    ├─────┤",
    "4:8 │ 1,3 │",
    "    └─────┘",
  ]);
  assert.deepEqual(describeLayout(replicated).slice(1), [
    "dim 1 (8): whole (open: propagation may shard it further)",
    'each block on 2 devices (replicated along "x")',
  ]);
  const padded = shardingLayout(sharding('[{"x"}]'), mesh({ x: 4 }), [5]);
  assert.deepEqual(renderLayoutGrid(padded), [
    "columns: dim 0",
    "   0:2   2:4   4:5 +1 pad   5:5 +2 pad",
    " ┌─────┬─────┬────────────┬────────────┐",
    " │  0  │  1  │     2      │     3      │",
    " └─────┴─────┴────────────┴────────────┘",
  ]);
  assert.equal(describeLayout(padded)[0], 'dim 0 (5): 4 shards of 2 along "x", padded by 3 elements at the end');
  const partial = shardingLayout(sharding('[{"y"}, {}]', "", '"x"'), x2y2, [8, 8]);
  assert.deepEqual(renderLayoutGrid(partial).slice(3, 6), ["0:4 │ 0 + 2 │", "    ├───────┤", "4:8 │ 1 + 3 │"]);
  assert.equal(describeLayout(partial).at(-1), 'unreduced along "x": each block is the sum of 2 partial values (joined by + in the grid)');
});

test("rank 3: one grid of the last two dimensions per shard of the first", () => {
  const layout = shardingLayout(sharding('[{"x"}, {}, {"y"}]'), x2y2, [4, 3, 6]);
  const lines = renderLayoutGrid(layout);
  assert.equal(lines[0], "rows: dim 1, columns: dim 2; one grid per block of dim 0");
  assert.deepEqual(lines.filter((l) => l.startsWith("[")), ["[0:2, :, :]", "[2:4, :, :]"]);
  assert.deepEqual(lines.filter((l) => l.startsWith("0:3 │")), ["0:3 │  0  │  1  │", "0:3 │  2  │  3  │"]);
});

test("rank 0, the maximal mesh and the empty mesh: one block", () => {
  const scalar = shardingLayout(sharding("[]"), x2y2, []);
  assert.deepEqual(renderLayoutGrid(scalar), [" ┌─────┐", " │ 0-3 │", " └─────┘"]);
  assert.deepEqual(describeLayout(scalar), ['each block on 4 devices (replicated along "x", "y")']);
  const maximal: Mesh = { axes: [], deviceIds: [5] };
  const onFive = shardingLayout({ meshOrRef: maximal, dimShardings: [], replicatedAxes: [], unreducedAxes: [] }, maximal, [4]);
  assert.deepEqual(renderLayoutGrid(onFive).slice(2), [" ┌─────┐", " │  5  │", " └─────┘"]);
  assert.deepEqual(describeLayout(onFive), ["maximal: device 5 holds the whole tensor"]);
  const empty = shardingLayout(sharding("[{}]"), { axes: [] }, [4]);
  assert.deepEqual(renderLayoutGrid(empty).slice(3), [" │ all │", " └─────┘"]);
  assert.deepEqual(describeLayout(empty), ["empty mesh: every device holds the whole tensor"]);
});

test("the mesh legend puts each device at its position; colors only when asked", () => {
  const reversed: Mesh = { ...x2y2, deviceIds: [3, 2, 1, 0] };
  const legend = renderMeshLegend(reversed);
  assert.deepEqual(legend.filter((l) => l.startsWith("x=")), ["x=0 │  3  │  2  │", "x=1 │  1  │  0  │"]);
  assert.ok(!legend.join("\n").includes("\x1b["));
  const colored = renderMeshLegend(reversed, true).join("\n");
  assert.equal(colored.match(/\x1b\[48;5;\d+m/g)?.length, 4);
  const grid = renderLayoutGrid(shardingLayout(sharding('[{"x"}, {"y"}]'), x2y2, [8, 8]), true).join("\n");
  assert.equal(grid.match(/\x1b\[0m/g)?.length, 4);
  const three = renderMeshLegend(mesh({ a: 2, b: 1, c: 2 }));
  assert.deepEqual(three, ["device=(a, b, c):", "  0=(0,0,0)  1=(0,0,1)  2=(1,0,0)  3=(1,0,1)"]);
});

test("the HTML page: one figure per tensor, a stripe per device copy, no external assets", () => {
  const figures: ShardingFigure[] = [
    { title: "@main %arg0: tensor<8x8xf32>", shardingText: '#sdy.sharding<@mesh, [{"y"}, {}]>', meshText: '@mesh = <["x"=2, "y"=2]>',
      layout: shardingLayout(sharding('[{"y"}, {}]'), x2y2, [8, 8]) },
    { title: "@main %1: tensor<5xf32>", shardingText: '#sdy.sharding<@m4, [{"x"}]>', meshText: '@m4 = <["x"=4]>',
      layout: shardingLayout(sharding('[{"x"}]'), mesh({ x: 4 }), [5]) },
  ];
  const page = renderShardingsHtml("Shardings of <f>.mlir", figures);
  assert.ok(page.startsWith("<!DOCTYPE html>"));
  assert.equal(page.match(/<figure>/g)?.length, 2);
  assert.equal(page.match(/<svg /g)?.length, 2);
  assert.ok(page.includes("<title>Shardings of &lt;f&gt;.mlir</title>"));
  assert.ok(page.includes(escapeHtml('#sdy.sharding<@mesh, [{"y"}, {}]>')));
  // Devices 0 and 2 hold the top half: two stripes, each in its device's color.
  assert.ok(page.includes("<title>devices 0,2: [0:4, 0:8]</title>"));
  for (const id of [0, 1, 2, 3]) assert.ok(page.includes(`fill="${deviceColor(id)}"`), `device ${id}'s color`);
  // The padded shard of 5 in 4: device 3's block is all padding, device 2's half.
  assert.ok(page.includes("<title>device 3: [5:5 +2 pad]</title>"));
  assert.ok(page.includes("<title>device 2: [4:5 +1 pad]</title>"));
  assert.doesNotMatch(page, /\bsrc=|\bhref=|url\(|@import|<script/);
  assert.notEqual(deviceColor(0), deviceColor(1));
});
