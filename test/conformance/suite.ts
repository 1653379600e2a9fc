// StableHLO's interpreter tests (../shared/conformance/stablehlo/interpret) through the
// check runner on one backend, as a test: one file a backend (stablehlo*.test.ts), so
// that Node's test runner spreads them over its processes. Multi-device cases
// (interpreter.run_parallel) run on the runtime's worker threads. On a compiled backend
// the runner passes each case's constants as arguments (src/check/lift_constants.ts):
// the suite's programs are constants only, which the compiler would fold with the
// interpreter's kernels, so the run counts the kernels compiled and fails when too few
// are (folding come back). Prints the totals and every skip with its reason; fails on any
// failing case that is not in expected_failures.ts, and when docs/conformance.md states
// other totals.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { createClient } from "../../src/runtime/client.js";
import { runCheckTextAsync, type CheckCaseResult } from "../../src/check/runner.js";
import { BACKENDS, compile, compileManySync, type BackendName, type ExecutableOf } from "../../src/compiler/index.js";
import type { EvaluateOptions, Literal } from "../../src/index.js";
import type { Computation } from "../../src/ir/computation.js";
import { getBackend, registerBackend } from "../../src/runtime/backend_registry.js";
import { documentation } from "../support/docs.js";
import { expectedFailure } from "./expected_failures.js";

export const ROOT = join(process.cwd(), "..", "shared", "conformance", "stablehlo", "interpret");

/** Whether the suite is there to run. */
export const available = existsSync(ROOT);

/** The suite's .mlir files under `dir`, in order. */
export function mlirFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) out.push(...mlirFiles(p));
    else if (f.endsWith(".mlir")) out.push(p);
  }
  return out;
}

/**
 * Fewest kernels each compiled backend must compile over the suite's one-device cases:
 * about 0.9 of what each compiled on 2026-11-30 (wasm 366, native 367) and on 2026-12-01
 * (webgpu 355, with its integer products, 64-bit integers, their sorts, scatters and
 * reduce-windows, and bitcast-convert; 357 with the one-byte floats' arithmetic and f8
 * results; the GPU runs fewer ops).
 * Folded, every case compiles none.
 */
const MIN_KERNELS: Readonly<Record<Exclude<BackendName, "interpreter">, number>> = { wasm: 330, native: 330, webgpu: 321 };

/**
 * `backend` under another name whose one-device evaluate compiles as the backend's own
 * does and counts the kernels (run_parallel's programs run on a client of `backend`).
 * On a backend that builds several programs as one module (native: one C compiler run
 * for all, docs/backends.md, "Build time"), the programs asked for at once (the files
 * the suite runs side by side) are compiled together, each then run and deleted as it
 * would be alone; a batch that does not compile is compiled a program at a time, so
 * that each case gets its own error.
 */
function counting(backend: Exclude<BackendName, "interpreter">): { name: string; kernels: () => number; together: boolean } {
  const name = `${backend}-counted`;
  const entry = getBackend(backend);
  let kernels = 0;
  const together = BACKENDS[backend].compileManySync !== undefined;
  const run = async (executable: ExecutableOf<typeof backend>, args: readonly Literal[], options?: EvaluateOptions): Promise<Literal> => {
    kernels += executable.stats.kernels;
    try {
      return await executable.run(args, options);
    } finally {
      executable.delete();
    }
  };
  interface Pending { computation: Computation; args: readonly Literal[]; options?: EvaluateOptions; done: (result: Promise<Literal>) => void }
  let pending: Pending[] = [];
  const flush = (): void => {
    const batch = pending;
    pending = [];
    let executables: ExecutableOf<typeof backend>[] | undefined;
    try {
      executables = batch.length > 1 ? compileManySync(batch.map((p) => p.computation), { backend }) : undefined;
    } catch {
      executables = undefined;
    }
    batch.forEach((p, i) => p.done(executables !== undefined ? run(executables[i]!, p.args, p.options) : compile(p.computation, { backend }).then((e) => run(e, p.args, p.options))));
  };
  registerBackend({
    host: { ...entry.host, name },
    device: { ...entry.device, name },
    evaluate: (computation, args, options) => {
      if (!together) return compile(computation, { backend }).then((e) => run(e, args, options));
      if (pending.length === 0) setImmediate(flush);
      return new Promise<Literal>((resolve) => pending.push({ computation, args, options, done: resolve }));
    },
  });
  return { name, kernels: () => kernels, together };
}

/** How many of the suite's files run side by side where their programs compile together (`counting`): about 40 programs a module. */
const FILES_AT_ONCE = 40;

/** The test of the whole suite on `backend`: skipped where the data or the backend is missing. */
export function conformanceTest(backend: BackendName): void {
  const usable = BACKENDS[backend].available();
  const skip = !available ? "conformance data not found" : usable !== true ? `the ${backend} backend is not available here: ${usable}` : false;
  test(`conformance (${backend}): every case passes or is an expected failure`, { skip }, async () => {
    const counted = backend === "interpreter" ? undefined : counting(backend);
    const all: CheckCaseResult[] = [];
    // One client for the whole suite: run_parallel's processes run on its devices.
    const client = await createClient({ deviceCount: 8, backend });
    const check = (file: string): Promise<CheckCaseResult[]> => runCheckTextAsync(readFileSync(file, "utf8"), relative(ROOT, file), { client, backend: counted?.name ?? backend });
    try {
      // Files whose cases run on the client's devices (run_parallel) run one at a time, as
      // before; where programs compile together, the others FILES_AT_ONCE at a time, each
      // file's cases in turn. The results stay in the files' order.
      const byFile: CheckCaseResult[][] = [];
      const files = mlirFiles();
      const alone = (file: string): boolean => !counted?.together || readFileSync(file, "utf8").includes("interpreter.run_parallel");
      for (let i = 0; i < files.length;) {
        if (alone(files[i]!)) {
          byFile[i] = await check(files[i]!);
          i++;
          continue;
        }
        const group: number[] = [];
        while (i < files.length && group.length < FILES_AT_ONCE && !alone(files[i]!)) group.push(i++);
        await Promise.all(group.map(async (k) => { byFile[k] = await check(files[k]!); }));
      }
      all.push(...byFile.flat());
    } finally {
      await client.close();
    }
    const count = (pred: (r: CheckCaseResult) => boolean): number => all.filter(pred).length;
    const passed = count((r) => r.status === "pass");
    const skipped = count((r) => r.status === "skip");
    const failed = count((r) => r.status === "fail");
    const parseFailed = count((r) => r.phase === "parse");
    const totals = `conformance (${backend}): ${passed} passed, ${failed} failed, ${skipped} skipped`;
    console.log(counted === undefined ? totals : `${totals}; ${counted.kernels()} kernels compiled for the one-device cases`);
    console.log(`conformance: ${all.length - skipped - parseFailed} of ${all.length - skipped} cases parsed and imported; ` +
      `${parseFailed} parse/import failures; ` +
      `${count((r) => r.phase === "evaluate")} evaluation errors; ${count((r) => r.phase === "check")} check failures`);
    for (const r of all.filter((r) => r.status === "skip")) console.log(`conformance: skipped ${r.name}: ${r.message}`);
    const unexpected = all.filter((r) => r.status === "fail" && expectedFailure(backend, r.name) === undefined);
    assert.deepEqual(unexpected.map((r) => `${r.name}: ${r.message}`), []);
    const fixed = all.filter((r) => r.status === "pass" && expectedFailure(backend, r.name) !== undefined).map((r) => r.name);
    assert.deepEqual(fixed, [], "these cases pass now: remove them from expected_failures.ts");
    if (counted !== undefined) {
      const least = MIN_KERNELS[backend as Exclude<BackendName, "interpreter">];
      assert.ok(counted.kernels() >= least, `${counted.kernels()} kernels compiled on ${backend}, expected at least ${least}: are the constants folded again?`);
    }
    assert.ok(documentation().includes(totals), `docs/conformance.md must state the conformance totals: "${totals}"`);
  });
}
