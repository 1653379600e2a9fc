// Run by prepacked_b.test.ts in a fresh process with XLATS_POOL_TRACE set (the glue reads
// it once per process): one row of A against B in panels (a constant's layout,
// streamedPanelsOf), a cost between STREAMED_PARALLEL_COST and ALWAYS_PARALLEL_COST, called
// `calls` times over two threads after one call on one thread. Prints the kernel's units,
// cost and balance, and whether every split call gave the one-thread call's bits; the
// glue prints each split call's timeline and each split trial that counts.

import { emitGemmC } from "../../../src/compiler/native/gemm_c.js";
import { packB, type GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import { rng } from "../../support/prng.js";
import { nativeCpu, runNativeCases } from "./gemm_harness.js";

const calls = Number(process.argv[2] ?? "16");
const spec: GemmSpec = { elementType: "f32", batch: 1, m: 1, n: 2048, k: 1024 };
const kernel = emitGemmC(spec, nativeCpu(), "streamed_split", undefined, true);
if ("declined" in kernel) throw new Error(kernel.declined);
if (kernel.packedOperand === undefined) throw new Error("B is not in panels");
const random = rng(7);
const a = new Float32Array(spec.m * spec.k).map(() => random() * 2 - 1);
const b = packB(new Float32Array(spec.k * spec.n).map(() => random() * 2 - 1), kernel.packedOperand.layout);
const one = { kernel, operands: [a, b], resultBytes: [spec.m * spec.n * 4] };
const results = runNativeCases([one, ...Array.from({ length: calls }, () => ({ ...one, threads: 2 }))], "native streamed split", [], true);
const [want] = results[0]!;
// The harness fills C with NaN patterns before each call: a unit no thread ran leaves them.
const same = results.slice(1).every(([got]) => got!.length === want!.length && got!.every((x, i) => x === want![i]));
process.stdout.write(JSON.stringify({
  units: kernel.parallelExtent, cost: kernel.parallelExtent * kernel.costPerUnit, grain: kernel.balance?.grain ?? 0, alwaysSplits: kernel.balance?.alwaysSplits === true, same,
}));
