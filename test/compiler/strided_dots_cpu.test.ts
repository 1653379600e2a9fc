// Dots the CPU backends' packed GEMMs read in place (native/gemm_c.ts
// nativeStridedGemmOf, wasm/gemm.ts wasmStridedGemmOf): batch dimensions not leading,
// contracting dimensions first or in the middle, attention's heads [s, h, d] as JAX
// exports them. The CPU pipeline keeps such a dot as it is (plan.ts cpuDotDecomposer):
// one GEMM kernel, no transpose kernels before it. Each result, native (one and two
// threads) and wasm, against the interpreter within the dot bound (2 gamma(k) sum |a||b|:
// the kernels fuse their multiply-adds and add blocks of k in order, the interpreter
// rounds each step), f64 within its own gamma; and the kernel counts against the plain
// dot decomposer's pipeline, so that a planner change that brings the transposes back
// fails here. A dot whose one use transposes it is stored transposed by both CPU GEMMs
// (program.ts), checked the same way, and the WebAssembly kernel alone over split ranges
// (as threads call it) without a C compiler.

import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { compile, compileSync, WasmDevice } from "../../src/compiler/index.js";
import { defaultPipeline } from "../../src/compiler/plan.js";
import { stridedBatchOffset } from "../../src/compiler/native/gemm_c.js";
import { nativeToolchain } from "../../src/compiler/native/toolchain.js";
import { cpuStridedGemmOf } from "../../src/compiler/kernel/gemm_plan.js";
import { emitGemmKernel, emitStridedGemmKernel } from "../../src/compiler/wasm/gemm.js";
import { detectWasmTarget } from "../../src/compiler/wasm/features.js";
import { isDeclined } from "../../src/compiler/kernel/declined.js";
import { runKernel } from "./wasm/kernel_harness.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../src/index.js";
import type { Computation, Instruction } from "../../src/ir/computation.js";
import { Literal } from "../../src/types/literal.js";
import { elementCount, type ArrayShape } from "../../src/types/shape.js";
import { needsCompiler } from "./native/native_support.js";

/** Deterministic values in [-1, 1) with a few exact zeros. */
function values(count: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s >>> 8) % 97 === 0 ? 0 : (s >>> 8) / 2 ** 23 - 1;
  });
}

function argumentsOf(c: Computation): { args: Literal[]; magnitudes: Literal[] } {
  const args = c.parameters.map((p, i) => {
    const s = p.shape as ArrayShape;
    return Literal.fromValues(s.elementType, s.dimensions, values(elementCount(s), 5 + 13 * i));
  });
  const magnitudes = args.map((a) => Literal.fromValues((a.shape as ArrayShape).elementType, (a.shape as ArrayShape).dimensions, a.values().map((v) => Math.abs(Number(v)))));
  return { args, magnitudes };
}

/** Kernels and the dump of `c` compiled for `backend`, one thread (with the plain dot decomposer's pipeline: `plain`). */
function kernelsOf(c: Computation, backend: "native" | "wasm", plain = false): { kernels: number; dump: string } {
  const exe = compileSync(c, { backend, threads: 1, ...(plain ? { passes: defaultPipeline() } : {}) });
  try {
    const dump = exe.dump();
    const m = / (\d+) kernel\(s\)/.exec(dump);
    assert.ok(m !== null, dump);
    return { kernels: Number(m[1]), dump };
  } finally {
    exe.delete();
  }
}

/** Whether a result is within the dot bound for `depth` of the interpreter's (`scale`: the sums of |a||b|). */
function assertWithinDotBound(got: readonly number[], want: readonly number[], scale: readonly number[], depth: number, u: number, what: string): void {
  const gamma = (depth * u) / (1 - depth * u);
  assert.equal(got.length, want.length, what);
  for (let i = 0; i < want.length; i++) {
    const bound = 2 * gamma * scale[i]! + u;
    assert.ok(Math.abs(got[i]! - want[i]!) <= bound, `${what}, element ${i}: ${got[i]}, want ${want[i]} (bound ${bound})`);
  }
}

/**
 * Runs StableHLO `text` (one dot_general) natively on one and two threads and on wasm;
 * checks each is one strided GEMM and no step interpreted, and that each result agrees
 * with the interpreter within the dot bound for `depth` (the contraction's length).
 * Returns the native dump.
 */
function checkInPlace(t: TestContext, text: string, depth: number): string | undefined {
  if (!needsCompiler(t)) return undefined;
  const c = parseStableHlo(text).entry;
  const { args, magnitudes } = argumentsOf(c);
  const want = evaluate(c, args);
  const scale = evaluate(c, magnitudes).values().map(Number);
  const type = (want.shape as ArrayShape).elementType;
  const u = type === "f64" ? 2 ** -53 : 2 ** -24;
  let dump = "";
  for (const [backend, threads] of [["native", 1], ["native", 2], ["wasm", 1]] as const) {
    const exe = compileSync(c, { backend, threads });
    try {
      if (backend === "native") dump = exe.dump();
      const text = exe.dump();
      assert.deepEqual(exe.program.steps.filter((s) => s.kind === "interpret").map((s) => s.kind), [], text);
      assert.match(text, / 1 kernel\(s\)/, text);
      assert.match(text, /strided \(A /, text);
      assertWithinDotBound(exe.run(args).values().map(Number), want.values().map(Number), scale, depth, u, `${backend}, threads ${threads}\n${text}`);
    } finally {
      exe.delete();
    }
  }
  return dump;
}

test("attention's scores q·kᵀ over [s, h, d], batch h, read in place (B stored [n][k], rows h·d apart)", (t) => {
  const dump = checkInPlace(t, `func.func @main(%q: tensor<64x4x32xf32>, %k: tensor<64x4x32xf32>) -> tensor<4x64x64xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [1] x [1], contracting_dims = [2] x [2] : (tensor<64x4x32xf32>, tensor<64x4x32xf32>) -> tensor<4x64x64xf32>
  return %0 : tensor<4x64x64xf32>
}`, 32);
  // A row i at i·h·d, B (p, j) at j·h·d + p: rows 128 apart, k contiguous on both sides.
  if (dump !== undefined) assert.match(dump, /strided \(A 128,1 B 1,128\)/, dump);
});

test("attention's values p·v: probabilities [h, s, s] against v [s, h, d], B's rows h·d apart", (t) => {
  checkInPlace(t, `func.func @main(%p: tensor<4x48x48xf32>, %v: tensor<48x4x40xf32>) -> tensor<4x48x40xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<4x48x48xf32>, tensor<48x4x40xf32>) -> tensor<4x48x40xf32>
  return %0 : tensor<4x48x40xf32>
}`, 48);
});

test("contracting dimension first on the lhs and batch last: A k-major with its rows 3 apart, f64, odd sizes past the tiles", (t) => {
  const dump = checkInPlace(t, `func.func @main(%a: tensor<37x29x3xf64>, %b: tensor<3x37x23xf64>) -> tensor<3x29x23xf64> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [0], contracting_dims = [0] x [1] : (tensor<37x29x3xf64>, tensor<3x37x23xf64>) -> tensor<3x29x23xf64>
  return %0 : tensor<3x29x23xf64>
}`, 37);
  // A(i, p) at 3i + 87p: packed column by column, neither stride 1.
  if (dump !== undefined) assert.match(dump, /strided \(A 3,87 B 23,1\)/, dump);
});

test("two batch axes apart on the lhs (not merged), k longer than a block of kc", (t) => {
  checkInPlace(t, `func.func @main(%a: tensor<2x40x3x600xf32>, %b: tensor<2x3x600x24xf32>) -> tensor<2x3x40x24xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0, 2] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x40x3x600xf32>, tensor<2x3x600x24xf32>) -> tensor<2x3x40x24xf32>
  return %0 : tensor<2x3x40x24xf32>
}`, 600);
});

/**
 * Runs StableHLO `text` (a dot whose one use transposes it, maybe reshaped after) on wasm
 * (one thread, and a device of two threads) and, where a C compiler builds modules,
 * natively on one and two threads, against the interpreter within the dot bound; checks
 * each plan is one kernel storing the product transposed (the transpose's kernel left out:
 * program.ts, kernel/transposed_dots.ts).
 */
async function checkTransposedAfter(text: string, depth: number): Promise<void> {
  const c = parseStableHlo(text).entry;
  const { args, magnitudes } = argumentsOf(c);
  const want = evaluate(c, args);
  const scale = evaluate(c, magnitudes).values().map(Number);
  const u = (want.shape as ArrayShape).elementType === "f64" ? 2 ** -53 : 2 ** -24;
  const twoThreads = await WasmDevice.create({ threads: 2 });
  const native = typeof nativeToolchain() === "string" ? [] : [["native", 1], ["native", 2]] as const;
  try {
    for (const [backend, threads] of [["wasm", 1], ["wasm", 2], ...native] as const) {
      const exe = backend === "wasm" && threads === 2 ? await compile(c, { device: twoThreads }) : compileSync(c, { backend, threads });
      try {
        const dump = exe.dump();
        assert.deepEqual(exe.program.steps.filter((s) => s.kind === "interpret").map((s) => s.kind), [], dump);
        assert.match(dump, / 1 kernel\(s\)/, dump);
        assert.match(dump, /stored transposed 1,0,2/, dump);
        assertWithinDotBound(exe.run(args).values().map(Number), want.values().map(Number), scale, depth, u, `${backend}, threads ${threads}\n${dump}`);
      } finally {
        exe.delete();
      }
    }
  } finally {
    await twoThreads.close();
  }
}

/**
 * The WebAssembly GEMM of the dot in StableHLO `text` (its one use a transpose) storing
 * the transposed product itself, called over [0, parallelExtent) in `splits` parts as
 * threads call it, against the interpreter's transposed result.
 */
function checkWasmTransposedKernel(text: string, splits: number): void {
  const c = parseStableHlo(text).entry;
  const dot = c.instructions.find((i) => i.opcode === "dot") as Instruction<"dot">;
  const transpose = c.instructions.find((i) => i.opcode === "transpose") as Instruction<"transpose">;
  const target = detectWasmTarget();
  const kernel = emitStridedGemmKernel(dot, target, transpose.attrs.permutation);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  assert.match(kernel.name, /stored transposed/);
  assert.ok(kernel.parallelExtent >= splits, `${kernel.name}: ${kernel.parallelExtent} units`);
  const { args, magnitudes } = argumentsOf(c);
  const want = evaluate(c, args);
  const type = (want.shape as ArrayShape).elementType;
  const F = type === "f64" ? Float64Array : Float32Array;
  const operands = args.map((a) => F.from(a.values().map(Number)));
  const [bytes] = runKernel(kernel, target, operands, [want.values().length * F.BYTES_PER_ELEMENT], splits);
  const got = Array.from(new F(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, want.values().length));
  const depth = (dot.operands[0]!.shape as ArrayShape).dimensions[dot.attrs.dimensionNumbers.lhsContractingDimensions[0]!]!;
  assertWithinDotBound(got, want.values().map(Number), evaluate(c, magnitudes).values().map(Number), depth, type === "f64" ? 2 ** -53 : 2 ** -24, `${kernel.name}, ${splits} parts`);
}

test("the heads' outputs p·v [h, s, d] transposed back to [s, h·d]: the CPU GEMMs store them so (GEMM-form dot, as GPT-2's)", async () => {
  await checkTransposedAfter(`func.func @main(%p: tensor<4x40x40xf32>, %v: tensor<4x40x24xf32>) -> tensor<40x96xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x40x40xf32>, tensor<4x40x24xf32>) -> tensor<4x40x24xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<4x40x24xf32>) -> tensor<40x4x24xf32>
  %2 = stablehlo.reshape %1 : (tensor<40x4x24xf32>) -> tensor<40x96xf32>
  return %2 : tensor<40x96xf32>
}`, 40);
});

test("a strided dot (v read [s, h, d] in place) whose product is transposed after it, no reshape", async () => {
  await checkTransposedAfter(`func.func @main(%p: tensor<3x37x37xf32>, %v: tensor<37x3x20xf32>) -> tensor<37x3x20xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<3x37x37xf32>, tensor<37x3x20xf32>) -> tensor<3x37x20xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<3x37x20xf32>) -> tensor<37x3x20xf32>
  return %1 : tensor<37x3x20xf32>
}`, 37);
});

test("a product stored transposed, large enough that two threads share it (f32), and one of odd sizes in f64", async () => {
  await checkTransposedAfter(`func.func @main(%p: tensor<4x128x128xf32>, %v: tensor<4x128x48xf32>) -> tensor<128x192xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x128x128xf32>, tensor<4x128x48xf32>) -> tensor<4x128x48xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<4x128x48xf32>) -> tensor<128x4x48xf32>
  %2 = stablehlo.reshape %1 : (tensor<128x4x48xf32>) -> tensor<128x192xf32>
  return %2 : tensor<128x192xf32>
}`, 128);
  await checkTransposedAfter(`func.func @main(%p: tensor<3x29x45xf64>, %v: tensor<45x3x19xf64>) -> tensor<29x3x19xf64> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<3x29x45xf64>, tensor<45x3x19xf64>) -> tensor<3x29x19xf64>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<3x29x19xf64>) -> tensor<29x3x19xf64>
  return %1 : tensor<29x3x19xf64>
}`, 45);
});

test("the WebAssembly GEMM storing a product transposed, over split ranges: partial tiles and panels, chunks of columns, f64", () => {
  // Partial row tiles and a partial panel (n = 20): the edge tiles go through the tile buffer, stored rows 60 apart.
  checkWasmTransposedKernel(`func.func @main(%p: tensor<3x37x37xf32>, %v: tensor<37x3x20xf32>) -> tensor<37x3x20xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [1], contracting_dims = [2] x [0] : (tensor<3x37x37xf32>, tensor<37x3x20xf32>) -> tensor<3x37x20xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<3x37x20xf32>) -> tensor<37x3x20xf32>
  return %1 : tensor<37x3x20xf32>
}`, 5);
  // Few row tiles: the columns are split into chunks too, each at its own offset in the stored rows.
  checkWasmTransposedKernel(`func.func @main(%p: tensor<2x8x64xf32>, %v: tensor<2x64x256xf32>) -> tensor<8x2x256xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x8x64xf32>, tensor<2x64x256xf32>) -> tensor<2x8x256xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<2x8x256xf32>) -> tensor<8x2x256xf32>
  return %1 : tensor<8x2x256xf32>
}`, 7);
  // f64, k past a block of kc (C accumulated over blocks through its stored rows).
  checkWasmTransposedKernel(`func.func @main(%p: tensor<2x21x700xf64>, %v: tensor<2x700x11xf64>) -> tensor<21x2x11xf64> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x21x700xf64>, tensor<2x700x11xf64>) -> tensor<2x21x11xf64>
  %1 = stablehlo.transpose %0, dims = [1, 0, 2] : (tensor<2x21x11xf64>) -> tensor<21x2x11xf64>
  return %1 : tensor<21x2x11xf64>
}`, 3);
});

test("a product stored transposed is declined where it cannot be: no steps of k, not a permutation, C's rows closer than n", () => {
  const c = parseStableHlo(`func.func @main(%p: tensor<2x8x0xf32>, %v: tensor<2x0x16xf32>) -> tensor<2x8x16xf32> {
  %0 = stablehlo.dot_general %p, %v, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x8x0xf32>, tensor<2x0x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}`).entry;
  const dot = c.root as Instruction<"dot">;
  const target = detectWasmTarget();
  assert.match((cpuStridedGemmOf(dot, [1, 0, 2]) as { declined: string }).declined, /no steps of k/);
  assert.match((emitStridedGemmKernel(dot, target, [1, 0, 2]) as { declined: string }).declined, /no steps of k/);
  assert.match((emitStridedGemmKernel(dot, target, [1, 1, 2]) as { declined: string }).declined, /not a permutation/);
  // The kernel itself, given a layout whose rows overlap: declined, not written over.
  const spec = { elementType: "f32", batch: 1, m: 8, n: 16, k: 4 } as const;
  const layout = { batch: 1, m: 8, n: 16, k: 4, batchAxes: [], lhsOuter: 4, lhsDepth: 1, rhsOuter: 1, rhsDepth: 16, outRow: 8, outCol: 1 };
  assert.match((emitGemmKernel(spec, target, undefined, undefined, false, layout) as { declined: string }).declined, /rows at least n apart/);
});

test("the CPU pipelines leave out the transposes the plain dot decomposer adds", (t) => {
  if (!needsCompiler(t)) return;
  const c = parseStableHlo(`func.func @main(%q: tensor<64x4x32xf32>, %k: tensor<64x4x32xf32>) -> tensor<4x64x64xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [1] x [1], contracting_dims = [2] x [2] : (tensor<64x4x32xf32>, tensor<64x4x32xf32>) -> tensor<4x64x64xf32>
  return %0 : tensor<4x64x64xf32>
}`).entry;
  for (const backend of ["native", "wasm"] as const) {
    assert.equal(kernelsOf(c, backend).kernels, 1);
    // The plain decomposer: q and k each copied to [h, s, d] by a transpose kernel, then the GEMM.
    const plain = kernelsOf(c, backend, true);
    assert.ok(plain.kernels >= 2, plain.dump);
  }
});

test("a few rows (the streaming kernels' case) keep the transposes: declined, and still right", (t) => {
  if (!needsCompiler(t)) return;
  const c = parseStableHlo(`func.func @main(%q: tensor<2x4x32xf32>, %k: tensor<2x4x32xf32>) -> tensor<4x2x2xf32> {
  %0 = stablehlo.dot_general %q, %k, batching_dims = [1] x [1], contracting_dims = [2] x [2] : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<4x2x2xf32>
  return %0 : tensor<4x2x2xf32>
}`).entry;
  const { args } = argumentsOf(c);
  for (const backend of ["native", "wasm"] as const) {
    const exe = compileSync(c, { backend, threads: 1 });
    try {
      assert.doesNotMatch(exe.dump(), /strided \(A /);
      const got = exe.run(args).values().map(Number), want = evaluate(c, args).values().map(Number);
      got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= 1e-5, `${backend}, element ${i}: ${g}, want ${want[i]}`));
    } finally {
      exe.delete();
    }
  }
});

test("stridedBatchOffset: each batch axis' index times its stride, the first axis outermost", () => {
  const layout = {
    batch: 6, m: 1, n: 1, k: 1, lhsOuter: 0, lhsDepth: 0, rhsOuter: 0, rhsDepth: 0, outRow: 1, outCol: 1,
    batchAxes: [{ size: 2, lhsStride: 100, rhsStride: 7, outStride: 3 }, { size: 3, lhsStride: 10, rhsStride: 1, outStride: 1 }],
  };
  assert.equal(stridedBatchOffset(layout, "lhs", "bi"), "(bi / 3) * 100 + bi % 3 * 10");
  assert.equal(stridedBatchOffset(layout, "out", "bi"), "(bi / 3) * 3 + bi % 3 * 1");
  assert.equal(stridedBatchOffset({ ...layout, batchAxes: [] }, "out", "bi"), "0");
});
