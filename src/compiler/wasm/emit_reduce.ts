import type { FusedKernelIR } from "../kernel/lower_fusion.js";
import { EmitFail } from "./emit_values.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";

export function emitReduceKernel(_ir: FusedKernelIR, _target: WasmTarget, _name: string): WasmKernel {
  throw new EmitFail("reductions are not emitted yet");
}
