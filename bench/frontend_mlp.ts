// The front end's speed on the MLP training step: jit(valueAndGrad(loss)) plus the SGD
// update, against the same step built by hand with the builder (bench/workloads/mlp.ts,
// the backward pass written out) on the same device, and against jax-js's jit of
// valueAndGrad (bench/peers/jax.mjs); and the eager per-op overhead (np.add of two
// 4-element arrays). Timed in pairs (frontend_common.ts).
//
//   npm run build && node dist/bench/frontend_mlp.js [batch inputs hidden classes] [rounds]

import { loadavg } from "node:os";
import { numpy as np, nn, jit, valueAndGrad, treeMap, type ConcreteArray, type FrontendArray } from "../src/index.js";
import { buildMlpStep } from "./workloads/mlp.js";
import { inputShapes, makeInputs, type Workload } from "./workloads/specs.js";
import { handBuiltProgram, jaxJsPeer, paired, printRatios } from "./frontend_common.js";

type A = FrontendArray;
type Params = [A, A, A, A];

const argv = process.argv.slice(2).map(Number);
const [batch, inputs, hidden, classes] = argv.length >= 4 ? argv : [64, 256, 256, 10];
const rounds = argv[4] ?? 12; // two cycles of the six orders of three candidates
const w: Extract<Workload, { kind: "mlp" }> = { kind: "mlp", batch: batch!, inputs: inputs!, hidden: hidden!, classes: classes!, learningRate: 0.1 };

async function main(): Promise<void> {
  const data = makeInputs(w);
  const shapes = inputShapes(w);
  // The hand-built program, compiled for the front end's device, its arguments on the device once.
  const handBuilt = (await handBuiltProgram(buildMlpStep(w), w, data)).run;

  // The front end: the loss written as numpy, differentiated and jitted.
  const arrays = data.map((d, i) => np.reshape(np.array(Array.from(d), { dtype: "float32" }), shapes[i]!));
  const [x, y, ...params] = arrays as [A, A, ...Params];
  const loss = ([w1, b1, w2, b2]: Params, xs: A, ys: A): A => {
    const h = nn.relu(np.add(np.matmul(xs, w1), b1));
    const logp = nn.logSoftmax(np.add(np.matmul(h, w2), b2));
    return np.multiply(np.sum(np.multiply(ys, logp)), -1 / w.batch);
  };
  const step = jit((p: Params, xs: A, ys: A) => {
    const [value, grads] = valueAndGrad(loss)(p, xs, ys);
    const sgd = (...leaves: unknown[]): A => np.subtract(leaves[0] as A, np.multiply(leaves[1] as A, w.learningRate));
    return [value, treeMap(sgd, p, grads)];
  });
  const frontEnd = (): void => {
    const [value, updated] = step(params, x, y) as unknown as [ConcreteArray, ConcreteArray[]];
    value.dispose();
    for (const u of updated) u.dispose();
  };

  // jax-js, through the bench's peer runner (skipped where bench's packages are not installed).
  const jaxJs = await jaxJsPeer(w, data, shapes);

  const calls = Math.max(5, Math.round(2e8 / (6 * w.batch * (w.inputs * w.hidden + w.hidden * w.classes))));
  const steps = await paired({ "hand-built": handBuilt, "front end": frontEnd, ...(jaxJs ? { "jax-js": jaxJs } : {}) }, calls, rounds);
  console.log(`mlp step ${w.inputs}-${w.hidden}-${w.classes} b${w.batch}, ${rounds} rounds of ${calls} calls, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  printRatios(steps, "hand-built");

  const a = np.array([1, 2, 3, 4], { dtype: "float32" });
  const b = np.array([4, 3, 2, 1], { dtype: "float32" });
  const perOp = await paired({ "np.add": () => { (np.add(a, b) as ConcreteArray).dispose(); } }, 2000, rounds);
  console.log(`eager np.add of 4 floats: wall ${(perOp["np.add"]!.wallMs * 1000).toFixed(1)} µs/op, CPU ${(perOp["np.add"]!.cpuMs * 1000).toFixed(1)} µs/op`);
}

await main();
