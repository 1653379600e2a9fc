// Streaming (non-temporal) stores of the C kernels (the prelude's xk_stream): whether a
// kernel may use them, and the C the emitters write for it. Whether it does is left to
// the C compiler, from the toolchain's XK_LLC_BYTES (the last-level cache of the CPU the
// module is built for), so a kernel's source is the same on every machine.

import { ELEMENT_TYPES } from "../../types/element_type.js";
import type { FusedKernelIR } from "../kernel/lower_fusion.js";

/** Kernels touching fewer bytes than this never stream (no last-level cache is smaller): their C stays as it was. */
const MIN_STREAMING_BYTES = 1 << 20;

/** Elements of each output gathered in L1 before they are streamed out. */
export const STREAM_BLOCK = 256;

/** Bytes one call of the kernel reads and writes: each input and output once. */
function kernelBytes(ir: FusedKernelIR): number {
  return [...ir.inputs, ...ir.outputs].reduce((s, x) => s + ELEMENT_TYPES[x.type].storageBytes * x.dims.reduce((a, b) => a * b, 1), 0);
}

/**
 * The C declaration of `streamed`, a constant the compiler folds: whether the kernel
 * streams its full-size outputs (it touches more than half the last-level cache);
 * undefined where it is too small to.
 */
export function streamedDeclaration(ir: FusedKernelIR): string | undefined {
  const bytes = kernelBytes(ir);
  return bytes < MIN_STREAMING_BYTES ? undefined : `const int streamed = XK_STREAMS(${bytes}ull);`;
}
