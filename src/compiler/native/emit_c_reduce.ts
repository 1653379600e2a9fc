// Input (reduction) fusions as C. Every form is a kernel of statements printed by
// printKernelC (emit_c_loop.ts): one-stage row reductions (J = 1, kernel/reduce_kernel.ts)
// in lane arrays of C_REDUCE_TARGET's 64 scalars the compiler vectorizes, their AVX-512
// form in 16-lane vectors, the halving fold (c_accumulators.ts); row pipelines (softmax,
// layer norm: kernel/row_pipeline_kernel.ts) with their row buffers and rings of results
// on the stack; column reductions (J > 1, kernel/column_reduce_kernel.ts) in blocks of
// 256 outputs, the block's j loop innermost (contiguous, vectorized) inside the r loop.
// f16 and bf16 accumulators and generic reducers (argmax...) run in the interpreter's
// order (init first, then the elements in row-major order), so their results are exact.

import type { FusedKernelIR } from "../kernel/lower_fusion.js";
import { scheduleReduce, type ReduceSchedule, type ReduceTarget } from "../kernel/schedule_reduce.js";
import { symbolize } from "./c_source.js";
import { DeclinedError } from "../kernel/declined.js";
import { VECTOR_LANES } from "./c_accumulators.js";
import { rowReduceKernel, type ReduceKernelTarget } from "../kernel/reduce_kernel.js";
import { columnReduceKernel } from "../kernel/column_reduce_kernel.js";
import { rowPipelineKernel } from "../kernel/row_pipeline_kernel.js";
import { NATIVE_VECTOR_TARGET, printKernelC } from "./emit_c_loop.js";
import { STREAM_MIN_BYTES, VECTOR_MIN_ELEMENTS } from "./emit_c_vector.js";
import type { NativeKernel } from "./kernel.js";

/**
 * The machine the reduction schedule is made for: lane accumulators of four 512-bit
 * vectors a reduction (256 bytes, which the C compiler vectorizes), folded by halving;
 * halves and generic reducers in the interpreter's order; row buffers on the stack, at
 * most 128 KiB; column reductions 256 outputs at a time; on AVX-512 a form in vectors of
 * sixteen f32 (emit_c_vector.ts) for kernels of VECTOR_MIN_ELEMENTS or more.
 */
export const C_REDUCE_TARGET: ReduceTarget = {
  vectorBytes: 64, accumulatorVectors: 4, foldByHalving: true, sequentialHalves: true, anyRowPipeline: true,
  rowBufferValues: "costlyOp", rowBufferBudget: 128 * 1024, columnBlock: 256, laneArrays: true,
  vectorForm: { lanes: VECTOR_LANES, minElements: VECTOR_MIN_ELEMENTS, streamMinBytes: STREAM_MIN_BYTES },
};

/** The reduction kernels' questions (kernel/reduce_kernel.ts) answered for C: the loop kernels' vectors, which combine f32 add, mul, max and min. */
export const C_REDUCE_KERNEL_TARGET: ReduceKernelTarget = {
  vector: NATIVE_VECTOR_TARGET,
  vectorCombines: (kind, t) => t === "f32" && (kind === "add" || kind === "mul" || kind === "max" || kind === "min"),
};

export function emitReduceKernelC(ir: FusedKernelIR, name: string): NativeKernel {
  const scheduled = scheduleReduce(ir, C_REDUCE_TARGET);
  if ("declined" in scheduled) throw new DeclinedError(scheduled.declined);
  const schedule: ReduceSchedule = scheduled;
  const kernel = rowReduceKernel(ir, schedule, C_REDUCE_KERNEL_TARGET) ?? rowPipelineKernel(ir, schedule, C_REDUCE_KERNEL_TARGET)
    ?? columnReduceKernel(ir, schedule, C_REDUCE_KERNEL_TARGET);
  if (kernel === undefined) throw new Error("a reduction schedule no kernel builder takes");
  return {
    name,
    c: symbolize("reduce", printKernelC(kernel).join("\n")),
    operandCount: ir.inputs.length,
    resultCount: ir.outputs.length,
    scratchBytes: 0,
    parallelExtent: schedule.parallelExtent,
    costPerUnit: schedule.costPerUnit,
    rows: schedule.rows,
  };
}
