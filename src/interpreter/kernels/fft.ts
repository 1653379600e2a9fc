// Kernel of Fft: FFT, IFFT, RFFT and IRFFT over the 1 to 3 innermost dimensions, for
// any lengths, one axis at a time with the O(n log n) plans of fft_plan.ts (mixed radix
// or Bluestein), computed in doubles and rounded to the result type once.

import { isComplex } from "../../types/element_type.js";
import { Literal, type Storage } from "../../types/literal.js";
import { elementCount, hasDefaultLayout, type ArrayShape } from "../../types/shape.js";
import type { Kernel } from "../context.js";
import { toComplex } from "./arith.js";
import { fftPlan } from "./fft_plan.js";
import { resultArrayShapes } from "./kernel_util.js";

/** A complex array in doubles, row-major over `dims`. */
interface ComplexArray {
  dims: number[];
  re: Float64Array;
  im: Float64Array;
}

/** Transforms every line of `a` along `axis` in place: forward e^{-2πijk/n}, inverse e^{+2πijk/n} / n. */
function fftAxis(a: ComplexArray, axis: number, inverse: boolean): void {
  const n = a.dims[axis]!;
  const total = a.re.length;
  if (n <= 1 || total === 0) return;
  const plan = fftPlan(n, inverse);
  const stride = elementCount(a.dims.slice(axis + 1));
  if (stride === 1) {
    // Innermost axis: every line is contiguous, transform it where it is.
    for (let start = 0; start < total; start += n) {
      plan.transform(a.re, a.im, start);
      if (!inverse) continue;
      for (let k = start; k < start + n; k++) {
        a.re[k] = a.re[k]! / n;
        a.im[k] = a.im[k]! / n;
      }
    }
    return;
  }
  // Lines `stride` apart: blocks of n·stride elements each hold `stride` of them.
  const lineRe = new Float64Array(n), lineIm = new Float64Array(n);
  for (let block = 0; block < total; block += n * stride) {
    for (let start = block; start < block + stride; start++) {
      for (let j = 0; j < n; j++) {
        lineRe[j] = a.re[start + j * stride]!;
        lineIm[j] = a.im[start + j * stride]!;
      }
      plan.transform(lineRe, lineIm);
      for (let k = 0; k < n; k++) {
        a.re[start + k * stride] = inverse ? lineRe[k]! / n : lineRe[k]!;
        a.im[start + k * stride] = inverse ? lineIm[k]! / n : lineIm[k]!;
      }
    }
  }
}

/** The operand (c64, c128, f32 or f64) in doubles, row-major. */
function fromLiteral(lit: Literal): ComplexArray {
  const shape = lit.arrayShape;
  const count = elementCount(shape);
  const re = new Float64Array(count), im = new Float64Array(count);
  if (hasDefaultLayout(shape) && isFloatStorage(lit.data)) {
    // Row-major storage: read it directly (re, im pairs for complex types).
    const data = lit.data;
    if (isComplex(shape.elementType)) {
      for (let i = 0; i < count; i++) {
        re[i] = data[2 * i]!;
        im[i] = data[2 * i + 1]!;
      }
    } else {
      re.set(data);
    }
  } else {
    lit.values().forEach((v, i) => {
      const c = toComplex(v);
      re[i] = c.re;
      im[i] = c.im;
    });
  }
  return { dims: [...shape.dimensions], re, im };
}

function isFloatStorage(data: Storage): data is Float32Array | Float64Array {
  return data instanceof Float32Array || data instanceof Float64Array;
}

/** The result literal of `shape` from `a` (the real parts only for a real type), each value rounded once. */
function toLiteral(a: ComplexArray, shape: ArrayShape): Literal {
  const complex = isComplex(shape.elementType);
  if (!hasDefaultLayout(shape)) {
    const values = Array.from(a.re, (re, i) => (complex ? { re, im: a.im[i]! } : re));
    return Literal.fromValues(shape.elementType, shape.dimensions, values, shape.layout);
  }
  const result = Literal.zeros(shape);
  const data = result.data;
  if (!isFloatStorage(data)) throw new Error(`fft: unexpected result type ${shape.elementType}`);
  if (complex) {
    for (let i = 0; i < a.re.length; i++) {
      data[2 * i] = a.re[i]!;
      data[2 * i + 1] = a.im[i]!;
    }
  } else {
    data.set(a.re);
  }
  return result;
}

/**
 * Resizes the innermost axis of `a` to `width`, row by row: entries k < min(width, old
 * width) are copied, entry k beyond the old width is conj(row[n - k]) (Hermitian
 * symmetry of the spectrum of a real signal of length n = width).
 */
function resizeInnermost(a: ComplexArray, width: number): ComplexArray {
  const oldWidth = a.dims[a.dims.length - 1]!;
  const rows = oldWidth === 0 ? elementCount(a.dims.slice(0, -1)) : a.re.length / oldWidth;
  const dims = [...a.dims.slice(0, -1), width];
  const re = new Float64Array(rows * width), im = new Float64Array(rows * width);
  for (let r = 0; r < rows; r++) {
    const src = r * oldWidth, dst = r * width;
    for (let k = 0; k < width; k++) {
      if (k < oldWidth) {
        re[dst + k] = a.re[src + k]!;
        im[dst + k] = a.im[src + k]!;
      } else {
        re[dst + k] = a.re[src + width - k]!;
        im[dst + k] = -a.im[src + width - k]!;
      }
    }
  }
  return { dims, re, im };
}

export const fftKernel: Kernel<"fft"> = (inst, operands) => {
  const operand = operands[0]!;
  const { fftType, fftLength } = inst.attrs;
  const shape = resultArrayShapes(inst.shape)[0]!;
  const rank = operand.dimensions.length;
  const axes = fftLength.map((_, i) => rank - fftLength.length + i);
  const last = rank - 1;
  let a = fromLiteral(operand);
  switch (fftType) {
    case "FFT": case "IFFT":
      for (const ax of axes) fftAxis(a, ax, fftType === "IFFT");
      break;
    case "RFFT":
      // The axes are separable: the innermost first, so the others see only its n/2+1 kept bins.
      fftAxis(a, last, false);
      a = resizeInnermost(a, shape.dimensions[last]!);
      for (const ax of axes.slice(0, -1)) fftAxis(a, ax, false);
      break;
    case "IRFFT":
      for (const ax of axes.slice(0, -1)) fftAxis(a, ax, true);
      // Rebuild the full innermost axis from Hermitian symmetry, X[n-k] = conj(X[k]); the
      // imaginary parts of the DC and Nyquist bins are kept and drop out of the real part.
      a = resizeInnermost(a, fftLength[fftLength.length - 1]!);
      fftAxis(a, last, true);
      break;
  }
  return toLiteral(a, shape);
};
