// Every workload as an ONNX model (opset 17), built with onnx_builder.mjs. Conv takes
// NCHW / OIHW (ONNX's layout; the runner converts before timing). Input names are
// in0..inN-1 in the order of specs.ts; outputs come back in the order of outputShapes().

import { OnnxGraph } from "./onnx_builder.mjs";

/** LayerNorm without scale/offset along the last axis, eps 1e-5. */
function layerNorm(g, x) {
  const centered = g.op("Sub", [x, g.op("ReduceMean", [x], { axes: [-1], keepdims: 1 })]);
  const variance = g.op("ReduceMean", [g.op("Mul", [centered, centered])], { axes: [-1], keepdims: 1 });
  return g.op("Div", [centered, g.op("Sqrt", [g.op("Add", [variance, g.scalar(1e-5)])])]);
}

/**
 * { bytes, outputs: [name...] } for a workload; `shapes` are the inputs' dimensions. Inputs
 * from `firstWeight` on are initializers holding `values` (the model's weights); the others
 * are the graph's inputs in0, in1, ...
 */
export function buildOnnxModel(w, shapes, values = [], firstWeight = shapes.length) {
  const g = new OnnxGraph(w.kind);
  const ins = shapes.map((dims, i) => (i < firstWeight ? g.input(`in${i}`, dims) : g.weight(`w${i}`, dims, values[i])));
  const outs = [];
  const out = (name, dims) => { g.output(name, dims); outs.push(name); };
  switch (w.kind) {
    case "matmul": out(g.op("MatMul", ins), [w.m, w.n]); break;
    case "fused": out(g.op("Tanh", [g.op("Add", [g.op("Mul", [ins[0], ins[1]]), ins[2]])]), [w.n]); break;
    case "add": out(g.op("Add", ins), [w.n]); break;
    case "sum": out(g.op("ReduceSum", [ins[0]], { keepdims: 0 }), []); break;
    case "softmax": out(g.op("Softmax", ins, { axis: -1 }), [w.rows, w.cols]); break;
    case "conv": {
      const pad = Math.floor((w.kernel - 1) / 2), padHi = w.kernel - 1 - pad;
      out(g.op("Conv", ins, { kernel_shape: [w.kernel, w.kernel], pads: [pad, pad, padHi, padHi], strides: [1, 1] }),
        [w.batch, w.outChannels, w.height, w.width]);
      break;
    }
    case "mlp": {
      const [x, y, w1, b1, w2, b2] = ins;
      const z = g.op("Add", [g.op("MatMul", [x, w1]), b1]);
      const h = g.op("Relu", [z]);
      const logits = g.op("Add", [g.op("MatMul", [h, w2]), b2]);
      const logp = g.op("LogSoftmax", [logits], { axis: 1 });
      const loss = g.op("Mul", [g.op("ReduceSum", [g.op("Mul", [y, logp])], { keepdims: 0 }), g.scalar(-1 / w.batch)]);
      const dLogits = g.op("Mul", [g.op("Sub", [g.op("Softmax", [logits], { axis: 1 }), y]), g.scalar(1 / w.batch)]);
      const dW2 = g.op("Gemm", [h, dLogits], { transA: 1 });
      const dB2 = g.op("ReduceSum", [dLogits, g.ints([0])], { keepdims: 0 });
      const dH = g.op("Gemm", [dLogits, w2], { transB: 1 });
      const dZ = g.op("Where", [g.op("Greater", [z, g.scalar(0)]), dH, g.scalar(0)]);
      const dW1 = g.op("Gemm", [x, dZ], { transA: 1 });
      const dB1 = g.op("ReduceSum", [dZ, g.ints([0])], { keepdims: 0 });
      const lr = g.scalar(w.learningRate);
      const step = (p, grad) => g.op("Sub", [p, g.op("Mul", [grad, lr])]);
      out(loss, []);
      out(step(w1, dW1), shapes[2]); out(step(b1, dB1), shapes[3]); out(step(w2, dW2), shapes[4]); out(step(b2, dB2), shapes[5]);
      break;
    }
    case "transformer": {
      const { seq: S, model: D, heads: H } = w;
      const dh = D / H;
      const [x, wq, wk, wv, wo, w1, b1, w2, b2] = ins;
      const n1 = layerNorm(g, x);
      const split = g.ints([S, H, dh]);
      const headsOf = (wm, perm) => g.op("Transpose", [g.op("Reshape", [g.op("MatMul", [n1, wm]), split])], { perm });
      const q = headsOf(wq, [1, 0, 2]), kT = headsOf(wk, [1, 2, 0]), v = headsOf(wv, [1, 0, 2]);
      const p = g.op("Softmax", [g.op("Mul", [g.op("MatMul", [q, kT]), g.scalar(1 / Math.sqrt(dh))])], { axis: -1 });
      const ctx = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [p, v])], { perm: [1, 0, 2] }), g.ints([S, D])]);
      const h1 = g.op("Add", [x, g.op("MatMul", [ctx, wo])]);
      const u = g.op("Relu", [g.op("Add", [g.op("MatMul", [layerNorm(g, h1), w1]), b1])]);
      out(g.op("Add", [g.op("Add", [g.op("MatMul", [u, w2]), b2]), h1]), [S, D]);
      break;
    }
    case "gpt2": {
      const { model: D, heads: H, seq: S, blocks } = w;
      const T = w.phase === "prefill" ? S : 1, dh = D / H;
      // Prefill's causal mask, added to the scores: -1e9 where a position comes later.
      const mask = w.phase === "prefill"
        ? g.constant("float32", [T, S], Array.from({ length: T * S }, (_, i) => (i % S > Math.floor(i / S) ? -1e9 : 0))) : undefined;
      const gelu = (z) => {
        const inner = g.op("Mul", [g.op("Add", [z, g.op("Mul", [g.op("Mul", [g.op("Mul", [z, z]), z]), g.scalar(0.044715)])]),
          g.scalar(Math.sqrt(2 / Math.PI))]);
        return g.op("Mul", [g.op("Mul", [z, g.scalar(0.5)]), g.op("Add", [g.op("Tanh", [inner]), g.scalar(1)])]);
      };
      let x = ins[0];
      const caches = [];
      for (let blk = 0; blk < blocks; blk++) {
        const [ln1s, ln1o, wqkv, bqkv, wo, bo, ln2s, ln2o, w1, b1, w2, b2] = ins.slice(firstWeight + 12 * blk, firstWeight + 12 * (blk + 1));
        const ln = (v, scale, offset) => g.op("LayerNormalization", [v, scale, offset], { axis: -1, epsilon: 1e-5 });
        const qkv = g.op("Add", [g.op("MatMul", [ln(x, ln1s, ln1o), wqkv]), bqkv]);
        const [q, kNew, vNew] = g.op("Split", [qkv, g.ints([D, D, D])], { axis: 1 }, 3);
        // [T, D] as heads [H, T, dh], the caches' layout.
        const heads = (m) => g.op("Transpose", [g.op("Reshape", [m, g.ints([T, H, dh])])], { perm: [1, 0, 2] });
        // Decode: the preallocated cache's past positions, then this token's (ONNX has no donated buffers to write it into).
        const past = (cache) => g.op("Slice", [cache, g.ints([0]), g.ints([S - T]), g.ints([1])]);
        const withCache = (fresh, which) => (w.phase === "prefill" ? heads(fresh) : g.op("Concat", [past(ins[1 + 2 * blk + which]), heads(fresh)], { axis: 1 }));
        const k = withCache(kNew, 0), v = withCache(vNew, 1);
        caches.push(k, v);
        const kT = g.op("Transpose", [k], { perm: [0, 2, 1] });
        const scores = g.op("Mul", [g.op("MatMul", [heads(q), kT]), g.scalar(1 / Math.sqrt(dh))]);
        const p = g.op("Softmax", [mask === undefined ? scores : g.op("Add", [scores, mask])], { axis: -1 });
        const ctx = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [p, v])], { perm: [1, 0, 2] }), g.ints([T, D])]);
        const h1 = g.op("Add", [x, g.op("Add", [g.op("MatMul", [ctx, wo]), bo])]);
        const u = gelu(g.op("Add", [g.op("MatMul", [ln(h1, ln2s, ln2o), w1]), b1]));
        x = g.op("Add", [h1, g.op("Add", [g.op("MatMul", [u, w2]), b2])]);
      }
      out(x, [T, D]);
      for (const c of caches) out(c, [H, S, dh]);
      break;
    }
    case "mlp-infer": {
      let h = ins[0];
      const layers = w.sizes.length - 1;
      for (let i = 0; i < layers; i++) {
        const z = g.op("Add", [g.op("MatMul", [h, ins[1 + 2 * i]]), ins[2 + 2 * i]]);
        h = i < layers - 1 ? g.op("Relu", [z]) : z;
      }
      out(h, [w.batch, w.sizes[layers]]);
      break;
    }
    default: throw new Error(`no ONNX model for ${w.kind}`);
  }
  return { bytes: g.encode(), outputs: outs };
}
