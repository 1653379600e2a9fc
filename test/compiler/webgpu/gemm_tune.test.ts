// The GEMM tuner: it keeps the fastest timed tile, records it, and times nothing twice with a cache.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { tuneGemm, MAX_TUNED_TILES, type GemmTuneCache } from "../../../src/compiler/webgpu/gemm_tune.js";
import { DEFAULT_GPU_LIMITS, fittingTiles, tileName, type GpuKernel } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import type { GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import { gemmReference } from "../../support/kernel_cases.js";
import { rng } from "../../support/prng.js";
import { acquireDevice, runOnce, timeKernel, type TestDevice } from "./gemm_device.js";

const acquired = await acquireDevice();
const dev: TestDevice | undefined = typeof acquired === "string" ? undefined : acquired;
const skip = typeof acquired === "string" ? `no WebGPU device: ${acquired}` : false;
after(() => dev?.device.destroy());

const spec: GemmSpec = { elementType: "f32", batch: 1, m: 96, n: 80, k: 64 };

test("the tuner keeps the fastest tile (a scripted clock) and a cache answers the second time", async () => {
  const tiles = fittingTiles(DEFAULT_GPU_LIMITS).slice(0, MAX_TUNED_TILES);
  assert.ok(tiles.length >= 2);
  // The second candidate is the fastest on this clock.
  const seconds = new Map(tiles.map((t, i) => [tileName(t), i === 1 ? 1 : 2 + i]));
  const measured: string[] = [];
  const clock = async (kernel: GpuKernel) => {
    assert.equal(kernel.choice.kind, "tiled");
    const name = kernel.choice.kind === "tiled" ? tileName(kernel.choice.tile) : "";
    measured.push(name);
    return seconds.get(name)!;
  };
  const cache: GemmTuneCache = new Map();
  const tuned = await tuneGemm(spec, DEFAULT_GPU_LIMITS, clock, {}, cache);
  if (isDeclined(tuned)) throw new Error(tuned.declined);
  assert.deepEqual(measured, tiles.map(tileName));
  assert.equal(tuned.timings.length, tiles.length);
  assert.ok(tuned.kernel.choice.kind === "tiled" && tuned.kernel.choice.tileFrom === "tuner");
  assert.equal(tuned.kernel.choice.kind === "tiled" && tileName(tuned.kernel.choice.tile), tileName(tiles[1]!));
  const again = await tuneGemm(spec, DEFAULT_GPU_LIMITS, clock, {}, cache);
  if (isDeclined(again)) throw new Error(again.declined);
  assert.equal(measured.length, tiles.length, "nothing timed the second time");
  assert.equal(again.kernel.code, tuned.kernel.code);
  const skinny = await tuneGemm({ ...spec, m: 1 }, DEFAULT_GPU_LIMITS, clock);
  assert.ok(!isDeclined(skinny) && skinny.timings.length === 0 && skinny.kernel.choice.kind === "skinny");
});

test("tuned on the device: the chosen kernel is the fastest timed and computes the product", { skip }, async () => {
  const tuned = await tuneGemm(spec, dev!.limits, (kernel) => timeKernel(dev!, kernel, 3));
  if (isDeclined(tuned)) throw new Error(tuned.declined);
  const fastest = Math.min(...tuned.timings.map((t) => t.seconds));
  assert.ok(tuned.kernel.choice.kind === "tiled");
  assert.equal(tuned.timings.find((t) => t.seconds === fastest)!.tile, tuned.kernel.choice.kind === "tiled" ? tileName(tuned.kernel.choice.tile) : "");
  const random = rng(5);
  const a = new Float32Array(spec.m * spec.k).map(() => random() - 0.5);
  const b = new Float32Array(spec.k * spec.n).map(() => random() - 0.5);
  const bytes = await runOnce(dev!, tuned.kernel, new Map([[0, a], [1, b]]));
  const got = new Float32Array(bytes.buffer, 0, spec.m * spec.n);
  gemmReference(spec, a, b).forEach((v, i) => assert.ok(Math.abs(got[i]! - v) <= 64 * 2 ** -24 * 16, `element ${i}: ${got[i]} vs ${v}`));
});

test("a software adapter's staging tunes among the tiles read from storage, cached apart from the staged ones", async () => {
  const measured: string[] = [];
  const clock = async (kernel: GpuKernel) => {
    const name = kernel.choice.kind === "tiled" ? tileName(kernel.choice.tile) : "";
    measured.push(name);
    return measured.length === 3 ? 1 : 2;
  };
  const cache: GemmTuneCache = new Map();
  const tuned = await tuneGemm(spec, DEFAULT_GPU_LIMITS, clock, { staging: "registers" }, cache);
  if (isDeclined(tuned)) throw new Error(tuned.declined);
  const tiles = fittingTiles(DEFAULT_GPU_LIMITS, "registers").slice(0, MAX_TUNED_TILES);
  assert.deepEqual(measured, tiles.map(tileName));
  assert.ok(tiles.every((t) => t.staging === "registers"));
  assert.equal(tuned.kernel.choice.kind === "tiled" && tileName(tuned.kernel.choice.tile), tileName(tiles[2]!));
  // The staged tiles' tuning is its own: the cache's answer for "registers" is not reused.
  const staged = await tuneGemm(spec, DEFAULT_GPU_LIMITS, clock, {}, cache);
  if (isDeclined(staged)) throw new Error(staged.declined);
  assert.ok(staged.timings.length > 0 && staged.kernel.choice.kind === "tiled" && staged.kernel.choice.tile.staging === undefined);
});
