// Fusions as C (emitFusionKernelC): the kernel kernel/fusion_kernel.ts chooses, printed
// by printKernelC (emit_c_loop.ts). Loop fusions are emit_c_loop.ts's; of input
// (reduction) fusions, one-stage row reductions (J = 1, kernel/reduce_kernel.ts)
// in lane arrays of C_REDUCE_TARGET's 64 scalars the compiler vectorizes, their AVX-512
// form in 16-lane vectors, the halving fold (c_accumulators.ts); row pipelines (softmax,
// layer norm: kernel/row_pipeline_kernel.ts) with their row buffers and rings of results
// on the stack; column reductions (J > 1, kernel/column_reduce_kernel.ts) in blocks of
// 256 outputs, the block's j loop innermost (contiguous, vectorized) inside the r loop.
// f16 and bf16 accumulators and generic reducers (argmax...) run in the interpreter's
// order (init first, then the elements in row-major order), so their results are exact.

import type { ReduceTarget } from "../kernel/schedule_reduce.js";
import { symbolize, SYM } from "./c_source.js";
import { LOOP_VECTOR_CONDITION } from "./c_math.js";
import { VECTOR_LANES } from "./c_accumulators.js";
import type { ReduceKernelTarget } from "../kernel/reduce_kernel.js";
import { renderFusion, type FusionTarget } from "../kernel/fusion_kernel.js";
import type { Computation } from "../../ir/computation.js";
import type { RowMaximum } from "../kernel/value_facts.js";
import type { Declined } from "../kernel/declined.js";
import { checkCType } from "./c_values.js";
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
  vectorBytes: 64, accumulatorVectors: 4, foldByHalving: true, halves: "inOrder", anyRowPipeline: true,
  rowBufferValues: "costlyOp", rowBufferBudget: 128 * 1024, columnBlock: 256, laneArrays: true,
  vectorForm: { lanes: VECTOR_LANES, minElements: VECTOR_MIN_ELEMENTS, streamMinBytes: STREAM_MIN_BYTES },
};

/** The reduction kernels' questions (kernel/reduce_kernel.ts) answered for C: the loop kernels' vectors, which combine f32 add, mul, max and min. */
export const C_REDUCE_KERNEL_TARGET: ReduceKernelTarget = {
  vector: NATIVE_VECTOR_TARGET,
  vectorCombines: (kind, t) => t === "f32" && (kind === "add" || kind === "mul" || kind === "max" || kind === "min"),
};

/** The fusion kernels' questions (kernel/fusion_kernel.ts) answered for C. */
const C_FUSION_TARGET: FusionTarget = { ...C_REDUCE_KERNEL_TARGET, reduce: C_REDUCE_TARGET, checkType: checkCType };

/**
 * One fused computation as one C kernel (kernel.ts's contract), from the same kernels the
 * WebAssembly emitters print; what C has no form for is Declined, with the reason (the
 * WebAssembly kernel runs instead). `maxima`: which operands are row maxima of others.
 */
export function emitFusionKernelC(fused: Computation, name = fused.name, maxima: readonly RowMaximum[] = []): NativeKernel | Declined {
  return renderFusion(fused, maxima, C_FUSION_TARGET, ({ kernel, units }, ir) => {
    // Loop kernels (no accumulators) take their vector form on AVX2 too (c_math.ts: LOOP_VECTOR_CONDITION).
    const c = ir.reduce === undefined
      ? symbolize("loop", printKernelC(kernel, SYM, LOOP_VECTOR_CONDITION).join("\n"))
      : symbolize("reduce", printKernelC(kernel).join("\n"));
    return { name, c, operandCount: ir.inputs.length, resultCount: ir.outputs.length, scratchBytes: 0, ...units };
  });
}
