// The WebAssembly backend as a runtime backend, keeping every buffer in the runtime's
// device memory (Backend.deviceMemory): the host owns each device's allocator, writes
// arguments there and reserves the results there before each run. `prepare` plans the
// program once, on the host, and ships the CompiledProgram itself (plain data: kernels
// as bytes, steps, buffer plan, constants) with the bytes its constants, arena of
// temporaries and kernel scratch take (scratchBytes: the host reserves that region per
// loaded program and device). Each device only instantiates the kernels, places the
// constants, arena and scratch in the reserved region, reads its arguments where the
// host put them and writes its results straight into the host's result buffers: no
// plan, no copy in or out. Collectives and host transfers go through the interpreter's
// kernels with the runtime's rendezvous, writing where the plan says.
//
// The native backend is the same with C kernels: the host builds the program's module
// (or finds it in the on-disk cache) once, and each device loads the built module in
// its worker thread.

import { ExecutionError } from "../types/errors.js";
import type { Backend, DeviceBackend } from "../runtime/backend.js";
import type { BackendEntry } from "../runtime/backend_registry.js";
import { evaluateOptionsOf } from "../runtime/interpreter_backend.js";
import { compileSync, plan, type CompileOptions } from "./index.js";
import { nativeBuildSync, nativeLoadBuilt } from "./native/program_module.js";
import type { BuiltModule } from "./native/toolchain.js";
import { WasmDevice } from "./device.js";
import { loadProgramSync, regionBytes } from "./executable.js";
import type { CompiledProgram } from "./program.js";
import type { WasmTarget } from "./wasm/kernel.js";
import { dumpText } from "./dump_text.js";

/** What the host sends every device (structured-clone safe): the program, planned once. */
export interface PreparedWasmProgram {
  readonly program: CompiledProgram;
  /** The engine features the program's kernels were generated for (the devices' memories are shared, as the host planned). */
  readonly target: WasmTarget;
  /** Bytes of the device's region for constants, arena and scratch (one thread: device workers have no pool). */
  readonly regionBytes: number;
  /** The native backend's module, built on the host (absent: no C kernels). */
  readonly native?: BuiltModule;
}

/** Device workers run every kernel on their own thread. */
const DEVICE_THREADS = 1;

/** Only plans (its memory is never used): the runtime's memories are shared, so kernels import a shared memory. */
let planningDevice: WasmDevice | undefined;

type CompiledBackendName = "wasm" | "native";

function hostBackend(name: CompiledBackendName): Backend {
  const options: CompileOptions = { backend: name };
  return {
    name,
    deviceMemory: true,
    prepare(program): PreparedWasmProgram {
      planningDevice ??= new WasmDevice({ target: { sharedMemory: true } });
      const planned = plan(program, options, planningDevice).program;
      // Built here, once per program and machine: the devices only load the module.
      const native = name === "native" ? nativeBuildSync(planned) : undefined;
      return {
        program: planned, target: planningDevice.target, regionBytes: regionBytes(planned, DEVICE_THREADS), ...(native === undefined ? {} : { native }),
      };
    },
    scratchBytes: (prepared) => (prepared as PreparedWasmProgram).regionBytes,
  };
}

export const wasmBackend: Backend = hostBackend("wasm");
export const nativeBackend: Backend = hostBackend("native");

/** One WasmDevice per device memory and target. */
const devices = new WeakMap<WebAssembly.Memory, WasmDevice>();

function deviceFor(memory: WebAssembly.Memory, target: WasmTarget): WasmDevice {
  const known = devices.get(memory);
  const t = known?.target;
  if (known !== undefined && t!.simd === target.simd && t!.relaxedSimd === target.relaxedSimd && t!.sharedMemory === target.sharedMemory) return known;
  const device = new WasmDevice({ memory, target });
  devices.set(memory, device);
  return device;
}

function deviceBackend(name: CompiledBackendName): DeviceBackend {
  return {
    name,
    load(prepared, context) {
      const { memory, scratch } = context;
      if (memory === undefined || scratch === undefined) throw new ExecutionError(`${name}: a program was loaded without the device's memory or its reserved region`);
      const p = prepared as PreparedWasmProgram;
      const device = deviceFor(memory, p.target);
      const native = name === "native" ? nativeLoadBuilt(p.program, p.native, DEVICE_THREADS) : undefined;
      const executable = loadProgramSync(p.program, device, [], scratch, native);
      return {
        run(args, env) {
          void args; // the same arrays, as views: the program reads device memory at the offsets directly
          const { argumentLeafOffsets, resultOffsets } = env;
          if (env.memory !== memory || argumentLeafOffsets === undefined || resultOffsets === undefined) {
            throw new ExecutionError(`${name}: a run without the device memory the program was loaded in, or without the offsets of its buffers`);
          }
          executable.executeAt(argumentLeafOffsets.flat(), resultOffsets, evaluateOptionsOf(env));
          // Views of the host's result buffers: the worker sees they are in place and copies nothing.
          return device.viewLiteral(p.program.resultShape, resultOffsets);
        },
        unload: () => executable.delete(),
      };
    },
  };
}

export const wasmDeviceBackend: DeviceBackend = deviceBackend("wasm");
export const nativeDeviceBackend: DeviceBackend = deviceBackend("native");

function compiledEntry(name: CompiledBackendName, host: Backend, device: DeviceBackend): BackendEntry {
  return {
    host,
    device,
    // Synchronous, so the synchronous check runner can use it too: kernels are small
    // modules, which even a browser's main thread compiles synchronously (native modules
    // are built by the C compiler, synchronously, or found in the cache).
    evaluate: (computation, args, options) => {
      const executable = compileSync(computation, { backend: name });
      try {
        return executable.run(args, options);
      } finally {
        executable.delete();
      }
    },
    compileAndDump: (module, options) => {
      const sections: string[] = [];
      const executable = compileSync(module, {
        backend: name,
        ...(options.dumpAfterEach ? { dumpAfterEach: (pass, m) => sections.push(`// ---- after ${pass}\n${dumpText(m)}`) } : {}),
      });
      try {
        if (options.dump === true) sections.push(`// ---- compiled\n${executable.dump()}`);
        const st = executable.stats;
        sections.push(`// ${module.name}: ${st.kernels} kernel(s), ${st.interpreted.length} interpreted step(s), peak ${st.peakBytes} bytes`);
        return sections.join("\n");
      } finally {
        executable.delete();
      }
    },
  };
}

export const wasmEntry: BackendEntry = compiledEntry("wasm", wasmBackend, wasmDeviceBackend);
export const nativeEntry: BackendEntry = compiledEntry("native", nativeBackend, nativeDeviceBackend);
