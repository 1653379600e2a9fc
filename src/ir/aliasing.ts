// Buffer donation in the module config (XLA's input_output_alias and buffer_donor):
// which parameter buffers the caller gives up to an execution, and which result leaves
// live in them. Shape indices address the array leaves of tuple shapes; these helpers
// turn them into flat leaf numbers (the order of arrayLeaves) and check them.

import { arrayLeaves, shapeToString, type Shape } from "../types/shape.js";
import type { BufferDonor, Computation, InputOutputAlias, ModuleConfig } from "./computation.js";

const indexText = (index: readonly number[]): string => `{${index.join(",")}}`;

/** The flat leaf numbers (arrayLeaves order) under shape index `index` of `shape`, or a reason it addresses nothing. */
export function leavesAt(shape: Shape, index: readonly number[]): { first: number; count: number } | string {
  let first = 0;
  let s = shape;
  for (const [depth, i] of index.entries()) {
    if (s.kind !== "tuple" || !Number.isInteger(i) || i < 0 || i >= s.elements.length) return `shape index ${indexText(index)} does not exist in ${shapeToString(shape)} (at position ${depth})`;
    first += s.elements.slice(0, i).reduce((n, e) => n + arrayLeaves(e).length, 0);
    s = s.elements[i]!;
  }
  return { first, count: arrayLeaves(s).length };
}

/** A donated parameter leaf: its number among all parameters' leaves, and the result leaf it must (or may) hold. */
export interface DonatedLeaf {
  readonly leaf: number;
  readonly output?: { readonly leaf: number; readonly must: boolean };
}

/**
 * The parameter leaves `config` donates, by flat leaf number over all the entry's
 * parameters, checked against `entry`'s shapes; a reason when an entry is malformed.
 */
export function donatedLeaves(entry: Computation, config: ModuleConfig): DonatedLeaf[] | string {
  const params = entry.parameters;
  const firstLeaf: number[] = [];
  params.reduce((n, p, i) => { firstLeaf[i] = n; return n + arrayLeaves(p.shape).length; }, 0);
  const out = new Map<number, DonatedLeaf>();
  const paramLeaves = (d: BufferDonor, what: string): { first: number; count: number } | string => {
    const p = params[d.parameter];
    if (p === undefined || !Number.isInteger(d.parameter)) return `${what}: parameter ${d.parameter} does not exist (the entry has ${params.length})`;
    const at = leavesAt(p.shape, d.parameterIndex);
    return typeof at === "string" ? `${what}: parameter ${d.parameter}: ${at}` : { first: firstLeaf[d.parameter]! + at.first, count: at.count };
  };
  for (const d of config.bufferDonors ?? []) {
    const at = paramLeaves(d, `buffer_donor (${d.parameter}, ${indexText(d.parameterIndex)})`);
    if (typeof at === "string") return at;
    for (let k = 0; k < at.count; k++) if (!out.has(at.first + k)) out.set(at.first + k, { leaf: at.first + k });
  }
  const rootShape = entry.root.shape;
  const taken = new Set<number>();
  for (const a of config.inputOutputAlias ?? []) {
    const what = `input_output_alias ${indexText(a.output)}: (${a.parameter}, ${indexText(a.parameterIndex)})`;
    const p = paramLeaves(a, what);
    if (typeof p === "string") return p;
    const o = leavesAt(rootShape, a.output);
    if (typeof o === "string") return `${what}: the result: ${o}`;
    if (p.count !== 1 || o.count !== 1) return `${what}: both sides must be one array`;
    const ps = arrayLeaves(params[a.parameter]!.shape)[p.first - firstLeaf[a.parameter]!]!;
    const os = arrayLeaves(rootShape)[o.first]!;
    if (ps.elementType !== os.elementType || ps.dimensions.length !== os.dimensions.length || ps.dimensions.some((d, i) => d !== os.dimensions[i])) {
      return `${what}: the parameter is ${shapeToString(ps)} and the result ${shapeToString(os)}; aliased buffers need one shape`;
    }
    if (taken.has(o.first)) return `${what}: the result ${indexText(a.output)} is aliased twice`;
    if (out.get(p.first)?.output !== undefined) return `${what}: the parameter buffer is aliased twice`;
    taken.add(o.first);
    out.set(p.first, { leaf: p.first, output: { leaf: o.first, must: a.kind === "must-alias" } });
  }
  return [...out.values()].sort((x, y) => x.leaf - y.leaf);
}

export type { BufferDonor, InputOutputAlias };
