// What the native backend lowers (kernel/capabilities.ts): an op its C generator has
// code for, or else one the WebAssembly generator has, whose kernel then runs on the
// same memory (routines.ts asks the two in that order for every fusion); output
// fusions by the cost rule of the C GEMM and convolution kernels of the target's CPU
// (kernel/epilogue_plan.ts).

import { probedCapabilities, type LoweringCapabilities } from "../kernel/capabilities.js";
import { wasmCapabilities } from "../wasm/capabilities.js";
import type { CpuTarget } from "../backend_contract.js";
import { isDeclined } from "../kernel/declined.js";
import { emitFusionKernelC } from "./emit_c_reduce.js";
import { outputFusionProblem } from "../wasm/epilogue.js";
import { gemmFamily } from "./gemm_c_family.js";

/** The C generator's answers (its fused kernels do not depend on the CPU: the vector forms fall back to scalar code). */
const cCapabilities = probedCapabilities((fused) => {
  try {
    const kernel = emitFusionKernelC(fused);
    return isDeclined(kernel) ? kernel : true;
  } catch {
    // A generator that throws is a bug the real fusion's compile reports (routines.ts).
    return true;
  }
});

/** By the target's features (devices of one kind each hold a target of their own). */
const byTarget = new Map<string, LoweringCapabilities>();

export function nativeCapabilities(target: CpuTarget): LoweringCapabilities {
  const key = JSON.stringify([target.wasm, target.native]);
  let capabilities = byTarget.get(key);
  if (capabilities === undefined) {
    const wasm = wasmCapabilities(target);
    const gemm = target.native === undefined ? undefined : gemmFamily(target.native).target;
    capabilities = {
      canLowerScalar: (inst) => (cCapabilities.canLowerScalar(inst) === true ? true : wasm.canLowerScalar(inst)),
      canLowerReduction: (inst) => (cCapabilities.canLowerReduction(inst) === true ? true : wasm.canLowerReduction(inst)),
      ...(gemm === undefined ? {} : { outputFusionProblem: (fused) => outputFusionProblem(fused, gemm) }),
    };
    byTarget.set(key, capabilities);
  }
  return capabilities;
}
