// The front end's speed on the MLP training step: jit(valueAndGrad(loss)) plus the SGD
// update, against the same step built by hand with the builder (bench/workloads/mlp.ts,
// the backward pass written out) on the same device and backend, and against jax-js's
// jit of valueAndGrad (bench/peers/jax.mjs), on the wasm backend and on the native one
// (where a C compiler is found); and the eager per-op overhead (np.add of two 4-element
// arrays). Timed in pairs (frontend_common.ts).
//
//   npm run build && node dist/bench/frontend_mlp.js [batch inputs hidden classes] [rounds]

import { loadavg } from "node:os";
import { numpy as np, nn, jit, valueAndGrad, treeMap, type ConcreteArray, type FrontendArray } from "../src/index.js";
import { buildMlpStep } from "./workloads/mlp.js";
import { inputShapes, makeInputs, type Workload } from "./workloads/specs.js";
import { balancedRounds, benchBackends, handBuiltProgram, jaxJsPeer, paired, printPairRatios, printRatios } from "./frontend_common.js";
import { probeArgs } from "./harness/probe_args.js";

type A = FrontendArray;
type Params = [A, A, A, A];

const { batch, inputs, hidden, classes, rounds: roundsGiven } = probeArgs("frontend_mlp", {
  words: [
    { name: "batch", kind: "number", default: 64, min: 1, integer: true, help: "batch" },
    { name: "inputs", kind: "number", default: 256, min: 1, integer: true, help: "input features" },
    { name: "hidden", kind: "number", default: 256, min: 1, integer: true, help: "hidden units" },
    { name: "classes", kind: "number", default: 10, min: 1, integer: true, help: "classes" },
    { name: "rounds", kind: "number", min: 1, integer: true, help: "paired rounds (default: balancedRounds)" },
  ],
});
const w: Extract<Workload, { kind: "mlp" }> = { kind: "mlp", batch, inputs, hidden, classes, learningRate: 0.1 };

async function main(): Promise<void> {
  const data = makeInputs(w);
  const shapes = inputShapes(w);
  const backends = benchBackends();

  // The front end: the loss written as numpy, differentiated and jitted.
  const arrays = data.map((d, i) => np.reshape(np.array(Array.from(d), { dtype: "float32" }), shapes[i]!));
  const [x, y, ...params] = arrays as [A, A, ...Params];
  const loss = ([w1, b1, w2, b2]: Params, xs: A, ys: A): A => {
    const h = nn.relu(np.add(np.matmul(xs, w1), b1));
    const logp = nn.logSoftmax(np.add(np.matmul(h, w2), b2));
    return np.multiply(np.sum(np.multiply(ys, logp)), -1 / w.batch);
  };
  const trainStep = (p: Params, xs: A, ys: A): [A, Params] => {
    const [value, grads] = valueAndGrad(loss)(p, xs, ys);
    const sgd = (...leaves: unknown[]): A => np.subtract(leaves[0] as A, np.multiply(leaves[1] as A, w.learningRate));
    return [value as A, treeMap(sgd, p, grads) as Params];
  };
  // Per backend: the hand-built program (its arguments on the device once) and the front end's jit.
  const candidates: Record<string, () => void | Promise<void>> = {};
  for (const backend of backends) {
    candidates[`hand ${backend}`] = (await handBuiltProgram(buildMlpStep(w), w, data, backend)).run;
    const step = jit(trainStep, { backend });
    candidates[`front ${backend}`] = (): void => {
      const [value, updated] = step(params, x, y) as unknown as [ConcreteArray, ConcreteArray[]];
      value.dispose();
      for (const u of updated) u.dispose();
    };
  }

  // jax-js, through the bench's peer runner (skipped where bench's packages are not installed).
  const jaxJs = await jaxJsPeer(w, data, shapes);

  const calls = Math.max(5, Math.round(2e8 / (6 * w.batch * (w.inputs * w.hidden + w.hidden * w.classes))));
  if (jaxJs !== undefined) candidates["jax-js"] = jaxJs;
  const rounds = roundsGiven ?? balancedRounds(Object.keys(candidates).length);
  const steps = await paired(candidates, calls, rounds);
  console.log(`mlp step ${w.inputs}-${w.hidden}-${w.classes} b${w.batch}, ${rounds} rounds of ${calls} calls, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  printRatios(steps, "hand wasm");
  printPairRatios(steps, [["front native", "jax-js"], ["front wasm", "jax-js"], ["front native", "hand native"], ["front wasm", "hand wasm"], ["front native", "front wasm"]]);

  const a = np.array([1, 2, 3, 4], { dtype: "float32" });
  const b = np.array([4, 3, 2, 1], { dtype: "float32" });
  const perOp = await paired({ "np.add": () => { (np.add(a, b) as ConcreteArray).dispose(); } }, 2000, 12);
  console.log(`eager np.add of 4 floats: wall ${(perOp["np.add"]!.wallMs * 1000).toFixed(1)} µs/op, CPU ${(perOp["np.add"]!.cpuMs * 1000).toFixed(1)} µs/op`);
}

await main();
