// The compiled ragged dot against a plain dot of the same rows and FLOPs (not a test): a
// mixture-of-experts layer's lhs [rows, k] times rhs [groups, k, n] in `groups` equal
// groups of rows, and the dot [rows, k] x [k, n], both with their right operand a
// parameter (packed by each call), compiled for a CPU backend at one thread and run on
// arrays already in device memory (execute), timed
// in turn, round after round, in one process; each figure is the median process CPU
// time of a run (process.cpuUsage: on a loaded machine, the time it computed). The
// interpreter's ragged dot is timed once on `interpRows` rows of the same layer (its
// rate per multiply-add is what the comparison needs; the whole layer would take minutes).
//   node dist/bench/ragged_dot_probe.js [backend=native|wasm] [rows=2048] [k=768] [n=3072] [groups=8] [sizes=a,b,...] [rounds=7] [interpRows=16]

import { arrayShape, dot, evaluate, Literal, parameter, raggedDot, XlaBuilder, type Computation } from "../src/index.js";
import { compileSync } from "../src/compiler/index.js";
import { probeArgs } from "./harness/probe_args.js";
import { elementCount } from "../src/types/shape.js";

const { backend, rows, k, n, groups, rounds, interpRows, sizes: sizesGiven } = probeArgs("ragged_dot_probe", {
  options: {
    backend: { kind: "string", default: "native", choices: ["native", "wasm"], help: "the backend" },
    rows: { kind: "number", default: 2048, min: 1, integer: true, help: "the layer's rows" },
    k: { kind: "number", default: 768, min: 1, integer: true, help: "the contracted dimension" },
    n: { kind: "number", default: 3072, min: 1, integer: true, help: "the output columns" },
    groups: { kind: "number", default: 8, min: 1, integer: true, help: "groups (experts)" },
    sizes: { kind: "list", of: "number", min: 0, help: "the groups' sizes for the whole layer (default: equal groups)" },
    rounds: { kind: "number", default: 7, min: 1, integer: true, help: "rounds" },
    interpRows: { kind: "number", default: 16, min: 1, integer: true, help: "rows the interpreter evaluates" },
  },
});

function ragged(m: number): Computation {
  const b = new XlaBuilder("ragged");
  const l = parameter(b, 0, arrayShape("f32", [m, k]));
  const r = parameter(b, 1, arrayShape("f32", [groups, k, n]));
  const g = parameter(b, 2, arrayShape("s32", [groups]));
  return b.build(raggedDot(l, r, g, { dotDimensionNumbers: { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [1], rhsContractingDimensions: [1] }, lhsRaggedDimensions: [0], rhsGroupDimensions: [0] }));
}
function plain(): Computation {
  const b = new XlaBuilder("plain");
  return b.build(dot(parameter(b, 0, arrayShape("f32", [rows, k])), parameter(b, 1, arrayShape("f32", [k, n]))));
}
const filled = (dims: number[], seed: number): Literal => {
  const count = elementCount(dims);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = (((i * 2654435761 + seed) >>> 0) % 2001) / 1000 - 1;
  return Literal.fromValues("f32", dims, data);
};
// `sizes=a,b,...`: the groups' sizes for the whole layer (default: equal groups).
const sizes = (m: number): Literal => Literal.fromValues("s32", [groups], sizesGiven !== undefined && m === rows ? sizesGiven
  : Array.from({ length: groups }, (_, i) => Math.floor(((i + 1) * m) / groups) - Math.floor((i * m) / groups)));
const cpuMs = (f: () => void): number => {
  const t0 = process.cpuUsage();
  f();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const flops = 2 * rows * k * n;
const raggedExe = compileSync(ragged(rows), { backend, threads: 1 });
const plainExe = compileSync(plain(), { backend, threads: 1 });
console.log(raggedExe.dump().split("\n").filter((l) => l.includes("kernel ") || l.includes("check ")).join("\n"));
console.log(plainExe.dump().split("\n").filter((l) => l.includes("kernel ")).join("\n"));
const lhs = filled([rows, k], 1), rhsGroups = filled([groups, k, n], 2), rhs = filled([k, n], 3), gs = sizes(rows);
// The operands placed in device memory once: a run's time is its steps', not the copies in and out.
const raggedArgs = [lhs, rhsGroups, gs].map((l) => raggedExe.device.bufferFromLiteral(l));
const plainArgs = [lhs, rhs].map((l) => plainExe.device.bufferFromLiteral(l));
const times = { ragged: [] as number[], plain: [] as number[] };
for (let r = 0; r < rounds + 1; r++) {
  const tr = cpuMs(() => { for (const x of raggedExe.execute(raggedArgs)) x.delete(); });
  const tp = cpuMs(() => { for (const x of plainExe.execute(plainArgs)) x.delete(); });
  // The first round warms up (module loads, first touches).
  if (r > 0) { times.ragged.push(tr); times.plain.push(tp); }
}
const gflops = (ms: number): string => (flops / ms / 1e6).toFixed(1);
console.log(`${backend}, 1 thread, ${rows}x${k}x${n}, ${groups} groups of ${sizesGiven !== undefined ? `${sizesGiven.join(",")} rows` : `${rows / groups} rows`}, ${rounds} rounds, median CPU ms (GFLOP/s):`);
console.log(`  ragged dot ${median(times.ragged).toFixed(1)} (${gflops(median(times.ragged))}), rounds ${times.ragged.map((t) => t.toFixed(0)).join(" ")}`);
console.log(`  plain dot  ${median(times.plain).toFixed(1)} (${gflops(median(times.plain))}), rounds ${times.plain.map((t) => t.toFixed(0)).join(" ")}`);
if (interpRows > 0) {
  const c = ragged(interpRows);
  const args = [filled([interpRows, k], 1), rhsGroups, sizes(interpRows)];
  const ms = cpuMs(() => evaluate(c, args));
  const rate = (2 * interpRows * k * n) / ms / 1e6;
  console.log(`  interpreter on ${interpRows} rows: ${ms.toFixed(0)} ms CPU (${rate.toFixed(3)} GFLOP/s; the whole layer at that rate: ${(flops / rate / 1e9).toFixed(0)} s)`);
}
raggedExe.delete();
plainExe.delete();
