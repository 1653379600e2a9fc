// Which instructions the WebAssembly backend compiles, and with which code generator.
// The table is partial on purpose: an opcode missing here runs through the
// interpreter's kernel on views of device memory, and `Executable.dump()` lists each
// such step with the reason (the README's coverage table has a column for it,
// computed by tools/coverage.ts).
//
// The native backend plans the same program and asks NATIVE_ROUTINES (C code
// generators) first; where one declines (Declined), the WebAssembly kernel runs on
// the same device memory instead, and dump() says why.

import type { Computation, Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import type { WasmKernel, WasmTarget } from "./wasm/kernel.js";
import { isDeclined, quantizedDeclined, type Declined } from "./kernel/declined.js";
import { arrayLeaves, byteSize } from "../types/shape.js";
import type { NativeCpu, NativeKernel } from "./native/kernel.js";
import type { CpuTarget } from "./backend_contract.js";
import type { NativeKernelBuild } from "./native/build.js";
import { emitFusionKernelC } from "./native/emit_c_reduce.js";
import { emitGemmC, emitStridedGemmC } from "./native/gemm_c.js";
import { emitConvC } from "./native/conv_c.js";
import { emitWeightOnlyGemvC } from "./native/gemv_narrow_c.js";
import { emitOutputFusionC } from "./native/epilogue_c.js";
import { emitDynamicSliceC, emitDynamicUpdateSliceC } from "./native/dynamic_slice_c.js";
import { emitRaggedDotC } from "./native/ragged_dot_c.js";
import { raggedGemmSpecOf } from "./kernel/ragged_dot_plan.js";
import { emitFusionKernel } from "./wasm/emit_loop.js";
import { rowMaxima } from "./kernel/value_facts.js";
import { emitGemmKernel, emitStridedGemmKernel } from "./wasm/gemm.js";
import { gemmElementBytes, gemmSpecOfDot, packedBLength } from "./kernel/gemm_plan.js";
import { emitConvKernel } from "./wasm/conv.js";
import { emitRaggedDotKernel } from "./wasm/ragged_dot.js";
import { emitWeightOnlyGemvKernel } from "./wasm/gemv_narrow.js";
import { weightOnlyDotOf } from "./kernel/weight_only_dot.js";
import { emitCholeskyKernel } from "./wasm/routines/cholesky.js";
import { emitFftKernel } from "./wasm/routines/fft.js";
import { emitOutputFusionKernel } from "./wasm/epilogue.js";
import { emitDynamicSliceKernel, emitDynamicUpdateSliceKernel } from "./wasm/routines/dynamic_slice.js";
import { emitGatherKernel, emitScatterKernel } from "./wasm/routines/gather_scatter.js";
import { emitRngBitGeneratorKernel } from "./wasm/routines/rng.js";
import { emitSortKernel } from "./wasm/routines/sort.js";
import { emitTriangularSolveKernel } from "./wasm/routines/triangular_solve.js";
import { emitReduceWindowKernel, emitSelectAndScatterKernel } from "./wasm/routines/window.js";

/**
 * A code generator: `packable[i]` says whether operand i may be read in a layout of the
 * kernel's own (WasmKernel.packedOperand): a constant, which the planner stores packed,
 * or an entry parameter the caller marked as a weight (compile's `weights`), which the
 * executable packs once per buffer (CompiledProgram.packedWeights).
 */
type Routine = (inst: Instruction, target: WasmTarget, packable: readonly boolean[]) => WasmKernel | Declined;

/** The custom fusions the CPU backends form: weight-only dots (passes/weight_only_dot.ts). */
function emitCustomFusionKernel(fused: Computation, target: WasmTarget, name: string): WasmKernel | Declined {
  const dot = weightOnlyDotOf(fused);
  return "declined" in dot ? dot : emitWeightOnlyGemvKernel(dot, target, name);
}

/** Which operands of `inst` a kernel may read packed: constants, and the weights among the entry's parameters. */
const packableOperands = (inst: Instruction, weights: ReadonlySet<Instruction> | undefined): boolean[] =>
  inst.operands.map((o) => o.opcode === "constant" || weights?.has(o) === true);

const ROUTINES: Partial<Record<Opcode, Routine>> = {
  fusion: (inst, target, packable) => {
    const fusion = inst as Instruction<"fusion">;
    const { kind, calledComputation } = fusion.attrs;
    if (kind === "custom") return emitCustomFusionKernel(calledComputation, target, inst.name);
    return kind === "output"
      ? emitOutputFusionKernel(calledComputation, target, inst.name, false, packable)
      : emitFusionKernel(calledComputation, target, inst.name, rowMaxima(fusion));
  },
  dot: (inst, target, packable) => {
    const spec = gemmSpecOfDot(inst as Instruction<"dot">);
    // A dot the wasm pipeline left out of GEMM form reads its operands in place (plan.ts, cpuDotDecomposer).
    if ("declined" in spec) {
      const strided = emitStridedGemmKernel(inst as Instruction<"dot">, target);
      return "declined" in strided ? spec : strided;
    }
    return emitGemmKernel(spec, target, undefined, undefined, packable[1]);
  },
  convolution: (inst, target) => emitConvKernel(inst as Instruction<"convolution">, target),
  raggedDot: (inst, target) => {
    const spec = raggedGemmSpecOf(inst as Instruction<"raggedDot">);
    return "declined" in spec ? spec : emitRaggedDotKernel(spec, target);
  },
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

type NativeRoutine = (inst: Instruction, cpu: NativeCpu, packable: readonly boolean[]) => NativeKernel | Declined;

/** The C code generators. */
const NATIVE_ROUTINES: Partial<Record<Opcode, NativeRoutine>> = {
  fusion: (inst, cpu, packable) => {
    const fusion = inst as Instruction<"fusion">;
    const { kind, calledComputation } = fusion.attrs;
    if (kind === "custom") {
      const dot = weightOnlyDotOf(calledComputation);
      return "declined" in dot ? dot : emitWeightOnlyGemvC(dot, cpu, inst.name);
    }
    if (kind === "output") return emitOutputFusionC(calledComputation, cpu, inst.name, false, undefined, packable);
    return emitFusionKernelC(calledComputation, inst.name, rowMaxima(fusion));
  },
  dot: (inst, cpu, packable) => {
    const spec = gemmSpecOfDot(inst as Instruction<"dot">);
    // A dot the native pipeline left out of GEMM form reads its operands in place (plan.ts, cpuDotDecomposer).
    if ("declined" in spec) {
      const strided = emitStridedGemmC(inst as Instruction<"dot">, cpu);
      return "declined" in strided ? spec : strided;
    }
    return emitGemmC(spec, cpu, undefined, undefined, packable[1]);
  },
  convolution: (inst, cpu, packable) => emitConvC(inst as Instruction<"convolution">, cpu, undefined, undefined, packable[1]),
  raggedDot: (inst, cpu) => {
    const spec = raggedGemmSpecOf(inst as Instruction<"raggedDot">);
    return "declined" in spec ? spec : emitRaggedDotC(spec, cpu);
  },
  dynamicSlice: (inst) => emitDynamicSliceC(inst as Instruction<"dynamicSlice">),
  dynamicUpdateSlice: (inst) => emitDynamicUpdateSliceC(inst as Instruction<"dynamicUpdateSlice">),
};

/** Ops the WebAssembly generators compile as routines (the wasm backend's capabilities). */
export const WASM_ROUTINE_OPCODES = Object.keys(ROUTINES) as Opcode[];
/** Ops the native backend compiles: with its C generators first, with the WebAssembly ones where C declines. */
export const NATIVE_ROUTINE_OPCODES = [...new Set([...Object.keys(NATIVE_ROUTINES), ...WASM_ROUTINE_OPCODES])] as Opcode[];

/** A native kernel in a program: with the bytes of its buffers (operands, then results), which the glue checks its calls against. */
export type ProgramNativeKernel = NativeKernelBuild["kernel"] & { readonly bufferBytes: readonly number[] };

/** A WebAssembly kernel in a native program says why the C generator declined. */
export type ProgramWasmKernel = WasmKernel & { readonly nativeDeclined?: string };

export type ProgramKernel = ProgramWasmKernel | ProgramNativeKernel;

export function isProgramNativeKernel(k: ProgramKernel): k is ProgramNativeKernel {
  return (k as ProgramNativeKernel).c !== undefined;
}

function nativeRoutine(inst: Instruction, cpu: NativeCpu, packable: readonly boolean[], routine = NATIVE_ROUTINES[inst.opcode]): ProgramNativeKernel | Declined {
  if (routine === undefined) return { declined: `no C generator for ${inst.opcode}` };
  let k: NativeKernel | Declined;
  try {
    k = routine(inst, cpu, packable);
  } catch (e) {
    return { declined: `${GENERATOR_FAILED}: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (isDeclined(k)) return k;
  const operandBytes = (o: Instruction, i: number): number => k.packedOperand?.operand === i
    ? packedBLength(k.packedOperand.layout) * gemmElementBytes(k.packedOperand.layout.elementType) : byteSize(arrayLeaves(o.shape)[0]!);
  const bufferBytes = [...inst.operands.map(operandBytes), ...arrayLeaves(inst.shape).map(byteSize)];
  return { ...k, bufferBytes };
}

/**
 * The GEMM of a dot whose one user only transposes it (kernel/transposed_dots.ts
 * dotsTransposedAfter), writing the transposed array, so the transpose's kernel is left
 * out (program.ts): the native C GEMM with `target.native`, else the WebAssembly one. The
 * native backend does not fall back to the WebAssembly GEMM here: where its C GEMM
 * declines (a few rows, which its streaming kernels take), the C GEMM and the transpose's
 * kernel run as they would without the fold.
 */
export function compileTransposedDot(dot: Instruction<"dot">, permutation: readonly number[], { wasm, native }: CpuTarget): ProgramKernel | Declined {
  if (native !== undefined) return nativeRoutine(dot, native, [], (i, cpu) => emitStridedGemmC(i as Instruction<"dot">, cpu, permutation));
  return wasmRoutine(dot, wasm, [], (i, target) => emitStridedGemmKernel(i as Instruction<"dot">, target, permutation));
}

/** Reasons starting with this mark a code generator that threw: a bug to fix, not a limitation (tests look for it). */
export const GENERATOR_FAILED = "code generator failed";

/** The kernel of `inst`: with `target.native` (the native backend's CPU), the C generator's when it has one, else the WebAssembly one. */
export function compileRoutine(inst: Instruction, target: CpuTarget & { readonly native?: undefined }): WasmKernel | Declined;
export function compileRoutine(inst: Instruction, target: CpuTarget): ProgramKernel | Declined;
export function compileRoutine(inst: Instruction, { wasm, native, weights }: CpuTarget): ProgramKernel | Declined {
  const quantized = quantizedDeclined(inst);
  if (quantized !== undefined) return quantized;
  const packable = packableOperands(inst, weights);
  if (native === undefined) return wasmRoutine(inst, wasm, packable);
  const c = nativeRoutine(inst, native, packable);
  if (!isDeclined(c)) return c;
  const w = wasmRoutine(inst, wasm, packable);
  return isDeclined(w) ? w : { ...w, nativeDeclined: c.declined };
}

/**
 * The kernel of an output fusion whose result is written over an operand its epilogue
 * reads (the planner's in-place case): one that keeps the product in scratch until the
 * epilogue has read it; C where the native backend's generator has it.
 */
export function compileOutputFusionInPlace(inst: Instruction<"fusion">, { wasm, native, weights }: CpuTarget): ProgramKernel | Declined {
  const packable = packableOperands(inst, weights);
  const c = native === undefined ? undefined
    : nativeRoutine(inst, native, packable, (i, cpu) => emitOutputFusionC((i as Instruction<"fusion">).attrs.calledComputation, cpu, i.name, true, undefined, packable));
  if (c !== undefined && !isDeclined(c)) return c;
  const w = emitOutputFusionKernel(inst.attrs.calledComputation, wasm, inst.name, true, packable);
  return isDeclined(w) || c === undefined ? w : { ...w, nativeDeclined: c.declined };
}

function wasmRoutine(inst: Instruction, target: WasmTarget, packable: readonly boolean[], routine = ROUTINES[inst.opcode]): WasmKernel | Declined {
  if (routine === undefined) return { declined: `no compiled routine for ${inst.opcode}` };
  try {
    return routine(inst, target, packable);
  } catch (e) {
    // A generator that throws must not take the program down: the step runs on the
    // interpreter's kernel, and stats.interpreted / dump() show the failure.
    return { declined: `${GENERATOR_FAILED}: ${e instanceof Error ? e.message : String(e)}` };
  }
}
