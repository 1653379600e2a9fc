// The kernel of a lowered fusion, chosen once for every renderer: a loop fusion's
// (loop_kernel.ts), or a reduction's, by the first builder whose form its schedule is:
// a row per workgroup (GPU targets, where the target sizes one), a one-stage row
// reduction, a row pipeline, a column reduction. A renderer prints the kernel and
// copies the facts the executor needs.

import type { Computation } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import type { Kernel } from "./kernel_ir.js";
import { lowerFusion, type FusedKernelIR, type ReducerKind } from "./lower_fusion.js";
import type { RowMaximum } from "./value_facts.js";
import { loopKernel } from "./loop_kernel.js";
import type { RowAccess } from "./row_access.js";
import { rowReduceKernel, type ReduceKernelTarget } from "./reduce_kernel.js";
import { rowPipelineKernel } from "./row_pipeline_kernel.js";
import { columnReduceKernel } from "./column_reduce_kernel.js";
import { workgroupRowKernel } from "./workgroup_reduce_kernel.js";
import { scheduleReduce, type ReduceTarget } from "./schedule_reduce.js";
import { DeclinedError, orDeclined, type Declined } from "./declined.js";

/**
 * A target's description for every fusion kernel: its vectors and reduction kernels, its
 * reduction schedules, (GPUs) the workgroup of a row, and the element types its kernels
 * read and write (`checkType` throws DeclinedError for one it has no form for).
 */
export interface FusionTarget extends ReduceKernelTarget {
  readonly reduce: ReduceTarget;
  /**
   * (GPUs) The invocations of the workgroup that runs a row of `rowElements` of a kernel
   * of `rows` rows; undefined: its rows run an invocation each (webgpu/codegen.ts: a
   * software adapter's kernels of many rows).
   */
  readonly rowWorkgroup?: (rowElements: number, rows: number) => number | undefined;
  /** (GPUs) Whether a row's workgroup combines a reduction of this kind and accumulator type through subgroup operations; absent: never. */
  readonly subgroupCombines?: (kind: ReducerKind, type: ElementType) => boolean;
  readonly checkType?: (t: ElementType) => void;
  /** false where the target has no f64 (WGSL): complex_ops.ts then computes in f32 and integers what the CPU targets compute in f64. Absent: it has. */
  readonly hasF64?: boolean;
}

/** A fusion's kernel, its pipeline's stages (1: none) and what the executor reads of its schedule: the units, the cost of one, their rows. */
export interface FusionKernel {
  readonly kernel: Kernel;
  readonly stages: number;
  readonly units: { readonly parallelExtent: number; readonly costPerUnit: number; readonly rows: RowAccess | undefined };
}

/** The kernel of `ir` for `target` (DeclinedError where its reduction schedule is declined). */
export function fusionKernel(ir: FusedKernelIR, target: FusionTarget): FusionKernel {
  if (ir.reduce === undefined) {
    const { kernel, schedule: s } = loopKernel(ir, target.vector);
    return { kernel, stages: 1, units: { parallelExtent: s.parallelExtent, costPerUnit: s.costPerUnit, rows: s.access } };
  }
  const s = scheduleReduce(ir, target.reduce);
  if ("declined" in s) throw new DeclinedError(s.declined);
  const size = target.rowWorkgroup?.(s.loops.Rn, s.parallelExtent);
  const workgroup = size !== undefined ? workgroupRowKernel(ir, s, target.vector, size, target.subgroupCombines) : undefined;
  // A GPU's other forms run a row an invocation, whose private memory is too small for
  // row buffers (the schedule's budget is its workgroup's memory): their stages compute again.
  const rowForm = target.rowWorkgroup !== undefined ? { ...s, rowBuffers: [] } : s;
  const kernel = workgroup ?? rowReduceKernel(ir, rowForm, target) ?? rowPipelineKernel(ir, rowForm, target) ?? columnReduceKernel(ir, rowForm, target);
  if (kernel === undefined) throw new Error("a reduction schedule no kernel builder takes");
  return { kernel, stages: s.stages, units: { parallelExtent: s.parallelExtent, costPerUnit: s.costPerUnit, rows: s.rows } };
}

/**
 * `render` of the kernel of `fused` for `target` (`maxima`: which operands are row maxima of
 * others, value_facts.ts), or why not: where lowering, the target's types or the schedule
 * decline, or the renderer throws DeclinedError.
 */
export function renderFusion<R>(
  fused: Computation, maxima: readonly RowMaximum[], target: FusionTarget, render: (k: FusionKernel, ir: FusedKernelIR) => R,
): R | Declined {
  const ir = lowerFusion(fused, maxima, target.hasF64 ?? true);
  if ("declined" in ir) return ir;
  return orDeclined(() => {
    for (const x of [...ir.inputs, ...ir.outputs]) target.checkType?.(x.type);
    return render(fusionKernel(ir, target), ir);
  });
}
