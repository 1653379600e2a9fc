// @tensorflow/tfjs-backend-wasm (XNNPACK kernels, SIMD) through tfjs-core's ops. Its
// kernels run synchronously on the calling thread, so timing an op times its work.
// Threads: tfjs-backend-wasm forces WASM_HAS_MULTITHREAD_SUPPORT off under Node
// (tfjs issue 3830), so only the single-threaded SIMD build runs here.

let tfPromise;

async function loadTf() {
  tfPromise ??= (async () => {
    const tf = await import("@tensorflow/tfjs-core");
    const wasm = await import("@tensorflow/tfjs-backend-wasm");
    wasm.setWasmPaths(new URL("../node_modules/@tensorflow/tfjs-backend-wasm/dist/", import.meta.url).pathname);
    return { tf, wasm };
  })();
  return tfPromise;
}

/** The workload as tfjs ops over tensors `t` (the inputs; the weights from index firstWeight on). */
export function program(tf, w, t, firstWeight) {
  switch (w.kind) {
    case "matmul": return () => [tf.matMul(t[0], t[1])];
    case "fused": return () => [tf.tanh(tf.add(tf.mul(t[0], t[1]), t[2]))];
    case "add": return () => [tf.add(t[0], t[1])];
    case "sum": return () => [tf.sum(t[0])];
    case "softmax": return () => [tf.softmax(t[0])];
    case "conv": return () => [tf.conv2d(t[0], t[1], 1, "same")];
    case "mlp": {
      // The backward pass written out, as xlats and the ONNX model do: tfjs-core's CommonJS
      // build (what Node loads) registers no gradients; only the tfjs umbrella package does.
      // Transposes are explicit: tfjs-wasm's matMul with transposeA/B takes a path 10-20x
      // slower than transpose + matMul.
      const [x, y, w1, b1, w2, b2] = t;
      const lr = w.learningRate;
      return () => {
        const z = tf.add(tf.matMul(x, w1), b1);
        const h = tf.relu(z);
        const logits = tf.add(tf.matMul(h, w2), b2);
        const loss = tf.mul(tf.sum(tf.mul(y, tf.logSoftmax(logits))), -1 / w.batch);
        const dLogits = tf.mul(tf.sub(tf.softmax(logits), y), 1 / w.batch);
        const dW2 = tf.matMul(tf.transpose(h), dLogits);
        const dH = tf.matMul(dLogits, tf.transpose(w2));
        const dZ = tf.mul(dH, tf.step(z));
        const dW1 = tf.matMul(tf.transpose(x), dZ);
        return [loss, tf.sub(w1, tf.mul(dW1, lr)), tf.sub(b1, tf.mul(tf.sum(dZ, 0), lr)),
          tf.sub(w2, tf.mul(dW2, lr)), tf.sub(b2, tf.mul(tf.sum(dLogits, 0), lr))];
      };
    }
    case "transformer": {
      const { seq: S, model: D, heads: H } = w;
      const dh = D / H;
      const [x, wq, wk, wv, wo, w1, b1, w2, b2] = t;
      const layerNorm = (v) => {
        const centered = tf.sub(v, tf.mean(v, -1, true));
        return tf.mul(centered, tf.rsqrt(tf.add(tf.mean(tf.square(centered), -1, true), 1e-5)));
      };
      return () => {
        const n1 = layerNorm(x);
        const heads = (wm, perm) => tf.transpose(tf.reshape(tf.matMul(n1, wm), [S, H, dh]), perm);
        // k as [H, dh, S] directly (no transposeB: see the MLP above)
        const p = tf.softmax(tf.mul(tf.matMul(heads(wq, [1, 0, 2]), heads(wk, [1, 2, 0])), 1 / Math.sqrt(dh)));
        const ctx = tf.reshape(tf.transpose(tf.matMul(p, heads(wv, [1, 0, 2])), [1, 0, 2]), [S, D]);
        const h1 = tf.add(x, tf.matMul(ctx, wo));
        const u = tf.relu(tf.add(tf.matMul(layerNorm(h1), w1), b1));
        return [tf.add(tf.add(tf.matMul(u, w2), b2), h1)];
      };
    }
    case "gpt2": {
      // The weights are tensors made once before timing (tfjs has no other kind of constant).
      const { model: D, heads: H, seq: S, blocks } = w;
      const T = w.phase === "prefill" ? S : 1, dh = D / H;
      const mask = w.phase === "prefill" ? tf.tensor(Float32Array.from({ length: T * S }, (_, i) => (i % S > Math.floor(i / S) ? -1e9 : 0)), [T, S]) : undefined;
      const layerNorm = (v, scale, offset) => {
        const centered = tf.sub(v, tf.mean(v, -1, true));
        return tf.add(tf.mul(tf.mul(centered, tf.rsqrt(tf.add(tf.mean(tf.square(centered), -1, true), 1e-5))), scale), offset);
      };
      const gelu = (z) => tf.mul(tf.mul(z, 0.5), tf.add(tf.tanh(tf.mul(tf.add(z, tf.mul(tf.mul(tf.mul(z, z), z), 0.044715)), Math.sqrt(2 / Math.PI))), 1));
      return () => {
        let x = t[0];
        const caches = [];
        for (let blk = 0; blk < blocks; blk++) {
          const [ln1s, ln1o, wqkv, bqkv, wo, bo, ln2s, ln2o, w1, b1, w2, b2] = t.slice(firstWeight + 12 * blk, firstWeight + 12 * (blk + 1));
          const [q, kNew, vNew] = tf.split(tf.add(tf.matMul(layerNorm(x, ln1s, ln1o), wqkv), bqkv), 3, 1);
          // [T, D] as heads [H, T, dh], the caches' layout.
          const heads = (m) => tf.transpose(tf.reshape(m, [T, H, dh]), [1, 0, 2]);
          // Decode: the preallocated cache's past positions, then this token's.
          const withCache = (fresh, which) => (w.phase === "prefill" ? heads(fresh)
            : tf.concat([tf.slice(t[1 + 2 * blk + which], [0, 0, 0], [H, S - T, dh]), heads(fresh)], 1));
          const k = withCache(kNew, 0), v = withCache(vNew, 1);
          caches.push(k, v);
          // k as [H, dh, S] (no transposeB: see the MLP above)
          const scores = tf.mul(tf.matMul(heads(q), tf.transpose(k, [0, 2, 1])), 1 / Math.sqrt(dh));
          const p = tf.softmax(mask === undefined ? scores : tf.add(scores, mask));
          const ctx = tf.reshape(tf.transpose(tf.matMul(p, v), [1, 0, 2]), [T, D]);
          const h1 = tf.add(x, tf.add(tf.matMul(ctx, wo), bo));
          const u = gelu(tf.add(tf.matMul(layerNorm(h1, ln2s, ln2o), w1), b1));
          x = tf.add(h1, tf.add(tf.matMul(u, w2), b2));
        }
        return [x, ...caches];
      };
    }
    case "mlp-infer": {
      const layers = w.sizes.length - 1;
      return () => {
        let h = t[0];
        for (let i = 0; i < layers; i++) {
          const z = tf.add(tf.matMul(h, t[1 + 2 * i]), t[2 + 2 * i]);
          h = i < layers - 1 ? tf.relu(z) : z;
        }
        return [h];
      };
    }
    default: return undefined;
  }
}

export function createRunner({ threads }) {
  let tf;
  return {
    name: "tfjs-wasm",
    threads,
    async init() {
      const loaded = await loadTf();
      tf = loaded.tf;
      if (threads > 1 && tf.env().get("IS_NODE")) return "tfjs-backend-wasm disables threads under Node (tfjs#3830)";
      loaded.wasm.setThreadsCount(threads);
      if (!(await tf.setBackend("wasm"))) return "wasm backend failed to start";
      await tf.ready();
      return undefined;
    },
    async setup(w, inputs, shapes, firstWeight) {
      const t = inputs.map((data, i) => tf.tensor(data, shapes[i], "float32"));
      const fn = program(tf, w, t, firstWeight);
      if (fn === undefined) return `no program for ${w.kind}`;
      return {
        run: () => tf.dispose(tf.tidy(fn)),
        result: () => {
          const outs = tf.tidy(fn);
          const values = outs.map((o) => Float32Array.from(o.dataSync()));
          tf.dispose(outs);
          return values;
        },
        dispose: () => tf.dispose(t),
      };
    },
  };
}
