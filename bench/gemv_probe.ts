// Matrix-vector probe (not a test): products with one row (or a few) against a weight
// matrix, timed beside a plain read of the same bytes (a sum over the matrix) in
// interleaved rounds, so the ratio compares both at the same moment of a shared
// machine's load. Figures are GB/s of weights read (the best of the rounds).
//   node dist/bench/gemv_probe.js [backend=native|wasm] [threads=1] [rounds=30] [f64]
// The shapes: GPT-2-small decode projections (x·W with W [k][n], and W stored [n][k] as
// a linear layer's weight), a 4096 x 4096 matrix (64 MiB, past the caches), and the
// attention of one token over a cache of 128: q·Kᵀ [12,1,64] x [12,128,64] and
// p·V [12,1,128] x [12,128,64] (time per call, microseconds).

import {
  XlaBuilder, arrayShape, parameter, dotGeneral, Literal, compile, WasmDevice, type Computation, type DeviceArray, type Executable,
} from "../src/index.js";
import { sumOver } from "./workloads/kernels.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1) ?? fallback;
const backend = arg("backend", "native") as "native" | "wasm";
const threads = Number(arg("threads", "1"));
const rounds = Number(arg("rounds", "30"));
const type = args.includes("f64") ? "f64" : "f32";
const es = type === "f32" ? 4 : 8;

interface Case { readonly label: string; readonly lhs: number[]; readonly rhs: number[]; readonly contract: [number, number]; readonly batchDims: number }

const cases: Case[] = [
  { label: "x·W 1x768 · 768x3072", lhs: [1, 768], rhs: [768, 3072], contract: [1, 0], batchDims: 0 },
  { label: "x·Wᵀ 1x768 · (3072x768)ᵀ", lhs: [1, 768], rhs: [3072, 768], contract: [1, 1], batchDims: 0 },
  { label: "x·W 1x3072 · 3072x768", lhs: [1, 3072], rhs: [3072, 768], contract: [1, 0], batchDims: 0 },
  { label: "x·W 1x4096 · 4096x4096", lhs: [1, 4096], rhs: [4096, 4096], contract: [1, 0], batchDims: 0 },
  { label: "x·Wᵀ 1x4096 · (4096x4096)ᵀ", lhs: [1, 4096], rhs: [4096, 4096], contract: [1, 1], batchDims: 0 },
  { label: "X·W 4x4096 · 4096x4096", lhs: [4, 4096], rhs: [4096, 4096], contract: [1, 0], batchDims: 0 },
  { label: "X·W 4x768 · 768x768", lhs: [4, 768], rhs: [768, 768], contract: [1, 0], batchDims: 0 },
  { label: "X·Wᵀ 4x768 · (768x768)ᵀ", lhs: [4, 768], rhs: [768, 768], contract: [1, 1], batchDims: 0 },
  { label: "q·Kᵀ 12x1x64 · 12x128x64", lhs: [12, 1, 64], rhs: [12, 128, 64], contract: [2, 2], batchDims: 1 },
  { label: "p·V 12x1x128 · 12x128x64", lhs: [12, 1, 128], rhs: [12, 128, 64], contract: [2, 1], batchDims: 1 },
];

const count = (dims: readonly number[]): number => dims.reduce((p, d) => p * d, 1);

function dotProgram(c: Case): Computation {
  const b = new XlaBuilder("gemv");
  const x = parameter(b, 0, arrayShape(type, c.lhs), "x");
  const w = parameter(b, 1, arrayShape(type, c.rhs), "w");
  const bd = Array.from({ length: c.batchDims }, (_, i) => i);
  return b.build(dotGeneral(x, w, { lhsBatchDimensions: bd, rhsBatchDimensions: bd, lhsContractingDimensions: [c.contract[0]], rhsContractingDimensions: [c.contract[1]] }));
}

function sumProgram(c: Case): Computation {
  const b = new XlaBuilder("read");
  const w = parameter(b, 0, arrayShape(type, c.rhs), "w");
  return b.build(sumOver(w, c.rhs.map((_, i) => i)));
}

const device = await WasmDevice.create({ threads: backend === "native" ? 1 : threads });
const options = backend === "native" ? { device, backend: "native" as const, threads } : { device };
const values = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed));

interface Timed { readonly exe: Executable; readonly args: DeviceArray[]; best: number }
const timed = async (program: Computation, inputs: { dims: number[]; data: number[] }[]): Promise<Timed> => {
  const exe = await compile(program, options);
  const argsOnDevice = inputs.map((i) => device.bufferFromLiteral(Literal.fromValues(type, i.dims, i.data)));
  return { exe, args: argsOnDevice, best: Infinity };
};
const once = (t: Timed): void => {
  const t0 = performance.now();
  for (const out of t.exe.execute(t.args)) out.delete();
  t.best = Math.min(t.best, performance.now() - t0);
};

console.log(`${backend}, ${threads} thread(s), ${type}, best of ${rounds} interleaved rounds`);
for (const c of cases) {
  const x = values(count(c.lhs), 1), w = values(count(c.rhs), 2);
  const dot = await timed(dotProgram(c), [{ dims: c.lhs, data: x }, { dims: c.rhs, data: w }]);
  const read = await timed(sumProgram(c), [{ dims: c.rhs, data: w }]);
  for (let r = 0; r < rounds; r++) { once(dot); once(read); once(dot); }
  const bytes = count(c.rhs) * es;
  const gbs = (ms: number): string => (bytes / ms / 1e6).toFixed(1);
  console.log(`${c.label.padEnd(30)} dot ${(dot.best * 1000).toFixed(1).padStart(7)} us ${gbs(dot.best).padStart(6)} GB/s | read ${(read.best * 1000).toFixed(1).padStart(7)} us ${gbs(read.best).padStart(6)} GB/s | dot/read ${(read.best / dot.best).toFixed(2)}`);
  for (const t of [dot, read]) { for (const a of t.args) a.delete(); t.exe.delete(); }
}
await device.close();
