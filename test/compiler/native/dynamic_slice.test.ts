// Dynamic-slice and dynamic-update-slice as C kernels (native/dynamic_slice_c.ts) against
// the interpreter, bit for bit: every storage width of element type, ranks 0 to 4, start
// indices of several types inside the operand and clamped on both sides, each kernel run
// whole and in 3 uneven ranges; then compiled programs with a KV-cache write in place,
// into a donated parameter and into a dying temporary. Skipped where no C compiler is found.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../../src/compiler/index.js";
import { buildNativeModuleSync } from "../../../src/compiler/native/build.js";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { compileRoutine, isProgramNativeKernel, type ProgramNativeKernel } from "../../../src/compiler/routines.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES } from "../../../src/compiler/wasm/kernel.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import {
  XlaBuilder, add, arrayShape, dynamicSlice, dynamicUpdateSlice, parameter, scalarShape, tuple, type Computation, type ElementType,
} from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { ELEMENT_TYPES } from "../../../src/types/element_type.js";
import { rng } from "../../support/prng.js";
import { needsCompiler } from "./native_support.js";
import { elementCount } from "../../../src/types/shape.js";

const next = rng(41);
const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));

/** Random bits of every element (pred: 0 or 1), so that any pattern copied wrong shows. */
function randomLiteral(t: ElementType, dims: readonly number[]): Literal {
  const lit = Literal.zeros(arrayShape(t, [...dims]));
  const d = lit.data;
  const bytes = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  for (let i = 0; i < bytes.length; i++) bytes[i] = t === "pred" ? int(0, 1) : int(0, 255);
  return lit;
}

/** A start index of type t for a dimension whose start may be 0..limit: inside, or past either end (huge ones too). */
function startLiteral(t: ElementType, limit: number, k: number): Literal {
  const signed = ELEMENT_TYPES[t].kind === "signed";
  const wide = ELEMENT_TYPES[t].bitWidth === 64;
  const huge = wide ? (signed ? -(2n ** 62n) : 2n ** 63n + 5n) : ELEMENT_TYPES[t].bitWidth === 8 ? (signed ? -128 : 255) : (signed ? -(2 ** 30) : 2 ** 31);
  const v = k % 4 === 0 ? huge : k % 4 === 1 ? limit + int(1, 3) : k % 4 === 2 && signed ? -int(1, 3) : int(0, limit);
  return Literal.scalar(t, typeof v === "bigint" ? v : wide ? BigInt(v) : v);
}

const bytesOf = (l: Literal): Uint8Array => new Uint8Array(l.data.buffer, l.data.byteOffset, l.data.byteLength);
const alignUp = (x: number): number => Math.ceil(x / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;

interface Case { readonly what: string; readonly c: Computation; readonly argSets: readonly Literal[][]; kernel?: ProgramNativeKernel }

test("dynamic-slice and dynamic-update-slice as C: element types, ranks 0-4, clamped starts, whole and in ranges, bit for bit", (t) => {
  const toolchain = nativeToolchain();
  if (!needsCompiler(t) || typeof toolchain === "string") return;
  const target = { wasm: detectWasmTarget(), native: toolchain.cpu };
  const types: ElementType[] = ["pred", "s8", "u16", "f16", "bf16", "s32", "f32", "s64", "u64", "f64", "c64", "c128", "f8e4m3fn"];
  const indexTypes: ElementType[] = ["s32", "s64", "u32", "u8", "s16", "u64"];
  const cases: Case[] = [];
  types.forEach((et, i) => {
    const rank = i % 5;
    const it = indexTypes[i % indexTypes.length]!;
    const dims = Array.from({ length: rank }, () => int(1, 6));
    const sizes = dims.map((d) => int(i % 6 === 0 ? 0 : 1, d));
    const what = `${et}/${it} ${JSON.stringify({ dims, sizes })}`;
    const x = randomLiteral(et, dims);
    const startSets = [0, 1, 2, 3].map((k) => dims.map((d, j) => startLiteral(it, d - sizes[j]!, k + j)));

    const sb = new XlaBuilder("ds");
    const sx = parameter(sb, 0, arrayShape(et, dims), "x");
    const ss = dims.map((_, d) => parameter(sb, 1 + d, scalarShape(it), `s${d}`));
    if (sizes.every((s) => s > 0)) {
      cases.push({ what: `dynamic-slice ${what}`, c: sb.build(dynamicSlice(sx, ss, sizes)), argSets: startSets.map((s) => [x, ...s]) });
    }
    const ub = new XlaBuilder("dus");
    const ux = parameter(ub, 0, arrayShape(et, dims), "x");
    const uu = parameter(ub, 1, arrayShape(et, sizes), "u");
    const us = dims.map((_, d) => parameter(ub, 2 + d, scalarShape(it), `s${d}`));
    const u = randomLiteral(et, sizes);
    cases.push({ what: `dynamic-update-slice ${what}`, c: ub.build(dynamicUpdateSlice(ux, uu, us)), argSets: startSets.map((s) => [x, u, ...s]) });
  });
  for (const c of cases) {
    const k = compileRoutine(c.c.root, target);
    if (isDeclined(k)) assert.fail(`${c.what}: declined: ${k.declined}`);
    assert.ok(isProgramNativeKernel(k), `${c.what}: not a C kernel (${"nativeDeclined" in k ? k.nativeDeclined : ""})`);
    c.kernel = k;
  }
  // One module for every kernel (one compiler run).
  const module = buildNativeModuleSync(cases.map((c) => ({ kernel: c.kernel!, bufferBytes: c.kernel!.bufferBytes })), "dynamic_slices");
  cases.forEach((c, index) => {
    const kernel = c.kernel!;
    const n = kernel.parallelExtent;
    const third = Math.floor(n / 3);
    const splits: [number, number][][] = [[[0, n]], [[0, third], [third, Math.min(n, 2 * third + 1)], [Math.min(n, 2 * third + 1), n]]];
    for (const args of c.argSets) {
      const want = evaluate(c.c, args);
      for (const ranges of splits) {
        let offset = BUFFER_ALIGNMENT;
        const place = (bytes: number): number => { const at = offset; offset = alignUp(offset + Math.max(bytes, 1)); return at; };
        const at = [...args.map((a) => place(a.data.byteLength)), place(want.data.byteLength)];
        const memory = new WebAssembly.Memory({ initial: Math.ceil(offset / 65536) + 1, maximum: MEMORY_MAX_PAGES });
        const mem = new Uint8Array(memory.buffer);
        mem.fill(0xa5);
        args.forEach((a, i) => mem.set(bytesOf(a), at[i]!));
        for (const [b, e] of ranges) module.run(index, memory, new Uint32Array(at), b, e);
        const result = at[at.length - 1]!;
        const got = mem.subarray(result, result + want.data.byteLength);
        const starts = args.slice(c.what.startsWith("dynamic-slice") ? 1 : 2).map((s) => String(s.toNumbers()[0]));
        assert.deepEqual(got, bytesOf(want), `${c.what}, starts ${starts.join(",")}, ranges ${JSON.stringify(ranges)}`);
      }
    }
  });
});

test("compiled on native: a KV-cache write into a donated cache and into a dying temporary runs in place as C, clamped or not", (t) => {
  if (!needsCompiler(t)) return;
  const b = new XlaBuilder("kv_write");
  const cache = parameter(b, 0, arrayShape("f32", [2, 12, 16, 8]), "cache");
  const row = parameter(b, 1, arrayShape("f32", [2, 12, 1, 8]), "row");
  const pos = parameter(b, 2, scalarShape("s32"), "pos");
  const zero = parameter(b, 3, scalarShape("s32"), "zero");
  const other = parameter(b, 4, arrayShape("bf16", [6, 4]), "other");
  const small = parameter(b, 5, arrayShape("bf16", [2, 4]), "small");
  const written = dynamicUpdateSlice(cache, row, [zero, zero, pos, zero]);
  // The operand is a temporary that dies here: the planner writes the update over it.
  const temporary = dynamicUpdateSlice(add(other, other), small, [pos, zero]);
  const c = b.build(tuple(b, [written, temporary]));
  const exe = compileSync(c, { backend: "native", donate: [0] });
  try {
    const dump = exe.dump();
    const kernels = exe.program.kernels.filter((k) => k.name.startsWith("dynamic-update-slice"));
    assert.equal(kernels.length, 2, dump);
    assert.ok(kernels.every(isProgramNativeKernel), dump);
    assert.deepEqual(exe.stats.donation.map((d) => [d.parameterLeaf, d.output]), [[0, 0]], dump);
    for (const p of [0, 5, 15, 16, 40, -7]) {
      // Numbers, not random bits: the adds' NaN payloads are not promised (data movement keeps NaN bits: test/data_movement/nan_bits).
      const values = (t: ElementType, dims: number[]): Literal =>
        Literal.fromValues(t, dims, Array.from({ length: elementCount(dims) }, () => int(-500, 500) / 4));
      const args = [values("f32", [2, 12, 16, 8]), values("f32", [2, 12, 1, 8]), Literal.scalar("s32", p), Literal.scalar("s32", 0),
        values("bf16", [6, 4]), values("bf16", [2, 4])];
      const want = evaluate(c, args);
      const got = exe.run(args);
      want.elements.forEach((w, i) => assert.deepEqual(bytesOf(got.elements[i]!), bytesOf(w), `pos ${p}, result ${i}`));
    }
  } finally {
    exe.delete();
  }
});
