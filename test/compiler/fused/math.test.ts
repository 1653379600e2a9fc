// The f32 transcendental approximations (src/compiler/wasm/math.ts) against the
// interpreter (double-precision Math.* rounded once to f32), within their stated ULP
// bounds, over random bit patterns (every exponent), dense ranges and the specials.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  arrayShape, atan2, cbrt, cos, erf, evaluate, sin, tan, exp, expm1, log, log1p, logistic, parameter, rsqrt, tanh, Literal, XlaBuilder, type XlaOp,
} from "../../../src/index.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { isUnsupported } from "../../../src/compiler/wasm/kernel.js";
import { rng } from "../../support/prng.js";
import { runKernel, SCALAR_TARGET, TARGET, ulpDistance } from "./harness.js";

function inputs(lo: number, hi: number): Float32Array {
  const r = rng(1234);
  const out: number[] = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38];
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  for (let i = 0; i < 20000; i++) {
    bits[0] = Math.floor(r() * 2 ** 32);
    out.push(asFloat[0]!);
  }
  for (let i = 0; i < 20000; i++) out.push(lo + (hi - lo) * r());
  for (let i = -300; i <= 300; i++) out.push(i / 8, i * 1e-3, i * 0.37);
  return Float32Array.from(out);
}

const BOUNDS: [string, (x: XlaOp) => XlaOp, number, number, number][] = [
  ["exp", exp, 2, -110, 95],
  ["log", log, 2, 0, 10],
  ["log1p", log1p, 3, -1, 2],
  ["expm1", expm1, 3, -5, 5],
  ["tanh", tanh, 4, -5, 5],
  ["logistic", logistic, 4, -20, 20],
  ["rsqrt", rsqrt, 1, 0, 100],
  ["cbrt", cbrt, 2, -1000, 1000],
  ["erf", erf, 4, -5, 5],
  ["sin", sin, 1, -100, 100],
  ["cos", cos, 1, -1e6, 1e6],
  ["tan", tan, 1, -10, 10],
];

for (const [name, fn, bound, lo, hi] of BOUNDS) {
  test(`${name} f32 within ${bound} ulp (SIMD and scalar)`, () => {
    const xs = inputs(lo, hi);
    const b = new XlaBuilder(name);
    const c = b.build(fn(parameter(b, 0, arrayShape("f32", [xs.length]))));
    const arg = Literal.fromStorage(arrayShape("f32", [xs.length]), xs);
    const expected = evaluate(c, [arg]).values() as number[];
    for (const target of [TARGET, SCALAR_TARGET]) {
      const k = emitFusionKernel(c, target);
      if (isUnsupported(k)) assert.fail(k.unsupported);
      const got = runKernel(k, target, c, [arg])[0]!.values() as number[];
      let worst = 0;
      let at = 0;
      got.forEach((g, i) => {
        const d = ulpDistance("f32", g, expected[i]!);
        if (d > worst) { worst = d; at = i; }
      });
      if (process.env.SHOW_ULPS) console.log(name, target.simd, worst);
      assert.ok(worst <= bound, `${name}(${xs[at]}) = ${got[at]}, expected ${expected[at]}: ${worst} ulp (simd ${target.simd})`);
    }
  });
}

test("atan2 f32 within 1 ulp, with C's zeros and infinities (SIMD and scalar)", () => {
  const specials = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 1e-45, -3.5, 2e30];
  const ys: number[] = [];
  const xs: number[] = [];
  for (const a of specials) for (const b of specials) { ys.push(a); xs.push(b); }
  const r = rng(99);
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  for (let i = 0; i < 20000; i++) {
    bits[0] = Math.floor(r() * 2 ** 32);
    ys.push(asFloat[0]!);
    bits[0] = Math.floor(r() * 2 ** 32);
    xs.push(asFloat[0]!);
    ys.push((r() - 0.5) * 20);
    xs.push((r() - 0.5) * 20);
  }
  const n = ys.length;
  const b = new XlaBuilder("atan2");
  const c = b.build(atan2(parameter(b, 0, arrayShape("f32", [n])), parameter(b, 1, arrayShape("f32", [n]))));
  const args = [Literal.fromStorage(arrayShape("f32", [n]), Float32Array.from(ys)), Literal.fromStorage(arrayShape("f32", [n]), Float32Array.from(xs))];
  const expected = evaluate(c, args).values() as number[];
  for (const target of [TARGET, SCALAR_TARGET]) {
    const k = emitFusionKernel(c, target);
    if (isUnsupported(k)) assert.fail(k.unsupported);
    const got = runKernel(k, target, c, args)[0]!.values() as number[];
    got.forEach((g, i) => {
      const d = ulpDistance("f32", g, expected[i]!);
      const exact = !Number.isFinite(ys[i]!) || !Number.isFinite(xs[i]!) || ys[i] === 0 || xs[i] === 0;
      assert.ok(d <= 1 && (!exact || Object.is(g, expected[i]) || (Number.isNaN(g) && Number.isNaN(expected[i]!)) || d === 0),
        `atan2(${ys[i]}, ${xs[i]}) = ${g}, expected ${expected[i]} (simd ${target.simd})`);
    });
  }
});
