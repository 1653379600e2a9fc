// The benchmark's workloads as plain data: every runner (xlats and the JavaScript peers,
// which are plain .mjs files) builds its own program from the same description, and gets
// the same inputs, generated here from a fixed seed.

export type Workload =
  | { readonly kind: "matmul"; readonly m: number; readonly k: number; readonly n: number }
  /** tanh(a*b+c), elementwise over n f32: the fusion test. */
  | { readonly kind: "fused"; readonly n: number }
  | { readonly kind: "add"; readonly n: number }
  | { readonly kind: "sum"; readonly n: number }
  /** softmax along the last dimension of rows×cols. */
  | { readonly kind: "softmax"; readonly rows: number; readonly cols: number }
  /** NHWC input, HWIO kernel, SAME padding, stride 1. */
  | {
    readonly kind: "conv"; readonly batch: number; readonly height: number; readonly width: number;
    readonly inChannels: number; readonly outChannels: number; readonly kernel: number;
  }
  /**
   * One SGD step of a two-layer ReLU perceptron with softmax cross-entropy, labels one-hot
   * (f32). Inputs x, labels, w1, b1, w2, b2; outputs loss, w1', b1', w2', b2'.
   */
  | {
    readonly kind: "mlp"; readonly batch: number; readonly inputs: number; readonly hidden: number;
    readonly classes: number; readonly learningRate: number;
  }
  /**
   * A pre-LayerNorm transformer encoder block forward (LayerNorm without scale/offset,
   * eps 1e-5; attention projections without biases; ReLU MLP with biases):
   *   h = x + Wo·attention(LN(x)Wq, LN(x)Wk, LN(x)Wv);  y = h + relu(LN(h)W1 + b1)W2 + b2.
   * Inputs x[seq,model], wq, wk, wv, wo [model,model], w1[model,ff], b1[ff], w2[ff,model], b2[model].
   */
  | {
    readonly kind: "transformer"; readonly seq: number; readonly model: number; readonly heads: number;
    readonly ff: number;
  }
  /**
   * GPT-2 blocks, inference: pre-LayerNorm (scale and offset, eps 1e-5), one q/k/v projection
   * with bias, causal multi-head attention scaled by 1/sqrt(head size), output projection with
   * bias, a tanh-approximated GELU MLP with biases, residuals; `blocks` of them in a row (no
   * embeddings, no final LayerNorm).
   * Each block's k and v cache is heads-major, [heads, seq, model/heads], as GPT-2's exported
   * caches are (past_key_values), so that attention reads it without transposing it.
   *   prefill: x[seq, model] in; y[seq, model] and each block's k, v cache out.
   *   decode: the token at position seq-1, x[1, model], and each block's k, v cache in,
   *     preallocated as a deployed decode step has it: positions 0..seq-2 hold the past,
   *     position seq-1 is this step's (its value in is ignored); y[1, model] and each
   *     block's k, v cache with this step's position written out. xlats writes it into the
   *     cache in place (a dynamic-update-slice into the donated cache buffer); peers without
   *     donation copy the past positions and append.
   * Then the weights (see firstWeight), per block: ln1 scale, ln1 offset [model],
   * wqkv [model, 3·model], bqkv [3·model], wo [model, model], bo [model], ln2 scale, ln2 offset,
   * w1 [model, ff], b1 [ff], w2 [ff, model], b2 [model].
   */
  | {
    readonly kind: "gpt2"; readonly phase: "prefill" | "decode"; readonly seq: number; readonly model: number;
    readonly heads: number; readonly ff: number; readonly blocks: number;
  }
  /**
   * Inference through a ReLU perceptron of layer widths `sizes` (ReLU between layers, none
   * after the last): x[batch, sizes[0]] in, then the weights w_i [sizes[i], sizes[i+1]], b_i; logits out.
   */
  | { readonly kind: "mlp-infer"; readonly batch: number; readonly sizes: readonly number[] };

export type Gpt2 = Extract<Workload, { kind: "gpt2" }>;
export type MlpInfer = Extract<Workload, { kind: "mlp-infer" }>;

/** The names of one GPT-2 block's weights, in input order. */
export const GPT2_BLOCK_WEIGHTS = ["ln1Scale", "ln1Offset", "wqkv", "bqkv", "wo", "bo", "ln2Scale", "ln2Offset", "w1", "b1", "w2", "b2"] as const;

function gpt2BlockWeightShapes(w: Gpt2): number[][] {
  const { model: D, ff: F } = w;
  return [[D], [D], [D, 3 * D], [3 * D], [D, D], [D], [D], [D], [D, F], [F], [F, D], [D]];
}

/** A block's k or v cache: [heads, seq, head size]. */
export function gpt2CacheShape(w: Gpt2): number[] {
  return [w.heads, w.seq, w.model / w.heads];
}

/** Tokens a GPT-2 workload runs (its rows of x and y). */
export function gpt2Tokens(w: Gpt2): number {
  return w.phase === "prefill" ? w.seq : 1;
}

/**
 * Index of a workload's first weight input: inputs from there on are the model's weights,
 * which every runner builds into its program as constants (ONNX initializers), as a
 * deployed model has them; inputs before it are fed on every run.
 */
export function firstWeight(w: Workload): number {
  switch (w.kind) {
    case "gpt2": return w.phase === "prefill" ? 1 : 1 + 2 * w.blocks;
    case "mlp-infer": return 1;
    default: return inputShapes(w).length;
  }
}

/** How a row's figure is expressed: work per run, and its unit. */
export interface Measure {
  readonly unit: "GFLOP/s" | "GB/s" | "steps/s";
  /** FLOPs, bytes read and written, or 1 (a step) per run. */
  readonly amount: number;
}

export function describe(w: Workload): string {
  switch (w.kind) {
    case "matmul": return w.m === w.k && w.k === w.n ? `matmul ${w.m}` : `matmul ${w.m}x${w.k}x${w.n}`;
    case "fused": return `tanh(a*b+c) ${sizeLabel(w.n)}`;
    case "add": return `a+b ${sizeLabel(w.n)}`;
    case "sum": return `sum ${sizeLabel(w.n)}`;
    case "softmax": return `softmax ${w.rows}x${w.cols}`;
    case "conv": return `conv ${w.batch}x${w.height}x${w.width}x${w.inChannels}→${w.outChannels} ${w.kernel}x${w.kernel}`;
    case "mlp": return `mlp step ${w.inputs}-${w.hidden}-${w.classes} b${w.batch}`;
    case "transformer": return `encoder s${w.seq} d${w.model} h${w.heads} ff${w.ff}`;
    case "gpt2":
      return `gpt2 ${w.phase === "prefill" ? `prefill s${w.seq}` : `decode cache ${w.seq - 1}`} d${w.model} h${w.heads} x${w.blocks}`;
    case "mlp-infer": return `mlp infer ${w.sizes.join("-")} b${w.batch}`;
  }
}

function sizeLabel(n: number): string {
  return n >= 1 << 20 && n % (1 << 20) === 0 ? `${n >> 20}M` : n >= 1024 && n % 1024 === 0 ? `${n >> 10}K` : `${n}`;
}

export function measure(w: Workload): Measure {
  switch (w.kind) {
    case "matmul": return { unit: "GFLOP/s", amount: 2 * w.m * w.k * w.n };
    case "fused": return { unit: "GB/s", amount: 4 * 4 * w.n };
    case "add": return { unit: "GB/s", amount: 3 * 4 * w.n };
    case "sum": return { unit: "GB/s", amount: 4 * w.n };
    case "softmax": return { unit: "GB/s", amount: 2 * 4 * w.rows * w.cols };
    case "conv":
      return { unit: "GFLOP/s", amount: 2 * w.batch * w.height * w.width * w.outChannels * w.inChannels * w.kernel * w.kernel };
    case "mlp": case "transformer": case "gpt2": case "mlp-infer": return { unit: "steps/s", amount: 1 };
  }
}

/** FLOPs of one run, for whole programs too (to scale the interpreter's reduced sizes). */
export function flops(w: Workload): number {
  switch (w.kind) {
    case "mlp": return 6 * w.batch * (w.inputs * w.hidden + w.hidden * w.classes);
    case "transformer": {
      const projections = 2 * w.seq * w.model * w.model * 4;
      const attention = 2 * 2 * w.seq * w.seq * w.model;
      return projections + attention + 2 * 2 * w.seq * w.model * w.ff;
    }
    case "gpt2": {
      const tokens = gpt2Tokens(w), D = w.model;
      return w.blocks * (2 * tokens * (3 * D * D + D * D + 2 * D * w.ff) + 2 * 2 * tokens * w.seq * D);
    }
    case "mlp-infer": return w.sizes.slice(1).reduce((s, n, i) => s + 2 * w.batch * w.sizes[i]! * n, 0);
    default: return measure(w).amount;
  }
}

/**
 * Inputs that a runner with buffer donation gives up to each run and takes back from its
 * outputs (input i comes back as output i): the decode step's caches, updated in place,
 * as a decode loop feeds one step's caches to the next.
 */
export function donatedInputs(w: Workload): number[] {
  return w.kind === "gpt2" && w.phase === "decode" ? Array.from({ length: 2 * w.blocks }, (_, i) => 1 + i) : [];
}

/** Dimensions of each input, in the order every runner takes them. */
export function inputShapes(w: Workload): number[][] {
  switch (w.kind) {
    case "matmul": return [[w.m, w.k], [w.k, w.n]];
    case "fused": return [[w.n], [w.n], [w.n]];
    case "add": return [[w.n], [w.n]];
    case "sum": return [[w.n]];
    case "softmax": return [[w.rows, w.cols]];
    case "conv": return [[w.batch, w.height, w.width, w.inChannels], [w.kernel, w.kernel, w.inChannels, w.outChannels]];
    case "mlp":
      return [[w.batch, w.inputs], [w.batch, w.classes], [w.inputs, w.hidden], [w.hidden], [w.hidden, w.classes], [w.classes]];
    case "transformer": {
      const { seq, model, ff } = w;
      return [[seq, model], [model, model], [model, model], [model, model], [model, model], [model, ff], [ff], [ff, model], [model]];
    }
    case "gpt2": {
      const cache: number[][] = w.phase === "prefill" ? [] : Array.from({ length: 2 * w.blocks }, () => gpt2CacheShape(w));
      const weights = Array.from({ length: w.blocks }, () => gpt2BlockWeightShapes(w)).flat();
      return [[gpt2Tokens(w), w.model], ...cache, ...weights];
    }
    case "mlp-infer":
      return [[w.batch, w.sizes[0]!], ...w.sizes.slice(1).flatMap((n, i) => [[w.sizes[i]!, n], [n]])];
  }
}

/** Dimensions of each output. */
export function outputShapes(w: Workload): number[][] {
  switch (w.kind) {
    case "matmul": return [[w.m, w.n]];
    case "fused": case "add": return [[w.n]];
    case "sum": return [[]];
    case "softmax": return [[w.rows, w.cols]];
    case "conv": return [[w.batch, w.height, w.width, w.outChannels]];
    case "mlp": return [[], ...inputShapes(w).slice(2)];
    case "transformer": return [[w.seq, w.model]];
    case "gpt2": return [[gpt2Tokens(w), w.model], ...Array.from({ length: 2 * w.blocks }, () => gpt2CacheShape(w))];
    case "mlp-infer": return [[w.batch, w.sizes[w.sizes.length - 1]!]];
  }
}

export function elementCount(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/** A small fast PRNG (mulberry32), so inputs are the same in every sitting. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The inputs of a workload: uniform in [-scale, scale], scaled so results stay O(1). */
export function makeInputs(w: Workload, seed = 1234): Float32Array[] {
  const next = prng(seed);
  const shapes = inputShapes(w);
  const uniform = (n: number, scale: number): Float32Array => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = (2 * next() - 1) * scale;
    return a;
  };
  if (w.kind === "mlp") {
    const labels = new Float32Array(w.batch * w.classes);
    for (let i = 0; i < w.batch; i++) labels[i * w.classes + Math.floor(next() * w.classes)] = 1;
    return [
      uniform(w.batch * w.inputs, 1), labels,
      uniform(w.inputs * w.hidden, Math.sqrt(3 / w.inputs)), uniform(w.hidden, 0.1),
      uniform(w.hidden * w.classes, Math.sqrt(3 / w.hidden)), uniform(w.classes, 0.1),
    ];
  }
  if (w.kind === "transformer") {
    return shapes.map((dims, i) => {
      const fanIn = i === 0 ? 1 : dims.length === 2 ? dims[0]! : 10;
      return uniform(elementCount(dims), i === 0 ? 1 : Math.sqrt(3 / fanIn));
    });
  }
  if (w.kind === "gpt2") {
    // LayerNorm scales near 1, offsets and biases small, matrices scaled by 1/sqrt(fan-in):
    // activations stay O(1) through the blocks, as in a trained model.
    const first = firstWeight(w);
    return shapes.map((dims, i) => {
      const n = elementCount(dims);
      if (i < first) return uniform(n, 1);
      const name = GPT2_BLOCK_WEIGHTS[(i - first) % GPT2_BLOCK_WEIGHTS.length]!;
      if (name.endsWith("Scale")) return uniform(n, 0.1).map((v) => 1 + v);
      return uniform(n, dims.length === 2 ? Math.sqrt(3 / dims[0]!) : 0.1);
    });
  }
  if (w.kind === "mlp-infer") {
    return shapes.map((dims, i) => uniform(elementCount(dims), i === 0 ? 1 : dims.length === 2 ? Math.sqrt(3 / dims[0]!) : 0.1));
  }
  return shapes.map((dims) => uniform(elementCount(dims), 1));
}
