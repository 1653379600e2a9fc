// A variadic reduce (argmax: values and their indices) is fused and compiled on wasm and
// native: nothing runs on the interpreter, and the results are the interpreter's, bit for
// bit, for rows and columns, with NaN (which wins) and ties (the lower index wins), as
// jnp.argmax defines them; the expected indices are also computed here by hand.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  and, arrayShape, compile, constantR0, eq, evaluate, gt, iota, Literal, lt, ne, not, or, parameter, reduce, scalarShape, select, tuple, XlaBuilder,
  type Computation, type ElementType,
} from "../../../src/index.js";

function argmax(t: ElementType, dims: readonly number[], axis: number): Computation {
  const b = new XlaBuilder("argmax");
  const x = parameter(b, 0, arrayShape(t, dims));
  const idx = iota(b, arrayShape("s32", dims), axis);
  const sub = b.createSubBuilder("body");
  const [av, ai, bv, bi] = [parameter(sub, 0, scalarShape(t)), parameter(sub, 1, scalarShape("s32")), parameter(sub, 2, scalarShape(t)), parameter(sub, 3, scalarShape("s32"))];
  const aNan = ne(av, av);
  const bNan = ne(bv, bv);
  // a NaN wins; between two NaNs or two equal values the lower index; else the larger value.
  const pickA = or(and(aNan, or(not(bNan), lt(ai, bi))), and(not(or(aNan, bNan)), or(gt(av, bv), and(eq(av, bv), lt(ai, bi)))));
  const body = sub.build(tuple(sub, [select(pickA, av, bv), select(pickA, ai, bi)]));
  const init = t === "f32" ? -Infinity : -2147483648;
  return b.build(reduce([x, idx], [constantR0(b, t, init), constantR0(b, "s32", 0)], body, [axis]));
}

/** The first index of the maximum (or of the first NaN) along `axis` of a row-major 2-d array. */
function expectedIndices(values: readonly number[], [rows, cols]: readonly number[], axis: number): number[] {
  const [outer, inner] = axis === 1 ? [rows!, cols!] : [cols!, rows!];
  return Array.from({ length: outer }, (_, o) => {
    let best = 0;
    for (let k = 0; k < inner; k++) {
      const v = values[axis === 1 ? o * cols! + k : k * cols! + o]!;
      const w = values[axis === 1 ? o * cols! + best : best * cols! + o]!;
      if (Number.isNaN(w)) break;
      if (Number.isNaN(v) || v > w) best = k;
    }
    return best;
  });
}

for (const backend of ["wasm", "native"] as const) {
  test(`argmax is one compiled kernel on ${backend}, equal to the interpreter and to the indices found by hand`, async () => {
    for (const [t, dims, axis] of [["f32", [64, 1000], 1], ["f32", [1000, 37], 0], ["s32", [5, 300], 1], ["f32", [7, 3], 1]] as const) {
      const program = argmax(t, dims, axis);
      const n = dims[0] * dims[1];
      const values = Array.from({ length: n }, (_, i) => (t === "f32" ? (i % 997 === 5 ? NaN : Math.round(Math.sin(i * 1.7) * 20)) : ((i * 7919) % 23) - 11));
      const x = Literal.fromValues(t, dims, values);
      const exe = await compile(program, { backend });
      assert.deepEqual(exe.stats.interpreted, [], `${t}[${dims}] axis ${axis}: nothing interpreted`);
      const got = (await exe.run([x])).elements!;
      const want = evaluate(program, [x]).elements!;
      assert.deepEqual(got.map((e) => e.toNumbers()), want.map((e) => e.toNumbers()), `${t}[${dims}] axis ${axis}`);
      assert.deepEqual(got[1]!.toNumbers(), expectedIndices(values, dims, axis), `${t}[${dims}] axis ${axis}: indices`);
    }
  });
}
