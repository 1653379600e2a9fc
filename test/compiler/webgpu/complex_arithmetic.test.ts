// c64 multiply on the GPU (kernel/complex_ops.ts with kernel/exact_fma.ts: each fma and
// product rounded once on integers, WGSL having no f64 and no promise that its fma is
// fused), against the interpreter bit for bit (any NaN matches any NaN: the interpreter
// promises no payload), on: random bit patterns of every exponent (products and sums
// that overflow, underflow into the subnormals, or vanish), parts that cancel where a
// multiply then an add rounded twice differs from the fused rounding (the test checks
// that it does differ there, so that an unfused fma would fail it), products that are
// ties of f32 beside an addend far below them (its sticky bit decides), and every pair
// of a table of specials. No subnormal tolerance: nothing in the product reads or writes f32
// arithmetic that could flush (and the negate is on bits). A program fuses the product
// with a negate: one kernel where the product has no other use, and no host step in
// `dump()`.
//
// c64 abs and sign, which the interpreter computes in f64 and rounds once, are computed
// in f32 on the GPU (complex_ops.ts hypotF32): within ABS_SIGN_BOUND ulps of the
// interpreter's parts on random patterns, equal and far-apart parts, and exactly its
// specials (infinities beside NaN, zeros, the direction of an infinite value); a
// subnormal result may be flushed to zero.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { Literal } from "../../../src/types/literal.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);
const fromBits = (b: number): number => { U32[0] = b >>> 0; return F32[0]!; };
const fround = Math.fround;

type C = { re: number; im: number };

const SPECIALS = [
  0, -0, 1, -1, 1.5, -0.1, Infinity, -Infinity, NaN, fromBits(1), -fromBits(0x7fffff), 2 ** -126, fromBits(0x7f7fffff), -(2 ** 64), 2 ** -75, 3 * 2 ** -80,
];

/** fma(a, b, c) of f32 values, exactly rounded (a·b is exact in f64; the sum rounded to odd, then to f32: Boldo and Melquiond). */
function fmaF32(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  if (!Number.isFinite(s)) return fround(s);
  const back = s - p;
  const e = (p - (s - back)) + (c - back);
  if (e === 0) return fround(s);
  const view = new Float64Array([s]);
  const bits = new BigInt64Array(view.buffer);
  if ((bits[0]! & 1n) === 0n) bits[0] = bits[0]! + ((e > 0) === (s > 0) ? 1n : -1n);
  return fround(view[0]!);
}

/** Operand pairs: every pair of specials, random bit patterns, and cancelling parts. */
function operands(): { xs: C[]; ys: C[]; cancelling: number } {
  const xs: C[] = [];
  const ys: C[] = [];
  for (const a of SPECIALS) for (const b of SPECIALS) { xs.push({ re: a, im: b }); ys.push({ re: b, im: fround(a * 0.75) }); }
  const next = rng(4023);
  const bitsAny = (): number => fromBits(Math.floor(next() * 2 ** 32));
  // Random finite patterns; exponents near each other's negation too, so products land in the subnormals and at the overflow edge.
  const finite = (): number => { let v: number; do v = bitsAny(); while (!Number.isFinite(v)); return v; };
  for (let i = 0; i < 20000; i++) {
    xs.push({ re: finite(), im: finite() });
    ys.push({ re: finite(), im: finite() });
  }
  for (let i = 0; i < 8000; i++) {
    const scale = 2 ** Math.floor(next() * 250 - 125);
    const x = { re: fround((next() - 0.5) * scale), im: fround((next() - 0.5) * scale) };
    const t = 2 ** Math.floor(next() * 250 - 125) * (next() < 0.5 ? -1 : 1);
    xs.push(x);
    ys.push({ re: fround(t * (1 + next())), im: fround(t / (1 + next())) });
  }
  // ar·br a tie of f32 (25 significant bits, the last one set: (1 + u·2^-12)(1 + v·2^-12)
  // with u, v odd), ai·bi far below it, of either sign: only the sticky bit of the
  // shifted-out addend rounds the tie the right way; scaled over the exponent range
  // (subnormal results too).
  for (let i = 0; i < 4000; i++) {
    const odd = (): number => 2 * Math.floor(next() * 2048) + 1;
    const k = Math.floor(next() * 200) - 85;
    const ar = (1 + odd() * 2 ** -12) * 2 ** k, br = 1 + odd() * 2 ** -12;
    const tiny = 2 ** (k - (i % 2 === 0 ? 15 : 62) - Math.floor(next() * 40)); // the addend partly, or (62 binades down) wholly, shifted out
    xs.push({ re: fround(ar), im: fround((next() < 0.5 ? -1 : 1) * tiny * (1 + next())) });
    ys.push({ re: br, im: fround(next() < 0.5 ? -1 - next() : 1 + next()) });
  }
  // ar·br ≈ ai·bi (re) and ar·bi ≈ -ai·br (im): the low bits of the products decide.
  let cancelling = 0;
  for (let i = 0; i < 4000; i++) {
    const ar = fround(1 + next()), br = fround(1 + next()), ai = fround(1 + next());
    const bi = fround((ar * br) / ai);
    xs.push({ re: ar, im: ai });
    ys.push({ re: br, im: bi });
    cancelling++;
  }
  return { xs, ys, cancelling };
}

const same = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

test("c64 multiply on the GPU: bit-exact with the interpreter, fused with a negate, no host step", { skip }, async () => {
  const { xs, ys, cancelling } = operands();
  const n = xs.length;
  const T = `tensor<${n}xcomplex<f32>>`;
  const module = parseStableHlo(`func.func @main(%x: ${T}, %y: ${T}) -> (${T}, ${T}) {
  %p = stablehlo.multiply %x, %y : ${T}
  %m = stablehlo.negate %p : ${T}
  return %p, %m : ${T}, ${T}
}`);
  const args = [Literal.fromValues("c64", [n], xs as never), Literal.fromValues("c64", [n], ys as never)];
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    assert.match(exe.dump(), /0 host step\(s\)/);
    assert.doesNotMatch(exe.dump(), /\n\s*host /);
    const out = await exe.run(args);
    const want = evaluate(module.entry, args);
    assert.ok(out.shape.kind === "tuple" && want.shape.kind === "tuple");
    for (let r = 0; r < 2; r++) {
      const got = out.elements[r]!.values() as C[];
      const wanted = want.elements[r]!.values() as C[];
      for (let i = 0; i < n; i++) {
        const ok = same(got[i]!.re, wanted[i]!.re) && same(got[i]!.im, wanted[i]!.im);
        if (!ok) assert.fail(`result ${r}, element ${i}: (${xs[i]!.re}, ${xs[i]!.im}) × (${ys[i]!.re}, ${ys[i]!.im}) = (${got[i]!.re}, ${got[i]!.im}), the interpreter's (${wanted[i]!.re}, ${wanted[i]!.im})`);
      }
    }
    // The cancelling cases must tell a fused rounding from a multiply then an add: in some,
    // fl(ar·br) - fl(ai·bi) differs from the interpreter's part (which the GPU matched).
    const products = out.elements[0]!.values() as C[];
    let differ = 0;
    for (let i = n - cancelling; i < n; i++) {
      const { re: ar, im: ai } = xs[i]!, { re: br, im: bi } = ys[i]!;
      const unfused = fround(fround(ar * br) - fround(ai * bi));
      assert.ok(same(products[i]!.re, fmaF32(ar, br, -fround(ai * bi))));
      if (!same(unfused, products[i]!.re)) differ++;
    }
    assert.ok(differ > cancelling / 4, `only ${differ} of ${cancelling} cancelling cases show the fused rounding`);
    console.log(`# c64 multiply on ${n} pairs: bit-exact; ${differ} of ${cancelling} cancelling real parts differ from a multiply then an add`);
  } finally {
    exe.delete();
  }
  // With no other use of the product, it fuses with the negate: one kernel.
  const fusedModule = parseStableHlo(`func.func @main(%x: ${T}, %y: ${T}) -> ${T} {
  %p = stablehlo.multiply %x, %y : ${T}
  %m = stablehlo.negate %p : ${T}
  return %m : ${T}
}`);
  const fused = await compile(fusedModule, { backend: "webgpu" });
  try {
    assert.equal(fused.stats.kernels, 1, fused.dump());
    assert.deepEqual(fused.stats.interpreted, [], fused.dump());
    const want = evaluate(fusedModule.entry, args).values() as C[];
    const got = (await fused.run(args)).values() as C[];
    for (let i = 0; i < n; i++) assert.ok(same(got[i]!.re, want[i]!.re) && same(got[i]!.im, want[i]!.im), `fused, element ${i}`);
  } finally {
    fused.delete();
  }
});

/**
 * docs/numerics.md (WebGPU): c64 abs and sign without f64, in ulps of the interpreter's
 * part, given correctly rounded f32 division and square root (SwiftShader's; WGSL allows
 * more, which would add to these).
 */
const ABS_SIGN_BOUND = { abs: 1, sign: 2 } as const;

/** |got - want| in ulps of want's binade (2^-149 in the subnormals). */
function ulps(got: number, want: number): number {
  const w = Math.abs(want);
  const ulp = w < 2 ** -126 ? 2 ** -149 : 2 ** (Math.floor(Math.log2(w)) - 23);
  return Math.abs(got - want) / ulp;
}

/** Complex values for abs and sign: every pair of specials, random bit patterns, parts of equal and of far-apart magnitudes. */
function absOperands(): C[] {
  const zs: C[] = [];
  for (const a of SPECIALS) for (const b of SPECIALS) zs.push({ re: a, im: b });
  const next = rng(977);
  const bitsAny = (): number => fromBits(Math.floor(next() * 2 ** 32));
  for (let i = 0; i < 20000; i++) zs.push({ re: bitsAny(), im: bitsAny() });
  for (let i = 0; i < 8000; i++) {
    const scale = 2 ** (Math.floor(next() * 276) - 149);
    const re = fround((next() - 0.5) * scale);
    const gap = i % 2 === 0 ? 2 ** -Math.floor(next() * 30) : 1 + (next() - 0.5) * 2 ** -10;
    zs.push(next() < 0.5 ? { re, im: fround(re * gap) } : { re: fround(-re * gap), im: re });
  }
  return zs;
}

test("c64 abs and sign on the GPU: within their bounds of the interpreter, specials as its, no host step", { skip }, async () => {
  const zs = absOperands();
  const n = zs.length;
  const T = `tensor<${n}xcomplex<f32>>`;
  const module = parseStableHlo(`func.func @main(%z: ${T}) -> (tensor<${n}xf32>, ${T}) {
  %a = stablehlo.abs %z : (${T}) -> tensor<${n}xf32>
  %s = stablehlo.sign %z : ${T}
  return %a, %s : tensor<${n}xf32>, ${T}
}`);
  const args = [Literal.fromValues("c64", [n], zs as never)];
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    assert.match(exe.dump(), /0 host step\(s\)/);
    const out = await exe.run(args);
    const want = evaluate(module.entry, args);
    assert.ok(out.shape.kind === "tuple" && want.shape.kind === "tuple");
    const worst = { abs: 0, sign: 0 };
    let inexact = 0;
    const check = (which: "abs" | "sign", i: number, got: number, wanted: number): void => {
      const where = `${which} of (${zs[i]!.re}, ${zs[i]!.im}): ${got}, the interpreter's ${wanted}`;
      if (!Number.isFinite(wanted) || wanted === 0 || !Number.isFinite(got)) {
        // Specials (and their zeros' signs) as the interpreter's.
        assert.ok(same(got, wanted), where);
        return;
      }
      if (got === 0 && Math.abs(wanted) < 2 ** -126) return; // a subnormal result, flushed (WGSL's licence)
      assert.equal(Math.sign(got), Math.sign(wanted), where);
      const u = ulps(got, wanted);
      if (u > 0) inexact++;
      worst[which] = Math.max(worst[which], u);
      assert.ok(u <= ABS_SIGN_BOUND[which], `${where}: ${u} ulp`);
    };
    const abs = out.elements[0]!.values() as number[], absWant = want.elements[0]!.values() as number[];
    const sign = out.elements[1]!.values() as C[], signWant = want.elements[1]!.values() as C[];
    for (let i = 0; i < n; i++) {
      check("abs", i, abs[i]!, absWant[i]!);
      check("sign", i, sign[i]!.re, signWant[i]!.re);
      check("sign", i, sign[i]!.im, signWant[i]!.im);
    }
    console.log(`# c64 abs and sign on ${n} values: worst ${worst.abs.toFixed(3)} and ${worst.sign.toFixed(3)} ulp; ${inexact} of ${3 * n} parts not the interpreter's bits`);
  } finally {
    exe.delete();
  }
});
