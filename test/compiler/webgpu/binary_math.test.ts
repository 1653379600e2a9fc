// pow, atan2 and remainder of f32 on the GPU (webgpu/wgsl_binary_math.ts: pow and atan2
// in double-f32, fmod exact on the significands) and integer power, against f64 (Math.pow, Math.atan2 of the f32 arguments) and the
// interpreter, in one program (one kernel): every pair of a table of special values
// (NaN, infinities, signed zeros, ±1, odd and even integers, the largest and smallest
// f32, subnormals), then random pairs chosen to reach every part of each function.
// Specials, remainders and integer powers are compared bit for bit with the interpreter;
// finite nonzero pow and atan2 results in ulps of the exact value (docs/numerics.md).
// WGSL lets an implementation flush f32 subnormals (SwiftShader does): a result in
// the subnormal range is not compared, and no function here reads its operands
// through f32 arithmetic that would flush them.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { XlaBuilder, arrayShape, atan2, parameter, pow, rem, tuple } from "../../../src/index.js";
import { Literal } from "../../../src/types/literal.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/** docs/numerics.md: the WebGPU backend's pow and atan2 of f32, in ulps of the exact value. */
const BOUND = { pow: 1, atan2: 1 } as const;

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const fromBits = (b: number): number => { U32[0] = b >>> 0; return F32[0]!; };
const fround = Math.fround;
const MAX = fromBits(0x7f7fffff);
const MIN_NORMAL = 2 ** -126;

/** |got - exact| in ulps of the f32 binade of the exact value. */
function ulps(got: number, exact: number): number {
  const e = Math.abs(fround(exact));
  const ulp = e < MIN_NORMAL ? 2 ** -149 : 2 ** (Math.floor(Math.log2(e)) - 23);
  return Math.abs(got - exact) / ulp;
}

const same = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

const SPECIALS = [
  0, -0, 1, -1, 2, -2, 0.5, -0.5, 3, -3, 1.5, -1.5, 0.3, -25.5, Infinity, -Infinity, NaN, MAX, -MAX, MIN_NORMAL, -MIN_NORMAL,
  fromBits(1), -fromBits(0x7fffff), fromBits(0x3f800001), fromBits(0x3f7fffff), 2 ** 24, -(2 ** 24 + 2), 2 ** 23 + 1, -(2 ** 23 + 1), 2 ** 31, 1e30, -1e-30,
];

/** The argument pairs: the specials' every pair, then random ones per function. */
function pairs(): { xs: number[]; ys: number[] } {
  const xs: number[] = [];
  const ys: number[] = [];
  const add = (x: number, y: number): void => { xs.push(fround(x)); ys.push(fround(y)); };
  for (const x of SPECIALS) for (const y of SPECIALS) add(x, y);
  const next = rng(2038);
  const anyBits = (): number => fromBits(Math.floor(next() * 0x7f800000) | (next() < 0.5 ? 0x80000000 : 0));
  const n = 1 << 13;
  for (let i = 0; i < n; i++) {
    // pow: |x|^y = 2^w for w over the whole range, near overflow and underflow included; x any, near 1, or small integers.
    const w = -150 + next() * 279;
    const x = i % 3 === 0 ? anyBits() : i % 3 === 1 ? 1 + (next() - 0.5) * 2 ** -(next() * 23) : Math.floor(next() * 20) - 10;
    const lx = Math.log2(Math.abs(fround(x)));
    add(x, lx === 0 || !Number.isFinite(lx) ? next() * 10 : i % 4 === 0 ? Math.round(w / lx) : w / lx);
    // atan2: any two values, and ratios near 1 and tan(π/8).
    const y = anyBits();
    add(y, i % 2 === 0 ? anyBits() : y * (i % 4 === 1 ? 1 + (next() - 0.5) * 1e-3 : -1 / (Math.SQRT2 - 1) * (1 + (next() - 0.5) * 1e-4)));
    // fmod: any two values (exponent differences up to 253), and near multiples.
    add(anyBits(), i % 2 === 0 ? anyBits() : fround(x) / (Math.floor(next() * 1000) + 1 + (next() - 0.5) * 1e-6));
  }
  return { xs, ys };
}

test("pow, atan2, remainder of f32, integer power on the GPU: specials bit for bit, pow and atan2 within 1 ulp of f64, remainders exact", { skip }, async () => {
  const { xs, ys } = pairs();
  const len = xs.length;
  const next = rng(7);
  // Integer bases and exponents: small ones (negative exponents included), and any.
  const ib = Array.from({ length: len }, (_, i) => (i % 2 === 0 ? Math.floor(next() * 21) - 10 : Math.floor(next() * 2 ** 32) - 2 ** 31));
  const ie = Array.from({ length: len }, (_, i) => (i % 2 === 0 ? Math.floor(next() * 46) - 5 : Math.floor(next() * 2 ** 32) - 2 ** 31));
  const b = new XlaBuilder("binary_math");
  const shape = (t: "f32" | "s32" | "u8") => arrayShape(t, [len]);
  const x = parameter(b, 0, shape("f32"), "x");
  const y = parameter(b, 1, shape("f32"), "y");
  const i = parameter(b, 2, shape("s32"), "i");
  const j = parameter(b, 3, shape("s32"), "j");
  const u = parameter(b, 4, shape("u8"), "u");
  const v = parameter(b, 5, shape("u8"), "v");
  const c = b.build(tuple(b, [pow(x, y), atan2(x, y), rem(x, y), pow(i, j), pow(u, v)]));
  const args = [
    Literal.fromValues("f32", [len], xs), Literal.fromValues("f32", [len], ys),
    Literal.fromValues("s32", [len], ib), Literal.fromValues("s32", [len], ie),
    Literal.fromValues("u8", [len], ib.map((k) => k & 255)), Literal.fromValues("u8", [len], ie.map((k) => k & 15)),
  ];
  const exe = await compile(c, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    const got = (await exe.run(args)).elements.map((l) => l.toNumbers());
    const want = evaluate(c, args).elements.map((l) => l.toNumbers());
    const worst: string[] = [];
    (["pow", "atan2"] as const).forEach((name, k) => {
      const exact = name === "pow" ? Math.pow : Math.atan2;
      let max = 0, at = "";
      for (let e = 0; e < len; e++) {
        const [g, w] = [got[k]![e]!, want[k]![e]!];
        // A NaN, infinite or zero operand or result: the interpreter's bits.
        const [a, z] = [xs[e]!, ys[e]!];
        if (!Number.isFinite(w) || w === 0 || !Number.isFinite(a) || !Number.isFinite(z) || a === 0 || z === 0) {
          if (w === 0 || Math.abs(w) >= MIN_NORMAL) assert.ok(same(g, w), `${name}(${a}, ${z}) = ${g}, the interpreter gives ${w}`);
          continue;
        }
        const x64 = exact(xs[e]!, ys[e]!);
        if (Math.abs(x64) < MIN_NORMAL) continue;
        const d = ulps(g, x64);
        if (d > max) [max, at] = [d, `(${xs[e]}, ${ys[e]})`];
      }
      worst.push(`${name} ${max.toFixed(3)} ulp at ${at}`);
      assert.ok(max <= BOUND[name], `${name}: ${max} ulp at ${at} (bound ${BOUND[name]})`);
    });
    // Remainders (exact) and integer powers: bit for bit; f32 subnormal remainders too (returned on bits).
    for (const [k, name, operands] of [[2, "remainder", 0], [3, "s32 power", 2], [4, "u8 power", 4]] as const) {
      const [p, q] = [args[operands]!.toNumbers(), args[operands + 1]!.toNumbers()];
      for (let e = 0; e < len; e++) assert.ok(same(got[k]![e]!, want[k]![e]!), `${name} of ${p[e]}, ${q[e]}: ${got[k]![e]} where the interpreter gives ${want[k]![e]}`);
    }
    console.log(`webgpu pow, atan2, remainder over ${len} pairs, worst: ${worst.join("; ")}`);
  } finally {
    exe.delete();
  }
});

test("a program's own f32 sums round as written on the GPU: (x + y) - y, y - ((x + y) - x) and x - x bit for bit with the interpreter (a compiler folding them as algebra, as Mesa's does, fails it)", { skip }, async () => {
  const text = `func.func @main(%x: tensor<6xf32>, %y: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %s = stablehlo.add %x, %y : tensor<6xf32>
  %back = stablehlo.subtract %s, %y : tensor<6xf32>
  %t = stablehlo.subtract %s, %x : tensor<6xf32>
  %error = stablehlo.subtract %y, %t : tensor<6xf32>
  %zero = stablehlo.subtract %x, %x : tensor<6xf32>
  return %back, %error, %zero : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}`;
  const program = parseStableHlo(text);
  // 0.3 + 1.5·2^23 rounds to 1.5·2^23 (so (x + y) - y is 0, not 0.3); infinities make x - x NaN.
  const args = [Literal.fromValues("f32", [6], [0.3, 1e-8, 1.5, -2.7, Infinity, NaN]), Literal.fromValues("f32", [6], [12582912, 1, 1e8, 3.3, 1, 2])];
  const exe = await compile(program, { backend: "webgpu" });
  try {
    const [got, want] = [(await exe.run(args)).elements!, evaluate(program.entry, args).elements!];
    want.forEach((w, i) => assert.deepEqual(new Uint32Array(new Float32Array(got[i]!.values() as number[]).buffer), new Uint32Array(new Float32Array(w.values() as number[]).buffer), `result ${i}`));
  } finally {
    exe.delete();
  }
});
