// One SGD training step of a two-layer MLP (test/sdy/partition/mlp_step.ts: forward,
// loss, hand-written backward, update), partitioned by Shardy onto 1, 2 and 4 worker
// devices of the runtime (wasm backend), beside the same program without shardings on
// one device. Meshes: 1 device ["data"=1]; 2 devices ["data"=2] (data parallel); 4
// devices ["data"=2, "model"=2] (data and model parallel). For each: steps per second
// (median of timed steps after warm-up) and the bytes the step's collectives send (per
// device and in all, from the partition report). Every configuration's results are
// checked against the unsharded step's first.
//
// Each step runs on the same arguments, kept on the devices (the updated weights are
// not fed back: a step's work does not depend on their values). Each configuration has
// a client of its own with as many worker devices as it uses.
//
//   npm run bench:sharded [-- --quick]   (or: npm run build && node dist/bench/sharded.js [--quick])

import { availableParallelism } from "node:os";
import { parseStableHlo, partition, partitionReport, splitArguments, assembleResults, type Literal, type PartitionedProgram } from "../src/index.js";
import { createClient, type Client } from "../src/runtime/index.js";
import { mlpArguments, mlpTrainingStep, type MlpMesh, type MlpSizes } from "../test/sdy/partition/mlp_step.js";
import { probeArgs } from "./harness/probe_args.js";

const { "--quick": quick } = probeArgs("sharded", { options: { "--quick": { kind: "flag", help: "small sizes, fewer runs" } } });
const SIZES: MlpSizes = quick ? { batch: 64, input: 32, hidden: 64, output: 8 } : { batch: 512, input: 256, hidden: 512, output: 32 };
const WARMUP = 3;
const MIN_RUNS = quick ? 5 : 10;
const BUDGET_S = quick ? 0.5 : 3;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Seconds of each timed step after the warm-up steps. */
async function timeSteps(step: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await step();
  const times: number[] = [];
  const start = performance.now();
  while (times.length < MIN_RUNS || performance.now() - start < BUDGET_S * 1000) {
    const t0 = performance.now();
    await step();
    times.push((performance.now() - t0) / 1000);
  }
  return times;
}

function maxRelativeError(got: readonly Literal[], want: readonly Literal[]): number {
  let worst = 0;
  got.forEach((g, i) => {
    const x = g.toNumbers();
    const y = want[i]!.toNumbers();
    const scale = y.reduce((m, v) => Math.max(m, Math.abs(v)), 1);
    x.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - y[k]!) / scale); });
  });
  return worst;
}

interface Row { readonly label: string; readonly devices: number; readonly stepsPerS: number; readonly ms: number; readonly perDevice: number; readonly total: number; readonly error: number }

/** The per-device program on `client`'s first devices: arguments split and placed once, then timed. */
async function shardedRow(client: Client, p: PartitionedProgram, args: readonly Literal[], want: readonly Literal[], label: string): Promise<Row> {
  const exe = await client.compile(p.entry, { partitions: p.deviceCount });
  const pieces = splitArguments(p, args);
  const buffers = await Promise.all(pieces.map((list, d) => Promise.all(list.map((l) => client.bufferFromLiteral(l, client.devices[d])))));
  const first = await client.execute(exe, buffers);
  const results = assembleResults(p, await Promise.all(first.map((b) => b.toLiteral())));
  for (const b of first) b.delete();
  const error = maxRelativeError(results, want);
  if (error > 1e-4) throw new Error(`${label}: the sharded step differs from the unsharded one by ${error}`);
  const times = await timeSteps(async () => {
    for (const b of await client.execute(exe, buffers)) b.delete();
  });
  exe.delete();
  const report = partitionReport(p, p.global.entry);
  const perDevice = Math.max(...report.bytesSentPerDevice);
  const total = report.bytesSentPerDevice.reduce((a, b) => a + b, 0);
  const s = median(times);
  return { label, devices: p.deviceCount, stepsPerS: 1 / s, ms: s * 1000, perDevice, total, error };
}

const args = mlpArguments(SIZES);
// The unsharded step on one device: the reference values and the baseline time.
const single = await createClient({ backend: "wasm", deviceCount: 1 });
let want: Literal[];
let plainS: number;
try {
  const plain = parseStableHlo(mlpTrainingStep(SIZES), "mlp.mlir").entry;
  const exe = await single.compile(plain);
  const buffers = await Promise.all(args.map((a) => single.bufferFromLiteral(a, single.devices[0])));
  const [out] = await single.execute(exe, [buffers]);
  const outLiteral = await out!.toLiteral();
  out!.delete();
  want = outLiteral.shape.kind === "tuple" ? [...outLiteral.elements] : [outLiteral];
  plainS = median(await timeSteps(async () => {
    for (const b of await single.execute(exe, [buffers])) b.delete();
  }));
  exe.delete();
} finally {
  await single.close();
}
const rows: Row[] = [{ label: "unsharded", devices: 1, stepsPerS: 1 / plainS, ms: plainS * 1000, perDevice: 0, total: 0, error: 0 }];
const meshes: [string, MlpMesh][] = [["data=1", { data: 1 }], ["data=2", { data: 2 }], ["data=2 model=2", { data: 2, model: 2 }]];
for (const [label, mesh] of meshes) {
  const p = partition(parseStableHlo(mlpTrainingStep(SIZES, mesh), "mlp.mlir"));
  const client = await createClient({ backend: "wasm", deviceCount: p.deviceCount });
  try {
    rows.push(await shardedRow(client, p, args, want, label));
  } finally {
    await client.close();
  }
}
const { batch, input, hidden, output } = SIZES;
console.log(`MLP training step (batch ${batch}, ${input} -> ${hidden} -> ${output}, f32) on wasm worker devices (${availableParallelism()} cores, node ${process.version})`);
console.log("mesh              devices  steps/s   ms/step  vs unsharded  bytes sent/device  bytes sent (all)  max rel. error");
for (const r of rows) {
  console.log(`${r.label.padEnd(17)} ${String(r.devices).padStart(7)}  ${r.stepsPerS.toFixed(1).padStart(7)}  ${r.ms.toFixed(2).padStart(8)}  ` +
    `${(rows[0]!.ms / r.ms).toFixed(2).padStart(11)}x  ${String(r.perDevice).padStart(17)}  ${String(r.total).padStart(16)}  ${r.error.toExponential(1).padStart(14)}`);
}
