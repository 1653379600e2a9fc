// Output fusions (XLA's kOutput) as WebAssembly: the GEMM or convolution kernel of the
// fusion's core with the epilogue that kernel/epilogue_plan.ts plans. The kernels finish
// each tile of the product once its last block of k is done: a full tile in registers,
// by a microkernel that applies the epilogue's vector form before it stores
// (emitTileEpilogue), a tile on the right edge (or every tile, for an epilogue without
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
import { outputCore, planEpilogue, planOutputFusion, type EpiloguePlan } from "../kernel/epilogue_plan.js";
import { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { elementInfo, WASM_GEMM_TARGET, type TileRegisters } from "./gemm_microkernel.js";
import { bindInnerLoop, DeclinedError, ValueEmitter } from "./emit_values.js";
import { addKernelFunction, planBody, wasmVectorTarget } from "./emit_loop.js";
import { epilogueKernel } from "../kernel/loop_kernel.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import type { Declined } from "../kernel/declined.js";
import { storageBytes } from "./wasm_types.js";
import { emitConvKernel } from "./conv.js";
import { gemmSpecOfDot } from "../kernel/gemm_plan.js";
import { emitGemmKernel } from "./gemm.js";
import type { KernelEpilogue } from "./gemm_rows.js";
import type { ElementType } from "../../types/element_type.js";

/**
 * Adds epi(...) (see the top of this file) to `m`; returns its function index and the
 * trig helper it added (for tiles in registers). Throws DeclinedError when an op has no code.
 */
export function addEpilogueFunction(m: ModuleBuilder, e: EpiloguePlan, target: WasmTarget): { fn: number; trigHelper: number | undefined } {
  const probe = new ValueEmitter(new FunctionBuilder(0, [], []), e.graph, { pushAddress: () => undefined });
  return addKernelFunction(m, epilogueKernel(e, wasmVectorTarget(target, probe)), target);
}

/** Whether the epilogue has a vector form of the product's lanes (then tiles are finished in registers). */
function vectorizes(e: EpiloguePlan, target: WasmTarget, lanes: number): boolean {
  const probe = new ValueEmitter(new FunctionBuilder(0, [], []), e.graph, { pushAddress: () => undefined });
  const plan = planBody(e.graph, [e.root], e.colVar, target, probe);
  return plan.vectorBody !== undefined && plan.lanes === lanes;
}

/**
 * Emits the epilogue over a tile of the product held in registers (gemm_microkernel.ts):
 * per row, the values that depend on the row alone and the bases of the loads; per
 * vector of the row, the vector body with the product's load replaced by the
 * accumulator, whose local then holds the result.
 */
function emitTileEpilogue(f: FunctionBuilder, e: EpiloguePlan, target: WasmTarget, trigHelper: number | undefined, tile: TileRegisters): void {
  const g = e.graph;
  const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
  ve.trigHelper = trigHelper;
  ve.relaxedSimd = target.relaxedSimd;
  const plan = planBody(g, [e.root], e.colVar, target, ve);
  ve.vectorLanes = plan.lanes;
  const body = plan.vectorBody!;
  const product = body.find((id) => g.node(id).op === "load" && g.node(id).attr === e.operandCount);
  const row = f.local("i32");
  const col = f.local("i32");
  const baseLocal = new Map<number, number>();
  bindInnerLoop(ve, f, g, plan.affine, baseLocal, col, tile.operand);
  ve.scalar.set(e.rowVar, row);
  ve.scalar.set(e.colVar, col);
  ve.hoistConstants(body);
  for (let r = 0; r < tile.rows; r++) {
    f.localGet(tile.row).i32Const(r).i32Add().localSet(row);
    for (const id of plan.invariant) if (g.node(id).op !== "var") ve.emitScalar(id);
    for (const [id, aff] of plan.affine) {
      const n = g.node(id);
      if (n.op !== "load" || id === product) continue;
      const size = storageBytes(n.type as ElementType);
      let l = baseLocal.get(id);
      if (l === undefined) baseLocal.set(id, l = f.local("i32"));
      f.localGet(tile.operand(n.attr as number)).localGet(ve.scalar.get(aff.base)!);
      if (size !== 1) f.i32Const(size).i32Mul();
      f.i32Add().localSet(l);
    }
    for (const id of plan.splats) ve.splat(id);
    for (let v = 0; v < tile.vectors; v++) {
      const acc = tile.acc[r * tile.vectors + v]!;
      f.localGet(tile.col).i32Const(v * plan.lanes).i32Add().localSet(col);
      if (product !== undefined) ve.vector.set(product, acc);
      for (const id of body) if (id !== product) ve.emitVector(id);
      f.localGet(ve.vector.get(e.root)!).localSet(acc);
    }
  }
}

/** The target the fusion pass checks epilogues against (the emitters' choices do not depend on the rest). */
const CHECK_TARGET: WasmTarget = { simd: true, relaxedSimd: false, sharedMemory: false };

/**
 * Why the WebAssembly backend cannot (or, by the plan's cost rule, should not) compile
 * `fused` as an output fusion, or undefined when it can: the plan for its kernels
 * (planOutputFusion), then whether its value emitters have code for every op of the
 * epilogue.
 */
export function outputFusionProblem(fused: Computation): string | undefined {
  const planned = planOutputFusion(fused, WASM_GEMM_TARGET);
  if ("declined" in planned) return planned.declined;
  try {
    addEpilogueFunction(new ModuleBuilder(), planned.epilogue, CHECK_TARGET);
    return undefined;
  } catch (e) {
    if (e instanceof DeclinedError) return e.message;
    throw e;
  }
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
  const oc = outputCore(fused);
  if ("declined" in oc) return oc;
  const plan = planEpilogue(fused, oc);
  if ("declined" in plan) return plan;
  let trigHelper: number | undefined;
  const lanes = elementInfo(oc.core.shape.kind === "array" && oc.core.shape.elementType === "f64" ? "f64" : "f32").lanes;
  const epilogue: KernelEpilogue = {
    operandCount: plan.operandCount, lhs: oc.lhs, rhs: oc.rhs, keepProduct,
    add: (m) => {
      const added = addEpilogueFunction(m, plan, target);
      trigHelper = added.trigHelper;
      return added.fn;
    },
    ...(target.simd && vectorizes(plan, target, lanes) ? { inRegisters: (f: FunctionBuilder, tile: TileRegisters) => emitTileEpilogue(f, plan, target, trigHelper, tile) } : {}),
  };
  let kernel: WasmKernel | Declined;
  try {
    if (oc.core.opcode === "dot") {
      const spec = gemmSpecOfDot(oc.core as Instruction<"dot">);
      kernel = "declined" in spec ? spec : emitGemmKernel(spec, target, undefined, epilogue, constantOperands[oc.rhs] === true);
    } else {
      kernel = emitConvKernel(oc.core as Instruction<"convolution">, target, undefined, epilogue);
    }
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: e.message };
    throw e;
  }
  return "declined" in kernel ? kernel : { ...kernel, name: `${name}: ${kernel.name}` };
}
