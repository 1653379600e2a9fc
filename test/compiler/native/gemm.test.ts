import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { emitGemmC, keepsPackedA, packsBInTiles, readsAInPlace } from "../../../src/compiler/native/gemm_c.js";
import { familyByName, gemmFamily } from "../../../src/compiler/native/gemm_c_family.js";
import { gemmSpecOfDot, packB, planGemm, type GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import type { NativeCpu, NativeKernel } from "../../../src/compiler/native/kernel.js";
import { ALWAYS_PARALLEL_COST, MIN_PARALLEL_COST, SPLIT_TRIALS, SPLIT_UNSEEN_RETRY } from "../../../src/compiler/native/glue.js";
import { arrayShape, dotGeneral, Literal, parameter, XlaBuilder } from "../../../src/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import type { Instruction } from "../../../src/ir/computation.js";
import { rng } from "../../support/prng.js";
import { gemmReference } from "../../support/kernel_cases.js";
import { nativeCpu, nativeSkipReason, runNativeCases, runnableFamilies, type NativeCase } from "./gemm_harness.js";
import { tracedParts } from "./native_support.js";

const skip = nativeSkipReason();
if (skip !== undefined) console.log(`# native gemm tests skipped: ${skip}`);
const random = rng(11);

interface GemmCase { spec: GemmSpec; a: Float32Array | Float64Array; b: Float32Array | Float64Array; kernel: NativeKernel; splits?: number; threads?: number }

function gemmCase(spec: GemmSpec, kernel: NativeKernel | { declined: string }, extra: { splits?: number; threads?: number } = {}): GemmCase {
  if (("declined" in kernel)) throw new Error(kernel.declined);
  const F = spec.elementType === "f32" ? Float32Array : Float64Array;
  const a = new F(spec.batch * spec.m * spec.k).map(() => random() * 2 - 1);
  const b = new F(spec.batch * spec.k * spec.n).map(() => random() * 2 - 1);
  return { spec, a, b, kernel, ...extra };
}

/** `sameKernel`: every case is one kernel, run in turn through one kernel of the module. */
function runAndCheck(cases: GemmCase[], name: string, sameKernel = false): void {
  const results = runNativeCases(cases.map((c): NativeCase => ({
    kernel: c.kernel, operands: [c.a, c.b], resultBytes: [c.spec.batch * c.spec.m * c.spec.n * c.a.BYTES_PER_ELEMENT],
    ...(c.splits !== undefined ? { splits: c.splits } : {}), ...(c.threads !== undefined ? { threads: c.threads } : {}),
  })), name, [], sameKernel);
  cases.forEach((c, ci) => {
    const bytes = results[ci]![0]!;
    const F = c.spec.elementType === "f32" ? Float32Array : Float64Array;
    const got = new F(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength / F.BYTES_PER_ELEMENT);
    const want = gemmReference(c.spec, c.a, c.b);
    // Accumulating k terms of magnitude <= 1 in the element type: error ~ sqrt(k) * k * eps at worst.
    const eps = c.spec.elementType === "f32" ? 2 ** -23 : 2 ** -52;
    const tol = 4 * eps * Math.max(c.spec.k, 1) * Math.max(1, Math.sqrt(c.spec.k));
    for (let i = 0; i < want.length; i++) {
      const err = Math.abs(got[i]! - want[i]!);
      if (!(err <= tol)) assert.fail(`${c.kernel.name}: element ${i} is ${got[i]}, want ${want[i]} (err ${err})`);
    }
  });
}

const SHAPES: [number, number, number, number][] = [
  // batch, m, n, k: ones, odd and prime sizes, not multiples of mr (14, 6, 8, 4), nr or kc (256/128).
  [1, 1, 1, 1], [1, 5, 9, 3], [1, 7, 13, 17], [1, 15, 33, 1], [1, 31, 1, 5], [1, 17, 19, 300], [1, 29, 70, 513],
  [3, 5, 7, 9], [2, 16, 8, 33], [1, 3, 1030, 7], [2, 6, 5, 0], [1, 0, 5, 4], [1, 64, 64, 64],
  // More rows than one block of packed A (the "l2-blocks" families' mc: 182-192 rows), across blocks of k.
  [1, 197, 21, 260],
];

test("native gemm: every family, f32 and f64, edge shapes and transposes vs a double-precision reference", { skip }, () => {
  const cases: GemmCase[] = [];
  for (const family of runnableFamilies(nativeCpu())) {
    for (const elementType of ["f32", "f64"] as const) {
      SHAPES.forEach(([batch, m, n, k], i) => {
        const lhsTransposed = (i & 1) === 1, rhsTransposed = (i & 2) === 2;
        const spec: GemmSpec = { elementType, batch, m, n, k, lhsTransposed, rhsTransposed };
        cases.push(gemmCase(spec, emitGemmC(spec, nativeCpu(), `g_${family.name}_${elementType}_${i}`, family)));
      });
    }
  }
  runAndCheck(cases, "native gemm shapes");
});

test("native gemm: the avx2 family's A packer and prefetch, and every family's row tails, every tail of rows, against a double-precision reference", { skip }, () => {
  // m = 2 tiles .. 3 tiles - 1 of the family's rows (avx2 6, avx512 14): a last tile of
  // 0 to mr - 1 rows (the fewest over two panels at once); k around multiples of 8 (the packer's 8-step blocks, then element by
  // element) and across a block of kc = 256; n a whole panel (16 or 32 columns) and a part
  // of one; A row-major (the packer's case) and transposed.
  const cases: GemmCase[] = [];
  let i = 0;
  for (const family of runnableFamilies(nativeCpu()).filter((f) => f.name === "avx2" || f.name === "avx512")) {
    const mr = family.target.tileRows, nr = family.target.tileVectors * family.target.vectorBytes / 4;
    for (let m = 2 * mr; m < 3 * mr; m++) {
      // n: 1, 2 and 3 whole panels, and 2 and a part (tails of 1-3 rows take whole panels in pairs, wideRowTailSource);
      // a last part of a panel (partialPanelSource): 2 panels and 5 columns, 10 columns (A read in place, or packed where transposed).
      for (const [n, k] of [[nr, 8], [2 * nr + 5, 23], [2 * nr, 264], [nr, 7], [3 * nr, 9], [10, 40]] as const) {
        for (const lhsTransposed of [false, true]) {
          const spec: GemmSpec = { elementType: "f32", batch: 1, m, n, k, lhsTransposed };
          cases.push(gemmCase(spec, emitGemmC(spec, nativeCpu(), `g_tail_${i++}`, family)));
        }
      }
    }
  }
  runAndCheck(cases, "native gemm tails");
});

test("native gemm: avx512's 8 x 48 tile, its tails of rows and of columns, equal the 14 x 32 tile's products bit for bit", { skip }, () => {
  // Every element is summed in the same order by both tiles (k in order, blocks of kc = 256
  // added in order), so the bits must agree: rows 5..17 (a last tile of 1 to 7 rows of 8,
  // and of 14; fewer rows stream B), n a part of a 48-column panel of 16 (64, 1024), 32
  // (80, 128), 40 (1000) or 10 columns, and whole panels (96); k within a block and across
  // two; A row-major (read in place) and, for a third of the rows, stored [k][m] (packed); B
  // packed by the call and pre-packed. And against a double-precision reference.
  if (!runnableFamilies(nativeCpu()).some((f) => f.name === "avx512")) return;
  const family = familyByName("avx512");
  const tiles = [{ mr: 8, nrVectors: 3, nc: 240, mc: 192 }, { mr: 14, nrVectors: 2, nc: 512, mc: 182 }];
  const pairs: { spec: GemmSpec; a: Float32Array; b: Float32Array; kernels: NativeKernel[] }[] = [];
  let i = 0;
  for (let m = 5; m <= 17; m++) {
    for (const [n, k] of [[64, 37], [80, 300], [1024, 19], [1000, 260], [10, 64], [128, 9], [96, 40]] as const) {
      {
        const spec: GemmSpec = { elementType: "f32", batch: 1, m, n, k, lhsTransposed: m % 3 === 0 };
        const constantB = (m + n) % 2 === 0;
        const kernels = tiles.map((tiling) => {
          const kernel = emitGemmC(spec, nativeCpu(), `g_848_${i++}`, family, constantB, tiling);
          if ("declined" in kernel) throw new Error(kernel.declined);
          return kernel;
        });
        const a = new Float32Array(m * k).map(() => random() * 2 - 1);
        const b = new Float32Array(k * n).map(() => random() * 2 - 1);
        pairs.push({ spec, a, b, kernels });
      }
    }
  }
  const results = runNativeCases(pairs.flatMap(({ spec, a, b, kernels }) => kernels.map((kernel): NativeCase => ({
    kernel, operands: [a, kernel.packedOperand === undefined ? b : packB(b, kernel.packedOperand.layout)], resultBytes: [spec.m * spec.n * 4],
  }))), "native gemm 8x48");
  const f32 = (bytes: Uint8Array): Float32Array => new Float32Array(bytes.slice().buffer);
  pairs.forEach(({ spec, a, b, kernels }, c) => {
    const [eight, fourteen] = [f32(results[2 * c]![0]!), f32(results[2 * c + 1]![0]!)];
    const name = `${kernels[0]!.name} (${spec.m} rows)`;
    assert.ok(kernels[0]!.c.source.includes("b0 = _mm512_loadu_ps(b + 0);") && kernels[0]!.c.source.includes("b2 = _mm512_loadu_ps(b + 32);"), `${name}: three vectors a row`);
    assert.deepEqual(new Uint32Array(eight.buffer), new Uint32Array(fourteen.buffer), `${name}: 8 x 48 and 14 x 32 differ`);
    const want = gemmReference(spec, a, b);
    const tol = 4 * 2 ** -23 * spec.k * Math.sqrt(spec.k);
    for (let e = 0; e < want.length; e++) if (!(Math.abs(eight[e]! - want[e]!) <= tol)) assert.fail(`${name}: element ${e} is ${eight[e]}, want ${want[e]}`);
  });
});

test("native gemm: avx512's 8-row tile narrowed to a product's columns under one panel (the MLP's 10 outputs) equals the 8 x 48 tile's products bit for bit", { skip }, () => {
  // gemmTile takes the vectors n needs where n is under the 8 x 48 tile's panel: 1 for n <= 16,
  // 2 for n <= 32, so that a pre-packed B is k x 16 (or 32) floats. Same sums as the 8 x 48
  // tile (k in order, blocks of kc 256 added in order), so the same bits: rows 5..17 (a last
  // tile of 1 to 7 rows), n 1, 10, 16, 20 and 32, k within a block and across two, A row-major
  // (read in place) and stored [k][m], B packed by the call and pre-packed.
  if (!runnableFamilies(nativeCpu()).some((f) => f.name === "avx512")) return;
  const family = familyByName("avx512");
  const cases: { spec: GemmSpec; a: Float32Array; b: Float32Array; kernels: NativeKernel[] }[] = [];
  let i = 0;
  for (let m = 5; m <= 17; m++) {
    for (const [n, k] of [[10, 300], [1, 64], [16, 37], [20, 260], [32, 9]] as const) {
      const spec: GemmSpec = { elementType: "f32", batch: 1, m, n, k, lhsTransposed: m % 3 === 0 };
      // (9 to 14 rows take the 14 x 32 tile, which pads fewer rows.)
      const eightRows = Math.ceil(m / 14) * 14 >= Math.ceil(m / 8) * 8;
      assert.equal(planGemm(spec, family.target).tiling.nrVectors, eightRows ? Math.ceil(n / 16) : 2, `${m}x${n}: the tile's vectors`);
      const constantB = (m + n) % 2 === 0;
      // The 8 x 48 tile's blocks of k as the first tile's on the measured caches (familyByName's): kc 256.
      const kernels = [{}, { mr: 8, nrVectors: 3, kc: Math.min(k, 256), nc: 240, mc: 192 }].map((tiling) => {
        const kernel = emitGemmC(spec, nativeCpu(), `g_narrow_${i++}`, family, constantB, tiling);
        if ("declined" in kernel) throw new Error(kernel.declined);
        return kernel;
      });
      cases.push({ spec, a: new Float32Array(m * k).map(() => random() * 2 - 1), b: new Float32Array(k * n).map(() => random() * 2 - 1), kernels });
    }
  }
  const results = runNativeCases(cases.flatMap(({ spec, a, b, kernels }) => kernels.map((kernel): NativeCase => ({
    kernel, operands: [a, kernel.packedOperand === undefined ? b : packB(b, kernel.packedOperand.layout)], resultBytes: [spec.m * spec.n * 4],
  }))), "native gemm narrowed tile");
  cases.forEach(({ spec, kernels }, c) => {
    const name = `${kernels[0]!.name} (${spec.m} rows)`;
    assert.deepEqual(new Uint32Array(results[2 * c]![0]!.slice().buffer), new Uint32Array(results[2 * c + 1]![0]!.slice().buffer), `${name}: the narrowed tile and 8 x 48 differ`);
  });
  // The MLP's last product: its pre-packed B 1024 x 16 floats, one vector a row.
  const mlp = emitGemmC({ elementType: "f32", batch: 1, m: 64, n: 10, k: 1024 }, nativeCpu(), "g_mlp10", family, true);
  if ("declined" in mlp) throw new Error(mlp.declined);
  assert.equal(mlp.packedOperand?.layout.nr, 16);
  assert.ok(mlp.c.source.includes(" b0 = ") && !mlp.c.source.includes(" b1 = "), "one vector of B a step");
});

test("native gemm: avx2 prefetches B, avx512 the next panel of a pre-packed f32 B read by one block of rows of enough tiles; avx2 and avx512 pack A by transposes and have row tails", () => {
  const spec: GemmSpec = { elementType: "f32", batch: 1, m: 64, n: 64, k: 64 };
  const source = (name: "avx2" | "avx512", s: GemmSpec = spec, constantB = false): string => {
    const kernel = emitGemmC(s, nativeCpu(), "g", familyByName(name), constantB);
    if ("declined" in kernel) throw new Error(kernel.declined);
    return kernel.c.source;
  };
  // 42 rows: three whole tiles of 14 on avx512 (fewer padded rows than 48 in tiles of 8).
  const avx2 = source("avx2"), avx512 = source("avx512", { ...spec, m: 42 });
  assert.ok(avx2.includes("_mm_prefetch(") && source("avx2", spec, true).includes("_mm_prefetch("), "avx2 prefetches, B packed by the call or pre-packed");
  assert.ok(!avx512.includes("_mm_prefetch(") && !source("avx512").includes("_mm_prefetch("), "avx512 does not where the call packs B");
  // B pre-packed: 64 rows are 8 tiles of 8 x 48 in one block, each prefetching a share of the next panel, A read in place; 42 rows 3 tiles of 14 x 32.
  const weights = (m: number, elementType: "f32" | "f64" = "f32"): string => source("avx512", { ...spec, m, n: 1024, k: 1024, elementType }, true);
  assert.ok(weights(64).includes("g_d_micro(kl, a + i * 1024 + p0, bpanel, ci + j, 1024, acc, pf, share, pfs);") && weights(64).includes("_mm_prefetch((const char *)pf, _MM_HINT_T0);"),
    "avx512, 64 rows, B pre-packed: the tiles prefetch the next panel");
  assert.ok(weights(42).includes("g_micro(kl, ai, bpanel, ci + j, 1024, acc, pf, share, pfs);"), "avx512, 42 rows in tiles of 14, B pre-packed: the tiles prefetch");
  // Not: two tiles of 8 x 48 (a share more than a line a step), one tile, rows past one block (B's block in L2 for the later blocks), f64 (not measured).
  for (const [m, elementType, why] of [[16, "f32", "two tiles of 8"], [8, "f32", "one tile"], [1024, "f32", "several blocks of rows"], [64, "f64", "f64"]] as const) {
    assert.ok(!weights(m, elementType).includes("_mm_prefetch("), `avx512, B pre-packed, ${why}: no prefetch`);
  }
  assert.ok(!source("avx512", { ...spec, n: 10, k: 1024 }, true).includes("_mm_prefetch("), "avx512, B pre-packed, 10 columns (a part of a panel only): no prefetch");
  // A's 6 rows by one 8 x 8 transpose a block of 8 steps; AVX-512's 14 by two, the 6 rows past the eighth first.
  assert.ok(avx2.includes("g_pack_a8(a + i0 * 64 + p0 + pv, 64, dst + pv * 6)") && !avx2.includes("g_hi_pack_a8("), "avx2 packs A 8 steps at a time");
  assert.ok(avx512.includes("g_pack_a8(a + i0 * 64 + p0 + pv, 64, dst + pv * 14)") && avx512.includes("g_hi_pack_a8(src + 8 * stride, stride, dst + 8);\n  g_lo_pack_a8(src, stride, dst);"),
    "avx512 packs A's 14 rows as 6 then 8");
  // 64 rows: 10 tiles of 6 and one of 4 (avx2), each last one by a microkernel of its rows; avx512: 8 whole tiles of 8, no tail.
  assert.ok(avx2.includes("g_micro4(kl, ai, bpanel, ci + j"), "avx2's tail of 4 rows");
  assert.ok(!/g_micro[0-9]/.test(source("avx512")), "avx512: 64 rows are whole tiles of 8");
  assert.ok(source("avx512", { ...spec, m: 27 }).includes("g_micro13(kl, ai, bpanel, ci + j"), "avx512, 27 rows: tiles of 14, a tail of 13");
  assert.ok(source("avx512", { ...spec, m: 61 }).includes("g_micro5(kl, ai, bpanel, ci + j"), "avx512, 61 rows: tiles of 8, a tail of 5");
  assert.ok(!avx2.includes("g_micro4w("), "enough accumulators: one panel at a time");
  // 128 rows: a tail of 2 (avx2), 4 accumulators over one panel, 8 over two; avx512's tiles of 8 none.
  const wide = (name: "avx2" | "avx512", constantB: boolean, m = 128): string => {
    const kernel = emitGemmC({ ...spec, m, n: 128 }, nativeCpu(), "g", familyByName(name), constantB);
    if ("declined" in kernel) throw new Error(kernel.declined);
    return kernel.c.source;
  };
  assert.ok(!/g_micro[0-9]/.test(wide("avx512", false)), "avx512: 128 rows are whole tiles of 8");
  assert.ok(wide("avx512", true, 130).includes("g_micro2w(kl, ai, bpanel, ci + j"), "avx512, 130 rows, B pre-packed: the 2-row tail over two panels of 48");
  // B packed by the call: its first tile of rows packs each panel as it reads it, so the tail reads one packed panel at a time.
  const packedByCall = wide("avx512", false, 130);
  assert.ok(packedByCall.includes("g_micro2(kl, ai, bpanel, ci + j") && !packedByCall.includes("g_micro2w("), "avx512, 130 rows, B packed by the call: the 2-row tail one panel at a time");
  assert.ok(wide("avx2", true).includes("g_micro2w(kl, ai, bpanel, ci + j"), "avx2, B pre-packed: the 2-row tail over two panels");
  assert.ok(!wide("avx2", false).includes("g_micro2w("), "avx2, B packed by the tiles: the next panel is not packed yet");
  // The last part of a panel: avx512 (masks) computes its vectors straight into C; avx2 only a part of one vector, into the tile buffer.
  const narrow = (name: "avx2" | "avx512", n: number): string => {
    const kernel = emitGemmC({ ...spec, k: 1024, n }, nativeCpu(), "g", familyByName(name), true);
    if ("declined" in kernel) throw new Error(kernel.declined);
    return kernel.c.source;
  };
  // The MLP's last layer, 64 x 1024 x 10: 10 columns of a panel of 48 (avx512, one masked vector) or 16 (avx2, one vector).
  assert.ok(narrow("avx512", 10).includes("else if (rows == 8 && cols == 10) {\n              g_d_micro_c10(kl, a + i * 1024 + p0, bpanel, ci + j, 10, acc);"), "avx512: 10 columns into C");
  assert.ok(narrow("avx512", 10).includes("_mm512_mask_storeu_ps(c + 7 * ldc + 0, (__mmask16)0x3ff, c_7_0)"), "avx512: the stores of 10 lanes");
  // Attention's p·V (n = 64: 48 + 16) and q·Kᵀ (n = 128: 2 x 48 + 32), the MLP's 1024 (21 x 48 + 16), 1000 (20 x 48 + 40: three vectors, the last masked to 8 lanes).
  assert.ok(narrow("avx512", 64).includes("g_d_micro_c16(") && narrow("avx512", 128).includes("g_d_micro_c32(") && narrow("avx512", 1024).includes("g_d_micro_c16("), "avx512: parts of 16 and 32 columns");
  assert.ok(narrow("avx512", 1000).includes("_mm512_mask_storeu_ps(c + 0 * ldc + 32, (__mmask16)0xff, c_0_2)"), "avx512: 40 columns, the third vector's 8 lanes");
  assert.ok(!narrow("avx2", 10).includes("g_micro_c10("), "avx2: 10 columns are more than a vector of 8");
  assert.ok(narrow("avx2", 8).includes("if (cols == 8) { if (rows == 6) g_d_micro_c8(kl, a + i * 1024 + p0, bpanel, tile, 16, 0); else g_micro_c8(kl, ai, bpanel, tile, 16, 0); }"), "avx2: 8 columns are one, into the tile buffer");
  assert.ok(!/g_(d_)?micro_c/.test(narrow("avx512", 96)), "whole panels");
});

test("native gemm: A packed once a call where its rows are one block and its columns several (keepsPackedA), else for each block of columns", () => {
  // The 14 x 32 tile (42 rows, or A stored [k][m]); the 8 x 48 tile reads a row-major A in place (readsAInPlace).
  const family = familyByName("avx512");
  const spec = (m: number, n: number, k: number, lhsTransposed = false): GemmSpec => ({ elementType: "f32", batch: 1, m, n, k, lhsTransposed });
  const keeps = (s: GemmSpec): boolean => {
    const schedule = planGemm(s, family.target);
    return keepsPackedA(schedule, Math.min(schedule.tiling.mc ?? schedule.tiling.mr, schedule.mTiles * schedule.tiling.mr), readsAInPlace(schedule, family));
  };
  assert.ok(keeps(spec(42, 1024, 1024)), "42 x 1024 x 1024: two blocks of 512 columns");
  assert.ok(keeps(spec(128, 768, 3072, true)) && keeps(spec(128, 3072, 768, true)), "A stored [k][m], tiles of 8 (A of 128 x 3072: 1.5 MiB)");
  assert.ok(!keeps(spec(128, 768, 3072)) && !keeps(spec(64, 1024, 1024)), "the prefill's and the MLP's A row-major, read in place");
  assert.ok(!keeps(spec(1022, 1024, 1024, true)), "rows in several blocks of mc");
  assert.ok(!keeps(spec(126, 32, 768, true)), "one block of columns: nothing to reuse");
  assert.ok(!keeps(spec(128, 768, 8192, true)), "A of 128 x 8192 (4 MiB packed) is packed again for each block of columns");
  const kernel = emitGemmC(spec(42, 1024, 1024), nativeCpu(), "g", family, true);
  if ("declined" in kernel) throw new Error(kernel.declined);
  assert.ok(kernel.c.source.includes("if (packA) for (int64_t i = ib; i < ie; i += 14) g_pack_a(a, apb + (i - a0) * kl,"), "packed only when its tiles are not packed yet");
  assert.ok(kernel.scratchBytes >= 42 * 1024 * 4, "scratch holds A's every block of k");
});

test("native gemm: A read in place up to 4 panels of B (attention's p·V), packed past them (q·Kᵀ, weights); keys stored [n][k] packed by transposes", () => {
  const family = familyByName("avx2");
  const spec = (m: number, n: number, k: number, rhsTransposed = false): GemmSpec => ({ elementType: "f32", batch: 12, m, n, k, rhsTransposed });
  const inPlace = (s: GemmSpec): boolean => readsAInPlace(planGemm(s, family.target), family);
  assert.equal(inPlace(spec(128, 64, 128)), true, "p·V: 4 panels of 16");
  assert.equal(inPlace(spec(128, 128, 64, true)), false, "q·Kᵀ: 8 panels");
  assert.equal(inPlace({ ...spec(128, 64, 128), lhsTransposed: true }), false, "A stored [k][m] is packed");
  assert.equal(inPlace({ ...spec(128, 768, 768), batch: 1 }), false, "weights");
  const source = (s: GemmSpec): string => {
    // The family is given: the source does not depend on this machine's CPU (nor need a compiler).
    const kernel = emitGemmC(s, { arch: "x86_64", avx2: true, fma: true, avx512f: false, neon: false }, "g", family);
    if ("declined" in kernel) throw new Error(kernel.declined);
    return kernel.c.source;
  };
  assert.ok(source(spec(128, 64, 128)).includes("g_d_micro(kl, a + i * 128 + p0"), "p·V reads A's rows in place");
  assert.ok(source(spec(128, 128, 64, true)).includes("g_b_pack_a8("), "the keys are packed 8 columns at a time");
  assert.ok(!source(spec(128, 128, 64)).includes("g_b_pack_a8("), "B stored by rows is not");
});

test("native gemm: the avx2 and avx512 families' first tile of rows packs B stored by rows, not B stored [n][k] or pre-packed, nor the other families", () => {
  const x86: NativeCpu = { arch: "x86_64", avx2: true, fma: true, avx512f: false, neon: false };
  const spec = (n: number, rhsTransposed = false): GemmSpec => ({ elementType: "f32", batch: 1, m: 128, n, k: 256, rhsTransposed });
  const source = (s: GemmSpec, name: "avx2" | "avx512" | "portable" = "avx2", constantB = false): string => {
    const kernel = emitGemmC(s, x86, "g", familyByName(name), constantB);
    if ("declined" in kernel) throw new Error(kernel.declined);
    return kernel.c.source;
  };
  const packsInTiles = (text: string): boolean => text.includes("g_micro_pb(kl, ai, bpanel");
  assert.ok(packsInTiles(source(spec(256))), "128 x 256 x 256: the first tile packs");
  assert.ok(source(spec(64)).includes("g_micro_pb(kl, a + i * 256 + p0, bpanel"), "A read in place (4 panels): so does the packing tile");
  assert.ok(packsInTiles(source(spec(1024))), "rows of 4 KiB too");
  assert.ok(!source(spec(256, true)).includes("g_micro_pb("), "B stored [n][k]: packed ahead, by transposes");
  assert.ok(!source(spec(256), "avx2", true).includes("g_micro_pb("), "B pre-packed: nothing to pack");
  // AVX-512's 8-row tiles read A in place, the packing tile too; B pre-packed or stored [n][k] is not packed in tiles there either.
  assert.ok(source(spec(256), "avx512").includes("g_micro_pb(kl, a + i * 256 + p0, bpanel"), "AVX-512's first tile packs");
  assert.ok(!source(spec(256, true), "avx512").includes("g_micro_pb(") && !source(spec(256), "avx512", true).includes("g_micro_pb("), "AVX-512: B stored [n][k] or pre-packed");
  assert.ok(!source(spec(256), "portable").includes("g_micro_pb("), "the portable family packs ahead");
  const plan = (n: number): boolean => packsBInTiles(planGemm(spec(n), familyByName("avx2").target), familyByName("avx2"));
  assert.deepEqual([256, 768, 1000, 1024, 3072].map(plan), [true, true, true, true, true]);
  assert.equal(packsBInTiles(planGemm(spec(256, true), familyByName("avx2").target), familyByName("avx2")), false, "B stored [n][k]");
});

test("native gemm: split ranges and the module's threads compute the same product", { skip }, () => {
  const cpu = nativeCpu();
  const cases: GemmCase[] = [];
  const specs: GemmSpec[] = [
    { elementType: "f32", batch: 1, m: 100, n: 700, k: 300 },
    { elementType: "f32", batch: 2, m: 40, n: 40, k: 600, rhsTransposed: true },
    { elementType: "f64", batch: 1, m: 3, n: 900, k: 50 },
    { elementType: "f32", batch: 1, m: 1, n: 2000, k: 70 },
    // Two blocks of packed A (mc 192 rows on AVX2, 182 on AVX-512), the ranges cutting the rows inside a block.
    { elementType: "f32", batch: 1, m: 250, n: 40, k: 300 },
    // B stored by rows: one chunk of 35 panels (f32, 16 columns) or 38 (f64, 8), its
    // last panel narrow, each packed by the first tile of rows on avx2 (packsBInTiles),
    // the narrow one by packBSource, as every panel elsewhere (a group of 32 panels at a
    // time, the last group short); rows of 4 KiB (f64, 512 columns: every step of a
    // panel in one set of the L1), packed in the tiles too.
    { elementType: "f32", batch: 1, m: 97, n: 549, k: 40 },
    { elementType: "f64", batch: 1, m: 97, n: 300, k: 40 },
    { elementType: "f64", batch: 1, m: 13, n: 512, k: 40 },
  ];
  specs.forEach((spec, i) => {
    cases.push(gemmCase(spec, emitGemmC(spec, cpu, `s3_${i}`), { splits: 3 }));
    cases.push(gemmCase(spec, emitGemmC(spec, cpu, `t2_${i}`), { threads: 2 }));
  });
  runAndCheck(cases, "native gemm splits");
});

test("native gemm: each unit alone writes its own part of C, with the whole call's bits; the parts tile C once; any cut and the pool give the same bits", { skip }, () => {
  // What a split of the units may not change (the pool's ranges, its threads): every
  // element of C is computed by exactly one unit, none lost or computed twice, its sum in
  // the same order of k whichever call runs it. Each unit runs alone over C filled with
  // NaN bit patterns (all bytes 0xff, which no product of finite operands is): what it
  // wrote is its part. Shapes whose units meet across chunks of columns, with a last tile
  // of fewer rows (128 = 9·14 + 2 = 21·6 + 2 = 16·8), two blocks of k, a batch, B stored
  // [n][k], f64, and B pre-packed as a constant's is.
  const cpu = nativeCpu();
  const specs: GemmSpec[] = [
    { elementType: "f32", batch: 1, m: 128, n: 1000, k: 300 },
    { elementType: "f32", batch: 2, m: 30, n: 700, k: 40, rhsTransposed: true },
    { elementType: "f64", batch: 1, m: 50, n: 300, k: 140 },
  ];
  for (const family of runnableFamilies(cpu)) {
    // Every kernel of a family in one module; each unit of each alone, then cuts and the pool.
    const runs = specs.flatMap((spec, si) => [false, true].map((constantB) => {
      const kernel = emitGemmC(spec, cpu, `u_${family.name}_${si}_${constantB ? "p" : "b"}`, family, constantB);
      if ("declined" in kernel) throw new Error(kernel.declined);
      const extent = kernel.parallelExtent;
      const { a, b } = gemmCase(spec, kernel);
      const bOperand = kernel.packedOperand === undefined ? b : packB(b, kernel.packedOperand.layout);
      const cuts = (parts: number): [number, number][] => {
        const points = [0, ...Array.from({ length: parts - 1 }, () => Math.floor(random() * (extent + 1))).sort((x, y) => x - y), extent];
        return points.slice(1).map((end, i) => [points[i]!, end]);
      };
      const ranges: [number, number][][] = [[[0, extent]], ...Array.from({ length: extent }, (_, u): [number, number][] => [[u, u + 1]]), cuts(2), cuts(3), cuts(5)];
      const resultBytes = [spec.batch * spec.m * spec.n * a.BYTES_PER_ELEMENT];
      const cases = [
        ...ranges.map((r): NativeCase => ({ kernel, operands: [a, bOperand], resultBytes, ranges: r })),
        { kernel, operands: [a, bOperand], resultBytes, threads: 2 },
      ];
      return { kernel, extent, ranges, cases, es: a.BYTES_PER_ELEMENT };
    }));
    const all = runNativeCases(runs.flatMap((r) => r.cases), `gemm units ${family.name}`).map((r) => r[0]!);
    let at = 0;
    for (const { kernel, extent, ranges, cases, es } of runs) {
      const results = all.slice(at, at + cases.length);
      at += cases.length;
      const whole = results[0]!;
      const written = (bytes: Uint8Array, e: number): boolean => bytes.subarray(e * es, (e + 1) * es).some((x) => x !== 0xff);
      const same = (x: Uint8Array, y: Uint8Array, e: number): boolean => x.subarray(e * es, (e + 1) * es).every((v, i) => v === y[e * es + i]);
      const elements = whole.length / es;
      const count = new Uint8Array(elements);
      for (let u = 0; u < extent; u++) {
        const part = results[1 + u]!;
        for (let e = 0; e < elements; e++) {
          if (!written(part, e)) continue;
          count[e]!++;
          if (!same(part, whole, e)) assert.fail(`${kernel.name}: unit ${u} alone gives element ${e} other bits than the whole call`);
        }
      }
      const twice = count.findIndex((c) => c > 1), never = count.findIndex((c) => c === 0);
      assert.equal(twice, -1, `${kernel.name}: element ${twice} written by ${count[twice]} units`);
      assert.equal(never, -1, `${kernel.name}: element ${never} written by no unit`);
      results.slice(1 + extent).forEach((r, i) => {
        const label = i < 3 ? `cut ${JSON.stringify(ranges[1 + extent + i])}` : "the pool's two threads";
        for (let e = 0; e < elements; e++) if (!same(r, whole, e)) assert.fail(`${kernel.name}: ${label} gives element ${e} other bits than one call`);
      });
    }
  }
});

test("native gemm: a few rows of A, streamed (B by rows) and as row dots (B stored [n][k]), every family, splits and threads", { skip }, () => {
  const cpu = nativeCpu();
  const cases: GemmCase[] = [];
  // batch, m, n, k: k below, at and past a vector and a sweep of rows (4, or 8 for one
  // row); n past the stream's tile (16 KiB of C: 4096 f32 columns for one row, 2048 for
  // two, 1024 for four) and not a multiple of the row-dot group; batches with units across them.
  const shapes: [number, number, number, number][] = [
    [1, 1, 1, 1], [1, 1, 7, 3], [1, 2, 5, 17], [1, 3, 130, 64], [1, 4, 33, 300], [3, 1, 11, 65], [2, 4, 2500, 9],
    [1, 1, 3000, 33], [12, 1, 128, 64], [4, 2, 9, 1000], [1, 3, 1030, 7], [1, 1, 4101, 15], [1, 2, 2051, 13],
  ];
  let index = 0;
  for (const family of runnableFamilies(cpu)) {
    for (const elementType of ["f32", "f64"] as const) {
      for (const [batch, m, n, k] of shapes) {
        for (const rhsTransposed of [false, true]) {
          const spec: GemmSpec = { elementType, batch, m, n, k, rhsTransposed, lhsTransposed: m === 1 && n % 2 === 1 };
          const i = index++;
          const extra = i % 3 === 1 ? { splits: 3 } : i % 3 === 2 ? { threads: 2 } : {};
          cases.push(gemmCase(spec, emitGemmC(spec, cpu, `few_${family.name}_${i}`, family), extra));
        }
      }
    }
  }
  const names = new Set(cases.map((c) => c.kernel.name));
  assert.ok(cases.length > 0 && names.size > 0);
  runAndCheck(cases, "native gemm few rows");
});

test("native gemm: a streamed product split over the pool's two threads, call after call, as on one", { skip }, () => {
  // Cost between MIN_PARALLEL_COST and ALWAYS_PARALLEL_COST: the calls alternate between
  // the calling thread alone and the split, each part running its adjacent ranges of
  // units as one call (glue.ts); odd n, so the parts' column ranges end mid-vector.
  const spec: GemmSpec = { elementType: "f32", batch: 1, m: 1, n: 3001, k: 97 };
  const kernel = emitGemmC(spec, nativeCpu(), "stream_split");
  if ("declined" in kernel) throw new Error(kernel.declined);
  const cost = kernel.parallelExtent * kernel.costPerUnit;
  assert.ok(cost >= MIN_PARALLEL_COST && cost < ALWAYS_PARALLEL_COST && kernel.parallelExtent >= 4, `cost ${cost}, ${kernel.parallelExtent} units`);
  const c = gemmCase(spec, kernel, { threads: 2 });
  runAndCheck(Array.from({ length: 2 * SPLIT_TRIALS + 2 }, () => c), "native gemm stream split", true);
});

test("native gemm: XLATS_POOL_TRACE prints each split call's parts, which ran every unit once between them", { skip }, () => {
  const child = fileURLToPath(new URL("./pool_trace_child.js", import.meta.url));
  const r = spawnSync(process.execPath, [child], { env: { ...process.env, XLATS_POOL_TRACE: "1" }, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const { units, grain, cost, ok } = JSON.parse(r.stdout) as { units: number; grain: number; cost: number; ok: boolean };
  assert.ok(ok, "the split product is wrong");
  assert.ok(cost >= ALWAYS_PARALLEL_COST && units >= 4, `cost ${cost}, ${units} units: not always split`);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("xk_pool_trace pool_trace "));
  assert.equal(lines.length, 3, r.stderr);
  for (const line of lines) {
    assert.match(line, new RegExp(`units \\[0, ${units}\\) of ${units}, [\\d.]+ us`));
    // The parts' units add up to the call's: each of the 2 x 2 ranges ran on exactly one part, or
    // (B packed by the call: its threads balance it in whole chunks) each part's share ran.
    const parts = tracedParts(line, units, grain > 0);
    for (const p of parts) if (Number(p[5]) > 0) assert.ok(Number(p[3]) >= Number(p[2]), line);
  }
});

test("native gemm: a balanced split of few rows (B pre-packed) runs every unit once, on two cores or one, with one thread's bits", { skip }, (t) => {
  // The MLP's kind of product: its two threads take pieces of their shares and of each
  // other's as they go, down to row tiles (gemmBalance). Unpinned, the threads share the units however
  // the cores run them; pinned to one core at a real-time priority, the pool's thread
  // never runs while the caller computes, so the caller takes its own share and then
  // the other's from its back, piece by piece. Either way every unit must run exactly
  // once: one skipped leaves C's NaN patterns (the bits differ), one run twice adds to
  // the traced units.
  const child = fileURLToPath(new URL("./balanced_split_child.js", import.meta.url));
  const pinned = ["taskset", "-c", "0", "chrt", "-f", "1"];
  const canPin = spawnSync(pinned[0]!, [...pinned.slice(1), "true"]).status === 0;
  if (!canPin) t.diagnostic("taskset or chrt -f is not available here: the pinned run is left out");
  for (const pin of canPin ? [false, true] : [false]) {
    const command = pin ? [...pinned, process.execPath] : [process.execPath];
    const r = spawnSync(command[0]!, [...command.slice(1), child, "8"], { env: { ...process.env, XLATS_POOL_TRACE: "1" }, encoding: "utf8", timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const { units, grain, cuts, cost, same } = JSON.parse(r.stdout) as { units: number; grain: number; cuts: boolean; cost: number; same: boolean };
    assert.ok(same, `two threads gave other bits than one${pin ? " (pinned)" : ""}`);
    assert.ok(grain > 1 && cuts && cost >= ALWAYS_PARALLEL_COST && units >= 2 * grain, `grain ${grain}${cuts ? " (cut)" : ""}, cost ${cost}, ${units} units`);
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("xk_pool_trace balanced_split "));
    assert.equal(lines.length, 8, r.stderr);
    for (const line of lines) {
      const parts = tracedParts(line, units, true);
      // Pinned, the caller ran every unit, its own share's and the other's.
      if (pin) assert.ok(parts[0]![5] === String(units) && parts[0]![6] === "3" && parts[1]![5] === "0", line);
    }
  }
});

test("native gemm: a split trial no other thread helped does not count, and the split is tried again", { skip }, (t) => {
  // The child pinned to one core at a real-time priority: the pool's thread never runs
  // while the caller computes, so every split call is the caller's alone. Such trials
  // once counted as the split's time (the caller's plus the hand-off), and the kernel
  // then either stayed alone or split on every call (4 or 64 split calls here); now
  // they do not count, and every SPLIT_UNSEEN_RETRY-th call tries again: the 4 trials
  // of the first 2 × SPLIT_TRIALS calls and calls 16, 32 and 48.
  const pinned = ["taskset", "-c", "0", "chrt", "-f", "1"];
  if (spawnSync(pinned[0]!, [...pinned.slice(1), "true"]).status !== 0) { t.skip("taskset or chrt -f is not available here"); return; }
  const calls = 64;
  const child = fileURLToPath(new URL("./split_trial_child.js", import.meta.url));
  const r = spawnSync(pinned[0]!, [...pinned.slice(1), process.execPath, child, String(calls)], { env: { ...process.env, XLATS_POOL_TRACE: "1" }, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const { units, cost, ok } = JSON.parse(r.stdout) as { units: number; cost: number; ok: boolean };
  assert.ok(ok, "a product is wrong");
  assert.ok(cost >= MIN_PARALLEL_COST && cost < ALWAYS_PARALLEL_COST, `cost ${cost}: not a measured decision`);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("xk_pool_trace split_trial "));
  for (const line of lines) assert.equal(tracedParts(line, units)[1]![5], "0", `the pool's thread ran units on the pinned core: ${line}`);
  const retries = Math.floor((calls - 1) / SPLIT_UNSEEN_RETRY) - Math.floor((2 * SPLIT_TRIALS - 1) / SPLIT_UNSEEN_RETRY);
  assert.equal(lines.length, SPLIT_TRIALS + retries, r.stderr.slice(0, 2000));
});

test("native gemm: the schedules of a few rows stream B or take row dots, never pack", () => {
  const cpu = { arch: "x86_64", avx2: true, fma: true, avx512f: true, neon: false };
  for (const family of ["avx512", "avx2", "portable", "neon"] as const) {
    const target = familyByName(family).target;
    assert.equal(planGemm({ elementType: "f32", batch: 12, m: 1, n: 128, k: 64, rhsTransposed: true }, target).kind, "rowDots", family);
    assert.equal(planGemm({ elementType: "f32", batch: 1, m: 4, n: 768, k: 768 }, target).kind, "streamB", family);
    assert.equal(planGemm({ elementType: "f64", batch: 1, m: 2, n: 768, k: 768, rhsTransposed: true }, target).kind, "rowDots", family);
    assert.equal(planGemm({ elementType: "f32", batch: 1, m: 5, n: 768, k: 768, rhsTransposed: true }, target).kind, "packed", family);
    // A stored [k][m] with m > 1: its rows are not contiguous, so packed.
    assert.equal(planGemm({ elementType: "f32", batch: 1, m: 2, n: 64, k: 64, lhsTransposed: true, rhsTransposed: true }, target).kind, "packed", family);
  }
  const kernel = emitGemmC({ elementType: "f32", batch: 12, m: 1, n: 128, k: 64, rhsTransposed: true }, cpu);
  assert.ok(!("declined" in kernel) && kernel.scratchBytes === 0);
});

test("native gemm: a kernel that times itself alone and split gives the same product on every call", { skip }, () => {
  // 64 x 64 x 64: between MIN_PARALLEL_COST and ALWAYS_PARALLEL_COST, so its first calls
  // alternate between the calling thread and the pool, and later calls take either.
  const spec: GemmSpec = { elementType: "f32", batch: 1, m: 64, n: 64, k: 64 };
  const kernel = emitGemmC(spec, nativeCpu(), "self_timed");
  if ("declined" in kernel) throw new Error(kernel.declined);
  const cost = kernel.parallelExtent * kernel.costPerUnit;
  assert.ok(cost >= MIN_PARALLEL_COST && cost < ALWAYS_PARALLEL_COST, `cost ${cost}`);
  const c = gemmCase(spec, kernel, { threads: 2 });
  const calls = 2 * SPLIT_TRIALS + 4;
  runAndCheck(Array.from({ length: calls }, () => c), "native gemm self-timed", true);
});

test("native gemm: the family follows the CPU", () => {
  const base = { arch: "x86_64", avx2: true, fma: true, avx512f: false, neon: false };
  assert.equal(gemmFamily({ ...base, avx512f: true }).name, "avx512");
  assert.equal(gemmFamily(base).name, "avx2");
  assert.equal(gemmFamily({ ...base, fma: false }).name, "portable");
  assert.equal(gemmFamily({ arch: "aarch64", avx2: false, fma: false, avx512f: false, neon: true }).name, "neon");
  assert.equal(gemmFamily({ arch: "riscv64", avx2: false, fma: false, avx512f: false, neon: false }).name, "portable");
});

test("native gemm: refuses other element types and oversized operands", () => {
  const cpu = { arch: "x86_64", avx2: true, fma: true, avx512f: true, neon: false };
  assert.ok("declined" in emitGemmC({ elementType: "bf16" as "f32", batch: 1, m: 2, n: 2, k: 2 }, cpu));
  assert.ok("declined" in emitGemmC({ elementType: "f32", batch: 1, m: 70000, n: 70000, k: 2 }, cpu));
});

/** A dot_general from the builder, its GEMM spec, and the interpreter's result. */
function interpretedDot(lhsDims: number[], rhsDims: number[], contract: [number, number], batchDims: number, type: "f32" | "f64"): { dot: Instruction<"dot">; lhs: Float64Array; rhs: Float64Array; want: number[] } {
  const b = new XlaBuilder("dot");
  const x = parameter(b, 0, arrayShape(type, lhsDims));
  const y = parameter(b, 1, arrayShape(type, rhsDims));
  const bd = Array.from({ length: batchDims }, (_, i) => i);
  const root = dotGeneral(x, y, { lhsBatchDimensions: bd, rhsBatchDimensions: bd, lhsContractingDimensions: [contract[0]], rhsContractingDimensions: [contract[1]] });
  const comp = b.build(root);
  const dot = root.instruction as Instruction<"dot">;
  const lhs = new Float64Array(lhsDims.reduce((p, d) => p * d, 1)).map(() => Math.round((random() * 2 - 1) * 8) / 8);
  const rhs = new Float64Array(rhsDims.reduce((p, d) => p * d, 1)).map(() => Math.round((random() * 2 - 1) * 8) / 8);
  // Special values: an infinity and a NaN in the lhs propagate through their rows.
  lhs[0] = Infinity;
  if (lhs.length > 3) lhs[3] = NaN;
  const want = evaluate(comp, [Literal.fromValues(type, lhsDims, [...lhs]), Literal.fromValues(type, rhsDims, [...rhs])]).toNumbers();
  return { dot, lhs, rhs, want };
}

test("native gemm: dot_general vs the interpreter (batch, transposes, NaN and infinity)", { skip }, () => {
  const cpu = nativeCpu();
  const dots = [
    interpretedDot([5, 7], [7, 9], [1, 0], 0, "f32"),
    interpretedDot([2, 6, 5], [2, 6, 4], [1, 1], 1, "f32"),
    interpretedDot([3, 17, 33], [3, 19, 33], [2, 2], 1, "f64"),
    interpretedDot([1, 40], [40, 300], [1, 0], 0, "f32"),
    // One token's attention: q·Kᵀ (row dots) and p·V (streamed), and a few rows against a linear layer's weight.
    interpretedDot([12, 1, 64], [12, 128, 64], [2, 2], 1, "f32"),
    interpretedDot([12, 1, 128], [12, 128, 64], [2, 1], 1, "f32"),
    interpretedDot([3, 70], [45, 70], [1, 1], 0, "f64"),
    interpretedDot([2, 4, 33], [2, 33, 19], [2, 1], 1, "f64"),
  ];
  const cases: GemmCase[] = [];
  dots.forEach((d, i) => {
    const spec = gemmSpecOfDot(d.dot);
    if (("declined" in spec)) throw new Error(spec.declined);
    const F = spec.elementType === "f32" ? Float32Array : Float64Array;
    for (const family of runnableFamilies(cpu)) {
      const kernel = emitGemmC(spec, cpu, `dot_${i}_${family.name}`, family);
      if (("declined" in kernel)) throw new Error(kernel.declined);
      cases.push({ spec, a: F.from(d.lhs), b: F.from(d.rhs), kernel });
    }
  });
  const results = runNativeCases(cases.map((c) => ({ kernel: c.kernel, operands: [c.a, c.b], resultBytes: [c.spec.batch * c.spec.m * c.spec.n * c.a.BYTES_PER_ELEMENT] })), "native gemm dots");
  const perDot = cases.length / dots.length;
  cases.forEach((c, ci) => {
    const want = dots[Math.floor(ci / perDot)]!.want;
    const bytes = results[ci]![0]!;
    const F = c.spec.elementType === "f32" ? Float32Array : Float64Array;
    const got = new F(bytes.buffer as ArrayBuffer, bytes.byteOffset, want.length);
    // Multiples of 1/8 with small sums: exact in either type, in any order of summation.
    for (let i = 0; i < want.length; i++) {
      if (!Object.is(got[i], want[i]) && !(Number.isNaN(got[i]) && Number.isNaN(want[i]))) {
        assert.fail(`${c.kernel.name}: element ${i} is ${got[i]}, the interpreter says ${want[i]}`);
      }
    }
  });
});
