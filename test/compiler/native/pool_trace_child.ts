// Run by gemm.test.ts in a fresh process with XLATS_POOL_TRACE set (the glue reads it
// once per process): one GEMM costly enough to be split whenever two threads are asked
// for (ALWAYS_PARALLEL_COST), run three times over the pool's two threads. Prints the
// kernel's units; the glue prints each call's timeline to stderr.

import { emitGemmC } from "../../../src/compiler/native/gemm_c.js";
import type { GemmSpec } from "../../../src/compiler/kernel/gemm_plan.js";
import { nativeCpu, runNativeCases } from "./gemm_harness.js";

const spec: GemmSpec = { elementType: "f32", batch: 1, m: 128, n: 512, k: 512 };
const kernel = emitGemmC(spec, nativeCpu(), "pool_trace");
if ("declined" in kernel) throw new Error(kernel.declined);
const a = new Float32Array(spec.m * spec.k).fill(1);
const b = new Float32Array(spec.k * spec.n).fill(0.5);
const c = { kernel, operands: [a, b], resultBytes: [spec.m * spec.n * 4], threads: 2 };
const results = runNativeCases([c, c, c], "native pool trace", [], true);
// Every element is 512 * 0.5, exactly, on whichever thread computed it.
const ok = results.every(([bytes]) => new Float32Array(bytes!.buffer as ArrayBuffer, bytes!.byteOffset, bytes!.byteLength / 4).every((x) => x === 256));
process.stdout.write(JSON.stringify({ units: kernel.parallelExtent, grain: kernel.balance?.grain ?? 0, cost: kernel.parallelExtent * kernel.costPerUnit, ok }));
