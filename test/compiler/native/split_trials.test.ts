// The native pool's split trials (glue.ts, MIN_PARALLEL_COST): a kernel whose cost lies
// between MIN_PARALLEL_COST and ALWAYS_PARALLEL_COST times its first calls alone and
// split, and a split trial counts only where the pool's thread ran some of the call;
// until SPLIT_TRIALS split trials have counted, every SPLIT_UNSEEN_RETRY-th call tries the
// split again. Whether the pool's thread comes in time and what the clock reads are the
// machine's, so these tests run in a child process on a glue built with the test seam
// (glue.ts's SEAM_ON), which scripts both per call and logs what the glue decided.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { glueModuleSource, SPLIT_RETRY_CALLS, SPLIT_TRIALS, SPLIT_UNSEEN_RETRY } from "../../../src/compiler/native/glue.js";
import { needsCompiler } from "./native_support.js";
import type { SeamRun, SeamScript } from "./split_seam_child.js";

const ALONE = 100_000;
const script = (calls: number, step: (i: number) => readonly [number, number, number]): SeamScript => Array.from({ length: calls }, (_, i) => step(i));
/** Log fields: [trial (-1: none, 0: alone, 1: split), parts decided, counted (1/0), split trials counted before]. */
type Entry = readonly [number, number, number, number];

function runScenarios(scenarios: Record<string, SeamScript>): SeamRun[] {
  const child = fileURLToPath(new URL("./split_seam_child.js", import.meta.url));
  const r = spawnSync(process.execPath, [child, JSON.stringify(scenarios)], { encoding: "utf8", timeout: 300_000, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as SeamRun[];
}

/** Checks one run's log against `want(i)` (the entry call i must have), and that every call ran every unit once. */
function check(run: SeamRun, calls: number, want: (i: number) => Entry): void {
  const where = `${run.scenario}, ${run.path}${run.balanced ? ", balanced" : ""}`;
  assert.equal(run.badAfter, -1, `${where}: after call ${run.badAfter} some unit had not run once a call`);
  assert.equal(run.log.length, calls, `${where}: ${run.log.length} calls measured of ${calls}`);
  run.log.forEach((got, i) => assert.deepEqual(got, [...want(i)], `${where}: call ${i}`));
}

test("native pool: the split trials' test seam is compiled into a test's glue only", () => {
  assert.ok(!glueModuleSource().includes("xk_seam"), "the glue programs run with has the seam");
  assert.ok(glueModuleSource({ testSeam: true }).includes("xk_seam_took"));
});

test("native pool: split trials the pool's thread never helped count for nothing, and the split is tried again every SPLIT_UNSEEN_RETRY calls", (t) => {
  if (!needsCompiler(t)) return;
  // The pool's thread never runs a part (mode 2), and the clock reads a split ten times
  // faster than alone: counted, such trials would split every later call.
  const calls = 5 * SPLIT_UNSEEN_RETRY + 3;
  const runs = runScenarios({ never: script(calls, () => [2, ALONE, ALONE / 10]) });
  assert.equal(runs.length, 4);
  for (const run of runs) {
    check(run, calls, (i) => {
      if (i < 2 * SPLIT_TRIALS) return i % 2 === 0 ? [0, 1, 1, 0] : [1, 2, 0, 0];
      return i % SPLIT_UNSEEN_RETRY === 0 ? [1, 2, 0, 0] : [-1, 1, 0, 0];
    });
  }
});

test("native pool: the split is tried until SPLIT_TRIALS split trials have counted, then decided by the best of each, and measured again every SPLIT_RETRY_CALLS calls", (t) => {
  if (!needsCompiler(t)) return;
  // The scenario as written for four trials: the pool's thread misses the first two split
  // trials (calls 1 and 3), comes for the next two, which read slow (a loaded moment,
  // 1.5 x alone), and for every later one, which read fast (half of alone). So after the
  // first 2 × SPLIT_TRIALS calls two split trials have counted and the split looks slower:
  // the calls stay alone, but the split is tried again (calls 16 and 32) until four have
  // counted; its second counted time is the best, and from call 17 on every call splits.
  // Decided after one or two counted split trials (the rule until session 49 stopped at
  // one), the kernel would stay alone for good; one counted without the pool's thread, or
  // retried past four, changes the trials the log shows.
  assert.equal(SPLIT_TRIALS, 4, "the scenario below is written for four split trials");
  const calls = SPLIT_RETRY_CALLS + 2 * SPLIT_TRIALS + 4;
  const late = script(calls, (i) => [i === 1 || i === 3 ? 2 : 1, ALONE, i === 5 || i === 7 ? 1.5 * ALONE : ALONE / 2]);
  const runs = runScenarios({ late });
  assert.equal(runs.length, 4);
  const retries = [SPLIT_UNSEEN_RETRY, 2 * SPLIT_UNSEEN_RETRY];
  for (const run of runs) {
    check(run, calls, (i) => {
      const phase = i % SPLIT_RETRY_CALLS, first = i < SPLIT_RETRY_CALLS;
      if (phase < 2 * SPLIT_TRIALS) {
        // After the reset at SPLIT_RETRY_CALLS every trial counts: the pool's thread comes.
        const counted = phase % 2 === 0 || !first || phase >= 4 ? 1 : 0;
        const before = first ? (phase > 5 ? 1 : 0) : Math.floor(phase / 2);
        return phase % 2 === 0 ? [0, 1, 1, before] : [1, 2, counted, before];
      }
      if (!first) return [-1, 2, 0, SPLIT_TRIALS];
      const retry = retries.indexOf(i);
      if (retry >= 0) return [1, 2, 1, 2 + retry];
      // Between the trials and the first retry the split's best (1.5 x alone) loses.
      return [-1, i < SPLIT_UNSEEN_RETRY ? 1 : 2, 0, i < SPLIT_UNSEEN_RETRY ? 2 : i < 2 * SPLIT_UNSEEN_RETRY ? 3 : SPLIT_TRIALS];
    });
  }
});
