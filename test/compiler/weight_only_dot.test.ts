// Weight-only quantized (int8 with a per-column scale) and bf16 matmuls: whole programs
// compiled for the WebAssembly and native backends against the interpreter's
// dequantize-then-dot on the same inputs, for each form the weights pass matches
// (kernel/weight_only_dot.ts), both layouts of the weights ([k][n]: the stream kernel;
// [n][k]: the row-dot kernel), 1 to 4 rows, odd n and k, a batch; and 64 rows, which
// the pass leaves to the packed GEMM. The bound: both the kernel and the interpreter
// sum k products in f32 (in different orders, the kernel applying the scale after the
// sum), so each differs from the exact value by at most (k+1)·u·Σ_p|x·w·s| (u = 2⁻²⁴,
// the scale's rounding one more u): the two differ by at most 2(k+2)·u·Σ_p|x·w·s|.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, arrayShape, broadcastInDim, convertElementType, dotGeneral, evaluate, mul, parameter, type Computation, type XlaOp,
} from "../../src/index.js";
import { compile, WasmDevice } from "../../src/compiler/index.js";
import type { Instruction } from "../../src/ir/computation.js";
import type { WeightOnlyDot } from "../../src/compiler/kernel/weight_only_dot.js";
import { emitWeightOnlyGemvC } from "../../src/compiler/native/gemv_narrow_c.js";
import { emitWeightOnlyGemvKernel } from "../../src/compiler/wasm/gemv_narrow.js";
import { detectWasmTarget } from "../../src/compiler/wasm/features.js";
import { runKernel } from "./wasm/kernel_harness.js";
import type { NativeCpu, NativeKernel } from "../../src/compiler/native/kernel.js";
import { nativeCpu, nativeSkipReason, runNativeCases, type NativeCase } from "./native/gemm_harness.js";
import { rng } from "../support/prng.js";

const random = rng(2405);
const nativeSkip = nativeSkipReason();
const BACKENDS = ["wasm", ...(nativeSkip === undefined ? ["native" as const] : [])] as const;
if (nativeSkip !== undefined) console.log(`# weight-only dots on native skipped: ${nativeSkip}`);

type Form = "none" | "weights" | "product";

interface Case {
  readonly weight: "s8" | "bf16";
  readonly form: Form;
  readonly batch: number;
  readonly m: number;
  readonly k: number;
  readonly n: number;
  /** Weights stored [n][k] (a linear layer's weight as PyTorch stores it). */
  readonly transposed: boolean;
}

const caseName = (c: Case): string =>
  `${c.weight} ${c.form} ${c.batch > 1 ? `${c.batch}x` : ""}${c.m}x${c.k}x${c.n} ${c.transposed ? "W[n][k]" : "W[k][n]"}`;

/** x·dequantize(w) in the case's form; the product is [batch?, m, n]. */
function program(c: Case): Computation {
  const b = new XlaBuilder(caseName(c).replace(/[^a-z0-9]+/gi, "_"));
  const lead = c.batch > 1 ? [c.batch] : [];
  const nb = lead.length;
  const x = parameter(b, 0, arrayShape("f32", [...lead, c.m, c.k]), "x");
  const w = parameter(b, 1, arrayShape(c.weight, [...lead, ...(c.transposed ? [c.n, c.k] : [c.k, c.n])]), "w");
  const scale = c.form === "none" ? undefined : parameter(b, 2, arrayShape("f32", [c.n]), "scale");
  const batchDims = lead.map((_, i) => i);
  const wf = convertElementType(w, "f32");
  const columnOfW = c.transposed ? nb : nb + 1;
  const rhs: XlaOp = c.form === "weights" ? mul(wf, broadcastInDim(scale!, [...wf.arrayShape.dimensions], [columnOfW])) : wf;
  const product = dotGeneral(x, rhs, {
    lhsBatchDimensions: batchDims, rhsBatchDimensions: batchDims,
    lhsContractingDimensions: [nb + 1], rhsContractingDimensions: [c.transposed ? nb + 1 : nb],
  });
  const root = c.form === "product" ? mul(product, broadcastInDim(scale!, [...product.arrayShape.dimensions], [nb + 1])) : product;
  return b.build(root);
}

function inputs(c: Case): Literal[] {
  const lead = c.batch > 1 ? [c.batch] : [];
  const count = c.batch * c.k * c.n;
  const x = Literal.fromValues("f32", [...lead, c.m, c.k], Array.from({ length: c.batch * c.m * c.k }, () => random() * 2 - 1));
  const weights = Array.from({ length: count }, () => (c.weight === "s8" ? Math.floor(random() * 255) - 127 : (random() * 2 - 1) * 3));
  const w = Literal.fromValues(c.weight, [...lead, ...(c.transposed ? [c.n, c.k] : [c.k, c.n])], weights);
  // Scales spread over a factor of 64, so reading another column's is far outside the bound.
  const s = Literal.fromValues("f32", [c.n], Array.from({ length: c.n }, () => 2 ** (random() * 6 - 8)));
  return c.form === "none" ? [x, w] : [x, w, s];
}

/** Σ_p |x[i][p]·w[p][j]·s[j]| for each element of the product, in float64. */
function magnitudes(c: Case, args: readonly Literal[]): number[] {
  const [x, w, s] = args.map((l) => l.toNumbers());
  const out: number[] = [];
  for (let bi = 0; bi < c.batch; bi++) {
    for (let i = 0; i < c.m; i++) {
      for (let j = 0; j < c.n; j++) {
        let sum = 0;
        for (let p = 0; p < c.k; p++) {
          const wv = w![bi * c.k * c.n + (c.transposed ? j * c.k + p : p * c.n + j)]!;
          sum += Math.abs(x![(bi * c.m + i) * c.k + p]! * wv);
        }
        out.push(sum * (s === undefined ? 1 : s[j]!));
      }
    }
  }
  return out;
}

const weightOnlyFusions = (module: { entry: { instructions: readonly Instruction[] } }): number =>
  module.entry.instructions.filter((i) => i.opcode === "fusion" && (i as Instruction<"fusion">).attrs.kind === "custom").length;

async function check(c: Case, backend: "wasm" | "native", expectKernel = true): Promise<void> {
  const comp = program(c);
  const args = inputs(c);
  const exe = await compile(comp, { backend });
  const got = exe.run(args).toNumbers();
  const want = evaluate(comp, args).toNumbers();
  const sums = magnitudes(c, args);
  const u = 2 ** -24;
  assert.equal(got.length, want.length);
  for (let e = 0; e < want.length; e++) {
    const bound = 2 * (c.k + 2) * u * sums[e]! + 1e-30;
    if (!(Math.abs(got[e]! - want[e]!) <= bound)) {
      assert.fail(`${backend} ${caseName(c)}: element ${e} is ${got[e]}, the interpreter's ${want[e]} (bound ${bound})\n${exe.dump()}`);
    }
  }
  assert.deepEqual(exe.stats.interpreted, [], `${caseName(c)}: every step compiled`);
  const label = c.weight === "s8" ? "s8 weights" : "bf16 weights";
  if (expectKernel) {
    assert.equal(weightOnlyFusions(exe.module!), 1, exe.dump());
    assert.match(exe.dump(), new RegExp(label), exe.dump());
    // On native, the C kernel (not the WebAssembly one it falls back to).
    if (backend === "native") assert.match(exe.dump(), /C xk_wgemv_/, exe.dump());
  } else {
    assert.equal(weightOnlyFusions(exe.module!), 0, exe.dump());
  }
}

const SHAPES: readonly [batch: number, m: number, k: number, n: number][] = [
  [1, 1, 768, 300], [1, 1, 37, 29], [1, 4, 256, 96], [1, 3, 41, 19], [1, 2, 9, 7], [2, 1, 70, 45], [1, 1, 5, 3],
  // Wider than the stream kernels' tiles (streamTileColumns: 1024-4096 columns), across two batches.
  [2, 1, 12, 4500], [1, 4, 10, 2300],
];

for (const backend of BACKENDS) {
  test(`weight-only dots on ${backend}: int8 (each scale form) and bf16, both layouts, 1-4 rows, odd n and k, a batch, against the interpreter`, async () => {
    const forms = [["s8", "none"], ["s8", "weights"], ["s8", "product"], ["bf16", "none"]] as const;
    for (const [i, [batch, m, k, n]] of SHAPES.entries()) {
      for (const transposed of [false, true]) {
        // Every form on every shape on wasm; native (a C module a program, seconds each to
        // build) takes one form a shape in turn, every shape in both layouts.
        for (const [weight, form] of backend === "wasm" ? forms : [forms[i % forms.length]!]) {
          await check({ weight, form, batch, m, k, n, transposed }, backend);
        }
      }
    }
  });

  test(`weight-only dots on ${backend}: 64 rows are left to the packed GEMM (compute-bound), still right`, async () => {
    for (const transposed of [false, true]) {
      await check({ weight: "s8", form: "weights", batch: 1, m: 64, k: 100, n: 70, transposed }, backend, false);
      await check({ weight: "bf16", form: "none", batch: 1, m: 64, k: 33, n: 17, transposed }, backend, false);
    }
  });

  test(`weight-only dots on ${backend}: each column of C gets its own scale (exact sums of ones)`, async () => {
    // x and w all ones, scale j+1: C[i][j] = k·(j+1) exactly; reading a neighbour's scale is off by k.
    for (const transposed of [false, true]) {
      for (const [m, k, n] of [[1, 40, 21], [4, 16, 13], [2, 3, 10]] as const) {
        for (const form of ["weights", "product"] as const) {
          const c: Case = { weight: "s8", form, batch: 1, m, k, n, transposed };
          const exe = await compile(program(c), { backend });
          const x = Literal.fromValues("f32", [m, k], new Array<number>(m * k).fill(1));
          const w = Literal.fromValues("s8", transposed ? [n, k] : [k, n], new Array<number>(n * k).fill(1));
          const s = Literal.fromValues("f32", [n], Array.from({ length: n }, (_, j) => j + 1));
          const got = exe.run([x, w, s]).toNumbers();
          const want = Array.from({ length: m * n }, (_, e) => k * ((e % n) + 1));
          assert.deepEqual(got, want, `${backend} ${caseName(c)}`);
          assert.equal(weightOnlyFusions(exe.module!), 1);
        }
      }
    }
  });
}

test("weight-only dots: a scale along k is no column scale: left to the f32 GEMM, still right", async () => {
  const b = new XlaBuilder("left_alone");
  const x = parameter(b, 0, arrayShape("f32", [1, 8]), "x");
  const w = parameter(b, 1, arrayShape("s8", [8, 4]), "w");
  const sk = parameter(b, 2, arrayShape("f32", [8]), "sk");
  const wf = convertElementType(w, "f32");
  // The scale along k (dimension 0 of W) is not a per-column scale.
  const root = dotGeneral(x, mul(wf, broadcastInDim(sk, [8, 4], [0])), { lhsContractingDimensions: [1], rhsContractingDimensions: [0] });
  const comp = b.build(root);
  const exe = await compile(comp);
  assert.equal(weightOnlyFusions(exe.module!), 0, exe.dump());
  const args = [
    Literal.fromValues("f32", [1, 8], [1, 2, 3, 4, 5, 6, 7, 8]),
    Literal.fromValues("s8", [8, 4], Array.from({ length: 32 }, (_, i) => i - 16)),
    Literal.fromValues("f32", [8], [1, 0.5, 2, 1, 1, 4, 1, 0.25]),
  ];
  assert.deepEqual(exe.run(args).toNumbers(), evaluate(comp, args).toNumbers());
});

test("weight-only dots: a threaded wasm device splits the units (stream and row dots) and computes the same product", async () => {
  const device = await WasmDevice.create({ threads: 2 });
  try {
    // 16 units of 192 columns, costing 2.3M together (over the pool's 1M floor,
    // DEFAULT_MIN_PARALLEL_COST): both threads take units, in either layout.
    for (const transposed of [false, true]) {
      const c: Case = { weight: "s8", form: "weights", batch: 1, m: 1, k: 256, n: 3000, transposed };
      const comp = program(c);
      const args = inputs(c);
      const exe = await compile(comp, { device });
      const got = exe.run(args).toNumbers();
      const want = evaluate(comp, args).toNumbers();
      const sums = magnitudes(c, args);
      want.forEach((v, e) => assert.ok(Math.abs(got[e]! - v) <= 2 * (c.k + 2) * 2 ** -24 * sums[e]!, `${caseName(c)} element ${e}`));
      assert.ok(exe.dump().includes("s8 weights"), exe.dump());
    }
  } finally {
    await device.close();
  }
});

/** Stored weights' bytes as a Float32Array (the harnesses place operands by their bytes). */
const bytesOf = (a: Int8Array | Uint16Array): Float32Array => {
  const out = new Float32Array(Math.ceil(a.byteLength / 4));
  new Uint8Array(out.buffer).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return out;
};

/** A random weight-only dot, its operands (x, stored w, the scale for int8) and its float64 dequantize-then-dot with the bound (k+2)·u·Σ|x·w·s|. */
function kernelCase(m: number, k: number, n: number, transposed: boolean, weight: "s8" | "bf16") {
  const scaled = weight === "s8";
  const dot: WeightOnlyDot = { spec: { elementType: "f32", batch: 1, m, n, k, rhsTransposed: transposed }, weight, scale: scaled ? "weights" : "none" };
  const x = Float32Array.from({ length: m * k }, () => random() * 2 - 1);
  const stored = weight === "s8" ? Int8Array.from({ length: k * n }, () => Math.floor(random() * 255) - 127)
    : Uint16Array.from({ length: k * n }, () => new Uint32Array(Float32Array.of(random() * 4 - 2).buffer)[0]! >>> 16);
  const widen = (e: number): number => (weight === "s8" ? stored[e]! : new Float32Array(Uint32Array.of(stored[e]! << 16).buffer)[0]!);
  const s = Float32Array.from({ length: n }, () => 2 ** (random() * 6 - 8));
  const want: number[] = [], bound: number[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0, mag = 0;
      for (let p = 0; p < k; p++) {
        const term = x[i * k + p]! * widen(transposed ? j * k + p : p * n + j);
        sum += term;
        mag += Math.abs(term);
      }
      const sc = scaled ? s[j]! : 1;
      want.push(sum * sc);
      bound.push((k + 2) * 2 ** -24 * mag * sc + 1e-30);
    }
  }
  const shape = `${m}x${k}x${n} ${transposed ? "W[n][k]" : "W[k][n]"}`;
  return { dot, shape, operands: [x, bytesOf(stored), ...(scaled ? [s] : [])], want, bound };
}

/** Fails at the first element of `got` farther from `want` than its bound. */
function assertWithin(got: Float32Array, want: readonly number[], bound: readonly number[], label: string): void {
  want.forEach((v, e) => {
    if (!(Math.abs(got[e]! - v) <= bound[e]!)) assert.fail(`${label}: element ${e} is ${got[e]}, want ${v} (bound ${bound[e]})`);
  });
}

// The WebAssembly kernels on their own, for plain SIMD (widening by extends) and, where
// this engine validates it, relaxed SIMD (one swizzle per four weights, int8 into the top
// byte with the activations scaled by 2⁻²⁴, relaxed_madd); tails of columns (n not a
// multiple of the step) and of rows (k not a multiple of the sweep), the units in three
// consecutive calls, against a float64 dequantize-then-dot.
test("weight-only dots, WebAssembly kernels: plain and relaxed SIMD, tails of columns and rows, split calls, vs float64", () => {
  const detected = detectWasmTarget();
  const targets = [{ ...detected, relaxedSimd: false }, ...(detected.relaxedSimd ? [detected] : [])];
  const specs: [m: number, k: number, n: number, transposed: boolean][] = [
    [1, 103, 2600, false], [1, 6, 45, false], [2, 37, 21, false], [3, 11, 40, false], [4, 9, 13, false], [1, 75, 50, true], [4, 21, 13, true],
  ];
  for (const target of targets) {
    for (const [m, k, n, transposed] of specs) {
      for (const weight of ["s8", "bf16"] as const) {
        const c = kernelCase(m, k, n, transposed, weight);
        const kernel = emitWeightOnlyGemvKernel(c.dot, target, "wo");
        if ("declined" in kernel) throw new Error(kernel.declined);
        const [bytes] = runKernel(kernel, target, c.operands, [c.want.length * 4], 3);
        assertWithin(new Float32Array(bytes!.buffer, bytes!.byteOffset, c.want.length), c.want, c.bound, `${target.relaxedSimd ? "relaxed" : "plain"} ${kernel.name} ${c.shape}`);
      }
    }
  }
});

// The C kernels on their own, through the native test harness: the machine's build, on an
// AVX-512 machine its AVX2 build too (the stream kernel's intrinsics are chosen per
// family), and the portable one (no AVX2: the widening as a loop over lanes), the units
// in three consecutive calls and through the module's pool of two threads, against a
// float64 dequantize-then-dot.
test("weight-only dots, C kernels: AVX-512, AVX2 and portable builds, split calls and two threads, vs float64", { skip: nativeSkip }, () => {
  const machine = nativeCpu();
  const avx2: NativeCpu | undefined = machine.avx512f ? { ...machine, avx512f: false } : undefined;
  const portable: NativeCpu = { arch: "other", avx2: false, fma: false, avx512f: false, neon: false };
  const cases: { kernel: NativeKernel; operands: Float32Array[]; want: number[]; bound: number[]; label: string; splits?: number; threads?: number }[] = [];
  const specs: [m: number, k: number, n: number, transposed: boolean][] = [[1, 100, 2600, false], [3, 37, 21, false], [2, 75, 50, true], [4, 9, 13, true]];
  for (const cpu of [machine, ...(avx2 === undefined ? [] : [avx2]), portable]) {
    for (const [m, k, n, transposed] of specs) {
      for (const weight of ["s8", "bf16"] as const) {
        const { dot, shape, operands, want, bound } = kernelCase(m, k, n, transposed, weight);
        const kernel = emitWeightOnlyGemvC(dot, cpu, `wo_${cpu.arch}_${cpu.avx512f}_${m}_${weight}`);
        if ("declined" in kernel) throw new Error(kernel.declined);
        const label = `${kernel.name} ${shape}`;
        cases.push({ kernel, operands, want, bound, label, splits: 3 }, { kernel, operands, want, bound, label: `${label}, 2 threads`, threads: 2 });
      }
    }
  }
  const results = runNativeCases(cases.map((c): NativeCase => ({
    kernel: c.kernel, operands: c.operands, resultBytes: [c.want.length * 4], ...(c.splits !== undefined ? { splits: c.splits } : {}), ...(c.threads !== undefined ? { threads: c.threads } : {}),
  })), "weight_only_gemv");
  cases.forEach((c, ci) => {
    const bytes = results[ci]![0]!;
    assertWithin(new Float32Array(bytes.buffer, bytes.byteOffset, c.want.length), c.want, c.bound, c.label);
  });
});
