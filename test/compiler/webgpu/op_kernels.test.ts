// Gather, dynamic-update-slice, reduce-window and RNG (THREE_FRY, PHILOX) as WebGPU kernels (webgpu/op_kernels_wgsl.ts) against
// the interpreter, bit for bit (and what stays on the host: quantized ops among them): start indices out of range on either side (clamped),
// index types of 8, 32 and 64 bits, signed and unsigned, batching dimensions, an
// index_vector_dim in the middle, 8-byte elements (only copied). Skips as
// webgpu.test.ts does where there is nothing to run WebGPU on.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { DEFAULT_GPU_LIMITS } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";
import { evaluate, Literal, parseHlo, parseMlirLiteral, parseStableHlo, readNpz } from "../../../src/index.js";
import { checkSame, chunk, scatter, selectAndScatter, sort } from "./op_programs.js";

const hasDriver = process.env["VK_ICD_FILENAMES"] !== undefined || existsSync("/usr/lib/chromium/vk_swiftshader_icd.json");
const hasPackage = await import("webgpu" as string).then(() => true, () => false);
const skip = !hasPackage && !hasDriver ? "neither the webgpu package nor a Vulkan driver is installed: nothing to run WebGPU on" : false;

after(() => releaseGpu());

/** Rows of a 6x4 f32 operand gathered by 4 start indices of `indexType`: 3 columns of each. */
const gatherRows = (indexType: string, indices: string): [string, string[]] => [`func.func @main(%x: tensor<6x4xf32>, %i: tensor<4x1x${indexType}>) -> tensor<4x3xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} : (tensor<6x4xf32>, tensor<4x1x${indexType}>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}`, [`dense<[${chunk(Array.from({ length: 24 }, (_, k) => (k * 0.37 - 3).toFixed(2)), 4)}]> : tensor<6x4xf32>`, `dense<${indices}> : tensor<4x1x${indexType}>`]];


test("gather: rows by index, out-of-range starts clamped, for s32, i8, u64 and s64 indices", { skip }, async () => {
  await checkSame(...gatherRows("i32", "[[2], [-7], [5], [0]]"));
  await checkSame(...gatherRows("i8", "[[3], [-1], [100], [1]]"));
  await checkSame(...gatherRows("ui64", "[[4], [18446744073709551615], [4294967298], [1]]"));
  await checkSame(...gatherRows("i64", "[[-4294967296], [4294967297], [2], [5]]"));
});

test("gather with batching dimensions and the index vector in the middle of the indices", { skip }, async () => {
  // operand [batch 2][5][3]; indices [2 (vector)][batch 2][2]: each batch's own operand slice, 2 windows of 2x3.
  await checkSame(`func.func @main(%x: tensor<2x5x3xi32>, %i: tensor<2x2x2xi32>) -> tensor<2x2x2x2xi32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [1, 2], index_vector_dim = 0>, slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false} : (tensor<2x5x3xi32>, tensor<2x2x2xi32>) -> tensor<2x2x2x2xi32>
  return %0 : tensor<2x2x2x2xi32>
}`, [
    `dense<[[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11], [12, 13, 14]], [[100, 101, 102], [103, 104, 105], [106, 107, 108], [109, 110, 111], [112, 113, 114]]]> : tensor<2x5x3xi32>`,
    `dense<[[[0, 3], [9, -2]], [[1, 0], [1, 5]]]> : tensor<2x2x2xi32>`,
  ]);
});

test("dynamic-update-slice: starts clamped on both sides, u32 and s64 starts, f64 elements copied bit for bit", { skip }, async () => {
  const dus = (t: string, it: string): string => `func.func @main(%x: tensor<4x5x${t}>, %u: tensor<2x3x${t}>, %i: tensor<${it}>, %j: tensor<${it}>) -> tensor<4x5x${t}> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<4x5x${t}>, tensor<2x3x${t}>, tensor<${it}>, tensor<${it}>) -> tensor<4x5x${t}>
  return %0 : tensor<4x5x${t}>
}`;
  const x = (t: string): string => `dense<[${chunk(Array.from({ length: 20 }, (_, k) => String(t === "i32" ? k : k + 0.5)), 5)}]> : tensor<4x5x${t}>`;
  const upd = (t: string): string => `dense<[${chunk(t === "i32" ? ["-1", "-2", "-3", "-4", "-5", "-6"] : ["1.0e300", "-0.0", "0x7FF8000000000001", "-1.5", "2.5", "4.9e-324"], 3)}]> : tensor<2x3x${t}>`;
  await checkSame(dus("i32", "i32"), [x("i32"), upd("i32"), "dense<1> : tensor<i32>", "dense<-3> : tensor<i32>"]);
  await checkSame(dus("i32", "ui32"), [x("i32"), upd("i32"), "dense<4000000000> : tensor<ui32>", "dense<1> : tensor<ui32>"]);
  await checkSame(dus("f64", "i64"), [x("f64"), upd("f64"), "dense<2> : tensor<i64>", "dense<9223372036854775807> : tensor<i64>"]);
});

test("reduce-window: f32 max with padding (NaN, -0), s32 sum with base and window dilation, bit-exact", { skip }, async () => {
  const x = chunk(["1.5", "-0.0", "0.0", "-3.0", "0x7FC00000", "2.0", "-1.0", "7.25", "0.5", "-0.0", "4.0", "-9.5", "0xFF800000", "3.0", "1.0", "-2.0"], 4);
  await checkSame(`func.func @main(%x: tensor<4x4xf32>) -> tensor<3x3xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}`, [`dense<[${x}]> : tensor<4x4xf32>`]);
  await checkSame(`func.func @main(%x: tensor<3x5xi32>, %init: tensor<i32>) -> tensor<4x3xi32> {
  %0 = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>, base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 1, 2>, padding = dense<[[0, 0], [2, 2]]> : tensor<2x2xi64>} : (tensor<3x5xi32>, tensor<i32>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}`, [`dense<[${chunk(Array.from({ length: 15 }, (_, k) => String(k % 2 === 0 ? 2147483000 + k : -k)), 5)}]> : tensor<3x5xi32>`, "dense<7> : tensor<i32>"]);
});

test("rng-bit-generator THREE_FRY: u32 (split on an even dimension), f32 (on the largest), u64, counters carrying past 2^32 and 2^64", { skip }, async () => {
  const rng = (t: string, dims: string): string => `func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<${dims}x${t}>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<${dims}x${t}>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<${dims}x${t}>
}`;
  await checkSame(rng("ui32", "3x4"), ["dense<[42, 4294967290]> : tensor<2xui64>"]);
  await checkSame(rng("f32", "5x3"), ["dense<[12345678901234567, 7]> : tensor<2xui64>"]);
  await checkSame(rng("ui64", "6"), ["dense<[3, 18446744073709551613]> : tensor<2xui64>"]);
});

test("rng-bit-generator PHILOX: u32 and f32 with a u64[3] state (the counter carrying through three words), u64 and DEFAULT with a u64[2] one", { skip }, async () => {
  const rng = (algorithm: string, state: number, t: string, dims: string): string => `func.func @main(%s: tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<${dims}x${t}>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = ${algorithm} : (tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<${dims}x${t}>)
  return %0#0, %0#1 : tensor<${state}xui64>, tensor<${dims}x${t}>
}`;
  // 5x3 = 15 elements: 4 blocks, the last one partly used.
  await checkSame(rng("PHILOX", 3, "ui32", "5x3"), ["dense<[42, 18446744073709551614, 4294967295]> : tensor<3xui64>"]);
  await checkSame(rng("PHILOX", 3, "f32", "7"), ["dense<[12345678901234567, 7, 18446744073709551615]> : tensor<3xui64>"]);
  await checkSame(rng("PHILOX", 2, "ui64", "3x3"), ["dense<[3, 18446744073709551613]> : tensor<2xui64>"]);
  await checkSame(rng("DEFAULT", 2, "i32", "2x5"), ["dense<[9876543210, 4294967295]> : tensor<2xui64>"]);
});


test("rng-bit-generator of 1- and 2-byte and sub-byte elements (u8, s8, u16, bf16, f16, f8, s4, u4, s2, f4): a result word an invocation, the interpreter's bits (sub-byte signed ones sign-extended), the last word partly used", { skip }, async () => {
  const rng = (algorithm: string, state: number, t: string, dims: string): string => `func.func @main(%s: tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<${dims}x${t}>) {
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = ${algorithm} : (tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<${dims}x${t}>)
  return %0#0, %0#1 : tensor<${state}xui64>, tensor<${dims}x${t}>
}`;
  const types = ["ui8", "i8", "ui16", "bf16", "f16", "f8E4M3FN", "i4", "ui4", "i2", "f4E2M1FN"];
  for (const [k, t] of types.entries()) {
    // THREE_FRY split on an even dimension (3x6), on the largest (5x3), a scalar; PHILOX with u64[3] and u64[2] states; 15 and 7 elements leave the last word partly used.
    await checkSame(rng("THREE_FRY", 2, t, "3x6"), [`dense<[${42 + k}, 4294967290]> : tensor<2xui64>`]);
    await checkSame(rng("THREE_FRY", 2, t, "5x3"), [`dense<[12345678901234567, ${18446744073709551615n - BigInt(k)}]> : tensor<2xui64>`]);
    await checkSame(rng("PHILOX", 3, t, "5x3"), [`dense<[${42 + k}, 18446744073709551614, 4294967295]> : tensor<3xui64>`]);
    await checkSame(rng("DEFAULT", 2, t, "7"), [`dense<[9876543210, ${4294967295 - k}]> : tensor<2xui64>`]);
  }
  await checkSame(rng("THREE_FRY", 2, "i8", "").replaceAll("tensor<xi8>", "tensor<i8>"), ["dense<[7, 9]> : tensor<2xui64>"]);
});

test("scatter: f32 add and min with duplicate indices (the interpreter's order), windows partly or wholly out of range skipped element by element, NaN and -0", { skip }, async () => {
  // 2x3 windows into rows of a 6x3 input: row 1 twice, -1 and 5 half outside, 9 and -9 wholly outside.
  const shapes = { x: "6x3xf32", i: "7x1xi32", u: "7x2x3xf32", t: "f32" };
  const dims = "update_window_dims = [1, 2], inserted_window_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1";
  const x = `dense<[${chunk(Array.from({ length: 18 }, (_, k) => (k === 4 ? "-0.0" : k === 7 ? "0x7FC00001" : (k * 0.75 - 5).toFixed(2))), 3)}]> : tensor<6x3xf32>`;
  const indices = "dense<[[1], [4], [1], [-1], [5], [9], [-9]]> : tensor<7x1xi32>";
  const rows = Array.from({ length: 14 }, (_, r) => `[${Array.from({ length: 3 }, (_, c) => {
    const k = r * 3 + c;
    return k === 3 ? "0.0" : k === 10 ? "0xFFC00002" : k === 20 ? "-0.0" : ((k * 37) % 23 * 0.125 - 1.3).toFixed(3);
  }).join(", ")}]`);
  const updates = `dense<[${chunk(rows, 2)}]> : tensor<7x2x3xf32>`;
  // Canonical NaNs only: an add's NaN is the GPU's own and the renderer's min returns 0x7FC00000 (payloads are copied by a replace, below).
  const args = [x, indices, updates].map((text) => text.replace(/0x[7F]FC0000[12]/g, "0x7FC00000"));
  await checkSame(scatter(shapes, dims, "%s = stablehlo.add %a, %b : T\n    stablehlo.return %s : T"), args);
  await checkSame(scatter(shapes, dims, "%s = stablehlo.minimum %a, %b : T\n    stablehlo.return %s : T"), args);
});

test("scatter: replace of f64 (the last duplicate wins, NaN payloads copied) and s32 max with s64 indices beyond i32 and inserted dims", { skip }, async () => {
  // Single elements: inserted_window_dims = [0, 1] and 2-vectors of indices.
  const replace = scatter({ x: "3x4xf64", i: "5x2xi64", u: "5xf64", t: "f64" }, "update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1", "stablehlo.return %b : T");
  const indices = "dense<[[2, 3], [0, 1], [2, 3], [4294967298, 1], [-4294967295, 0]]> : tensor<5x2xi64>";
  await checkSame(replace, [`dense<[${chunk(Array.from({ length: 12 }, (_, k) => String(k + 0.5)), 4)}]> : tensor<3x4xf64>`, indices, "dense<[1.0e300, 0x7FF8000000000123, -0.0, 5.0, 6.0]> : tensor<5xf64>"]);
  const max = scatter({ x: "3x4xi32", i: "5x2xi64", u: "5xi32", t: "i32" }, "update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1", "%s = stablehlo.maximum %a, %b : T\n    stablehlo.return %s : T");
  await checkSame(max, [`dense<[${chunk(Array.from({ length: 12 }, (_, k) => String(k * 3 - 20)), 4)}]> : tensor<3x4xi32>`, indices, "dense<[2147483647, -5, -2147483648, 9, 10]> : tensor<5xi32>"]);
});


test("sort: f32 keys by TOTALORDER (NaNs of both signs, -0 below +0) and by FLOAT (-0 and +0 tied, kept in order), with s32 and f64 operands carried, stable", { skip }, async () => {
  const keys = `dense<[${chunk(["3.0", "-0.0", "0x7FC00000", "1.5", "0.0", "-2.0", "0xFFC00000", "1.5", "-0.0", "3.0", "0.0", "-2.0", "1.5", "0xFF800000", "0x7F800000", "-0.0", "0.0", "1.5", "-0.0", "7.0", "0.0"], 7)}]> : tensor<3x7xf32>`;
  const positions = `dense<[${chunk(Array.from({ length: 21 }, (_, k) => String(k)), 7)}]> : tensor<3x7xi32>`;
  const wide = `dense<[${chunk(Array.from({ length: 21 }, (_, k) => (k === 4 ? "0x7FF8000000000123" : `${k}.25`)), 7)}]> : tensor<3x7xf64>`;
  await checkSame(sort(["3x7xf32", "3x7xi32", "3x7xf64"], 1, "LT, A, B, TOTALORDER", true), [keys, positions, wide]);
  await checkSame(sort(["3x7xf32", "3x7xi32"], 1, "GT, A, B, FLOAT", false), [keys.replace(/0x[7F]F[C8]00000/g, "2.5"), positions]);
});

test("sort: s32 descending along the first dimension (a strided lane), u32 ascending over lanes of one and of an odd length", { skip }, async () => {
  const keys = `dense<[${chunk(Array.from({ length: 20 }, (_, k) => (k === 3 ? "2147483647" : k === 8 ? "-2147483648" : String(((k * 7919) % 11) - 5))), 4)}]> : tensor<5x4xi32>`;
  await checkSame(sort(["5x4xi32", "5x4xui32"], 0, "GT, A, B, SIGNED", true), [keys, `dense<[${chunk(Array.from({ length: 20 }, (_, k) => String(4000000000 + k)), 4)}]> : tensor<5x4xui32>`]);
  await checkSame(sort(["9xui32"], 0, "LT, A, B, UNSIGNED", false), ["dense<[7, 4294967295, 0, 7, 3, 2147483648, 1, 0, 9]> : tensor<9xui32>"]);
  await checkSame(sort(["4x1xi32"], 1, "LT, A, B, SIGNED", true), ["dense<[[3], [-1], [2], [0]]> : tensor<4x1xi32>"]);
});

test("sort: lanes longer than workgroup memory (2 lanes of 9000) run as a bitonic network across dispatches, stable, bit-exact (ties, NaN, -0)", { skip }, async () => {
  const n = 9000;
  // Few distinct keys (k % 97): long runs of ties, whose order the positions operand shows.
  const keys = Array.from({ length: 2 * n }, (_, k) => (k === 17 ? "0x7FC00000" : k === 40 ? "-0.0" : k === 41 ? "0.0" : String((((k * 7919) % 97) - 48) / 4)));
  const positions = Array.from({ length: 2 * n }, (_, k) => String(k));
  const text = sort([`${n}x2xf32`, `${n}x2xi32`], 0, "LT, A, B, TOTALORDER", true);
  const plan = planGpuProgram(parseStableHlo(text), {}, { limits: { ...DEFAULT_GPU_LIMITS, maxComputeWorkgroupStorageSize: 32768 } });
  assert.match(dumpGpuProgram(plan), /bitonic pass of a sort of 2 lanes of 9000 \(padded to 16384\)/);
  await checkSame(text, [`dense<[${chunk(keys, 2)}]> : tensor<${n}x2xf32>`, `dense<[${chunk(positions, 2)}]> : tensor<${n}x2xi32>`]);
});

test("rng-bit-generator with an empty result: a kernel writing the state as the interpreter's (unchanged), which a later draw reads", { skip }, async () => {
  // Each empty draw's state feeds a second draw, so a state left unwritten (or advanced) shows in its bits as well as in the state returned.
  const rng = (algorithm: string, state: number, t: string, dims: string): string => `func.func @main(%s: tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<${dims}x${t}>, tensor<${state}xui64>, tensor<5xui32>) {
  %st, %r = stablehlo.rng_bit_generator %s, algorithm = ${algorithm} : (tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<${dims}x${t}>)
  %st2, %r2 = stablehlo.rng_bit_generator %st, algorithm = ${algorithm} : (tensor<${state}xui64>) -> (tensor<${state}xui64>, tensor<5xui32>)
  return %st, %r, %st2, %r2 : tensor<${state}xui64>, tensor<${dims}x${t}>, tensor<${state}xui64>, tensor<5xui32>
}`;
  await checkSame(rng("THREE_FRY", 2, "ui32", "3x0"), ["dense<[42, 4294967290]> : tensor<2xui64>"]);
  await checkSame(rng("THREE_FRY", 2, "ui64", "0"), ["dense<[7, 18446744073709551615]> : tensor<2xui64>"]);
  await checkSame(rng("PHILOX", 3, "ui8", "0x4"), ["dense<[42, 18446744073709551614, 4294967295]> : tensor<3xui64>"]);
  await checkSame(rng("DEFAULT", 2, "f32", "2x0x3"), ["dense<[9876543210, 4294967295]> : tensor<2xui64>"]);
  const plan = planGpuProgram(parseStableHlo(rng("PHILOX", 2, "i4", "0")), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host"), []);
});

test("the plan (no GPU needed) lists each op left on the host with its reason: a c128 FFT, an f64 Cholesky, a custom call; random bits with an empty result are a kernel", () => {
  const program = parseStableHlo(`func.func @main(%c: tensor<8xcomplex<f64>>, %m: tensor<3x3xf32>, %k: tensor<5000xf32>, %s: tensor<2xui64>, %d: tensor<3x3xf64>) -> (tensor<8xcomplex<f64>>, tensor<3x3xf64>, tensor<3x3xf32>, tensor<5000xf32>, tensor<0xui8>, tensor<4xui32>) {
  %f = stablehlo.fft %c, type = FFT, length = [8] : (tensor<8xcomplex<f64>>) -> tensor<8xcomplex<f64>>
  %ch = stablehlo.cholesky %d, lower = true : tensor<3x3xf64>
  %cc = stablehlo.custom_call @lapack_sgetrf_ffi(%m) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %o = "stablehlo.sort"(%k) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5000xf32>) -> tensor<5000xf32>
  %st, %r = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<0xui8>)
  %st2, %r2 = stablehlo.rng_bit_generator %st, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  return %f, %ch, %cc, %o, %r, %r2 : tensor<8xcomplex<f64>>, tensor<3x3xf64>, tensor<3x3xf32>, tensor<5000xf32>, tensor<0xui8>, tensor<4xui32>
}`);
  const plan = planGpuProgram(program, {});
  const hosts = plan.steps.flatMap((s) => (s.kind === "host" ? [`${s.instruction.opcode}: ${s.why}`] : []));
  const expected = [/^fft: webgpu fft: c128 to c128 \(WGSL has no f64/, /^cholesky: webgpu cholesky: f64 matrices run on the host \(WGSL has no f64/, /^customCall: custom call lapack_sgetrf_ffi \(f32\[3,3\]\) -> \(f32\[3,3\]\): a form of operands, results or attributes its WGSL kernel does not take/];
  assert.equal(hosts.length, expected.length, hosts.join("\n"));
  expected.forEach((re, k) => assert.match(hosts[k]!, re));
  // Each is in the dump, with its reason; both generators are kernels.
  const dump = dumpGpuProgram(plan);
  for (const h of hosts) assert.ok(dump.includes(h.slice(h.indexOf(": ") + 2)), dump);
  assert.match(dump, /kernel st\b/);
  assert.match(dump, /kernel st2/);
  assert.match(dump, /sized by WebGPU's guaranteed limits: 256 invocations a workgroup/);
  // Lanes of 5000 pass the guaranteed 16 KiB of workgroup memory: a bitonic network across dispatches (padded to 8192: 13·14/2 passes).
  assert.equal(plan.steps.filter((s) => s.name.startsWith("o (pass")).length, 91);
  assert.match(dump, /bitonic pass of a sort of 1 lanes of 5000 \(padded to 8192\)/);
  // An adapter with 32 KiB of workgroup memory (SwiftShader's, most GPUs') sorts lanes of up to 8192 in one kernel.
  const roomier = planGpuProgram(program, {}, { limits: { ...DEFAULT_GPU_LIMITS, maxComputeWorkgroupStorageSize: 32768 } });
  assert.equal(roomier.steps.filter((s) => s.kind === "host").length, expected.length);
  assert.match(dumpGpuProgram(roomier), /sized by the adapter's limits: .* 32768 bytes of workgroup memory[^]*sort of 1 lanes of 5000/);
});

test("a program with quantized types: no fusion, its quantized ops on the host with the reason (planned without a GPU), the interpreter's values", { skip }, async () => {
  // StableHLO's quantized_add case with its constants as arguments: fusion once took the quantized add and failed.
  const program = parseStableHlo(`func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xi8> {
  %qx = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.1:-30>>
  %qy = stablehlo.uniform_quantize %y : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %sum = stablehlo.add %qx, %qy : (tensor<2x!quant.uniform<i8:f32, 0.1:-30>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %bits = stablehlo.bitcast_convert %sum : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2xi8>
  return %bits : tensor<2xi8>
}`);
  const plan = planGpuProgram(program, {});
  assert.deepEqual(plan.steps.map((s) => (s.kind === "host" ? `${s.name}: ${s.why}` : s.name)),
    ["qx", "qy", "sum", "bits"].map((n) => `${n}: quantized types run on the interpreter's kernels (dequantize, compute, quantize)`));
  const args = [parseMlirLiteral("dense<[1.0, 2.0]> : tensor<2xf32>"), parseMlirLiteral("dense<[3.0, 4.0]> : tensor<2xf32>")];
  const exe = await compile(program, { backend: "webgpu" });
  try {
    // StableHLO's expected values.
    assert.deepEqual((await exe.run(args)).values(), [-12, -8]);
  } finally {
    exe.delete();
  }
});


test("select-and-scatter runs as a kernel, bit-exact with the interpreter: overlapping windows, padding, ties (GE keeps the first, GT the last), NaN, -0", { skip }, async () => {
  // Ties every few elements (k % 5), a NaN and a -0 in the f32 operand; sources that do not sum exactly in another order.
  const ints = Array.from({ length: 42 }, (_, k) => String((k * 7) % 5 - 2));
  const floats = Array.from({ length: 42 }, (_, k) => (k === 9 ? "0x7FC00000" : k === 20 ? "-0.0" : ((k * 7) % 5 * 0.3 - 0.6).toFixed(2)));
  const fsource = Array.from({ length: 12 }, (_, k) => (k === 3 ? "1.0e8" : (0.1 + k * 0.7).toFixed(2)));
  const isource = Array.from({ length: 12 }, (_, k) => String(k * 3 - 7));
  for (const dir of ["GE", "GT"]) {
    await checkSame(...selectAndScatter("f32", dir, floats, fsource));
    await checkSame(...selectAndScatter("i32", dir, ints, isource));
  }
});

test("identities take no step on the GPU either: an optimization barrier names its operands' bytes, after-all's token none", { skip }, async () => {
  const text = `func.func @main(%x: tensor<3x5xf32>, %y: tensor<5xi32>) -> (tensor<3x5xf32>, tensor<5xi32>, tensor<3x5xf32>) {
  %t = stablehlo.after_all : !stablehlo.token
  %n = stablehlo.negate %x : tensor<3x5xf32>
  %b:2 = stablehlo.optimization_barrier %n, %y : tensor<3x5xf32>, tensor<5xi32>
  %e = stablehlo.exponential %b#0 : tensor<3x5xf32>
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%e init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<3xf32>) -> tensor<3x5xf32>
  %s = stablehlo.subtract %b#0, %rb : tensor<3x5xf32>
  return %s, %b#1, %b#0 : tensor<3x5xf32>, tensor<5xi32>, tensor<3x5xf32>
}`;
  const plan = planGpuProgram(parseStableHlo(text), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  await checkSame(text, [`dense<[${chunk(Array.from({ length: 15 }, (_, k) => (k === 4 ? "-0.0" : ((k * 5) % 7 - 3.5).toFixed(2))), 5)}]> : tensor<3x5xf32>`, "dense<[1, -2, 3, 2147483647, -2147483648]> : tensor<5xi32>"]);
});

test("a select between tuples (a scalar pred) runs as its leaves' selects in a kernel, the interpreter's bits for either pred", { skip }, async () => {
  const program = parseHlo(`HloModule tsel
ENTRY %main (p: pred[], x: f32[5], y: s32[2,3]) -> (f32[5], (s32[2,3], s32[2,3])) {
  %p = pred[] parameter(0)
  %x = f32[5]{0} parameter(1)
  %y = s32[2,3]{1,0} parameter(2)
  %nx = f32[5]{0} negate(f32[5]{0} %x)
  %ny = s32[2,3]{1,0} negate(s32[2,3]{1,0} %y)
  %ia = (s32[2,3]{1,0}, s32[2,3]{1,0}) tuple(s32[2,3]{1,0} %y, s32[2,3]{1,0} %ny)
  %ib = (s32[2,3]{1,0}, s32[2,3]{1,0}) tuple(s32[2,3]{1,0} %ny, s32[2,3]{1,0} %y)
  %a = (f32[5]{0}, (s32[2,3]{1,0}, s32[2,3]{1,0})) tuple(f32[5]{0} %x, (s32[2,3]{1,0}, s32[2,3]{1,0}) %ia)
  %b = (f32[5]{0}, (s32[2,3]{1,0}, s32[2,3]{1,0})) tuple(f32[5]{0} %nx, (s32[2,3]{1,0}, s32[2,3]{1,0}) %ib)
  ROOT %s = (f32[5]{0}, (s32[2,3]{1,0}, s32[2,3]{1,0})) select(pred[] %p, (f32[5]{0}, (s32[2,3]{1,0}, s32[2,3]{1,0})) %a, (f32[5]{0}, (s32[2,3]{1,0}, s32[2,3]{1,0})) %b)
}`);
  const plan = planGpuProgram(program, {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  const exe = await compile(program, { backend: "webgpu" });
  try {
    for (const p of [0, 1]) {
      const args = [Literal.scalar("pred", p), Literal.from("f32", [1.5, -0, NaN, -2.25, 3e38]), Literal.fromValues("s32", [2, 3], [1, -2, 3, -2147483648, 2147483647, 0])];
      const got = (await exe.run(args)).arrayLeaves(), want = evaluate(program.entry, args).arrayLeaves();
      got.forEach((g, k) => assert.deepEqual(g.values(), want[k]!.values()));
    }
  } finally {
    exe.delete();
  }
});

test("topK runs as the top-k kernel (k small against the lane) or the sort kernel and a slice, bit-exact with the interpreter: NaNs of both signs, -0 and +0, ties to the lower index; a lane longer than workgroup memory", { skip }, async () => {
  const topK = (t: string, n: number, k: number, largest: boolean): string => `func.func @main(%x: tensor<3x${n}x${t}>) -> (tensor<3x${k}x${t}>, tensor<3x${k}xi32>) {
  %v, %i = chlo.top_k(%x, k = ${k}${largest ? "" : ", largest = false"}) : tensor<3x${n}x${t}> -> (tensor<3x${k}x${t}>, tensor<3x${k}xi32>)
  return %v, %i : tensor<3x${k}x${t}>, tensor<3x${k}xi32>
}`;
  const special = ["0x7FC00000", "0xFFC00001", "-0.0", "0.0", "0x7F800000", "0xFF800000"];
  const floats = (n: number): string[] => Array.from({ length: 3 * n }, (_, k) => (k % 11 < special.length ? special[k % 11]! : String(((k * 37) % 9) - 4)));
  const ints = (n: number): string[] => Array.from({ length: 3 * n }, (_, k) => String(k % 13 === 0 ? -2147483648 : ((k * 37) % 9) - 4));
  const plan = planGpuProgram(parseStableHlo(topK("f32", 9, 4, true)), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  for (const largest of [true, false]) {
    await checkSame(topK("f32", 9, 4, largest), [`dense<[${chunk(floats(9), 9)}]> : tensor<3x9xf32>`]);
    await checkSame(topK("i32", 9, 9, largest), [`dense<[${chunk(ints(9), 9)}]> : tensor<3x9xi32>`]);
  }
  // bf16 and 8- and 16-bit integers: the sort kernel's narrow operands, gathered through its permutation.
  const bf16 = (n: number): string[] => floats(n).map((v) => (v.startsWith("0x") ? (v === "0x7FC00000" ? "0x7FC0" : v === "0xFFC00001" ? "0xFFC1" : v === "0x7F800000" ? "0x7F80" : "0xFF80") : v));
  await checkSame(topK("bf16", 9, 4, true), [`dense<[${chunk(bf16(9), 9)}]> : tensor<3x9xbf16>`]);
  await checkSame(topK("i8", 9, 5, false), [`dense<[${chunk(ints(9).map((v) => (v === "-2147483648" ? "-128" : v)), 9)}]> : tensor<3x9xi8>`]);
  await checkSame(topK("ui16", 9, 3, true), [`dense<[${chunk(ints(9).map((v) => String((Number(v) + 65536) % 65536)), 9)}]> : tensor<3x9xui16>`]);
  // f16 and the narrow floats since session 52 (op_kernel_types.test.ts); f64 keys the WGSL sort cannot compare.
  const f64 = planGpuProgram(parseStableHlo(topK("f64", 9, 4, true)), {});
  assert.deepEqual(f64.steps.flatMap((s) => (s.kind === "host" ? [s.why] : [])), ["topK of f64: the WGSL sort compares no f64 keys (WGSL has no f64), so the interpreter's topK runs it"]);
  // 5000 elements a lane, past WebGPU's guaranteed 16 KiB: the top-k kernel's chunks and their candidates merged (ties by position).
  await checkSame(topK("f32", 5000, 17, true), [`dense<[${chunk(floats(5000), 5000)}]> : tensor<3x5000xf32>`]);
});

test("XLA's ApproxTopK (JAX's approx_max_k, approx_min_k, as exported) runs as the top-k kernel or the sort kernel and slices, bit-exact with the interpreter", { skip }, async () => {
  const dir = new URL("../../../../test/fixtures/custom_calls/", import.meta.url);
  for (const name of ["approx_max_k", "approx_max_k_not_aggregated", "approx_min_k_dim0"]) {
    const text = readFileSync(new URL(`${name}.mlir`, dir), "utf8");
    const plan = planGpuProgram(parseStableHlo(text), {});
    assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
    const x = readNpz(new Uint8Array(readFileSync(new URL(`${name}.npz`, dir)))).get("arg0")!;
    const shape = x.arrayShape;
    await checkSame(text, [`dense<[${chunk(x.values().map((v) => String(v)), shape.dimensions.at(-1)!)}]> : tensor<${shape.dimensions.join("x")}x${shape.elementType}>`]);
  }
});

test("a scaled dot (f8 operands, e8m0 block scales) runs as scaling loop kernels and the GEMM kernel, the interpreter's bits", { skip }, async () => {
  const program = parseHlo(`HloModule sd
ENTRY %main (l: f8e4m3fn[3,8], ls: f8e8m0fnu[3,2], r: f8e5m2[8,5], rs: f8e8m0fnu[2,5]) -> f32[3,5] {
  %l = f8e4m3fn[3,8]{1,0} parameter(0)
  %ls = f8e8m0fnu[3,2]{1,0} parameter(1)
  %r = f8e5m2[8,5]{1,0} parameter(2)
  %rs = f8e8m0fnu[2,5]{1,0} parameter(3)
  ROOT %d = f32[3,5]{1,0} scaled-dot(f8e4m3fn[3,8]{1,0} %l, f8e5m2[8,5]{1,0} %r, f8e8m0fnu[3,2]{1,0} %ls, f8e8m0fnu[2,5]{1,0} %rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`);
  const plan = planGpuProgram(program, {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  // Small powers of two and their sums: every product and partial sum is exact, so any order of the sum gives the interpreter's bits.
  const args = [
    Literal.fromValues("f8e4m3fn", [3, 8], Array.from({ length: 24 }, (_, k) => (k % 5 === 0 ? -0 : ((k % 7) - 3) * 0.5))),
    Literal.fromValues("f8e8m0fnu", [3, 2], [1, 2, 0.5, 4, 0.25, 8]),
    Literal.fromValues("f8e5m2", [8, 5], Array.from({ length: 40 }, (_, k) => ((k % 6) - 2) * 0.25)),
    Literal.fromValues("f8e8m0fnu", [2, 5], [1, 2, 4, 8, 16, 0.5, 0.25, 1, 2, 4]),
  ];
  const exe = await compile(program, { backend: "webgpu" });
  try {
    const got = await exe.run(args);
    assert.deepEqual(got.values(), evaluate(program.entry, args).values());
  } finally {
    exe.delete();
  }
});

test("update computations other than one reducer op run in the kernels as a lowered function: scatter subtract (duplicates in order), a reduce-window of x·y+v, the interpreter's bits", { skip }, async () => {
  const indices = "dense<[[2, 3], [0, 1], [2, 3], [4294967298, 1], [2, 3]]> : tensor<5x2xi64>";
  const dims = "update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1";
  const sub = (t: string): string => scatter({ x: `3x4x${t}`, i: "5x2xi64", u: `5x${t}`, t }, dims, "%s = stablehlo.subtract %a, %b : T\n    stablehlo.return %s : T");
  const plan = planGpuProgram(parseStableHlo(sub("f32")), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  // f32 updates whose differences round differently in another order; s32 ones that wrap.
  await checkSame(sub("f32"), [`dense<[${chunk(Array.from({ length: 12 }, (_, k) => (k === 11 ? "1.0e8" : String(k + 0.5))), 4)}]> : tensor<3x4xf32>`, indices, "dense<[0.3, -0.0, 1.0, 7.0, 3.0e-8]> : tensor<5xf32>"]);
  await checkSame(sub("i32"), [`dense<[${chunk(Array.from({ length: 12 }, (_, k) => String(k * 3 - 20)), 4)}]> : tensor<3x4xi32>`, indices, "dense<[2147483647, -5, -2147483648, 9, 10]> : tensor<5xi32>"]);
  await checkSame(`func.func @main(%x: tensor<4x5xf32>, %init: tensor<f32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    %s = stablehlo.add %m, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}`, [`dense<[${chunk(Array.from({ length: 20 }, (_, k) => (k === 7 ? "0x7FC00000" : ((k % 7) * 0.3 - 1).toFixed(2))), 5)}]> : tensor<4x5xf32>`, "dense<1.1> : tensor<f32>"]);
});

test("reduce-window of two inputs (an argmax window: values and indices, ties to the first, NaN wins, padding) runs as a kernel, the interpreter's bits", { skip }, async () => {
  const text = `func.func @main(%x: tensor<4x6xf32>, %i: tensor<4x6xi32>) -> (tensor<3x3xf32>, tensor<3x3xi32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %none = stablehlo.constant dense<-1> : tensor<i32>
  %0:2 = "stablehlo.reduce_window"(%x, %i, %ninf, %none) ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    %gt = stablehlo.compare GT, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %nan = stablehlo.compare NE, %b, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %anan = stablehlo.compare NE, %a, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %take0 = stablehlo.or %gt, %nan : tensor<i1>
    %keep = stablehlo.not %anan : tensor<i1>
    %take = stablehlo.and %take0, %keep : tensor<i1>
    %v = stablehlo.select %take, %b, %a : tensor<i1>, tensor<f32>
    %j = stablehlo.select %take, %bi, %ai : tensor<i1>, tensor<i32>
    stablehlo.return %v, %j : tensor<f32>, tensor<i32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>, padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>} : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<3x3xf32>, tensor<3x3xi32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x3xi32>
}`;
  const plan = planGpuProgram(parseStableHlo(text), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  const x = Array.from({ length: 24 }, (_, k) => (k === 9 ? "0x7FC00000" : k === 14 ? "-0.0" : String(((k * 5) % 4) - 1)));
  await checkSame(text, [`dense<[${chunk(x, 6)}]> : tensor<4x6xf32>`, `dense<[${chunk(Array.from({ length: 24 }, (_, k) => String(k)), 6)}]> : tensor<4x6xi32>`]);
});

test("scatter of two inputs (values and their positions, a max-with-index update: duplicates in order) runs as a kernel, the interpreter's bits", { skip }, async () => {
  const text = `func.func @main(%x: tensor<6xf32>, %xi: tensor<6xi32>, %i: tensor<5x1xi32>, %u: tensor<5xf32>, %ui: tensor<5xi32>) -> (tensor<6xf32>, tensor<6xi32>) {
  %0:2 = "stablehlo.scatter"(%x, %xi, %i, %u, %ui) ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    %ge = stablehlo.compare GE, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %ge, %b, %a : tensor<i1>, tensor<f32>
    %d = stablehlo.subtract %ai, %bi : tensor<i32>
    %j = stablehlo.select %ge, %bi, %d : tensor<i1>, tensor<i32>
    stablehlo.return %v, %j : tensor<f32>, tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<6xf32>, tensor<6xi32>, tensor<5x1xi32>, tensor<5xf32>, tensor<5xi32>) -> (tensor<6xf32>, tensor<6xi32>)
  return %0#0, %0#1 : tensor<6xf32>, tensor<6xi32>
}`;
  const plan = planGpuProgram(parseStableHlo(text), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  await checkSame(text, ["dense<[1.0, -0.0, 3.0, 0x7FC00000, 5.0, 2.0]> : tensor<6xf32>", "dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi32>",
    "dense<[[2], [0], [2], [9], [1]]> : tensor<5x1xi32>", "dense<[3.0, 0.5, 2.0, 8.0, 0.0]> : tensor<5xf32>", "dense<[10, 11, 12, 13, 14]> : tensor<5xi32>"]);
});

test("a dot of preds runs as an s32 GEMM compared with zero (the interpreter's OR of ANDs); a ragged dot is a kernel", { skip }, async () => {
  const text = `func.func @main(%a: tensor<2x3x5xi1>, %b: tensor<2x5x4xi1>) -> tensor<2x3x4xi1> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x5xi1>, tensor<2x5x4xi1>) -> tensor<2x3x4xi1>
  return %0 : tensor<2x3x4xi1>
}`;
  const plan = planGpuProgram(parseStableHlo(text), {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], dumpGpuProgram(plan));
  const bits = (n: number, seed: number): string => Array.from({ length: n }, (_, k) => ((k * seed) % 7 < 2 ? "true" : "false")).join(", ");
  await checkSame(text, [`dense<[[${chunk(bits(15, 3).split(", "), 5)}], [${chunk(bits(15, 5).split(", "), 5)}]]> : tensor<2x3x5xi1>`,
    `dense<[[${chunk(bits(20, 2).split(", "), 4)}], [${chunk(bits(20, 4).split(", "), 4)}]]> : tensor<2x5x4xi1>`]);
  const ragged = planGpuProgram(parseHlo(`HloModule r
ENTRY %main (x: f32[3,1], w: f32[2,1,1], g: s32[2]) -> f32[3,1] {
  %x = f32[3,1]{1,0} parameter(0)
  %w = f32[2,1,1]{2,1,0} parameter(1)
  %g = s32[2]{0} parameter(2)
  ROOT %d = f32[3,1]{1,0} ragged-dot(f32[3,1]{1,0} %x, f32[2,1,1]{2,1,0} %w, s32[2]{0} %g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}`), {});
  // Since session 51 a kernel (ragged_dot.test.ts): nothing on the host, the status word bound after the result.
  assert.deepEqual(ragged.steps.flatMap((s) => (s.kind === "host" ? [s.why] : [])), [], dumpGpuProgram(ragged));
  assert.match(dumpGpuProgram(ragged), /kernel d [^\n]*ragged gemm 3x1x1 2 groups of rows[^\n]*: p0, p1, p2, o0, c0/);
});

test("an ApproxTopK the interpreter refuses stays on the host with its reason, and the run reports the interpreter's error", { skip }, async () => {
  const text = readFileSync(new URL("../../../../test/fixtures/custom_calls/approx_max_k.mlir", import.meta.url), "utf8").replace("top_k = 3 : i64", "top_k = 7 : i64");
  const plan = planGpuProgram(parseStableHlo(text), {});
  assert.deepEqual(plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : [])), [
    "ApproxTopK left unexpanded (marked as having a side effect, or a config, operands or results the interpreter refuses; a valid one runs as the top-k kernels, or as a sort and slices): the interpreter's kernel runs it and reports any error"]);
  const exe = await compile(parseStableHlo(text), { backend: "webgpu" });
  try {
    await assert.rejects(exe.run([Literal.from("f32", [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]])]), /ApproxTopK: top_k must be in \[0, 6\], got 7/);
  } finally {
    exe.delete();
  }
});
