// The WGSL sort (webgpu/sort_wgsl.ts) against the interpreter, bit for bit: the bitonic
// network in workgroup memory over lanes of every length from 1 to 1025 (powers of two,
// one past them, odd and prime lengths: the padding to a power of two), the network
// across dispatches past workgroup memory, many lanes, a sort dimension that is not the
// last, keys with many ties carrying their positions (so the stable order shows),
// ascending and descending comparators, floats in XLA's total order (NaNs of both signs
// and with payloads, infinities, -0 and +0), 1- and 2-byte operands (f16, bf16, s8,
// pred: gathered through the permutation), 64-bit keys, and top-k of f32 and f16 (a k
// past the top-k kernel's bound is a sort and a slice; top_k.test.ts tests that kernel). A plain LT on floats with NaNs is not a strict weak order: only that
// the result is a permutation of the lane is checked. Skipped where nothing runs WebGPU.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { DEFAULT_GPU_LIMITS } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";
import { arrayShape, Literal, parameter, parseStableHlo, topK, XlaBuilder, type ElementType } from "../../../src/index.js";
import { rng } from "../../support/prng.js";
import { sort } from "./op_programs.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/**
 * Twelve bit patterns a key type draws from (so a long lane has many ties): for floats
 * NaNs of both signs and with a payload, infinities, -0 and +0, subnormals where the
 * type has them; for integers their bounds, -1, 0 and 1.
 */
const KEY_PATTERNS: Partial<Record<ElementType, readonly (number | bigint)[]>> = {
  f32: [0x3fc00000, 0xc0000000, 0x3e800000, 0x40400000, 0x80000000, 0, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800123, 0x00000001],
  f16: [0x3e00, 0xc000, 0x3400, 0x4200, 0x8000, 0, 0x7c00, 0xfc00, 0x7e05, 0xfe01, 0x0001, 0x8001],
  bf16: [0x3fc0, 0xc000, 0x3e80, 0x4040, 0x8000, 0, 0x7f80, 0xff80, 0x7fc3, 0xffc1, 0x0001, 0x8001],
  s8: [-128, 127, 0, -1, 1, 5, -5, 64, -64, 3, 2, -2],
  s32: [-2147483648, 2147483647, 0, -1, 1, 65536, -65536, 7, -7, 1000000, 3, -3],
  u32: [0, 4294967295, 2147483648, 2147483647, 1, 65536, 7, 3, 4294967294, 1000000, 2, 5],
  s64: [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 1n, 2n ** 32n, -(2n ** 32n), 2n ** 32n - 1n, 2n ** 32n + 1n, -(2n ** 32n) + 1n, 2147483648n, -2147483648n],
  u64: [0n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 63n - 1n, 1n, 2n ** 32n, 2n ** 32n - 1n, 2n ** 32n + 1n, 2n ** 64n - 2n ** 32n, 2n ** 63n + 1n, 8589934591n, 2n],
  pred: [0, 1],
};

/** Keys of type t: each element one of its patterns, drawn with seed `seed` (bit patterns for floats, values for integers). */
function keys(t: ElementType, dims: readonly number[], seed: number): Literal {
  const x = Literal.zeros(arrayShape(t, dims));
  const patterns = KEY_PATTERNS[t]!;
  const next = rng(seed);
  const bits = t === "f32" ? new Uint32Array(x.data.buffer, x.data.byteOffset, x.data.length) : x.data;
  for (let i = 0; i < bits.length; i++) (bits as unknown as (number | bigint)[])[i] = patterns[Math.floor(next() * patterns.length)]!;
  return x;
}

/** s32 positions 0, 1, ... in row-major order: carried by a sort, they show where each element came from. */
const positions = (dims: readonly number[]): Literal => Literal.fromValues("s32", dims, Array.from({ length: elementCount(dims) }, (_, k) => k));

const bytesOf = (l: Literal): Uint8Array => {
  const d = l.toDefaultLayout().data;
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
};

/** Runs `text` on webgpu and on the interpreter: no host step, every result's bytes the same; returns the dump. */
async function sameBits(text: string, args: readonly Literal[]): Promise<string> {
  const { got, want, exe } = await both(parseStableHlo(text).entry, args);
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  const wants = want.arrayLeaves();
  got.arrayLeaves().forEach((leaf, k) => assert.deepEqual(bytesOf(leaf), bytesOf(wants[k]!), `result ${k}`));
  return exe.dump();
}

/** The rounds of the bitonic network for a lane of n: log2(P)·(log2(P)+1)/2, P the power of two from n up (at least 2). */
const rounds = (n: number): number => {
  const log = Math.ceil(Math.log2(Math.max(2, n)));
  return (log * (log + 1)) / 2;
};

test("sort: lanes of 1 to 1025 elements (f32 keys by TOTALORDER, ties, NaNs, -0, infinities) carrying their positions: one bitonic kernel, the interpreter's stable order", { skip }, async () => {
  for (const n of [1, 2, 3, 5, 7, 31, 33, 100, 1000, 1024, 1025]) {
    const dims = [4, n];
    const dump = await sameBits(sort([`4x${n}xf32`, `4x${n}xi32`], 1, "LT, A, B, TOTALORDER", true), [keys("f32", dims, n), positions(dims)]);
    assert.match(dump, new RegExp(`sort of 4 lanes of ${n}, a bitonic network of ${rounds(n)} rounds in workgroup memory`), `n = ${n}`);
  }
});

test("sort: descending, a lane longer than any adapter's workgroup memory (the network across dispatches), and lanes along the first and middle dimensions", { skip }, async () => {
  const n = 16385;
  const dump = await sameBits(sort([`2x${n}xf32`, `2x${n}xi32`], 1, "GT, A, B, TOTALORDER", true), [keys("f32", [2, n], 1), positions([2, n])]);
  assert.match(dump, /bitonic pass of a sort of 2 lanes of 16385 \(padded to 32768\), across dispatches/);
  // 165 lanes of 100 along the middle dimension; 3 strided lanes of 1000 along the first.
  await sameBits(sort(["33x100x5xi32", "33x100x5xi32"], 1, "GT, A, B, SIGNED", false), [keys("s32", [33, 100, 5], 2), positions([33, 100, 5])]);
  await sameBits(sort(["1000x3xf32", "1000x3xi32"], 0, "GT, A, B, TOTALORDER", true), [keys("f32", [1000, 3], 3), positions([1000, 3])]);
  await sameBits(sort(["7x31xui32", "7x31xi32"], 1, "LT, A, B, UNSIGNED", true), [keys("u32", [7, 31], 4), positions([7, 31])]);
});

test("sort: 1- and 2-byte keys and values (f16, bf16, s8, pred) gathered through the permutation, and 64-bit keys, in XLA's total order with ties kept in order", { skip }, async () => {
  // f16 keys carrying positions, s8 and pred values: 4 operands, 3 of them gathered.
  const f16 = [3, 1000];
  await sameBits(sort(["3x1000xf16", "3x1000xi32", "3x1000xi8", "3x1000xi1"], 1, "LT, A, B, TOTALORDER", true),
    [keys("f16", f16, 5), positions(f16), keys("s8", f16, 6), keys("pred", f16, 7)]);
  await sameBits(sort(["5x33xbf16", "5x33xi32"], 1, "GT, A, B, TOTALORDER", true), [keys("bf16", [5, 33], 8), positions([5, 33])]);
  await sameBits(sort(["100x3xi8", "100x3xi32"], 0, "LT, A, B, SIGNED", true), [keys("s8", [100, 3], 9), positions([100, 3])]);
  await sameBits(sort(["2x1025xi1", "2x1025xi32"], 1, "GT, A, B, UNSIGNED", true), [keys("pred", [2, 1025], 10), positions([2, 1025])]);
  await sameBits(sort(["3x1000xi64", "3x1000xi32"], 1, "LT, A, B, SIGNED", true), [keys("s64", [3, 1000], 11), positions([3, 1000])]);
  await sameBits(sort(["2x1025xui64", "2x1025xi32"], 1, "GT, A, B, UNSIGNED", true), [keys("u64", [2, 1025], 12), positions([2, 1025])]);
});

test("sort: a plain LT on floats with NaNs (not a strict weak order) still yields a permutation of every lane, in workgroup memory and across dispatches", { skip }, async () => {
  for (const dims of [[4, 1000], [1, 16385]]) {
    const [lanes, n] = dims as [number, number];
    const x = keys("f32", dims, 13);
    const { got, exe } = await both(parseStableHlo(sort([`${lanes}x${n}xf32`, `${lanes}x${n}xi32`], 1, "LT, A, B, FLOAT", true)).entry, [x, positions(dims)]);
    assert.deepEqual(exe.stats.interpreted, []);
    const [sortedKeys, from] = got.arrayLeaves() as [Literal, Literal];
    const inBits = new Uint32Array(x.data.buffer, x.data.byteOffset, x.data.length);
    const outBits = new Uint32Array(sortedKeys.data.buffer, sortedKeys.data.byteOffset, sortedKeys.data.length);
    for (let lane = 0; lane < lanes; lane++) {
      const seen = new Set<number>();
      for (let j = 0; j < n; j++) {
        const p = from.data[lane * n + j] as number;
        assert.ok(p >= lane * n && p < (lane + 1) * n && !seen.has(p), `lane ${lane}, position ${j}: from ${p}`);
        seen.add(p);
        assert.equal(outBits[lane * n + j], inBits[p], `lane ${lane}, position ${j}`);
      }
    }
  }
});

test("topK of f32 and f16 [16, 1024] (k = 16, 1000) with ties, NaNs, -0: the top-k kernel (k = 16) or the sort kernel and a slice (k = 1000), the interpreter's values and indices bit for bit", { skip }, async () => {
  for (const t of ["f32", "f16"] as const) {
    for (const [largest, k] of [[true, 16], [false, 1000]] as const) {
      const b = new XlaBuilder(`top_k_${t}`);
      const x = keys(t, [16, 1024], 14);
      const { got, want, exe } = await both(b.build(topK(parameter(b, 0, arrayShape(t, [16, 1024])), k, largest)), [x]);
      assert.deepEqual(exe.stats.interpreted, [], exe.dump());
      // Runs of 16 in a lane of 1024: top_k_wgsl.ts's kernel; k = 1000 is past its bound, the sort's.
      assert.match(exe.dump(), k === 16 ? /top-k \(k = 16\) of 16 lanes of 1024: 1 chunk of 1024 a lane/ : /sort of 16 lanes of 1024, a bitonic network of 55 rounds/);
      const wants = want.arrayLeaves();
      got.arrayLeaves().forEach((g, r) => assert.deepEqual(bytesOf(g), bytesOf(wants[r]!), `${t} largest=${largest} k=${k}: ${r === 0 ? "values" : "indices"}`));
    }
  }
});

test("the plan (no GPU needed): a lane whose permutation fits workgroup memory is one bitonic kernel, one more element is the network across dispatches", () => {
  const plan = (n: number): string => dumpGpuProgram(planGpuProgram(parseStableHlo(sort([`2x${n}xf32`, `2x${n}xi32`], 1, "LT, A, B, TOTALORDER", true)), {}, { limits: DEFAULT_GPU_LIMITS }));
  // WebGPU's guaranteed 16 KiB holds 4096 u32 positions; a lane of 3000 is padded to 4096 in the network, not in memory.
  assert.match(plan(3000), /sort of 2 lanes of 3000, a bitonic network of 78 rounds in workgroup memory/);
  assert.match(plan(4096), /sort of 2 lanes of 4096, a bitonic network of 78 rounds in workgroup memory/);
  const long = plan(4097);
  assert.match(long, /bitonic pass of a sort of 2 lanes of 4097 \(padded to 8192\), across dispatches/);
  assert.doesNotMatch(long, /in workgroup memory/);
});
