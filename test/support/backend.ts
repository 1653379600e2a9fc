// The backend the op tests run on, chosen by the environment: XLATS_TEST_BACKEND= a
// backend of the table (src/compiler/backends.ts): "interpreter" (the default: the
// executable specification), "wasm" (the compiler: passes, fusion, WebAssembly
// kernels), "native" (the same with C kernels built by the machine's C compiler),
// "webgpu" (compiled and run asynchronously, in a worker the tests wait on:
// tools/sync_backend.ts)...
// `npm test` runs the op-test folders once more on every other backend of the table
// that is available here (tools/test_backends.ts), so every op test checks each backend
// against the same independently known values without duplicating test code.

import { BACKEND_NAMES, compileSync, type BackendName } from "../../src/compiler/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { runSync, startSyncBackend } from "../../tools/sync_backend.js";
import { evaluate as interpret, type EvaluateOptions } from "../../src/interpreter/evaluate.js";
import type { Computation } from "../../src/ir/computation.js";
import { liftConstants } from "../../src/check/lift_constants.js";
import type { Literal } from "../../src/types/literal.js";

export type TestBackend = BackendName;

function selected(): TestBackend {
  const name = process.env["XLATS_TEST_BACKEND"] ?? "interpreter";
  if (!(BACKEND_NAMES as readonly string[]).includes(name)) throw new Error(`XLATS_TEST_BACKEND must be one of ${BACKEND_NAMES.join(", ")}, not "${name}"`);
  return name as TestBackend;
}

/** The backend this test process runs on. */
export const testBackend: TestBackend = selected();

/** Whether the tests run on a compiled backend (for backend-aware tolerances). */
export const compiled = testBackend !== "interpreter";

/** A backend without compileSync (webgpu) runs in a worker that `evaluate` waits on. */
const asyncOnly = compiled && BACKENDS[testBackend].compileSync === undefined;
if (asyncOnly) await startSyncBackend();

/**
 * `evaluate` of src/index.js, on the selected backend. Most op tests evaluate programs
 * of constants only, which the compiler would fold with the interpreter's kernels: on a
 * compiled backend the entry's constants are passed as arguments (lift_constants.ts), so
 * the generated kernels compute what the test checks.
 */
export function evaluate(computation: Computation, args: readonly Literal[], options: EvaluateOptions = {}): Literal {
  if (!compiled) return interpret(computation, args, options);
  const lifted = liftConstants(computation, args);
  if (asyncOnly) return runSync(testBackend, lifted.computation, lifted.args, options);
  const executable = compileSync(lifted.computation, { backend: testBackend });
  try {
    const result = executable.run(lifted.args, options);
    if (result instanceof Promise) throw new Error(`the ${testBackend} backend runs asynchronously: the synchronous op tests do not run on it`);
    return result;
  } finally {
    executable.delete();
  }
}
