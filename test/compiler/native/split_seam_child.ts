// Run by split_trials.test.ts in a fresh process, which loads no glue but the one built
// with the split trials' test seam (glueModuleSource({ testSeam: true }); glue.ts's
// SEAM_ON): it scripts, call by call, whether the pool's thread helps a split call and
// what a trial's clock reads, and logs what the glue decided. A kernel that adds one to
// a counter per unit it runs, costly enough by its cost units to be measured (between
// MIN_PARALLEL_COST and ALWAYS_PARALLEL_COST), is called through `run` (one kernel over its
// extent) and through `runCalls` (a row group of it in blocks, split as one call), with
// and without a balanced split (the kernel's grain); each scenario on its own table entry,
// so on split timings of its own. Prints, per scenario, path and kernel, the seam's log
// and the first call after which some counter was not its number of calls (-1: none; a
// unit missed or run twice).

import { glueModuleSource } from "../../../src/compiler/native/glue.js";
import { buildGlueModuleSync, buildModuleSync, loadModule, nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { NativeModule, nativeModuleParts } from "../../../src/compiler/native/build.js";
import type { NativeKernel } from "../../../src/compiler/native/kernel.js";

/** Per measured call: [mode (0: as it comes, 1: the pool's thread first, 2: never), alone ns, split ns]. */
export type SeamScript = readonly (readonly [number, number, number])[];
export interface SeamRun { scenario: string; path: "run" | "group"; balanced: boolean; log: number[][]; badAfter: number }

const t = nativeToolchain();
if (typeof t === "string") throw new Error(t);
// No scenarios when run without an argument (`node --test dist/test/` runs every file under test/ too).
const scenarios = JSON.parse(process.argv[2] ?? "{}") as Record<string, SeamScript>;
const units = 1024;

const counter = (balanced: boolean): NativeKernel => {
  const symbol = `xk_test_count_units${balanced ? "_balanced" : ""}`;
  return {
    name: symbol,
    c: { symbol, source: `static void ${symbol}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {\n  for (int64_t u = begin; u < end; u++) ((uint32_t *)(mem + args[0]))[u] += 1;\n}` },
    operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: units, costPerUnit: 1024,
    ...(balanced ? { balance: { grain: 64, cutsGrain: true, alwaysSplits: false } } : {}),
  };
};

const cases = Object.keys(scenarios).flatMap((scenario) => (["run", "group"] as const).flatMap((path) => [false, true].map((balanced) => ({ scenario, path, balanced }))));
const kernels = cases.map((c) => ({ kernel: counter(c.balanced), bufferBytes: [units * 4] }));
const seamGlue = buildGlueModuleSync(t, glueModuleSource({ testSeam: true }));
const parts = nativeModuleParts(kernels);
const built = { ...buildModuleSync(t, parts.kernels, "split seam", parts.glue), glue: seamGlue.path };
// The seam's exports, from the same library the program's module runs with (Node loads it once per process).
const holder = { exports: {} as { seam(script: Float64Array): void; seamLog(): Float64Array } };
process.dlopen(holder, seamGlue.path);
const module = new NativeModule(loadModule(built), kernels, built, "split seam");

const memory = new WebAssembly.Memory({ initial: 1 });
const at = 1024;
const out: SeamRun[] = [];
cases.forEach((c, k) => {
  const script = scenarios[c.scenario]!;
  const counts = new Uint32Array(memory.buffer, at, units);
  counts.fill(0);
  // A row group of the kernel in four blocks: split as one call over the pool's two threads.
  const prepared = module.prepareCalls([{ rows: units, block: units / 4, members: [{ kernel: k, timeSlot: 0, pointers: [at] }] }], { memory, threads: 2, scratchOffsets: [] });
  holder.exports.seam(Float64Array.from(script.flat()));
  let badAfter = -1;
  for (let i = 0; i < script.length; i++) {
    if (c.path === "run") module.run(k, memory, new Uint32Array([at]), 0, units, 2);
    else prepared.run();
    if (badAfter < 0 && !counts.every((x) => x === i + 1)) badAfter = i;
  }
  const flat = holder.exports.seamLog();
  const log = Array.from({ length: flat.length / 4 }, (_, i) => [...flat.subarray(4 * i, 4 * i + 4)]);
  out.push({ ...c, log, badAfter });
});
process.stdout.write(JSON.stringify(out));
