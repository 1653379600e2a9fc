// Which instructions the WebAssembly backend compiles, and with which code generator.
// The table is partial on purpose: an opcode missing here runs through the
// interpreter's kernel on views of device memory, and `Executable.dump()` lists each
// such step with the reason (the README's coverage table has a column for it,
// computed by tools/coverage.ts).

import type { Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import { hasQuantization } from "../types/shape.js";
import type { Unsupported, WasmKernel, WasmTarget } from "./wasm/kernel.js";
import { emitFusionKernel } from "./wasm/emit_loop.js";
import { rowMaxima } from "./kernel/value_facts.js";
import { emitGemmKernel, gemmSpecOfDot } from "./wasm/gemm.js";
import { emitConvKernel } from "./wasm/conv.js";
import { emitCholeskyKernel } from "./wasm/routines/cholesky.js";
import { emitFftKernel } from "./wasm/routines/fft.js";
import { emitOutputFusionKernel } from "./wasm/epilogue.js";
import { emitDynamicSliceKernel, emitDynamicUpdateSliceKernel } from "./wasm/routines/dynamic_slice.js";
import { emitGatherKernel, emitScatterKernel } from "./wasm/routines/gather_scatter.js";
import { emitRngBitGeneratorKernel } from "./wasm/routines/rng.js";
import { emitSortKernel } from "./wasm/routines/sort.js";
import { emitTriangularSolveKernel } from "./wasm/routines/triangular_solve.js";
import { emitReduceWindowKernel, emitSelectAndScatterKernel } from "./wasm/routines/window.js";

type Routine = (inst: Instruction, target: WasmTarget) => WasmKernel | Unsupported;

const ROUTINES: Partial<Record<Opcode, Routine>> = {
  fusion: (inst, target) => {
    const fusion = inst as Instruction<"fusion">;
    const { kind, calledComputation } = fusion.attrs;
    return kind === "output" ? emitOutputFusionKernel(calledComputation, target, inst.name) : emitFusionKernel(calledComputation, target, inst.name, rowMaxima(fusion));
  },
  dot: (inst, target) => {
    const spec = gemmSpecOfDot(inst as Instruction<"dot">);
    return "unsupported" in spec ? spec : emitGemmKernel(spec, target);
  },
  convolution: (inst, target) => emitConvKernel(inst as Instruction<"convolution">, target),
  reduceWindow: (inst, target) => emitReduceWindowKernel(inst as Instruction<"reduceWindow">, target),
  selectAndScatter: (inst, target) => emitSelectAndScatterKernel(inst as Instruction<"selectAndScatter">, target),
  gather: (inst, target) => emitGatherKernel(inst as Instruction<"gather">, target),
  scatter: (inst, target) => emitScatterKernel(inst as Instruction<"scatter">, target),
  dynamicSlice: (inst, target) => emitDynamicSliceKernel(inst as Instruction<"dynamicSlice">, target),
  dynamicUpdateSlice: (inst, target) => emitDynamicUpdateSliceKernel(inst as Instruction<"dynamicUpdateSlice">, target),
  sort: (inst, target) => emitSortKernel(inst as Instruction<"sort">, target),
  rngBitGenerator: (inst, target) => emitRngBitGeneratorKernel(inst as Instruction<"rngBitGenerator">, target),
  fft: (inst, target) => emitFftKernel(inst as Instruction<"fft">, target),
  cholesky: (inst, target) => emitCholeskyKernel(inst as Instruction<"cholesky">, target),
  triangularSolve: (inst, target) => emitTriangularSolveKernel(inst as Instruction<"triangularSolve">, target),
};

/** Reasons starting with this mark a code generator that threw: a bug to fix, not a limitation (tests look for it). */
export const GENERATOR_FAILED = "code generator failed";

export function compileRoutine(inst: Instruction, target: WasmTarget): WasmKernel | Unsupported {
  if (hasQuantization(inst.shape) || inst.operands.some((o) => hasQuantization(o.shape))) {
    return { unsupported: "quantized types run on the interpreter's kernels (dequantize, compute, quantize)" };
  }
  const routine = ROUTINES[inst.opcode];
  if (routine === undefined) return { unsupported: `no compiled routine for ${inst.opcode}` };
  try {
    return routine(inst, target);
  } catch (e) {
    // A generator that throws must not take the program down: the step runs on the
    // interpreter's kernel, and stats.interpreted / dump() show the failure.
    return { unsupported: `${GENERATOR_FAILED}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
