// What the running engine supports, found by validating tiny modules: SIMD128, relaxed
// SIMD (Node 20 validates it only under --experimental-wasm-relaxed-simd; it is
// detected, never required) and shared memory (in a browser, only in a cross-origin
// isolated page).

import { importNodeAdapter, runningInNode } from "../../runtime/host_environment.js";
import { MEMORY_MAX_PAGES, type WasmTarget } from "./kernel.js";
import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";

function validates(body: (f: FunctionBuilder) => void, shared = false): boolean {
  const m = new ModuleBuilder().importMemory({ sharedMemory: shared });
  m.addFunction("run", [], ["v128"], body);
  try {
    return WebAssembly.validate(m.finish());
  } catch {
    return false;
  }
}

function sharedMemoryWorks(): boolean {
  if (typeof SharedArrayBuffer === "undefined") return false;
  try {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: MEMORY_MAX_PAGES, shared: true });
    if (!(memory.buffer instanceof SharedArrayBuffer)) return false;
    // The engine must also accept a module importing shared memory.
    const m = new ModuleBuilder().importMemory({ sharedMemory: true });
    m.addFunction("run", [], ["i32"], (f) => f.i32Const(0).i32Load());
    return WebAssembly.validate(m.finish());
  } catch {
    return false;
  }
}

/** Probes the engine (each probe once) and describes it as a code generation target. */
export function probeWasmTarget(): WasmTarget {
  const simd = validates((f) => f.i32Const(0).v128Load().f32x4Const(1, 2, 3, 4).f32x4Add());
  const relaxedSimd = simd && validates((f) => f.f32x4Const(1, 2, 3, 4).f32x4Const(1, 2, 3, 4).f32x4Const(0, 0, 0, 0).f32x4RelaxedMadd());
  return { simd, relaxedSimd, sharedMemory: sharedMemoryWorks() };
}

let cached: WasmTarget | undefined;

/** The engine's target, probed on first use. */
export function detectWasmTarget(): WasmTarget {
  cached ??= probeWasmTarget();
  return cached;
}

/** Logical CPUs available to this process: navigator.hardwareConcurrency, or Node's os.availableParallelism. */
export async function cpuThreads(): Promise<number> {
  const navigatorThreads = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  if (typeof navigatorThreads === "number" && navigatorThreads > 0) return navigatorThreads;
  if (runningInNode()) {
    const { nodeCpuThreads } = await importNodeAdapter<{ nodeCpuThreads: () => number }>(import.meta.url, "./node_features.js");
    return nodeCpuThreads();
  }
  return 1;
}
