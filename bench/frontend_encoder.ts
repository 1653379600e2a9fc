// The front end's speed on bench/'s transformer encoder block (workloads/transformer.ts,
// s128 d256 h4 ff1024 by default), written with numpy:
//   forward: jit(encoder) against the block built by hand with the builder and against
//     jax-js's jit of the same block (bench/peers/jax.mjs);
//   training: jit of valueAndGrad(mean(encoder(x)²)) over the eight weights plus an SGD
//     update, against jax-js's jit of the same step (written below with its API). There is
//     no hand-built backward pass of the encoder in bench/ to compare with.
// Each of the front end's and hand-built candidates on the wasm backend and on the native
// one (where a C compiler is found).
// Timed in pairs (frontend_common.ts). Results are checked: the front end's forward
// against the hand-built program's, its loss against jax-js's.
//
//   npm run build && node dist/bench/frontend_encoder.js [seq model heads ff] [rounds]

import { loadavg } from "node:os";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { numpy as np, nn, jit, valueAndGrad, type ConcreteArray, type FrontendArray } from "../src/index.js";
import { buildEncoderBlock } from "./workloads/transformer.js";
import { inputShapes, makeInputs, type Workload } from "./workloads/specs.js";
import { balancedRounds, benchBackends, handBuiltProgram, jaxJsPeer, paired, printPairRatios, printRatios, type Timing } from "./frontend_common.js";
import { probeArgs } from "./harness/probe_args.js";

type A = FrontendArray;
type Weights = [A, A, A, A, A, A, A, A];

const { seq, model, heads, ff, rounds: roundsGiven } = probeArgs("frontend_encoder", {
  words: [
    { name: "seq", kind: "number", default: 128, min: 1, integer: true, help: "sequence length" },
    { name: "model", kind: "number", default: 256, min: 1, integer: true, help: "model width" },
    { name: "heads", kind: "number", default: 4, min: 1, integer: true, help: "attention heads (dividing model)" },
    { name: "ff", kind: "number", default: 1024, min: 1, integer: true, help: "the MLP's width" },
    { name: "rounds", kind: "number", min: 1, integer: true, help: "paired rounds (default: balancedRounds)" },
  ],
});
const w: Extract<Workload, { kind: "transformer" }> = { kind: "transformer", seq, model, heads, ff };
const { seq: S, model: D, heads: H } = w;
const dh = D / H;
const learningRate = 0.01;

// ---- the front end's encoder, as bench/workloads/transformer.ts defines it

const layerNorm = (v: A): A => {
  const centered = np.subtract(v, np.mean(v, { axis: -1, keepdims: true }));
  const variance = np.mean(np.square(centered), { axis: -1, keepdims: true });
  return np.multiply(centered, np.reciprocal(np.sqrt(np.add(variance, 1e-5))));
};

function encoder(x: A, [wq, wk, wv, wo, w1, b1, w2, b2]: Weights): A {
  const n1 = layerNorm(x);
  // [S, D] -> [H, S, dh]
  const split = (wm: A): A => np.transpose(np.reshape(np.matmul(n1, wm), [S, H, dh]), [1, 0, 2]);
  const [q, k, v] = [split(wq), split(wk), split(wv)];
  const p = nn.softmax(np.multiply(np.matmul(q, np.swapaxes(k, 1, 2)), 1 / Math.sqrt(dh)), { axis: -1 });
  const context = np.reshape(np.transpose(np.matmul(p, v), [1, 0, 2]), [S, D]);
  const h1 = np.add(x, np.matmul(context, wo));
  const u = nn.relu(np.add(np.matmul(layerNorm(h1), w1), b1));
  return np.add(np.add(np.matmul(u, w2), b2), h1);
}

const loss = (weights: Weights, x: A): A => np.mean(np.square(encoder(x, weights)));

// ---- jax-js: its forward from the bench's peer runner; its training step here, line for line (with its .ref bookkeeping)

interface JaxJs {
  numpy: Record<string, (...a: unknown[]) => JaxArray>;
  nn: Record<string, (...a: unknown[]) => JaxArray>;
  jit: (f: (...a: JaxArray[]) => JaxArray[]) => (...a: JaxArray[]) => JaxArray[];
  valueAndGrad: (f: (p: JaxArray[], x: JaxArray) => JaxArray) => (p: JaxArray[], x: JaxArray) => [JaxArray, JaxArray[]];
  blockUntilReady: (a: JaxArray[]) => Promise<unknown>;
}
interface JaxArray { ref: JaxArray; dispose(): void; reshape(s: number[]): JaxArray; data(): Promise<Float32Array> }

function jaxTrainingStep(jax: JaxJs): (...a: JaxArray[]) => JaxArray[] {
  const { numpy: jnp, nn: jnn, jit: jjit, valueAndGrad: jvag } = jax;
  const ln = (v: JaxArray): JaxArray => {
    const centered = jnp.subtract!(v.ref, jnp.mean!(v, -1, { keepdims: true }));
    const variance = jnp.mean!(jnp.square!(centered.ref), -1, { keepdims: true });
    return jnp.multiply!(centered, jnp.reciprocal!(jnp.sqrt!(jnp.add!(variance, 1e-5))));
  };
  const lossOf = ([wq, wk, wv, wo, w1, b1, w2, b2]: JaxArray[], x: JaxArray): JaxArray => {
    const n1 = ln(x.ref);
    const split = (wm: JaxArray, perm: number[]): JaxArray => jnp.transpose!(jnp.reshape!(jnp.matmul!(n1.ref, wm), [S, H, dh]), perm);
    const q = split(wq!, [1, 0, 2]), kT = split(wk!, [1, 2, 0]), v = split(wv!, [1, 0, 2]);
    n1.dispose();
    const p = jnn.softmax!(jnp.multiply!(jnp.matmul!(q, kT), 1 / Math.sqrt(dh)), -1);
    const context = jnp.reshape!(jnp.transpose!(jnp.matmul!(p, v), [1, 0, 2]), [S, D]);
    const h1 = jnp.add!(x, jnp.matmul!(context, wo));
    const u = jnn.relu!(jnp.add!(jnp.matmul!(ln(h1.ref), w1), b1));
    return jnp.mean!(jnp.square!(jnp.add!(jnp.add!(jnp.matmul!(u, w2), b2), h1)));
  };
  return jjit((x, ...weights) => {
    const [value, grads] = jvag(lossOf)(weights.map((p) => p.ref), x);
    return [value, ...weights.map((p, i) => jnp.subtract!(p, jnp.multiply!(grads[i], learningRate)))];
  });
}

async function main(): Promise<void> {
  const data = makeInputs(w);
  const shapes = inputShapes(w);
  const arrays = data.map((d, i) => np.reshape(np.array(d), shapes[i]!));
  const [x, ...weights] = arrays as [A, ...Weights];
  const trainStep = (ws: Weights, xs: A): [A, A[]] => {
    const [value, grads] = valueAndGrad(loss)(ws, xs);
    return [value as A, ws.map((p, i) => np.subtract(p, np.multiply((grads as Weights)[i], learningRate)))];
  };
  const forwards: Record<string, () => void> = {};
  const trains: Record<string, () => void> = {};
  let frontLoss: number | undefined;
  for (const backend of benchBackends()) {
    const { exe, args, run } = await handBuiltProgram(buildEncoderBlock(w), w, data, backend);
    const forward = jit((xs: A, ws: Weights) => encoder(xs, ws), { backend });
    const train = jit(trainStep, { backend });
    forwards[`hand ${backend}`] = run;
    forwards[`front ${backend}`] = (): void => (forward(x, weights) as ConcreteArray).dispose();
    trains[`front ${backend}`] = (): void => {
      const [value, updated] = train(weights, x) as unknown as [ConcreteArray, ConcreteArray[]];
      value.dispose();
      for (const u of updated) u.dispose();
    };
    // The check: the front end's forward is the hand-built program's, to f32 rounding, and the losses agree across backends.
    const [handOut] = exe.execute(args);
    const expected = handOut!.toLiteral().values() as number[];
    handOut!.delete();
    const got = await (forward(x, weights) as ConcreteArray).data() as Float32Array;
    const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - expected[i]!) / (1 + Math.abs(expected[i]!))), 0);
    if (!(worst < 1e-4)) throw new Error(`${backend}: the front end's encoder differs from the hand-built one by ${worst}`);
    const value = (train(weights, x) as unknown as [ConcreteArray])[0].item() as number;
    if (frontLoss !== undefined && !(Math.abs(value - frontLoss) <= 1e-5 * Math.abs(frontLoss))) throw new Error(`losses differ: ${backend} ${value}, wasm ${frontLoss}`);
    frontLoss ??= value;
  }

  const jaxForward = await jaxJsPeer(w, data, shapes);
  let jaxTrain: (() => Promise<void>) | undefined;
  if (jaxForward !== undefined) {
    // The package as bench/'s own modules resolve it (bench/node_modules).
    const jax = await import(pathToFileURL(createRequire(new URL("../../bench/package.json", import.meta.url)).resolve("@jax-js/jax")).href) as JaxJs;
    const jaxArgs = data.map((d, i) => jax.numpy.array!(d).reshape(shapes[i]!));
    await jax.blockUntilReady(jaxArgs);
    const step = jaxTrainingStep(jax);
    const call = (): JaxArray[] => step(...jaxArgs.map((a) => a.ref));
    const [value, ...rest] = call();
    const jaxLoss = (await value!.data())[0]!;
    for (const r of rest) r.dispose();
    if (!(Math.abs(jaxLoss - frontLoss!) <= 1e-4 * Math.abs(frontLoss!))) throw new Error(`losses differ: jax-js ${jaxLoss}, front end ${frontLoss}`);
    jaxTrain = async () => { const outs = call(); await jax.blockUntilReady(outs); for (const o of outs) o.dispose(); };
  }

  const load = (): string => loadavg().map((l) => l.toFixed(1)).join(" ");
  const calls = 5;
  const pairs = [["front native", "jax-js"], ["front wasm", "jax-js"], ["front native", "hand native"], ["front wasm", "hand wasm"], ["front native", "front wasm"]] as const;
  const time = async (candidates: Record<string, () => void | Promise<void>>): Promise<[Record<string, Timing>, number]> => {
    const rounds = roundsGiven ?? balancedRounds(Object.keys(candidates).length);
    return [await paired(candidates, calls, rounds), rounds];
  };
  const [fwd, fwdRounds] = await time({ ...forwards, ...(jaxForward ? { "jax-js": jaxForward } : {}) });
  console.log(`encoder s${S} d${D} h${H} ff${w.ff} forward, ${fwdRounds} rounds of ${calls} calls, load ${load()}`);
  printRatios(fwd, "hand wasm");
  printPairRatios(fwd, pairs);
  const [step, stepRounds] = await time({ ...trains, ...(jaxTrain ? { "jax-js": jaxTrain } : {}) });
  console.log(`encoder training step (jit of valueAndGrad + SGD), loss ${frontLoss!.toPrecision(6)}, ${stepRounds} rounds of ${calls} calls, load ${load()}`);
  printRatios(step, "front wasm");
  printPairRatios(step, pairs);
}

await main();
