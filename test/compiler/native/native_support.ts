// What the native backend's tests share: the skip where no C compiler builds modules,
// the HLO programs several of them run, and the check of the pool's trace lines.

import type { TestContext } from "node:test";
import assert from "node:assert/strict";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";

/** Skips the test (saying why) where no C compiler builds modules; true where one does. */
export function needsCompiler(t: TestContext): boolean {
  const toolchain = nativeToolchain();
  if (typeof toolchain === "string") {
    t.skip(`no C compiler: ${toolchain}`);
    return false;
  }
  return true;
}

/** Scalar reducer computations `max`, `min`, `add` and `mul` of type t, for `to_apply=`. */
export const REDUCERS = (t: string): string => ["maximum", "minimum", "add", "multiply"].map((op) =>
  `${op.slice(0, 3)} {\n  a = ${t}[] parameter(0)\n  b = ${t}[] parameter(1)\n  ROOT s = ${t}[] ${op}(a, b)\n}\n`).join("");

/** softmax along the rows of an f32[rows, cols] parameter, as JAX writes it: exp(x - max) / sum. */
export const SOFTMAX = (rows: number, cols: number): string => `HloModule m
${REDUCERS("f32")}ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[${rows}] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[${rows},${cols}] broadcast(m), dimensions={0}
  d = f32[${rows},${cols}] subtract(x, mb)
  ex = f32[${rows},${cols}] exponential(d)
  s = f32[${rows}] reduce(ex, z), dimensions={1}, to_apply=add
  sb = f32[${rows},${cols}] broadcast(s), dimensions={0}
  ROOT y = f32[${rows},${cols}] divide(ex, sb)
}
`;

/**
 * The two parts of an XLATS_POOL_TRACE line of a call split over two threads, checked:
 * each of the 2 x 2 ranges ran on exactly one part (`balanced`, a kernel whose threads
 * balance the call as they go: each of the two parts' shares had units run, by either
 * part), and the parts' units add up to `total` (the call's units, or a group's rows).
 * Each part's match: index, start, end, cpu, units, ranges (hex), core.
 */
export function tracedParts(line: string, total: number, balanced = false): RegExpMatchArray[] {
  const parts = [...line.matchAll(/\| part (\d) ([\d.]+)-([\d.]+) us cpu ([\d.]+) us units (\d+) ranges ([0-9a-f]+) core (-?\d+)/g)];
  assert.equal(parts.length, 2, line);
  const masks = parts.map((p) => parseInt(p[6]!, 16));
  if (!balanced) assert.equal(masks[0]! & masks[1]!, 0, line);
  assert.equal(masks[0]! | masks[1]!, balanced ? 0x3 : 0xf, line);
  assert.equal(parts.reduce((sum, p) => sum + Number(p[5]), 0), total, line);
  return parts;
}
