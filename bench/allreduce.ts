// All-reduce (sum, f32) of 1 MiB and 64 MiB over 2, 4 and 8 worker devices, beside a
// plain memory copy (TypedArray.set) of the same size measured in the same run.
//
// Each configuration is warmed up, then timed several times; the table shows the
// median (and the fastest) run. GB/s is the bytes each device contributes over the
// median time of one all-reduce (the usual "algorithm bandwidth"); the ratio compares
// it with the copy's GB/s. Arguments stay on their devices across runs (each execution
// reads them in place). Results are used as a training loop would use them, in two ways:
// "deleted" frees each execution's result buffers (DeviceBuffer.delete), so the next
// execution reuses their memory; "dropped" just lets them go, so their memory comes back
// only when the garbage collector gets to them and executions mostly get fresh memory.
//
//   npm run bench:allreduce [-- --quick]   (or: npm run build && node dist/bench/allreduce.js [--quick])

import { availableParallelism } from "node:os";
import { allReduce, arrayShape, Literal, parameter, scalarReducer, XlaBuilder } from "../src/index.js";
import { createClient } from "../src/runtime/index.js";
import { probeArgs } from "./harness/probe_args.js";

const { "--quick": quick } = probeArgs("allreduce", { options: { "--quick": { kind: "flag", help: "one size (1 MiB), fewer runs" } } });
const SIZES = quick ? [1 << 20] : [1 << 20, 64 << 20];
const DEVICES = [2, 4, 8];
const WARMUP = 2;

/** Timed runs of one configuration: more for small sizes, within a time budget. */
function runsFor(bytes: number): { min: number; max: number; budgetS: number } {
  if (quick) return { min: 5, max: 50, budgetS: 0.3 };
  return bytes >= 16 << 20 ? { min: 7, max: 15, budgetS: 3 } : { min: 15, max: 200, budgetS: 1 };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Seconds of each timed run of `fn` after the warm-up runs. */
async function timeRuns(fn: () => unknown, bytes: number): Promise<number[]> {
  const { min, max, budgetS } = runsFor(bytes);
  for (let i = 0; i < WARMUP; i++) await fn();
  const times: number[] = [];
  const start = performance.now();
  while (times.length < min || (times.length < max && performance.now() - start < budgetS * 1000)) {
    const t0 = performance.now();
    await fn();
    times.push((performance.now() - t0) / 1000);
  }
  return times;
}

const gbps = (bytes: number, s: number): string => (bytes / s / 1e9).toFixed(2);
const label = (bytes: number): string => (bytes >= 1 << 20 ? `${bytes >> 20} MiB` : `${bytes >> 10} KiB`);

const client = await createClient({ deviceCount: Math.max(...DEVICES) });
console.log(`all-reduce sum f32 on worker devices (${availableParallelism()} cores, node ${process.version})`);
console.log("size     devices  results  runs  median ms    min ms   GB/s  copy GB/s   ratio");
for (const bytes of SIZES) {
  const n = bytes / 4;
  const src = new Float32Array(n).fill(1.5);
  const dst = new Float32Array(n);
  const copyS = median(await timeRuns(() => dst.set(src), bytes));
  const b = new XlaBuilder("allreduce");
  const x = parameter(b, 0, arrayShape("f32", [n]));
  const computation = b.build(allReduce(x, scalarReducer(b, "add", "f32")));
  for (const devices of DEVICES) {
    const exe = await client.compile(computation, { replicas: devices });
    // Device d holds d + 1 everywhere; the sum is known in closed form.
    const args = await Promise.all(Array.from({ length: devices }, async (_, d) =>
      [await client.bufferFromLiteral(Literal.fromStorage(arrayShape("f32", [n]), new Float32Array(n).fill(d + 1)), client.devices[d])]));
    const expected = (devices * (devices + 1)) / 2;
    for (const result of await client.execute(exe, args)) {
      const data = (await result.toLiteral()).data as Float32Array;
      if (data[0] !== expected || data[n >> 1] !== expected || data[n - 1] !== expected) {
        throw new Error(`wrong all-reduce result on ${result.device}: ${data[0]}, expected ${expected}`);
      }
    }
    for (const results of ["deleted", "dropped"] as const) {
      const times = await timeRuns(async () => {
        const out = await client.execute(exe, args);
        if (results === "deleted") for (const r of out) r.delete();
      }, bytes);
      const s = median(times);
      console.log(
        `${label(bytes).padEnd(8)} ${String(devices).padEnd(8)} ${results.padEnd(7)} ${String(times.length).padStart(5)} ` +
        `${(s * 1e3).toFixed(2).padStart(10)} ${(Math.min(...times) * 1e3).toFixed(2).padStart(9)} ` +
        `${gbps(bytes, s).padStart(6)} ${gbps(bytes, copyS).padStart(10)} ${(copyS / s).toFixed(4).padStart(7)}`,
      );
    }
  }
}
await client.close();
