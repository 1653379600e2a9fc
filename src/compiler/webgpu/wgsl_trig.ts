// sin, cos and tan of f32 on the WebGPU backend. The CPU backends' trigonometric
// functions (kernel/emit_trig.ts) reduce the argument in f64, which WGSL lacks; these
// reduce it in f32 and 32-bit integer arithmetic, exactly enough over the whole f32
// range (no bound past which an argument goes wrong, nothing run on the host):
//
// - |x| ≤ π/4: the argument is its own reduction (quadrant 0).
// - otherwise (Payne–Hanek): |x| = ia·2^(e-31) with ia its 24-bit significand at the
//   top of a word; ia times 256 bits of 2/π (eight words, 32×32 → 64-bit products from
//   16-bit halves, WGSL having no 64-bit integers) gives x·2/π in fixed point, from
//   which a 64-bit window is taken at the argument's exponent: its two integer bits are
//   the quadrant, its 62 fraction bits f (rounded to the nearest quadrant: f in
//   [-½, ½]). Eight words keep every bit from 2^1 down to 2^-62 of x·2/π for exponents
//   up to 127, and 62 bits leave at least 30 after the worst cancellation an f32 meets
//   (a multiple of π/2 comes no closer to an f32 than about 2^-30 relative).
// - r = f·π/2 as a pair of f32 (hi + lo): f's top 24 bits times the f32 nearest π/2
//   exactly (Dekker's product of 12-bit halves), plus f's lower bits and π/2's second
//   part.
//
// Then sin and cos of r on [-π/4, π/4] by minimax polynomials in r² (Cephes' single
// precision coefficients, published values), the low part of r added as a correction,
// the quadrant choosing sin or cos and the sign; tan is their quotient. Measured on the
// GPU against f64 (test/compiler/webgpu/trig.test.ts): sin and cos within 2 ulp, tan
// within 3 (docs/numerics.md). Constants go through xk_f (wgsl_math.ts says why).

import { wgslFloat } from "./wgsl_math.js";
import type { TrigName } from "../kernel/approximations.js";

/** 2/π's first 256 fraction bits, most significant word first (computed with BigInt from Machin's formula). */
const TWO_OVER_PI = [0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561];

const F32 = new Float32Array(1);
const f32 = (x: number): number => { F32[0] = x; return F32[0]!; };
const PI_2_HI = f32(Math.PI / 2);
const PI_2_LO = f32(Math.PI / 2 - PI_2_HI);
/** PI_2_HI in two 12-bit halves (their products with 12-bit halves are exact in f32). */
const PI_2_HI_TOP = (() => { F32[0] = PI_2_HI; new Uint32Array(F32.buffer)[0]! &= 0xfffff000; return F32[0]!; })();
const PI_2_HI_REST = PI_2_HI - PI_2_HI_TOP;

const SIN = [-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4];
const COS = [4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5];

const c = wgslFloat;
const hex = (w: number): string => `0x${(w >>> 0).toString(16)}u`;

/** The reduction and the polynomials, once per kernel that calls any of sin, cos, tan. */
function trigHelpers(): string {
  // ia · 2/π: word j of the product (least significant first) with the carry into the next.
  const product = TWO_OVER_PI.slice().reverse().map((w, j) => [
    `  { let m = xk_mul_wide(ia, ${hex(w)}); let s = m.x + carry; p[${j}] = s; carry = m.y + select(0u, 1u, s < carry); }`,
  ].join("\n"));
  return [
    `struct XkReduced { hi: f32, lo: f32, q: u32 }`,
    // (low word, high word) of a·b.
    `fn xk_mul_wide(a: u32, b: u32) -> vec2<u32> {`,
    `  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;`,
    `  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;`,
    `  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);`,
    `  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));`,
    `}`,
    // |x| (finite) as hi + lo - q·π/2 with |hi + lo| ≤ π/4 and q in 0..3.
    `fn xk_trig_reduce(ax: f32) -> XkReduced {`,
    `  if (ax <= ${c(f32(Math.PI / 4))}) { return XkReduced(ax, ${c(0)}, 0u); }`,
    `  let bits = bitcast<u32>(ax);`,
    `  let e = i32(bits >> 23u) - 127;`,
    `  let ia = (bits << 8u) | 0x80000000u;`,
    `  var p: array<u32, 10>;`,
    `  var carry = 0u;`,
    ...product,
    `  p[8] = carry;`,
    `  p[9] = 0u;`,
    // x·2/π's bit k is the product's bit k + 287 - e: the window's top bit is 2^1, its bottom 2^-62.
    `  let b = u32(225 - e);`,
    `  let wi = b >> 5u;`,
    `  let sh = b & 31u;`,
    `  var lo = p[wi];`,
    `  var hi = p[wi + 1u];`,
    `  if (sh != 0u) {`,
    `    lo = (lo >> sh) | (hi << (32u - sh));`,
    `    hi = (hi >> sh) | (p[wi + 2u] << (32u - sh));`,
    `  }`,
    `  var q = hi >> 30u;`,
    // The fraction, left-aligned in 64 bits; past ½, the next quadrant and the fraction's complement, negative.
    `  hi = (hi << 2u) | (lo >> 30u);`,
    `  lo = lo << 2u;`,
    `  let negative = (hi & 0x80000000u) != 0u;`,
    `  if (negative) {`,
    `    q = q + 1u;`,
    `    hi = ~hi;`,
    `    lo = ~lo + 1u;`,
    `    if (lo == 0u) { hi = hi + 1u; }`,
    `  }`,
    `  var k = -32;`,
    `  if (hi == 0u) { hi = lo; lo = 0u; k = -64; }`,
    `  if (hi == 0u) { return XkReduced(${c(0)}, ${c(0)}, q & 3u); }`,
    `  let z = countLeadingZeros(hi);`,
    `  if (z != 0u) { hi = (hi << z) | (lo >> (32u - z)); lo = lo << z; }`,
    `  k = k - i32(z);`,
    // f = fh + fl, fh its top 24 bits (exact), fl the rest (to 24 bits).
    `  let fh = f32(hi >> 8u) * xk_pow2(k + 8);`,
    `  let fl = (f32(hi & 0xffu) + f32(lo) * ${c(2 ** -32)}) * xk_pow2(k);`,
    // fh·π/2 exactly as prod + err (Dekker), then the small terms.
    `  let prod = xk_keep(fh * ${c(PI_2_HI)});`,
    `  let fh1 = bitcast<f32>(bitcast<u32>(fh) & 0xfffff000u);`,
    `  let fh2 = fh - fh1;`,
    `  let err = ((fh1 * ${c(PI_2_HI_TOP)} - prod) + fh1 * ${c(PI_2_HI_REST)} + fh2 * ${c(PI_2_HI_TOP)}) + fh2 * ${c(PI_2_HI_REST)};`,
    `  let tail = err + (fh * ${c(PI_2_LO)} + fl * ${c(PI_2_HI)});`,
    `  let rh = xk_keep(prod + tail);`,
    `  let rl = tail - (rh - prod);`,
    `  if (negative) { return XkReduced(-rh, -rl, q & 3u); }`,
    `  return XkReduced(rh, rl, q & 3u);`,
    `}`,
    // sin(h + l) for |h| ≤ π/4, l below h's ulp: the correction l·cos(h), cos(h) to its first two terms.
    `fn xk_sin_poly(h: f32, l: f32) -> f32 {`,
    `  let z = h * h;`,
    `  return h + (h * z * (${c(SIN[0]!)} + z * (${c(SIN[1]!)} + z * ${c(SIN[2]!)})) + l * (${c(1)} - ${c(0.5)} * z));`,
    `}`,
    // cos(h + l): 1 - z/2 with its rounding error recovered (fdlibm's form), minus l·sin(h).
    `fn xk_cos_poly(h: f32, l: f32) -> f32 {`,
    `  let z = h * h;`,
    `  let hz = ${c(0.5)} * z;`,
    `  let w = xk_keep(${c(1)} - hz);`,
    `  return w + (((${c(1)} - w) - hz) + (z * z * (${c(COS[0]!)} + z * (${c(COS[1]!)} + z * ${c(COS[2]!)})) - h * l));`,
    `}`,
    // NaN and ±infinity give NaN; the sign of x is applied last (sin and tan are odd).
    `fn xk_trig_f32(x: f32, which: u32) -> f32 {`,
    `  let ax = bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu);`,
    `  if (bitcast<u32>(ax) >= 0x7f800000u) { return ${c(NaN)}; }`,
    `  let r = xk_trig_reduce(ax);`,
    `  let s = xk_sin_poly(r.hi, r.lo);`,
    `  let co = xk_cos_poly(r.hi, r.lo);`,
    `  let odd = (r.q & 1u) != 0u;`,
    `  let flip = select(0u, 0x80000000u, (r.q & 2u) != 0u);`,
    `  let xsign = bitcast<u32>(x) & 0x80000000u;`,
    `  if (which == 0u) { return bitcast<f32>(bitcast<u32>(select(s, co, odd)) ^ flip ^ xsign); }`,
    `  if (which == 1u) { return bitcast<f32>(bitcast<u32>(select(co, s, odd)) ^ select(flip, flip ^ 0x80000000u, odd)); }`,
    `  return bitcast<f32>(bitcast<u32>(select(s / co, co / s, odd)) ^ select(0u, 0x80000000u, odd) ^ xsign);`,
    `}`,
  ].join("\n");
}

const WHICH: Readonly<Record<TrigName, number>> = { sin: 0, cos: 1, tan: 2 };

/** The WGSL function computing `name` in f32. */
export const wgslTrigFunction = (name: TrigName): string => `xk_${name}_f32`;

/** The sources of the trigonometric functions in `names` (the shared reduction once). */
export function wgslTrigSources(names: readonly TrigName[]): string[] {
  if (names.length === 0) return [];
  return [trigHelpers(), ...names.map((n) => `fn ${wgslTrigFunction(n)}(x: f32) -> f32 { return xk_trig_f32(x, ${WHICH[n]}u); }`)];
}
