// The backend the op tests run on, chosen by the environment: XLATS_TEST_BACKEND=
// "interpreter" (the default: the executable specification) or "wasm" (the compiler:
// passes, fusion, WebAssembly kernels). `npm test` runs the op-test folders once more
// with XLATS_TEST_BACKEND=wasm, so every op test checks both backends against the same
// independently known values without duplicating test code.

import { compileSync } from "../../src/compiler/index.js";
import { evaluate as interpret, type EvaluateOptions } from "../../src/interpreter/evaluate.js";
import type { Computation } from "../../src/ir/computation.js";
import type { Literal } from "../../src/types/literal.js";

export type TestBackend = "interpreter" | "wasm";

function selected(): TestBackend {
  const name = process.env["XLATS_TEST_BACKEND"] ?? "interpreter";
  if (name !== "interpreter" && name !== "wasm") throw new Error(`XLATS_TEST_BACKEND must be "interpreter" or "wasm", not "${name}"`);
  return name;
}

/** The backend this test process runs on. */
export const testBackend: TestBackend = selected();

/** Whether the tests run on the compiled backend (for backend-aware tolerances). */
export const compiled = testBackend === "wasm";

/** `evaluate` of src/index.js, on the selected backend. */
export function evaluate(computation: Computation, args: readonly Literal[], options: EvaluateOptions = {}): Literal {
  if (!compiled) return interpret(computation, args, options);
  const executable = compileSync(computation);
  try {
    return executable.run(args, options);
  } finally {
    executable.delete();
  }
}
