// The WebGPU top-k kernels (webgpu/top_k_wgsl.ts) against the interpreter, bit for bit:
// rows of 1 to 5, lanes of 1 to 50257 (GPT-2's vocabulary), k from 1 to the lane's
// length (past the kernel's bound the sort runs it: the plan says which), the kernel's
// one-stage form (a lane in one chunk) and its stages across chunks (4097: 5 chunks and
// a merge; 50257: 50 chunks, and with k = 256 two merges), f32 keys drawn with many ties
// from patterns with NaNs of both signs and payloads, infinities, -0 and +0 (the largest
// or smallest k are then ties spread over every chunk: a wrong tie rule, a dropped chunk
// or a chunk boundary off by one changes the indices), runs of 1024 and 2048 in long
// lanes (up to four stages), every integer width and pred,
// f16 and bf16 (results gathered through the positions), and XLA's ApproxTopK with two
// operands by a plain GT (strict weak order on data without NaNs), along the last or
// the first dimension, aggregated or not. Skipped where nothing runs WebGPU; the plan
// tests need no GPU.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { MOST_POSITIONS, MOST_RUN } from "../../../src/compiler/webgpu/top_k_wgsl.js";
import { arrayShape, Literal, parameter, parseStableHlo, topK, XlaBuilder, type ElementType } from "../../../src/index.js";
import { ELEMENT_TYPES } from "../../../src/types/element_type.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const F32_PATTERNS = [0x3fc00000, 0xc0000000, 0x80000000, 0, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800123, 0xff800123, 0x00000001, 0x80000001];

/**
 * Keys of type t: a share `few` drawn from a few patterns (ties; for f32 the NaNs,
 * infinities and zeros above; for integers the type's bounds, -1, 0 and 1), the rest any
 * bits of the type. With half of them ties the best k of a long lane are ties (the tie
 * rule shows in the indices); with 1 in 100, the best k have many values (the values show).
 */
function keys(t: ElementType, dims: readonly number[], seed: number, few = 0.5): Literal {
  const x = Literal.zeros(arrayShape(t, dims));
  const next = rng(seed);
  const width = ELEMENT_TYPES[t].bitWidth;
  const signed = t.startsWith("s");
  if (width === 64) {
    const patterns = [0n, 1n, -1n, -(2n ** 63n), 2n ** 63n - 1n, 2n ** 32n, -(2n ** 32n)].map((v) => (signed ? v : BigInt.asUintN(64, v)));
    const data = x.data as BigInt64Array | BigUint64Array;
    for (let i = 0; i < data.length; i++) {
      const any = (BigInt(Math.floor(next() * 2 ** 32)) << 32n) | BigInt(Math.floor(next() * 2 ** 32));
      data[i] = next() < few ? patterns[Math.floor(next() * patterns.length)]! : signed ? BigInt.asIntN(64, any) : any;
    }
    return x;
  }
  const data = t === "f32" ? new Uint32Array(x.data.buffer, x.data.byteOffset, x.data.length) : x.data as Uint8Array;
  const range = 2 ** width;
  const patterns = t === "f32" ? F32_PATTERNS : t === "pred" ? [0, 1] : [0, 1, range - 1, range / 2, range / 2 - 1];
  for (let i = 0; i < data.length; i++) {
    let v = next() < few ? patterns[Math.floor(next() * patterns.length)]! : Math.floor(next() * range);
    // Integers as the typed array holds them (bits of the narrow floats; signed integers' values).
    if (signed && ELEMENT_TYPES[t].kind !== "float" && v >= range / 2) v -= range;
    data[i] = v;
  }
  return x;
}

const bytesOf = (l: Literal): Uint8Array => {
  const d = l.toDefaultLayout().data;
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
};

const topKProgram = (t: ElementType, dims: readonly number[], k: number, largest: boolean) => {
  const b = new XlaBuilder(`top_k_${t}`);
  return b.build(topK(parameter(b, 0, arrayShape(t, dims)), k, largest));
};

/** A topK on webgpu and on the interpreter (keys with many ties for an even seed, few for an odd one): no host step, values and indices the same bits; returns the dump. */
async function sameTopK(t: ElementType, dims: readonly number[], k: number, largest: boolean, seed: number): Promise<string> {
  const { got, want, exe } = await both(topKProgram(t, dims, k, largest), [keys(t, dims, seed, seed % 2 === 0 ? 0.5 : 0.01)]);
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  const wants = want.arrayLeaves();
  got.arrayLeaves().forEach((leaf, r) => assert.deepEqual(bytesOf(leaf), bytesOf(wants[r]!), `${t} ${dims.join("x")} k = ${k} largest = ${largest}: ${r === 0 ? "values" : "indices"}`));
  return exe.dump();
}

const plan = (t: ElementType, dims: readonly number[], k: number): string => dumpGpuProgram(planGpuProgram(topKProgram(t, dims, k, true), {}));

test("the plan (no GPU needed): the top-k kernel for a k small against the lane, a stage a level of chunks; the sort past its bound", () => {
  const gpt2 = plan("f32", [1, 50257], 50);
  assert.match(gpt2, /kernel [^\n]*\(stage 1\/2\) [^\n]*top-k \(k = 50\) of 1 lanes of 50257: 50 chunks of 1024 a lane, runs of 64 sorted and merged to the best 64, 50 workgroups of 64/);
  assert.match(gpt2, /kernel [^\n]*\(stage 2\/2\) [^\n]*top-k \(k = 50\) of 1 lanes: 3200 candidates a lane in 1 chunk of 4096, runs of 64 merged to the best 64, 1 workgroups of 64\): p0, t0, o0, o1/);
  assert.doesNotMatch(gpt2, /sort of| [1-9]\d* host step/);
  // 50 runs of 256 are 12800 candidates: 4 chunks of 4096, then one of their 1024.
  assert.match(plan("f32", [2, 50257], 256), /stage 3\/3[^\n]*1024 candidates a lane in 1 chunk of 1024/);
  // f16: the values gathered through the positions after the last stage.
  assert.match(plan("f16", [4, 50257], 40), /\(result 0\) [^\n]*top-k's f16 result of operand 0 gathered through the positions/);
  // The bound: in a lane workgroup memory holds, runs of at most MOST_RUN, at most half the lane (padded to a power of two); past it, the sort kernel.
  assert.match(plan("f32", [2, 1000], MOST_RUN), /top-k \(k = 256\) of 2 lanes of 1000: 1 chunk of 1024/);
  assert.match(plan("f32", [2, 1000], MOST_RUN + 1), /sort of 2 lanes of 1000/);
  assert.match(plan("f32", [2, MOST_POSITIONS], MOST_RUN + 1), new RegExp(`sort of 2 lanes of ${MOST_POSITIONS}, a bitonic network`));
  // In a longer one (the sort's network across dispatches), runs up to half a chunk of workgroup memory.
  assert.match(plan("f32", [2, MOST_POSITIONS + 1], MOST_POSITIONS / 2), /stage 1\/2\) [^\n]*top-k \(k = 2048\) of 2 lanes of 4097: 2 chunks of 4096 a lane, runs of 2048/);
  assert.match(plan("f32", [2, 16384], MOST_POSITIONS / 2 + 1), /bitonic pass of a sort of 2 lanes of 16384/);
  assert.match(plan("f32", [3, 9], 5), /top-k \(k = 5\) of 3 lanes of 9: 1 chunk of 16/);
  assert.match(plan("f32", [3, 9], 9), /sort of 3 lanes of 9/);
  assert.match(plan("f32", [3, 1], 1), /sort of 3 lanes of 1/);
});

test("topK of f32, lanes of 1 to 1000 in one chunk, k from 1 to the lane's length (the sort past the bound): the interpreter's values and indices", { skip }, async () => {
  let seed = 1;
  for (const [lanes, n, ks] of [[3, 1, [1]], [2, 40, [1, 20, 40]], [5, 1000, [1, 2, 7, 64, 65, 256, 257, 999]], [1, 300, [37, 150]]] as const) {
    for (const k of ks) {
      for (const largest of [true, false]) {
        const dump = await sameTopK("f32", [lanes, n], k, largest, seed++);
        const kernel = k <= MOST_RUN && 2 * 2 ** Math.ceil(Math.log2(k)) <= 2 ** Math.ceil(Math.log2(n));
        assert.match(dump, kernel ? new RegExp(`top-k \\(k = ${k}\\) of ${lanes} lanes of ${n}`) : new RegExp(`sort of ${lanes} lanes of ${n}`), `${n}, k = ${k}`);
      }
    }
  }
});

test("topK of f32 across chunks: lanes of 4097 (5 chunks and a merge) and 50257 (50 chunks; k = 256: two merges), rows of 1 to 4, largest and smallest", { skip }, async () => {
  let seed = 100;
  for (const [lanes, n, k, largest] of [[2, 4097, 1, true], [2, 4097, 50, false], [3, 4097, 256, true], [1, 50257, 50, true], [4, 50257, 40, false], [2, 50257, 256, true], [1, 50257, 1, false]] as const) {
    const dump = await sameTopK("f32", [lanes, n], k, largest, seed++);
    assert.match(dump, new RegExp(`stage 1/\\d\\) [^\\n]*top-k \\(k = ${k}\\) of ${lanes} lanes of ${n}`));
  }
});

test("topK of f32 with long runs in long lanes: k = 1000 of 50257 (runs of 1024: four stages), k = 2048 of 16384", { skip }, async () => {
  let seed = 150;
  for (const [lanes, n, k, stages] of [[1, 50257, 1000, 4], [2, 16384, 2048, 3]] as const) {
    const dump = await sameTopK("f32", [lanes, n], k, seed % 2 === 0, seed++);
    assert.match(dump, new RegExp(`stage ${stages}/${stages}\\) [^\\n]*top-k \\(k = ${k}\\)`));
  }
});

test("topK of every integer width, pred, f16 and bf16 across chunks (narrow results gathered through the positions): the interpreter's bits", { skip }, async () => {
  let seed = 200;
  for (const t of ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "pred", "f16", "bf16"] as const) {
    for (const largest of [true, false]) {
      const dump = await sameTopK(t, [2, 4097], 50, largest, seed++);
      assert.match(dump, /stage 2\/2\) [^\n]*top-k \(k = 50\) of 2 lanes: 320 candidates/, t);
    }
  }
});

/** An ApproxTopK of f32 values and s32 positions (iota along `dim`) by a plain GT, as JAX exports approx_max_k; results of `size` along `dim`. */
function approxTopK(dims: readonly [number, number], dim: number, topK: number, size: number, aggregate: boolean): string {
  const t = (e: string): string => `tensor<${dims.join("x")}x${e}>`;
  const out = dims.map((d, j) => (j === dim ? size : d));
  const r = (e: string): string => `tensor<${out.join("x")}x${e}>`;
  return `func.func @cmp(%a: tensor<f32>, %b: tensor<f32>, %ai: tensor<i32>, %bi: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  stablehlo.return %0 : tensor<i1>
}
func.func public @main(%x: ${t("f32")}) -> (${r("f32")}, ${r("i32")}) {
  %i = stablehlo.iota dim = ${dim} : ${t("i32")}
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%x, %i, %m, %c) {backend_config = "", called_computations = [@cmp], mhlo.backend_config = {aggregate_to_topk = ${aggregate}, is_fallback = true, recall_target = 0.95 : f32, reduction_dim = ${dim} : i64, reduction_input_size_override = -1 : i64, top_k = ${topK} : i64}} : (${t("f32")}, ${t("i32")}, tensor<f32>, tensor<i32>) -> (${r("f32")}, ${r("i32")})
  return %0#0, %0#1 : ${r("f32")}, ${r("i32")}
}`;
}

test("ApproxTopK (two operands by a plain GT, no NaNs: ties, -0 and +0 equal) along the last and the first dimension, aggregated and not: the top-k kernel, the interpreter's bits", { skip }, async () => {
  let seed = 300;
  for (const [dims, dim, k, size, aggregate] of [[[3, 5000], 1, 40, 40, true], [[5000, 3], 0, 20, 20, true], [[2, 50257], 1, 50, 100, false]] as const) {
    const x = keys("f32", dims, seed++);
    const bits = new Uint32Array(x.data.buffer, x.data.byteOffset, x.data.length);
    // No NaNs: a plain GT is a strict weak order on the rest.
    for (let i = 0; i < bits.length; i++) if ((bits[i]! & 0x7fffffff) > 0x7f800000) bits[i] = i % 3 === 0 ? 0x80000000 : 0x3fc00000;
    const { got, want, exe } = await both(parseStableHlo(approxTopK(dims, dim, k, size, aggregate)).entry, [x]);
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    assert.match(exe.dump(), new RegExp(`top-k \\(k = ${size}\\) of 3 lanes|top-k \\(k = ${size}\\) of 2 lanes`));
    const wants = want.arrayLeaves();
    got.arrayLeaves().forEach((leaf, r) => assert.deepEqual(bytesOf(leaf), bytesOf(wants[r]!), `${dims.join("x")} along ${dim}: result ${r}`));
  }
});
