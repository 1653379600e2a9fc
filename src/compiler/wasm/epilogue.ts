// Output fusions (XLA's kOutput) as WebAssembly: the GEMM or convolution kernel of the
// fusion's core with the epilogue that kernel/epilogue_plan.ts plans. The kernels finish
// each tile of the product once its last block of k is done: a full tile in registers,
// by a microkernel that applies the epilogue's vector form before it stores (the
// statements of kernel/loop_kernel.ts's tileEpilogueKernel, printed inline by
// emit_loop.ts's printer, the product's vectors bound to the microkernel's
// accumulators), a tile on the right edge (or every tile, for an epilogue without
// a vector form) by epi right after the tile is written, while it is in L1. The result
// is written once, and no kernel reads the whole product back (gemm_rows.ts). The
// epilogue's ops are the loop fusions' value emitters, so any elementwise op they
// support works.
//
// epi(operand0, ..., operandN-1, product, c, rowBegin, rowEnd, colBegin, colEnd)
// computes rows [rowBegin, rowEnd) x columns [colBegin, colEnd) of the result at c,
// reading the product at `product` (C itself, or the kernel's row-tile buffer placed
// so that it is addressed like C: then only the epilogue writes C, and it may write
// over an operand it reads element for element, see outputFusionCanKeepProduct).

import type { Computation, Instruction } from "../../ir/computation.js";
import { planOutputFusion, renderOutputFusion, type EpiloguePlan } from "../kernel/epilogue_plan.js";
import type { GemmTarget } from "../kernel/gemm_plan.js";
import { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { elementInfo, WASM_GEMM_TARGET, type TileRegisters } from "./gemm_microkernel.js";
import { ValueEmitter } from "./emit_values.js";
import { addKernelFunction, printInlineKernel, wasmVectorTarget } from "./emit_loop.js";
import { epilogueKernel, tileEpilogueKernel } from "../kernel/loop_kernel.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import { orDeclined, type Declined } from "../kernel/declined.js";
import { emitConvKernel } from "./conv.js";
import { emitGemmKernel } from "./gemm.js";
import type { KernelEpilogue } from "./gemm_rows.js";

/**
 * Adds epi(...) (see the top of this file) to `m`; returns its function index and the
 * trig helper it added (for tiles in registers). Throws DeclinedError when an op has no code.
 */
export function addEpilogueFunction(m: ModuleBuilder, e: EpiloguePlan, target: WasmTarget): { fn: number; trigHelper: number | undefined } {
  const probe = new ValueEmitter(new FunctionBuilder(0, [], []), e.graph, { pushAddress: () => undefined });
  return addKernelFunction(m, epilogueKernel(e, wasmVectorTarget(target, probe)), target);
}

/** The target the fusion pass checks epilogues against (the emitters' choices do not depend on the rest). */
const CHECK_TARGET: WasmTarget = { simd: true, relaxedSimd: false, sharedMemory: false };

/**
 * Why the WebAssembly backend cannot (or, by the plan's cost rule, should not) compile
 * `fused` as an output fusion, or undefined when it can: the plan for its kernels
 * (planOutputFusion), then whether its value emitters have code for every op of the
 * epilogue. `target`: the kernels the cost rule is asked about (the native backend's
 * C kernels, native/capabilities.ts; the WebAssembly kernel stays their fallback, so
 * its emitters are asked either way).
 */
export function outputFusionProblem(fused: Computation, target: GemmTarget = WASM_GEMM_TARGET): string | undefined {
  const planned = planOutputFusion(fused, target);
  if ("declined" in planned) return planned.declined;
  const added = orDeclined(() => addEpilogueFunction(new ModuleBuilder(), planned.epilogue, CHECK_TARGET));
  return "declined" in added ? added.declined : undefined;
}

/**
 * The kernel of an output fusion: the GEMM or convolution kernel of its core, finishing
 * each block with the epilogue. `keepProduct`: the result is written over an operand
 * the epilogue reads (the planner decided so, given kernel/epilogue_plan.ts's outputFusionCanKeepProduct), so the
 * product must stay in scratch until the epilogue has read it; otherwise it goes to the
 * result directly, which measured a few percent faster on results past the caches.
 */
export function emitOutputFusionKernel(
  fused: Computation, target: WasmTarget, name: string, keepProduct = false, constantOperands: readonly boolean[] = [],
): WasmKernel | Declined {
  const kernel = renderOutputFusion(fused, (oc, plan): WasmKernel | Declined => {
    let trigHelper: number | undefined;
    const vectorTarget = wasmVectorTarget(target);
    const lanes = elementInfo(oc.core.shape.kind === "array" && oc.core.shape.elementType === "f64" ? "f64" : "f32").lanes;
    const epilogue: KernelEpilogue = {
      operandCount: plan.operandCount, lhs: oc.lhs, rhs: oc.rhs, keepProduct,
      add: (m) => {
        const added = addEpilogueFunction(m, plan, target);
        trigHelper = added.trigHelper;
        return added.fn;
      },
      // Tiles in registers where the epilogue's vector form has the product's lanes.
      ...(target.simd && tileEpilogueKernel(plan, vectorTarget, 1, 1, lanes) !== undefined ? {
        inRegisters: (f: FunctionBuilder, tile: TileRegisters) => {
          const k = tileEpilogueKernel(plan, vectorTarget, tile.rows, tile.vectors, lanes)!;
          printInlineKernel(f, k, target, trigHelper, { buffer: tile.operand, params: [tile.row, tile.col], registers: tile.acc });
        },
      } : {}),
    };
    return "dot" in oc.form
      ? emitGemmKernel(oc.form.dot, target, undefined, epilogue, constantOperands[oc.rhs] === true)
      : emitConvKernel(oc.core as Instruction<"convolution">, target, undefined, epilogue);
  });
  return "declined" in kernel ? kernel : { ...kernel, name: `${name}: ${kernel.name}` };
}
