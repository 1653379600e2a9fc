// Comparing a float32 program's results with XLA's.

import assert from "node:assert/strict";
import type { Literal } from "../../src/types/literal.js";

/** |a - b| <= 1e-5 * |b| + 1e-6 elementwise: float32 programs whose transcendental functions may differ from XLA's by an ulp or two. */
export function assertCloseToXla(actual: Literal, expected: Literal, what: string): void {
  assert.deepEqual(actual.dimensions, expected.dimensions, `${what}: shape`);
  const a = actual.toNumbers();
  const b = expected.toNumbers();
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) <= 1e-5 * Math.abs(b[i]!) + 1e-6, `${what}[${i}]: ${x} vs ${b[i]}`));
}
