// Run by gemm.test.ts in a fresh process with XLATS_POOL_TRACE set, pinned to one core
// at a real-time priority (taskset, chrt -f): the pool's thread, on the calling thread's
// core at the same priority, never runs while the calling thread computes, so no split
// call gets help from it. One matrix-vector product whose cost makes its kernel measure
// whether the split pays (between MIN_PARALLEL_COST and ALWAYS_PARALLEL_COST), called
// `calls` times at two threads in one synchronous loop. Prints the kernel's units and
// cost and whether every product was right; the glue prints each split call's timeline.

import { emitGemmC } from "../../../src/compiler/native/gemm_c.js";
import type { GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import { nativeCpu, runNativeCases } from "./gemm_harness.js";

const calls = Number(process.argv[2] ?? "64");
const spec: GemmSpec = { elementType: "f32", batch: 1, m: 1, n: 1024, k: 256 };
const kernel = emitGemmC(spec, nativeCpu(), "split_trial");
if ("declined" in kernel) throw new Error(kernel.declined);
const a = new Float32Array(spec.m * spec.k).fill(1);
const b = new Float32Array(spec.k * spec.n).fill(0.25);
const c = { kernel, operands: [a, b], resultBytes: [spec.m * spec.n * 4], threads: 2 };
const results = runNativeCases(Array.from({ length: calls }, () => c), "native split trial", [], true);
// Every element is 256 * 0.25, exactly.
const ok = results.every(([bytes]) => new Float32Array(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, bytes!.byteLength / 4).every((x) => x === 64));
process.stdout.write(JSON.stringify({ units: kernel.parallelExtent, cost: kernel.parallelExtent * kernel.costPerUnit, ok }));
