// Meshes and device counts far past what one machine runs: `xlats shardings` summarises
// instead of listing devices, an HLO iota tile assignment of a billion devices is
// refused rather than expanded, and a run or a client past the device limit is a
// ResourceError before any worker or per-device program exists. Each CLI case would
// hang or exhaust the process without the limit (the helper's 30 s timeout catches it).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, tempFiles, xlats } from "./helpers.js";
import { createClient, deviceLimit, ResourceError, setDeviceLimit } from "../../src/index.js";
import { describeLayout, renderLayoutGrid, renderMeshLegend } from "../../src/sdy/visualize/text.js";
import { shardingLayout } from "../../src/sdy/visualize/layout.js";
import type { Mesh, TensorSharding } from "../../src/sharding/model.js";

const MILLION_MESH = `sdy.mesh @mesh = <["x"=1000000]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
`;

const sharded = (devices: number): string => `sdy.mesh @mesh = <["x"=${devices}]>
func.func @main(%arg0: tensor<${devices}xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<${devices}xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<${devices}xf32>
  return %0 : tensor<${devices}xf32>
}
`;

test("shardings: a mesh of a million devices is summarised, not enumerated", () => {
  const dir = tempFiles({ "mesh.mlir": MILLION_MESH });
  const r = xlats("shardings", join(dir, "mesh.mlir"));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /1000000 devices \(x=1000000\): more than 256 to draw/);
  assert.match(r.stdout, /1000000 blocks on 1000000 devices: more than 256 to draw, summarised/);
  // 8 elements in a million shards of ceil(8 / 1e6) = 1: 999992 of them padding.
  assert.match(r.stdout, /dim 0 \(8\): 1000000 shards of 1 along "?x"?, padded by 999992 elements at the end/);
  assert.match(r.stdout, /each block on 1 device\b/);
  const html = xlats("shardings", join(dir, "mesh.mlir"), "--html", join(dir, "out.html"));
  assert.equal(html.code, 0, html.stderr);
  const page = readFileSync(join(dir, "out.html"), "utf8");
  assert.match(page, /1000000 blocks on 1000000 devices/);
  assert.ok(page.length < 20_000, `a summary, not a drawing (${page.length} characters)`);
});

test("shardings: an HLO iota tile assignment of a billion devices is a ResourceError, never expanded", () => {
  const dir = tempFiles({
    "big.hlo": `HloModule m

ENTRY main {
  p = f32[8] parameter(0), sharding={devices=[1000000000]<=[1000000000]}
  ROOT a = f32[8] add(p, p)
}
`,
  });
  const r = xlats("shardings", join(dir, "big.hlo"));
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /HloSharding \{devices=\[1000000000\]<=\[1000000000\]\} needs 1000000000 devices, more than the 65536 xlats lists one by one/);
});

test("run: a mesh past the device limit is refused before any worker starts; XLATS_MAX_DEVICES moves the limit", () => {
  const dir = tempFiles({ "k.mlir": sharded(1000), "four.mlir": sharded(4), "two.mlir": sharded(2) });
  const arg = (n: number): string => `dense<${JSON.stringify(Array.from({ length: n }, (_, i) => i))}> : tensor<${n}xf32>`;
  const start = Date.now();
  const r = xlats("run", join(dir, "k.mlir"), "--arg", arg(1000));
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /partition: mesh @mesh needs 1000 devices, more than the device limit of 256/);
  assert.ok(Date.now() - start < 25_000);
  const env = { ...process.env, XLATS_MAX_DEVICES: "2" };
  const run = (file: string, n: number) => spawnSync(process.execPath, [CLI, "run", join(dir, file), "--arg", arg(n), "--backend", "interpreter"], { env, encoding: "utf8", timeout: 60_000 });
  const four = run("four.mlir", 4);
  assert.notEqual(four.status, 0);
  assert.match(four.stderr, /needs 4 devices, more than the device limit of 2/);
  const two = run("two.mlir", 2);
  assert.equal(two.status, 0, two.stderr);
  assert.match(two.stdout, /dense<\[0\.0+e\+00, 2\.0+e\+00\]> : tensor<2xf32>/);
  const bad = spawnSync(process.execPath, [CLI, "run", join(dir, "two.mlir")], { env: { ...process.env, XLATS_MAX_DEVICES: "many" }, encoding: "utf8" });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /XLATS_MAX_DEVICES must be a positive whole number, got 'many'/);
});

test("createClient: past the device limit a ResourceError, before any worker exists", async () => {
  await assert.rejects(createClient({ deviceCount: 1_000_000, backend: "interpreter" }),
    (e: unknown) => e instanceof ResourceError && e.devices === 1_000_000 && /createClient: 1000000 devices needs 1000000 devices, more than the device limit of 256/.test(e.message));
  assert.throws(() => setDeviceLimit(0), RangeError);
  const previous = setDeviceLimit(8);
  try {
    assert.equal(deviceLimit(), 8);
    await assert.rejects(createClient({ deviceCount: 9, backend: "interpreter" }), ResourceError);
  } finally {
    setDeviceLimit(previous);
  }
});

test("layout: a summarised layout counts its copies and partial values without listing devices", () => {
  const mesh: Mesh = { axes: [{ name: "x", size: 1000 }, { name: "y", size: 1000 }, { name: "z", size: 4 }] };
  const sharding: TensorSharding = {
    meshOrRef: mesh, dimShardings: [{ axes: [{ name: "x" }], isClosed: true }, { axes: [], isClosed: true }],
    replicatedAxes: [], unreducedAxes: [{ name: "z" }],
  };
  const layout = shardingLayout(sharding, mesh, [4000, 3]);
  assert.equal(layout.summarized, true);
  assert.equal(layout.devices.length, 0);
  assert.equal(layout.deviceCount, 4_000_000);
  assert.deepEqual(renderLayoutGrid(layout), ["1000 blocks on 4000000 devices: more than 256 to draw, summarised"]);
  const lines = describeLayout(layout);
  // 4e6 devices / (1000 blocks x 4 partial values) = 1000 copies of each, along y.
  assert.ok(lines.includes(`each block on 1000 devices (replicated along "y")`) || lines.some((l) => /^each block on 1000 devices \(replicated along "?y"?\)$/.test(l)), lines.join("\n"));
  assert.ok(lines.some((l) => /the sum of 4 partial values/.test(l)), lines.join("\n"));
  assert.deepEqual(renderMeshLegend(mesh), ["4000000 devices (x=1000, y=1000, z=4): more than 256 to draw"]);
  // A small layout still lists every device, and counts its copies as before.
  const small: Mesh = { axes: [{ name: "x", size: 2 }, { name: "y", size: 3 }] };
  const s = shardingLayout({ ...sharding, meshOrRef: small, unreducedAxes: [] }, small, [4, 3]);
  assert.equal(s.summarized, false);
  assert.equal(s.devices.length, 6);
  assert.ok(describeLayout(s).some((l) => /^each block on 3 devices/.test(l)));
});
