// Matrix-vector probe (not a test): products with one row (or a few) against a weight
// matrix, timed beside a plain read of the same bytes (a sum over the matrix) in
// interleaved rounds, so the ratio compares both at the same moment of a shared
// machine's load. Figures are GB/s of weights read (the best of the rounds).
//   node dist/bench/gemv_probe.js [backend=native|wasm] [threads=1] [rounds=30] [f64] [cold] [shapes=all|decode|step] [narrow=0|1|only] [cpu] [constant]
// The shapes: GPT-2-small decode projections (x·W with W [k][n], and W stored [n][k] as
// a linear layer's weight), a 4096 x 4096 matrix (64 MiB, past the caches), and the
// attention of one token over a cache of 128: q·Kᵀ [12,1,64] x [12,128,64] and
// p·V [12,1,128] x [12,128,64] (time per call, microseconds).
// The weight matrices (not the attention's batched products) also run with int8 weights
// and a per-column scale (x·(convert(W)·s), read as stored by the weight-only GEMV
// kernels) and with bf16 weights (x·convert(W)), each beside a plain read of its own
// bytes (an f32 array of the same size) in the same rounds: GB/s of weight bytes,
// and the time against the f32 weights' (`narrow=0` leaves them out).
// `cold`: the weights come from memory, as in a decode step (whose 57 MB of weights do
// not fit the caches): each weight matrix has copies, at least COLD_BYTES in all, and
// every call takes the next copy (the dot's rotation, then the read's over the same
// copies, alternately), so that each call's bytes were last touched COLD_BYTES ago.
// Figures are the median call of the rounds (a cold call varies more than a warm one).
// Cold int8 and bf16 weights rotate over their own copies (as many bytes in all), each
// beside a plain read rotating over f32 arrays of the same bytes.
// `shapes=decode`: only the GPT-2-small decode step's four products, x·W with W [k][n]
// (768x768, 768x2304, 768x3072, 3072x768). `shapes=step`: the decode step's eight products
// in its order (two blocks of QKV 768x2304, projection 768x768, fc1 768x3072, fc2 3072x768),
// each with weights of its own (56.6 MB in all), called one after another as a pass, beside
// a pass of plain reads of the same eight arrays in the same order, passes alternating: each
// byte was last touched one pass (56.6 MB) before, as in a run of decode steps; figures are
// the median pass of the rounds and each product's median call (f32 weights, parameters;
// `cold` and `constant` do not apply). `narrow=only`: the int8 and bf16 weights
// without the f32 ones (their time beside the f32 weights' then not printed). `cpu`
// (one thread): calls timed by the process's CPU time (process.cpuUsage), not wall time,
// which a loaded machine's preemptions lengthen. `constant`: the f32 weights are a constant
// of the program instead of a parameter, as a model's weights are (the WebAssembly kernel
// for one or two rows then reads them packed into panels, kernel/gemm_plan.ts's
// streamedPanelsOf); cold, each copy is an executable of its own, rotated likewise.

import {
  XlaBuilder, arrayShape, broadcastInDim, constantLiteral, convertElementType, parameter, dotGeneral, Literal, compile, mul, WasmDevice,
  type Computation, type DeviceArray, type ElementType, type Executable,
} from "../src/index.js";
import { sumOver } from "./workloads/kernels.js";
import { probeArgs } from "./harness/probe_args.js";
import { elementCount } from "../src/types/shape.js";

const given = probeArgs("gemv_probe", {
  options: {
    backend: { kind: "string", default: "native", choices: ["native", "wasm"], help: "the backend" },
    threads: { kind: "number", default: 1, min: 1, integer: true, help: "threads" },
    rounds: { kind: "number", default: 30, min: 1, integer: true, help: "rounds" },
    f64: { kind: "flag", help: "f64 instead of f32" },
    cold: { kind: "flag", help: "the weights replaced by another copy on every call" },
    narrow: { kind: "string", default: "1", choices: ["0", "1", "only"], help: "the f32 weights also as int8 and bf16 (0: not; only: only those)" },
    shapes: { kind: "string", default: "all", choices: ["all", "decode", "step"], help: "which products" },
    cpu: { kind: "flag", help: "per CPU second (one thread)" },
    constant: { kind: "flag", help: "the weights as constants" },
  },
});
const { backend, threads, rounds, cold, shapes: shapeSet, cpu: cpuTime, constant: constantWeights } = given;
const type = given.f64 ? "f64" : "f32";
const es = type === "f32" ? 4 : 8;
const narrow = given.narrow !== "0" && type === "f32";
const narrowOnly = narrow && given.narrow === "only";
if (cpuTime && threads !== 1) throw new Error("gemv_probe: `cpu` times one thread (the process's CPU time sums the threads')");
/** Milliseconds of wall time, or with `cpu` of the process's CPU time. */
const clock = cpuTime ? (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } : (): number => performance.now();
/** Bytes of weight copies a cold call rotates over: twice the last-level cache of the machines measured (32 MiB), and more. */
const COLD_BYTES = 80 << 20;

interface Case { readonly label: string; readonly lhs: number[]; readonly rhs: number[]; readonly contract: [number, number]; readonly batchDims: number }

const decodeCases: Case[] = [
  { label: "x·W 1x768 · 768x768", lhs: [1, 768], rhs: [768, 768], contract: [1, 0], batchDims: 0 },
  { label: "x·W 1x768 · 768x2304", lhs: [1, 768], rhs: [768, 2304], contract: [1, 0], batchDims: 0 },
  { label: "x·W 1x768 · 768x3072", lhs: [1, 768], rhs: [768, 3072], contract: [1, 0], batchDims: 0 },
  { label: "x·W 1x3072 · 3072x768", lhs: [1, 3072], rhs: [3072, 768], contract: [1, 0], batchDims: 0 },
];

const allCases: Case[] = [
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

const cases = shapeSet === "decode" ? decodeCases : allCases;
/** GPT-2-small's decode step: its blocks' products in order, each block's weights its own. */
const stepCases: Case[] = [0, 1].flatMap((block) => [1, 0, 2, 3].map((i) => ({ ...decodeCases[i]!, label: `block ${block} ${decodeCases[i]!.label}` })));

/** Weights as stored: the probe's type, int8 with a per-column scale, or bf16. */
type Weights = "plain" | "s8" | "bf16";

/** x·W; `constantW`: W (plain weights) those values, a constant of the program, which then takes x alone. */
function dotProgram(c: Case, weights: Weights = "plain", constantW?: readonly number[]): Computation {
  const b = new XlaBuilder("gemv");
  const x = parameter(b, 0, arrayShape(type, c.lhs), "x");
  const w = constantW !== undefined ? constantLiteral(b, Literal.fromValues(type, c.rhs, constantW))
    : parameter(b, 1, arrayShape(weights === "plain" ? type : weights, c.rhs), "w");
  const bd = Array.from({ length: c.batchDims }, (_, i) => i);
  let rhs = weights === "plain" ? w : convertElementType(w, "f32");
  if (weights === "s8") {
    // One scale per output column: W's dimension that is not contracted.
    const column = 1 - c.contract[1];
    const scale = parameter(b, 2, arrayShape("f32", [c.rhs[column]!]), "scale");
    rhs = mul(rhs, broadcastInDim(scale, c.rhs, [column]));
  }
  return b.build(dotGeneral(x, rhs, { lhsBatchDimensions: bd, rhsBatchDimensions: bd, lhsContractingDimensions: [c.contract[0]], rhsContractingDimensions: [c.contract[1]] }));
}

/** A sum over an array of the probe's type: a plain read of its bytes. */
function sumProgram(dims: readonly number[]): Computation {
  const b = new XlaBuilder("read");
  const w = parameter(b, 0, arrayShape(type, dims), "w");
  return b.build(sumOver(w, dims.map((_, i) => i)));
}

const device = await WasmDevice.create({ threads: backend === "native" ? 1 : threads });
const options = backend === "native" ? { device, backend: "native" as const, threads } : { device };
const values = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed));

interface Timed { readonly exe: Executable; readonly args: DeviceArray[]; best: number }
const timed = async (program: Computation, inputs: readonly Input[]): Promise<Timed> => {
  const exe = await compile(program, options);
  const argsOnDevice = inputs.map((i) => device.bufferFromLiteral(Literal.fromValues(i.type ?? type, i.dims, i.data)));
  return { exe, args: argsOnDevice, best: Infinity };
};
const once = (t: Timed): void => {
  const t0 = clock();
  for (const out of t.exe.execute(t.args)) out.delete();
  t.best = Math.min(t.best, clock() - t0);
};

/**
 * Cold calls: the weights (argument `weightArg`) replaced by the next of `copies` on every
 * call, or with constant weights the next of `exes`; `best` ends as the median call.
 */
interface ColdTimed extends Timed { readonly copies: DeviceArray[]; readonly weightArg: number; readonly times: number[]; readonly exes?: Executable[] }
const rotation = (t: ColdTimed): void => {
  for (const exe of t.exes ?? []) {
    const t0 = clock();
    for (const out of exe.execute(t.args)) out.delete();
    t.times.push(clock() - t0);
  }
  for (const copy of t.copies) {
    const callArgs = t.args.map((a, i) => (i === t.weightArg ? copy : a));
    const t0 = clock();
    for (const out of t.exe.execute(callArgs)) out.delete();
    t.times.push(clock() - t0);
  }
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface Input { readonly dims: readonly number[]; readonly data: number[]; readonly type?: ElementType }

/** The dot's inputs with weights stored `weights` (the weights at index 1), and the bytes of those weights. */
function dotInputs(c: Case, weights: Weights, x: number[], w: number[]): { inputs: Input[]; bytes: number } {
  if (weights === "plain") return { inputs: [{ dims: c.lhs, data: x }, { dims: c.rhs, data: w }], bytes: elementCount(c.rhs) * es };
  const n = c.rhs[1 - c.contract[1]]!;
  const scale = Array.from({ length: n }, (_, j) => 0.01 * (1 + (j % 7)));
  const stored: Input = { dims: c.rhs, data: weights === "s8" ? w.map((v) => Math.round(v * 127)) : w, type: weights };
  return {
    inputs: [{ dims: c.lhs, data: x }, stored, ...(weights === "s8" ? [{ dims: [n], data: scale, type: "f32" as const }] : [])],
    bytes: elementCount(c.rhs) * (weights === "s8" ? 1 : 2),
  };
}

const weightKinds = (c: Case): Weights[] =>
  [...(narrowOnly ? [] : ["plain" as const]), ...(narrow && c.batchDims === 0 ? (["s8", "bf16"] as const) : [])];
const weightLabel = (c: Case, weights: Weights): string => (weights === "plain" ? c.label : `  ${weights === "s8" ? "int8 + scale" : "bf16"}${narrowOnly ? ` ${c.label}` : ""}`);

async function coldCase(c: Case): Promise<void> {
  const x = values(elementCount(c.lhs), 1), w = values(elementCount(c.rhs), 2);
  const measured: { label: string; bytes: number; dot: ColdTimed; read: ColdTimed; copies: DeviceArray[] }[] = [];
  for (const weights of weightKinds(c)) {
    const { inputs, bytes } = dotInputs(c, weights, x, w);
    const nCopies = Math.max(2, Math.ceil(COLD_BYTES / bytes) + 1);
    const stored = inputs[1]!;
    const same = weights === "plain" ? c.rhs : [bytes / es];
    const copies = Array.from({ length: nCopies }, () => device.bufferFromLiteral(Literal.fromValues(stored.type ?? type, stored.dims, stored.data)));
    const readCopies = weights === "plain" ? copies : Array.from({ length: nCopies }, () => device.bufferFromLiteral(Literal.fromValues(type, same, values(elementCount(same), 3))));
    const constantCopies = constantWeights && weights === "plain";
    const dot: ColdTimed = constantCopies
      ? { ...(await timed(dotProgram(c, weights, w), inputs.slice(0, 1))), copies: [], weightArg: 1, times: [],
        exes: await Promise.all(Array.from({ length: nCopies }, (_, i) => compile(dotProgram(c, weights, w.map((v) => v + i * 1e-3)), options))) }
      : { ...(await timed(dotProgram(c, weights), inputs)), copies, weightArg: 1, times: [] };
    const read: ColdTimed = { ...(await timed(sumProgram(same), [{ dims: same, data: values(elementCount(same), 3) }])), copies: readCopies, weightArg: 0, times: [] };
    measured.push({ label: `${weightLabel(c, weights)} (${nCopies} copies)`, bytes, dot, read, copies: weights === "plain" ? copies : [...copies, ...readCopies] });
  }
  for (let r = 0; r < rounds; r++) for (const p of measured) { rotation(p.dot); rotation(p.read); }
  const base = measured.find((p) => p.label.startsWith(c.label))?.dot;
  for (const p of measured) {
    p.dot.best = median(p.dot.times);
    p.read.best = median(p.read.times);
  }
  for (const p of measured) console.log(line(p.label, p.bytes, p.dot, p.read, p.dot === base ? undefined : base));
  for (const p of measured) {
    for (const t of [p.dot, p.read]) { for (const a of t.args) a.delete(); t.exe.delete(); for (const e of t.exes ?? []) e.delete(); }
    for (const copy of p.copies) copy.delete();
  }
}

console.log(`${backend}, ${threads} thread(s), ${type}, ${constantWeights ? "f32 weights constant, " : ""}${cpuTime ? "CPU time, " : ""}${shapeSet === "step" ? `the decode step's products and reads in alternating passes, median of ${rounds}` : cold ? `cold weights (copies of >= ${COLD_BYTES >> 20} MiB in all), median call of ${rounds} rotations` : `best of ${rounds} interleaved rounds`}`);
const line = (label: string, bytes: number, dot: Timed, read: Timed, base?: Timed): string => {
  const gbs = (ms: number): string => (bytes / ms / 1e6).toFixed(1);
  return `${label.padEnd(34)} dot ${(dot.best * 1000).toFixed(1).padStart(7)} us ${gbs(dot.best).padStart(6)} GB/s | read ${(read.best * 1000).toFixed(1).padStart(7)} us ${
    gbs(read.best).padStart(6)} GB/s | dot/read ${(read.best / dot.best).toFixed(2)}${base === undefined ? "" : ` | ${(base.best / dot.best).toFixed(2)}x the ${type} weights`}`;
};
/**
 * shapes=step: the step's products as one pass over their weights, beside a pass of plain
 * reads of the same arrays in the same order, alternating, so both find each array as the
 * other left it one pass (all of the weights) before.
 */
async function stepPasses(): Promise<void> {
  const parts = await Promise.all(stepCases.map(async (c, i) => {
    const x = values(elementCount(c.lhs), 1), w = values(elementCount(c.rhs), 2 + i);
    const dot = await timed(dotProgram(c), [{ dims: c.lhs, data: x }, { dims: c.rhs, data: w }]);
    const read = await timed(sumProgram(c.rhs), []);
    return { c, bytes: elementCount(c.rhs) * es, dot, read, dotTimes: [] as number[], readTimes: [] as number[] };
  }));
  // The read sums the dot's own weights: the same buffer.
  const readArgs = parts.map((p) => [p.dot.args[1]!]);
  const dotPasses: number[] = [], readPasses: number[] = [];
  for (let r = 0; r < rounds + 2; r++) {
    let t0 = clock();
    for (const p of parts) { const t = clock(); for (const out of p.dot.exe.execute(p.dot.args)) out.delete(); p.dotTimes.push(clock() - t); }
    dotPasses.push(clock() - t0);
    t0 = clock();
    parts.forEach((p, i) => { const t = clock(); for (const out of p.read.exe.execute(readArgs[i]!)) out.delete(); p.readTimes.push(clock() - t); });
    readPasses.push(clock() - t0);
  }
  // The first two passes warm up (first calls, pages touched for the first time).
  const settled = (xs: number[]): number[] => xs.slice(2);
  for (const p of parts) {
    p.dot.best = median(settled(p.dotTimes));
    p.read.best = median(settled(p.readTimes));
    console.log(line(p.c.label, p.bytes, p.dot, p.read));
  }
  const bytes = parts.reduce((s, p) => s + p.bytes, 0);
  const pass = (xs: number[]): Timed => ({ ...parts[0]!.dot, best: median(settled(xs)) });
  console.log(line(`the step's ${parts.length} products (median pass)`, bytes, pass(dotPasses), pass(readPasses)));
  for (const p of parts) for (const t of [p.dot, p.read]) { for (const a of t.args) a.delete(); t.exe.delete(); }
}

if (shapeSet === "step") await stepPasses();
else for (const c of cold ? cases.filter((c) => c.batchDims === 0) : cases) {
  if (cold) { await coldCase(c); continue; }
  const x = values(elementCount(c.lhs), 1), w = values(elementCount(c.rhs), 2);
  const pairs: { label: string; bytes: number; dot: Timed; read: Timed }[] = [];
  for (const weights of weightKinds(c)) {
    const { inputs, bytes } = dotInputs(c, weights, x, w);
    const same = [bytes / es];
    const dot = constantWeights && weights === "plain" ? await timed(dotProgram(c, weights, w), inputs.slice(0, 1)) : await timed(dotProgram(c, weights), inputs);
    pairs.push({ label: weightLabel(c, weights), bytes, dot, read: await timed(sumProgram(same), [{ dims: same, data: values(elementCount(same), 3) }]) });
  }
  const base = narrowOnly ? undefined : pairs[0]!.dot;
  for (let r = 0; r < rounds; r++) for (const p of pairs) { once(p.dot); once(p.read); once(p.dot); }
  for (const p of pairs) console.log(line(p.label, p.bytes, p.dot, p.read, p.dot === base ? undefined : base));
  for (const p of pairs) for (const t of [p.dot, p.read]) { for (const a of t.args) a.delete(); t.exe.delete(); }
}
await device.close();
