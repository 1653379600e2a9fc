import { test } from "node:test";
import assert from "node:assert/strict";
import { arrayShape, fft, Literal, parameter, XlaBuilder, type Complex, type ElementType, type FftType } from "../../src/index.js";
import { assertClose, complexParts, rng, run } from "../reduction/support.js";
import { unitRoot } from "../../src/interpreter/kernels/fft_plan.js";
import { referenceFft, type RefArray } from "./fft_reference.js";
import { testBackend } from "../support/backend.js";
import { fftErrorBound } from "../../src/compiler/webgpu/fft_wgsl.js";
import { elementCount } from "../../src/types/shape.js";

const C = (pairs: [number, number][]): Complex[] => pairs.map(([re, im]) => ({ re, im }));
const transform = (input: Literal, type: FftType, lengths: number[]) => run([input], (_, [x]) => fft(x!, type, lengths));

// StableHLO fft.mlir cases (c128 / f64).
test("fft: conformance FFT and IFFT in 1, 2 and 3 dimensions", () => {
  const x1 = Literal.fromValues("c128", [2], C([[1, 2], [3, -4]]));
  assertClose(complexParts(transform(x1, "FFT", [2])), [4, -2, -2, 6]);
  assertClose(complexParts(transform(Literal.fromValues("c128", [2], C([[4, -2], [-2, 6]])), "IFFT", [2])), [1, 2, 3, -4]);
  const x2 = Literal.fromValues("c128", [2, 2], C([[1, 2], [3, -4], [-5, 6], [-7, -8]]));
  assertClose(complexParts(transform(x2, "FFT", [2, 2])), [-8, -4, 0, 20, 16, 0, -4, -8]);
  const x3 = Literal.fromValues("c128", [2, 2, 2], C([[1, 2], [3, -4], [-5, 6], [-7, -8], [-1, -2], [-3, 4], [5, -6], [7, 8]]));
  assertClose(complexParts(transform(x3, "FFT", [2, 2, 2])), [0, 0, 0, 0, 0, 0, 0, 0, -16, -8, 0, 40, 32, 0, -8, -16]);
  const y3 = Literal.fromValues("c128", [2, 2, 2], C([[0, 0], [0, 0], [0, 0], [0, 0], [-16, -8], [32, 0], [0, 40], [-8, -16]]));
  assertClose(complexParts(transform(y3, "IFFT", [2, 2, 2])), [1, 2, -5, 6, 3, -4, -7, -8, -1, -2, 5, -6, -3, 4, 7, 8]);
});

test("fft: conformance RFFT and IRFFT in 1, 2 and 3 dimensions", () => {
  const r1 = transform(Literal.from("f64", [1, 2, 3, 4]), "RFFT", [4]);
  assert.equal(r1.elementType, "c128");
  assertClose(complexParts(r1), [10, 0, -2, 2, -2, 0]);
  const grid = Literal.fromValues("f64", [4, 4], Array.from({ length: 16 }, (_, i) => i + 1));
  const r2 = transform(grid, "RFFT", [4, 4]);
  assert.deepEqual(r2.dimensions, [4, 3]);
  const spectrum2 = [136, 0, -8, 8, -8, 0, -32, 32, 0, 0, 0, 0, -32, 0, 0, 0, 0, 0, -32, -32, 0, 0, 0, 0];
  assertClose(complexParts(r2), spectrum2);
  const cube = Literal.fromValues("f64", [2, 2, 4], Array.from({ length: 16 }, (_, i) => i + 1));
  const spectrum3 = [136, 0, -8, 8, -8, 0, -32, 0, 0, 0, 0, 0, -64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  assertClose(complexParts(transform(cube, "RFFT", [2, 2, 4])), spectrum3);
  const pairs = (flat: number[]) => C(Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!]));
  const back1 = transform(Literal.fromValues("c128", [3], C([[10, 0], [-2, 2], [-2, 0]])), "IRFFT", [4]);
  assert.equal(back1.elementType, "f64");
  assertClose(back1.toNumbers(), [1, 2, 3, 4]);
  assertClose(transform(Literal.fromValues("c128", [4, 3], pairs(spectrum2)), "IRFFT", [4, 4]).toNumbers(), grid.toNumbers());
  assertClose(transform(Literal.fromValues("c128", [2, 2, 3], pairs(spectrum3)), "IRFFT", [2, 2, 4]).toNumbers(), cube.toNumbers());
});

/** The DFT by its definition, for one axis of length n. */
function dft(re: number[], im: number[], inverse: boolean): [number[], number[]] {
  const n = re.length, sign = inverse ? 1 : -1;
  const outRe: number[] = [], outIm: number[] = [];
  for (let k = 0; k < n; k++) {
    let sr = 0, si = 0;
    for (let j = 0; j < n; j++) {
      const a = (sign * 2 * Math.PI * j * k) / n;
      sr += re[j]! * Math.cos(a) - im[j]! * Math.sin(a);
      si += re[j]! * Math.sin(a) + im[j]! * Math.cos(a);
    }
    outRe.push(inverse ? sr / n : sr);
    outIm.push(inverse ? si / n : si);
  }
  return [outRe, outIm];
}

test("fft: property, non-power-of-two lengths agree with the DFT definition; round trips; batches", () => {
  const next = rng(9);
  for (const n of [1, 3, 5, 6, 7, 12]) {
    const re = Array.from({ length: n }, () => next() * 2 - 1), im = Array.from({ length: n }, () => next() * 2 - 1);
    const x = Literal.fromValues("c128", [n], re.map((r, i) => ({ re: r, im: im[i]! })));
    const [er, ei] = dft(re, im, false);
    assertClose(complexParts(transform(x, "FFT", [n])), er.flatMap((r, i) => [r, ei[i]!]), 1e-12, `FFT n=${n}`);
    const [ir, ii] = dft(re, im, true);
    assertClose(complexParts(transform(x, "IFFT", [n])), ir.flatMap((r, i) => [r, ii[i]!]), 1e-12, `IFFT n=${n}`);
    // RFFT = the first n/2+1 entries of the FFT of a real signal; IRFFT inverts it (odd n too).
    const real = Literal.fromValues("f64", [n], re);
    const [rr, ri] = dft(re, new Array(n).fill(0), false);
    const half = Math.floor(n / 2) + 1;
    const spectrum = transform(real, "RFFT", [n]);
    assertClose(complexParts(spectrum), rr.slice(0, half).flatMap((r, i) => [r, ri[i]!]), 1e-12, `RFFT n=${n}`);
    assertClose(transform(spectrum, "IRFFT", [n]).toNumbers(), re, 1e-12, `IRFFT n=${n}`);
  }
  // A batch of 2 signals of length 3 under a leading dimension, in c64.
  const batch = Literal.fromValues("c64", [2, 3], C([[1, 0], [0, 0], [0, 0], [1, 0], [1, 0], [1, 0]]));
  assertClose(complexParts(transform(batch, "FFT", [3])), [1, 0, 1, 0, 1, 0, 3, 0, 0, 0, 0, 0], 1e-6);
  // 2D on a non-square 3x5 grid vs row/column DFTs.
  const grid = Array.from({ length: 15 }, () => next());
  const r2 = transform(Literal.fromValues("f32", [3, 5], grid), "RFFT", [3, 5]);
  assert.deepEqual(r2.dimensions, [3, 3]);
  const back = transform(r2, "IRFFT", [3, 5]);
  assertClose(back.toNumbers(), grid, 1e-5);
});

test("fft: edge cases and shape errors", () => {
  // Zero-length transform: empty in, empty out.
  assert.deepEqual(transform(Literal.fromValues("c64", [0], []), "FFT", [0]).dimensions, [0]);
  assert.deepEqual(transform(Literal.fromValues("f32", [0], []), "RFFT", [0]).dimensions, [0]);
  // Infinity propagates as NaN/inf through the sums rather than throwing.
  const inf = transform(Literal.fromValues("c64", [2], C([[Infinity, 0], [1, 0]])), "FFT", [2]);
  assert.equal(complexParts(inf)[0], Infinity);
  const b = new XlaBuilder("bad");
  const c = parameter(b, 0, arrayShape("c64", [4, 8]));
  const f = parameter(b, 1, arrayShape("f32", [8]));
  assert.throws(() => fft(c, "FFT", [4]), /fft: operand: FFT: innermost dimensions \[8\] must be \[4\]/);
  assert.throws(() => fft(f, "FFT", [8]), /FFT needs a complex operand, got f32/);
  assert.throws(() => fft(c, "IRFFT", [4, 8]), /innermost dimensions \[4, 8\] must be \[4, 5\]/);
  assert.throws(() => fft(c, "FFT", [1, 1, 1, 1]), /must list 1 to 3 lengths/);
  assert.throws(() => fft(c, "RFFT", [8]), /RFFT needs an f32 or f64 operand, got c64/);
});

// ---------------------------------------------------------------------------------------
// Against the direct DFT (fft_reference.ts) for many lengths: mixed radix (2, 3, 4, 5, odd
// primes up to 61) and Bluestein (97, 127, 1009, 67, 71, ...), every FftType, ranks 1-3.

const eps = 2 ** -52;
const inputType = (type: FftType, single: boolean): ElementType =>
  type === "RFFT" ? (single ? "f32" : "f64") : single ? "c64" : "c128";

function toLiteral(t: ElementType, a: RefArray): Literal {
  if (t === "f32" || t === "f64") return Literal.fromValues(t, a.dims, Array.from(a.re));
  return Literal.fromValues(t, a.dims, Array.from(a.re, (re, i) => ({ re, im: a.im[i]! })));
}

function randomArray(next: () => number, dims: number[], real: boolean, single: boolean): RefArray {
  const count = elementCount(dims);
  const value = () => (single ? Math.fround(next() * 2 - 1) : next() * 2 - 1);
  const re = Float64Array.from({ length: count }, value);
  const im = real ? new Float64Array(count) : Float64Array.from({ length: count }, value);
  return { dims, re, im };
}

/**
 * On the WebGPU backend, c64 and f32 transforms run on the GPU in f32: within the bound
 * docs/numerics.md states (fftErrorBound), not the double result rounded once.
 */
const singleOnGpu = testBackend === "webgpu";

/** The sum of |re| + |im| over each block of the last `rank` dims of `a`. */
function blockNorms(a: RefArray, rank: number): number[] {
  const block = elementCount(a.dims.slice(a.dims.length - rank));
  const norms = new Array<number>(block === 0 ? 0 : a.re.length / block).fill(0);
  for (let i = 0; i < a.re.length; i++) norms[Math.floor(i / block)]! += Math.abs(a.re[i]!) + Math.abs(a.im[i]!);
  return norms;
}

/**
 * Runs `type` on random data of `dims` and compares with the direct DFT: in double the
 * error is within 16·eps·(1 + log2 N) of the largest output; in single precision the
 * result is the double result rounded once (within half an f32 ulp of each value), or
 * on the WebGPU backend within its stated bound.
 */
function assertMatchesReference(next: () => number, type: FftType, dims: number[], lengths: number[], single = false): void {
  const what = `${type} ${single ? "single" : "double"} dims=[${dims}] lengths=[${lengths}]`;
  const x = randomArray(next, dims, type === "RFFT", single);
  const got = transform(toLiteral(inputType(type, single), x), type, lengths);
  const ref = referenceFft(type, x, lengths);
  assert.deepEqual(got.dimensions, ref.dims, what);
  const parts = complexParts(got);
  let maxRef = 0;
  for (let i = 0; i < ref.re.length; i++) maxRef = Math.max(maxRef, Math.abs(ref.re[i]!), Math.abs(ref.im[i]!));
  const tol = 16 * eps * (1 + Math.log2(Math.max(1, elementCount(lengths)))) * maxRef;
  const norms = blockNorms(x, lengths.length);
  const outBlock = elementCount(ref.dims.slice(ref.dims.length - lengths.length));
  for (let i = 0; i < ref.re.length; i++) {
    const gpuBound = single && singleOnGpu ? fftErrorBound(type, lengths, norms[Math.floor(i / outBlock)]!) : undefined;
    for (const [g, e, part] of [[parts[2 * i]!, ref.re[i]!, "re"], [parts[2 * i + 1]!, ref.im[i]!, "im"]] as const) {
      const allowed = gpuBound !== undefined ? gpuBound + tol : single ? 2 ** -24 * Math.abs(e) + 2 * tol : tol;
      assert.ok(Math.abs(g - e) <= allowed, `${what} [${i}].${part}: expected ${e}, got ${g} (allowed ${allowed})`);
    }
  }
}

const types: FftType[] = ["FFT", "IFFT", "RFFT", "IRFFT"];
/** The operand's innermost dims for `lengths`: IRFFT takes n/2+1 bins on the last axis. */
const operandDims = (type: FftType, lengths: number[]) =>
  type === "IRFFT" ? [...lengths.slice(0, -1), Math.floor(lengths[lengths.length - 1]! / 2) + 1] : lengths;

test("fft: rank 1, every length 1..64 and 97, 127, 128, 243, 256, 1000, 1009, 4096, all FftTypes, vs the DFT", () => {
  const next = rng(101);
  const lengths = [...Array.from({ length: 64 }, (_, i) => i + 1), 97, 127, 128, 243, 256, 1000, 1009, 4096];
  for (const n of lengths) {
    for (const type of types) assertMatchesReference(next, type, operandDims(type, [n]), [n]);
  }
});

test("fft: single precision (c64, f32) is the double result rounded once", () => {
  const next = rng(102);
  for (const n of [1, 2, 5, 12, 17, 49, 61, 64, 97, 210, 1009]) {
    for (const type of types) assertMatchesReference(next, type, [3, ...operandDims(type, [n])], [n], true);
  }
});

test("fft: ranks 2 and 3 with batch dimensions, all FftTypes, vs the DFT axis by axis", () => {
  const next = rng(103);
  const cases: { batch: number[]; lengths: number[] }[] = [
    { batch: [], lengths: [5, 7] },
    { batch: [2], lengths: [12, 9] },
    { batch: [3], lengths: [1, 16] },
    { batch: [2], lengths: [6, 67] },
    { batch: [], lengths: [97, 4] },
    { batch: [2], lengths: [3, 4, 5] },
    { batch: [], lengths: [4, 6, 7] },
    { batch: [1, 2], lengths: [2, 2, 71] },
    { batch: [], lengths: [8, 1, 10] },
  ];
  for (const { batch, lengths } of cases) {
    for (const type of types) {
      assertMatchesReference(next, type, [...batch, ...operandDims(type, lengths)], lengths);
      assertMatchesReference(next, type, [...batch, ...operandDims(type, lengths)], lengths, true);
    }
  }
});

test("fft: IRFFT drops the imaginary parts of the DC and Nyquist bins", () => {
  const next = rng(104);
  for (const n of [1, 2, 7, 8, 97, 100]) {
    const bins = Math.floor(n / 2) + 1;
    const spectrum = randomArray(next, [bins], false, false);
    const cleaned: RefArray = { dims: [bins], re: spectrum.re, im: spectrum.im.slice() };
    cleaned.im[0] = 0;
    if (n % 2 === 0) cleaned.im[bins - 1] = 0;
    const dirty = transform(toLiteral("c128", spectrum), "IRFFT", [n]).toNumbers();
    const clean = transform(toLiteral("c128", cleaned), "IRFFT", [n]).toNumbers();
    assertClose(dirty, clean, 1e-14, `IRFFT n=${n}`);
  }
});

/** A pure tone x[j] = cos(2π f j / n) (as values), its Euclidean norm, and its two nonzero bins. */
function tone(n: number, f: number, values: (j: number) => number): { x: number[]; norm: number; bins: Set<number> } {
  const x = Array.from({ length: n }, (_, j) => values(j));
  return { x, norm: Math.hypot(...x), bins: new Set([f % n, (n - f) % n]) };
}

test("fft: near-zero bins of a pure tone stay near zero (double accuracy, rounded once to c64)", () => {
  // cos(2πj/6) takes the exact values 1, 1/2, -1/2, -1, -1/2, 1/2 and cos(2πj/4) 1, 0, -1, 0,
  // so in c64 too every bin but ±f is exactly zero; a transform in single precision would
  // leave ~1e-7 there. Lengths cover radix 2/3/4 passes and Bluestein (1002 = 6·167).
  const sixth = [1, 0.5, -0.5, -1, -0.5, 0.5], quarter = [1, 0, -1, 0];
  const cases = [
    ...[6, 12, 60, 96, 162, 1002, 6144].map((n) => ({ n, f: n / 6, values: (j: number) => sixth[j % 6]! })),
    ...[4, 64, 4096].map((n) => ({ n, f: n / 4, values: (j: number) => quarter[j % 4]! })),
  ];
  for (const { n, f, values } of cases) {
    const { x, norm, bins } = tone(n, f, values);
    // The usual FFT bound, eps·|x|·log2 n: the last passes cancel partial sums as large as
    // the peak, so the zeros are a few ulps of those (often exactly 0 here).
    const doubleBound = 8 * eps * norm * Math.log2(n);
    const l1 = x.reduce((s, v) => s + Math.abs(v), 0);
    for (const [type, t] of [["FFT", "c128"], ["FFT", "c64"], ["RFFT", "f64"], ["RFFT", "f32"]] as const) {
      const input = type === "FFT" ? Literal.fromValues(t, [n], x.map((re) => ({ re, im: 0 }))) : Literal.fromValues(t, [n], x);
      const parts = complexParts(transform(input, type, [n]));
      // The GPU's c64 and f32 transforms compute in f32: its stated bound there.
      const bound = singleOnGpu && (t === "c64" || t === "f32") ? fftErrorBound(type, [n], l1) : doubleBound;
      for (let k = 0; k < parts.length / 2; k++) {
        const mag = Math.hypot(parts[2 * k]!, parts[2 * k + 1]!);
        if (bins.has(k)) assert.ok(Math.abs(mag - n / 2) <= n * 1e-7, `${type} ${t} n=${n} peak ${k}: ${mag}`);
        else assert.ok(mag <= bound, `${type} ${t} n=${n} bin ${k}: |X| = ${mag} > ${bound}`);
      }
    }
  }
  // A tone whose values are rounded (f = 3): the other bins are the DFT of the rounding, ~eps·|x|.
  for (const n of [1000, 1009, 65536]) {
    const { x, norm, bins } = tone(n, 3, (j) => Math.cos((2 * Math.PI * ((3 * j) % n)) / n));
    const parts = complexParts(transform(Literal.fromValues("f64", [n], x), "RFFT", [n]));
    const bound = 8 * eps * norm * Math.log2(n);
    for (let k = 0; k < parts.length / 2; k++) {
      if (!bins.has(k)) assert.ok(Math.hypot(parts[2 * k]!, parts[2 * k + 1]!) <= bound, `RFFT cos n=${n} bin ${k}`);
    }
  }
});

test("fft: Parseval and inverse-of-forward round trips", () => {
  const next = rng(105);
  for (const n of [1, 2, 3, 30, 64, 97, 243, 1000, 1009, 4096, 10007]) {
    const x = randomArray(next, [n], false, false);
    const spectrum = transform(toLiteral("c128", x), "FFT", [n]);
    const parts = complexParts(spectrum);
    let energyX = 0, energyS = 0;
    for (let i = 0; i < n; i++) energyX += x.re[i]! ** 2 + x.im[i]! ** 2;
    for (const v of parts) energyS += v * v;
    assert.ok(Math.abs(energyS - n * energyX) <= 1e-13 * n * energyX, `Parseval n=${n}: ${energyS} vs ${n * energyX}`);
    const tol = 16 * eps * (1 + Math.log2(n));
    assertClose(complexParts(transform(spectrum, "IFFT", [n])), Array.from(x.re).flatMap((r, i) => [r, x.im[i]!]), tol, `IFFT(FFT) n=${n}`);
    const real = Literal.fromValues("f64", [n], Array.from(x.re));
    assertClose(transform(transform(real, "RFFT", [n]), "IRFFT", [n]).toNumbers(), Array.from(x.re), tol, `IRFFT(RFFT) n=${n}`);
  }
});

test("fft: n = 65536 runs in O(n log n) (time reported, not asserted)", (t) => {
  const n = 65536, next = rng(106);
  const x = randomArray(next, [n], false, false);
  const start = performance.now();
  const spectrum = transform(toLiteral("c128", x), "FFT", [n]);
  t.diagnostic(`FFT c128 n=${n}: ${(performance.now() - start).toFixed(1)} ms`);
  const parts = complexParts(spectrum);
  // A few bins against their direct sums (angles reduced exactly: jk mod n).
  let maxAbs = 0;
  for (const v of parts) maxAbs = Math.max(maxAbs, Math.abs(v));
  for (const k of [0, 1, 2, 3, 1000, 12345, 32768, 65535]) {
    let sr = 0, si = 0;
    for (let j = 0; j < n; j++) {
      const a = (-2 * Math.PI * ((j * k) % n)) / n, c = Math.cos(a), s = Math.sin(a);
      sr += x.re[j]! * c - x.im[j]! * s;
      si += x.re[j]! * s + x.im[j]! * c;
    }
    assertClose([parts[2 * k]!, parts[2 * k + 1]!], [sr, si], 16 * eps * 17 * maxAbs, `bin ${k}`);
  }
  const back = complexParts(transform(spectrum, "IFFT", [n]));
  assertClose(back, Array.from(x.re).flatMap((r, i) => [r, x.im[i]!]), 16 * eps * 17, "IFFT(FFT)");
});

test("fft: operands in a non-default layout are read in logical order", () => {
  const next = rng(107);
  for (const [type, t] of [["FFT", "c128"], ["RFFT", "f32"], ["IRFFT", "c64"]] as const) {
    const x = randomArray(next, [3, 4], type === "RFFT", true);
    const rowMajor = toLiteral(t, x);
    const colMajor = Literal.fromValues(t, [3, 4], rowMajor.values(), { minorToMajor: [0, 1] });
    const lengths = type === "IRFFT" ? [3, 6] : [3, 4];
    assert.deepEqual(complexParts(transform(colMajor, type, lengths)), complexParts(transform(rowMajor, type, lengths)), type);
  }
});

test("fft: twiddles e^{2πit/n} are within an ulp or two, and exact at the symmetric angles", () => {
  for (let n = 1; n <= 200; n++) {
    for (let t = -n; t <= 2 * n; t++) {
      const [c, s] = unitRoot(t, n);
      // Math.cos/sin of 2πt'/n with t' = t mod n in (-n/2, n/2]: an angle within an ulp of π.
      const m = ((t % n) + n) % n, angle = (2 * Math.PI * (2 * m > n ? m - n : m)) / n;
      assert.ok(Math.abs(c - Math.cos(angle)) <= 4 * eps && Math.abs(s - Math.sin(angle)) <= 4 * eps, `t=${t} n=${n}`);
      assert.ok(Math.abs(c * c + s * s - 1) <= 4 * eps, `|root| t=${t} n=${n}`);
      if ((4 * t) % n === 0) {
        const quarter = ((((4 * t) / n) % 4) + 4) % 4;
        assert.deepEqual([c, s].map((v) => v + 0), [[1, 0], [0, 1], [-1, 0], [0, -1]][quarter], `quarter turn t=${t} n=${n}`);
      }
      // Odd multiples of 45°: |c| = |s| = √½; multiples of 30° but not of 90°: {|c|, |s|} = {½, √3/2}.
      if ((8 * t) % n === 0 && (4 * t) % n !== 0) assert.deepEqual([Math.abs(c), Math.abs(s)], [Math.SQRT1_2, Math.SQRT1_2], `t=${t} n=${n}`);
      if ((12 * t) % n === 0 && (4 * t) % n !== 0) {
        assert.deepEqual([Math.abs(c), Math.abs(s)].sort(), [0.5, Math.sqrt(3) / 2], `t=${t} n=${n}`);
      }
    }
  }
});
