import type { FusedKernelIR } from "../kernel/lower_fusion.js";
import { CFail } from "./c_values.js";
import type { NativeKernel } from "./kernel.js";

export function emitReduceKernelC(ir: FusedKernelIR, name: string): NativeKernel {
  void ir; void name;
  throw new CFail("reductions are not compiled to C yet");
}
