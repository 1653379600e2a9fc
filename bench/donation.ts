// A decode-like step through a runtime client, its KV cache donated or not: each step
// writes one new row into the cache (dynamic_update_slice at the step's position) and
// the next step takes the result as its cache. Donated (ClientCompileOptions.donate),
// the row is written into the cache's own buffer on its device; not donated, every
// step gets a fresh result buffer and copies the whole cache into it, and the caller
// deletes the previous cache. Paired: the two executables alternate round by round in
// one process on one client. Reports, per backend and cache size, the best and median
// wall time of a step and the process's CPU time a step (process.cpuUsage: the device
// workers' threads included).
//
//   npm run bench:donation [-- --quick]   (or: npm run build && node dist/bench/donation.js [--quick])

import { constantR0, dynamicUpdateSlice, Literal, parameter, arrayShape, XlaBuilder, type Computation } from "../src/index.js";
import { createClient, type Client, type DeviceBuffer, type LoadedExecutable } from "../src/runtime/index.js";
import { probeArgs } from "./harness/probe_args.js";

const { "--quick": quick } = probeArgs("donation", { options: { "--quick": { kind: "flag", help: "fewer rounds, the 1024-row cache only" } } });
const ROUNDS = quick ? 5 : 15;
const STEPS = 16;
const WIDTH = 256;
const ROWS = quick ? [1024] : [1024, 8192];

function decodeStep(rows: number): Computation {
  const b = new XlaBuilder(`decode_${rows}`);
  const cache = parameter(b, 0, arrayShape("f32", [rows, WIDTH]), "cache");
  const row = parameter(b, 1, arrayShape("f32", [1, WIDTH]), "row");
  const pos = parameter(b, 2, arrayShape("s32", []), "pos");
  return b.build(dynamicUpdateSlice(cache, row, [pos, constantR0(b, "s32", 0)]));
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** STEPS decode steps from a fresh copy of the cache; ms a step, wall and CPU. */
async function round(client: Client, exe: LoadedExecutable, donated: boolean, start: Literal, row: DeviceBuffer, rows: number): Promise<{ wall: number; cpu: number }> {
  let cache = await client.bufferFromLiteral(start);
  const positions = Array.from({ length: STEPS }, (_, i) => Literal.fromValues("s32", [], [(i * 37) % rows]));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const pos of positions) {
    const [next] = await client.execute(exe, [[cache, row, pos]]);
    if (!donated) cache.delete();
    cache = next!;
  }
  const wall = (performance.now() - t0) / STEPS;
  const used = process.cpuUsage(cpu0);
  cache.delete();
  return { wall, cpu: (used.user + used.system) / 1000 / STEPS };
}

for (const backend of ["wasm", "native"] as const) {
  const client = await createClient({ backend });
  try {
    for (const rows of ROWS) {
      const program = decodeStep(rows);
      const plain = await client.compile(program);
      const donating = await client.compile(program, { donate: [0] });
      const start = Literal.fromValues("f32", [rows, WIDTH], Array.from({ length: rows * WIDTH }, (_, i) => (i % 17) - 8));
      const row = await client.bufferFromLiteral(Literal.fromValues("f32", [1, WIDTH], Array.from({ length: WIDTH }, (_, i) => i)));
      const figures = { plain: [] as { wall: number; cpu: number }[], donated: [] as { wall: number; cpu: number }[] };
      // One warm-up round each, then alternate which goes first.
      await round(client, plain, false, start, row, rows);
      await round(client, donating, true, start, row, rows);
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? (["plain", "donated"] as const) : (["donated", "plain"] as const);
        for (const which of order) figures[which].push(await round(client, which === "plain" ? plain : donating, which === "donated", start, row, rows));
      }
      const line = (which: "plain" | "donated"): string => {
        const f = figures[which];
        return `${which.padEnd(8)} best ${Math.min(...f.map((x) => x.wall)).toFixed(3)} ms, median ${median(f.map((x) => x.wall)).toFixed(3)} ms, CPU median ${median(f.map((x) => x.cpu)).toFixed(3)} ms a step`;
      };
      console.log(`${backend} f32[${rows},${WIDTH}] cache (${(rows * WIDTH * 4) / 2 ** 20} MiB), ${ROUNDS} rounds of ${STEPS} steps:`);
      console.log(`  ${line("plain")}`);
      console.log(`  ${line("donated")}`);
      row.delete();
      plain.delete();
      donating.delete();
    }
  } finally {
    await client.close();
  }
}
