// The WGSL GEMM kernels on a real WebGPU device (Dawn on SwiftShader here) against a
// float64 reference, within the f32 bound of a dot product: |computed - exact| <=
// gamma(k) * sum |a| |b|, gamma(k) = k u / (1 - k u), u = 2^-24 (each product and each
// partial sum rounded once; a fused multiply-add only rounds less).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gemmKernel, type GemmWgslOptions } from "../../../src/compiler/webgpu/gemm_wgsl.js";
import { fittingTiles, SOFTWARE_TILES, tileName, type GpuKernel } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";

/** The float types these standalone kernels are tested with. */
type StorageType = "f32" | "f16" | "bf16";
import type { GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { CompileError } from "../../../src/types/errors.js";
import { decodeFloatBits, encodeFloatBits } from "../../../src/types/float_codec.js";
import { rng } from "../../support/prng.js";
import { gemmReference } from "../../support/kernel_cases.js";
import { acquireDevice, runOnce, type TestDevice } from "./gemm_device.js";

const acquired = await acquireDevice();
const dev: TestDevice | undefined = typeof acquired === "string" ? undefined : acquired;
const skip = typeof acquired === "string" ? `no WebGPU device: ${acquired}` : false;
after(() => dev?.device.destroy());

const random = rng(23);

/**
 * Random values in [-1, 1), exactly representable in f16 (so that f32 and f16 runs share
 * one reference), and in bf16 too with `bf16` (an f16 value of [-1, 1) rounded to bf16 is
 * still an f16 value: below 2^-17 it has at most 7 significant bits).
 */
function randomHalves(count: number, bf16 = false): Float32Array {
  return new Float32Array(count).map(() => {
    const v = decodeFloatBits("f16", encodeFloatBits("f16", random() * 2 - 1));
    return bf16 ? decodeFloatBits("bf16", encodeFloatBits("bf16", v)) : v;
  });
}

/** An operand as a kernel of storage type t reads it: f32 values, or a half's patterns. */
function stored(values: Float32Array, t: StorageType): ArrayBufferView {
  return t === "f32" ? values : Uint16Array.from(values, (v) => encodeFloatBits(t, v));
}

/** |a| |b| summed, the scale of the dot bound. */
function absoluteReference(spec: GemmSpec, a: Float32Array, b: Float32Array): Float64Array {
  return gemmReference(spec, a.map(Math.abs), b.map(Math.abs));
}

interface Checked {
  readonly kernel: GpuKernel;
}

async function checkGemm(spec: GemmSpec, options: GemmWgslOptions = {}): Promise<Checked> {
  const { batch, m, n, k } = spec;
  const { lhsType = "f32", rhsType = "f32", outputType = "f32" } = options;
  const bf16 = lhsType === "bf16" || rhsType === "bf16";
  const a = randomHalves(batch * m * k, bf16);
  const b = randomHalves(batch * k * n, bf16);
  const kernel = gemmKernel(spec, dev!.limits, options);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  const bytes = await runOnce(dev!, kernel, new Map<number, ArrayBufferView>([[0, stored(a, lhsType as StorageType)], [1, stored(b, rhsType as StorageType)]]));
  const count = batch * m * n;
  const got = outputType === "f32"
    ? Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, count))
    : Array.from(new Uint16Array(bytes.buffer, bytes.byteOffset, count), (h) => decodeFloatBits(outputType, h));
  const want = gemmReference(spec, a, b);
  const scale = absoluteReference(spec, a, b);
  const gamma = (k * 2 ** -24) / (1 - k * 2 ** -24);
  const label = `${JSON.stringify(spec)} ${JSON.stringify(kernel.choice)}`;
  for (let i = 0; i < count; i++) {
    let bound = gamma * scale[i]! + 2 ** -120;
    // A half output rounds once more: half an ulp, relative 2^-11 for f16 (and its subnormal spacing), 2^-8 for bf16.
    if (outputType === "f16") bound += 2 ** -11 * (Math.abs(want[i]!) + bound) + 2 ** -25;
    if (outputType === "bf16") bound += 2 ** -8 * (Math.abs(want[i]!) + bound);
    const err = Math.abs(got[i]! - want[i]!);
    if (!(err <= bound)) assert.fail(`${label}: element ${i} is ${got[i]}, want ${want[i]} (error ${err} > bound ${bound})`);
  }
  return { kernel };
}

const SHAPES: readonly (readonly [number, number, number])[] = [
  [1, 1, 1], [5, 7, 3], [7, 13, 17], [8, 8, 8], [31, 1, 5], [17, 19, 1], [64, 64, 64], [33, 65, 30], [67, 61, 71], [128, 4, 129], [3, 130, 7], [9, 2, 257],
];

/** The four layouts of A and B: [lhsTransposed, rhsTransposed]. */
const TRANSPOSITIONS = [[false, false], [false, true], [true, false], [true, true]] as const;

// Each shape in one layout (the layouts taken in turn: every layout meets three shapes),
// and the shape ragged in m, n and k at once in all four: the layouts change only the
// loads' indexing, whose bounds checks the ragged shape reaches on every side. (Each
// shape compiles a pipeline of its own, 0.1-5 s on SwiftShader: the full cross product
// cost 55 s of CI.)
test("tiled f32 gemm: edges, primes and 1s, every transposition, against a float64 reference", { skip }, async () => {
  const cases = SHAPES.map((shape, i) => [shape, TRANSPOSITIONS[i % TRANSPOSITIONS.length]!] as const);
  for (const layout of TRANSPOSITIONS.slice(1)) cases.push([[67, 61, 71], layout]);
  for (const [[m, n, k], [lhsTransposed, rhsTransposed]] of cases) {
    await checkGemm({ elementType: "f32", batch: 1, m, n, k, lhsTransposed, rhsTransposed }, { kind: "tiled" });
  }
});

// Every tile with vector and with scalar loads; the two layouts alternate between the
// tiles, so that each kind of load meets each layout (three tiles at least).
test("tiled f32 gemm: every tile the adapter fits, vector and scalar loads", { skip }, async () => {
  const tiles = fittingTiles(dev!.limits);
  assert.ok(tiles.length >= 3, "SwiftShader's limits fit the 32x32 to 128x128 tiles");
  for (const [t, tile] of tiles.entries()) {
    for (const vectorLoads of [true, false]) {
      const transposed = vectorLoads === (t % 2 === 0);
      const { kernel } = await checkGemm({ elementType: "f32", batch: 1, m: 132, n: 136, k: 40, lhsTransposed: transposed, rhsTransposed: transposed }, { kind: "tiled", tile, vectorLoads });
      assert.equal(kernel.choice.kind === "tiled" && tileName(kernel.choice.tile), tileName(tile));
      assert.deepEqual(kernel.choice.kind === "tiled" && kernel.choice.vectorLoads, { lhs: vectorLoads, rhs: vectorLoads });
    }
  }
});

// A software adapter's tiles (staging "registers": no workgroup memory, no barrier; rows
// and columns past the edges read clamped, k unrolled by 4 only where it divides k), on
// shapes that are multiples of no tile, batched, in every layout, with vector and scalar
// loads and f16 and bf16 operands; and chosen by default with `staging`.
test("tiles read from storage: odd shapes, batches, every transposition, vector and scalar loads, halves", { skip }, async () => {
  const cases: [GemmSpec, GemmWgslOptions][] = [];
  for (const [t, tile] of SOFTWARE_TILES.entries()) {
    const [lhsTransposed, rhsTransposed] = TRANSPOSITIONS[t % TRANSPOSITIONS.length]!;
    cases.push([{ elementType: "f32", batch: 2, m: 67, n: 61, k: 71, lhsTransposed, rhsTransposed }, { kind: "tiled", tile }]);
    cases.push([{ elementType: "f32", batch: 3, m: 36, n: 68, k: 40, lhsTransposed: !lhsTransposed, rhsTransposed: !rhsTransposed }, { kind: "tiled", tile, vectorLoads: t % 2 === 0 }]);
  }
  const tile = SOFTWARE_TILES[0]!;
  for (const [lhsTransposed, rhsTransposed] of TRANSPOSITIONS) cases.push([{ elementType: "f32", batch: 1, m: 9, n: 132, k: 24, lhsTransposed, rhsTransposed }, { kind: "tiled", tile }]);
  cases.push([{ elementType: "f32", batch: 2, m: 37, n: 29, k: 45 }, { lhsType: "f16", rhsType: "f16", kind: "tiled", tile }]);
  cases.push([{ elementType: "f32", batch: 2, m: 40, n: 36, k: 64, rhsTransposed: true }, { lhsType: "bf16", rhsType: "bf16", outputType: "bf16", kind: "tiled", tile }]);
  cases.push([{ elementType: "f32", batch: 1, m: 21, n: 6, k: 16, lhsTransposed: true }, { lhsType: "f16", rhsType: "bf16", outputType: "f16", kind: "tiled", tile }]);
  for (const [spec, options] of cases) {
    const { kernel } = await checkGemm(spec, options);
    assert.ok(kernel.choice.kind === "tiled" && kernel.choice.tile.staging === "registers");
    assert.doesNotMatch(kernel.code, /var<workgroup>|workgroupBarrier/, "no workgroup memory, no barrier");
  }
  // The default choice for staging "registers": the largest such tile that still gives enough workgroups.
  const chosen = await checkGemm({ elementType: "f32", batch: 1, m: 128, n: 256, k: 20 }, { staging: "registers" });
  assert.equal(chosen.kernel.choice.kind === "tiled" && tileName(chosen.kernel.choice.tile), tileName(SOFTWARE_TILES[0]!));
  const small = await checkGemm({ elementType: "f32", batch: 1, m: 30, n: 50, k: 7 }, { staging: "registers" });
  assert.equal(small.kernel.choice.kind === "tiled" && tileName(small.kernel.choice.tile), tileName(SOFTWARE_TILES.at(-1)!));
  // Without the option (a GPU's choice), the staged tiles as before.
  const staged = gemmKernel({ elementType: "f32", batch: 1, m: 128, n: 256, k: 20 }, dev!.limits);
  assert.ok(!isDeclined(staged) && staged.choice.kind === "tiled" && staged.choice.tile.staging === undefined && /workgroupBarrier/.test(staged.code));
});

test("batched gemm: each batch's matrices from their own offsets", { skip }, async () => {
  await checkGemm({ elementType: "f32", batch: 3, m: 20, n: 12, k: 9 }, { kind: "tiled" });
  await checkGemm({ elementType: "f32", batch: 5, m: 17, n: 33, k: 16, lhsTransposed: true }, { kind: "tiled" });
  await checkGemm({ elementType: "f32", batch: 2, m: 3, n: 40, k: 24, rhsTransposed: true });
  await checkGemm({ elementType: "f32", batch: 4, m: 9, n: 1, k: 10 });
});

// Each shape with B in both layouts: A's layout and the loads (scalar ones where the
// layout would allow vectors, for the layouts A and B share) taken in turn from the six
// combinations, so that each meets several shapes (one pipeline per case: the full cross
// product cost 42 s of CI on SwiftShader).
test("skinny gemm (few rows, or one column): both layouts of B, vectors and scalars, against a float64 reference", { skip }, async () => {
  const byLayoutOfB = [false, true].map((rhsTransposed) => [false, true].flatMap((lhsTransposed) =>
    (lhsTransposed === rhsTransposed ? [true, false] : [true]).map((vectorLoads) => ({ lhsTransposed, rhsTransposed, vectorLoads }))));
  const shapes = [[1, 1, 1], [1, 256, 300], [1, 257, 64], [3, 37, 1000], [4, 64, 4], [2, 5, 2], [9, 1, 13], [100, 1, 64]] as const;
  for (const [i, [m, n, k]] of shapes.entries()) {
    for (const combinations of byLayoutOfB) {
      const { lhsTransposed, rhsTransposed, vectorLoads } = combinations[i % combinations.length]!;
      const { kernel } = await checkGemm({ elementType: "f32", batch: 1, m, n, k, lhsTransposed, rhsTransposed }, { vectorLoads });
      assert.equal(kernel.choice.kind, "skinny", `m = ${m}, n = ${n} takes the skinny kernel`);
    }
  }
});

test("skinny gemm: a wide B is shared out in narrower column blocks, k split further", { skip }, async () => {
  const { kernel } = await checkGemm({ elementType: "f32", batch: 1, m: 2, n: 4096, k: 24 });
  // 64 vec4 columns a workgroup would make 16 workgroups; 16 vec4s make 64, with 16 slices of k.
  assert.deepEqual(kernel.choice, { kind: "skinny", columnsPerWorkgroup: 64, depthSlices: 16, swapped: false, vectorLoads: true });
});

test("empty products: k = 0 writes zeros; m or n = 0 dispatches nothing", { skip }, async () => {
  for (const [kind, staging] of [["tiled", "workgroup"], ["tiled", "registers"], ["skinny", "workgroup"]] as const) {
    const spec: GemmSpec = { elementType: "f32", batch: 2, m: 3, n: 5, k: 0 };
    const kernel = gemmKernel(spec, dev!.limits, { kind, staging });
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    // Poison the output first: the kernel must write every element.
    const bytes = await runOnce(dev!, kernel, new Map([[2, new Float32Array(30).fill(Number.NaN)]]));
    assert.deepEqual(Array.from(new Float32Array(bytes.buffer, 0, 30)), new Array(30).fill(0), `${kind} ${staging}`);
  }
  const empty = gemmKernel({ elementType: "f32", batch: 1, m: 0, n: 7, k: 3 }, dev!.limits);
  assert.ok(!isDeclined(empty) && empty.dispatch[0] === 0);
});

test("f16 inputs (packed pairs, unpack2x16float) accumulate in f32; an f16 output rounds once at the end", { skip }, async () => {
  await checkGemm({ elementType: "f32", batch: 1, m: 37, n: 29, k: 45 }, { lhsType: "f16", rhsType: "f16", kind: "tiled", vectorLoads: false });
  await checkGemm({ elementType: "f32", batch: 2, m: 40, n: 36, k: 64, rhsTransposed: true }, { lhsType: "f16", rhsType: "f16", kind: "tiled" });
  await checkGemm({ elementType: "f32", batch: 1, m: 1, n: 64, k: 33 }, { lhsType: "f16", rhsType: "f16" });
  await checkGemm({ elementType: "f32", batch: 1, m: 3, n: 17, k: 64, lhsTransposed: true, rhsTransposed: true }, { lhsType: "f16", rhsType: "f16" });
  await checkGemm({ elementType: "f32", batch: 1, m: 70, n: 1, k: 12 }, { lhsType: "f16", rhsType: "f16" });
  // A sum of 64 f16 products keeps f32 precision: far beyond what f16 accumulation allows.
  await checkGemm({ elementType: "f32", batch: 1, m: 20, n: 24, k: 64 }, { lhsType: "f16", rhsType: "f16", outputType: "f16" });
  await checkGemm({ elementType: "f32", batch: 3, m: 5, n: 8, k: 7, lhsTransposed: true }, { lhsType: "f16", rhsType: "f16", outputType: "f16" });
  // n not a multiple of 4: stored by pairs of columns (n even; or n odd in a single row, its last word half past C).
  await checkGemm({ elementType: "f32", batch: 2, m: 9, n: 6, k: 16 }, { lhsType: "f16", rhsType: "f16", outputType: "f16" });
});

// bf16 pairs widened by shifts (exact), as the f16 cases above: the tiled kernel's scalar
// and vector loads, the skinny kernel both ways, operands of mixed types (the shape
// rules' dot of f32 and bf16, or of f16 and bf16), a bf16 result rounded once.
test("bf16 inputs (packed pairs, widened by shifts) accumulate in f32, mixed with f32 and f16 operands; a bf16 output rounds once at the end", { skip }, async () => {
  await checkGemm({ elementType: "f32", batch: 1, m: 37, n: 29, k: 45 }, { lhsType: "bf16", rhsType: "bf16", kind: "tiled", vectorLoads: false });
  await checkGemm({ elementType: "f32", batch: 2, m: 40, n: 36, k: 64, rhsTransposed: true }, { lhsType: "bf16", rhsType: "bf16", outputType: "bf16" });
  await checkGemm({ elementType: "f32", batch: 1, m: 3, n: 17, k: 64, lhsTransposed: true, rhsTransposed: true }, { lhsType: "f32", rhsType: "bf16" });
  await checkGemm({ elementType: "f32", batch: 1, m: 70, n: 1, k: 12 }, { lhsType: "bf16", rhsType: "f16" });
  await checkGemm({ elementType: "f32", batch: 1, m: 1, n: 5, k: 40 }, { lhsType: "bf16", rhsType: "bf16", outputType: "bf16" });
});

test("an epilogue hook stores the fused result: bias add + relu", { skip }, async () => {
  for (const [m, n, k, kind, staging] of [[19, 23, 17, "tiled", "workgroup"], [19, 23, 17, "tiled", "registers"], [2, 50, 40, "skinny", "workgroup"], [30, 1, 8, "skinny", "workgroup"]] as const) {
    const spec: GemmSpec = { elementType: "f32", batch: 2, m, n, k };
    const a = randomHalves(2 * m * k), b = randomHalves(2 * k * n), bias = randomHalves(n);
    const kernel = gemmKernel(spec, dev!.limits, {
      kind, staging,
      epilogue: {
        declarations: "@group(0) @binding(3) var<storage, read> bias: array<f32>;",
        bindings: [{ binding: 3, name: "bias", role: "epilogue", access: "read", byteSize: 4 * n }],
        store: ({ value, col, index }) => `out[${index}] = max(${value} + bias[${col}], 0.0);`,
      },
    });
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    assert.equal(kernel.choice.kind, kind);
    const bytes = await runOnce(dev!, kernel, new Map<number, ArrayBufferView>([[0, a], [1, b], [3, bias]]));
    const got = new Float32Array(bytes.buffer, 0, 2 * m * n);
    const want = gemmReference(spec, a, b);
    const scale = absoluteReference(spec, a, b);
    let positives = 0;
    for (let i = 0; i < want.length; i++) {
      const exact = Math.max(want[i]! + bias[i % n]!, 0);
      if (exact > 0) positives++;
      const bound = ((k + 1) * 2 ** -24) * (scale[i]! + Math.abs(bias[i % n]!)) * 1.01;
      assert.ok(Math.abs(got[i]! - exact) <= bound, `${kind} ${m}x${n}x${k}: element ${i} is ${got[i]}, want ${exact}`);
    }
    assert.ok(positives > 0 && positives < want.length, "the relu clamps some elements and passes others");
  }
});

test("what the kernels refuse, and why", { skip }, () => {
  const f64 = gemmKernel({ elementType: "f64", batch: 1, m: 4, n: 4, k: 4 }, dev!.limits);
  assert.ok(isDeclined(f64) && /no f64/.test(f64.declined), JSON.stringify(f64));
  const oddHalf = gemmKernel({ elementType: "f32", batch: 1, m: 8, n: 5, k: 4 }, dev!.limits, { outputType: "f16" });
  // A word of C would hold two rows' elements: stored element by element, which needs the backend's atomic device memory.
  assert.ok(isDeclined(oddHalf) && /f16 output would be stored element by element, which needs memory "device"/.test(oddHalf.declined), JSON.stringify(oddHalf));
  assert.throws(() => gemmKernel({ elementType: "f32", batch: 1, m: -1, n: 4, k: 4 }, dev!.limits), CompileError);
  const small = { ...dev!.limits, maxStorageBufferBindingSize: 1024 };
  const big = gemmKernel({ elementType: "f32", batch: 1, m: 64, n: 64, k: 64 }, small);
  assert.ok(isDeclined(big) && /maxStorageBufferBindingSize/.test(big.declined));
  const cramped = { ...dev!.limits, maxComputeWorkgroupStorageSize: 1024 };
  const none = gemmKernel({ elementType: "f32", batch: 1, m: 64, n: 64, k: 64 }, cramped);
  assert.ok(isDeclined(none) && /no tile fits/.test(none.declined));
});
