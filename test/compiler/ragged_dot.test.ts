// The compiled ragged dot (kernel/ragged_dot_plan.ts, native/ragged_dot_c.ts,
// wasm/ragged_dot.ts) against the interpreter, in its three modes, on the CPU backends:
// groups empty, one group, sizes summing to the ragged dimension, short of it and past
// it; f32 and f64; group sizes s32, s64 and u32; operands with batch dimensions, rhs
// stored [n][k], and a ragged dimension of several rows an index. Each element within
// the dot's bound: |got - want| <= (k + 2)·ε·Σ|lhs·rhs| over the terms the interpreter
// sums (the interpreter's own ragged dot of |lhs| and |rhs|), so elements of no group
// must be exactly 0. The WebAssembly kernel also runs split into uneven ranges of its
// units, and native programs on two threads; a negative size raises the interpreter's
// ExecutionError on each backend, and the dump shows a kernel, not an interpreted step.

import { test } from "node:test";
import assert from "node:assert/strict";
import { arrayShape, evaluate, Literal, parameter, raggedDot, XlaBuilder, type Computation } from "../../src/index.js";
import { compileSync } from "../../src/compiler/index.js";
import { compileRoutine } from "../../src/compiler/routines.js";
import { isDeclined } from "../../src/compiler/kernel/declined.js";
import { detectWasmTarget } from "../../src/compiler/wasm/features.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES, type WasmKernel } from "../../src/compiler/wasm/kernel.js";
import { ExecutionError } from "../../src/types/errors.js";
import { nativeToolchain } from "../../src/compiler/native/toolchain.js";
import { rng } from "../support/prng.js";
import { raggedGemmSpecOf } from "../../src/compiler/kernel/ragged_dot_plan.js";
import { emitRaggedDotC } from "../../src/compiler/native/ragged_dot_c.js";
import { nativeCpu, runNativeCases, type ElementArray } from "./native/gemm_harness.js";
import { assertWithinBound, batchMode, contracting, depth, nonContracting, operands, program, type Case } from "./ragged_dot_cases.js";
import { elementCount } from "../../src/types/shape.js";

const CASES: Case[] = [
  ...nonContracting("rows 37x19x23, 4 groups", 37, 19, 23, 4),
  ...nonContracting("rows, one group", 9, 5, 7, 1),
  ...nonContracting("rows, rhs [g][n][k], 2 batches", 21, 13, 17, 3, { batch: 2, transposed: true }),
  ...nonContracting("rows of 3 an index", 11, 6, 10, 3, { per: 3 }),
  ...nonContracting("rows, rhs [g][batch][k][n], 2 batches", 11, 5, 7, 3, { batch: 2, groupFirst: true }),
  ...nonContracting("rows 300x600x100 (several blocks of k and tiles)", 300, 600, 100, 5),
  ...contracting("depth 13x40x11, 3 groups", 13, 40, 11, 3),
  ...contracting("depth, rhs [n][k], 2 batches", 7, 30, 9, 4, { batch: 2, transposed: true }),
  ...contracting("depth 70x520x40 (several blocks of k)", 70, 520, 40, 2),
  ...batchMode("batches 5x2 of 6x8x9", 5, 2, 6, 8, 9, 3),
];

const TARGET = detectWasmTarget();
const hasCompiler = typeof nativeToolchain() !== "string";

/** Runs a WebAssembly kernel over `ranges` of its units in order, one scratch region each, results poisoned first. */
function runKernelInRanges(kernel: WasmKernel, c: Computation, args: readonly Literal[], ranges: readonly [number, number][]): Literal {
  const result = Literal.zeros(c.root.shape as ReturnType<typeof arrayShape>);
  const align = (x: number): number => Math.ceil(x / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;
  let offset = BUFFER_ALIGNMENT;
  const place = (bytes: number): number => { const at = offset; offset = align(offset + Math.max(bytes, 1)); return at; };
  const argAt = args.map((a) => place(a.data.byteLength));
  const resultAt = place(result.data.byteLength);
  const scratchAt = ranges.map(() => place(kernel.scratchBytes));
  const memory = new WebAssembly.Memory({ initial: Math.ceil(offset / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: TARGET.sharedMemory });
  const bytes = new Uint8Array(memory.buffer);
  bytes.fill(0xa5);
  args.forEach((a, i) => bytes.set(new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength), argAt[i]!));
  const run = new WebAssembly.Instance(new WebAssembly.Module(kernel.bytes), { env: { memory } }).exports["run"] as (...xs: number[]) => void;
  ranges.forEach(([b, e], s) => run(...argAt, resultAt, scratchAt[s]!, b, e));
  new Uint8Array(result.data.buffer, result.data.byteOffset, result.data.byteLength).set(bytes.subarray(resultAt, resultAt + result.data.byteLength));
  return result;
}

for (const backend of ["wasm", "native"] as const) {
  test(`raggedDot compiled (${backend}): the three modes against the interpreter, within the dot's bound`, (t) => {
    if (backend === "native" && !hasCompiler) return t.skip("no C compiler");
    let seed = 1;
    for (const c of CASES) {
      for (const [type, sizeType] of [["f32", "s32"], ["f64", "s64"], ["f32", "u32"]] as const) {
        if (type === "f64" && elementCount(c.lhs) > 20000) continue;
        const comp = program(c, type, sizeType);
        const args = operands(c, type, sizeType, seed++);
        const what = `${backend} ${c.what} ${type} ${sizeType}`;
        const e = compileSync(comp, { backend, ...(backend === "native" ? { threads: 2 } : {}) });
        try {
          assert.match(e.dump(), /kernel raggedDot[^\n]*ragged gemm/, `${what}: the ragged dot is a kernel`);
          assert.equal(e.stats.interpreted.length, 0, `${what}: nothing interpreted`);
          assertWithinBound(e.run(args) as Literal, comp, args, depth(c), what);
        } finally {
          e.delete();
        }
      }
    }
  });

  test(`raggedDot compiled (${backend}): a negative group size is the interpreter's ExecutionError`, (t) => {
    if (backend === "native" && !hasCompiler) return t.skip("no C compiler");
    for (const c of [nonContracting("rows", 5, 3, 4, 3)[0]!, contracting("depth", 4, 6, 3, 3)[0]!, batchMode("batches", 4, 1, 2, 3, 2, 3)[0]!]) {
      for (const sizeType of ["s32", "s64"] as const) {
        const comp = program(c, "f32", sizeType);
        const bad = { ...c, sizes: [1, -2, 1] };
        const args = operands(bad, "f32", sizeType, 7);
        assert.throws(() => evaluate(comp, args), /ragged-dot: group_sizes\[1\] is -2; group sizes must be non-negative/);
        const e = compileSync(comp, { backend });
        try {
          assert.throws(() => e.run(args), (err: unknown) => err instanceof ExecutionError
            && /^ragged-dot: group_sizes\[1\] is -2; group sizes must be non-negative$/.test(err.message));
          // The same executable runs again with good sizes.
          const good = operands(c, "f32", sizeType, 8);
          assertWithinBound(e.run(good) as Literal, comp, good, depth(c), `${backend} ${c.what} after the error`);
        } finally {
          e.delete();
        }
      }
    }
  });
}

test("raggedDot compiled (wasm): the kernel split into uneven ranges of its units computes the whole", () => {
  for (const c of [...nonContracting("rows", 37, 19, 23, 4), ...contracting("depth", 13, 40, 11, 3), ...batchMode("batches", 5, 2, 6, 8, 9, 3)]) {
    const comp = program(c, "f32", "s32");
    const kernel = compileRoutine(comp.root, { wasm: TARGET });
    assert.ok(!isDeclined(kernel), `${c.what}: ${isDeclined(kernel) ? kernel.declined : ""}`);
    const args = operands(c, "f32", "s32", 3);
    const extent = kernel.parallelExtent;
    const cuts = [0, 1, Math.floor(extent / 3), Math.floor(extent / 3) + 1, Math.floor((2 * extent) / 3), extent].filter((x, i, xs) => x <= extent && (i === 0 || x > xs[i - 1]!));
    const ranges = cuts.slice(1).map((e, i) => [cuts[i]!, e] as [number, number]);
    // In reverse order too: no range may depend on another's having run.
    for (const order of [ranges, [...ranges].reverse()]) assertWithinBound(runKernelInRanges(kernel, comp, args, order), comp, args, depth(c), `wasm split ${c.what}`);
  }
});

test("raggedDot compiled: forms the kernels do not take run on the interpreter's kernel, and say why", () => {
  // The ragged dimension is lhs's second free dimension.
  const b = new XlaBuilder("other");
  const l = parameter(b, 0, arrayShape("f32", [3, 4, 5]));
  const r = parameter(b, 1, arrayShape("f32", [2, 5, 6]));
  const g = parameter(b, 2, arrayShape("s32", [2]));
  const comp = b.build(raggedDot(l, r, g, {
    dotDimensionNumbers: { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [2], rhsContractingDimensions: [1] },
    lhsRaggedDimensions: [1], rhsGroupDimensions: [0],
  }));
  const e = compileSync(comp, { backend: "wasm" });
  try {
    assert.match(e.dump(), /interpreter raggedDot[^\n]*the ragged dimension is not lhs's first free dimension/);
    const next = rng(5);
    const args = [Literal.fromValues("f32", [3, 4, 5], Array.from({ length: 60 }, next)), Literal.fromValues("f32", [2, 5, 6], Array.from({ length: 60 }, next)), Literal.from("s32", [1, 2])];
    assert.deepEqual((e.run(args) as Literal).toNumbers(), evaluate(comp, args).toNumbers());
  } finally {
    e.delete();
  }
});

test("raggedDot compiled (native): the kernel in uneven ranges of its units, and through the pool's two threads, computes the whole", (t) => {
  if (!hasCompiler) return t.skip("no C compiler");
  const cases = [...nonContracting("rows", 37, 19, 23, 4), ...nonContracting("rows", 300, 600, 100, 5).slice(0, 2), ...contracting("depth", 13, 40, 11, 3),
    ...batchMode("batches", 5, 2, 6, 8, 9, 3)];
  cases.push(...nonContracting("rows, rhs [g][batch][k][n]", 11, 5, 7, 3, { batch: 2, groupFirst: true }).slice(0, 2));
  const runs = cases.map((c, i) => {
    const comp = program(c, "f32", "s32");
    const spec = raggedGemmSpecOf(comp.root as Parameters<typeof raggedGemmSpecOf>[0]);
    assert.ok(!isDeclined(spec), c.what);
    const kernel = emitRaggedDotC(spec as Exclude<typeof spec, { declined: string }>, nativeCpu());
    assert.ok(!isDeclined(kernel), c.what);
    const args = operands(c, "f32", "s32", 11 + i);
    const extent = kernel.parallelExtent;
    const cut = (x: number): number => Math.min(extent, Math.max(0, Math.floor(x)));
    const ranges = [[0, 1], [1, cut(extent / 3)], [cut(extent / 3), cut(extent / 3) + 1], [cut(extent / 3) + 1, extent]].filter(([b, e]) => b! < e!) as [number, number][];
    const data = args.map((a) => new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength) as ElementArray);
    const resultBytes = evaluate(comp, args).data.byteLength;
    return { c, comp, args, kernel, data, resultBytes, ranges };
  });
  const results = runNativeCases(runs.flatMap((r) => [
    { kernel: r.kernel, operands: r.data, resultBytes: [r.resultBytes], ranges: [...r.ranges].reverse() },
    { kernel: r.kernel, operands: r.data, resultBytes: [r.resultBytes], threads: 2 },
  ]), "ragged_dot_test");
  runs.forEach((r, i) => {
    for (const [j, how] of [[0, "in ranges"], [1, "on two threads"]] as const) {
      const bytes = results[2 * i + j]![0]!;
      const got = Literal.fromStorage(evaluate(r.comp, r.args).arrayShape, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
      assertWithinBound(got, r.comp, r.args, depth(r.c), `native ${how} ${r.c.what}`);
    }
  });
});
