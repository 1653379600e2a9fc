// The results table (markdown): absolute figures per library, xlats-wasm's ratios to the
// WebAssembly peers, xlats-native's to the native ones (onnxruntime-node, numpy), and
// xlats-webgpu's to the GPU peers.

import { describe, flops, measure } from "../workloads/specs.js";
import type { CellResult } from "./measure.js";
import { median } from "./runner.js";
import { GPU_LIBRARIES, GPU_PEERS, largestMatmul, LIBRARIES, WASM_PEERS, type PlannedWorkload } from "./plan.js";
import type { PeakFlops } from "./peak.js";

/**
 * A sitting's cells, round by round (`--rounds R` repeats the whole sequence of runners; one
 * round without it). Ratios are taken within a round, where both figures saw the same minutes
 * of a shared machine's load, and only then summarised over the rounds.
 */
export type Rounds = readonly (readonly CellResult[])[];

function findCell(cells: readonly CellResult[], name: string, threads: number, kind: string, label: string): CellResult | undefined {
  return cells.find((c) => c.runner.name === name && c.runner.threads === threads && c.kind === kind && c.label === label);
}

/** The figure of a cell in the unit of its row (the interpreter's scaled from its reduced size). */
export function figureOf(cell: CellResult | undefined, p: PlannedWorkload): number | undefined {
  if (cell === undefined || cell.outcome.status !== "ok") return undefined;
  const { seconds, workload } = cell.outcome;
  const m = measure(p.full);
  if (m.unit === "steps/s") return flops(workload) / seconds / flops(p.full);
  return measure(workload).amount / seconds / 1e9;
}

/** A figure: three significant digits down to 1, two below. */
function fmt(x: number): string {
  if (x >= 100) return x.toFixed(0);
  if (x >= 10) return x.toFixed(1);
  if (x >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}

/**
 * A ratio: always two decimals, so that one just under a target (0.995, 1.19) never prints as
 * the target itself, as two significant digits would ("1.0"); below 0.1 two significant digits
 * (the GPU peers' 0.023), where two decimals would say nothing.
 */
export function fmtRatio(x: number): string {
  return x >= 0.1 ? x.toFixed(2) : x.toPrecision(2);
}

/**
 * A figure or ratio over the rounds (undefined where a round has none): its median, and with
 * more than one round the min–max (and how many rounds had it, when not all); `extra` joins
 * the parentheses. undefined when no round has it.
 */
function fmtRounds(xs: readonly (number | undefined)[], suffix = "", extra?: string, format = fmt): string | undefined {
  const v = xs.filter((x): x is number => x !== undefined);
  if (v.length === 0) return undefined;
  const spread = xs.length > 1
    ? [`${format(Math.min(...v))}–${format(Math.max(...v))}${v.length < xs.length ? `, ${v.length} of ${xs.length} rounds` : ""}`] : [];
  const inside = [...spread, ...(extra !== undefined ? [extra] : [])];
  return `${format(median(v))}${suffix}${inside.length > 0 ? ` (${inside.join("; ")})` : ""}`;
}

/** Ratios over the rounds, as fmtRounds gives them, each with fmtRatio's two decimals and a "×". */
function fmtRatios(xs: readonly (number | undefined)[]): string | undefined {
  return fmtRounds(xs, "×", undefined, fmtRatio);
}

/** Each round's ratio of two per-round figures. */
function perRoundRatio(ours: readonly (number | undefined)[], theirs: readonly (number | undefined)[]): (number | undefined)[] {
  return ours.map((x, r) => (x !== undefined && theirs[r] !== undefined ? x / theirs[r]! : undefined));
}

/** Each round's best of several per-round figures. */
function perRoundBest(series: readonly (readonly (number | undefined)[])[], rounds: number): (number | undefined)[] {
  return Array.from({ length: rounds }, (_, r) => {
    const xs = series.map((s) => s[r]).filter((x): x is number => x !== undefined);
    return xs.length > 0 ? Math.max(...xs) : undefined;
  });
}

function fmtBytes(b: number): string {
  return b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(1)} MiB` : `${(b / 1024).toFixed(0)} KiB`;
}

export interface Table {
  readonly markdown: string;
  readonly failures: string[];
}

export function buildTable(plan: readonly PlannedWorkload[], threads: readonly number[], rounds: Rounds): Table {
  const R = rounds.length;
  const notes: string[] = [];
  const noteFor = (text: string): number => {
    const i = notes.indexOf(text);
    if (i >= 0) return i + 1;
    notes.push(text);
    return notes.length;
  };
  const failures: string[] = [];
  // Only the libraries this run measured (--runners), and the ratio columns of the xlats backends among them.
  const ran = new Set(rounds.flat().map((c) => c.runner.name));
  const libraries = [...LIBRARIES, ...GPU_LIBRARIES].filter((l) => ran.has(l));
  const wasmColumns = ran.has("xlats-wasm");
  const nativeColumns = ran.has("xlats-native");
  const gpuColumns = ran.has("xlats-webgpu");
  const header = ["workload", "unit", "thr", ...libraries.map((l) => (l === "xlats-interp" ? "xlats-interp*" : l)),
    ...(wasmColumns ? ["wasm / best wasm peer", "wasm / tfjs-wasm", "wasm / ort-web", "2t / 1t (xlats-wasm)"] : []),
    ...(nativeColumns ? ["native / ort-node", "native / numpy", "2t / 1t (xlats-native)", "native compile (first run)"] : []),
    ...(gpuColumns ? ["webgpu / best GPU peer", ...GPU_PEERS.map((peer) => `webgpu / ${peer}`)] : [])];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const p of plan) {
    for (const t of threads) {
      const rowLabel = describe(p.full);
      const unit = measure(p.full).unit;
      const row = [rowLabel, unit, `${t}`];
      // Each library's figure round by round.
      const figure = (name: string, th = t): (number | undefined)[] =>
        rounds.map((cells) => figureOf(findCell(cells, name, th, p.kind, rowLabel), p));
      const ratio = (ours: readonly (number | undefined)[], peer: readonly (number | undefined)[]): string =>
        fmtRatios(perRoundRatio(ours, peer)) ?? "—";
      const roundOf = (r: number): string => (R > 1 ? `, round ${r + 1}` : "");
      for (const lib of libraries) {
        if (lib === "xlats-interp" && t !== 1) { row.push("—"); continue; }
        const th = lib === "xlats-interp" ? 1 : t;
        const perRound = rounds.map((cells) => findCell(cells, lib, th, p.kind, rowLabel)?.outcome);
        if (perRound.every((o) => o === undefined)) { row.push(""); continue; }
        // A wrong result in any round is the cell's FAIL; every round's failure is listed.
        const fails = perRound.flatMap((o, r) => (o?.status === "fail" ? [{ r, reason: o.reason }] : []));
        for (const f of fails) failures.push(`${lib} (${t} thread${t > 1 ? "s" : ""}) on ${rowLabel}${roundOf(f.r)}: ${f.reason}`);
        if (fails.length > 0) { row.push(`**FAIL** [${noteFor(`${lib} ${t}t: ${fails[0]!.reason}`)}]`); continue; }
        const oks = perRound.flatMap((o) => (o?.status === "ok" ? [o] : []));
        const nas = perRound.flatMap((o, r) => (o?.status === "na" ? [{ r, reason: o.reason }] : []));
        if (oks.length === 0) { row.push(`n/a [${noteFor(`${lib}: ${nas[0]!.reason}`)}]`); continue; }
        // Measured in some rounds: the figure over those, and a note for each round that was not.
        const marks = [...new Set(oks.flatMap((o) => (o.detail !== undefined ? [`${lib}: ${o.detail}`] : [])))]
          .concat(nas.map((n) => `${lib}${roundOf(n.r)}: n/a, ${n.reason}`)).map((text) => ` [${noteFor(text)}]`).join("");
        const peakBytes = oks[0]!.peakBytes;
        row.push(`${fmtRounds(figure(lib, th), "", peakBytes !== undefined ? fmtBytes(peakBytes) : undefined)}${marks}`);
      }
      if (wasmColumns) {
        const ours = figure("xlats-wasm");
        row.push(ratio(ours, perRoundBest(WASM_PEERS.map((n) => figure(n)), R)), ratio(ours, figure("tfjs-wasm")), ratio(ours, figure("ort-web")));
        row.push(t > 1 ? ratio(ours, figure("xlats-wasm", 1)) : "—");
      }
      if (nativeColumns) {
        const native = figure("xlats-native");
        const compiles = rounds.flatMap((cells) => {
          const o = findCell(cells, "xlats-native", t, p.kind, rowLabel)?.outcome;
          return o?.status === "ok" && o.compileMs !== undefined ? [o.compileMs] : [];
        });
        row.push(ratio(native, figure("ort-node")), ratio(native, figure("numpy")), t > 1 ? ratio(native, figure("xlats-native", 1)) : "—");
        row.push(compiles.length > 0 ? `${(median(compiles) / 1000).toFixed(2)} s` : "—");
      }
      if (gpuColumns) {
        const gpu = figure("xlats-webgpu");
        row.push(ratio(gpu, perRoundBest(GPU_PEERS.map((n) => figure(n)), R)), ...GPU_PEERS.map((n) => ratio(gpu, figure(n))));
      }
      lines.push(`| ${row.join(" | ")} |`);
    }
  }
  // The notes of the libraries that ran: a GPU sitting's table carries none of the CPU's.
  const cpuRan = LIBRARIES.some((l) => ran.has(l));
  const footer = [
    "",
    "Figures: GFLOP/s (matmul, conv), GB/s of bytes read + written (elementwise, sum, softmax), steps/s (whole programs); " +
      "median of several runs after warm-up; every result checked against a plain-JS reference before its time counts.",
    ...(R > 1 ? [`${R} rounds (every runner in each, the order reversed every other round): each figure is the median of the ` +
      "rounds' figures, min–max in parentheses; each ratio is taken within a round (both figures from that round) and given " +
      "as the median of the rounds' ratios, min–max in parentheses."] : []),
    ...(ran.has("xlats-interp") ? [`\\* xlats-interp runs reduced sizes (${[...new Set(plan.map((p) => describe(p.reduced)))].join("; ")}); its figure is ` +
      "per FLOP/byte, and for whole programs the steps/s that its FLOP rate would give at the full size."] : []),
    ...(wasmColumns || nativeColumns ? ["Ratios are xlats-wasm over the peer at the same thread count; \"best wasm peer\" is the fastest of tfjs-wasm, " +
      "ort-web, jax-js; xlats-native (C kernels built by the machine's C compiler) is compared with the native peers, " +
      "ort-node (MLAS) and numpy (its BLAS; conv as im2col + one matmul). Peak memory of xlats executables in parentheses."] : []),
    ...(nativeColumns ? ["native compile: the C compiler's time for the program's module on its first run (each xlats-native process builds " +
      "into a fresh cache directory; later runs load the cached module)."] : []),
    ...(gpuColumns ? ["On the GPU (xlats-webgpu and the *-webgpu peers) inputs are on the device before timing, and a run " +
      "counts until the GPU queue has finished it (nothing read back); \"best GPU peer\" is the fastest of tfjs-webgpu, " +
      "ort-webgpu, jax-webgpu."] : []),
    ...(cpuRan ? ["ort-web/ort-node copy their feeds in and outputs out on every run() (no backend-resident tensors for the CPU/wasm EPs); " +
      "ort and jax-js take conv in NCHW/OIHW (converted before timing).",
    "Threads in Node: xlats-wasm WasmDevice({ threads }); tfjs-wasm 1 only (its threaded build is turned off under Node, " +
      "tfjs#3830); ort-web env.wasm.numThreads (pthreads on worker_threads; fixed per process); ort-node intraOpNumThreads " +
      "(native); xlats-native compile's threads (the module's own pthreads); numpy OPENBLAS_NUM_THREADS (its BLAS calls; " +
      "elementwise numpy is one thread); jax-js a pool of Web Workers, which Node 20 lacks: at 2 threads it runs on a small Worker shim over " +
      "worker_threads (bench/peers/web_worker_shim.mjs)."] : []),
  ];
  if (notes.length > 0) footer.push("", ...notes.map((n, i) => `[${i + 1}] ${n}`));
  return { markdown: [...lines, ...footer].join("\n"), failures };
}


/** A target: its name, xlats' figure, the figure it is compared with (each round by round), and the ratio to reach. */
type Target = [string, (number | undefined)[], (number | undefined)[], number];

const phase = (name: "prefill" | "decode") => (p: PlannedWorkload): boolean => p.full.kind === "gpt2" && p.full.phase === name;
/**
 * The whole programs of issue 24's targets: label, kind, which planned workload of that kind,
 * and whether two threads must be 1.6× one.
 */
const WHOLE_PROGRAMS: readonly [string, string, ((p: PlannedWorkload) => boolean) | undefined, boolean][] = [
  ["gpt2 prefill", "gpt2", phase("prefill"), true],
  ["gpt2 decode", "gpt2", phase("decode"), false],
  ["mlp infer", "mlp-infer", undefined, true],
  ["encoder", "transformer", undefined, false],
];

/** One target as judged: what the table prints, and the median ratio and rounds for a summary. */
export interface TargetResult {
  /** Which backend's targets: "xlats-wasm", "xlats-webgpu" or "xlats-native". */
  readonly backend: string;
  readonly name: string;
  readonly goal: number;
  /** The median of the rounds' ratios; undefined where no round measured both figures. */
  readonly ratio: number | undefined;
  /** In how many rounds the ratio reached the goal, of how many. */
  readonly heldRounds: number;
  readonly rounds: number;
  /** The printed measurement ("1.21× (1.00–1.25)", or "n/a"). */
  readonly measured: string;
}

/**
 * The issue's targets, each with the measured ratio (at 1 thread unless it is about threads):
 * with several rounds, judged on the median of the rounds' ratios, with the rounds that held.
 * `gpuPeakGflops`, the adapter's f32 FMA rate (bench/harness/gpu_peak.ts), adds issue 23's
 * target for the largest matmul's share of it.
 */
export function evaluateTargets(plan: readonly PlannedWorkload[], rounds: Rounds, gpuPeakGflops?: number): TargetResult[] {
  const fig = (name: string, threads: number, kind: string, pick?: (p: PlannedWorkload) => boolean): (number | undefined)[] => {
    const p = plan.find((q) => q.kind === kind && (pick === undefined || pick(q)));
    return rounds.map((cells) => (p === undefined ? undefined : figureOf(findCell(cells, name, threads, kind, describe(p.full)), p)));
  };
  // matmul 1024 in a full run; the largest matmul with --quick.
  const matmulPick = (p: PlannedWorkload): boolean => p.full.kind === "matmul" && p.full.m === 1024;
  const hasMatmul1024 = plan.some(matmulPick);
  const largest = largestMatmul(plan);
  const matmul = (name: string, threads: number): (number | undefined)[] =>
    hasMatmul1024 ? fig(name, threads, "matmul", matmulPick) : fig(name, threads, "matmul", (p) => p === largest);
  const matmulLabel = hasMatmul1024 || largest === undefined ? "matmul 1024" : `${describe(largest.full)} (no 1024 in this run)`;
  const targets: Target[] = [
    [`${matmulLabel} vs tfjs-wasm`, matmul("xlats-wasm", 1), matmul("tfjs-wasm", 1), 1.1],
    ["tanh(a*b+c) vs ort-web", fig("xlats-wasm", 1, "fused"), fig("ort-web", 1, "fused"), 3],
    ["a+b vs tfjs-wasm", fig("xlats-wasm", 1, "add"), fig("tfjs-wasm", 1, "add"), 1],
    ["sum vs tfjs-wasm", fig("xlats-wasm", 1, "sum"), fig("tfjs-wasm", 1, "sum"), 3],
    ["softmax vs tfjs-wasm", fig("xlats-wasm", 1, "softmax"), fig("tfjs-wasm", 1, "softmax"), 1.3],
    ["conv vs tfjs-wasm", fig("xlats-wasm", 1, "conv"), fig("tfjs-wasm", 1, "conv"), 1.1],
    [`${matmulLabel}: 2 threads vs 1`, matmul("xlats-wasm", 2), matmul("xlats-wasm", 1), 1.8],
    ["conv: 2 threads vs 1", fig("xlats-wasm", 2, "conv"), fig("xlats-wasm", 1, "conv"), 1.8],
    ...WHOLE_PROGRAMS.map(([label, kind, pick]): Target => [`${label} vs ort-web`, fig("xlats-wasm", 1, kind, pick), fig("ort-web", 1, kind, pick), 1.5]),
  ];
  const nativeTargets: Target[] = [
    [`${matmulLabel} vs ort-node`, matmul("xlats-native", 1), matmul("ort-node", 1), 1],
    [`${matmulLabel} vs numpy`, matmul("xlats-native", 1), matmul("numpy", 1), 0.8],
    ["tanh(a*b+c) vs ort-node", fig("xlats-native", 1, "fused"), fig("ort-node", 1, "fused"), 3],
    ["sum vs ort-node", fig("xlats-native", 1, "sum"), fig("ort-node", 1, "sum"), 1],
    ["softmax vs ort-node", fig("xlats-native", 1, "softmax"), fig("ort-node", 1, "softmax"), 3],
    ["conv vs ort-node", fig("xlats-native", 1, "conv"), fig("ort-node", 1, "conv"), 1],
    [`${matmulLabel}: 2 threads vs 1`, matmul("xlats-native", 2), matmul("xlats-native", 1), 1.8],
    ["conv: 2 threads vs 1", fig("xlats-native", 2, "conv"), fig("xlats-native", 1, "conv"), 1.8],
    ...WHOLE_PROGRAMS.flatMap(([label, kind, pick]): Target[] => [1, 2].map((t): Target =>
      [`${label} vs ort-node, ${t} thread${t > 1 ? "s" : ""}`, fig("xlats-native", t, kind, pick), fig("ort-node", t, kind, pick), 1.2])),
    ...WHOLE_PROGRAMS.filter(([, , , scales]) => scales).map(([label, kind, pick]): Target => [`${label}: 2 threads vs 1`, fig("xlats-native", 2, kind, pick), fig("xlats-native", 1, kind, pick), 1.6]),
  ];
  // Issue 23's targets, on the largest matmul of the plan (4096 in the GPU benches' plan):
  // meant for a real GPU; on SwiftShader they only show that all runs.
  const largestLabel = largest === undefined ? "matmul" : describe(largest.full);
  const largestGpu = (name: string): (number | undefined)[] => fig(name, 1, "matmul", (p) => p === largest);
  const gpuTargets: Target[] = [
    [`${largestLabel} vs jax-webgpu`, largestGpu("xlats-webgpu"), largestGpu("jax-webgpu"), 1.2],
    ...(gpuPeakGflops !== undefined ? [[`${largestLabel}, share of the adapter's f32 FMA peak (${fmt(gpuPeakGflops)} GFLOP/s)`,
      largestGpu("xlats-webgpu"), rounds.map(() => gpuPeakGflops), 0.5] satisfies Target] : []),
    ["softmax vs tfjs-webgpu", fig("xlats-webgpu", 1, "softmax"), fig("tfjs-webgpu", 1, "softmax"), 2],
    ["encoder vs ort-webgpu", fig("xlats-webgpu", 1, "transformer"), fig("ort-webgpu", 1, "transformer"), 1.5],
    ["gpt2 prefill vs ort-webgpu", fig("xlats-webgpu", 1, "gpt2", phase("prefill")), fig("ort-webgpu", 1, "gpt2", phase("prefill")), 1.5],
  ];
  const judge = (backend: string) => ([name, ours, theirs, goal]: Target): TargetResult => {
    const ratios = perRoundRatio(ours, theirs);
    const measured = ratios.filter((x): x is number => x !== undefined);
    return {
      backend, name, goal, ratio: measured.length > 0 ? median(measured) : undefined,
      heldRounds: measured.filter((x) => x >= goal).length, rounds: rounds.length, measured: fmtRatios(ratios) ?? "n/a",
    };
  };
  const ran = new Set(rounds.flat().map((c) => c.runner.name));
  return [
    ...(ran.has("xlats-wasm") || (!ran.has("xlats-native") && !ran.has("xlats-webgpu")) ? targets.map(judge("xlats-wasm")) : []),
    ...(ran.has("xlats-webgpu") ? gpuTargets.map(judge("xlats-webgpu")) : []),
    ...(ran.has("xlats-native") ? nativeTargets.map(judge("xlats-native")) : []),
  ];
}

/** evaluateTargets' results as markdown tables, one for each backend's targets: met or not. */
export function buildTargets(plan: readonly PlannedWorkload[], rounds: Rounds, gpuPeakGflops?: number): string {
  const lines: string[] = [];
  let backend: string | undefined;
  for (const t of evaluateTargets(plan, rounds, gpuPeakGflops)) {
    if (t.backend !== backend) {
      if (lines.length > 0) lines.push("");
      lines.push(`| target (${t.backend}) | goal | measured | met |`, "|---|---|---|---|");
      backend = t.backend;
    }
    const held = t.rounds > 1 && t.ratio !== undefined ? ` (${t.heldRounds} of ${t.rounds} rounds)` : "";
    lines.push(`| ${t.name} | ≥ ${t.goal}× | ${t.measured} | ${t.ratio === undefined ? "—" : t.ratio >= t.goal ? "yes" : "no"}${held} |`);
  }
  return lines.join("\n");
}


/**
 * The GEMM-bound whole programs' FLOP rates beside the machine's FMA peak of the same
 * sitting (peak.ts; the better of its start and end probes): each native library's share
 * of the peak, and the most that xlats-native could lead ort-node by if it ran at the
 * peak itself (peak / ort-node). A target ratio above that bound cannot be met in this
 * sitting by any kernel; one below it can.
 */
export function buildCeiling(plan: readonly PlannedWorkload[], rounds: Rounds, peaks: readonly PeakFlops[]): string {
  const measured = peaks.filter((p): p is Extract<PeakFlops, { byThreads: unknown }> => "byThreads" in p);
  if (measured.length === 0) {
    const why = peaks.map((p) => ("unavailable" in p ? p.unavailable : "")).find((s) => s !== "");
    return `FMA peak not measured${why !== undefined ? `: ${why}` : ""}.`;
  }
  const threadCounts = [...measured[0]!.byThreads.keys()];
  const peakAt = (t: number): number => Math.max(...measured.map((m) => m.byThreads.get(t) ?? 0));
  const probes = threadCounts.map((t) => `${t} thread${t > 1 ? "s" : ""} ${measured.map((m) => fmt(m.byThreads.get(t) ?? 0)).join(" / ")}`);
  const lines = [
    `FMA peak (a C loop of independent FMAs on the widest vectors the machine has, GFLOP/s, at the start / end of the sitting): ${probes.join("; ")}.`,
    "",
    "| GEMM-bound program | threads | peak GFLOP/s | xlats-native GFLOP/s (of peak) | ort-node GFLOP/s (of peak) | most xlats-native could lead ort-node |",
    "|---|---|---|---|---|---|",
  ];
  // The median over the rounds' rates (the peak is probed once before the first round and once after the last).
  const rate = (name: string, t: number, p: PlannedWorkload): number | undefined => {
    const steps = rounds.map((cells) => figureOf(findCell(cells, name, t, p.kind, describe(p.full)), p)).filter((x): x is number => x !== undefined);
    return steps.length === 0 ? undefined : median(steps) * flops(p.full) / 1e9;
  };
  for (const [label, kind, pick] of WHOLE_PROGRAMS) {
    const p = plan.find((q) => q.kind === kind && (pick === undefined || pick(q)));
    if (p === undefined || phase("decode")(p)) continue; // the decode step is bound by memory, not by the FMA units
    for (const t of threadCounts) {
      const peak = peakAt(t), ours = rate("xlats-native", t, p), theirs = rate("ort-node", t, p);
      if (ours === undefined && theirs === undefined) continue;
      const share = (x: number | undefined): string => x === undefined ? "n/a" : `${fmt(x)} (${Math.round((100 * x) / peak)}%)`;
      lines.push(`| ${label} | ${t} | ${fmt(peak)} | ${share(ours)} | ${share(theirs)} | ${theirs === undefined ? "n/a" : `${fmtRatio(peak / theirs)}×`} |`);
    }
  }
  return lines.join("\n");
}

/**
 * The GPU libraries' FLOP rates on the GFLOP/s workloads (the matmuls, conv) as shares of
 * the adapter's f32 FMA rate measured in the same sitting (gpu_peak.ts): how much room a
 * kernel has left on this GPU, and issue 23's "at least 50% of the adapter's peak".
 */
export function buildGpuCeiling(plan: readonly PlannedWorkload[], rounds: Rounds, peakGflops: number): string {
  const ran = GPU_LIBRARIES.filter((l) => rounds.flat().some((c) => c.runner.name === l));
  const lines = [`| workload | ${ran.map((l) => `${l} GFLOP/s (of peak)`).join(" | ")} |`, `|---|${ran.map(() => "---").join("|")}|`];
  for (const p of plan) {
    if (measure(p.full).unit !== "GFLOP/s") continue;
    const share = (name: string): string => {
      const xs = rounds.map((cells) => figureOf(findCell(cells, name, 1, p.kind, describe(p.full)), p)).filter((x): x is number => x !== undefined);
      if (xs.length === 0) return "—";
      const x = median(xs);
      return `${fmt(x)} (${Math.round((100 * x) / peakGflops)}%)`;
    };
    lines.push(`| ${describe(p.full)} | ${ran.map(share).join(" | ")} |`);
  }
  return lines.join("\n");
}
