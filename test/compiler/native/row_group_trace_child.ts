// Run by native.test.ts in a fresh process with XLATS_POOL_TRACE set (the glue reads it
// once per process): softmax as a row group of its three kernels, with block buffers, in
// blocks of rows, costly enough to be split whenever two threads are asked for
// (ALWAYS_PARALLEL_COST), run three times over the pool's two threads and once on one.
// Prints the group's rows, block and cost, and whether every run at two threads gave
// one thread's bits; the glue prints each split group's timeline to stderr.

import { parseHlo } from "../../../src/text/hlo/index.js";
import { compile } from "../../../src/compiler/index.js";
import { Literal } from "../../../src/types/literal.js";
import { separateFusionsPipeline } from "../../support/pipelines.js";
import { rng } from "../../support/prng.js";
import { SOFTMAX } from "./native_support.js";

const [rows, cols] = [2500, 1024];
const softmax = parseHlo(SOFTMAX(rows, cols));
const next = rng(24);
const x = Literal.fromValues("f32", [rows, cols], Array.from({ length: rows * cols }, () => next() * 30 - 15));
const options = { backend: "native", passes: separateFusionsPipeline() } as const;
const one = await compile(softmax, { ...options, threads: 1 });
const two = await compile(softmax, { ...options, threads: 2 });
const group = two.program.steps[0]!;
if (group.kind !== "group") throw new Error(`no row group:\n${two.dump()}`);
const cost = group.steps.reduce((sum, s) => sum + rows * two.program.kernels[s.kernel]!.costPerUnit, 0);
const expected = one.run([x]).toNumbers();
let same = true;
for (let i = 0; i < 3; i++) {
  const got = two.run([x]).toNumbers();
  // Bits: NaN never occurs here, and -0 and 0 differ under Object.is.
  same &&= got.length === expected.length && got.every((v, j) => Object.is(v, expected[j]));
}
one.delete();
two.delete();
process.stdout.write(JSON.stringify({ rows, block: group.block, members: group.steps.length, cost, same }));
