// The native backend's f32 transcendentals (native/c_math.ts: the WebAssembly backend's
// approximations written as C) against the interpreter (double-precision Math.* rounded
// once to f32), within kernel/approximations.ts's stated ULP bounds, over random bit patterns (every
// exponent, NaNs and infinities included), dense ranges, the specials and the overflow
// and underflow edges; with the multiply-adds fused (this machine's build, where it has
// FMA) and as separate multiplies and adds (-DXK_NO_FMA), since the bounds must hold
// for both.

import { test } from "node:test";
import assert from "node:assert/strict";
import { emitFusionKernelC } from "../../../src/compiler/native/emit_c_reduce.js";
import type { NativeKernel } from "../../../src/compiler/native/kernel.js";
import {
  abs, arrayShape, cbrt, erf, evaluate, exp, expm1, log, log1p, logistic, neg, parameter, tanh, Literal, XlaBuilder, type XlaOp,
} from "../../../src/index.js";
import type { Computation } from "../../../src/ir/computation.js";
import { rng } from "../../support/prng.js";
import { ulpDistance } from "../../support/ulp.js";
import { nativeSkipReason, runNativeCases } from "./gemm_harness.js";

const skip = nativeSkipReason();

function sweep(lo: number, hi: number): Float32Array {
  const r = rng(4321);
  const out: number[] = [
    NaN, -NaN, Infinity, -Infinity, 0, -0, 1, -1, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38, 3.4028235e38, -3.4028235e38,
    // exp's overflow and underflow edges, tanh's saturation, logistic's tails.
    88.72283, 88.72284, 89, -87.33654, -103.97208, -104, -150, 9.01, 9.02, 9.1, -9.1, 16.6355, -16.6355, 103, -103,
  ];
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  for (let i = 0; i < 30000; i++) {
    bits[0] = Math.floor(r() * 2 ** 32);
    out.push(asFloat[0]!);
  }
  for (let i = 0; i < 30000; i++) out.push(lo + (hi - lo) * r());
  for (let i = -400; i <= 400; i++) out.push(i / 8, i * 1e-3, i * 0.37, i * 1e-6);
  return Float32Array.from(out);
}

// kernel/approximations.ts's bounds. "exp of -|x|" is the exp of a value the compiler proves non-positive (a shorter routine).
const BOUNDS: readonly [string, (x: XlaOp) => XlaOp, number, number, number][] = [
  ["exp", exp, 3, -110, 95],
  ["exp of -|x|", (x) => exp(neg(abs(x))), 3, -110, 110],
  ["log", log, 2, 0, 10],
  ["log1p", log1p, 3, -1, 2],
  ["expm1", expm1, 3, -5, 5],
  ["tanh", tanh, 4, -10, 10],
  ["logistic", logistic, 4, -20, 20],
  ["cbrt", cbrt, 2, -1000, 1000],
  ["erf", erf, 4, -5, 5],
];

interface Case { name: string; bound: number; kernel: NativeKernel; xs: Float32Array; want: number[] }

function cases(): Case[] {
  return BOUNDS.map(([name, fn, bound, lo, hi]) => {
    const xs = sweep(lo, hi);
    const b = new XlaBuilder(name.replace(/\W/g, "_"));
    const c: Computation = b.build(fn(parameter(b, 0, arrayShape("f32", [xs.length]))));
    const kernel = emitFusionKernelC(c);
    if ("declined" in kernel) throw new Error(`${name}: ${kernel.declined}`);
    if (name === "exp of -|x|") assert.match(kernel.c.source, /xk_expNonPositive_f32/);
    const want = evaluate(c, [Literal.fromStorage(arrayShape("f32", [xs.length]), xs)]).values() as number[];
    return { name, bound, kernel, xs, want };
  });
}

for (const [flags, label] of [[[], "as built here"], [["-DXK_NO_FMA"], "without fused multiply-adds"]] as const) {
  test(`f32 transcendentals stay within the wasm backend's stated ulp bounds (${label})`, (t) => {
    if (skip !== undefined) { t.skip(skip); return; }
    const cs = cases();
    const results = runNativeCases(cs.map((c) => ({ kernel: c.kernel, operands: [c.xs], resultBytes: [c.xs.byteLength] })), "c_math", flags);
    cs.forEach((c, i) => {
      const bytes = results[i]![0]!;
      const got = new Float32Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, c.xs.length);
      let worst = 0;
      let at = 0;
      got.forEach((g, k) => {
        const d = ulpDistance("f32", g, c.want[k]!);
        if (d > worst) { worst = d; at = k; }
      });
      if (process.env["SHOW_ULPS"]) console.log(`${c.name} (${label}): worst ${worst} ulp`);
      assert.ok(worst <= c.bound, `${c.name}(${c.xs[at]}) = ${got[at]}, expected ${c.want[at]}: ${worst} ulp > ${c.bound}`);
    });
  });
}
