// The f32 transcendental approximations (src/compiler/kernel/approximations.ts) against the
// interpreter (double-precision Math.* rounded once to f32), within their stated ULP
// bounds, over random bit patterns (every exponent), dense ranges and the specials.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, arrayShape, atan2, broadcastInDim, constantR0, mul, reduce, scalarShape, sub, cbrt, cos, erf, evaluate, pow, sin, tan, exp, expm1, log, log1p, logistic, parameter, rsqrt, tanh, Literal, XlaBuilder, type XlaOp,
} from "../../../src/index.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { rng } from "../../support/prng.js";
import { checkFusion, randomLiteral, runKernel, SCALAR_TARGET, TARGET, ulpDistance } from "./harness.js";

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

/**
 * `build` of parameters holding the given vectors (all of type `t`) as the interpreter
 * computes it, and as the fused kernel computes it on the SIMD and the scalar target.
 */
function fusedBesideInterpreter(
  name: string, build: (params: XlaOp[]) => XlaOp, t: "f32" | "f64", columns: readonly (readonly number[] | Float32Array)[],
): { expected: number[]; runs: { simd: boolean; got: number[] }[] } {
  const n = columns[0]!.length;
  const b = new XlaBuilder(name);
  const c = b.build(build(columns.map((_, i) => parameter(b, i, arrayShape(t, [n])))));
  const args = columns.map((xs) => Literal.fromStorage(arrayShape(t, [n]), t === "f32" ? Float32Array.from(xs) : Float64Array.from(xs)));
  const expected = evaluate(c, args).values() as number[];
  const runs = [TARGET, SCALAR_TARGET].map((target) => {
    const k = emitFusionKernel(c, target);
    if (isDeclined(k)) assert.fail(k.declined);
    return { simd: target.simd, got: runKernel(k, target, c, args)[0]!.values() as number[] };
  });
  return { expected, runs };
}

/** Asserts that `got` is within `bound` ulps of `expected` everywhere, naming the worst input. */
function assertWithinUlps(label: string, t: "f32" | "f64", xs: ArrayLike<number>, got: readonly number[], expected: readonly number[], bound: number, simd: boolean): void {
  let worst = 0;
  let at = 0;
  got.forEach((g, i) => {
    const d = ulpDistance(t, g, expected[i]!);
    if (d > worst) { worst = d; at = i; }
  });
  if (process.env.SHOW_ULPS) console.log(label, simd, worst);
  assert.ok(worst <= bound, `${label}(${xs[at]}) = ${got[at]}, expected ${expected[at]}: ${worst} ulp (simd ${simd})`);
}

const BOUNDS: [string, (x: XlaOp) => XlaOp, number, number, number][] = [
  ["exp", exp, 3, -110, 95],
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
    const { expected, runs } = fusedBesideInterpreter(name, ([x]) => fn(x!), "f32", [xs]);
    for (const { simd, got } of runs) assertWithinUlps(name, "f32", xs, got, expected, bound, simd);
  });
}

for (const [name, fn, bound] of [["atan2", atan2, 1], ["pow", pow, 1]] as const) {
test(`${name} f32 within ${bound} ulp, with C's zeros, infinities and NaNs (SIMD and scalar)`, () => {
  const specials = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 1e-45, -3.5, 2e30, 0.5, -2, 3, 2.5, -0.5];
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
    ys.push(Math.round((r() - 0.5) * 20)); // integer exponents of negative bases
    xs.push((r() - 0.5) * 8);
  }
  const { expected, runs } = fusedBesideInterpreter(name, ([y, x]) => fn(y!, x!), "f32", [ys, xs]);
  for (const { simd, got } of runs) {
    got.forEach((g, i) => {
      const d = ulpDistance("f32", g, expected[i]!);
      const exact = !Number.isFinite(ys[i]!) || !Number.isFinite(xs[i]!) || ys[i] === 0 || xs[i] === 0;
      assert.ok(d <= bound && (!exact || Object.is(g, expected[i]) || (Number.isNaN(g) && Number.isNaN(expected[i]!)) || d === 0),
        `${name}(${ys[i]}, ${xs[i]}) = ${g}, expected ${expected[i]} (simd ${simd})`);
    });
  }
});
}

test("exp and log of f64 within 3 ulp of Math.exp / Math.log (SIMD and scalar)", () => {
  const r = rng(7);
  const xs: number[] = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 5e-324, 2.2250738585072014e-308, 709.78, 709.79, -745.1, -744, 1e308];
  const view = new DataView(new ArrayBuffer(8));
  for (let i = 0; i < 20000; i++) {
    view.setUint32(0, Math.floor(r() * 2 ** 32));
    view.setUint32(4, Math.floor(r() * 2 ** 32));
    xs.push(view.getFloat64(0), (r() - 0.5) * 1500, r() * 3, 1 + (r() - 0.5) * 1e-6);
  }
  for (const [name, fn] of [["exp", exp], ["log", log]] as const) {
    const { expected, runs } = fusedBesideInterpreter(`${name}64`, ([x]) => fn(x!), "f64", [xs]);
    for (const { simd, got } of runs) assertWithinUlps(`${name} f64`, "f64", xs, got, expected, 3, simd);
  }
});

test("exp, tanh, logistic: NaN, ±inf, ±0, overflow and underflow exactly as the interpreter (SIMD and scalar)", () => {
  const edges = [
    NaN, -NaN, Infinity, -Infinity, 0, -0, 1e-45, -1e-45, 1e-40, -1e-40, 1e-30, -1e-30, 1e-8, -1e-8,
    88.72, 88.7228, 88.72284, 88.7229, 89, 89.5, 100, 1e30, 3.4028235e38,
    -87.3, -87.34, -87.5, -88, -100, -103.2, -103.97, -103.98, -104, -104.5, -110, -150, -1e30, -3.4028235e38,
    9.01, 9.02, 9.1, 20, -9.01, -9.02, -9.1, -20, 0.5, -0.5, 2, -2,
  ];
  for (const [name, fn, bound] of [["exp", exp, 3], ["tanh", tanh, 4], ["logistic", logistic, 4]] as const) {
    const xs = Float32Array.from(edges);
    const { expected, runs } = fusedBesideInterpreter(name, ([x]) => fn(x!), "f32", [xs]);
    for (const { simd, got } of runs) {
      got.forEach((g, i) => {
        const want = expected[i]!;
        // Exact where the interpreter's result is special (NaN, ±inf, ±0, ±1, 1/2): the sign of a zero included.
        const special = Number.isNaN(want) || !Number.isFinite(want) || want === 0 || Math.abs(want) === 1 || want === 0.5;
        const ok = special ? Object.is(g, want) || (Number.isNaN(g) && Number.isNaN(want)) : ulpDistance("f32", g, want) <= bound;
        assert.ok(ok, `${name}(${xs[i]}) = ${g}, expected ${want} (simd ${simd})`);
      });
    }
  }
});

test("hoisted v128 constants: several transcendentals in one loop and in a row reduction (softmax's exp)", () => {
  // The vector code reads its constants from locals set before each vector loop; one
  // constant shared by exp, tanh and logistic, and a reduction's body, must read the same values.
  const dims = [5, 37];
  const b = new XlaBuilder("mix");
  const x = parameter(b, 0, arrayShape("f32", dims));
  const y = parameter(b, 1, arrayShape("f32", dims));
  const mix = b.build(add(mul(exp(x), logistic(y)), tanh(sub(x, y))));
  const args = [randomLiteral("f32", dims, 11), randomLiteral("f32", dims, 12)];
  for (const target of [TARGET, SCALAR_TARGET]) checkFusion(mix, args, { ulps: 8, rel: 1e-6, absFloor: 4 }, target); // the sum may cancel

  const s = new XlaBuilder("expsum");
  const p = parameter(s, 0, arrayShape("f32", dims));
  const m = parameter(s, 1, arrayShape("f32", [dims[0]!]));
  const sum = s.createSubBuilder("add");
  const r = sum.build(add(parameter(sum, 0, scalarShape("f32")), parameter(sum, 1, scalarShape("f32"))));
  const expSum = s.build(reduce(exp(sub(p, broadcastInDim(m, dims, [0]))), constantR0(s, "f32", 0), r, [1]));
  const rows = Literal.fromStorage(arrayShape("f32", dims), Float32Array.from({ length: 5 * 37 }, (_, i) => Math.sin(i) * 30));
  const maxes = Literal.fromStorage(arrayShape("f32", [5]), Float32Array.from([30, 10, 0, -5, 40]));
  for (const target of [TARGET, SCALAR_TARGET]) checkFusion(expSum, [rows, maxes], { rel: 1e-5 }, target);
});
