// Shared by the tests of the reduction kernels' statements (reduce_kernel.test.ts,
// column_reduce_kernel.test.ts): a plain vector target, reducers, statement queries.

import { parameter, scalarShape, type Computation, type ElementType, type XlaBuilder, type XlaOp } from "../../../src/index.js";
import type { ReduceKernelTarget } from "../../../src/compiler/kernel/reduce_kernel.js";
import { statements, type Kernel, type Stmt } from "../../../src/compiler/kernel/kernel_ir.js";

/** 128-bit vectors of 32-bit lanes for every node; every recognized reducer combines in them. */
export const TARGET: ReduceKernelTarget = {
  vector: {
    vectorBytes: 16,
    laneBytes: (t) => (t === "f64" || t === "s64" || t === "u64" ? 8 : 4),
    vectorizable: () => true,
    storesVector: () => true,
    unroll: { copies: 4, maxBody: 24 },
    minVectorElements: 0,
    streamMinBytes: Infinity,
  },
  vectorCombines: () => true,
};

export function reducer(b: XlaBuilder, t: ElementType, body: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const sb = b.createSubBuilder(`r_${t}`);
  return sb.build(body(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

export const all = (k: Kernel): Stmt[] => [...statements(k.unit)];
export const only = <S extends Stmt["s"]>(k: Kernel, s: S): Extract<Stmt, { s: S }>[] => all(k).filter((x): x is Extract<Stmt, { s: S }> => x.s === s);
