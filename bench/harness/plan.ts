// Which workloads run, at which sizes, and the runner line-up.

import type { Workload } from "../workloads/specs.js";

export interface PlannedWorkload {
  /** Matches --only: the workload's kind. */
  readonly kind: Workload["kind"];
  readonly full: Workload;
  /** What the interpreter runs instead (its figure is scaled per FLOP or byte). */
  readonly reduced: Workload;
}

/** The sizes, or small ones with --quick. */
export function planWorkloads(quick: boolean): PlannedWorkload[] {
  const M = 1 << 20;
  const matmul = (n: number): Workload => ({ kind: "matmul", m: n, k: n, n });
  const list: [Workload, Workload][] = [];
  for (const n of quick ? [128, 256] : [256, 512, 1024, 2048]) list.push([matmul(n), matmul(Math.min(n, 128))]);
  const vector = quick ? M / 4 : 4 * M;
  const small = 64 * 1024;
  list.push([{ kind: "fused", n: vector }, { kind: "fused", n: small }]);
  list.push([{ kind: "add", n: vector }, { kind: "add", n: small }]);
  list.push([{ kind: "sum", n: quick ? M : 16 * M }, { kind: "sum", n: 4 * small }]);
  list.push([
    quick ? { kind: "softmax", rows: 256, cols: 256 } : { kind: "softmax", rows: 4096, cols: 1024 },
    { kind: "softmax", rows: 256, cols: 256 },
  ]);
  const conv = (batch: number, size: number, inChannels: number, outChannels: number): Workload =>
    ({ kind: "conv", batch, height: size, width: size, inChannels, outChannels, kernel: 3 });
  list.push([quick ? conv(2, 16, 16, 32) : conv(8, 64, 32, 64), conv(1, 16, 8, 16)]);
  const mlp = (batch: number, inputs: number, hidden: number): Workload =>
    ({ kind: "mlp", batch, inputs, hidden, classes: 10, learningRate: 0.1 });
  list.push([quick ? mlp(32, 784, 128) : mlp(128, 784, 512), mlp(16, 196, 64)]);
  const encoder = (seq: number, model: number, ff: number): Workload => ({ kind: "transformer", seq, model, heads: 4, ff });
  list.push([quick ? encoder(32, 64, 128) : encoder(128, 256, 1024), encoder(16, 32, 64)]);
  // GPT-2 small's blocks (d 768, 12 heads, MLP 3072), two of them: a prompt of 128 tokens, and
  // one token decoded against a cache of 127.
  const gpt2 = (phase: "prefill" | "decode", seq: number, model: number, heads: number, blocks: number): Workload =>
    ({ kind: "gpt2", phase, seq, model, heads, ff: 4 * model, blocks });
  for (const phase of ["prefill", "decode"] as const) {
    list.push([quick ? gpt2(phase, 32, 128, 4, 2) : gpt2(phase, 128, 768, 12, 2), gpt2(phase, 8, 32, 2, 1)]);
  }
  const mlpInfer = (batch: number, ...sizes: number[]): Workload => ({ kind: "mlp-infer", batch, sizes });
  list.push([quick ? mlpInfer(16, 784, 256, 256, 10) : mlpInfer(64, 784, 1024, 1024, 10), mlpInfer(8, 64, 32, 32, 10)]);
  return list.map(([full, reduced]) => ({ kind: full.kind, full, reduced }));
}

/** The kinds the GPU benches run (not add, sum or the MLP's inference: none of issue 23's targets). */
const GPU_KINDS: ReadonlySet<string> = new Set(["matmul", "gpt2", "transformer", "softmax", "fused", "conv", "mlp"]);
/** Issue 23's targets' kinds beside the largest matmul, in the order a GPU sitting runs them: the decoder (GPT-2), the encoder, softmax. */
const GPU_TARGET_KINDS: readonly string[] = ["gpt2", "transformer", "softmax"];

/** The matmul of the most FLOPs in `plan` (issue 23's matmul target), if any. */
export function largestMatmul(plan: readonly PlannedWorkload[]): PlannedWorkload | undefined {
  const size = (p: PlannedWorkload): number => (p.full.kind === "matmul" ? p.full.m * p.full.k * p.full.n : 0);
  return plan.filter((p) => p.kind === "matmul").reduce<PlannedWorkload | undefined>((best, p) => (best === undefined || size(p) > size(best) ? p : best), undefined);
}

/** Whether `p` is one of issue 23's targets' workloads in `plan`: its largest matmul, GPT-2's blocks, the encoder, softmax. */
export function isGpuTargetWorkload(p: PlannedWorkload, plan: readonly PlannedWorkload[]): boolean {
  return GPU_TARGET_KINDS.includes(p.kind) || p === largestMatmul(plan);
}

/**
 * The workloads of the GPU benches (bench/webgpu_node.ts in Node on Dawn, `npm run
 * bench:webgpu` in Chromium): the issue's matmul of 4096 (the largest of --quick's), then
 * the other targets' workloads (the decoder's first), then the rest. A sitting with a time
 * limit (a lent GPU machine's ten minutes) spends it on the targets first.
 */
export function planGpuWorkloads(quick: boolean): PlannedWorkload[] {
  const cpu = planWorkloads(quick).filter((p) => GPU_KINDS.has(p.kind));
  const matmul4096: PlannedWorkload = { kind: "matmul", full: { kind: "matmul", m: 4096, k: 4096, n: 4096 }, reduced: cpu[0]!.reduced };
  const all = quick ? cpu : [matmul4096, ...cpu];
  const targets = [largestMatmul(all)!, ...GPU_TARGET_KINDS.flatMap((kind) => all.filter((p) => p.kind === kind))];
  return [...targets, ...all.filter((p) => !targets.includes(p))];
}

export interface RunnerConfig {
  readonly name: string;
  readonly threads: number;
}

export const LIBRARIES = ["xlats-wasm", "xlats-native", "xlats-interp", "tfjs-wasm", "ort-web", "ort-node", "jax-js", "numpy"] as const;

/** The peers' modules under bench/peers/. */
export const PEER_FILES: Record<string, string> = {
  "tfjs-wasm": "tfjs_wasm.mjs",
  "ort-web": "ort_web.mjs",
  "ort-node": "ort_node.mjs",
  "jax-js": "jax.mjs",
  numpy: "numpy.mjs",
  "tfjs-webgpu": "tfjs_webgpu.mjs",
  "ort-webgpu": "ort_webgpu.mjs",
  "jax-webgpu": "jax_webgpu.mjs",
};

/** Peers that run WebAssembly (ort-node is native code: shown, but not a "peer" in the ratios). */
export const WASM_PEERS = ["tfjs-wasm", "ort-web", "jax-js"] as const;

/** The peers on the GPU, compared with xlats-webgpu (bench/webgpu_node.ts, `npm run bench:webgpu`), so not in LIBRARIES. */
export const GPU_PEERS = ["tfjs-webgpu", "ort-webgpu", "jax-webgpu"] as const;
export const GPU_LIBRARIES = ["xlats-webgpu", ...GPU_PEERS] as const;

export function planRunners(threads: readonly number[]): RunnerConfig[] {
  const out: RunnerConfig[] = [];
  for (const name of LIBRARIES) {
    for (const t of threads) {
      if (name === "xlats-interp" && t !== 1) continue;
      out.push({ name, threads: t });
    }
  }
  return out;
}
