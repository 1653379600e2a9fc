import { test } from "node:test";
import assert from "node:assert/strict";
import { printLiteral } from "../../../src/text/hlo/literal_text.js";
import { Literal } from "../../../src/types/literal.js";
import { formatFloat, shortestF32BySearch, shortestF32Text } from "../../../src/types/shortest_f32.js";
import { elementCount } from "../../../src/types/shape.js";

// Shortest round-trip digits as numpy's repr(np.float32(x)) prints them, written in
// JavaScript's number format (exponent without leading zeros, positional from 1e-6 to 1e21).
const NUMPY_SHORTEST: [number, string][] = [
  [0.1, "0.1"],
  [1 / 3, "0.33333334"],
  [1e-45, "1e-45"],
  [3.4028234663852886e38, "3.4028235e+38"],
  [1.1754943508222875e-38, "1.1754944e-38"], // a power of two: the slow path
  [4.2e-45, "4e-45"],
  [123456.789, "123456.79"],
  [-2.5e-7, "-2.5e-7"],
  [9.999999e-4, "0.0009999999"],
  [6.02214076e23, "6.0221406e+23"],
  [0.3, "0.3"],
  [2 ** -20 * 3, "0.000002861023"],
  [1e21, "1e+21"],
  [1.5e16, "15000000000000000"],
  [7e-10, "7e-10"],
];

test("f32 text is numpy's shortest round-trip digits", () => {
  for (const [x, text] of NUMPY_SHORTEST) assert.equal(formatFloat("f32", Math.fround(x)), text, `${x}`);
});

test("the fast f32 shortest digits agree with the digit-by-digit search on random f32s", () => {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  let seed = 7;
  const next = (): number => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
  let candidates = 0;
  let decided = 0;
  for (let i = 0; i < 200_000; i++) {
    // Half uniform over bit patterns, half over the exponents weights and data live in,
    // and every tenth a value with few fraction bits (exact ties and interval ends).
    u[0] = i % 2 ? next() : (next() & 0x807fffff) | ((107 + (next() % 40)) << 23);
    if (i % 10 === 0) f[0] = Math.round(f[0]! * 8) / 8 + 0.125;
    const x = f[0]!;
    if (!Number.isFinite(x) || Number.isInteger(x) || x === 0) continue;
    if ((u[0]! & 0x7fffff) !== 0) candidates++; // powers of two take the slow path
    const fast = shortestF32Text(x);
    if (fast === undefined) continue;
    decided++;
    assert.equal(fast, shortestF32BySearch(x), `bits 0x${u[0]!.toString(16)}`);
    assert.equal(Math.fround(Number(fast)), x);
  }
  assert.ok(decided > 0.999 * candidates, `only ${decided} of ${candidates} decided by the fast path`);
});

test("an f32 array prints, as bytes, exactly what formatFloat gives each element, in XLA's braces", () => {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  let seed = 11;
  const next = (): number => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
  const specials = [NaN, Infinity, -Infinity, 0, -0, 1, -3, 65504, 1.5e16, 1e21, 2 ** -149, 2 ** 100, 0.1];
  for (const dims of [[0], [1], [37], [2, 0], [3, 5], [2, 3, 4], [1, 1, 1, 9]]) {
    const n = elementCount(dims);
    const values = Array.from({ length: n }, (_, i) => {
      if (i % 7 === 3) return Math.fround(specials[next() % specials.length]!);
      u[0] = i % 2 ? next() : (next() & 0x807fffff) | ((107 + (next() % 40)) << 23);
      return f[0]!;
    });
    // The reference: each element's formatFloat, nested as printLiteral writes other types.
    let k = 0;
    const nest = (dim: number): string => {
      if (dim === dims.length) return formatFloat("f32", values[k++]!);
      const parts = Array.from({ length: dims[dim]! }, () => nest(dim + 1));
      if (parts.length === 0) return "{}";
      return dims.length === 1 ? `{${parts.join(", ")}}` : `{ ${parts.join(", ")} }`;
    };
    assert.equal(printLiteral(Literal.fromValues("f32", dims, values)), nest(0), `f32[${dims}]`);
  }
});
