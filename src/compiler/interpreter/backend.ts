// The reference interpreter as a backend: `compile` gives the compiled backends' run
// interface over `evaluate`; for a client, the prepared program is the serialized IR,
// which each device deserializes once and evaluates on every run. One client compile
// option: `accumulation` (an Accumulation, see interpreter/context.ts), how its dot-like
// ops sum.

import type { HloModule } from "../../ir/computation.js";
import { verifyModule } from "../../ir/verify.js";
import { ACCUMULATIONS, type Accumulation } from "../../interpreter/context.js";
import { evaluate, type EvaluateOptions } from "../../interpreter/evaluate.js";
import { ExecutionError } from "../../types/errors.js";
import type { Literal } from "../../types/literal.js";
import { meshTable } from "../../sharding/mesh.js";
import { evaluateOptionsOf, type Backend, type BackendCompileOptions, type DeviceBackend } from "../../runtime/backend.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../../runtime/serialize.js";
import type { CompilerBackend } from "../backend_contract.js";
import { dumpText } from "../dump_text.js";

/** What the interpreter backend returns from `compile`: the same run interface, on the reference interpreter. */
export class InterpretedExecutable {
  constructor(readonly module: HloModule) {}
  run(args: readonly Literal[], options: EvaluateOptions = {}): Literal {
    return evaluate(this.module.entry, args, { meshes: meshTable(this.module), ...options });
  }
  dump(): string {
    return dumpText(this.module);
  }
  delete(): void {}
}

interface PreparedInterpreterProgram {
  readonly program: SerializedProgram;
  readonly accumulation: Accumulation;
}

function accumulationOption(options: BackendCompileOptions | undefined): Accumulation {
  const value = options?.["accumulation"] ?? "xla-cpu";
  if (!ACCUMULATIONS.includes(value as Accumulation)) {
    throw new ExecutionError(`interpreter backend: compile option accumulation is ${JSON.stringify(value)}; expected one of ${ACCUMULATIONS.join(", ")}`);
  }
  return value as Accumulation;
}

export const interpreterBackend: Backend = {
  name: "interpreter",
  prepare: (program, options): PreparedInterpreterProgram => ({ program: serializeComputation(program), accumulation: accumulationOption(options) }),
};

export const interpreterDeviceBackend: DeviceBackend = {
  name: "interpreter",
  load(prepared) {
    const { program, accumulation } = prepared as PreparedInterpreterProgram;
    const computation = deserializeComputation(program);
    return {
      run: (args, env) => evaluate(computation, args, { ...evaluateOptionsOf(env), accumulation }),
    };
  },
};

export const interpreterEntry: CompilerBackend<"interpreter", InterpretedExecutable> = {
  name: "interpreter",
  capabilities: { routines: "every" },
  available: () => true,
  compile: async (module) => {
    verifyModule(module);
    return new InterpretedExecutable(module);
  },
  compileSync: (module) => {
    verifyModule(module);
    return new InterpretedExecutable(module);
  },
  host: interpreterBackend,
  device: interpreterDeviceBackend,
  evaluate: (computation, args, options) => evaluate(computation, args, options),
};
