// Shared helpers of the runtime tests: a deterministic PRNG, builders for one-op
// programs, and plain-JS reference computations the results are checked against.

import { arrayShape, parameter, XlaBuilder, type ElementType, type XlaOp, type Computation, type Shape } from "../../src/index.js";
import { rng } from "../support/prng.js";
import { elementCount } from "../../src/types/shape.js";
export { rng };

/** Integers in [-50, 50) as numbers. */
export function randomInts(next: () => number, n: number): number[] {
  return Array.from({ length: n }, () => Math.floor(next() * 100) - 50);
}

/** A computation of one op applied to parameters of the given shapes. */
export function program(name: string, params: readonly Shape[], body: (b: XlaBuilder, ps: XlaOp[]) => XlaOp): Computation {
  const b = new XlaBuilder(name);
  const ps = params.map((s, i) => parameter(b, i, s));
  return b.build(body(b, ps));
}

export const shape = (t: ElementType, dims: readonly number[]): Shape => arrayShape(t, dims);

/** Row-major slice [.., start:start+len, ..] along `dim` of a flat array with dims. */
export function sliceRows(values: readonly number[], dims: readonly number[], dim: number, start: number, len: number): number[] {
  const outer = elementCount(dims.slice(0, dim));
  const inner = elementCount(dims.slice(dim + 1));
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let i = start; i < start + len; i++) {
      for (let k = 0; k < inner; k++) out.push(values[(o * dims[dim]! + i) * inner + k]!);
    }
  }
  return out;
}

/** Concatenation of flat row-major arrays (each of dims with dims[dim] = sizes[i]) along `dim`. */
export function concatRows(parts: readonly number[][], dims: readonly number[], dim: number): number[] {
  const outer = elementCount(dims.slice(0, dim));
  const inner = elementCount(dims.slice(dim + 1));
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (const p of parts) {
      const run = (p.length / outer);
      for (let k = 0; k < run; k++) out.push(p[o * run + k]!);
    }
  }
  void inner;
  return out;
}
