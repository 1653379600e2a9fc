// sin, cos and tan on the GPU (webgpu/wgsl_trig.ts: an f32 argument reduction exact
// over the whole f32 range, then minimax polynomials) against f64 (Math.sin, Math.cos,
// Math.tan of the f32 argument) and the interpreter: a dense sweep of [-8π, 8π], every
// binade up to the largest f32 (random significands), arguments next to multiples of
// π/2, and the specials (NaN, infinities, signed zeros). The bounds are docs/numerics.md's.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { XlaBuilder, arrayShape, parameter, sin, cos, tan, tuple } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/** docs/numerics.md: the WebGPU backend's sin and cos, and tan, in f32 ulps of the exact value. */
const BOUND = { sin: 2, cos: 2, tan: 3 } as const;

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const fromBits = (b: number): number => { U32[0] = b >>> 0; return F32[0]!; };
const fround = Math.fround;

/** |got - exact| in ulps of the f32 binade of the exact value. */
function ulps(got: number, exact: number): number {
  if (Number.isNaN(exact)) return Number.isNaN(got) ? 0 : Infinity;
  const e = Math.abs(fround(exact));
  const ulp = e < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(e)) - 23);
  return Math.abs(got - exact) / ulp;
}

function inputs(): number[] {
  const xs: number[] = [0, -0, Infinity, -Infinity, NaN, fromBits(0x7f7fffff), -fromBits(0x7f7fffff), 1e-30, -1e-30];
  // Around π/4 (where the reduction starts) and the first multiples of π/2.
  for (const m of [0.5, 1, 2, 3, 4, 100, 1000]) {
    F32[0] = (m * Math.PI) / 2;
    for (let d = -4; d <= 4; d++) xs.push(fromBits(U32[0]! + d), -fromBits(U32[0]! + d));
  }
  // Dense: [-8π, 8π] in 2^18 steps.
  const n = 1 << 18;
  for (let i = 0; i < n; i++) xs.push(fround(-8 * Math.PI + (16 * Math.PI * i) / n));
  // Every binade from 2^-20 to 2^127, 512 random significands each, both signs.
  const next = rng(2024);
  for (let e = -20; e <= 127; e++) {
    for (let i = 0; i < 512; i++) xs.push(fromBits((((e + 127) << 23) | Math.floor(next() * 0x800000)) ^ (i & 1 ? 0x80000000 : 0)));
  }
  // The f32 nearest to large multiples of π/2 (k·π/2 rounded): where the reduction cancels most.
  for (let k = 1; k < 4096; k += 7) xs.push(fround((k * Math.PI) / 2), fround(k * 12345.678 * Math.PI));
  return xs;
}

test("sin, cos, tan of f32 on the GPU: within 2, 2, 3 ulp of f64 over the whole f32 range; NaN, infinities and signed zeros as the interpreter's", { skip }, async () => {
  const xs = inputs();
  const b = new XlaBuilder("trig");
  const x = parameter(b, 0, arrayShape("f32", [xs.length]), "x");
  const c = b.build(tuple(b, [sin(x), cos(x), tan(x)]));
  const exe = await compile(c, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    const arg = Literal.fromValues("f32", [xs.length], xs);
    const got = (await exe.run([arg])).elements.map((l) => l.toNumbers());
    const want = evaluate(c, [arg]).elements.map((l) => l.toNumbers());
    const exact = [Math.sin, Math.cos, Math.tan];
    const worst: string[] = [];
    (["sin", "cos", "tan"] as const).forEach((name, f) => {
      let max = 0, at = 0;
      xs.forEach((v, i) => {
        const g = got[f]![i]!;
        // NaN, infinities, signed zeros: the interpreter's values exactly.
        if (!Number.isFinite(v) || v === 0) {
          assert.ok(Object.is(g, want[f]![i]!) || (Number.isNaN(g) && Number.isNaN(want[f]![i]!)), `${name}(${v}) = ${g}, the interpreter gives ${want[f]![i]}`);
          return;
        }
        const u = ulps(g, exact[f]!(v));
        if (u > max) [max, at] = [u, v];
      });
      worst.push(`${name} ${max.toFixed(3)} ulp at ${at}`);
      assert.ok(max <= BOUND[name], `${name}: ${max} ulp at x = ${at} (bound ${BOUND[name]})`);
    });
    console.log(`webgpu trig over ${xs.length} arguments, worst: ${worst.join("; ")}`);
  } finally {
    exe.delete();
  }
});
