// What the WebGPU linear-algebra tests share (linalg.test.ts: Cholesky and triangular
// solve; factor.test.ts: LU and QR; the others' kernels too): a deterministic random stream, and a program run
// on the GPU beside the interpreter.

import assert from "node:assert/strict";
import { compile } from "../../../src/compiler/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import type { Computation } from "../../../src/ir/computation.js";
import type { Literal } from "../../../src/types/literal.js";

/** A deterministic stream in [-1, 1). */
export function randoms(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/**
 * Runs `c` on the GPU and on the interpreter: the result leaves' values of both (V: as
 * the leaves' type reads, numbers unless complex), and the executable's dump. Unless
 * `hostSteps`, asserts that no step ran on the host.
 */
export async function runOnGpu<V = number>(c: Computation, args: readonly Literal[], hostSteps = false): Promise<{ got: V[][]; want: V[][]; dump: string }> {
  const exe = await compile(c, { backend: "webgpu" });
  try {
    const dump = exe.dump();
    if (!hostSteps) assert.deepEqual(exe.stats.interpreted, [], dump);
    const got = (await exe.run(args)).arrayLeaves().map((l) => l.values() as V[]);
    const want = evaluate(c, args).arrayLeaves().map((l) => l.values() as V[]);
    return { got, want, dump };
  } finally {
    exe.delete();
  }
}
