// What the CPU backends (wasm/backend.ts, native/backend.ts) share: the WebAssembly
// device's memory and executor, and their runtime halves, keeping every buffer in the
// runtime's device memory (Backend.createMemory: a shared WebAssembly.Memory per device,
// linear_memory.ts): the host owns each device's allocator, writes arguments there and
// reserves the results there before each run. `prepare` plans the
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
// its worker thread. What differs between the two is a CpuCodegen (wasm/backend.ts,
// native/backend.ts); this file holds what they share, as one CompilerBackend each.

import { ExecutionError } from "../types/errors.js";
import { evaluateOptionsOf, type Backend, type DeviceBackend } from "../runtime/backend.js";
import type { CompileOptions } from "./index.js";
import { plan, type Planned } from "./plan.js";
import type { NativeCpu } from "./native/kernel.js";
import type { BuiltModule } from "./native/toolchain.js";
import { WasmDevice } from "./device.js";
import { LinearMemory } from "./linear_memory.js";
import { loadProgramSync, regionBytes, type Executable, type NativeLoad } from "./executable.js";
import type { CompiledProgram } from "./program.js";
import type { WasmTarget } from "./wasm/kernel.js";
import { dumpText } from "./dump_text.js";
import type { BackendCapabilities, CompilerBackend, CpuTarget } from "./backend_contract.js";
import { Computation, HloModule } from "../ir/computation.js";

/**
 * What makes one CPU backend on the WebAssembly device's memory and executor: its
 * kernel generators' CPU, how its programs' native modules are built and loaded, and
 * how it compiles in process.
 */
export interface CpuCodegen<Name extends string> {
  readonly name: Name;
  readonly capabilities: BackendCapabilities<CpuTarget>;
  available(): true | string;
  readonly defaultRank?: number;
  /** The CPU the C generators target, undefined for WebAssembly kernels only (a CompileError where the backend is not available). */
  nativeCpu(moduleName: string): NativeCpu | undefined;
  /** Builds a planned program's native module on the host, once (undefined: none to build). */
  build(program: CompiledProgram): BuiltModule | undefined;
  /** Loads on a device what `build` built. */
  load(program: CompiledProgram, built: BuiltModule | undefined, threads: number): NativeLoad | undefined;
  /** Loads a planned program in this process, on `device`. */
  compile(planned: Planned, device: WasmDevice, options: CompileOptions): Promise<Executable>;
  compileSync(planned: Planned, device: WasmDevice, options: CompileOptions): Executable;
  /** compileSync of several planned programs, their native modules built as one (absent: each compiled alone). */
  compileManySync?(planned: readonly Planned[], device: WasmDevice, options: CompileOptions): Executable[];
}

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

function hostBackend<Name extends string>(codegen: CpuCodegen<Name>): Backend {
  return {
    name: codegen.name,
    // Shared, so the device's worker opens the same bytes (openMemory) and views arrays in place.
    createMemory: () => new LinearMemory({ shared: true }),
    // No deviceModule: the device workers' entry points (src/*_device_worker.ts) import the
    // table of built-in backends, as every entry point does.
    prepare(program, _options, donate): PreparedWasmProgram {
      planningDevice ??= new WasmDevice({ target: { sharedMemory: true } });
      // With donation the plan writes results, and temporaries, into the donated parameters' buffers.
      const planned = planFor(codegen, program, donate === undefined ? {} : { donate }, planningDevice).program;
      // Built here, once per program and machine: the devices only load the module.
      const native = codegen.build(planned);
      return {
        program: planned, target: planningDevice.target, regionBytes: regionBytes(planned, DEVICE_THREADS), ...(native === undefined ? {} : { native }),
      };
    },
    scratchBytes: (prepared) => (prepared as PreparedWasmProgram).regionBytes,
  };
}

/** Plans `program` for `device` with the codegen's generators, fusion asking its capabilities for that target. */
function planFor<Name extends string>(codegen: CpuCodegen<Name>, program: Computation | HloModule, options: CompileOptions, device: WasmDevice): Planned {
  const native = codegen.nativeCpu(program.name);
  const target: CpuTarget = { wasm: device.target, ...(native === undefined ? {} : { native }) };
  return plan(program, options, device, native, codegen.capabilities.lowering?.(target));
}

/** One WasmDevice per device memory and target. */
const devices = new WeakMap<LinearMemory, WasmDevice>();

function deviceFor(memory: LinearMemory, target: WasmTarget): WasmDevice {
  const known = devices.get(memory);
  const t = known?.target;
  if (known !== undefined && t!.simd === target.simd && t!.relaxedSimd === target.relaxedSimd && t!.sharedMemory === target.sharedMemory) return known;
  const device = new WasmDevice({ memory, target });
  devices.set(memory, device);
  return device;
}

function deviceBackend<Name extends string>(codegen: CpuCodegen<Name>): DeviceBackend {
  const { name } = codegen;
  return {
    name,
    load(prepared, context) {
      const { memory, scratch } = context;
      if (memory === undefined || scratch === undefined) throw new ExecutionError(`${name}: a program was loaded without the device's memory or its reserved region`);
      if (!(memory instanceof LinearMemory)) throw new ExecutionError(`${name}: the device's memory is not a WebAssembly memory (LinearMemory), which its kernels address`);
      const p = prepared as PreparedWasmProgram;
      const device = deviceFor(memory, p.target);
      const executable = loadProgramSync(p.program, device, [], scratch, codegen.load(p.program, p.native, DEVICE_THREADS));
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
        // The host passes the donated argument's offset as the result's: executeAt writes it there, as the plan expects.
        outputAliases: p.program.outputAliases,
      };
    },
    openMemory: (handle) => LinearMemory.open(handle),
  };
}

/** The process's default device, made on first use. */
let sharedDevice: WasmDevice | undefined;
export function defaultDevice(): WasmDevice {
  sharedDevice ??= new WasmDevice();
  return sharedDevice;
}

/** The CompilerBackend of a CPU codegen, with its runtime halves (the host's `prepare`, the device's `load`). */
export function cpuBackend<Name extends string>(codegen: CpuCodegen<Name>): CompilerBackend<Name, Executable, CpuTarget> & { readonly host: Backend; readonly device: DeviceBackend } {
  const { name } = codegen;
  const planned = (module: HloModule, options: CompileOptions, device: WasmDevice): Planned => planFor(codegen, module, options, device);
  const compileHere = (program: Computation | HloModule, options: CompileOptions): Executable => {
    const device = options.device ?? defaultDevice();
    return codegen.compileSync(planned(program instanceof Computation ? new HloModule(program.name, program) : program, options, device), device, options);
  };
  return {
    name,
    capabilities: codegen.capabilities,
    available: () => codegen.available(),
    ...(codegen.defaultRank === undefined ? {} : { defaultRank: codegen.defaultRank }),
    compile: async (module, options) => {
      const device = options.device ?? defaultDevice();
      return codegen.compile(planned(module, options, device), device, options);
    },
    compileSync: compileHere,
    compileManySync: (modules, options) => {
      const device = options.device ?? defaultDevice();
      if (codegen.compileManySync === undefined) return modules.map((m) => codegen.compileSync(planned(m, options, device), device, options));
      return codegen.compileManySync(modules.map((m) => planned(m, options, device)), device, options);
    },
    host: hostBackend(codegen),
    device: deviceBackend(codegen),
    // Synchronous, so the synchronous check runner can use it too: kernels are small
    // modules, which even a browser's main thread compiles synchronously (native modules
    // are built by the C compiler, synchronously, or found in the cache).
    evaluate: (computation, args, options) => {
      const executable = compileHere(computation, {});
      try {
        return executable.run(args, options);
      } finally {
        executable.delete();
      }
    },
    compileAndDump: (module, options) => {
      const sections: string[] = [];
      const executable = compileHere(module, {
        ...(options.dumpAfterEach ? { dumpAfterEach: (pass: string, m: HloModule) => sections.push(`// ---- after ${pass}\n${dumpText(m)}`) } : {}),
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
