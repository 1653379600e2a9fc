// One SGD training step of a two-layer ReLU perceptron with softmax cross-entropy, the
// backward pass written out with the builder (no autodiff): see specs.ts for the interface.
//
//   z = x·W1 + b1, h = relu(z), logits = h·W2 + b2, logp = log_softmax(logits)
//   loss = -Σ y·logp / B,  dlogits = (softmax(logits) - y) / B
//   dW2 = hᵀ·dlogits, db2 = Σ_b dlogits, dz = (dlogits·W2ᵀ) ⊙ [z > 0], dW1 = xᵀ·dz, db1 = Σ_b dz
//   W ← W - lr·dW for each parameter

import {
  XlaBuilder, constantR0, dot, dotGeneral, add, sub, mul, div, exp, log, max, select, compare, broadcast, tuple,
  type Computation, type XlaOp,
} from "../../src/index.js";
import { f32Parameter, maxOver, sumOver } from "./kernels.js";
import type { Workload } from "./specs.js";

export function buildMlpStep(w: Extract<Workload, { kind: "mlp" }>): Computation {
  const { batch: B, inputs: I, hidden: H, classes: C } = w;
  const b = new XlaBuilder("mlp_sgd_step");
  const c = (v: number): XlaOp => constantR0(b, "f32", v);
  const x = f32Parameter(b, 0, [B, I], "x");
  const y = f32Parameter(b, 1, [B, C], "labels");
  const w1 = f32Parameter(b, 2, [I, H], "w1");
  const b1 = f32Parameter(b, 3, [H], "b1");
  const w2 = f32Parameter(b, 4, [H, C], "w2");
  const b2 = f32Parameter(b, 5, [C], "b2");

  const z = add(dot(x, w1), b1, [1]);
  const h = max(z, c(0));
  const logits = add(dot(h, w2), b2, [1]);
  const shifted = sub(logits, maxOver(logits, [1]), [0]);
  const e = exp(shifted);
  const total = sumOver(e, [1]);
  const logp = sub(shifted, log(total), [0]);
  const loss = mul(sumOver(mul(y, logp), [0, 1]), c(-1 / B));

  const dLogits = mul(sub(div(e, total, [0]), y), c(1 / B));
  const dW2 = dotGeneral(h, dLogits, { lhsContractingDimensions: [0], rhsContractingDimensions: [0] });
  const dB2 = sumOver(dLogits, [0]);
  const dH = dotGeneral(dLogits, w2, { lhsContractingDimensions: [1], rhsContractingDimensions: [1] });
  const zeros = broadcast(c(0), [B, H]);
  const dZ = select(compare(z, zeros, "GT"), dH, zeros);
  const dW1 = dotGeneral(x, dZ, { lhsContractingDimensions: [0], rhsContractingDimensions: [0] });
  const dB1 = sumOver(dZ, [0]);

  const lr = c(w.learningRate);
  const step = (p: XlaOp, g: XlaOp): XlaOp => sub(p, mul(g, lr));
  return b.build(tuple(b, [loss, step(w1, dW1), step(b1, dB1), step(w2, dW2), step(b2, dB2)]));
}
