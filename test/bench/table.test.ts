// The bench's tables (bench/harness/table.ts) on made-up cells: ratios with two decimals, so
// that one just short of a target never prints as the target; rounds' medians and ranges.

import { test } from "node:test";
import assert from "node:assert/strict";
import { buildGpuCeiling, buildTable, buildTargets, evaluateTargets, fmtRatio, type Rounds } from "../../bench/harness/table.js";
import { planGpuWorkloads, planWorkloads } from "../../bench/harness/plan.js";
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

test("GPU plan and targets: the 4096 matmul and the decoder first, the matmul judged on its size and as a share of the adapter's peak", () => {
  const gpuPlan = planGpuWorkloads(false);
  assert.deepEqual(gpuPlan.slice(0, 5).map((p) => describe(p.full)).map((l) => l.split(" ")[0]), ["matmul", "gpt2", "gpt2", "encoder", "softmax"]);
  const m4096 = gpuPlan[0]!;
  assert.equal(describe(m4096.full), "matmul 4096");
  // 4096³·2 FLOPs: 1 s a run is 137.4 GFLOP/s.
  const run = (name: string, seconds: number): CellResult =>
    ({ runner: { name, threads: 1 }, kind: "matmul", label: "matmul 4096", outcome: { status: "ok", seconds, runs: 3, workload: m4096.full } });
  const rounds: Rounds = [[run("xlats-webgpu", 1), run("jax-webgpu", 1.25)]];
  const targets = evaluateTargets(gpuPlan, rounds, 200);
  const byName = new Map(targets.map((t) => [t.name, t]));
  // The largest matmul by its size is judged (4096, the first of the rows; the old rule took the last matmul row).
  assert.equal(byName.get("matmul 4096 vs jax-webgpu")!.ratio, 1.25);
  const share = targets.find((t) => t.name.startsWith("matmul 4096, share of the adapter's f32 FMA peak (200 GFLOP/s)"))!;
  assert.ok(Math.abs(share.ratio! - 137.438953472 / 200) < 1e-9, String(share.ratio));
  assert.match(buildTargets(gpuPlan, rounds, 200), /\| matmul 4096, share of the adapter's f32 FMA peak \(200 GFLOP\/s\) \| ≥ 0\.5× \| 0\.69× \| yes \|/);
  assert.ok(!targets.some((t) => t.backend !== "xlats-webgpu"), "only xlats-webgpu's targets where only GPU runners ran");
  // A GPU sitting's table carries none of the CPU libraries' notes.
  const { markdown } = buildTable(gpuPlan, [1], rounds);
  assert.ok(!/Threads in Node|xlats-interp runs reduced|native compile/.test(markdown), markdown);
  assert.match(buildGpuCeiling(gpuPlan, rounds, 200), /\| matmul 4096 \| 137 \(69%\) \| 110 \(55%\) \|/);
});
