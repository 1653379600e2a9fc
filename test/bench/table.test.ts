// The bench's tables (bench/harness/table.ts) on made-up cells: ratios with two decimals, so
// that one just short of a target never prints as the target; rounds' medians and ranges.

import { test } from "node:test";
import assert from "node:assert/strict";
import { buildTable, buildTargets, fmtRatio, type Rounds } from "../../bench/harness/table.js";
import { planWorkloads } from "../../bench/harness/plan.js";
import type { CellResult } from "../../bench/harness/measure.js";
import { describe } from "../../bench/workloads/specs.js";

const plan = planWorkloads(false).filter((p) => p.kind === "mlp-infer");
const mlp = plan[0]!;

/** A whole program's cell at `stepsPerSecond` (its figure: steps/s of the full size). */
function cell(name: string, threads: number, stepsPerSecond: number): CellResult {
  return { runner: { name, threads }, kind: mlp.kind, label: describe(mlp.full),
    outcome: { status: "ok", seconds: 1 / stepsPerSecond, runs: 10, workload: mlp.full } };
}

test("fmtRatio: two decimals from 0.1 up (0.996 is 1.00, not 1.0; 1.19 stays 1.19), two significant digits below", () => {
  assert.equal(fmtRatio(0.996), "1.00");
  assert.equal(fmtRatio(0.99), "0.99");
  assert.equal(fmtRatio(1.19), "1.19");
  assert.equal(fmtRatio(1.2), "1.20");
  assert.equal(fmtRatio(26.3), "26.30");
  assert.equal(fmtRatio(0.089), "0.089");
  assert.equal(fmtRatio(0.1), "0.10");
});

test("bench table, one round: figures as before, ratios with two decimals, a 1.19 against the 1.2 target missed", () => {
  const rounds: Rounds = [[cell("xlats-native", 1, 119), cell("ort-node", 1, 100)]];
  const { markdown, failures } = buildTable(plan, [1], rounds);
  assert.deepEqual(failures, []);
  const row = markdown.split("\n").find((l) => l.startsWith(`| ${describe(mlp.full)} |`));
  assert.ok(row !== undefined, markdown);
  // Figures keep three significant digits; the ratio two decimals.
  assert.match(row, /\| 119 \| 100 \| 1\.19× \|/);
  const targets = buildTargets(plan, rounds);
  assert.match(targets, /\| mlp infer vs ort-node, 1 thread \| ≥ 1\.2× \| 1\.19× \| no \|/);
});

test("bench table, rounds: each ratio within its round, the median with the min–max, targets with the rounds that held", () => {
  // Round 1: 0.996 (prints 1.00, not 1.0), round 2: 1.25, round 3: 1.21.
  const rounds: Rounds = [
    [cell("xlats-native", 1, 99.6), cell("ort-node", 1, 100)],
    [cell("ort-node", 1, 80), cell("xlats-native", 1, 100)],
    [cell("xlats-native", 1, 121), cell("ort-node", 1, 100)],
  ];
  const { markdown } = buildTable(plan, [1], rounds);
  const row = markdown.split("\n").find((l) => l.startsWith(`| ${describe(mlp.full)} |`))!;
  assert.match(row, /\| 1\.21× \(1\.00–1\.25\) \|/);
  assert.match(buildTargets(plan, rounds), /\| mlp infer vs ort-node, 1 thread \| ≥ 1\.2× \| 1\.21× \(1\.00–1\.25\) \| yes \(2 of 3 rounds\) \|/);
});
