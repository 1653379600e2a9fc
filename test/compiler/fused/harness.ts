// Test support for generated fused kernels: run a kernel on literals in a fresh
// WebAssembly.Memory (buffers at BUFFER_ALIGNMENT-aligned offsets, as the executor
// places them), whole and in two halves of its work range, and compare with the
// interpreter: bit-exact, within a ULP bound, or within a relative tolerance.

import assert from "node:assert/strict";
import {
  allocateStorage, ELEMENT_TYPES, evaluate, Literal, type ArrayShape, type Computation, type ElementType, type Scalar,
} from "../../../src/index.js";
import { rng } from "../../support/prng.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES, type WasmKernel, type WasmTarget } from "../../../src/compiler/wasm/kernel.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { elementCount } from "../../../src/types/shape.js";

export const TARGET: WasmTarget = detectWasmTarget();
export const SCALAR_TARGET: WasmTarget = { ...TARGET, simd: false };

function resultShapes(c: Computation): ArrayShape[] {
  const s = c.root.shape;
  if (s.kind === "tuple") return s.elements.map((e) => e as ArrayShape);
  return [s as ArrayShape];
}

const align = (n: number): number => Math.ceil(n / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;

/** Runs `kernel` over [begin, end) ranges (all of them in order) and returns its results. */
export function runKernel(kernel: WasmKernel, target: WasmTarget, c: Computation, args: readonly Literal[], ranges?: readonly [number, number][]): Literal[] {
  const shapes = resultShapes(c);
  const sizes = [...args.map((a) => a.data.byteLength), ...shapes.map((s) => allocateStorage(s.elementType, count(s)).byteLength)];
  const offsets: number[] = [];
  let at = BUFFER_ALIGNMENT; // keep 0 unused: a null pointer shows up as a wrong answer
  for (const n of sizes) {
    offsets.push(at);
    at = align(at + Math.max(n, 1));
  }
  const pages = Math.ceil((at + 65536) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
  const bytes = new Uint8Array(memory.buffer);
  // Poison the result buffers so an element the kernel forgets to write shows.
  bytes.fill(0xa5);
  args.forEach((a, i) => bytes.set(new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength), offsets[i]!));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(kernel.bytes), { env: { memory } });
  const run = instance.exports.run as (...xs: number[]) => void;
  for (const [b, e] of ranges ?? [[0, kernel.parallelExtent]]) run(...offsets, b, e);
  return shapes.map((s, k) => {
    const data = allocateStorage(s.elementType, count(s));
    const off = offsets[args.length + k]!;
    new Uint8Array(data.buffer, data.byteOffset, data.byteLength).set(bytes.subarray(off, off + data.byteLength));
    return Literal.fromStorage(s, data);
  });
}

function count(s: ArrayShape): number {
  return elementCount(s.dimensions);
}

export interface Tolerance {
  /** Allowed distance in units in the last place (floats). */
  ulps?: number;
  /** Allowed relative error |a - b| ≤ rel · max(|b|, absFloor) (reassociated reductions). */
  rel?: number;
  absFloor?: number;
}

/** Distance in ulps between two floats of type t (0 for equal values and for two NaNs). */
export function ulpDistance(t: ElementType, a: number, b: number): number {
  if (Number.isNaN(a) && Number.isNaN(b)) return 0;
  if (Number.isNaN(a) || Number.isNaN(b)) return Infinity;
  if (a === b) return 0;
  if (t === "f64") {
    // In bigint: the 64-bit keys do not fit a double.
    const key64 = (x: number): bigint => {
      const v = new DataView(new ArrayBuffer(8));
      v.setFloat64(0, x);
      const bits = v.getBigInt64(0);
      return bits < 0n ? -(bits & 0x7fffffffffffffffn) : bits;
    };
    const d = key64(a) - key64(b);
    return Number(d < 0n ? -d : d);
  }
  const key = (x: number): number => {
    const v = new DataView(new ArrayBuffer(4));
    v.setFloat32(0, x);
    let bits = v.getInt32(0);
    if (t === "bf16") bits >>= 16;
    return bits < 0 ? -(bits & 0x7fffffff) : bits;
  };
  return Math.abs(key(a) - key(b));
}

/** Compares kernel results with expected literals; returns nothing or throws with the first mismatch. */
export function assertClose(actual: readonly Literal[], expected: Literal, tol: Tolerance = {}, what = ""): void {
  const exp = expected.shape.kind === "tuple" ? expected.elements : [expected];
  assert.equal(actual.length, exp.length);
  actual.forEach((a, k) => {
    const e = exp[k]!;
    const t = e.elementType;
    const av = a.values();
    const ev = e.values();
    for (let i = 0; i < ev.length; i++) {
      const x = av[i]!;
      const y = ev[i]!;
      if (ELEMENT_TYPES[t].kind === "float") {
        const xn = x as number;
        const yn = y as number;
        if (Object.is(xn, yn) || (Number.isNaN(xn) && Number.isNaN(yn))) continue;
        const d = ulpDistance(t, xn, yn);
        const ok = (tol.ulps !== undefined && d <= tol.ulps)
          || (tol.rel !== undefined && Math.abs(xn - yn) <= tol.rel * Math.max(Math.abs(yn), tol.absFloor ?? 0));
        const show = (v: number): string => (Object.is(v, -0) ? "-0" : String(v));
        if (!ok) assert.fail(`${what} output ${k} element ${i}: got ${show(xn)}, expected ${show(yn)} (${d} ulp)`);
      } else if (x !== y) {
        assert.fail(`${what} output ${k} element ${i}: got ${String(x)}, expected ${String(y)}`);
      }
    }
  });
}

/** Compiles, runs (whole and in two halves) and compares with the interpreter. */
export function checkFusion(c: Computation, args: readonly Literal[], tol: Tolerance = {}, target: WasmTarget = TARGET): WasmKernel {
  const kernel = emitFusionKernel(c, target);
  if (isDeclined(kernel)) assert.fail(`unsupported: ${kernel.declined}`);
  assert.ok(WebAssembly.validate(kernel.bytes), "module validates");
  const expected = evaluate(c, args);
  assertClose(runKernel(kernel, target, c, args), expected, tol, `${c.name} whole`);
  const e = kernel.parallelExtent;
  const half = Math.floor(e / 2);
  assertClose(runKernel(kernel, target, c, args, [[0, half], [half, e]]), expected, tol, `${c.name} halves`);
  return kernel;
}

function randomValues(t: ElementType, n: number, seed: number): Scalar[] {
  const r = rng(seed);
  const out: Scalar[] = [];
  for (let i = 0; i < n; i++) {
    const u = r();
    switch (t) {
      case "pred": out.push(u < 0.5); break;
      case "f32": case "f64": case "bf16": case "f16":
        out.push(u < 0.02 ? [NaN, Infinity, -Infinity, 0, -0][Math.floor(r() * 5)]! : (u - 0.5) * 2 ** Math.floor(r() * 20 - 8));
        break;
      case "s64": out.push(BigInt(Math.floor((u - 0.5) * 2 ** 52)) * BigInt(Math.floor(r() * 4096))); break;
      case "u64": out.push(BigInt(Math.floor(u * 2 ** 52)) * BigInt(Math.floor(r() * 4096))); break;
      default: {
        const info = { s8: [-128, 256], u8: [0, 256], s16: [-32768, 65536], u16: [0, 65536], s32: [-(2 ** 31), 2 ** 32], u32: [0, 2 ** 32], s4: [-8, 16], u4: [0, 16], s2: [-2, 4], u2: [0, 4] }[t as "s8"]!;
        // Small values often, so division, shifts and compares meet their edge cases.
        out.push(r() < 0.3 ? Math.floor(r() * 9) - 4 + (info[0] === 0 ? 4 : 0) : info[0]! + Math.floor(u * info[1]!));
      }
    }
  }
  return out;
}

/** Random values with specials (NaN, ±inf, ±0 for floats; small values and extremes for integers). */
export function randomLiteral(t: ElementType, dims: readonly number[], seed: number): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, randomValues(t, n, seed));
}

