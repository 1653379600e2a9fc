// Column reductions as statements (kernel_ir.ts), from their schedule (schedule_reduce.ts):
// a reduction over a dimension that is not the minor one, J > 1 outputs a row kept
// contiguous after the reduced dimensions r. Its elements run along j (contiguous, so in
// vectors or in lanes the C compiler vectorizes), while each output accumulates along r,
// a loop outside them. Each row (one work unit) runs, where the target keeps no lane
// arrays (ReduceTarget.columnBlock undefined: WebAssembly):
//
//   jb = 0
//   [vector, every reduction recognized and combined in vectors, J ≥ lanes:]
//     while jb + lanes ≤ J:   (a vector of outputs jb … jb + lanes - 1)
//       a_k = identity_k in lanes (+ the side accumulators of float max/min)
//       i = jb;  for r < Rn: the per-r values, load and full-output pointers, splats;
//                            at i: the vector body, full outputs stored, a_k ⊕= x_k
//       a_k repaired;  for each lane l: s_k = identity_k, s_k ⊕= lane l of a_k,
//                      jl = jb + l, result_k = init_k ⊕ s_k, the per-row outputs at jl
//       jb += lanes
//   while jb < J: (one output)  i = jb;  s_k = identity_k, or init_k in the interpreter's
//     order;  for r < Rn: the per-r values, pointers; at i: the scalar body, full outputs
//     stored, s_k ⊕= x_k (a generic group: its body);  result_k, per-row outputs at i
//
// and where it keeps lane arrays (columnBlock B: C), in blocks of B outputs, the last one
// partial, the r loop outside a lane loop over the block the C compiler vectorizes:
//
//   for j0 = 0; j0 < J; j0 += B:  j1 = min(j0 + B, J)
//     acc_k = B lanes of identity_k, or (in the interpreter's order) init_k per lane
//     for r < Rn: the per-r values and pointers;
//                 for j in [j0, j1): the scalar body, full outputs stored, acc_k[j - j0] ⊕= x_k
//     for j in [j0, j1): result_k = init_k ⊕ acc_k[j - j0] (or acc_k itself), per-row outputs
//                        stored at j of their rows

import { binary, constant, index, type Kernel, type Stmt } from "./kernel_ir.js";
import { reachable } from "./kernel_plan.js";
import { scheduleBody, type VectorTarget } from "./loop_schedule.js";
import type { FusedKernelIR } from "./lower_fusion.js";
import { bodyCost } from "./op_properties.js";
import {
  loopInvariants, reductionResults, reductionSteps, rowOutputStores, scalarAccumulators, scheduledReductions, type ReduceKernelTarget,
} from "./reduce_kernel.js";
import { accumulatorsFor, type ReduceSchedule } from "./schedule_reduce.js";

/** No vectors: a target that keeps lane arrays writes a column block's lanes as scalar code. */
const LANE_ARRAYS: VectorTarget = {
  vectorBytes: 0, laneBytes: () => 4, vectorizable: () => false, storesVector: () => false,
  unroll: { copies: 1, maxBody: 0 }, minVectorElements: 0, streamMinBytes: Infinity,
};

/**
 * The kernel of a column reduction (J > 1), with buffers (operands, results) and the
 * range of rows [begin, end); undefined for the other forms.
 */
export function columnReduceKernel(ir: FusedKernelIR, s: ReduceSchedule, target: ReduceKernelTarget): Kernel | undefined {
  if (!s.column) return undefined;
  const reductions = s.reductions;
  const { graph: g, rowVar, rVar, jVar, Rn, J, values, inits, outputs } = s.loops;
  const nIn = ir.inputs.length;
  const B = s.columnBlock;
  // The results' leaves, before the body's schedule adds its nodes (the graph numbers them in order).
  const accums = reductions.map((r, k) => g.accum(k, r.type));
  const passReductions = scheduledReductions(s, accums);
  const body = scheduleBody(g, [...values, ...s.fullOutputs.map((k) => outputs[k]!)], jVar, B === undefined ? target.vector : LANE_ARRAYS);
  const inner = B === undefined ? "i" : "j";

  // What each step of r computes before its elements: the nodes that do not vary along j,
  // the loads' row pointers, the full outputs' rows at (row, r).
  const { invariants: perR, rowLoads } = loopInvariants(g, body);
  for (const k of s.fullOutputs) {
    perR.push({
      s: "pointer", name: `out${k}`, buffer: nIn + k, type: ir.outputs[k]!.type, output: true,
      offset: binary("mul", binary("add", binary("mul", index("row"), constant(Rn)), index("r")), constant(J)),
    });
  }
  /** An element's effects: its full outputs stored, its values combined into accumulators `acc`k. */
  const effects = (acc: string): Stmt[] => [
    ...s.fullOutputs.map((k): Stmt => ({ s: "store", pointer: `out${k}`, node: outputs[k]!, type: ir.outputs[k]!.type, streaming: false })),
    ...reductionSteps(g, passReductions, acc),
  ];
  /** The loop over r, each step the per-r statements then `elements`. */
  const overR = (elements: readonly Stmt[]): Stmt[] => [
    { s: "index", name: "r", value: constant(0), mutable: true },
    { s: "for", index: "r", stop: Rn, step: 1, body: [...perR, ...elements] },
  ];
  const unit: Stmt[] = [{ s: "bind", node: rowVar, name: "row" }, { s: "bind", node: rVar, name: "r" }];
  if (B === undefined) {
    const L = body.lanes;
    const vectorize = body.vectorBody !== undefined && J >= L &&
      reductions.every((r) => !r.sequential && r.kind !== "generic" && target.vectorCombines(r.kind, r.type));
    unit.push({ s: "bind", node: jVar, name: "i" }, { s: "index", name: "jb", value: constant(0), mutable: true });
    if (vectorize) {
      const copies = accumulatorsFor(s, bodyCost(body.vectorBody!.map((id) => g.node(id).op)));
      const perLane = Array.from({ length: L }, (_, lane): Stmt[] => [
        ...reductions.map((r, k): Stmt => ({ s: "accumulator", name: `s${k}`, kind: r.kind, type: r.type, lanes: 1, copies: 1, sides: false, start: { identity: r.identity! } })),
        ...reductions.map((_, k): Stmt => ({ s: "extract", acc: `a${k}`, lane, into: `s${k}` })),
        { s: "index", name: "jl", value: binary("add", index("jb"), constant(lane)), mutable: false },
        { s: "bind", node: jVar, name: "jl" },
        ...reductionResults(g, passReductions, "s"),
        ...rowOutputStores(ir, s, accums, "jl"),
      ]);
      unit.push({
        s: "vector", body: [{
          s: "loop", index: "jb", stop: J, lanes: L, copies: 1, body: [
            ...reductions.map((r, k): Stmt => ({
              s: "accumulator", name: `a${k}`, kind: r.kind, type: r.type, start: { identity: r.identity! }, lanes: L, copies, sides: r.extremumSides,
            })),
            { s: "index", name: "i", value: index("jb"), mutable: true },
            ...overR([
              { s: "vector", body: [{ s: "splat", ids: body.splats }] },
              { s: "at", index: "i", lanes: L, body: [{ s: "vectorValues", ids: body.vectorBody! }, ...effects("a")] },
            ]),
            { s: "repair", accs: reductions.map((_, k) => `a${k}`) },
            ...perLane.flat(),
          ],
        }],
      });
    }
    // The outputs after the last whole vector, one at a time.
    unit.push({
      s: "for", index: "jb", stop: J, step: 1, body: [
        // The starts first (an init in the interpreter's order reads j: jb here), then i = jb.
        { s: "bind", node: jVar, name: "jb" },
        ...scalarAccumulators(g, passReductions),
        { s: "index", name: "i", value: index("jb"), mutable: true },
        { s: "bind", node: jVar, name: "i" },
        ...overR([{ s: "at", index: "i", lanes: 1, body: [{ s: "values", ids: body.scalarBody }, ...effects("s")] }]),
        ...reductionResults(g, passReductions, "s"),
        ...rowOutputStores(ir, s, accums, "i"),
      ],
    });
  } else {
    const lanes = (stmts: readonly Stmt[]): Stmt => ({ s: "lanes", index: "j", from: "j0", to: "j1", lanes: B, body: [{ s: "bind", node: jVar, name: "j" }, ...stmts] });
    const sequential = reductions.flatMap((r, k) => (r.sequential ? [k] : []));
    // Each lane's start in the interpreter's order: its init (in the output's context, per j).
    const starts: Stmt[] = sequential.length === 0 ? [] : [lanes([
      { s: "values", ids: reachable(g, sequential.map((k) => inits[k]!)).filter((id) => g.node(id).op !== "var") },
      ...sequential.map((k): Stmt => ({ s: "assign", acc: `acc${k}`, node: inits[k]! })),
    ])];
    // The results read each lane of the lane arrays as a scalar accumulator of its own.
    // Through the per-row outputs' rows (a store the C compiler vectorizes; one at a computed address it does not).
    const results = [...reductionResults(g, passReductions, "acc"), ...rowOutputStores(ir, s, accums, undefined)];
    for (const k of s.rowOutputs) {
      unit.push({ s: "pointer", name: `out${k}`, buffer: nIn + k, type: ir.outputs[k]!.type, offset: binary("mul", index("row"), constant(J)), output: true });
    }
    unit.push({ s: "index", name: "j0", value: constant(0), mutable: true });
    unit.push({
      s: "for", index: "j0", stop: J, step: B, body: [
        { s: "index", name: "j1", value: binary("min", binary("add", index("j0"), constant(B)), constant(J)), mutable: false },
        ...reductions.map((r, k): Stmt => ({
          s: "accumulator", name: `acc${k}`, kind: r.kind, type: r.type, lanes: B, copies: 1, sides: false,
          start: r.sequential ? { assigned: true } : { identity: r.identity! },
        })),
        ...starts,
        ...overR([lanes([{ s: "values", ids: body.scalarBody }, ...effects("acc")])]),
        lanes(results),
      ],
    });
  }
  const declared = B === undefined ? ["row", "i", "r", "jb"] : ["row"];
  return {
    graph: g,
    buffers: nIn + ir.outputs.length,
    params: ["begin", "end"],
    units: { index: "row", from: "begin", to: "end" },
    declared,
    unit,
    inner,
    rowLoads,
    affine: body.affine,
    lanes: B === undefined ? body.lanes : 1,
    fence: false,
  };
}
