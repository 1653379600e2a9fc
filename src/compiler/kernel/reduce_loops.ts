// The loop nest of a reduction kernel, shared by the WebAssembly and C emitters: the
// domain split into the kept dimensions before the last reduced one (rows, one work
// unit each), the reduced dimensions (r) and the kept dimensions after the last reduced
// one (j, contiguous in the output), and the fusion's graph rebuilt over those three
// variables.

import type { KernelGraph } from "./graph.js";
import { unlinearize, type FusedKernelIR } from "./lower_fusion.js";
import { rebuild } from "./kernel_plan.js";

export interface ReduceLoops {
  /** The graph over (row, r, j): variables rowVar, rVar, jVar. */
  readonly graph: KernelGraph;
  readonly rowVar: number;
  readonly rVar: number;
  readonly jVar: number;
  readonly rows: number;
  readonly Rn: number;
  readonly J: number;
  /** Domain dimensions: kept before the last reduced one, reduced, kept after it, and all kept. */
  readonly outerKept: readonly number[];
  readonly reduced: readonly number[];
  readonly innerKept: readonly number[];
  readonly kept: readonly number[];
  /** Each reduction's value (domain context) and init (output context), each output's value, in the new graph. */
  readonly values: readonly number[];
  readonly inits: readonly number[];
  readonly outputs: readonly number[];
  /** Maps a node of the fusion's graph into the new one. */
  readonly map: (id: number) => number;
}

export function reduceLoops(ir: FusedKernelIR): ReduceLoops {
  const red = ir.reduce!;
  const D = ir.domain;
  const n = D.length;
  const reduced = red.dims;
  const kept = D.map((_, i) => i).filter((i) => !reduced.includes(i));
  const last = reduced.length === 0 ? -1 : reduced[reduced.length - 1]!;
  const outerKept = kept.filter((d) => d < last);
  const innerKept = kept.filter((d) => d > last);
  const size = (ds: readonly number[]): number => ds.reduce((x, d) => x * D[d]!, 1);
  const rows = size(outerKept);
  const Rn = size(reduced);
  const J = size(innerKept);
  const g0 = ir.graph;
  const roots = [
    ...red.reductions.flatMap((r) => [r.value, r.init, ...(r.generic ? [...r.generic.body.params, ...r.generic.body.results] : [])]),
    ...ir.outputs.map((o) => o.value),
  ];
  let rowVar = -1, rVar = -1, jVar = -1;
  let mapDomain: number[] = [];
  const { graph: g, map } = rebuild(g0, roots, (dim, _size, o) => {
    if (rowVar < 0) {
      rowVar = o.variable(0, rows);
      rVar = o.variable(1, Rn);
      jVar = o.variable(2, J);
      const rowIdx = unlinearize(o, rowVar, outerKept.map((d) => D[d]!));
      const rIdx = unlinearize(o, rVar, reduced.map((d) => D[d]!));
      const jIdx = unlinearize(o, jVar, innerKept.map((d) => D[d]!));
      mapDomain = D.map((_, d) => {
        const a = outerKept.indexOf(d);
        if (a >= 0) return rowIdx[a]!;
        const b = reduced.indexOf(d);
        if (b >= 0) return rIdx[b]!;
        return jIdx[innerKept.indexOf(d)]!;
      });
    }
    // Variables n + k are the output's: kept dimension k.
    return dim < n ? mapDomain[dim]! : mapDomain[kept[dim - n]!]!;
  });
  if (rowVar < 0) {
    rowVar = g.variable(0, rows);
    rVar = g.variable(1, Rn);
    jVar = g.variable(2, J);
  }
  return {
    graph: g, rowVar, rVar, jVar, rows, Rn, J, outerKept, reduced, innerKept, kept, map,
    values: red.reductions.map((r) => map(r.value)),
    inits: red.reductions.map((r) => map(r.init)),
    outputs: ir.outputs.map((o) => map(o.value)),
  };
}
