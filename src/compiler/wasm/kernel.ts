// The contract between the WebAssembly code generators (fused loops, reductions, GEMM,
// convolution) and the executor that runs compiled programs on a device.
//
// Every generated kernel is its own small WebAssembly module. It imports the device's
// memory as `env.memory` (shared when the device has threads, declared with maximum
// MEMORY_MAX_PAGES pages either way) and exports one function, `run`, whose arguments
// are all i32:
//
//   run(operand0, ..., operandN-1, result0, ..., resultM-1, [scratch], begin, end)
//
// operandI / resultJ are byte offsets of the buffers in device memory (every buffer is
// in the default major-to-minor layout and aligned to BUFFER_ALIGNMENT bytes); scratch
// (present only when scratchBytes > 0) is the byte offset of scratchBytes bytes this
// call may use freely (one region per thread); [begin, end) is the part of the
// kernel's work to do, in units of its own choosing, out of parallelExtent. Calls on
// disjoint ranges may run at the same time on different threads, so a kernel writes
// only the part of its results that its range owns. run(..., 0, parallelExtent) does
// the whole job.

import type { RowAccess } from "../kernel/row_access.js";
import type { PackedB } from "../kernel/gemm_plan.js";

// The device memory's size limit and buffer alignment belong to the runtime's device
// memory (runtime/device_memory.ts), which the kernels address.
export { BUFFER_ALIGNMENT } from "../../runtime/device_memory.js";
export { MEMORY_MAX_PAGES } from "../linear_memory.js";

/** What the code generators need to know about the engine and the device. */
export interface WasmTarget {
  /** The engine validates SIMD128 (every engine xlats supports does; false only for tests of scalar code). */
  readonly simd: boolean;
  /** The engine validates relaxed SIMD (f32x4.relaxed_madd, ...). Never required. */
  readonly relaxedSimd: boolean;
  /** The device memory is a shared WebAssembly.Memory (kernels must import it as shared). */
  readonly sharedMemory: boolean;
}

export interface WasmKernel {
  /** For dumps and error messages (`fusion.3`, `gemm 512x512x512 f32`). */
  readonly name: string;
  /** The module: imports env.memory, exports `run` as described above. */
  readonly bytes: Uint8Array;
  readonly operandCount: number;
  readonly resultCount: number;
  /** Bytes of scratch memory one call needs (0: run takes no scratch argument). */
  readonly scratchBytes: number;
  /** Units of work run(..., 0, parallelExtent) covers; the executor may split it across threads. */
  readonly parallelExtent: number;
  /** Rough cost of one unit (bytes moved + arithmetic ops), so the executor threads only big work. */
  readonly costPerUnit: number;
  /** Fewest units one thread's part of a split run may have (absent: 1): smaller parts cost more than they give. */
  readonly minPartUnits?: number;
  /** Present when the units are rows of the kernel's buffers (see RowAccess). */
  readonly rows?: RowAccess;
  /**
   * An operand (a constant of the program) the kernel reads as B of a GEMM already
   * packed into its panels: the program's planner stores that constant packed (packB).
   */
  readonly packedOperand?: { readonly operand: number; readonly layout: PackedB };
  /**
   * An operand whose values the program checks before the kernel runs (a "check" step,
   * program.ts), raising the interpreter's ExecutionError where they are bad: a ragged
   * dot's group sizes, which the kernel takes as non-negative.
   */
  readonly runtimeCheck?: { readonly operand: number; readonly check: RuntimeCheck };
}

/** The checks of operand values a compiled program makes before a kernel runs (executable.ts runs them). */
export type RuntimeCheck = "raggedDotGroupSizes";
