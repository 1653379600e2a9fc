// The main job: build a two-layer perceptron with XlaBuilder, compile it to WebAssembly,
// run it, and print its class probabilities beside the reference interpreter's.
//
//   h = max(x · W1 + b1, 0)        (Dot, Add with broadcast_dimensions={1}, Max)
//   logits = h · W2 + b2
//   probs = softmax(logits)        (Reduce with a max and a sum reducer, Exp, Div)

import {
  XlaBuilder, Literal, arrayShape, scalarShape, parameter, constantR0, dot, add, sub, max, div, exp, reduce,
  evaluate, compile, type Computation,
} from "../src/index.js";

function scalarReducer(b: XlaBuilder, name: string, op: typeof add): Computation {
  const sb = b.createSubBuilder(name);
  const x = parameter(sb, 0, scalarShape("f32"), "x");
  const y = parameter(sb, 1, scalarShape("f32"), "y");
  return sb.build(op(x, y));
}

const [batch, inputs, hidden, classes] = [2, 3, 4, 2];
const b = new XlaBuilder("mlp");
const x = parameter(b, 0, arrayShape("f32", [batch, inputs]), "x");
const w1 = parameter(b, 1, arrayShape("f32", [inputs, hidden]), "w1");
const b1 = parameter(b, 2, arrayShape("f32", [hidden]), "b1");
const w2 = parameter(b, 3, arrayShape("f32", [hidden, classes]), "w2");
const b2 = parameter(b, 4, arrayShape("f32", [classes]), "b2");

const h = max(add(dot(x, w1), b1, [1]), constantR0(b, "f32", 0));
const logits = add(dot(h, w2), b2, [1]);
// Softmax along dimension 1, shifted by the row maximum for stability.
const rowMax = reduce(logits, constantR0(b, "f32", -Infinity), scalarReducer(b, "max", max), [1]);
const e = exp(sub(logits, rowMax, [0]));
const rowSum = reduce(e, constantR0(b, "f32", 0), scalarReducer(b, "sum", add), [1]);
const probs = div(e, rowSum, [0]);
const mlp = b.build(probs);

const args = [
  Literal.from("f32", [[1, 2, 3], [-1, 0.5, 2]]),
  Literal.from("f32", [[0.1, -0.2, 0.3, 0.0], [0.4, 0.1, -0.5, 0.2], [-0.3, 0.6, 0.1, 0.5]]),
  Literal.from("f32", [0.01, 0.02, 0.03, 0.04]),
  Literal.from("f32", [[0.5, -0.5], [-0.25, 0.75], [1.0, 0.0], [0.2, 0.3]]),
  Literal.from("f32", [0.1, -0.1]),
];

console.log(`computation: ${mlp.toString()}`);
const executable = await compile(mlp);
const st = executable.stats;
console.log(`${mlp.instructions.length} instructions, compiled to ${st.kernels} WebAssembly kernels (${st.interpreted.length} steps on the interpreter); result:`);
console.log(executable.run(args).toString());
console.log("reference interpreter:");
console.log(evaluate(mlp, args).toString());
