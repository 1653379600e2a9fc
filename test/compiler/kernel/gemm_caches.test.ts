// The GEMM's and convolution's blocks as functions of the cache sizes (kernel/gemm_plan.ts,
// CpuCaches): on the sizes they were measured on they are the blocks measured best, on
// others they scale as intended and keep the loop nest's invariants.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  depthBlock, gemmBalance, gemmElementBytes, gemmTiling, l2ABlockBytes, l2BlockBytes, MEASURED_CACHES, planGemm, targetCaches,
  type CpuCaches, type GemmElement, type GemmSpec, type GemmTarget,
} from "../../../src/compiler/kernel/gemm_plan.js";
import { convGeometry, planConv } from "../../../src/compiler/kernel/conv_plan.js";
import { arrayShape, convGeneralDilated, parameter, XlaBuilder } from "../../../src/index.js";
import type { Instruction } from "../../../src/ir/computation.js";
import { familyByName, type GemmFamilyName } from "../../../src/compiler/native/gemm_c_family.js";
import { WASM_GEMM_TARGET } from "../../../src/compiler/wasm/gemm_microkernel.js";

const KiB = 1024;
const MiB = 1024 * 1024;
const FAMILIES: readonly GemmFamilyName[] = ["avx512", "avx2", "neon", "portable"];
const spec = (m: number, k: number, n: number, elementType: GemmElement = "f32"): GemmSpec => ({ elementType, batch: 1, m, n, k });
const avx512 = (caches?: CpuCaches): GemmTarget => familyByName("avx512", caches).target;
/** avx512 with its first tile only (14 x 32): the blocks' rules stated for one tile. */
const avx512First = (caches?: CpuCaches): GemmTarget => {
  const { altTile: _alt, ...first } = avx512(caches);
  return first;
};

test("gemm caches: the sizes measured on give the blocks measured best (kc 256 / 128, nc 512, mc 182 rows of 14, B cut at 1 MiB)", () => {
  assert.deepEqual(MEASURED_CACHES, { l1dBytes: 48 * KiB, l2Bytes: 1 * MiB });
  assert.equal(depthBlock("f32", MEASURED_CACHES, 32), 256);
  assert.equal(depthBlock("f64", MEASURED_CACHES, 16), 128);
  assert.equal(depthBlock("f32", MEASURED_CACHES, 16), 256);
  assert.equal(l2BlockBytes(MEASURED_CACHES), 512 * KiB);
  assert.equal(l2ABlockBytes(MEASURED_CACHES), 192 * KiB);
  // A family without sizes blocks as one given the measured ones.
  for (const target of [avx512First(), avx512First(MEASURED_CACHES)]) {
    assert.deepEqual(gemmTiling(spec(128, 768, 3072), target), { mr: 14, nrVectors: 2, kc: 256, nc: 512, mc: 140 });
    assert.deepEqual(gemmTiling(spec(1024, 1024, 1024), target), { mr: 14, nrVectors: 2, kc: 256, nc: 512, mc: 182 });
  }
  // The 8 x 48 tile (f32, where 14 x 32 pads more rows): kc as the first tile's, blocks of B half as wide (240 columns).
  for (const target of [avx512(), avx512(MEASURED_CACHES)]) {
    assert.deepEqual(gemmTiling(spec(128, 768, 3072), target), { mr: 8, nrVectors: 3, kc: 256, nc: 240, mc: 128 });
    assert.deepEqual(gemmTiling(spec(1024, 1024, 1024), target), { mr: 8, nrVectors: 3, kc: 256, nc: 240, mc: 192 });
    assert.deepEqual(gemmTiling(spec(14, 1024, 1024), target), { mr: 14, nrVectors: 2, kc: 256, nc: 512, mc: 14 });
    assert.deepEqual(gemmTiling(spec(1024, 1024, 1024, "f64"), target), { mr: 14, nrVectors: 2, kc: 128, nc: 512, mc: 182 });
  }
  assert.deepEqual(gemmTiling(spec(1024, 1024, 1024), familyByName("avx2").target), { mr: 6, nrVectors: 2, kc: 256, nc: 512, mc: 192 });
  assert.deepEqual(targetCaches(avx512()), MEASURED_CACHES);
});

test("gemm caches: L2 scales the blocks of packed B and A, L1d the depth", () => {
  const big = spec(1024, 1024, 1024);
  const at = (caches: Partial<CpuCaches>) => gemmTiling(big, avx512First({ ...MEASURED_CACHES, ...caches }));
  // nc = L2 / 2 over kc·4 bytes; mc = 3/16 of L2 over kc·4·14 bytes, whole tiles.
  assert.deepEqual(at({ l2Bytes: 256 * KiB }), { mr: 14, nrVectors: 2, kc: 256, nc: 128, mc: 42 });
  assert.deepEqual(at({ l2Bytes: 512 * KiB }), { mr: 14, nrVectors: 2, kc: 256, nc: 256, mc: 84 });
  assert.deepEqual(at({ l2Bytes: 2 * MiB }), { mr: 14, nrVectors: 2, kc: 256, nc: 1024, mc: 378 });
  // The panel of B (kc x nr) in two thirds of L1d, kc·es at most 1 KiB, in whole lines: on 32 KiB
  // avx512's 32 f32 columns get kc 160 (20 KiB), its 16 f64 columns and avx2's 16 f32 the 1 KiB;
  // nc whole panels within half of L2 (25 of 32 columns).
  assert.deepEqual(at({ l1dBytes: 32 * KiB }), { mr: 14, nrVectors: 2, kc: 160, nc: 800, mc: 294 });
  const l1d32 = { ...MEASURED_CACHES, l1dBytes: 32 * KiB };
  assert.equal(depthBlock("f64", l1d32, 16), 128);
  assert.equal(gemmTiling(big, familyByName("avx2", l1d32).target).kc, 256);
  assert.equal(depthBlock("f32", { ...MEASURED_CACHES, l1dBytes: 16 * KiB }, 32), 80);
  // A larger L1d does not deepen the blocks past 1 KiB a column (kc 336 measured no better).
  assert.equal(depthBlock("f32", { ...MEASURED_CACHES, l1dBytes: 128 * KiB }, 32), 256);
  // GPT-2's 128 rows stay one block of A down to a 1 MiB L2, and split into two at 512 KiB.
  assert.equal(gemmTiling(spec(128, 768, 3072), avx512First({ ...MEASURED_CACHES, l2Bytes: 512 * KiB })).mc, 84);
  // The 8 x 48 tile's blocks scale alike: B a quarter of L2, kc from the first tile's panel.
  assert.deepEqual(gemmTiling(big, avx512({ ...MEASURED_CACHES, l2Bytes: 2 * MiB })), { mr: 8, nrVectors: 3, kc: 256, nc: 480, mc: 384 });
  assert.equal(gemmTiling(big, avx512({ ...MEASURED_CACHES, l1dBytes: 32 * KiB })).kc, 160);
  // WebAssembly's row panels keep their fixed blocks whatever sizes a target names.
  const wasm = gemmTiling(big, WASM_GEMM_TARGET);
  assert.deepEqual(gemmTiling(big, { ...WASM_GEMM_TARGET, caches: { l1dBytes: 16 * KiB, l2Bytes: 16 * MiB } }), wasm);
  assert.equal(wasm.kc, 256);
});

test("gemm caches: every size in the sane ranges keeps the loop nest's invariants, for every family, f32 and f64", () => {
  const l1ds = [16, 32, 48, 64, 128, 256].map((x) => x * KiB);
  const l2s = [128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB, 4 * MiB, 16 * MiB];
  const shapes = [spec(1, 1, 1), spec(7, 3, 5), spec(128, 768, 3072), spec(197, 700, 600), spec(1024, 4096, 1024), spec(64, 1024, 10)];
  for (const name of FAMILIES) {
    for (const l1dBytes of l1ds) {
      for (const l2Bytes of l2s) {
        const caches = { l1dBytes, l2Bytes };
        const target = familyByName(name, caches).target;
        for (const s0 of shapes) {
          for (const elementType of ["f32", "f64"] as const) {
            const s = { ...s0, elementType };
            const es = gemmElementBytes(elementType);
            const t = gemmTiling(s, target);
            const nr = t.nrVectors * target.vectorBytes / es;
            const firstNr = target.tileVectors * target.vectorBytes / es;
            const where = `${name} ${elementType} ${s.m}x${s.k}x${s.n} L1d ${l1dBytes} L2 ${l2Bytes}`;
            assert.ok(Number.isInteger(t.kc) && t.kc >= 1 && t.kc <= Math.max(s.k, 1), `${where}: kc ${t.kc}`);
            // A kc x nr panel of B (the first tile's nr: an altTile keeps its kc) fits in two thirds of L1d, each column at most 1 KiB.
            assert.ok(t.kc * firstNr * es <= (2 * l1dBytes) / 3, `${where}: a panel of ${t.kc} x ${firstNr} in L1d`);
            assert.ok(t.kc * es <= 1024, `${where}: kc ${t.kc}`);
            assert.ok(t.nc % nr === 0 && t.nc >= nr, `${where}: nc ${t.nc}`);
            assert.ok(t.nc === nr || t.kc * (t.nc - nr) * es < l2Bytes / 2, `${where}: the block of B ${t.kc} x ${t.nc} past half of L2`);
            assert.ok(t.mc !== undefined && t.mc % t.mr === 0 && t.mc >= t.mr, `${where}: mc ${t.mc}`);
            assert.ok(t.mc === t.mr || t.mc * t.kc * es <= (3 * l2Bytes) / 16, `${where}: the block of A ${t.mc} x ${t.kc} past 3/16 of L2`);
            assert.ok(t.mc <= t.mr * Math.max(1, Math.ceil(s.m / t.mr)), `${where}: mc ${t.mc} past the rows`);
            const schedule = planGemm(s, target);
            assert.deepEqual(schedule.caches, caches);
            if (schedule.kind === "packed") assert.ok(schedule.chunk <= Math.max(t.nc, nr) || schedule.chunk % nr === 0, where);
          }
        }
      }
    }
  }
});

test("gemm caches: the balanced split cuts a chunk's row tiles where its B fits in L2", () => {
  // 128 x 3072 x 768 (B pre-packed): a chunk of 384 columns (the columns split for 16 units) x 3072 steps = 4.5 MiB of B.
  const s = spec(128, 3072, 768);
  const cuts = (l2Bytes: number): boolean => gemmBalance(planGemm(s, avx512First({ ...MEASURED_CACHES, l2Bytes })), true).cutsGrain;
  const chunkB = (l2Bytes: number): number => {
    const schedule = planGemm(s, avx512First({ ...MEASURED_CACHES, l2Bytes }));
    return Math.min(schedule.chunk, s.n) * s.k * 4;
  };
  assert.equal(cuts(1 * MiB), false);
  assert.equal(cuts(16 * MiB), chunkB(16 * MiB) <= 16 * MiB);
  assert.equal(cuts(16 * MiB), true);
  // 64 x 1024 x 1024: chunks of 256 columns, 1 MiB of B: cut on the Zen 5 measured, not on a 512 KiB L2.
  const mlp = spec(64, 1024, 1024);
  assert.equal(gemmBalance(planGemm(mlp, avx512First()), true).cutsGrain, true);
  assert.equal(gemmBalance(planGemm(mlp, avx512First({ ...MEASURED_CACHES, l2Bytes: 512 * KiB })), true).cutsGrain, false);
  // The 8 x 48 tile: chunks of 240 columns (0.94 MiB of B) cut at 1 MiB; at 512 KiB its blocks are 96 columns (384 KiB), cut too.
  assert.equal(gemmBalance(planGemm(mlp, avx512()), true).cutsGrain, true);
  assert.equal(gemmBalance(planGemm(mlp, avx512({ ...MEASURED_CACHES, l2Bytes: 512 * KiB })), true).cutsGrain, true);
  // Never where each call packs B itself.
  assert.equal(gemmBalance(planGemm(mlp, avx512()), false).cutsGrain, false);
});

test("gemm caches: the convolution keeps the whole depth while its kernel matrix fits half of L2, and blocks k from L1d beyond", () => {
  // 3x3 x 256 -> 256 features: the kernel matrix 2304 x 256 f32 = 2.25 MiB.
  const b = new XlaBuilder("conv");
  const x = parameter(b, 0, arrayShape("f32", [1, 16, 16, 256]));
  const w = parameter(b, 1, arrayShape("f32", [3, 3, 256, 256]));
  const NHWC = {
    inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
    kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
    outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
  };
  const g = convGeometry(convGeneralDilated(x, w, [1, 1], [[1, 1], [1, 1]], [], [], NHWC).instruction as Instruction<"convolution">);
  if ("declined" in g) assert.fail(g.declined);
  const at = (caches: CpuCaches) => planConv(g, avx512(caches)).tiling;
  assert.deepEqual({ kc: at(MEASURED_CACHES).kc, nc: at(MEASURED_CACHES).nc }, { kc: 256, nc: 256 });
  assert.deepEqual({ kc: at({ l1dBytes: 48 * KiB, l2Bytes: 8 * MiB }).kc, nc: at({ l1dBytes: 48 * KiB, l2Bytes: 8 * MiB }).nc }, { kc: 2304, nc: 256 });
  assert.equal(at({ l1dBytes: 32 * KiB, l2Bytes: 1 * MiB }).kc, 160);
});

