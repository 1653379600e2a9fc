// The compiler: `compile(program, options)` verifies a program, runs the pass pipeline
// (simplification, fusion), plans its buffers and steps, generates a WebAssembly
// kernel for each fusion and each op the backend compiles, and loads them on a device.
// The result runs many times: `run` on host literals, `execute` on device arrays.
// `backend: "interpreter"` gives the same interface over the reference interpreter.

import { Computation, HloModule } from "../ir/computation.js";
import { verifyModule } from "../ir/verify.js";
import { evaluate, type EvaluateOptions } from "../interpreter/evaluate.js";
import { printHlo } from "../text/hlo/index.js";
import type { Literal } from "../types/literal.js";
import { WasmDevice } from "./device.js";
import { loadProgram, type Executable } from "./executable.js";
import { runPasses, type Pass, type PassLogEntry } from "./pass.js";
import { fusionPass } from "./passes/fusion.js";
import { planProgram } from "./program.js";

export { Executable, type ExecutableStats } from "./executable.js";
export { WasmDevice, DeviceArray } from "./device.js";
export type { Pass, PassContext } from "./pass.js";

export type BackendName = "wasm" | "interpreter";

export interface CompileOptions {
  /** "wasm" (the default) or "interpreter". */
  readonly backend?: BackendName;
  /** The device to load on (default: one shared device per process). */
  readonly device?: WasmDevice;
  /** Verify the module after every pass (slower; for tests and debugging). */
  readonly verifyEachPass?: boolean;
  /** Called with the module after every pass that changed it (`xlats compile --dump-after-each`). */
  readonly dumpAfterEach?: (passName: string, module: HloModule) => void;
  /** Replace the default pipeline. */
  readonly passes?: readonly Pass[];
}

/** The passes `compile` runs, in order. */
export function defaultPipeline(): Pass[] {
  return [fusionPass];
}

/** What the interpreter backend returns from `compile`: the same run interface, on the reference interpreter. */
export class InterpretedExecutable {
  constructor(readonly module: HloModule) {}
  run(args: readonly Literal[], options: EvaluateOptions = {}): Literal {
    return evaluate(this.module.entry, args, options);
  }
  dump(): string {
    return printHlo(this.module);
  }
  delete(): void {}
}

let sharedDevice: WasmDevice | undefined;

/** The process's default device, made on first use. */
export function defaultDevice(): WasmDevice {
  sharedDevice ??= new WasmDevice();
  return sharedDevice;
}

export function compile(program: Computation | HloModule, options: CompileOptions & { backend: "interpreter" }): Promise<InterpretedExecutable>;
export function compile(program: Computation | HloModule, options?: CompileOptions): Promise<Executable>;
export async function compile(program: Computation | HloModule, options: CompileOptions = {}): Promise<Executable | InterpretedExecutable> {
  const module = program instanceof Computation ? new HloModule(program.name, program) : program;
  // Whatever produced the program (builder, parser, a user's own IR), the pipeline starts from verified IR.
  verifyModule(module);
  if (options.backend === "interpreter") return new InterpretedExecutable(module);
  const { module: optimized, log } = runPasses(module, options.passes ?? defaultPipeline(), {
    verify: options.verifyEachPass ?? false,
    ...(options.dumpAfterEach !== undefined ? { dump: options.dumpAfterEach } : {}),
  });
  const device = options.device ?? defaultDevice();
  return loadProgram(planProgram(optimized, device.target), device, log as PassLogEntry[]);
}
