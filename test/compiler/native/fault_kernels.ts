// Test-only C kernels that fault on purpose (a store through NULL, an integer division
// by zero, a store through NULL on every thread but the first), built through the
// backend's own build path, and a test backend registered at run time whose devices
// run the program named FAULTY as the NULL store and every other program as the native
// backend does: a device whose generated code crashes, beside devices that compute.
// Importing this module registers the backend; device workers import it through
// Backend.deviceModule.

import { nativeBackend, nativeDeviceBackend } from "../../../src/compiler/native/backend.js";
import { buildNativeModuleSync, type NativeModule } from "../../../src/compiler/native/build.js";
import { LinearMemory } from "../../../src/compiler/linear_memory.js";
import type { NativeKernel } from "../../../src/compiler/native/kernel.js";
import type { Backend, DeviceBackend } from "../../../src/runtime/backend.js";
import { registerBackend } from "../../../src/runtime/backend_registry.js";
import { ExecutionError } from "../../../src/types/errors.js";

/** A kernel writing one f32 per unit into its only buffer, after `prologue` (C statements). */
export function testKernel(name: string, prologue: string, extent = 4, costPerUnit = 1): NativeKernel {
  const symbol = `xk_test_${name}`;
  return {
    name,
    c: {
      symbol,
      source: `static void ${symbol}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {\n  ${prologue}\n` +
        `  for (int64_t u = begin; u < end; u++) ((float *)(mem + args[0]))[u] = (float)u;\n}`,
    },
    operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: extent, costPerUnit,
  };
}

export const NULL_STORE = "*(volatile int *)0 = 1;";
/** Divides by a zero the compiler cannot see: SIGFPE on x86 (aarch64 gives 0, no signal). */
export const DIVIDE_BY_ZERO = "volatile int zero = 0, seven = 7; volatile int q = seven / zero; (void)q;";
/** Every part but the first stores through NULL: only pool threads fault. */
export const NULL_STORE_PAST_FIRST_PART = "if (begin > 0) *(volatile int *)16 = 1;";

export function buildTestModule(kernels: readonly NativeKernel[], name: string): NativeModule {
  return buildNativeModuleSync(kernels.map((kernel) => ({ kernel, bufferBytes: [kernel.parallelExtent * 4] })), name);
}

export const FAULT_BACKEND = "native-fault-test";
/** The program a FAULT_BACKEND device runs as a NULL store. */
export const FAULTY = "faulty";

type Prepared = { readonly faulty: true } | { readonly inner: unknown };

export const faultBackend: Backend = {
  name: FAULT_BACKEND,
  deviceModule: import.meta.url,
  createMemory: nativeBackend.createMemory!,
  prepare: (program, options): Prepared => (program.name === FAULTY ? { faulty: true } : { inner: nativeBackend.prepare(program, options) }),
  scratchBytes: (prepared) => ("inner" in (prepared as Prepared) ? nativeBackend.scratchBytes!((prepared as { inner: unknown }).inner) : 0),
};

export const faultDeviceBackend: DeviceBackend = {
  name: FAULT_BACKEND,
  load(prepared, context) {
    const p = prepared as Prepared;
    if ("inner" in p) return nativeDeviceBackend.load(p.inner, context);
    const module = buildTestModule([testKernel("device_null_store", NULL_STORE)], FAULTY);
    return {
      run(_args, env) {
        if (!(env.memory instanceof LinearMemory) || env.resultOffsets === undefined) throw new ExecutionError(`${FAULTY}: no device memory`);
        module.run(0, env.memory.memory, new Uint32Array([env.resultOffsets[0]!]), 0, 4);
        throw new ExecutionError(`${FAULTY}: the kernel returned`);
      },
    };
  },
  openMemory: nativeDeviceBackend.openMemory!,
};

registerBackend({ host: faultBackend, device: faultDeviceBackend });
