// The native module of a compiled program: its C kernels, in program order (the
// executable's loadedKernels numbers them the same way), built once per machine
// (toolchain.ts's cache) and loaded once per process.

import type { CompiledProgram } from "../program.js";
import type { NativeLoad } from "../executable.js";
import { isProgramNativeKernel } from "../routines.js";
import { buildNativeModule, buildNativeModuleSync, type NativeKernelBuild } from "./build.js";

function builds(program: CompiledProgram): NativeKernelBuild[] {
  return program.kernels.flatMap((k) => (isProgramNativeKernel(k) ? [{ kernel: k, bufferBytes: k.bufferBytes }] : []));
}

/** The program's native module (undefined when it has no C kernels), its kernels to run on `threads` threads. */
export function nativeLoadSync(program: CompiledProgram, threads: number): NativeLoad | undefined {
  const b = builds(program);
  return b.length === 0 ? undefined : { module: buildNativeModuleSync(b, program.module.name), threads };
}

/** nativeLoadSync, with the compiler run asynchronously. */
export async function nativeLoad(program: CompiledProgram, threads: number): Promise<NativeLoad | undefined> {
  const b = builds(program);
  return b.length === 0 ? undefined : { module: await buildNativeModule(b, program.module.name), threads };
}
