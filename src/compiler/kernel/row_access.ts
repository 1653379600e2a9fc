// Which buffers a fused kernel touches row by row: when its work units are the rows of
// some leading domain dimensions, which inputs does unit u read only within row u? The
// executor interleaves a chain of kernels over blocks of rows when every kernel reads
// the earlier ones' results that way (softmax's row max, exp-and-sum, divide; a layer
// norm's moments and normalization), so each block stays in cache between them.
//
// A load of input i (N elements, R rows, so P = N / R elements a row) is row-local when
// its offset is P · row + rest, row = Σ stride_d · x_d the row-major index over the row
// dimensions, and rest does not depend on them and lies in [0, P). The affine form of
// the offset (graph.ts) gives the coefficients, its atoms' ranges bound rest.

import { ELEMENT_TYPES } from "../../types/element_type.js";
import type { KernelGraph } from "./graph.js";
import type { FusedKernelIR } from "./lower_fusion.js";
import { elementCount } from "../../types/shape.js";

/**
 * Unit u of a kernel's work is row u of its buffers: run(..., u, u + 1) writes exactly
 * bytes [u·b, (u+1)·b) of result j, b = resultRowBytes[j], and, where operandRowBytes[i]
 * is a number b, reads operand i only in bytes [u·b, (u+1)·b) (undefined: anywhere).
 * A chain of such kernels with one extent can then run block of rows by block of rows,
 * each kernel after the one whose results it reads (the executor's row groups).
 */
export interface RowAccess {
  readonly operandRowBytes: readonly (number | undefined)[];
  readonly resultRowBytes: readonly number[];
}

/**
 * The row access of a kernel over `ir` whose unit u is row u of domain dimensions
 * `rowDims` (leading dimensions of every output, in order), or undefined when the
 * outputs do not split that way.
 */
export function rowAccess(ir: FusedKernelIR, rowDims: readonly number[]): RowAccess | undefined {
  const domain = ir.domain;
  const rows = rowDims.reduce((n, d) => n * domain[d]!, 1);
  if (rows < 2) return undefined;
  const resultRowBytes: number[] = [];
  for (const o of ir.outputs) {
    const n = elementCount(o.dims);
    if (n % rows !== 0) return undefined;
    resultRowBytes.push((n / rows) * ELEMENT_TYPES[o.type].storageBytes);
  }
  // Variables n + k of a reduction's output context stand for kept dimension k.
  const kept = domain.map((_, d) => d).filter((d) => !(ir.reduce?.dims.includes(d) ?? false));
  const g = ir.graph;
  const dimOf = (variable: number): number => {
    const v = g.node(variable).attr as number;
    return v < domain.length ? v : kept[v - domain.length]!;
  };
  const rowStride = new Map<number, number>();
  rowDims.reduceRight((stride, d) => { rowStride.set(d, stride); return stride * domain[d]!; }, 1);
  const rowVariables = new Set(g.nodes.filter((n) => n.op === "var" && rowStride.has(dimOf(n.id))).map((n) => n.id));
  const readsRows = dependsOnAny(g, rowVariables);

  const local: boolean[] = ir.inputs.map(() => true);
  for (const n of g.nodes) {
    if (n.op !== "load") continue;
    const i = n.attr as number;
    const total = elementCount(ir.inputs[i]!.dims);
    if (!local[i]) continue;
    local[i] = total % rows === 0 && isRowLocal(g, n.args[0]!, total / rows, rowStride, dimOf, rowVariables, readsRows, domain);
  }
  const operandRowBytes = ir.inputs.map((x, i) => (local[i] ? (elementCount(x.dims) / rows) * ELEMENT_TYPES[x.type].storageBytes : undefined));
  return { operandRowBytes, resultRowBytes };
}

function isRowLocal(
  g: KernelGraph, offset: number, perRow: number, rowStride: ReadonlyMap<number, number>, dimOf: (variable: number) => number,
  rowVariables: ReadonlySet<number>, readsRows: (id: number) => boolean, domain: readonly number[],
): boolean {
  const aff = g.affine(offset);
  const coefficient = new Map<number, number>();
  let lo = aff.constant;
  let hi = aff.constant;
  for (const [atom, c] of aff.terms) {
    if (rowVariables.has(atom)) {
      const d = dimOf(atom);
      coefficient.set(d, (coefficient.get(d) ?? 0) + c);
      continue;
    }
    if (readsRows(atom)) return false;
    const r = g.range(atom);
    lo += c >= 0 ? c * r.lo : c * r.hi;
    hi += c >= 0 ? c * r.hi : c * r.lo;
  }
  for (const [d, stride] of rowStride) {
    // A dimension of size 1 has only x_d = 0: its coefficient does not matter.
    if (domain[d]! > 1 && (coefficient.get(d) ?? 0) !== perRow * stride) return false;
  }
  return lo >= 0 && hi < perRow;
}

/** Whether node `id` depends on any of `variables` (nodes are numbered after their operands). */
function dependsOnAny(g: KernelGraph, variables: ReadonlySet<number>): (id: number) => boolean {
  const depends: boolean[] = [];
  for (const n of g.nodes) depends.push(variables.has(n.id) || n.args.some((a) => depends[a]!));
  return (id) => depends[id]!;
}
