// emitFusionKernelC: one fused computation → one C kernel (kernel.ts's contract), from
// the same kernels the WebAssembly emitters print (lowerFusion, kernel/fusion_kernel.ts),
// printed by emit_c_loop.ts. What they have no C for is Declined, with the reason: the
// WebAssembly kernel runs instead.

import type { Computation } from "../../ir/computation.js";
import { lowerFusion } from "../kernel/lower_fusion.js";
import type { RowMaximum } from "../kernel/value_facts.js";
import { checkCType } from "./c_values.js";
import { DeclinedError, type Declined } from "../kernel/declined.js";
import { emitKernelC } from "./emit_c_reduce.js";
import type { NativeKernel } from "./kernel.js";

export function emitFusionKernelC(fused: Computation, name = fused.name, maxima: readonly RowMaximum[] = []): NativeKernel | Declined {
  const ir = lowerFusion(fused, maxima);
  if ("declined" in ir) return ir;
  try {
    for (const x of [...ir.inputs, ...ir.outputs]) checkCType(x.type);
    return emitKernelC(ir, name);
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: e.message };
    throw e;
  }
}
