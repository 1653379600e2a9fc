// The backend the op tests run on, chosen by the environment: XLATS_TEST_BACKEND= a
// backend of the table (src/compiler/backends.ts): "interpreter" (the default: the
// executable specification), "wasm" (the compiler: passes, fusion, WebAssembly
// kernels), "native" (the same with C kernels built by the machine's C compiler),
// "webgpu" (compiled and run asynchronously, in a worker the tests wait on:
// tools/sync_backend.ts)...
// `npm test` runs the op-test folders once more on every other backend of the table
// that is available here (tools/test_plan.ts), so every op test checks each backend
// against the same independently known values without duplicating test code.

import { BACKEND_NAMES, compileManySync, compileSync, type BackendName, type ExecutableOf } from "../../src/compiler/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { runSync, startSyncBackend } from "../../tools/sync_backend.js";
import { evaluate as interpret, type EvaluateOptions } from "../../src/interpreter/evaluate.js";
import type { Computation } from "../../src/ir/computation.js";
import { XlaBuilder, parameter, type XlaOp } from "../../src/index.js";
import assert from "node:assert/strict";
import { liftConstants, type LiftedProgram } from "../../src/check/lift_constants.js";
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
    return runHere(executable, lifted.args, options);
  } finally {
    executable.delete();
  }
}

/** Runs a synchronously compiled executable, whose run must not be asynchronous. */
function runHere(executable: ExecutableOf<BackendName>, args: readonly Literal[], options: EvaluateOptions): Literal {
  const result = executable.run(args, options);
  if (result instanceof Promise) throw new Error(`the ${testBackend} backend runs asynchronously: the synchronous op tests do not run on it`);
  return result;
}

/**
 * About how many programs evaluateBatched compiles at once: on the native backend their
 * C kernels are one module, built by one compiler run whose start, prelude and link (most
 * of a small program's build) are paid once for the lot (docs/backends.md, "Build time").
 */
export const BATCH_PROGRAMS = 50;

/**
 * Programs evaluated as `evaluate` evaluates them, but compiled together first
 * (compileManySync); `evaluate(i, args)` runs program i. Delete it when done.
 */
class EvaluationBatch {
  /** Each program with its constants made parameters (their values appended to the arguments at each run). */
  private readonly lifted: readonly LiftedProgram[];
  private readonly executables: readonly ExecutableOf<BackendName>[];

  constructor(private readonly computations: readonly Computation[]) {
    const together = compiled && !asyncOnly;
    this.lifted = together ? computations.map((c) => liftConstants(c, [])) : [];
    this.executables = together ? compileManySync(this.lifted.map((l) => l.computation), { backend: testBackend }) : [];
  }

  evaluate(i: number, args: readonly Literal[], options: EvaluateOptions = {}): Literal {
    const executable = this.executables[i];
    if (executable === undefined) return evaluate(this.computations[i]!, args, options);
    return runHere(executable, [...args, ...this.lifted[i]!.args], options);
  }

  delete(): void {
    for (const e of this.executables) e.delete();
  }
}

/**
 * Checks cases whose programs are all built before any runs: `programs(c)` are case c's
 * programs; `check(c, evaluate)` runs them (`evaluate(i, args)`: its program i, as
 * `evaluate` would) and asserts. The cases' programs are compiled a batch of about
 * BATCH_PROGRAMS at a time, each batch's cases checked in order before the next is
 * compiled.
 */
export function evaluateBatched<C>(
  cases: readonly C[], programs: (c: C) => readonly Computation[],
  check: (c: C, evaluate: (i: number, args: readonly Literal[], options?: EvaluateOptions) => Literal) => void,
): void {
  for (let first = 0; first < cases.length;) {
    const chunk: { c: C; at: number; count: number }[] = [];
    const all: Computation[] = [];
    while (first < cases.length && (chunk.length === 0 || all.length < BATCH_PROGRAMS)) {
      const c = cases[first++]!;
      const own = programs(c);
      chunk.push({ c, at: all.length, count: own.length });
      all.push(...own);
    }
    const batch = new EvaluationBatch(all);
    try {
      for (const { c, at, count } of chunk) {
        check(c, (i, args, options) => {
          if (!(i >= 0 && i < count)) throw new RangeError(`program ${i} of a case of ${count}`);
          return batch.evaluate(at + i, args, options);
        });
      }
    } finally {
      batch.delete();
    }
  }
}

/**
 * Each case's program (`programOf(c)`: `build(params...)`, a parameter for each of `args`)
 * built first, then all of them evaluated on their `args`, compiled a batch at a time
 * (evaluateBatched); every result's shape must be the root's inferred one, and
 * `check(c, result)` asserts the rest, in order.
 */
export function runEach<C>(
  cases: readonly C[], programOf: (c: C) => { build: (...params: XlaOp[]) => XlaOp; args: readonly Literal[] }, check: (c: C, result: Literal) => void,
): void {
  const built = cases.map((c) => {
    const { build, args } = programOf(c);
    const b = new XlaBuilder("test");
    const root = build(...args.map((a, i) => parameter(b, i, a.shape)));
    return { c, args, root, computation: b.build(root) };
  });
  evaluateBatched(built, (b) => [b.computation], (b, evaluate) => {
    const result = evaluate(0, b.args);
    assert.deepEqual(result.shape, b.root.shape, "the result's shape must be the inferred one");
    check(b.c, result);
  });
}
