// @jax-js/jax on its "wasm" device, every program under jit() (fused, compiled kernels).
// Arrays follow jax-js's ownership rule: a function consumes its arguments, `.ref` keeps one.
// Threads: jax-js spreads kernels over a pool of Web Workers (the global Worker, one per
// navigator.hardwareConcurrency) when SharedArrayBuffer exists. Node 20 has no global
// Worker: at 2 threads a small shim over worker_threads stands in (web_worker_shim.mjs);
// at 1 thread there is no pool at all (kernels run on the calling thread).

import { convToChannelsFirst } from "./layouts.mjs";
import { installWebWorkerShim } from "./web_worker_shim.mjs";

let jaxPromise;

function program(jax, w) {
  const { numpy: np, nn, lax, jit, valueAndGrad } = jax;
  switch (w.kind) {
    case "matmul": return jit((a, b) => np.matmul(a, b));
    case "fused": return jit((a, b, c) => np.tanh(np.add(np.multiply(a, b), c)));
    case "add": return jit((a, b) => np.add(a, b));
    case "sum": return jit((x) => np.sum(x));
    case "softmax": return jit((x) => nn.softmax(x, -1));
    case "conv": return jit((x, k) => lax.conv(x, k, [1, 1], "SAME"));
    case "mlp": {
      const lossOf = ([w1, b1, w2, b2], x, y) => {
        const h = nn.relu(np.add(np.matmul(x, w1), b1));
        const logp = nn.logSoftmax(np.add(np.matmul(h, w2), b2), -1);
        return np.multiply(np.sum(np.multiply(y, logp)), -1 / w.batch);
      };
      return jit((x, y, w1, b1, w2, b2) => {
        const [loss, grads] = valueAndGrad(lossOf)([w1.ref, b1.ref, w2.ref, b2.ref], x, y);
        const params = [w1, b1, w2, b2];
        return [loss, ...params.map((p, i) => np.subtract(p, np.multiply(grads[i], w.learningRate)))];
      });
    }
    case "transformer": {
      const { seq: S, model: D, heads: H } = w;
      const dh = D / H;
      const layerNorm = (v) => {
        const centered = np.subtract(v.ref, np.mean(v, -1, { keepdims: true }));
        const variance = np.mean(np.square(centered.ref), -1, { keepdims: true });
        return np.multiply(centered, np.reciprocal(np.sqrt(np.add(variance, 1e-5))));
      };
      return jit((x, wq, wk, wv, wo, w1, b1, w2, b2) => {
        const n1 = layerNorm(x.ref);
        const heads = (wm, perm) => np.transpose(np.reshape(np.matmul(n1.ref, wm), [S, H, dh]), perm);
        const q = heads(wq, [1, 0, 2]), kT = heads(wk, [1, 2, 0]), v = heads(wv, [1, 0, 2]);
        n1.dispose();
        const p = nn.softmax(np.multiply(np.matmul(q, kT), 1 / Math.sqrt(dh)), -1);
        const ctx = np.reshape(np.transpose(np.matmul(p, v), [1, 0, 2]), [S, D]);
        const h1 = np.add(x, np.matmul(ctx, wo));
        const u = nn.relu(np.add(np.matmul(layerNorm(h1.ref), w1), b1));
        return [np.add(np.add(np.matmul(u, w2), b2), h1)];
      });
    }
    default: return undefined;
  }
}

/** `device` "webgpu" (jax_webgpu.mjs): the same programs on jax-js' WebGPU device, in a browser. */
export function createRunner({ threads, device = "wasm" }) {
  let jax;
  return {
    name: device === "wasm" ? "jax-js" : `jax-${device}`,
    threads,
    async init() {
      if (device !== "wasm" && threads !== 1) return "one GPU queue: thread counts do not apply";
      if (device === "wasm" && threads > 1) installWebWorkerShim(threads);
      jaxPromise ??= import("@jax-js/jax");
      jax = await jaxPromise;
      const devices = await jax.init(device);
      if (!devices.includes(device)) return `jax-js ${device} device did not start`;
      jax.defaultDevice(device);
      return undefined;
    },
    async setup(w, inputs, shapes) {
      const { numpy: np, blockUntilReady } = jax;
      let feeds = inputs, dims = shapes, back = (outs) => outs;
      if (w.kind === "conv") {
        const c = convToChannelsFirst(w, inputs);
        feeds = [c.x, c.kernel]; dims = [c.xDims, c.kernelDims]; back = (outs) => [c.back(outs[0])];
      }
      const args = feeds.map((data, i) => np.array(data).reshape(dims[i]));
      await blockUntilReady(args);
      const fn = program(jax, w);
      if (fn === undefined) return `no program for ${w.kind}`;
      const call = () => { const r = fn(...args.map((a) => a.ref)); return Array.isArray(r) ? r : [r]; };
      const run = async () => { const outs = call(); await blockUntilReady(outs); for (const o of outs) o.dispose(); };
      // On the GPU the first call compiles its pipelines: done here, before the harness times anything.
      if (device !== "wasm") await run();
      return {
        run,
        result: async () => back(await Promise.all(call().map(async (o) => Float32Array.from(await o.data())))),
        dispose: () => { for (const a of args) a.dispose(); fn.dispose?.(); },
      };
    },
  };
}
