// Run by gemm.test.ts in a fresh process with XLATS_POOL_TRACE set (the glue reads it
// once per process), pinned or not: the MLP's kind of product, 64 rows of A against B
// pre-packed, whose split threads balance the call as they go, cutting chunks into row tiles
// (gemmBalance: B pre-packed, a chunk's B in L2), costly
// enough to be split whenever two threads are asked for (ALWAYS_PARALLEL_COST). Run once
// on one thread, then `calls` times over the pool's two threads. Prints the kernel's
// units, grain and cost, and whether every split call gave the one-thread call's bits;
// the glue prints each split call's timeline.

import { emitGemmC } from "../../../src/compiler/native/gemm_c.js";
import { MEASURED_CACHES, packB, type GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import { rng } from "../../support/prng.js";
import { nativeCpu, runNativeCases } from "./gemm_harness.js";

const calls = Number(process.argv[2] ?? "8");
const spec: GemmSpec = { elementType: "f32", batch: 1, m: 64, n: 1024, k: 512 };
// Blocked for the caches measured on (its chunks' B, 512 KiB, cut at an L2 of 512 KiB or more), whatever this machine's.
const kernel = emitGemmC(spec, { ...nativeCpu(), caches: MEASURED_CACHES }, "balanced_split", undefined, true);
if ("declined" in kernel) throw new Error(kernel.declined);
if (kernel.packedOperand === undefined) throw new Error("B is not pre-packed");
const random = rng(5);
const a = new Float32Array(spec.m * spec.k).map(() => random() * 2 - 1);
const b = packB(new Float32Array(spec.k * spec.n).map(() => random() * 2 - 1), kernel.packedOperand.layout);
const one = { kernel, operands: [a, b], resultBytes: [spec.m * spec.n * 4] };
const results = runNativeCases([one, ...Array.from({ length: calls }, () => ({ ...one, threads: 2 }))], "native balanced split", [], true);
const [want] = results[0]!;
// The harness fills C with NaN patterns before each call: a unit no thread ran leaves them.
const same = results.slice(1).every(([got]) => got!.length === want!.length && got!.every((x, i) => x === want![i]));
process.stdout.write(JSON.stringify({ units: kernel.parallelExtent, grain: kernel.balance?.grain ?? 0, cuts: kernel.balance?.cutsGrain === true, cost: kernel.parallelExtent * kernel.costPerUnit, same }));
