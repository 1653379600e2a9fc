// The decode's matrix-vector products with B as stored against B packed once (not a
// test): for each shape, one program of `copies` products x·W_i over distinct weights
// (at least 80 MiB in all, so that every product's weights come from memory, as in a
// decode step), compiled with the weights as parameters (each read as stored: a call's
// columns are part of every row of B) and as constants (the kernels' own layout,
// chunkedBOf: a call's columns one contiguous run), at each thread count, the four
// executables run alternately in one process. Figures: median wall and process-CPU time
// per product, and GB/s of weights per wall second; the two layouts' results are
// checked equal bit for bit at every thread count.
//   node dist/bench/gemv_layout_probe.js [rounds=20] [threads=1,2]

import {
  XlaBuilder, arrayShape, constantLiteral, parameter, dot, tuple, Literal, compile, WasmDevice,
  type Computation, type DeviceArray, type Executable,
} from "../src/index.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1) ?? fallback;
const rounds = Number(arg("rounds", "20"));
const threadCounts = arg("threads", "1,2").split(",").map(Number);
const COLD_BYTES = 80 << 20;
const shapes: [number, number][] = [[768, 3072], [3072, 768], [768, 2304], [768, 768]];

const device = await WasmDevice.create({ threads: 1 });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

for (const [k, n] of shapes) {
  const bytes = k * n * 4;
  const copies = Math.ceil(COLD_BYTES / bytes);
  const weights = Array.from({ length: copies }, (_, c) => Literal.fromValues("f32", [k, n], Array.from({ length: k * n }, (_, i) => Math.sin(i * 0.37 + c))));
  const x = Literal.fromValues("f32", [1, k], Array.from({ length: k }, (_, i) => Math.cos(i * 0.11)));
  const program = (constants: boolean): Computation => {
    const b = new XlaBuilder(constants ? "gemv_packed" : "gemv_stored");
    const xp = parameter(b, 0, arrayShape("f32", [1, k]), "x");
    const ws = weights.map((w, c) => (constants ? constantLiteral(b, w) : parameter(b, c + 1, arrayShape("f32", [k, n]), `w${c}`)));
    return b.build(tuple(b, ws.map((w) => dot(xp, w))));
  };
  interface Setup { label: string; threads: number; exe: Executable; args: DeviceArray[]; wall: number[]; cpu: number[] }
  const setups: Setup[] = [];
  for (const threads of threadCounts) {
    for (const constants of [false, true]) {
      const exe = await compile(program(constants), { device, backend: "native", threads });
      const a = [x, ...(constants ? [] : weights)].map((l) => device.bufferFromLiteral(l));
      setups.push({ label: constants ? "packed once" : "as stored", threads, exe, args: a, wall: [], cpu: [] });
    }
  }
  // Equal bits: every executable's products against the first's.
  const results = setups.map((s) => s.exe.execute(s.args).map((o) => { const v = o.toLiteral().toNumbers(); o.delete(); return v; }));
  for (let s = 1; s < setups.length; s++) {
    results[s]!.forEach((r, o) => r.forEach((v, i) => {
      if (!Object.is(v, results[0]![o]![i])) throw new Error(`${k}x${n}: ${setups[s]!.label} at ${setups[s]!.threads} thread(s), product ${o} element ${i}: ${v} against ${results[0]![o]![i]}`);
    }));
  }
  for (let r = 0; r < rounds; r++) {
    for (const s of setups) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (const o of s.exe.execute(s.args)) o.delete();
      const wall = Number(process.hrtime.bigint() - t0) / 1e3 / copies;
      const c = process.cpuUsage(c0);
      s.wall.push(wall);
      s.cpu.push((c.user + c.system) / copies);
    }
  }
  console.log(`1x${k} · ${k}x${n} (${(bytes / 1e6).toFixed(1)} MB, ${copies} products a run), median of ${rounds} runs, per product:`);
  for (const s of setups) {
    const w = median(s.wall);
    console.log(`  ${s.threads}t ${s.label.padEnd(12)} wall ${w.toFixed(1).padStart(6)} us ${(bytes / w / 1e3).toFixed(1).padStart(5)} GB/s  CPU ${median(s.cpu).toFixed(1).padStart(6)} us`);
  }
  for (const s of setups) { s.args.forEach((a) => a.delete()); s.exe.delete(); }
}
await device.close();
