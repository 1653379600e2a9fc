// The ragged dot as a WGSL kernel (webgpu/ragged_dot_wgsl.ts: the tiled GEMM with the
// grouped schedule of kernel/ragged_dot_plan.ts) against the interpreter, within the
// dot's bound (ragged_dot_cases.ts): each mode, one executable run over the size
// variants (exact, short of the ragged dimension, past it, empty groups, all in the
// last, none: the sizes are read on the GPU, so one kernel serves them all), a single
// group, rhs stored [g][n][k] with batches, several rows an index, rhs's group dimension
// first; s32, u32, s64 and u64 sizes; bf16 and f16 operands, an f16 result (stored by
// pairs, and element by element through atomics). A negative
// size fails the run with the interpreter's ExecutionError and message (from the status
// word the kernel writes), and the executable runs again afterwards; sizes computed by an
// earlier kernel of the same program are read where that kernel wrote them (no host
// step, and the error still comes from the status word); in a GPU-driven loop's body
// the results are the interpreter's bits and a negative size in a later iteration its
// error. Integer ragged dots (s8, u8, s16, s32, u32 operands and results, products and
// sums wrapping as the interpreter's in the result type) and one-byte float operands
// (f8 widened exactly; an f8 result rounded once): the interpreter's bits. The dump
// shows the kernel; a 64-bit integer or f64 ragged dot stays on the host and says why.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { compile } from "../../../src/compiler/index.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { add, arrayShape, evaluate, Literal, parameter, raggedDot, XlaBuilder, type ElementType } from "../../../src/index.js";
import { ELEMENT_TYPES } from "../../../src/types/element_type.js";
import { rng } from "../../support/prng.js";
import { ExecutionError } from "../../../src/types/errors.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { assertWithinBound, batchMode, contracting, depth, nonContracting, operands, program, type Case } from "../ragged_dot_cases.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const NEGATIVE = /^ragged-dot: group_sizes\[1\] is -2; group sizes must be non-negative$/;

/** Compiles the cases' program (one shape: one kernel), checks its dump and runs every case on it. */
async function runCases(cases: readonly Case[], type: ElementType, sizeType: ElementType, rhsType: ElementType = type, seed = 1): Promise<void> {
  const comp = program(cases[0]!, type, sizeType, rhsType);
  const exe = await compile(comp, { backend: "webgpu" });
  try {
    assert.match(exe.dump(), /kernel raggedDot[^\n]*ragged gemm[^\n]*read on the GPU/, `${cases[0]!.what}: the ragged dot is a kernel`);
    assert.equal(exe.stats.interpreted.length, 0, `${cases[0]!.what}: nothing on the host`);
    for (const c of cases) {
      const args = operands(c, type, sizeType, seed++, rhsType);
      assertWithinBound(await exe.run(args), comp, args, depth(c), `webgpu ${c.what} ${type} ${sizeType}`);
    }
  } finally {
    exe.delete();
  }
}

test("raggedDot on webgpu: rows (non-contracting), every size variant, against the interpreter", { skip }, async () => {
  await runCases(nonContracting("rows 37x19x23, 4 groups", 37, 19, 23, 4), "f32", "s32");
  await runCases(nonContracting("rows, one group", 9, 5, 7, 1), "f32", "s32");
  await runCases(nonContracting("rows, rhs [g][n][k], 2 batches", 21, 13, 17, 3, { batch: 2, transposed: true }), "f32", "u32");
  await runCases(nonContracting("rows of 3 an index", 11, 6, 10, 3, { per: 3 }), "f32", "s64");
  await runCases(nonContracting("rows, rhs [g][batch][k][n], 2 batches", 11, 5, 7, 3, { batch: 2, groupFirst: true }), "f32", "u64");
  // Several row tiles a group and several steps of k, vec4 loads of both operands.
  await runCases(nonContracting("rows 150x64x72, 5 groups", 150, 64, 72, 5).slice(0, 4), "f32", "s32");
});

test("raggedDot on webgpu: depth (contracting) and batches, against the interpreter", { skip }, async () => {
  await runCases(contracting("depth 13x40x11, 3 groups", 13, 40, 11, 3), "f32", "s32");
  // k a multiple of 4 with ranges starting anywhere (scalar loads along k), rhs [n][k].
  await runCases(contracting("depth, rhs [n][k], 2 batches", 7, 32, 9, 4, { batch: 2, transposed: true }), "f32", "s64");
  await runCases(contracting("depth 40x136x36 (several steps of k)", 40, 136, 36, 2).slice(0, 4), "f32", "u32");
  await runCases(batchMode("batches 5x2 of 6x8x9", 5, 2, 6, 8, 9, 3), "f32", "s32");
});

test("raggedDot on webgpu: bf16 and f16 operands widened, an f16 result rounded once", { skip }, async () => {
  await runCases(nonContracting("rows bf16 x f32 -> f32", 19, 12, 10, 3).slice(0, 3), "bf16", "s32", "f32");
  await runCases(contracting("depth f16 -> f16", 9, 20, 6, 3).slice(0, 3), "f16", "s32");
  // An odd n: the f16 result stored element by element on the atomic memory, the sizes and the status word read through atomics too.
  await runCases(nonContracting("rows f16 -> f16, odd n", 10, 8, 5, 3).slice(0, 3), "f16", "s64");
});

/** A literal of `type`: integers drawn over the type's whole range (so products and sums wrap), floats from [-4, 4) rounded to the type. */
function randomLiteral(type: ElementType, dims: readonly number[], next: () => number): Literal {
  const count = elementCount(dims);
  const { kind, bitWidth } = ELEMENT_TYPES[type];
  const low = kind === "signed" ? -(2 ** (bitWidth - 1)) : 0;
  const draw = kind === "float" ? () => next() * 8 - 4 : () => low + Math.floor(next() * 2 ** bitWidth);
  return Literal.fromValues(type, [...dims], Array.from({ length: count }, draw));
}

const bits = (l: Literal): number[] => [...new Uint8Array(l.data.buffer, l.data.byteOffset, l.data.byteLength)];

/** As runCases, for products the kernel computes exactly as the interpreter (integers; one-byte floats, whose products f32 holds exactly): its bits. */
async function runExact(cases: readonly Case[], lhsType: ElementType, rhsType: ElementType, resultType: ElementType, sizeType: ElementType, seed = 1): Promise<void> {
  const comp = program(cases[0]!, lhsType, sizeType, rhsType, resultType);
  const exe = await compile(comp, { backend: "webgpu" });
  const what = `${cases[0]!.what}, ${lhsType} x ${rhsType} -> ${resultType}`;
  try {
    assert.match(exe.dump(), new RegExp(`kernel raggedDot[^\\n]*ragged gemm[^\\n]*to ${resultType}, tiled[^\\n]*read on the GPU`), `${what}: the ragged dot is a kernel`);
    assert.equal(exe.stats.interpreted.length, 0, `${what}: nothing on the host`);
    for (const c of cases) {
      const next = rng(seed++);
      const args = [randomLiteral(lhsType, c.lhs, next), randomLiteral(rhsType, c.rhs, next), Literal.fromValues(sizeType, [c.sizes.length], c.sizes)];
      const [got, want] = [await exe.run(args), evaluate(comp, args)];
      assert.equal(got.elementType, resultType);
      assert.deepEqual(bits(got), bits(want), `webgpu ${c.what} ${lhsType} x ${rhsType} -> ${resultType}: the interpreter's bits`);
    }
  } finally {
    exe.delete();
  }
}

test("raggedDot on webgpu: integer operands and results, wrapping as the interpreter's, each mode: its bits", { skip }, async () => {
  // int8 experts summed in s32 (no wrap), s32 and u32 products and sums wrapping.
  await runExact(nonContracting("rows 37x19x23, 4 groups", 37, 19, 23, 4), "s8", "s8", "s32", "s32");
  await runExact(contracting("depth 13x40x11, 3 groups", 13, 40, 11, 3), "s32", "s32", "s32", "s32");
  await runExact(batchMode("batches 5x2 of 6x8x9", 5, 2, 6, 8, 9, 3), "u32", "u32", "u32", "u32");
  await runExact(nonContracting("rows, rhs [g][n][k], 2 batches", 21, 13, 17, 3, { batch: 2, transposed: true }).slice(0, 3), "u8", "u8", "s16", "s64");
  // A one-byte result wrapped to its width: an odd n stores it byte by byte (atomics), n a multiple of 4 by words.
  await runExact(nonContracting("rows s8, odd n", 10, 8, 5, 3).slice(0, 3), "s8", "s8", "s8", "s32");
  await runExact(contracting("depth u8, n of 8", 9, 20, 8, 3).slice(0, 3), "u8", "u8", "u8", "u32");
});

test("raggedDot on webgpu: one-byte float (and s8) operands widened exactly, to f32 and to an f8 rounded once: the interpreter's bits", { skip }, async () => {
  await runExact(nonContracting("rows f8e4m3fn", 19, 12, 10, 3).slice(0, 3), "f8e4m3fn", "f8e4m3fn", "f32", "s32");
  await runExact(contracting("depth f8e5m2 x bf16", 9, 20, 8, 3).slice(0, 3), "f8e5m2", "bf16", "f8e5m2", "s32");
  // s8 operands of an f32 result: widened exactly, products and sums exact in f32.
  await runExact(nonContracting("rows s8 -> f32", 10, 8, 4, 2).slice(0, 3), "s8", "s8", "f32", "u32");
});

test("raggedDot on webgpu: a negative group size is the interpreter's ExecutionError, from the kernel's status word", { skip }, async () => {
  const modes: ((g: number) => Case)[] = [(g) => nonContracting("rows", 5, 3, 4, g)[0]!, (g) => contracting("depth", 4, 6, 3, g)[0]!, (g) => batchMode("batches", 4, 1, 2, 3, 2, g)[0]!];
  for (const mode of modes) {
    const c = mode(3);
    for (const sizeType of ["s32", "s64"] as const) {
      const comp = program(c, "f32", sizeType);
      const bad = operands({ ...c, sizes: [1, -2, 1] }, "f32", sizeType, 7);
      assert.throws(() => evaluate(comp, bad), (e: unknown) => e instanceof ExecutionError && NEGATIVE.test(e.message));
      const exe = await compile(comp, { backend: "webgpu" });
      try {
        assert.match(exe.dump(), /status word: c\d+/);
        await assert.rejects(exe.run(bad), (e: unknown) => e instanceof ExecutionError && NEGATIVE.test(e.message), `${c.what} ${sizeType}`);
        // Zeroed before each run: the same executable runs again with good sizes.
        const good = operands(c, "f32", sizeType, 8);
        assertWithinBound(await exe.run(good), comp, good, depth(c), `${c.what} ${sizeType} after the error`);
        // The first negative size is the one named, whatever its value (a large s64 one: both words).
        const sizes = sizeType === "s64" ? [0n, 3n, -(2n ** 40n) - 5n, -1n] : [0, 3, -7, -1];
        const worse = [...operands(mode(4), "f32", sizeType, 9).slice(0, 2), Literal.fromValues(sizeType, [4], sizes)];
        const comp4 = program(mode(4), "f32", sizeType);
        const exe4 = await compile(comp4, { backend: "webgpu" });
        try {
          const message = `ragged-dot: group_sizes[2] is ${String(sizes[2])}; group sizes must be non-negative`;
          assert.throws(() => evaluate(comp4, worse), { message });
          await assert.rejects(exe4.run(worse), (e: unknown) => e instanceof ExecutionError && e.message === message, `${c.what} ${sizeType}: four groups`);
        } finally {
          exe4.delete();
        }
      } finally {
        exe.delete();
      }
    }
  }
});

test("raggedDot on webgpu: sizes computed by an earlier kernel are read on the GPU (no host step)", { skip }, async () => {
  // sizes = a + b, a loop kernel; the ragged dot reads its result where it lies.
  const b = new XlaBuilder("moe");
  const lhs = parameter(b, 0, arrayShape("f32", [24, 16]));
  const rhs = parameter(b, 1, arrayShape("f32", [4, 16, 8]));
  const x = parameter(b, 2, arrayShape("s32", [4]));
  const y = parameter(b, 3, arrayShape("s32", [4]));
  const comp = b.build(raggedDot(lhs, rhs, add(x, y), {
    dotDimensionNumbers: { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [1], rhsContractingDimensions: [1] },
    lhsRaggedDimensions: [0], rhsGroupDimensions: [0],
  }));
  const exe = await compile(comp, { backend: "webgpu" });
  try {
    const dump = exe.dump();
    assert.match(dump, /kernel [^\n]*ragged gemm/);
    assert.equal(exe.stats.interpreted.length, 0, "nothing on the host");
    assert.equal(exe.stats.kernels, 2, "the sum's kernel and the ragged dot's");
    // The interpreter's ragged dot of the sums, to compare with.
    const plain = nonContracting("moe", 24, 16, 8, 4)[0]!;
    const reference = program(plain, "f32", "s32");
    const [l, r] = operands(plain, "f32", "s32", 21);
    for (const [xs, ys] of [[[3, 0, 5, 2], [2, 0, 1, 9]], [[10, 10, 10, 10], [0, 0, 0, 0]], [[0, 0, 1, 0], [0, 0, 0, 0]]]) {
      const args = [l!, r!, Literal.fromValues("s32", [4], xs!), Literal.fromValues("s32", [4], ys!)];
      const sums = Literal.fromValues("s32", [4], xs!.map((v, i) => v + ys![i]!));
      assertWithinBound(await exe.run(args), reference, [l!, r!, sums], 16, `sizes ${xs} + ${ys}`);
      assert.equal(exe.lastRun?.readbacks, 1, "one read: the status word (the result is read by run's toLiteral, not counted)");
    }
    // A negative sum: the status word, not a host check.
    const bad = [l!, r!, Literal.fromValues("s32", [4], [1, 2, -5, 0]), Literal.fromValues("s32", [4], [0, 3, 1, 0])];
    await assert.rejects(exe.run(bad), (e: unknown) => e instanceof ExecutionError && e.message === "ragged-dot: group_sizes[2] is -4; group sizes must be non-negative");
  } finally {
    exe.delete();
  }
});

// A ragged dot in a GPU-driven loop's body (its kernel dispatched with the counts the
// gate writes), its sizes moving one row from group 0 to group 1 each iteration: from
// {5, 0} all stay non-negative; from {2, 3} group 0's is -1 in the fourth iteration.
// Integers in f32 (x from 0 to 3, w of zeros and ones): every sum exact.
const LOOPED = `HloModule looped

cond {
  p = (s32[], s32[2], f32[6,4], f32[2,4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], s32[2], f32[6,4], f32[2,4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  g = s32[2] get-tuple-element(p), index=1
  x = f32[6,4] get-tuple-element(p), index=2
  w = f32[2,4,4] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  d = s32[2] constant({-1, 1})
  g1 = s32[2] add(g, d)
  x1 = f32[6,4] ragged-dot(x, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  ROOT t = (s32[], s32[2], f32[6,4], f32[2,4,4]) tuple(i1, g1, x1, w)
}

ENTRY main {
  g0 = s32[2] parameter(0)
  x0 = f32[6,4] parameter(1)
  w0 = f32[2,4,4] parameter(2)
  z = s32[] constant(0)
  t = (s32[], s32[2], f32[6,4], f32[2,4,4]) tuple(z, g0, x0, w0)
  w = (s32[], s32[2], f32[6,4], f32[2,4,4]) while(t), condition=cond, body=body
  ROOT r = f32[6,4] get-tuple-element(w), index=2
}
`;

test("raggedDot on webgpu: in a GPU-driven loop's body, the interpreter's bits and, at a negative size, its error", { skip }, async () => {
  const module = parseHlo(LOOPED);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.match(exe.dump(), /GPU-driven/);
    assert.equal(exe.stats.interpreted.length, 0, exe.dump());
    const x = Literal.fromValues("f32", [6, 4], Array.from({ length: 24 }, (_, i) => (i * 7) % 4));
    const w = Literal.fromValues("f32", [2, 4, 4], Array.from({ length: 32 }, (_, i) => ((i * 5) % 3 === 0 ? 1 : 0)));
    const good = [Literal.fromValues("s32", [2], [5, 0]), x, w];
    assert.deepEqual((await exe.run(good)).toNumbers(), evaluate(module.entry, good).toNumbers());
    const bad = [Literal.fromValues("s32", [2], [2, 3]), x, w];
    const message = "ragged-dot: group_sizes[0] is -1; group sizes must be non-negative";
    assert.throws(() => evaluate(module.entry, bad), { message });
    await assert.rejects(exe.run(bad), (e: unknown) => e instanceof ExecutionError && e.message === message);
    assert.deepEqual((await exe.run(good)).toNumbers(), evaluate(module.entry, good).toNumbers(), "again after the error");
  } finally {
    exe.delete();
  }
});

test("raggedDot on webgpu: the plan shows the kernel; a 64-bit integer or f64 ragged dot runs on the host and says why", () => {
  const rows = nonContracting("rows", 8, 4, 4, 2)[0]!;
  const dump = dumpGpuProgram(planGpuProgram(program(rows, "f32", "s32"), {}));
  assert.match(dump, /kernel raggedDot[^\n]*ragged gemm 8x4x4 2 groups of rows NN, tiled [^\n]*p0, p1, p2, o0, c0/);
  assert.match(dump, /0 host step\(s\)/);
  const ints = dumpGpuProgram(planGpuProgram(program(rows, "s8", "s32", "s8", "s32"), {}));
  assert.match(ints, /kernel raggedDot[^\n]*ragged gemm 8x4x4 2 groups of rows NN from s8 to s32, tiled/);
  const wide = dumpGpuProgram(planGpuProgram(program(rows, "s64", "s32"), {}));
  assert.match(wide, /host raggedDot[^\n]*ragged-dot of s64 x s64 -> s64 \(WGSL has no 64-bit integers; it runs on the host\)/);
  const double = dumpGpuProgram(planGpuProgram(program(rows, "f64", "s32"), {}));
  assert.match(double, /host raggedDot[^\n]*ragged-dot of f64 x f64 -> f64 \(WGSL has no f64; it runs on the host\)/);
});
