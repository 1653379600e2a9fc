// Random programs (random_program.ts: elementwise chains, broadcasts, reductions, dots,
// slices, pads, concatenations over mixed types) compiled with compileSync and run, then
// compared with the interpreter, the specification, within what the ops each output
// depends on allow (tools/fuzz/compare_compiled.ts, shared with `npm run fuzz --
// --surface compiled`).
//
// A failing seed is replayed by its number (the message prints its HLO); each bug found
// this way has a minimized test in regressions.test.ts.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileManySync, compileSync } from "../../src/compiler/index.js";
import type { Executable } from "../../src/compiler/executable.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { HloModule } from "../../src/ir/computation.js";
import { printHlo } from "../../src/text/hlo/index.js";
import type { Literal } from "../../src/types/literal.js";
import { compareLeaf, cones, elementTypeOf, generatorFailures, type CompareTally } from "../../tools/fuzz/compare_compiled.js";
import { randomProgram, type RandomProgram, type RandomProgramOptions } from "./random_program.js";
import { BATCH_PROGRAMS, testBackend } from "../support/backend.js";
import { range } from "../../src/types/arrays.js";

/** The compiled backend under test: XLATS_TEST_BACKEND=native runs the same programs on the native backend. */
const backend = testBackend === "native" ? "native" : "wasm";

interface Tally extends CompareTally { kernels: number; interpreted: number }

/** Runs `seeds` random programs on both backends; returns the failures (seed, what, HLO). */
function differential(seeds: readonly number[], options: RandomProgramOptions, tally: Tally): string[] {
  const failures: string[] = [];
  // Compiled a batch at a time (compileManySync: on the native backend one C module, one
  // compiler run, for the batch), so that a cold cache does not pay a compiler start a program.
  for (let first = 0; first < seeds.length; first += BATCH_PROGRAMS) {
    const batch = seeds.slice(first, first + BATCH_PROGRAMS).map((seed) => ({ seed, ...randomProgram(seed, options) }));
    // A batch that does not compile is compiled again a program at a time, so that the failure names its seed.
    let compiled: (Executable | undefined)[];
    try {
      compiled = compileManySync(batch.map((b) => b.computation), { backend });
    } catch {
      compiled = batch.map(() => undefined);
    }
    try {
      for (let i = 0; i < batch.length; i++) compare(batch[i]!, compiled[i], failures, tally);
    } finally {
      for (const e of compiled) e?.delete();
    }
  }
  return failures;
}

/** Runs one random program (compiled already, or compiled here when `compiled` is undefined) and compares it with the interpreter's values. */
function compare({ seed, computation, args }: RandomProgram & { seed: number }, compiled: Executable | undefined, failures: string[], tally: Tally): void {
  const hlo = (): string => printHlo(new HloModule(`random_${seed}`, computation));
  const expected = evaluate(computation, args);
  let actual: Literal;
  try {
    const executable = compiled ?? compileSync(computation, { backend });
    tally.kernels += executable.stats.kernels;
    tally.interpreted += executable.stats.interpreted.length;
    const crashed = generatorFailures(executable);
    if (crashed.length > 0) failures.push(`seed ${seed}: ${crashed.join("; ")}\n${hlo()}`);
    try {
      actual = executable.run(args);
    } finally {
      if (compiled === undefined) executable.delete();
    }
  } catch (e) {
    failures.push(`seed ${seed}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}\n${hlo()}`);
    return;
  }
  const cone = cones(computation);
  const root = computation.root;
  const leaves = root.opcode === "tuple" ? root.operands : [root];
  const wants = root.opcode === "tuple" ? expected.elements : [expected];
  const gots = root.opcode === "tuple" ? actual.elements : [actual];
  for (let k = 0; k < leaves.length; k++) {
    const t = elementTypeOf(leaves[k]!);
    if (t === undefined) continue;
    const w = wants[k]!;
    const g = gots[k]!;
    if (g.shape.kind !== "array" || g.arrayShape.elementType !== t || g.dimensions.join() !== w.dimensions.join()) {
      failures.push(`seed ${seed}: output ${k} has shape ${JSON.stringify(g.shape)}\n${hlo()}`);
      break;
    }
    const diff = compareLeaf(t, cone.get(leaves[k]!)!, w.values(), g.values(), tally);
    if (diff !== undefined) {
      failures.push(`seed ${seed}: output ${k}: ${diff}\n${hlo()}`);
      break;
    }
  }
}


function check(seeds: readonly number[], options: RandomProgramOptions): void {
  const tally: Tally = { compared: 0, unbounded: 0, kernels: 0, interpreted: 0 };
  const failures = differential(seeds, options, tally);
  assert.deepEqual(failures, [], `${failures.length} of ${seeds.length} programs differ:\n${failures.join("\n\n")}`);
  // The comparison is not vacuous: the programs run generated kernels (not only the
  // interpreter's kernels on device memory), and nearly every output element is checked.
  console.log(`differential: ${seeds.length} programs, ${tally.kernels} kernels, ${tally.interpreted} interpreted steps, ` +
    `${tally.compared} elements compared, ${tally.unbounded} not (discontinuous after rounding)`);
  assert.ok(tally.kernels > 2 * seeds.length, `only ${tally.kernels} kernels in ${seeds.length} programs`);
  assert.ok(tally.compared > 10 * seeds.length, `only ${tally.compared} elements compared`);
  assert.ok(tally.unbounded <= 0.1 * (tally.compared + tally.unbounded), `${tally.unbounded} of ${tally.compared + tally.unbounded} elements unchecked`);
}

test("compiled equals interpreted on 400 random programs (mixed types, every default family)", () => {
  check(range(400, 1), {});
});

test("compiled equals interpreted on 150 larger random programs with random parameter layouts", () => {
  check(range(150, 10_001), { size: 30, maxElements: 96, layoutProbability: 0.4 });
});

test("compiled equals interpreted on 150 random programs with calls and batch norm", () => {
  check(range(150, 20_001), { families: ["elementwise", "broadcast", "shape", "reduce", "dot", "call", "batchNorm", "convert", "compare"] });
});

test("compiled equals interpreted on 100 random programs over larger arrays (vectorized loops and reductions)", () => {
  check(range(100, 30_001), { maxRank: 5, maxElements: 1024, size: 16 });
});
