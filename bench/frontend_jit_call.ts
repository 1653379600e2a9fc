// What the jit call adds around its program: the MLP training step (as frontend_mlp.ts)
// on one backend, timed three ways in paired rounds (frontend_common.ts): the hand-built
// program's `execute`, `execute` of the program jit traced (compiled once from
// `lower`), and the jit call itself (flattening the arguments, the signature's key, the
// cache lookup, the result arrays). The first two differ by the programs; the last two
// by the call's own work.
//
//   npm run build && node dist/bench/frontend_jit_call.js [wasm|native] [batch inputs hidden classes] [rounds]

import { loadavg } from "node:os";
import { numpy as np, nn, jit, valueAndGrad, treeMap, type ConcreteArray, type FrontendArray } from "../src/index.js";
import { buildMlpStep } from "./workloads/mlp.js";
import { inputShapes, makeInputs, type Workload } from "./workloads/specs.js";
import { balancedRounds, handBuiltProgram, paired, printRatios } from "./frontend_common.js";
import { probeArgs } from "./harness/probe_args.js";

type A = FrontendArray;
type Params = [A, A, A, A];

const { backend, batch, inputs, hidden, classes, rounds: roundsGiven } = probeArgs("frontend_jit_call", {
  words: [
    { name: "backend", kind: "string", default: "native", choices: ["wasm", "native"], help: "the backend" },
    { name: "batch", kind: "number", default: 64, min: 1, integer: true, help: "batch" },
    { name: "inputs", kind: "number", default: 256, min: 1, integer: true, help: "input features" },
    { name: "hidden", kind: "number", default: 256, min: 1, integer: true, help: "hidden units" },
    { name: "classes", kind: "number", default: 10, min: 1, integer: true, help: "classes" },
    { name: "rounds", kind: "number", min: 1, integer: true, help: "paired rounds (default: balancedRounds(3, 6))" },
  ],
});
const w: Extract<Workload, { kind: "mlp" }> = { kind: "mlp", batch, inputs, hidden, classes, learningRate: 0.1 };

const data = makeInputs(w);
const shapes = inputShapes(w);
const hand = await handBuiltProgram(buildMlpStep(w), w, data, backend);
const [x, y, ...params] = data.map((d, i) => np.reshape(np.array(d), shapes[i]!)) as [A, A, ...Params];
const loss = ([w1, b1, w2, b2]: Params, xs: A, ys: A): A => {
  const h = nn.relu(np.add(np.matmul(xs, w1), b1));
  return np.multiply(np.sum(np.multiply(ys, nn.logSoftmax(np.add(np.matmul(h, w2), b2)))), -1 / w.batch);
};
const step = jit((p: Params, xs: A, ys: A) => {
  const [value, grads] = valueAndGrad(loss)(p, xs, ys);
  return [value as A, treeMap((a, g) => np.subtract(a as A, np.multiply(g as A, w.learningRate)), p, grads)];
}, { backend });
const traced = step.lower(params, x, y).compile().executable;
const buffers = [...params, x, y].map((a) => (a as ConcreteArray).buffer);

const candidates = {
  "hand-built": hand.run,
  "traced": (): void => { for (const out of traced.execute(buffers)) out.delete(); },
  "jit call": (): void => {
    const [value, updated] = step(params, x, y) as unknown as [ConcreteArray, ConcreteArray[]];
    value.dispose();
    for (const u of updated) u.dispose();
  },
};
const rounds = roundsGiven ?? balancedRounds(3, 6);
const calls = Math.max(5, Math.round(1e8 / (6 * w.batch * (w.inputs * w.hidden + w.hidden * w.classes))));
const steps = await paired(candidates, calls, rounds);
console.log(`${backend}: mlp step ${w.inputs}-${w.hidden}-${w.classes} b${w.batch}, ${rounds} rounds of ${calls} calls, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
printRatios(steps, "traced");
