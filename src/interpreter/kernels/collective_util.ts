// Helpers the collective kernels share: slicing and concatenating default-layout
// arrays along one dimension by whole contiguous runs, and naming each execution of a
// collective so all participants meet under the same key.

import { Literal } from "../../types/literal.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import type { CollectiveBackend } from "../context.js";
import { storagePerElement } from "../../types/literal.js";

/**
 * A default-layout array seen as [outer, size, inner] around dimension `dim`, with
 * `inner` counted in storage values (complex elements take two).
 */
function around(s: ArrayShape, dim: number): { outer: number; size: number; inner: number } {
  let outer = 1;
  let inner = storagePerElement(s.elementType);
  s.dimensions.forEach((d, k) => {
    if (k < dim) outer *= d;
    else if (k > dim) inner *= d;
  });
  return { outer, size: s.dimensions[dim]!, inner };
}

/** lit[..., start:start+length, ...] along `dim` (lit in the default layout). */
export function sliceAlong(lit: Literal, dim: number, start: number, length: number): Literal {
  const s = lit.arrayShape;
  const { outer, size, inner } = around(s, dim);
  const shape = arrayShape(s.elementType, s.dimensions.map((d, k) => (k === dim ? length : d)));
  const out = Literal.zeros(shape);
  const run = length * inner;
  for (let o = 0; o < outer; o++) {
    const from = (o * size + start) * inner;
    out.data.set(lit.data.subarray(from, from + run) as never, o * run);
  }
  return out;
}

/** The arrays concatenated along `dim` (all in the default layout, equal elsewhere). */
export function concatAlong(parts: readonly Literal[], dim: number): Literal {
  const s = parts[0]!.arrayShape;
  const total = parts.reduce((n, p) => n + p.arrayShape.dimensions[dim]!, 0);
  const shape = arrayShape(s.elementType, s.dimensions.map((d, k) => (k === dim ? total : d)));
  const out = Literal.zeros(shape);
  const { outer, inner } = around(shape, dim);
  let offset = 0;
  for (const p of parts) {
    const run = p.arrayShape.dimensions[dim]! * inner;
    for (let o = 0; o < outer; o++) {
      out.data.set(p.data.subarray(o * run, (o + 1) * run) as never, (o * total) * inner + offset);
    }
    offset += run;
  }
  return out;
}

// Each device numbers its executions of each (op, channel); the n-th execution on one
// device meets the n-th on every other. Counters live with the backend, which is
// created afresh for every execution of a program.
const sequences = new WeakMap<CollectiveBackend, Map<string, number>>();

/** The rendezvous key of this execution of `opName` on `channelId`. */
export function collectiveKey(backend: CollectiveBackend, opName: string, channelId: number | undefined): string {
  let counters = sequences.get(backend);
  if (counters === undefined) {
    counters = new Map();
    sequences.set(backend, counters);
  }
  const base = `${opName}#${channelId !== undefined && channelId > 0 ? channelId : 0}`;
  const n = counters.get(base) ?? 0;
  counters.set(base, n + 1);
  return `${base}#${n}`;
}

/** A single literal for one operand, a tuple for several (what one participant contributes). */
export function bundle(parts: readonly Literal[]): Literal {
  return parts.length === 1 ? parts[0]! : Literal.tuple(parts);
}

/** The inverse of `bundle`. */
export function unbundle(lit: Literal, count: number): readonly Literal[] {
  return count === 1 ? [lit] : lit.elements;
}
