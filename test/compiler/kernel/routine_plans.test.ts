// The GEMM and convolution schedules (kernel/gemm_plan.ts, kernel/conv_plan.ts) on every
// target that renders them: the WebAssembly kernels and each C family. The kernels
// trust the schedule's work split, so it must cover C (or the convolution's pixels)
// exactly once, with tiles the target's registers hold.
import { test } from "node:test";
import assert from "node:assert/strict";
import { arrayShape, convGeneralDilated, parameter, XlaBuilder } from "../../../src/index.js";
import type { Instruction } from "../../../src/ir/computation.js";
import { dotsRows, gemmElementBytes, gemmTiling, planGemm, streamsB, type GemmSpec, type GemmTarget } from "../../../src/compiler/kernel/gemm_plan.js";
import { convGeometry, planConv } from "../../../src/compiler/kernel/conv_plan.js";
import { WASM_GEMM_TARGET } from "../../../src/compiler/wasm/gemm_microkernel.js";
import { familyByName } from "../../../src/compiler/native/gemm_c_family.js";

const TARGETS: [string, GemmTarget][] = [
  ["wasm", WASM_GEMM_TARGET],
  ...(["avx512", "avx2", "neon", "portable"] as const).map((n): [string, GemmTarget] => [n, familyByName(n).target]),
];

test("the register tiles each target measured best", () => {
  // f32 tiles: rows x columns (columns = vectors x lanes).
  // avx512's GEMM takes its 8 x 48 tile where 14 x 32 pads no fewer rows (512 = 64 x 8; 14 x 32 would compute 518).
  const want: Record<string, [number, number]> = { wasm: [4, 8], avx512: [8, 48], avx2: [6, 16], neon: [8, 12], portable: [4, 8] };
  const spec: GemmSpec = { elementType: "f32", batch: 1, m: 512, n: 512, k: 512 };
  for (const [name, target] of TARGETS) {
    const s = planGemm(spec, target);
    assert.deepEqual([s.tiling.mr, s.nr], want[name], name);
    // f64: the same tiles, but avx512's first (its 8 x 48 was measured on f32 only): 14 x 16.
    assert.equal(planGemm({ ...spec, elementType: "f64" }, target).nr, name === "avx512" ? 16 : want[name]![1] / 2, `${name} f64`);
  }
  // 42 rows: three whole tiles of 14, 48 in tiles of 8; 27 rows: 28 against 32; 56: 56 each, the 8 x 48 tile.
  const avx512 = familyByName("avx512").target;
  assert.deepEqual([42, 27, 56, 128, 64].map((m) => { const t = gemmTiling({ ...spec, m }, avx512); return [t.mr, t.nrVectors]; }), [[14, 2], [14, 2], [8, 3], [8, 3], [8, 3]]);
  // Only the kernels generated per spec shrink the tile to a short m.
  assert.equal(gemmTiling({ ...spec, m: 3 }, WASM_GEMM_TARGET).mr, 3);
  assert.equal(gemmTiling({ ...spec, m: 3 }, familyByName("avx2").target).mr, 6);
});

test("GEMM schedules cover C exactly once and block k as they say", () => {
  const specs: GemmSpec[] = [];
  for (const elementType of ["f32", "f64"] as const) {
    for (const [batch, m, n, k] of [[1, 1, 300, 64], [1, 3, 2048, 2048], [1, 5, 3, 7], [2, 33, 65, 300], [1, 512, 700, 1000], [3, 9, 11, 20], [1, 7, 5, 0], [1, 0, 4, 4], [1, 1000, 10, 300]]) {
      specs.push({ elementType, batch: batch!, m: m!, n: n!, k: k!, rhsTransposed: m === 33 });
      // A few rows against B stored [n][k]: the C families' dot-of-rows kernels.
      if (m! >= 1 && m! <= 5) specs.push({ elementType, batch: batch!, m: m!, n: n!, k: k!, rhsTransposed: true });
    }
  }
  for (const [name, target] of TARGETS) {
    for (const spec of specs) {
      const s = planGemm(spec, target);
      const what = `${name} ${JSON.stringify(spec)}`;
      assert.equal(s.kind === "streamB", streamsB(spec, target), what);
      assert.equal(s.kind === "rowDots", dotsRows(spec, target), what);
      // Column chunks: whole, in order, the last one reaching n.
      assert.ok(s.chunk >= 1 && (s.nChunks - 1) * s.chunk < Math.max(spec.n, 1) && s.nChunks * s.chunk >= spec.n, what);
      if (s.kind === "rowDots") {
        assert.equal(s.parallelExtent, spec.batch * s.nChunks, what);
        assert.equal(s.kBlocks, 1, what);
        continue;
      }
      if (s.kind === "streamB") {
        assert.equal(s.parallelExtent, spec.batch * s.nChunks, what);
        assert.ok(s.sweepRows >= 1 && s.sweepRowsWhole >= 1, what);
        // The C families sweep whole rows as they sweep parts of them.
        if (target.blocking === "l2-blocks") assert.equal(s.sweepRowsWhole, s.sweepRows, what);
        // Panels of B packed once for one or two rows: four of the target's vectors wide (WebAssembly's a 64-byte line), chunks whole panels.
        assert.equal(s.panelColumns, spec.m <= 2 ? 4 * target.vectorBytes / gemmElementBytes(spec.elementType) : 0, what);
        if (s.panelColumns > 0) assert.equal(s.chunk % s.panelColumns, 0, what);
        continue;
      }
      assert.equal(s.mTiles, spec.m === 0 ? 0 : Math.ceil(spec.m / s.tiling.mr), what);
      assert.equal(s.parallelExtent, spec.batch * s.nChunks * s.mTiles, what);
      assert.equal(s.nr, s.tiling.nrVectors * s.lanes, what);
      assert.equal(s.tiling.nc % s.nr, 0, what);
      assert.equal(s.kBlocks, Math.max(1, Math.ceil(spec.k / s.tiling.kc)), what);
      assert.equal(s.productInScratch, spec.k <= s.tiling.kc && (target.blocking === "row-panels" || spec.k >= 1), what);
      // Few row tiles: the columns are split too, so that threads get work.
      const rowUnits = s.mTiles * spec.batch;
      if (spec.k > 0 && rowUnits > 0 && rowUnits < 16 && spec.n >= 16 * s.nr) assert.ok(s.nChunks > 1, what);
      // The strides reach the last element of A and of B as stored, and no further.
      const { m, n, k } = spec;
      if (m * n * k > 0) {
        assert.equal(s.aRow * (m - 1) + s.aK * (k - 1), m * k - 1, what);
        assert.equal(s.bK * (k - 1) + s.bLine * (n - 1), k * n - 1, what);
        assert.equal(Math.min(s.aRow, s.aK), 1, what);
      }
    }
  }
});

test("convolution schedules: pixel blocks cover the output, the depth in one block while the kernel fits L2", () => {
  const NHWC = {
    inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
    kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
    outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
  };
  for (const [c, o, hw] of [[8, 16, 6], [300, 200, 6], [32, 64, 16], [3, 5, 17]] as const) {
    const b = new XlaBuilder("conv");
    const x = parameter(b, 0, arrayShape("f32", [2, hw, hw, c]));
    const w = parameter(b, 1, arrayShape("f32", [3, 3, c, o]));
    const g = convGeometry(convGeneralDilated(x, w, [1, 1], [[1, 1], [1, 1]], [], [], NHWC).instruction as Instruction<"convolution">);
    if ("declined" in g) assert.fail(g.declined);
    for (const [name, target] of TARGETS) {
      const s = planConv(g, target);
      const what = `${name} c=${c} o=${o}`;
      assert.equal(s.pixels, 2 * hw * hw, what);
      assert.equal(s.kDepth, 9 * c, what);
      assert.equal(s.parallelExtent, Math.ceil(s.pixels / s.pixelBlock), what);
      assert.ok(s.patchRow >= s.kDepth && (s.patchRow * 4) % (target.blocking === "row-panels" ? 4 : 16) === 0, what);
      assert.equal(s.kBlocks, Math.ceil(s.kDepth / s.tiling.kc), what);
      // 9 * 300 * 200 * 4 bytes is past L2: several blocks of depth; the others fit in one.
      assert.equal(s.kBlocks > 1, c === 300, what);
      assert.equal(s.productInScratch, s.kBlocks === 1, what);
      if (target.blocking === "l2-blocks") assert.equal(s.pixelBlock % s.tiling.mr, 0, what);
    }
  }
});

test("the C families cut n into chunks of columns as even as whole panels allow (threads split by chunk)", () => {
  // GPT-2's 768-column products (nc 512): two chunks of 384, not 512 and 256, which left one of two threads two thirds of the work.
  for (const name of ["avx512", "avx2", "neon", "portable"] as const) {
    const target = familyByName(name).target;
    for (const n of [768, 2304, 3072, 1000, 513]) {
      const s = planGemm({ elementType: "f32", batch: 1, m: 128, n, k: 3072 }, target);
      const widths = Array.from({ length: s.nChunks }, (_, c) => Math.min(s.chunk, n - c * s.chunk));
      assert.equal(widths.reduce((a, b) => a + b, 0), n, `${name} n ${n}`);
      assert.ok(s.chunk <= s.tiling.nc && s.chunk % s.nr === 0, `${name} n ${n}: chunk ${s.chunk}`);
      assert.ok(widths.every((w) => w > 0 && s.chunk - w < s.nr * s.nChunks), `${name} n ${n}: chunks ${widths.join(", ")}`);
    }
    if (name === "avx2") assert.equal(planGemm({ elementType: "f32", batch: 1, m: 128, n: 768, k: 3072 }, target).chunk, 384);
  }
});
