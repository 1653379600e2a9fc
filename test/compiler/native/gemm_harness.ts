// Runs native GEMM and convolution kernels on operands placed in a fresh device memory,
// as the executor will: every case of a test in one module (one compiler run, cached on
// disk), each over [0, parallelExtent) in `splits` consecutive calls with their own
// scratch, or through the module's thread pool.

import { buildNativeModuleSync, nativeModuleParts, NativeModule } from "../../../src/compiler/native/build.js";
import type { NativeCpu, NativeKernel } from "../../../src/compiler/native/kernel.js";
import { buildModuleSync, loadModule, nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES } from "../../../src/compiler/wasm/kernel.js";
import { familyByName, type GemmFamily, type GemmFamilyName } from "../../../src/compiler/native/gemm_c_family.js";

// (Uint8Array: pred operands, one byte an element.)
export type ElementArray = Float32Array | Float64Array | Uint8Array;

export interface NativeCase {
  readonly kernel: NativeKernel;
  readonly operands: readonly ElementArray[];
  readonly resultBytes: readonly number[];
  /** Consecutive calls over the extent (default 1), or `threads` for one call through the module's pool. */
  readonly splits?: number;
  readonly threads?: number;
  /** Instead: calls over exactly these ranges of units, in order, each with its own scratch (a unit alone, units left out). */
  readonly ranges?: readonly (readonly [number, number])[];
}

/** Why the native tests cannot run here (no C compiler), or undefined. */
export function nativeSkipReason(): string | undefined {
  const t = nativeToolchain();
  return typeof t === "string" ? `no native toolchain: ${t}` : undefined;
}

/** The machine's CPU as the toolchain detected it (call only when nativeSkipReason() is undefined). */
export function nativeCpu(): NativeCpu {
  const t = nativeToolchain();
  if (typeof t === "string") throw new Error(t);
  return t.cpu;
}

/** Every family this machine runs, blocked for its caches: the vector-extension ones everywhere, AVX2 and AVX-512 where the CPU has them. */
export function runnableFamilies(cpu: NativeCpu): GemmFamily[] {
  const names: GemmFamilyName[] = ["portable", "neon"];
  if (cpu.arch === "x86_64" && cpu.avx2 && cpu.fma) names.push("avx2");
  if (cpu.arch === "x86_64" && cpu.avx512f) names.push("avx512");
  return names.map((name) => familyByName(name, cpu.caches));
}

const alignUp = (x: number): number => Math.ceil(x / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;

/** Builds the module of `kernels` as the backend does, or with `extraFlags` added to the compiler's flags. */
function buildWith(kernels: Parameters<typeof buildNativeModuleSync>[0], name: string, extraFlags: readonly string[]): NativeModule {
  if (extraFlags.length === 0) return buildNativeModuleSync(kernels, name);
  const t = nativeToolchain();
  if (typeof t === "string") throw new Error(t);
  const parts = nativeModuleParts(kernels);
  const built = buildModuleSync({ ...t, flags: [...t.flags, ...extraFlags] }, parts.kernels, name, parts.glue);
  return new NativeModule(loadModule(built), kernels, built);
}

/**
 * Each case's results (bytes), in order; `extraFlags`: compiler flags added to the
 * backend's (the module is built apart); `sameKernel`: the cases share one kernel (the
 * first case's), run once per case (a kernel's calls in turn, as a program's steps).
 * Cases given one kernel object share its one entry in the module (their operands the
 * same sizes).
 */
export function runNativeCases(cases: readonly NativeCase[], name: string, extraFlags: readonly string[] = [], sameKernel = false): Uint8Array[][] {
  const entries = sameKernel ? cases.slice(0, 1) : cases.filter((c, i) => cases.findIndex((d) => d.kernel === c.kernel) === i);
  const module = buildWith(entries.map((c) => ({
    kernel: c.kernel, bufferBytes: [...c.operands.map((o) => o.byteLength), ...c.resultBytes],
  })), name, extraFlags);
  return cases.map((c) => {
    const k = sameKernel ? 0 : entries.findIndex((e) => e.kernel === c.kernel);
    const splits = c.splits ?? 1;
    const threads = c.threads ?? 1;
    const extent = c.kernel.parallelExtent;
    const ranges = c.ranges ?? Array.from({ length: splits }, (_, s) => [Math.floor((extent * s) / splits), Math.floor((extent * (s + 1)) / splits)] as const);
    let offset = BUFFER_ALIGNMENT;
    const place = (bytes: number): number => { const at = offset; offset = alignUp(offset + Math.max(bytes, 1)); return at; };
    const operandAt = c.operands.map((o) => place(o.byteLength));
    const resultAt = c.resultBytes.map(place);
    const scratchAt = Array.from({ length: Math.max(ranges.length, threads) }, () => place(c.kernel.scratchBytes));
    const memory = new WebAssembly.Memory({ initial: Math.ceil(offset / 65536) + 1, maximum: MEMORY_MAX_PAGES });
    const bytes = new Uint8Array(memory.buffer);
    c.operands.forEach((o, i) => bytes.set(new Uint8Array(o.buffer, o.byteOffset, o.byteLength), operandAt[i]));
    // Results start as NaN bit patterns, so a kernel must write every element.
    resultAt.forEach((at, i) => bytes.fill(0xff, at, at + c.resultBytes[i]!));
    const pointers = new Uint32Array([...operandAt, ...resultAt]);
    if (threads > 1) {
      module.run(k, memory, pointers, 0, extent, threads, new Uint32Array(scratchAt));
    } else {
      ranges.forEach(([begin, end], s) => module.run(k, memory, pointers, begin, end, 1, new Uint32Array([scratchAt[s]!])));
    }
    return resultAt.map((at, i) => bytes.slice(at, at + c.resultBytes[i]!));
  });
}
