// The tests' second method for Fft: the DFT by its definition, one axis at a time, in
// doubles, with each angle 2π·(jk mod n)/n reduced exactly before cos/sin.

import type { FftType } from "../../src/index.js";
import { elementCount } from "../../src/types/shape.js";

/** A complex array in doubles, row-major over `dims`. */
export interface RefArray {
  dims: number[];
  re: Float64Array;
  im: Float64Array;
}

/** The direct DFT of every line along `axis`: forward Σ x[j] e^{-2πijk/n}, inverse Σ x[j] e^{+2πijk/n} / n. */
export function dftAxis(a: RefArray, axis: number, inverse: boolean): RefArray {
  const n = a.dims[axis]!, stride = elementCount(a.dims.slice(axis + 1)), total = a.re.length;
  const re = new Float64Array(total), im = new Float64Array(total);
  const cos = Float64Array.from({ length: n }, (_, t) => Math.cos((2 * Math.PI * t) / n));
  const sin = Float64Array.from({ length: n }, (_, t) => (inverse ? 1 : -1) * Math.sin((2 * Math.PI * t) / n));
  for (let base = 0; base < total; base++) {
    if (Math.floor(base / stride) % n !== 0) continue;
    for (let k = 0; k < n; k++) {
      let sr = 0, si = 0;
      for (let j = 0, t = 0; j < n; j++, t = t + k >= n ? t + k - n : t + k) {
        // t = jk mod n, kept exact by stepping.
        const xr = a.re[base + j * stride]!, xi = a.im[base + j * stride]!;
        sr += xr * cos[t]! - xi * sin[t]!;
        si += xr * sin[t]! + xi * cos[t]!;
      }
      re[base + k * stride] = inverse ? sr / n : sr;
      im[base + k * stride] = inverse ? si / n : si;
    }
  }
  return { dims: [...a.dims], re, im };
}

/** Keeps the first `width` entries of the innermost axis, or extends it by X[n-k] = conj(X[k]) (n = width). */
function resizeInnermost(a: RefArray, width: number): RefArray {
  const old = a.dims[a.dims.length - 1]!, rows = elementCount(a.dims.slice(0, -1));
  const out: RefArray = { dims: [...a.dims.slice(0, -1), width], re: new Float64Array(rows * width), im: new Float64Array(rows * width) };
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < width; k++) {
      const mirrored = k >= old, src = r * old + (mirrored ? width - k : k);
      out.re[r * width + k] = a.re[src]!;
      out.im[r * width + k] = mirrored ? -a.im[src]! : a.im[src]!;
    }
  }
  return out;
}

/** XLA's Fft by definition over the innermost `lengths.length` axes (IRFFT's result has im = 0). */
export function referenceFft(type: FftType, a: RefArray, lengths: readonly number[]): RefArray {
  const rank = a.dims.length, axes = lengths.map((_, i) => rank - lengths.length + i);
  let x = a;
  switch (type) {
    case "FFT": case "IFFT":
      for (const ax of axes) x = dftAxis(x, ax, type === "IFFT");
      return x;
    case "RFFT":
      for (const ax of axes) x = dftAxis(x, ax, false);
      return resizeInnermost(x, Math.floor(lengths[lengths.length - 1]! / 2) + 1);
    case "IRFFT":
      for (const ax of axes.slice(0, -1)) x = dftAxis(x, ax, true);
      x = dftAxis(resizeInnermost(x, lengths[lengths.length - 1]!), rank - 1, true);
      return { dims: x.dims, re: x.re, im: new Float64Array(x.re.length) };
  }
}
