// Training a two-layer perceptron with the front end: a synthetic two-class data set
// (two Gaussian blobs), softmax cross-entropy, gradients by valueAndGrad, Adam, and the
// whole step under one jit (traced and compiled once, then run every step).
//
//   npm run build && node dist/examples/train_mlp.js

import { numpy as np, nn, random, jit, valueAndGrad, optimizers, type FrontendArray } from "../src/index.js";

type A = FrontendArray;
interface Params { w1: A; b1: A; w2: A; b2: A }

const [samples, inputs, hidden, classes] = [256, 2, 16, 2];

/** Two blobs centred at (-1, -1) and (1, 1); the label is the blob. */
function dataset(key: A): { x: A; y: A } {
  const [kx, ky] = random.split(key) as unknown as A[];
  const labels = random.bernoulli(ky!, 0.5, [samples]);
  const centres = np.where(np.expandDims(labels, 1), 1, -1);
  const x = np.add(np.multiply(random.normal(kx!, [samples, inputs]), 0.7), centres);
  return { x, y: nn.oneHot(np.astype(labels, "int32"), classes) };
}

function initParams(key: A): Params {
  const [k1, k2] = random.split(key) as unknown as A[];
  return {
    w1: np.multiply(random.normal(k1!, [inputs, hidden]), Math.sqrt(2 / inputs)),
    b1: np.zeros([hidden]),
    w2: np.multiply(random.normal(k2!, [hidden, classes]), Math.sqrt(1 / hidden)),
    b2: np.zeros([classes]),
  };
}

function loss(p: Params, x: A, y: A): A {
  const h = nn.relu(np.add(np.matmul(x, p.w1), p.b1));
  const logits = np.add(np.matmul(h, p.w2), p.b2);
  return np.negative(np.mean(np.sum(np.multiply(y, nn.logSoftmax(logits)), { axis: 1 })));
}

/** Trains for `steps` steps; returns the loss before each step. */
export function train(steps: number, learningRate = 0.05): number[] {
  const [kData, kInit] = random.split(random.key(0)) as unknown as A[];
  const { x, y } = dataset(kData!);
  const optimizer = optimizers.adam(learningRate);
  const step = jit((p: Params, state: optimizers.AdamState, xs: A, ys: A) => {
    const [value, grads] = valueAndGrad(loss)(p, xs, ys);
    const [updates, next] = optimizer.update(grads, state);
    return [value, optimizers.applyUpdates(p, updates), next] as const;
  });
  let params = initParams(kInit!);
  let state = optimizer.init(params);
  const losses: number[] = [];
  for (let i = 0; i < steps; i++) {
    const [value, p, s] = step(params, state, x, y) as unknown as [A, Params, optimizers.AdamState];
    losses.push(Number(value.item()));
    params = p;
    state = s;
  }
  return losses;
}

if (process.argv[1]?.endsWith("train_mlp.js")) {
  const losses = train(200);
  for (const i of [0, 10, 50, 100, 199]) console.log(`step ${String(i).padStart(3)}: loss ${losses[i]!.toFixed(4)}`);
}
