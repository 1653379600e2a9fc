// The WebGPU op kernels on element types other than 32-bit words, against the
// interpreter bit for bit: s64 and u64 (webgpu/op_kernels_wgsl.ts, select_scatter_wgsl.ts,
// sort_wgsl.ts: each element a pair of 32-bit words, computed on by wgsl_int64.ts) in
// sorts (signed and unsigned keys, values that differ only in the high or only in the
// low word, ties kept in order), scatters and reduce-windows combining them and
// select-and-scatter on them; bitcast-convert (a copy of bytes, or packed bits gathered:
// shapes that change, f64, f8, complex, pred and sub-byte elements); gathers and
// dynamic-update-slices of 1- and 2-byte elements (a result word an invocation); topK of
// f16, bf16, every f8 format and the sub-byte floats (the sort kernel, or the top-k
// kernel for a k small against the lane: values and indices the interpreter's bits; f64's stays on the host, saying why). Each
// program must run without a host step (checkSame), so each test fails if its op falls
// back to the host.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { compile } from "../../../src/compiler/index.js";
import { arrayShape, evaluate, Literal, parameter, parseStableHlo, topK, XlaBuilder, type ElementType } from "../../../src/index.js";
import { ELEMENT_TYPES } from "../../../src/types/element_type.js";
import { rng } from "../../support/prng.js";
import { checkSame, chunk, scatter, selectAndScatter, sort } from "./op_programs.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const S64_MIN = "-9223372036854775808";
const S64_MAX = "9223372036854775807";
const U64_MAX = "18446744073709551615";
/** 18 s64 keys: the bounds, ±1, 0, values a word apart (2^32 ± 1, -2^32), equal high words, ties. */
const S64_KEYS = [S64_MAX, "-1", "0", S64_MIN, "4294967296", "4294967295", "-4294967296", "1", "4294967297", "-4294967295", "1", S64_MIN, "-1", "9223372032559808512", "2147483648", "-2147483648", "0", "4294967295"];
/** 18 u64 keys: 0, the top, patterns with the high bit set (which signed order would put first), ties. */
const U64_KEYS = ["9223372036854775808", "0", U64_MAX, "4294967296", "4294967295", "1", "18446744069414584320", "9223372036854775807", "4294967296", "0", "18446744073709551614", "2", "4294967297", U64_MAX, "9223372036854775809", "8589934591", "1", "4294967295"];

test("sort keyed by s64 and u64: ascending and descending, by lanes (strided too), the positions carried show ties kept in order", { skip }, async () => {
  const positions = `dense<[${chunk(Array.from({ length: 18 }, (_, k) => String(k)), 6)}]> : tensor<3x6xi32>`;
  const keys = (values: readonly string[], t: string): string => `dense<[${chunk(values, 6)}]> : tensor<3x6x${t}>`;
  await checkSame(sort(["3x6xi64", "3x6xi32"], 1, "LT, A, B, SIGNED", true), [keys(S64_KEYS, "i64"), positions]);
  await checkSame(sort(["3x6xi64", "3x6xi32"], 0, "GT, A, B, SIGNED", true), [keys(S64_KEYS, "i64"), positions]);
  await checkSame(sort(["3x6xui64", "3x6xi32"], 1, "LT, A, B, UNSIGNED", true), [keys(U64_KEYS, "ui64"), positions]);
  // A 64-bit operand carried by an f32 key.
  const floats = `dense<[${chunk(Array.from({ length: 18 }, (_, k) => String(((k * 7) % 5) - 2)), 6)}]> : tensor<3x6xf32>`;
  await checkSame(sort(["3x6xf32", "3x6xui64"], 1, "LT, A, B, TOTALORDER", true), [floats, keys(U64_KEYS, "ui64")]);
});

test("scatter combining s64 (add with duplicates that carry between the words) and u64 (max with the high bit set); reduce-window of s64 sums and u64 minima", { skip }, async () => {
  const dims = "update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1";
  const indices = "dense<[[1], [3], [1], [0], [7], [1], [-1]]> : tensor<7x1xi32>";
  const add = scatter({ x: "5xi64", i: "7x1xi32", u: "7xi64", t: "i64" }, dims, "%s = stablehlo.add %a, %b : T\n    stablehlo.return %s : T");
  await checkSame(add, [`dense<[${S64_MAX}, 4294967295, -1, ${S64_MIN}, 5]> : tensor<5xi64>`, indices, `dense<[1, 1, 4294967295, -1, 9, ${S64_MIN}, 3]> : tensor<7xi64>`]);
  const max = scatter({ x: "5xui64", i: "7x1xi32", u: "7xui64", t: "ui64" }, dims, "%s = stablehlo.maximum %a, %b : T\n    stablehlo.return %s : T");
  await checkSame(max, [`dense<[1, 4294967296, 0, 7, ${U64_MAX}]> : tensor<5xui64>`, indices, `dense<[9223372036854775808, 4294967295, 4294967297, 2, 3, 9223372036854775807, 8]> : tensor<7xui64>`]);
  const window = (t: string, op: string, init: string): string => `func.func @main(%x: tensor<3x6x${t}>) -> tensor<2x3x${t}> {
  %init = stablehlo.constant dense<${init}> : tensor<${t}>
  %0 = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<${t}>, %b: tensor<${t}>):
    %m = stablehlo.${op} %a, %b : tensor<${t}>
    stablehlo.return %m : tensor<${t}>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>, padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>} : (tensor<3x6x${t}>, tensor<${t}>) -> tensor<2x3x${t}>
  return %0 : tensor<2x3x${t}>
}`;
  await checkSame(window("i64", "add", "4294967295"), [`dense<[${chunk(S64_KEYS, 6)}]> : tensor<3x6xi64>`]);
  await checkSame(window("ui64", "minimum", U64_MAX), [`dense<[${chunk(U64_KEYS, 6)}]> : tensor<3x6xui64>`]);
});

test("select-and-scatter on s64: the largest of each window by GE (ties keep the first), sources summed with carries", { skip }, async () => {
  const operand = Array.from({ length: 42 }, (_, k) => S64_KEYS[k % S64_KEYS.length]!);
  const source = Array.from({ length: 12 }, (_, k) => (k % 3 === 0 ? "4294967295" : String(k * 1000000007 - 5000000000)));
  await checkSame(...selectAndScatter("i64", "GE", operand, source));
});

test("bitcast-convert that changes the shape or goes through f64, f8 and complex runs as a copy of bytes, NaN payloads kept", { skip }, async () => {
  const bitcast = (from: string, to: string): string => `func.func @main(%x: tensor<${from}>) -> tensor<${to}> {
  %0 = stablehlo.bitcast_convert %x : (tensor<${from}>) -> tensor<${to}>
  return %0 : tensor<${to}>
}`;
  await checkSame(bitcast("3xf32", "3x4xui8"), ["dense<[1.5, 0x7FC00123, -0.0]> : tensor<3xf32>"]);
  await checkSame(bitcast("2x4xi16", "2xf64"), ["dense<[[0, 0, 0, 16368], [1, -1, 32767, -32768]]> : tensor<2x4xi16>"]);
  await checkSame(bitcast("2xcomplex<f64>", "2x2xcomplex<f32>"), ["dense<[(1.0e300, -0.0), (0x7FF8000000000123, 2.5)]> : tensor<2xcomplex<f64>>"]);
  await checkSame(bitcast("5xf8E4M3FN", "5xi8"), ["dense<[448.0, -1.0, 0x7F, 0.015625, -0.0]> : tensor<5xf8E4M3FN>"]);
  await checkSame(bitcast("3x2xui32", "3xi64"), ["dense<[[4294967295, 2147483647], [0, 2147483648], [1, 4294967295]]> : tensor<3x2xui32>"]);
});

test("bitcast-convert of packed bits (pred, s4, u2, f4, f6): gathered a word of the result at a time, bit-exact, sign-extended where signed", { skip }, async () => {
  const bitcast = (from: string, to: string): string => `func.func @main(%x: tensor<${from}>) -> tensor<${to}> {
  %0 = stablehlo.bitcast_convert %x : (tensor<${from}>) -> tensor<${to}>
  return %0 : tensor<${to}>
}`;
  const bits = (n: number, seed: number): string[] => Array.from({ length: n }, (_, k) => (((k * 7 + seed) * 2654435761) >>> 13) % 2 === 1 ? "true" : "false");
  await checkSame(bitcast("3xui8", "3x8xi1"), ["dense<[129, 0, 254]> : tensor<3xui8>"]);
  await checkSame(bitcast("2x64xi1", "2xi64"), [`dense<[${chunk(bits(128, 3), 64)}]> : tensor<2x64xi1>`]);
  await checkSame(bitcast("5x2xi4", "5xi8"), ["dense<[[-8, 7], [-1, 0], [3, -5], [1, -1], [7, -8]]> : tensor<5x2xi4>"]);
  await checkSame(bitcast("3xi8", "3x2xi4"), ["dense<[-128, 127, -2]> : tensor<3xi8>"]);
  await checkSame(bitcast("2xi32", "2x16xui2"), ["dense<[305419896, -2]> : tensor<2xi32>"]);
  await checkSame(bitcast("3x16xui2", "3xf32"), [`dense<[${chunk(Array.from({ length: 48 }, (_, k) => String((k * 5 + 1) % 4)), 16)}]> : tensor<3x16xui2>`]);
  await checkSame(bitcast("3x2xf4E2M1FN", "3xui8"), ["dense<[[0.5, 6.0], [-0.0, -3.0], [1.5, 0.0]]> : tensor<3x2xf4E2M1FN>"]);
  await checkSame(bitcast("4xf6E2M3FN", "4xf6E3M2FN"), ["dense<[7.5, -0.125, 0.0, -7.5]> : tensor<4xf6E2M3FN>"]);
  await checkSame(bitcast("1x128xi1", "1xcomplex<f64>"), [`dense<[[${bits(128, 5).join(", ")}]]> : tensor<1x128xi1>`]);
});

test("gather and dynamic-update-slice of bf16, f16, s8 and pred elements: a result word an invocation, starts clamped, NaN payloads copied", { skip }, async () => {
  const gather = (t: string, indices: string): [string, string[]] => [`func.func @main(%x: tensor<7x5x${t}>, %i: tensor<3x1xi32>) -> tensor<3x3x${t}> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} : (tensor<7x5x${t}>, tensor<3x1xi32>) -> tensor<3x3x${t}>
  return %0 : tensor<3x3x${t}>
}`, [`dense<[${chunk(values(t, 35), 5)}]> : tensor<7x5x${t}>`, `dense<${indices}> : tensor<3x1xi32>`]];
  const dus = (t: string): [string, string[]] => [`func.func @main(%x: tensor<3x7x${t}>, %u: tensor<2x3x${t}>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<3x7x${t}> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<3x7x${t}>, tensor<2x3x${t}>, tensor<i32>, tensor<i32>) -> tensor<3x7x${t}>
  return %0 : tensor<3x7x${t}>
}`, [`dense<[${chunk(values(t, 21), 7)}]> : tensor<3x7x${t}>`, `dense<[${chunk(values(t, 6).reverse(), 3)}]> : tensor<2x3x${t}>`, "dense<5> : tensor<i32>", "dense<3> : tensor<i32>"]];
  for (const t of ["bf16", "f16", "i8", "i1"]) {
    await checkSame(...gather(t, "[[6], [-2], [3]]"));
    await checkSame(...dus(t));
  }
});

test("sorts of 1- and 2-byte elements (bf16, f16, f8, s16, u16, s8, u8, pred): keys and carried values (f64 among them) gathered through the permutation, NaN and -0 in XLA's total order, ties kept in order", { skip }, async () => {
  const positions = (n: number, lanes: number): string => `dense<[${chunk(Array.from({ length: n * lanes }, (_, k) => String(k)), n)}]> : tensor<${lanes}x${n}xi32>`;
  // 3 lanes of 7: lanes end inside words (7 2-byte elements are 3.5 words), so a gather word holds two lanes' elements.
  for (const t of ["bf16", "f16", "f8E4M3FN", "i16", "ui16", "i8", "ui8"]) {
    const keys = `dense<[${chunk(sortValues(t, 21), 7)}]> : tensor<3x7x${t}>`;
    const compare = t.startsWith("f") || t === "bf16" ? "LT, A, B, TOTALORDER" : t.startsWith("ui") ? "LT, A, B, UNSIGNED" : "LT, A, B, SIGNED";
    await checkSame(sort([`3x7x${t}`, "3x7xi32"], 1, compare, true), [keys, positions(7, 3)]);
    // Along the leading dimension (elements 7 apart), descending.
    await checkSame(sort([`3x7x${t}`, "3x7xi32"], 0, compare.replace("LT", "GT"), true), [keys, positions(7, 3)]);
  }
  // Narrow values carried by an f32 key, and by a pred key (false first).
  const f32Keys = `dense<[${chunk(Array.from({ length: 21 }, (_, k) => String(((k * 5) % 4) - 1.5)), 7)}]> : tensor<3x7xf32>`;
  await checkSame(sort(["3x7xf32", "3x7xbf16", "3x7xi8"], 1, "LT, A, B, TOTALORDER", true), [f32Keys, `dense<[${chunk(sortValues("bf16", 21), 7)}]> : tensor<3x7xbf16>`, `dense<[${chunk(sortValues("i8", 21), 7)}]> : tensor<3x7xi8>`]);
  // An f64 operand (carried, not compared: WGSL has no f64) beside a bf16 key.
  await checkSame(sort(["3x7xbf16", "3x7xf64"], 1, "GT, A, B, TOTALORDER", true), [`dense<[${chunk(sortValues("bf16", 21), 7)}]> : tensor<3x7xbf16>`, `dense<[${chunk(Array.from({ length: 21 }, (_, k) => String(k * 1.0000000001e300)), 7)}]> : tensor<3x7xf64>`]);
  await checkSame(sort(["2x9xi1", "2x9xui16"], 1, "LT, A, B, UNSIGNED", true), [`dense<[${chunk(Array.from({ length: 18 }, (_, k) => (k * 7) % 3 === 0 ? "true" : "false"), 9)}]> : tensor<2x9xi1>`, `dense<[${chunk(sortValues("ui16", 18), 9)}]> : tensor<2x9xui16>`]);
});

test("a sort of f16 lanes longer than workgroup memory holds: the bitonic network's permutation, the f16 keys and u8 values gathered through it", { skip }, async () => {
  const n = 4103;
  const keys = Array.from({ length: n }, (_, k) => (k === 17 ? "0x7E05" : k === 40 ? "-0.0" : k === 41 ? "0.0" : String(((k * 2654435761) >>> 20) % 97 - 48)));
  const bytes = Array.from({ length: n }, (_, k) => String(k % 256));
  await checkSame(sort([`${n}xf16`, `${n}xui8`], 0, "LT, A, B, TOTALORDER", true), [`dense<[${keys.join(", ")}]> : tensor<${n}xf16>`, `dense<[${bytes.join(", ")}]> : tensor<${n}xui8>`]);
});

/** A [lanes, n] literal of t from bit patterns: every pattern of a type of 8 bits or fewer, scrambled, with repeats (ties); of f16 and bf16, NaNs of both signs, infinities, zeros of both signs and subnormals among values drawn with ties. */
function topKOperand(t: ElementType, lanes: number, n: number): Literal {
  const width = ELEMENT_TYPES[t].bitWidth;
  const x = Literal.zeros(arrayShape(t, [lanes, n]));
  const next = rng(width * 1000 + n);
  const special = t === "f16" ? [0x7e05, 0xfe01, 0x7c00, 0xfc00, 0x8000, 0, 0x0001, 0x8001] : [0x7fc3, 0xffc1, 0x7f80, 0xff80, 0x8000, 0, 0x0001, 0x8001];
  for (let i = 0; i < lanes * n; i++) {
    if (width <= 8) x.data[i] = (i * 37 + ((i / n) | 0) * 11) % 2 ** width;
    else x.data[i] = i % 7 === 0 ? special[(i / 7) % special.length | 0]! : i % 5 === 0 ? x.data[i - 5]! : Math.floor(next() * 65536);
  }
  return x;
}

const TOP_K_TYPES: readonly ElementType[] = ["f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu", "f6e2m3fn", "f6e3m2fn", "f4e2m1fn"];

test("topK of f16, bf16, every f8 format, the sub-byte floats and pred: the sort kernel (k = 300) and the top-k kernel (k = 37), the interpreter's values and indices bit for bit (XLA's total order: NaNs of both signs, -0 below +0, ties to the lower index)", { skip }, async () => {
  for (const t of [...TOP_K_TYPES, "pred"] as const) {
    // Lanes of 300: every pattern of a narrow type at least once, with ties; the whole lane in order (every pair's order shows), and the smallest 37.
    for (const [largest, k] of [[true, 300], [false, 37]] as const) {
      const b = new XlaBuilder(`top_k_${t}`);
      const comp = b.build(topK(parameter(b, 0, arrayShape(t, [3, 300])), k, largest));
      const exe = await compile(comp, { backend: "webgpu" });
      try {
        assert.deepEqual(exe.stats.interpreted, [], exe.dump());
        // The whole lane is the sort kernel's; the smallest 37 the top-k kernel's (top_k_wgsl.ts).
        assert.match(exe.dump(), k === 300 ? /kernel [^\n]*sort of 3 lanes of 300/ : /kernel [^\n]*top-k \(k = 37\) of 3 lanes of 300/);
        const arg = topKOperand(t, 3, 300);
        const [got, want] = [(await exe.run([arg])).arrayLeaves(), evaluate(comp, [arg]).arrayLeaves()];
        got.forEach((g, k) => assert.deepEqual(bitsOf(g), bitsOf(want[k]!), `${t} largest=${largest}: ${k === 0 ? "values" : "indices"}`));
      } finally {
        exe.delete();
      }
    }
  }
});

const bitsOf = (l: Literal): number[] => [...new Uint8Array(l.data.buffer, l.data.byteOffset, l.data.byteLength)];

test("the plan (no GPU needed): a topK of every type the WGSL sort compares is a kernel (the top-k kernel's, k = 4 of 9), f64's stays the interpreter's topK and says why", () => {
  for (const t of [...TOP_K_TYPES, "f32", "s64", "u8", "pred"] as const) {
    const b = new XlaBuilder(`top_k_${t}`);
    const plan = planGpuProgram(b.build(topK(parameter(b, 0, arrayShape(t, [2, 9])), 4)), {});
    assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), [], `${t}: ${dumpGpuProgram(plan)}`);
  }
  const b = new XlaBuilder("top_k_f64");
  const plan = planGpuProgram(b.build(topK(parameter(b, 0, arrayShape("f64", [2, 9])), 4)), {});
  assert.deepEqual(plan.steps.flatMap((s) => (s.kind === "host" ? [s.why] : [])), ["topK of f64: the WGSL sort compares no f64 keys (WGSL has no f64), so the interpreter's topK runs it"]);
});

/** n values of t for sorting: ties, and among the floats NaNs of both signs, infinities, -0 and +0. */
function sortValues(t: string, n: number): string[] {
  const floats = t === "bf16" ? ["0x7FC3", "0xFFC1", "0x7F80", "0xFF80"] : t === "f16" ? ["0x7E05", "0xFE01", "0x7C00", "0xFC00"] : ["0x7F", "0xFF", "448.0", "-448.0"];
  return Array.from({ length: n }, (_, k) => {
    if (t === "i16") return k % 5 === 0 ? "-7" : String(((k * 12345) % 65536) - 32768);
    if (t === "ui16") return k % 5 === 0 ? "65535" : String((k * 40503) % 65536);
    if (t === "i8") return k % 4 === 0 ? "-128" : String(((k * 37) % 256) - 128);
    if (t === "ui8") return k % 4 === 0 ? "255" : String((k * 37) % 256);
    if (k % 6 === 1) return floats[(k / 6 | 0) % 4]!;
    return k % 6 === 3 ? "-0.0" : k % 6 === 4 ? "0.0" : String(((k * 7) % 9) - 4);
  });
}

/** n distinct-looking values of t as MLIR literals (a NaN with a payload and -0 among the floats). */
function values(t: string, n: number): string[] {
  return Array.from({ length: n }, (_, k) => {
    if (t === "i1") return k % 3 === 0 ? "true" : "false";
    if (t === "i8") return String(((k * 37) % 256) - 128);
    return k === 4 ? (t === "bf16" ? "0x7FC3" : "0x7E05") : k === 9 ? "-0.0" : ((k * 0.375) - 3).toFixed(3);
  });
}

test("the plan (no GPU needed): 64-bit sorts, scatters, reduce-windows and bitcasts of bytes and of packed bits are kernels, no host step", () => {
  const program = parseStableHlo(`func.func @main(%k: tensor<4x8xi64>, %v: tensor<4x8xui64>, %b: tensor<2xui8>) -> (tensor<4x8xi64>, tensor<4x8xui64>, tensor<2x8xui8>, tensor<2x2xui32>) {
  %0:2 = "stablehlo.sort"(%k, %v) ({
  ^bb0(%a0: tensor<i64>, %b0: tensor<i64>, %a1: tensor<ui64>, %b1: tensor<ui64>):
    %p = stablehlo.compare GT, %a0, %b0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<4x8xi64>, tensor<4x8xui64>) -> (tensor<4x8xi64>, tensor<4x8xui64>)
  %1 = stablehlo.bitcast_convert %b : (tensor<2xui8>) -> tensor<2x8xi1>
  %2 = stablehlo.convert %1 : (tensor<2x8xi1>) -> tensor<2x8xui8>
  %3 = stablehlo.bitcast_convert %0#0 : (tensor<4x8xi64>) -> tensor<4x8x2xui32>
  %4 = stablehlo.slice %3 [0:2, 0:2, 0:1] : (tensor<4x8x2xui32>) -> tensor<2x2x1xui32>
  %5 = stablehlo.reshape %4 : (tensor<2x2x1xui32>) -> tensor<2x2xui32>
  return %0#0, %0#1, %2, %5 : tensor<4x8xi64>, tensor<4x8xui64>, tensor<2x8xui8>, tensor<2x2xui32>
}`);
  const plan = planGpuProgram(program, {});
  assert.deepEqual(plan.steps.filter((s) => s.kind === "host").map((s) => s.name), []);
  const what = plan.kernels.map((k) => k.what ?? "");
  assert.ok(what.some((w) => /^sort of 4 lanes of 8/.test(w)), what.join("\n"));
  assert.ok(what.includes("bitcast-convert u8 -> pred: 4 words of pred elements"), what.join("\n"));
  assert.ok(what.includes("bitcast-convert s64 -> u32: a copy of 256 bytes"), what.join("\n"));
});
