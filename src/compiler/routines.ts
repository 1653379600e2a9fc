// Which instructions the WebAssembly backend compiles, and with which code generator.
// The table is partial on purpose: an opcode missing here runs through the
// interpreter's kernel on views of device memory, and `Executable.dump()` lists each
// such step with the reason. COMPILED_OPCODES is the coverage list.

import type { Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import type { Unsupported, WasmKernel, WasmTarget } from "./wasm/kernel.js";

type Routine = (inst: Instruction, target: WasmTarget) => WasmKernel | Unsupported;

const ROUTINES: Partial<Record<Opcode, Routine>> = {};

/** The opcodes with a code generator. */
export const COMPILED_OPCODES = Object.keys(ROUTINES) as Opcode[];

export function compileRoutine(inst: Instruction, target: WasmTarget): WasmKernel | Unsupported {
  const routine = ROUTINES[inst.opcode];
  if (routine === undefined) return { unsupported: `no compiled routine for ${inst.opcode}` };
  return routine(inst, target);
}
