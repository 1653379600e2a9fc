// The contract between the native (C) code generators and the executor, the C twin of
// wasm/kernel.ts. A native kernel is a C function that works on the same device memory
// as the WebAssembly kernels (the bytes of the device's WebAssembly.Memory), with the
// same arguments in the same order, so one program may mix native and WebAssembly
// kernels and the executor's planning (buffers, steps, row groups, thread splits) is
// shared by both backends:
//
//   void <symbol>(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end);
//
// `mem` is the device memory's first byte; args[i] is, in order, the byte offset of
// operand 0 .. N-1, result 0 .. M-1, then (only when scratchBytes > 0) the scratch
// region this call may use freely; [begin, end) is the part of the work to do, out of
// parallelExtent, with the same meaning as for a WebAssembly kernel (calls on disjoint
// ranges may run at the same time on different threads). Every buffer is in the
// default major-to-minor layout and aligned to BUFFER_ALIGNMENT bytes.
//
// Offsets are 32-bit, as in wasm32, and may wrap: a kernel whose units are rows
// (RowAccess) may be given a row-wise buffer's offset moved by -begin·rowBytes modulo
// 2^32 (a row group's block buffer in scratch), so it addresses row u of buffer i as
// `mem + (uint32_t)(args[i] + (uint32_t)(u * rowBytes))`, never `mem + args[i] + u * rowBytes`.
// Before each call the glue (glue.ts) checks that every byte the kernel may touch by
// its declared access (whole buffers, or rows [begin, end) of row-wise ones, scratch)
// lies inside device memory.
//
// Each kernel's source is self-contained apart from the shared prelude (native/prelude
// in the generated module: fixed-width types, the narrow-float codecs, the math
// helpers), and names everything it defines at file scope with its symbol as prefix,
// so the kernels of one program compile together as one translation unit.

import type { CpuCaches, SplitBalance } from "../kernel/gemm_plan.js";
import type { WasmKernel } from "../wasm/kernel.js";

/** What the C code generators know about the machine the module is built for (detected at run time). */
export interface NativeCpu {
  /** "x86_64" | "aarch64" | anything else (the portable code only). */
  readonly arch: string;
  readonly avx2: boolean;
  readonly fma: boolean;
  readonly avx512f: boolean;
  readonly neon: boolean;
  /** The sizes of a core's caches, which the GEMM's blocks scale with (native/cpu_caches.ts); absent: kernel/gemm_plan.ts's MEASURED_CACHES. */
  readonly caches?: CpuCaches;
}

export interface CKernelSource {
  /** The function's name: a C identifier unique in the program's module. */
  readonly symbol: string;
  /** The function's definition and the file-scope helpers it needs (each named `<symbol>_...`). */
  readonly source: string;
}

/** A kernel as C: the WebAssembly kernel's description with C source in place of the module's bytes. */
export interface NativeKernel extends Omit<WasmKernel, "bytes"> {
  readonly c: CKernelSource;
  /**
   * How the glue's threads balance a split call as they go (kernel/gemm_plan.ts,
   * gemmBalance: the units a piece keeps together where it can, and whether a thread's
   * last grain may be cut); absent: each thread runs its own share of the units as one
   * range (claiming the rest only where another thread never started).
   */
  readonly balance?: SplitBalance;
}
