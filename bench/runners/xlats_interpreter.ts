// xlats' reference interpreter: the executable specification, slow by design, so it runs
// the reduced sizes and the table scales its figure per FLOP or byte.

import { Literal, arrayShape, evaluate, type Computation } from "../../src/index.js";
import type { Prepared, Runner } from "../harness/runner.js";
import { buildComputation, type WeightsAs } from "../workloads/index.js";
import { firstWeight, inputShapes, type Workload } from "../workloads/specs.js";

/** The inputs fed on every run: the weights only with `weightsAs` "parameters" (see buildComputation). */
export function toLiterals(w: Workload, inputs: readonly Float32Array[], weightsAs: WeightsAs = "constants"): Literal[] {
  const shapes = inputShapes(w);
  return inputs.slice(0, weightsAs === "constants" ? firstWeight(w) : inputs.length).map((data, i) => Literal.fromStorage(arrayShape("f32", shapes[i]!), data));
}

/** The f32 outputs of a result literal (a tuple's elements in order, or the one array). */
export function literalOutputs(result: Literal): Float32Array[] {
  const parts = result.shape.kind === "tuple" ? result.elements : [result];
  return parts.map((p) => {
    const data = p.toDefaultLayout().data;
    if (!(data instanceof Float32Array)) throw new Error(`expected f32 output, got ${p.shape.kind}`);
    return data;
  });
}

export function createInterpreterRunner(): Runner {
  return {
    name: "xlats-interp",
    threads: 1,
    reduced: true,
    init: async () => undefined,
    setup: async (w: Workload, inputs: Float32Array[]): Promise<Prepared> => {
      const computation: Computation = buildComputation(w, inputs);
      const args = toLiterals(w, inputs);
      return {
        run: () => evaluate(computation, args),
        result: () => literalOutputs(evaluate(computation, args)),
      };
    },
  };
}
