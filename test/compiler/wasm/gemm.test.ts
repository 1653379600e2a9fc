import { test } from "node:test";
import assert from "node:assert/strict";
import { emitGemmKernel } from "../../../src/compiler/wasm/gemm.js";
import { gemmSpecOfDot, gemmTiling, packB, type GemmSpec, type GemmTiling } from "../../../src/compiler/kernel/gemm_plan.js";
import { WASM_GEMM_TARGET } from "../../../src/compiler/wasm/gemm_microkernel.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import type { WasmTarget } from "../../../src/compiler/wasm/kernel.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { rng } from "../../support/prng.js";
import { gemmReference } from "../../support/kernel_cases.js";
import { arrayShape, dotGeneral, Literal, parameter, XlaBuilder, type DotDimensionNumbers } from "../../../src/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import type { Instruction } from "../../../src/ir/computation.js";
import { runKernel } from "./kernel_harness.js";

const random = rng(7);

/** `constantB`: the kernel must ask for B pre-packed (packedOperand), and gets it packed by packB. */
function checkGemm(spec: GemmSpec, target: WasmTarget = detectWasmTarget(), splits = 1, tiling: Partial<GemmTiling> = {}, constantB = false): void {
  const F = spec.elementType === "f32" ? Float32Array : Float64Array;
  const a = new F(spec.batch * spec.m * spec.k).map(() => random() * 2 - 1);
  const b = new F(spec.batch * spec.k * spec.n).map(() => random() * 2 - 1);
  const kernel = emitGemmKernel(spec, target, { ...gemmTiling(spec, WASM_GEMM_TARGET), ...tiling }, undefined, constantB);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  assert.ok(WebAssembly.validate(kernel.bytes), kernel.name);
  assert.equal(kernel.packedOperand !== undefined, constantB, `${kernel.name}: B pre-packed`);
  const bRead = kernel.packedOperand === undefined ? b : packB(b, kernel.packedOperand.layout);
  const [bytes] = runKernel(kernel, target, [a, bRead], [spec.batch * spec.m * spec.n * F.BYTES_PER_ELEMENT], splits);
  const got = new F(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, spec.batch * spec.m * spec.n);
  const want = gemmReference(spec, a, b);
  // f32 accumulation over k terms of magnitude <= 1: error grows like k * 2^-24.
  const eps = spec.elementType === "f32" ? 2 ** -23 : 2 ** -52;
  const tol = 4 * eps * Math.max(spec.k, 1);
  for (let i = 0; i < want.length; i++) {
    const err = Math.abs(got[i]! - want[i]!);
    if (!(err <= tol * Math.max(1, Math.sqrt(spec.k)))) {
      assert.fail(`${kernel.name}: element ${i} is ${got[i]}, want ${want[i]} (err ${err})`);
    }
  }
}

test("gemm f32: square, odd, prime and degenerate shapes vs a double-precision reference", () => {
  for (const [m, n, k] of [[1, 1, 1], [4, 8, 4], [5, 9, 3], [7, 13, 17], [1, 37, 29], [31, 1, 5], [17, 19, 1], [64, 64, 64], [33, 65, 300], [130, 70, 513], [3, 1030, 7], [6, 29, 11]]) {
    checkGemm({ elementType: "f32", batch: 1, m: m!, n: n!, k: k! });
  }
});

test("gemm f32: batches and transposed operands", () => {
  for (const [batch, m, n, k] of [[3, 5, 7, 9], [2, 16, 8, 33], [4, 1, 12, 5], [1, 27, 10, 70]]) {
    for (const lhsTransposed of [false, true]) {
      for (const rhsTransposed of [false, true]) {
        checkGemm({ elementType: "f32", batch: batch!, m: m!, n: n!, k: k!, lhsTransposed, rhsTransposed });
      }
    }
  }
});

test("gemm f64: shapes and transposes", () => {
  for (const [batch, m, n, k] of [[1, 1, 1, 1], [1, 7, 5, 3], [2, 9, 11, 140], [1, 65, 33, 17]]) {
    checkGemm({ elementType: "f64", batch: batch!, m: m!, n: n!, k: k! });
    checkGemm({ elementType: "f64", batch: batch!, m: m!, n: n!, k: k!, lhsTransposed: true, rhsTransposed: true });
  }
});

test("gemm: other tilings, mul + add (fma: false), and split ranges agree with the reference", () => {
  const base = detectWasmTarget();
  for (const tiling of [{ mr: 2, nrVectors: 4 }, { mr: 3, nrVectors: 3, nc: 24 }, { mr: 1, nrVectors: 1, kc: 7, nc: 4 }, { fma: false }]) {
    checkGemm({ elementType: "f32", batch: 2, m: 23, n: 21, k: 260 }, base, 1, tiling);
    checkGemm({ elementType: "f64", batch: 1, m: 9, n: 13, k: 31, rhsTransposed: true }, base, 1, tiling);
  }
  // Calls on disjoint ranges (as threads make them) together compute the whole result.
  checkGemm({ elementType: "f32", batch: 3, m: 13, n: 10, k: 6 }, base, 4);
  checkGemm({ elementType: "f32", batch: 1, m: 50, n: 40, k: 30 }, base, 3);
  // Few rows: the columns are split into chunks as well.
  checkGemm({ elementType: "f32", batch: 1, m: 1, n: 300, k: 50 }, base, 5);
  checkGemm({ elementType: "f32", batch: 2, m: 5, n: 101, k: 9, rhsTransposed: true }, base, 4);
  checkGemm({ elementType: "f64", batch: 1, m: 3, n: 77, k: 20, lhsTransposed: true }, base, 7);
  // Vector-matrix products take their own kernel: odd widths, depths shorter than a sweep
  // of B's rows or not a multiple of it, several column chunks, batches.
  checkGemm({ elementType: "f32", batch: 3, m: 1, n: 1030, k: 7 }, base, 5);
  checkGemm({ elementType: "f32", batch: 1, m: 1, n: 1030, k: 29 }, base, 3);
  checkGemm({ elementType: "f64", batch: 2, m: 1, n: 67, k: 130, lhsTransposed: true }, base, 3);
  checkGemm({ elementType: "f32", batch: 1, m: 1, n: 3, k: 2 }, base, 1);
  // 2-4 rows stream B when it is big (here 2 x 4100 x 1025 f32 = 16.04 MiB).
  for (const m of [2, 3]) checkGemm({ elementType: "f32", batch: 1, m, n: 1025, k: 4100 }, base, 3);
  checkGemm({ elementType: "f64", batch: 1, m: 4, n: 1027, k: 2045, lhsTransposed: true }, base, 2);
  const gemv = emitGemmKernel({ elementType: "f32", batch: 1, m: 1, n: 4096, k: 64 }, base);
  assert.ok(!isDeclined(gemv) && gemv.parallelExtent >= 16, "a matrix-vector product offers parallel units");
});

/** Whether a module's code holds f32x4.relaxed_madd (0xfd, then 0x105 as LEB128). */
const hasRelaxedMadd = (bytes: Uint8Array): boolean => bytes.some((x, i) => x === 0xfd && bytes[i + 1] === 0x85 && bytes[i + 2] === 0x02);

test("gemm: relaxed_madd by default where the engine has relaxed SIMD, mul + add without it or with fma: false", () => {
  const spec: GemmSpec = { elementType: "f32", batch: 1, m: 5, n: 9, k: 2 };
  const emit = (target: WasmTarget, tiling: Partial<GemmTiling>): Uint8Array => {
    const kernel = emitGemmKernel(spec, target, { ...gemmTiling(spec, WASM_GEMM_TARGET), ...tiling });
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    return kernel.bytes;
  };
  const relaxed: WasmTarget = { simd: true, relaxedSimd: true, sharedMemory: false };
  assert.ok(hasRelaxedMadd(emit(relaxed, {})), "relaxed SIMD: fused by default");
  assert.ok(!hasRelaxedMadd(emit(relaxed, { fma: false })), "fma: false: mul + add");
  assert.ok(!hasRelaxedMadd(emit({ ...relaxed, relaxedSimd: false }, {})), "no relaxed SIMD: mul + add");
  // Every C(i, j) = -(1 + 2^-11) * 1 + (1 + 2^-12)^2: the second product, 1 + 2^-11 + 2^-24,
  // rounds to 1 + 2^-11 (a tie, to even), so mul + add gives exactly 0 and a fused
  // multiply-add 2^-24. Rows 0-3 are a full tile, row 4 the last rows' microkernel, columns 8+ an edge tile.
  const base = detectWasmTarget();
  const a = new Float32Array(spec.m * spec.k).map((_, i) => (i % 2 === 0 ? -(1 + 2 ** -11) : 1 + 2 ** -12));
  const b = new Float32Array(spec.k * spec.n).map((_, i) => (i < spec.n ? 1 : 1 + 2 ** -12));
  for (const fma of [undefined, false]) {
    const kernel = emitGemmKernel(spec, base, { ...gemmTiling(spec, WASM_GEMM_TARGET), ...(fma === undefined ? {} : { fma }) });
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    const [bytes] = runKernel(kernel, base, [a, b], [spec.m * spec.n * 4]);
    const got = [...new Float32Array(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, spec.m * spec.n)];
    // The engine chooses whether relaxed_madd fuses: either value, the same in every element.
    const allowed = base.relaxedSimd && fma === undefined ? [0, 2 ** -24] : [0];
    assert.ok(allowed.includes(got[0]!) && got.every((x) => x === got[0]), `fma ${fma}: ${got.join(", ")}`);
  }
});

test("gemm: a constant B is read pre-packed (packB's layout): blocks of k and columns, partial panels, chunks, batches, B transposed", () => {
  const base = detectWasmTarget();
  // k 300 in blocks of 256; n 70 in column blocks of 24 (the last 22: a partial panel).
  checkGemm({ elementType: "f32", batch: 1, m: 23, n: 70, k: 300 }, base, 1, { nc: 24 }, true);
  // Two row tiles: the columns split into chunks too; calls on disjoint ranges.
  checkGemm({ elementType: "f32", batch: 2, m: 9, n: 37, k: 40 }, base, 3, { mr: 5 }, true);
  checkGemm({ elementType: "f64", batch: 2, m: 9, n: 13, k: 31, rhsTransposed: true }, base, 2, {}, true);
  checkGemm({ elementType: "f32", batch: 1, m: 6, n: 5, k: 3, lhsTransposed: true }, base, 1, {}, true);
  // One row of A streams B (two rows where B is past the caches, 16 MiB): a constant one
  // packed into panels of all of k (the last panel partial, k odd, chunks, batches, calls
  // on disjoint ranges); B as stored otherwise. Three or four rows stream B as stored, a
  // constant one too.
  const streamed = (spec: GemmSpec, constantB: boolean): { name: string; packedOperand?: unknown } => {
    const kernel = emitGemmKernel(spec, base, undefined, undefined, constantB);
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    return kernel;
  };
  for (const [batch, m, n, k, splits] of [[1, 1, 64, 10, 1], [1, 1, 1030, 29, 3], [2, 1, 37, 8, 2], [1, 1, 300, 1, 5], [3, 1, 5, 3, 2], [1, 2, 4100, 1024, 3]] as const) {
    checkGemm({ elementType: "f32", batch, m, n, k }, base, splits, {}, true);
    assert.match(streamed({ elementType: "f32", batch, m, n, k }, true).name, /B in panels/);
    assert.doesNotMatch(streamed({ elementType: "f32", batch, m, n, k }, false).name, /B in panels/);
  }
  checkGemm({ elementType: "f64", batch: 2, m: 1, n: 19, k: 7 }, base, 2, {}, true);
  checkGemm({ elementType: "f32", batch: 1, m: 1, n: 21, k: 18, lhsTransposed: true }, base, 2, {}, true);
  const threeRows = streamed({ elementType: "f32", batch: 1, m: 3, n: 4096, k: 1024 }, true);
  assert.ok(threeRows.packedOperand === undefined && !/B in panels/.test(threeRows.name), threeRows.name);
});

test("gemm: 1-4 rows against B stored [n][k] (x·Wᵀ, q·Kᵀ) take dot products of rows: depths and widths off the vector and the group of rows, batches, split ranges", () => {
  const base = detectWasmTarget();
  for (const m of [1, 2, 3, 4]) {
    for (const [batch, n, k] of [[1, 1, 1], [2, 5, 3], [1, 130, 67], [3, 9, 64]]) {
      checkGemm({ elementType: "f32", batch: batch!, m, n: n!, k: k!, rhsTransposed: true }, base, 3);
    }
    checkGemm({ elementType: "f64", batch: 2, m, n: 11, k: 13, rhsTransposed: true }, base, 2);
  }
  // One row of A stored [k][m] is contiguous too.
  checkGemm({ elementType: "f32", batch: 2, m: 1, n: 21, k: 18, lhsTransposed: true, rhsTransposed: true }, base, 2);
  const rowDots = (spec: GemmSpec, constantB = false): { name: string; packedOperand?: unknown } => {
    const kernel = emitGemmKernel(spec, base, undefined, undefined, constantB);
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    return kernel;
  };
  // Attention's q·Kᵀ over a cache of 128: B read in place, never packed (a constant one neither).
  const qk = rowDots({ elementType: "f32", batch: 12, m: 1, n: 128, k: 64, rhsTransposed: true }, true);
  assert.match(qk.name, /row dots/);
  assert.equal(qk.packedOperand, undefined);
  // Five rows, or A stored [k][m] with several rows, go to the packed kernel.
  assert.doesNotMatch(rowDots({ elementType: "f32", batch: 1, m: 5, n: 8, k: 8, rhsTransposed: true }).name, /row dots/);
  assert.doesNotMatch(rowDots({ elementType: "f32", batch: 1, m: 2, n: 8, k: 8, lhsTransposed: true, rhsTransposed: true }).name, /row dots/);
});

test("gemm: k = 0 gives zeros; m = 0 or n = 0 does nothing", () => {
  const target = detectWasmTarget();
  const kernel = emitGemmKernel({ elementType: "f32", batch: 2, m: 3, n: 5, k: 0 }, target);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  const [bytes] = runKernel(kernel, target, [new Float32Array(0), new Float32Array(0)], [2 * 3 * 5 * 4], 2);
  assert.deepEqual([...new Float32Array(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, 30)], Array(30).fill(0));
  const empty = emitGemmKernel({ elementType: "f32", batch: 2, m: 0, n: 5, k: 3 }, target);
  assert.ok(!isDeclined(empty) && empty.parallelExtent === 0);
  const noSimd = emitGemmKernel({ elementType: "f32", batch: 1, m: 2, n: 2, k: 2 }, { ...target, simd: false });
  assert.ok(isDeclined(noSimd));
});

function dotOf(lhsDims: number[], rhsDims: number[], dn: Partial<DotDimensionNumbers>, type: "f32" | "f64" | "s32" = "f32") {
  const b = new XlaBuilder("dot");
  const l = parameter(b, 0, arrayShape(type, lhsDims));
  const r = parameter(b, 1, arrayShape(type, rhsDims));
  const root = dotGeneral(l, r, dn);
  return { computation: b.build(root), dot: root.instruction as Instruction<"dot"> };
}

test("gemmSpecOfDot: matmul, batched, transposed and multi-free-dim forms; others unsupported", () => {
  const spec = (l: number[], r: number[], dn: Partial<DotDimensionNumbers>, type: "f32" | "f64" | "s32" = "f32") => gemmSpecOfDot(dotOf(l, r, dn, type).dot);
  assert.deepEqual(spec([3, 4], [4, 5], { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }),
    { elementType: "f32", batch: 1, m: 3, n: 5, k: 4, lhsTransposed: false, rhsTransposed: false });
  assert.deepEqual(spec([4, 3], [5, 4], { lhsContractingDimensions: [0], rhsContractingDimensions: [1] }, "f64"),
    { elementType: "f64", batch: 1, m: 3, n: 5, k: 4, lhsTransposed: true, rhsTransposed: true });
  assert.deepEqual(spec([2, 6, 3, 4], [2, 6, 4, 5], { lhsBatchDimensions: [0, 1], rhsBatchDimensions: [0, 1], lhsContractingDimensions: [3], rhsContractingDimensions: [2] }),
    { elementType: "f32", batch: 12, m: 3, n: 5, k: 4, lhsTransposed: false, rhsTransposed: false });
  // Several free dimensions collapse: [2,3,4] x [4,5,6] -> m = 6, n = 30.
  assert.deepEqual(spec([2, 3, 4], [4, 5, 6], { lhsContractingDimensions: [2], rhsContractingDimensions: [0] }),
    { elementType: "f32", batch: 1, m: 6, n: 30, k: 4, lhsTransposed: false, rhsTransposed: false });
  // Vector . vector and matrix . vector.
  assert.deepEqual(spec([7], [7], { lhsContractingDimensions: [0], rhsContractingDimensions: [0] }),
    { elementType: "f32", batch: 1, m: 1, n: 1, k: 7, lhsTransposed: false, rhsTransposed: false });
  assert.deepEqual(spec([3, 7], [7], { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }),
    { elementType: "f32", batch: 1, m: 3, n: 1, k: 7, lhsTransposed: false, rhsTransposed: false });
  const declined = (x: GemmSpec | { declined: string }) => assert.ok("declined" in x, JSON.stringify(x));
  declined(spec([3, 4], [4, 5], { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }, "s32"));
  declined(spec([3, 4, 2], [4, 2, 5], { lhsContractingDimensions: [1, 2], rhsContractingDimensions: [0, 1] }));
  declined(spec([3, 4, 2], [4, 5], { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }));
  declined(spec([3, 2, 4], [2, 4, 5], { lhsBatchDimensions: [1], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1] }));
});

test("gemm kernels of dot_general forms match the interpreter", () => {
  const target = detectWasmTarget();
  const cases: [number[], number[], Partial<DotDimensionNumbers>][] = [
    [[5, 7], [7, 9], { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }],
    [[7, 5], [9, 7], { lhsContractingDimensions: [0], rhsContractingDimensions: [1] }],
    [[2, 3, 6, 4], [2, 3, 4, 5], { lhsBatchDimensions: [0, 1], rhsBatchDimensions: [0, 1], lhsContractingDimensions: [3], rhsContractingDimensions: [2] }],
    [[2, 4, 6], [2, 5, 4], { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [1], rhsContractingDimensions: [2] }],
    [[3, 2, 11], [11, 4, 2], { lhsContractingDimensions: [2], rhsContractingDimensions: [0] }],
  ];
  for (const [l, r, dn] of cases) {
    const { computation, dot } = dotOf(l, r, dn);
    const spec = gemmSpecOfDot(dot);
    if ("declined" in spec) throw new Error(spec.declined);
    const lhs = new Float32Array(l.reduce((p, d) => p * d, 1)).map(() => random() * 2 - 1);
    const rhs = new Float32Array(r.reduce((p, d) => p * d, 1)).map(() => random() * 2 - 1);
    const want = evaluate(computation, [Literal.fromValues("f32", l, lhs), Literal.fromValues("f32", r, rhs)]).toNumbers();
    const kernel = emitGemmKernel(spec, target);
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    const [bytes] = runKernel(kernel, target, [lhs, rhs], [want.length * 4], 2);
    const got = new Float32Array(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, want.length);
    want.forEach((w, i) => assert.ok(Math.abs(got[i]! - w) <= 1e-5 * Math.max(1, Math.abs(w)), `${kernel.name} element ${i}: ${got[i]} vs ${w}`));
  }
});

test("gemm: one or two rows of A streaming B stored [k][n], as stored or packed into panels, add each element's products in order of k, mul + add: bit for bit the interpreter's stablehlo-reference sums", () => {
  const target = detectWasmTarget();
  // As stored: calls over whole rows of B (one row a sweep, a line a step) and over part
  // of each (calls on disjoint ranges, as threads make them; rows wider than a call
  // merges: eight rows a sweep); widths that end in whole lines only, in a single vector
  // after them, in scalars, or in both; depths off either sweep; batches; two rows where
  // B is past the caches. Packed (a constant B): the same, each panel's sums kept in
  // registers over all of k (depths odd and even, the last panel partial).
  const cases: [number, number, number, number, "f32" | "f64", number][] = [
    [1, 1, 3072, 40, "f32", 1], [1, 1, 1030, 29, "f32", 1], [1, 1, 1030, 29, "f32", 3], [2, 1, 23, 17, "f32", 2], [1, 1, 3, 5, "f32", 1],
    [3, 1, 64, 9, "f32", 4], [1, 1, 300, 50, "f32", 5], [1, 1, 4100, 11, "f32", 1], [1, 1, 37, 31, "f64", 1], [1, 1, 37, 31, "f64", 2], [2, 1, 1030, 7, "f64", 3],
    [1, 2, 4100, 1024, "f32", 3],
  ];
  for (const [batch, m, n, k, type, splits] of cases) {
    for (const constantB of [false, true]) {
      const lhsDims = batch > 1 ? [batch, m, k] : [m, k];
      const rhsDims = batch > 1 ? [batch, k, n] : [k, n];
      const { computation, dot } = dotOf(lhsDims, rhsDims, batch > 1
        ? { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1] }
        : { lhsContractingDimensions: [1], rhsContractingDimensions: [0] }, type);
      const spec = gemmSpecOfDot(dot);
      if ("declined" in spec) throw new Error(spec.declined);
      const F = type === "f32" ? Float32Array : Float64Array;
      // Values whose products and sums round (not small integers), so that any other order or a fused step shows.
      const a = new F(batch * m * k).map(() => random() * 2 - 1);
      const b = new F(batch * k * n).map(() => random() * 2 - 1);
      const kernel = emitGemmKernel(spec, target, undefined, undefined, constantB);
      if (isDeclined(kernel)) throw new Error(kernel.declined);
      assert.doesNotMatch(kernel.name, /row dots/);
      assert.equal(/B in panels/.test(kernel.name), constantB, kernel.name);
      const want = evaluate(computation, [Literal.fromValues(type, lhsDims, a), Literal.fromValues(type, rhsDims, b)],
        { accumulation: "stablehlo-reference" }).toNumbers();
      const bRead = kernel.packedOperand === undefined ? b : packB(b, kernel.packedOperand.layout);
      const [bytes] = runKernel(kernel, target, [a, bRead], [want.length * F.BYTES_PER_ELEMENT], splits);
      const got = [...new F(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, want.length)];
      const differ = got.flatMap((g, i) => (Object.is(g, want[i]) ? [] : [i]));
      assert.equal(differ.length, 0, `${kernel.name}: ${differ.length} element(s) differ, first ${differ[0]}: ${got[differ[0]!]} vs ${want[differ[0]!]}`);
      if (n === 3072) {
        // The comparison sees one rounding: the interpreter's fused steps (its default) give other bits here.
        const fused = evaluate(computation, [Literal.fromValues(type, lhsDims, a), Literal.fromValues(type, rhsDims, b)]).toNumbers();
        assert.ok(fused.some((x, i) => !Object.is(x, got[i])), `${kernel.name}: fused multiply-adds would differ somewhere`);
      }
    }
  }
});

test("gemm: one row of A sweeping B as stored splits only into parts of at least 4 KiB of each row of B (gemvMinPartUnits); B in panels, several rows and B [n][k] any split", () => {
  const target: WasmTarget = { simd: true, relaxedSimd: false, sharedMemory: true };
  const kernelOf = (spec: GemmSpec, constantB = false) => {
    const kernel = emitGemmKernel(spec, target, gemmTiling(spec, WASM_GEMM_TARGET), undefined, constantB);
    if (isDeclined(kernel)) throw new Error(kernel.declined);
    return kernel;
  };
  // Parts the pool cuts a run into at two threads (thread_pool.ts: whole parts of at least minPartUnits units each).
  const parts = (kernel: ReturnType<typeof kernelOf>): number => Math.max(1, Math.min(2, Math.floor(kernel.parallelExtent / (kernel.minPartUnits ?? 1))));
  const row = (k: number, n: number, elementType: "f32" | "f64" = "f32"): GemmSpec => ({ elementType, batch: 1, m: 1, n, k });
  // GPT-2's products of one row: 768 and 3072 columns' parts fall under 4 KiB a row (one thread), 2304 and 3072 do not.
  for (const [k, n, want] of [[768, 768, 1], [3072, 768, 1], [768, 2304, 2], [768, 3072, 2], [768, 1024, 1], [768, 2048, 2]] as const) {
    const kernel = kernelOf(row(k, n));
    assert.doesNotMatch(kernel.name, /B in panels/);
    assert.equal(parts(kernel), want, `${k}x${n}`);
    // Whatever the split, a part's columns cover at least 4 KiB of each row of B.
    const chunk = n / kernel.parallelExtent;
    if (want === 2) assert.ok((kernel.minPartUnits ?? 1) * Math.floor(chunk) * 4 >= 4096, `${k}x${n}`);
  }
  // f64: the same bytes, half the columns.
  assert.equal(parts(kernelOf(row(768, 1024, "f64"))), 2);
  assert.equal(parts(kernelOf(row(768, 768, "f64"))), 1);
  // B packed in panels: each part whole panels, one run of B; two rows of A; B stored [n][k]: any split.
  for (const kernel of [kernelOf(row(768, 768), true), kernelOf({ elementType: "f32", batch: 1, m: 2, n: 768, k: 768 }),
    kernelOf({ elementType: "f32", batch: 1, m: 1, n: 768, k: 768, rhsTransposed: true })]) {
    assert.equal(kernel.minPartUnits ?? 1, 1, kernel.name);
    assert.equal(parts(kernel), 2, kernel.name);
  }
});
