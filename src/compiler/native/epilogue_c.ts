// Output fusions as C (the twin of wasm/epilogue.ts): the GEMM or convolution kernel of
// the fusion's core (gemm_c.ts, conv_c.ts) writes the product into the result, and once
// the last block of k of a block of rows is done (its rows x the unit's columns, just
// written, so in cache) the epilogue computes the fused root over those elements, reading
// the product back from the result at the element it overwrites. The result is written
// to memory once more, never read back by another kernel.
//
// The epilogue is kernel/epilogue_plan.ts's plan (planEpilogue: the fused root over (row, col)
// of the product, the product being input number operandCount), built as statements by
// kernel/loop_kernel.ts's epilogueKernel (as the WebAssembly epilogue is) and printed by
// emit_c_loop.ts's printKernelC: the vector section on AVX-512, the scalar loop the C
// compiler vectorizes elsewhere, with native-core's CValues for the ops, so every
// elementwise op the C loop fusions take works here too.
//
// A result written over an operand the epilogue reads (the planner's in-place case,
// where k is in one block) keeps each block of rows' product in scratch (gemmRoutine's
// keepProduct), the epilogue reading it there and writing the result; for a convolution
// core that case gets the WebAssembly kernel.

import type { Computation } from "../../ir/computation.js";
import { epilogueKernel } from "../kernel/loop_kernel.js";
import { renderOutputFusion, type EpiloguePlan } from "../kernel/epilogue_plan.js";
import { planConv } from "../kernel/conv_plan.js";
import { checkGemmSpec, planGemm, type PackedB, type SplitBalance } from "../kernel/gemm_plan.js";
import { SYM, symbolize } from "./c_source.js";
import { checkCType } from "./c_values.js";
import type { Declined } from "../kernel/declined.js";
import { convRoutine, nativeConvProblem, packedFilterOf } from "./conv_c.js";
import { NATIVE_VECTOR_TARGET, printKernelC } from "./emit_c_loop.js";
import { anyGemmRoutine, gemmRoutine, nativePackedBOf } from "./gemm_c.js";
import { gemmFamily, type GemmFamily } from "./gemm_c_family.js";
import type { NativeCpu, NativeKernel } from "./kernel.js";

/**
 * `static void <SYM>_epi(uint8_t *mem, const uint32_t *args, int64_t rowBegin, int64_t
 * rowEnd, int64_t colBegin, int64_t colEnd)`: rows [rowBegin, rowEnd) x columns
 * [colBegin, colEnd) of the product (rows of the whole product: batch·m for a dot,
 * output pixels for a convolution), read at args[operandCount] (the result, or where the
 * kernel keeps the product), finished into the result at args[resultBuffer].
 */
function epilogueSource(e: EpiloguePlan, resultBuffer: number): string {
  return printKernelC(epilogueKernel(e, NATIVE_VECTOR_TARGET, resultBuffer), `${SYM}_epi`).join("\n");
}

/**
 * The kernel of an output fusion as C: sym(mem, args = [operand0, ..., operandN-1,
 * result, scratch], begin, end) with the core's work split. `inPlace`: the result is
 * written over an operand the epilogue reads (see the top of this file).
 * `family` overrides the CPU's (tests). `constantOperands`: which operands are constants
 * of the program (a dot's B among them is packed once, see emitGemmC).
 */
export function emitOutputFusionC(
  fused: Computation, cpu: NativeCpu, name: string, inPlace = false, family: GemmFamily = gemmFamily(cpu),
  constantOperands: readonly boolean[] = [],
): NativeKernel | Declined {
  return renderOutputFusion(fused, (oc, plan): NativeKernel | Declined => {
    const n = plan.operandCount;
    checkCType(plan.type);
    for (const node of plan.graph.nodes) if (node.op === "load") checkCType(node.type);
    // In place, the caller's argument list moves the product (args[n]) and puts the result after it.
    const epi = epilogueSource(plan, inPlace ? n + 1 : n);
    const call = (rows: string): string => `${SYM}_epi(mem, args, ${rows}, c0, c1);`;
    let routine: { source: string; parallelExtent: number; scratchBytes: number; costPerUnit: number; balance?: SplitBalance };
    let coreName: string;
    let entry: string;
    let packed: PackedB | undefined;
    if ("dot" in oc.form) {
      const spec = oc.form.dot;
      const problem = checkGemmSpec(spec);
      if (problem !== undefined) return { declined: problem };
      const schedule = planGemm(spec, family.target);
      packed = constantOperands[oc.rhs] === true ? nativePackedBOf(schedule) : undefined;
      if (inPlace) {
        if (!schedule.productInScratch) {
          return { declined: `output fusion ${fused.name}: written over an operand its epilogue reads, with k = ${spec.k} not in one block of the C kernel` };
        }
        // The epilogue reads the block of rows' product in scratch: args[n] moved (modulo 2^32, as the contract allows) so that row bi·m + fr0 is its first.
        const es = spec.elementType === "f32" ? 4 : 8;
        const finish = `{ uint32_t pargs[${n + 2}]; memcpy(pargs, args, sizeof pargs);
          pargs[${n}] = (uint32_t)((uint8_t *)prod - mem) - (uint32_t)((bi * ${spec.m} + fr0) * ${spec.n * es});
          pargs[${n + 1}] = args[${n}];
          ${SYM}_epi(mem, pargs, bi * ${spec.m} + fr0, bi * ${spec.m} + fr1, c0, c1); }`;
        routine = gemmRoutine(schedule, family, SYM, finish, true, packed !== undefined);
      } else {
        routine = anyGemmRoutine(schedule, family, SYM, call(`bi * ${spec.m} + fr0, bi * ${spec.m} + fr1`), packed !== undefined);
      }
      coreName = `gemm ${spec.batch > 1 ? `${spec.batch}x` : ""}${spec.m}x${spec.n}x${spec.k} ${spec.elementType}${packed === undefined ? "" : schedule.kind === "streamB" ? " (B in panels)" : " (B pre-packed)"}`;
      entry = `${SYM}_gemm`;
    } else {
      const g = oc.form.convolution;
      const problem = nativeConvProblem(g);
      if (problem !== undefined) return { declined: problem };
      if (inPlace) return { declined: `output fusion ${fused.name}: a convolution's result written over an operand its epilogue reads (the WebAssembly kernel keeps the product in scratch)` };
      const schedule = planConv(g, family.target);
      packed = constantOperands[oc.rhs] === true ? packedFilterOf(schedule) : undefined;
      const r = convRoutine(schedule, family, SYM, call("fr0, fr1"), packed !== undefined);
      routine = r;
      coreName = `conv ${oc.core.name}${packed !== undefined ? " (B pre-packed)" : ""}`;
      entry = `${SYM}_conv`;
    }
    const source = `${epi}
${routine.source}
void ${SYM}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {
  ${entry}(mem + args[${oc.lhs}], mem + args[${oc.rhs}], mem + args[${n}], ${routine.scratchBytes > 0 ? `mem + args[${n + 1}]` : "0"}, begin, end, mem, args);
}
`;
    return {
      name: `${name}: ${coreName} with epilogue ${family.name}`,
      c: symbolize("outfusion", source),
      operandCount: n,
      resultCount: 1,
      scratchBytes: routine.scratchBytes,
      parallelExtent: routine.parallelExtent,
      costPerUnit: routine.costPerUnit,
      ...(routine.balance !== undefined && routine.balance.grain > 0 ? { balance: routine.balance } : {}),
      ...(packed !== undefined ? { packedOperand: { operand: oc.rhs, layout: packed } } : {}),
    };
  });
}
