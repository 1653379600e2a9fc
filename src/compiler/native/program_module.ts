// The native module of a compiled program: its C kernels, in program order (the
// executable's loadedKernels numbers them the same way), built once per machine
// (toolchain.ts's cache, keyed by the source's hash) and loaded once per process. The
// multi-device runtime builds it on the host (nativeBuildSync) and ships the built
// module's path with the program, so the devices only load it (nativeLoadBuilt).

import type { CompiledProgram } from "../program.js";
import type { NativeLoad } from "../executable.js";
import { isProgramNativeKernel } from "../routines.js";
import { CompileError } from "../../types/errors.js";
import { buildNativeModule, buildNativeModuleSync, buildNativeModulesSync, NativeModule, nativeModuleParts, toolchainOrThrow, type NativeKernelBuild } from "./build.js";
import { buildModuleSync, loadModule, type BuiltModule } from "./toolchain.js";

function builds(program: CompiledProgram): NativeKernelBuild[] {
  return program.kernels.flatMap((k) => (isProgramNativeKernel(k) ? [{ kernel: k, bufferBytes: k.bufferBytes }] : []));
}

/** The program's native module (undefined when it has no C kernels), its kernels to run on `threads` threads. */
export function nativeLoadSync(program: CompiledProgram, threads: number): NativeLoad | undefined {
  const b = builds(program);
  return b.length === 0 ? undefined : { module: buildNativeModuleSync(b, program.moduleName), threads };
}

/**
 * The native modules of several programs built as one (buildNativeModulesSync), each
 * program's kernels to run on `threads` threads: undefined for a program without C
 * kernels, as nativeLoadSync's.
 */
export function nativeLoadManySync(programs: readonly CompiledProgram[], threads: number): (NativeLoad | undefined)[] {
  const all = programs.map((program) => ({ kernels: builds(program), name: program.moduleName }));
  const withKernels = all.filter((p) => p.kernels.length > 0);
  const name = withKernels.length === 1 ? withKernels[0]!.name : `${withKernels.length} programs (${withKernels.map((p) => p.name).slice(0, 3).join(", ")}${withKernels.length > 3 ? ", ..." : ""})`;
  const modules = withKernels.length === 0 ? [] : buildNativeModulesSync(withKernels, name);
  let next = 0;
  return all.map((p) => (p.kernels.length === 0 ? undefined : { module: modules[next++]!, threads }));
}

/** nativeLoadSync, with the compiler run asynchronously. */
export async function nativeLoad(program: CompiledProgram, threads: number): Promise<NativeLoad | undefined> {
  const b = builds(program);
  return b.length === 0 ? undefined : { module: await buildNativeModule(b, program.moduleName), threads };
}

/** Builds the program's native module (or finds it in the on-disk cache) without loading it; undefined when it has no C kernels. */
export function nativeBuildSync(program: CompiledProgram): BuiltModule | undefined {
  const b = builds(program);
  if (b.length === 0) return undefined;
  const parts = nativeModuleParts(b);
  return buildModuleSync(toolchainOrThrow(program.moduleName), parts.kernels, program.moduleName, parts.glue);
}

/** Loads the module nativeBuildSync built for `program` (no compiler runs), its kernels to run on `threads` threads. */
export function nativeLoadBuilt(program: CompiledProgram, built: BuiltModule | undefined, threads: number): NativeLoad | undefined {
  const b = builds(program);
  if (b.length === 0) return undefined;
  if (built === undefined) throw new CompileError(`${program.moduleName}: the program has C kernels but no built native module`);
  return { module: new NativeModule(loadModule(built), b, built, program.moduleName), threads };
}
