// A tiny character-level transformer language model trained with the front end: one
// pre-norm decoder block (two-head causal self-attention and a GELU MLP), token and
// position embeddings, weights from nn.initializers, next-character cross-entropy,
// gradients by valueAndGrad and AdamW, the whole step under one jit.
//
//   npm run build && node dist/examples/train_transformer.js

import { numpy as np, nn, random, jit, valueAndGrad, optimizers, type FrontendArray } from "../src/index.js";

type A = FrontendArray;

const TEXT = "the quick brown fox jumps over the lazy dog. ";
const VOCAB = [...new Set(TEXT)].sort();
const [contextLength, width, heads, hidden] = [8, 16, 2, 32];
const headWidth = width / heads;

interface Block { wq: A; wk: A; wv: A; wo: A; w1: A; b1: A; w2: A; b2: A; norm1: A; norm2: A }
interface Params { tokens: A; positions: A; block: Block; finalNorm: A; unembed: A }

/** Every window of contextLength + 1 characters of the (cyclic) text: inputs and the next characters. */
function dataset(): { inputs: A; targets: A } {
  const ids = [...TEXT].map((c) => VOCAB.indexOf(c));
  const windows = ids.map((_, start) => Array.from({ length: contextLength + 1 }, (_, i) => ids[(start + i) % ids.length]!));
  const all = np.array(windows, { dtype: "int32" });
  return { inputs: all.index(":", `0:${contextLength}`), targets: all.index(":", `1:${contextLength + 1}`) };
}

function initParams(key: A): Params {
  const [kTok, kPos, kq, kk, kv, ko, k1, k2, kOut] = random.split(key, 9) as unknown as A[];
  const dense = nn.initializers.glorotUniform();
  const embedding = nn.initializers.normal(0.1);
  return {
    tokens: embedding(kTok!, [VOCAB.length, width]),
    positions: embedding(kPos!, [contextLength, width]),
    block: {
      wq: dense(kq!, [width, width]), wk: dense(kk!, [width, width]), wv: dense(kv!, [width, width]), wo: dense(ko!, [width, width]),
      w1: dense(k1!, [width, hidden]), b1: np.zeros([hidden]), w2: dense(k2!, [hidden, width]), b2: np.zeros([width]),
      norm1: np.ones([width]), norm2: np.ones([width]),
    },
    finalNorm: np.ones([width]),
    unembed: dense(kOut!, [width, VOCAB.length]),
  };
}

const layerNorm = (x: A, gain: A): A => np.multiply(nn.standardize(x), gain);

/** [batch, time, width] -> [batch, heads, time, headWidth]. */
const splitHeads = (x: A): A => np.transpose(np.reshape(x, [x.shape[0]!, contextLength, heads, headWidth]), [0, 2, 1, 3]);

function attention(x: A, b: Block): A {
  const [q, k, v] = [b.wq, b.wk, b.wv].map((w) => splitHeads(np.matmul(x, w)));
  const scores = np.divide(np.matmul(q!, np.swapaxes(k!, -1, -2)), Math.sqrt(headWidth));
  const causal = np.greaterEqual(np.expandDims(np.arange(contextLength), 1), np.arange(contextLength));
  const weights = nn.softmax(np.where(causal, scores, -1e9));
  const mixed = np.transpose(np.matmul(weights, v!), [0, 2, 1, 3]);
  return np.matmul(np.reshape(mixed, [x.shape[0]!, contextLength, width]), b.wo);
}

/** Next-character logits [batch, time, vocabulary] of int32 inputs [batch, time]. */
function forward(p: Params, inputs: A): A {
  let x = np.add(np.matmul(nn.oneHot(inputs, VOCAB.length), p.tokens), p.positions);
  x = np.add(x, attention(layerNorm(x, p.block.norm1), p.block));
  const h = nn.gelu(np.add(np.matmul(layerNorm(x, p.block.norm2), p.block.w1), p.block.b1));
  x = np.add(x, np.add(np.matmul(h, p.block.w2), p.block.b2));
  return np.matmul(layerNorm(x, p.finalNorm), p.unembed);
}

function loss(p: Params, inputs: A, targets: A): A {
  const logProbs = nn.logSoftmax(forward(p, inputs));
  return np.negative(np.mean(np.sum(np.multiply(nn.oneHot(targets, VOCAB.length), logProbs), { axis: -1 })));
}

/** Trains for `steps` full-batch steps; returns the loss before each step. */
export function train(steps: number, learningRate = 0.01): number[] {
  const { inputs, targets } = dataset();
  const optimizer = optimizers.adamw(learningRate, { weightDecay: 1e-4 });
  const step = jit((p: Params, state: optimizers.AdamState) => {
    const [value, grads] = valueAndGrad(loss)(p, inputs, targets);
    const [updates, next] = optimizer.update(grads, state, p);
    return [value, optimizers.applyUpdates(p, updates), next] as const;
  });
  let params = initParams(random.key(0));
  let state = optimizer.init(params);
  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const [value, p, s] = step(params, state) as unknown as [A, Params, optimizers.AdamState];
    losses.push(Number(value.item()));
    params = p;
    state = s;
  }
  return losses;
}

if (process.argv[1]?.endsWith("train_transformer.js")) {
  const losses = train(300);
  for (const i of [0, 10, 50, 100, 299]) console.log(`step ${String(i).padStart(3)}: loss ${losses[i]!.toFixed(4)}`);
}
