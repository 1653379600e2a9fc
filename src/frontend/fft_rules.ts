// Rows of the primitive table for XLA's FFT, one per transform (fft, ifft, rfft, irfft),
// so that the table's finite-difference test checks each transpose. Each transforms the
// innermost fftLength.length dimensions (1 to 3); the others batch.
//
// All four are linear, so the JVP applies the transform to the tangent. The VJPs are
// transposes for the pairing <a, b> = Re(Σ a·b) (JAX's convention, complex_rules.ts):
//   fft, ifft  F_jk = e^{∓2πi jk/n} is symmetric, so each is its own transpose.
//   rfft       y_k = Σ_j x_j e^{-2πi jk/n} for k ≤ n/2, x real: x̄_j = Re Σ_k ȳ_k e^{-2πi jk/n},
//              which is Re(fft(ȳ zero-padded to n)) (over the outer axes too, each symmetric).
//   irfft      x_j = (1/N) [Y_0 + Σ_{0<k<n/2} 2 Re(Y_k e^{2πi jk/n}) + Y_{n/2} (-1)^j] along the
//              last axis (the imaginary parts of Y_0 and Y_{n/2} unused), an inverse FFT over
//              the others: Ȳ = w ⊙ conj(rfft(x̄)) / N with w = 1 at k = 0 and k = n/2 (n even)
//              and 2 between, N the product of the lengths. The conjugate is JAX's too.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import { fft as fftOp } from "../builder/linalg.js";
import type { FftType } from "../ir/attributes.js";
import type { ArrayBase } from "./core.js";
import type { DType } from "./dtypes.js";
import * as lax from "./lax.js";
import { bindRow, linearJvp, matrixBatch, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";
import { elementCount } from "../types/shape.js";

type V = ArrayBase;
type FftPrimitive = "fft" | "ifft" | "rfft" | "irfft";

const FFT_TYPE: Readonly<Record<FftPrimitive, FftType>> = { fft: "FFT", ifft: "IFFT", rfft: "RFFT", irfft: "IRFFT" };
const complexOf = (d: DType): DType => (d === "float64" || d === "complex128" ? "complex128" : "complex64");

type Example = PrimitiveRow<PrimitiveParams[FftPrimitive]>["example"];

function row(name: FftPrimitive, vjp: PrimitiveRow<PrimitiveParams[FftPrimitive]>["vjp"], example: Example, moreExamples: readonly Example[] = []): PrimitiveRow<PrimitiveParams[FftPrimitive]> {
  return {
    lower: (_b, [x], { fftLength }) => [fftOp(x!, FFT_TYPE[name], fftLength)],
    jvp: linearJvp(name),
    vjp,
    batch: matrixBatch(name),
    example,
    moreExamples,
  };
}

/** rfft's transpose: the cotangent zero-padded to the full last length, a complex FFT, the real part. */
function rfftTranspose(ct: V, fftLength: readonly number[]): V {
  const n = fftLength.at(-1)!;
  const last = ct.ndim - 1;
  const padded = lax.pad(ct, lax.full([], 0, ct.dtype), ct.shape.map((_, i) => [0, i === last ? n - ct.shape[last]! : 0, 0] as const));
  return lax.real(bindRow("fft")([padded], { fftLength })[0]!);
}

/** irfft's transpose: w ⊙ conj(rfft(ct)) / N (see the header). */
function irfftTranspose(ct: V, fftLength: readonly number[]): V {
  const n = fftLength.at(-1)!;
  const total = elementCount(fftLength);
  const spectrum = lax.conj(bindRow("rfft")([ct], { fftLength })[0]!);
  const last = spectrum.ndim - 1;
  const k = lax.broadcastedIota("int32", spectrum.shape, last);
  const edge = n % 2 === 0 ? lax.or(lax.eq(k, 0), lax.eq(k, n / 2)) : lax.eq(k, 0);
  const dtype = complexOf(ct.dtype);
  const weights = lax.selectN(edge, lax.full(spectrum.shape, 2 / total, dtype), lax.full(spectrum.shape, 1 / total, dtype));
  return lax.mul(spectrum, weights);
}

export const FFT_ROWS: { readonly [N in FftPrimitive]: PrimitiveRow<PrimitiveParams[N]> } = {
  fft: row("fft", ([ct], _x, _y, p) => bindRow("fft")([ct!], p), { args: [{ shape: [2, 3, 4], kind: "complex" }], params: { fftLength: [3, 4] } }),
  ifft: row("ifft", ([ct], _x, _y, p) => bindRow("ifft")([ct!], p), { args: [{ shape: [2, 5], kind: "complex" }], params: { fftLength: [5] } }),
  // Even and odd last lengths: only an even one has a Nyquist bin.
  rfft: row("rfft", ([ct], _x, _y, { fftLength }) => [rfftTranspose(ct!, fftLength)], { args: [{ shape: [2, 3, 6] }], params: { fftLength: [3, 6] } },
    [{ args: [{ shape: [2, 5] }], params: { fftLength: [5] } }]),
  irfft: row("irfft", ([ct], _x, _y, { fftLength }) => [irfftTranspose(ct!, fftLength)], { args: [{ shape: [2, 3, 4], kind: "complex" }], params: { fftLength: [3, 6] } },
    [{ args: [{ shape: [2, 3], kind: "complex" }], params: { fftLength: [5] } }, { args: [{ shape: [2, 2, 3, 3], kind: "complex" }], params: { fftLength: [2, 3, 4] } }]),
};
