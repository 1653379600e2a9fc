// The GPT-2 decode step (two blocks, d 768, a cache of 127; bench/workloads) with its
// weight matrices stored as f32, as int8 with a per-column scale and as bf16, compiled by
// xlats (not a test, no peers): paired rounds in one process, the three alternating, CPU
// time per step (process.cpuUsage(), one thread), best and median. Each narrow step's
// result is compared with the f32 step's (the difference is the weights' rounding, not
// the kernels': tests/compiler/weight_only_dot.test.ts bounds those).
//   node dist/bench/quant_decode_probe.js [backend=native|wasm] [rounds=40]

import { arrayShape, compile, Literal, WasmDevice, type DeviceArray, type Executable } from "../src/index.js";
import { buildGpt2, type WeightsStored } from "./workloads/inference.js";
import { firstWeight, inputShapes, makeInputs, type Gpt2 } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

const { backend, rounds } = probeArgs("quant_decode_probe", {
  options: {
    backend: { kind: "string", default: "native", choices: ["native", "wasm"], help: "the backend" },
    rounds: { kind: "number", default: 40, min: 1, integer: true, help: "rounds, the variants alternating" },
  },
});

const w: Gpt2 = { kind: "gpt2", phase: "decode", seq: 128, model: 768, heads: 12, ff: 3072, blocks: 2 };
const values = makeInputs(w);
const shapes = inputShapes(w);
const device = await WasmDevice.create({ threads: 1 });
const options = backend === "native" ? { device, backend: "native" as const, threads: 1 } : { device };

interface Variant { readonly stored: WeightsStored; readonly exe: Executable; readonly args: DeviceArray[]; readonly cpu: number[]; weightBytes: number }
const variants: Variant[] = [];
for (const stored of ["f32", "s8", "bf16"] as const) {
  const exe = await compile(buildGpt2(w, values, "constants", stored), options);
  const argsOnDevice = shapes.slice(0, firstWeight(w)).map((dims, i) => device.bufferFromLiteral(Literal.fromStorage(arrayShape("f32", dims), values[i]!)));
  // Bytes of the four matrices per block, as stored.
  const elements = 2 * (768 * 3 * 768 + 768 * 768 + 2 * 768 * 3072);
  variants.push({ stored, exe, args: argsOnDevice, cpu: [], weightBytes: elements * (stored === "f32" ? 4 : stored === "s8" ? 1 : 2) });
}
const step = (v: Variant): Literal[] => {
  const outs = v.exe.execute(v.args);
  const lits = outs.map((o) => o.toLiteral());
  for (const o of outs) o.delete();
  return lits;
};
const reference = step(variants[0]!)[0]!.toNumbers();
for (const v of variants.slice(1)) {
  const y = step(v)[0]!.toNumbers();
  let worst = 0, scale = 0;
  y.forEach((x, i) => { worst = Math.max(worst, Math.abs(x - reference[i]!)); scale = Math.max(scale, Math.abs(reference[i]!)); });
  console.log(`${v.stored}: largest difference from the f32 step ${worst.toExponential(2)} (largest |y| ${scale.toFixed(2)})`);
}
for (let r = 0; r < rounds; r++) {
  for (const v of variants) {
    const c0 = process.cpuUsage();
    for (const o of v.exe.execute(v.args)) o.delete();
    const c = process.cpuUsage(c0);
    v.cpu.push((c.user + c.system) / 1000);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = variants[0]!;
console.log(`${backend}, 1 thread, ${rounds} interleaved rounds, CPU ms per decode step (best / median)`);
for (const v of variants) {
  console.log(`${v.stored.padEnd(5)} weights ${(v.weightBytes / 1e6).toFixed(1).padStart(5)} MB: ${Math.min(...v.cpu).toFixed(2)} / ${median(v.cpu).toFixed(2)} ms` +
    (v === base ? "" : ` | ${(Math.min(...base.cpu) / Math.min(...v.cpu)).toFixed(2)}x / ${(median(base.cpu) / median(v.cpu)).toFixed(2)}x the f32 step`));
}
for (const v of variants) { for (const a of v.args) a.delete(); v.exe.delete(); }
await device.close();
