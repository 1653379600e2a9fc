// Fingerprints of generated kernels, to show that a change to the code generators
// leaves what they generate as it was (or to list the kernels it changed). Not a test:
// run it before and after a change and compare the outputs.
//
//   node dist/test/compiler/kernel/kernel_hashes.js > before.txt
//   ... change, rebuild ...
//   node dist/test/compiler/kernel/kernel_hashes.js > after.txt && diff before.txt after.txt
//
// Each line names a program, a target and a kernel, with the SHA-256 of its WebAssembly
// bytes, C source or WGSL source. The programs: random programs of the compiler's differential tests
// at small and large sizes (loops, reductions, dots, every element type), and row
// pipelines, long vector loops, streaming stores and big reductions built here.

import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import {
  XlaBuilder, add, arrayShape, broadcastInDim, dot, dotGeneral, constantR0, max, min, mul, parameter, reduce, reshape, tanh, transpose,
  type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { HloModule } from "../../../src/ir/computation.js";
import { runPasses } from "../../../src/passes/pass.js";
import { defaultPipeline } from "../../../src/compiler/plan.js";
import { planProgram } from "../../../src/compiler/program.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import type { WasmTarget } from "../../../src/compiler/wasm/kernel.js";
import type { NativeCpu } from "../../../src/compiler/native/kernel.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { randomProgram } from "../random_program.js";
import { layerNorm, reducer, softmax } from "./programs.js";

const WASM_TARGETS: readonly [string, WasmTarget][] = [
  ["simd", { simd: true, relaxedSimd: false, sharedMemory: true }],
  ["relaxed", { simd: true, relaxedSimd: true, sharedMemory: true }],
  ["scalar", { simd: false, relaxedSimd: false, sharedMemory: false }],
];
const NATIVE: NativeCpu = { arch: "x86_64", avx2: true, fma: true, avx512f: true, neon: false };

/** An elementwise chain over n elements of type t (a long vector loop; streaming stores when large). */
function chain(t: ElementType, dims: number[]): Computation {
  const b = new XlaBuilder(`chain_${t}`);
  const x = parameter(b, 0, arrayShape(t, dims), "x");
  const y = parameter(b, 1, arrayShape(t, dims), "y");
  const ft = t === "f32" || t === "f64";
  return b.build(add(mul(ft ? tanh(x) : x, y), max(x, y)));
}

/** A reduction of rows (or columns) of an expression, with reducer `op`. */
function reduction(t: ElementType, dims: number[], rdims: number[], op: (x: XlaOp, y: XlaOp) => XlaOp, init: number): Computation {
  const b = new XlaBuilder(`reduce_${t}`);
  const x = parameter(b, 0, arrayShape(t, dims), "x");
  const y = parameter(b, 1, arrayShape(t, dims), "y");
  return b.build(reduce(mul(x, y), constantR0(b, t, init), reducer(b, t, op), rdims));
}

/** A GEMM with an epilogue: (x · w + bias) then tanh or max with 0 (an output fusion). */
function gemmEpilogue(t: ElementType, m: number, k: number, n: number, act: "tanh" | "relu"): Computation {
  const b = new XlaBuilder(`gemm_${t}`);
  const x = parameter(b, 0, arrayShape(t, [m, k]), "x");
  const w = parameter(b, 1, arrayShape(t, [k, n]), "w");
  const bias = parameter(b, 2, arrayShape(t, [n]), "bias");
  const y = add(dot(x, w), broadcastInDim(bias, [m, n], [1]));
  return b.build(act === "tanh" ? tanh(y) : max(y, constantR0(b, t, 0)));
}

/** Attention's heads' outputs p·v [h, s, d] transposed back to [s, h·d]: a dot the CPU GEMMs and WebGPU's store transposed. */
function headsOutput(t: ElementType, h: number, s: number, d: number): Computation {
  const b = new XlaBuilder(`heads_${t}`);
  const p = parameter(b, 0, arrayShape(t, [h, s, s]), "p");
  const v = parameter(b, 1, arrayShape(t, [h, s, d]), "v");
  const pv = dotGeneral(p, v, { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1] });
  return b.build(reshape(transpose(pv, [1, 0, 2]), [s, h * d]));
}

function programs(): [string, Computation][] {
  const out: [string, Computation][] = [];
  for (let seed = 1; seed <= 120; seed++) out.push([`random ${seed}`, randomProgram(seed).computation]);
  for (let seed = 1; seed <= 40; seed++) {
    out.push([`random large ${seed}`, randomProgram(seed, { maxElements: 40000, size: 10, specialValueProbability: 0 }).computation]);
  }
  for (const t of ["f32", "f64"] as ElementType[]) {
    for (const dims of [[7, 33], [2, 4096], [300, 8], [64, 1000]]) {
      out.push([`softmax ${t} ${dims}`, softmax(t, dims, false)], [`log_softmax ${t} ${dims}`, softmax(t, dims, true)]);
    }
  }
  for (const t of ["f32", "f64"] as ElementType[]) {
    for (const [m, k, n] of [[64, 128, 96], [7, 33, 13], [256, 256, 257]]) {
      for (const act of ["tanh", "relu"] as const) out.push([`gemm ${act} ${t} ${m}x${k}x${n}`, gemmEpilogue(t, m!, k!, n!, act)]);
    }
  }
  out.push(["layer_norm 64x768", layerNorm(64, 768)], ["layer_norm 5x13", layerNorm(5, 13)]);
  for (const [t, h, s, d] of [["f32", 4, 128, 64], ["f64", 3, 37, 20]] as const) out.push([`heads output ${t} ${h}x${s}x${d}`, headsOutput(t, h, s, d)]);
  for (const t of ["f32", "f64", "s32", "u8", "bf16", "f16", "s64"] as ElementType[]) {
    for (const dims of [[37], [70000], [300, 301], [2, 2200000]]) out.push([`chain ${t} ${dims}`, chain(t, dims)]);
    for (const [dims, rdims] of [[[513, 1000], [1]], [[1000, 513], [0]], [[40, 50, 60], [0, 2]], [[100000], [0]], [[9, 7], [1]]] as [number[], number[]][]) {
      for (const [opName, op, init] of [["add", add, 0], ["max", max, -1], ["min", min, 1], ["mul", mul, 1]] as const) {
        out.push([`reduce ${opName} ${t} ${dims} over ${rdims}`, reduction(t, dims, rdims, op, init)]);
      }
    }
  }
  return out;
}

/** KERNEL_DUMP=dir: also writes each C kernel's source to dir/<its hash>.c (to compile and compare two versions). */
const dump = process.env.KERNEL_DUMP;
const sha = (data: string | Uint8Array): string => {
  const h = createHash("sha256").update(data).digest("hex").slice(0, 16);
  if (dump !== undefined && typeof data === "string") writeFileSync(`${dump}/${h}.c`, data);
  return h;
};

for (const [name, c] of programs()) {
  const { module } = runPasses(new HloModule(c.name, c), defaultPipeline());
  const lines: string[] = [];
  for (const [tname, target] of WASM_TARGETS) {
    const p = planProgram(module, { wasm: target });
    for (const k of p.kernels) if (!isProgramNativeKernel(k)) lines.push(`${name} | wasm ${tname} | ${k.name} | ${sha(k.bytes)}`);
  }
  const p = planProgram(module, { wasm: WASM_TARGETS[0]![1], native: NATIVE });
  for (const k of p.kernels) lines.push(`${name} | native | ${k.name} | ${isProgramNativeKernel(k) ? sha(k.c.source) : `wasm ${sha(k.bytes)}`}`);
  planGpuProgram(c, {}).kernels.forEach((k, i) => lines.push(`${name} | webgpu | ${i} | ${sha(k.source)}`));
  console.log(lines.join("\n"));
}
