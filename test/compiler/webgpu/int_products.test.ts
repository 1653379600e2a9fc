// Integer and f8 dots and convolutions on the WebGPU backend, against the interpreter
// bit for bit: integers summed in i32 (wrapping as two's complement, so the sum is exact
// modulo 2^32 and modulo 2^bits of a narrower result, as the interpreter's wrapped steps
// give), operands of 8 and 16 bits widened by shifts from their words; results of 8 and
// 16 bits stored by words where one invocation owns a word, else element by element
// (byte stores on an atomic memory); an epilogue on an integer product. f8 (and f4)
// operands widened to f32 exactly and summed in f32 in the interpreter's order (k
// ascending: their products are exact in f32, so each fused step rounds once either
// way). Shapes with odd m, n and k, so that tiles end mid-way. Few distinct kernels:
// SwiftShader compiles each pipeline in 0.1-5 s. (Half results stored element by
// element and epilogues on half products: half.test.ts.)
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { both, webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { XlaBuilder, parameter, tuple, add, max, dot, dotGeneral, convGeneralDilated, type ConvDimensionNumbers } from "../../../src/index.js";
import type { XlaOp } from "../../../src/builder/xla_builder.js";
import { ELEMENT_TYPES, type ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { arrayShape, elementCount } from "../../../src/types/shape.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const NHWC: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
};

/**
 * The first element where two literals' stored values differ, or undefined. A NaN
 * matches a NaN; an f32 subnormal may come back as the zero of its sign (WGSL lets an
 * implementation flush f32 subnormals, as SwiftShader does: f8e8m0fnu's 2^-127).
 */
function difference(want: Literal, got: Literal): string | undefined {
  if (want.elementType !== got.elementType) return `type ${got.elementType}, expected ${want.elementType}`;
  const [w, g] = [want.data, got.data];
  if (w.length !== g.length) return `${g.length} elements, expected ${w.length}`;
  const f32 = want.elementType === "f32";
  for (let i = 0; i < w.length; i++) {
    if (Object.is(w[i], g[i]) || (Number.isNaN(w[i] as number) && Number.isNaN(g[i] as number))) continue;
    if (f32 && Math.abs(w[i] as number) < 2 ** -126 && g[i] === 0 && Math.sign(1 / (w[i] as number)) === Math.sign(1 / (g[i] as number))) continue;
    return `element ${i}: ${String(g[i])}, expected ${String(w[i])}`;
  }
  return undefined;
}

/** Random values of integer type t over its whole range (32-bit types: values whose products and sums wrap). */
function integers(t: ElementType, dims: readonly number[], random: () => number): Literal {
  const bits = ELEMENT_TYPES[t].bitWidth, signed = ELEMENT_TYPES[t].kind === "signed";
  const count = elementCount(dims);
  const values = Array.from({ length: count }, () => {
    const u = Math.floor(random() * 2 ** bits);
    return signed && u >= 2 ** (bits - 1) ? u - 2 ** bits : u;
  });
  return Literal.fromValues(t, dims, values);
}

test("integer dots and convolutions on the GPU, bit for bit: s8 x s8 -> s32 with an epilogue, a u8 result stored by words, s16 by 2-byte stores, s32 wrapping", { skip }, async () => {
  const random = rng(23);
  const shapes: [ElementType, number[]][] = [
    ["s8", [37, 29]], ["s8", [29, 13]], ["u8", [9, 16]], ["u8", [16, 8]], ["s16", [11, 12]], ["s16", [12, 7]],
    ["s32", [1, 5, 6, 3]], ["s32", [3, 3, 3, 5]], ["s32", [13]],
  ];
  const b = new XlaBuilder("integer_products");
  const p = shapes.map(([t, dims], i) => parameter(b, i, arrayShape(t, dims), `p${i}`)) as XlaOp[];
  const results = [
    // u8 operands (zero-extended, four a word: vector loads) to a u8 result wrapped to its
    // width, n = 8: four elements a word stored by one invocation.
    dot(p[2]!, p[3]!),
    // s16 to s16, n = 7: a word would hold two rows' elements, stored element by element (atomic 2-byte stores).
    dot(p[4]!, p[5]!),
    // s32 over its whole range: products and sums wrap.
    convGeneralDilated(p[6]!, p[7]!, [1, 1], [[1, 1], [0, 1]], [], [], NHWC, 1, 1),
    // A dense layer over integers, the bias and relu in the GEMM's store; s8 operands
    // widened by shifts (sign-extended), odd m, n and k: tiles end mid-way.
    max(add(dot(p[0]!, p[1]!, { preferredElementType: "s32" }), p[8]!, [1]), 0),
  ];
  const args = shapes.map(([t, dims]) => integers(t, dims, random));
  const { want, got, exe } = await both(b.build(tuple(b, results)), args);
  const dump = exe.dump();
  assert.deepEqual(exe.stats.interpreted.map((s) => s.why), [], dump);
  assert.match(dump, /gemm 37x13x29 NN f32 from s8 to s32, tiled .*epilogue fused/);
  results.forEach((_, j) => assert.equal(difference(want.elements[j]!, got.elements[j]!), undefined, `product ${j} (${want.elements[j]!.elementType})\n${dump}`));
});

test("one-byte float operands widened exactly on the GPU (every pattern of a type of each encoding with specials), f8 sums in f32 bit for bit (the skinny kernel)", { skip }, async () => {
  // One type of each encoding with special values (element_type.ts FloatEncoding): ieee, fn, fnuz, e8m0 (the
  // finite f6 and f4 formats take the same normal and subnormal paths, with no specials; checked once, not here).
  const types: ElementType[] = ["f8e5m2", "f8e4m3fn", "f8e4m3fnuz", "f8e8m0fnu"];
  const args: Literal[] = [];
  for (const t of types) {
    // Every pattern of t (a column) times [1, 1]: each pattern's value as f32, exactly (NaN as NaN).
    const patterns = 2 ** ELEMENT_TYPES[t].bitWidth;
    args.push(Literal.fromStorage(arrayShape(t, [patterns, 1]), Uint8Array.from({ length: patterns }, (_, k) => k)), Literal.fromValues(t, [1, 2], [1, 1]));
  }
  // Random f8 values (multiples of 1/8 up to 8 in magnitude): products and every sum exact in f32, whatever
  // the order (the skinny kernel's, 3 rows, sums slices of k apart).
  const random = rng(8);
  for (const d of [[3, 24], [24, 11]]) args.push(Literal.fromValues("f8e4m3fn", d, Array.from({ length: d[0]! * d[1]! }, () => Math.round((random() * 2 - 1) * 64) / 8)));
  const b = new XlaBuilder("f8_products");
  const p = args.map((a, i) => parameter(b, i, arrayShape(a.elementType, a.dimensions), `p${i}`));
  const results = types.map((_, i) => dot(p[2 * i]!, p[2 * i + 1]!, { preferredElementType: "f32" }));
  results.push(dot(p[2 * types.length]!, p[2 * types.length + 1]!, { preferredElementType: "f32" }));
  const { want, got, exe } = await both(b.build(tuple(b, results)), args);
  assert.deepEqual(exe.stats.interpreted.map((s) => s.why), [], exe.dump());
  assert.match(exe.dump(), /gemm 3x11x24 NN f32 from f8e4m3fn to f32, skinny/);
  results.forEach((_, j) => assert.equal(difference(want.elements[j]!, got.elements[j]!), undefined, `product ${j} (${types[j] ?? "random values"})`));
});

test("products the kernels do not take run on the host, saying why (no GPU needed): 64-bit integers, f64, s32 operands of an f32 result (an f8 result compiles)", () => {
  const b = new XlaBuilder("host_products");
  const x64 = parameter(b, 0, arrayShape("s64", [4, 8]), "x64");
  const f64 = parameter(b, 1, arrayShape("f64", [4, 8]), "f64");
  const f8 = parameter(b, 2, arrayShape("f8e4m3fn", [4, 8]), "f8");
  const s32 = parameter(b, 3, arrayShape("s32", [4, 8]), "s32");
  const nt = { lhsContractingDimensions: [1], rhsContractingDimensions: [1] };
  tuple(b, [
    dotGeneral(x64, x64, nt), dotGeneral(f64, f64, nt), dotGeneral(f8, f8, nt), dotGeneral(s32, s32, nt, { preferredElementType: "f32" }), dotGeneral(s32, s32, nt),
  ]);
  const host = planGpuProgram(b.build(), {}).steps.flatMap((s) => (s.kind === "host" ? [s.why.replace(/^webgpu dot \S+: /, "")] : []));
  assert.deepEqual(host, [
    "s64 x s64 -> s64 (WGSL has no 64-bit integers; it runs on the host)",
    "f64 x f64 -> f64 (WGSL has no f64; it runs on the host)",
    "s32 x s32 -> f32 (a s32 operand of a float result is not compiled to WGSL (its conversion to f32 rounds); it runs on the host)",
  ]);
});
