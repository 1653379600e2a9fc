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

/** { bytes, outputs: [name...] } for a workload; `shapes` are the inputs' dimensions. */
export function buildOnnxModel(w, shapes) {
  const g = new OnnxGraph(w.kind);
  const ins = shapes.map((dims, i) => g.input(`in${i}`, dims));
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
    default: throw new Error(`no ONNX model for ${w.kind}`);
  }
  return { bytes: g.encode(), outputs: outs };
}
