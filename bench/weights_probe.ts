// Weights as constants, as parameters marked as weights (compile's `weights`: packed once
// per device array) and as plain parameters (packed on every call), paired (not a test):
// the three xlats-native runners of one workload in one process, one thread, interleaved
// rounds of 3 runs timed in process CPU time (no peer's threads in the process to charge).
//   node dist/bench/weights_probe.js [only=mlp-infer|gpt2] [rounds=20]

import { createCompiledRunner, type XlatsWeights } from "./runners/xlats_compiled.js";
import { planWorkloads } from "./harness/plan.js";
import { setUpChecked } from "./harness/probe_setup.js";
import { describe, makeInputs } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

const { only, rounds } = probeArgs("weights_probe", {
  options: {
    only: { kind: "string", default: "mlp-infer", help: "the workload (mlp-infer, gpt2)" },
    rounds: { kind: "number", default: 20, min: 1, integer: true, help: "rounds" },
  },
});
const w = planWorkloads(false).map((p) => p.full).find((x) => x.kind === only && (x.kind !== "gpt2" || x.phase === "prefill"));
if (w === undefined) throw new Error(`no workload ${only} (mlp-infer or gpt2)`);
const inputs = makeInputs(w);
const variants: { mode: XlatsWeights; run: () => void; ms: number[] }[] = [];
for (const mode of ["constants", "marked parameters", "parameters"] as const) {
  const set = await setUpChecked(mode, createCompiledRunner("native", 1, mode), w, inputs);
  if (typeof set === "string") throw new Error(`${mode}: ${set}`);
  variants.push({ mode, run: () => void set.prepared.run(), ms: [] });
}
for (let r = 0; r < rounds; r++) {
  for (const v of variants) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 3; i++) v.run();
    const c = process.cpuUsage(c0);
    v.ms.push((c.user + c.system) / 3e3);
  }
}
console.log(`${describe(w)}: CPU ms a run, one thread, best and median of ${rounds} interleaved rounds of 3`);
for (const v of variants) {
  const s = [...v.ms].sort((a, b) => a - b);
  console.log(`  ${v.mode.padEnd(18)} ${s[0]!.toFixed(2).padStart(8)} ${s[s.length >> 1]!.toFixed(2).padStart(8)}`);
}
process.exit(0);
