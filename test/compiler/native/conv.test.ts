import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, XlaBuilder, arrayShape, constantR0, convGeneralDilated, max, parameter } from "../../../src/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { emitConvC } from "../../../src/compiler/native/conv_c.js";
import { emitOutputFusionC } from "../../../src/compiler/native/epilogue_c.js";
import type { NativeKernel } from "../../../src/compiler/native/kernel.js";
import { rng } from "../../support/prng.js";
import { buildConv, NHWC, type ConvCase } from "../../support/kernel_cases.js";
import { nativeCpu, nativeSkipReason, runNativeCases, runnableFamilies, type NativeCase } from "./gemm_harness.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = nativeSkipReason();
if (skip !== undefined) console.log(`# native conv tests skipped: ${skip}`);
const random = rng(13);

const CASES: ConvCase[] = [
  { input: [1, 5, 5, 1], kernel: [3, 3, 1, 1] },
  { input: [2, 8, 8, 4], kernel: [3, 3, 4, 8], padding: [[1, 1], [1, 1]] },
  { input: [1, 9, 7, 3], kernel: [3, 2, 3, 5], strides: [2, 3], padding: [[2, 0], [1, 2]] },
  { input: [2, 10, 11, 6], kernel: [3, 3, 6, 7], rhsDilation: [2, 3], padding: [[2, 2], [3, 1]] },
  { input: [1, 6, 6, 40], kernel: [1, 1, 40, 33] },
  // More output pixels than one block, and a kernel matrix past L2 (k in several blocks of kc).
  { input: [1, 12, 13, 5], kernel: [3, 3, 5, 17], padding: [[1, 1], [1, 1]] },
  { input: [1, 4, 4, 300], kernel: [3, 3, 300, 200], padding: [[1, 1], [1, 1]] },
  // Kernel spatial dimensions swapped, output batch and spatial dimensions reordered.
  {
    input: [2, 7, 6, 3], kernel: [2, 3, 3, 4], padding: [[1, 0], [0, 1]],
    dn: { ...NHWC, kernelSpatialDimensions: [1, 0], outputBatchDimension: 2, outputSpatialDimensions: [0, 1] },
  },
];

function runCases(type: "f32" | "f64", cases: { c: ConvCase; splits?: number; threads?: number }[], name: string): void {
  const cpu = nativeCpu();
  const F = type === "f32" ? Float32Array : Float64Array;
  const all: { kernel: NativeKernel; x: Float32Array | Float64Array; w: Float32Array | Float64Array; want: number[]; depth: number; splits?: number; threads?: number }[] = [];
  cases.forEach(({ c, splits, threads }, ci) => {
    const { computation, conv } = buildConv(c, type);
    const x = new F(elementCount(c.input)).map(() => random() * 2 - 1);
    const w = new F(elementCount(c.kernel)).map(() => random() * 2 - 1);
    // Infinity in the input: NaN or infinity in every output it reaches, as the interpreter says.
    if (ci === 1) x[17] = Infinity;
    const want = evaluate(computation, [Literal.fromValues(type, c.input, [...x]), Literal.fromValues(type, c.kernel, [...w])]).toNumbers();
    const families = splits === undefined && threads === undefined ? runnableFamilies(cpu) : [undefined];
    for (const family of families) {
      const kernel = emitConvC(conv, cpu, `conv_${type}_${ci}_${family?.name ?? "cpu"}_${splits ?? 1}_${threads ?? 1}`, family);
      if ("declined" in kernel) throw new Error(kernel.declined);
      all.push({ kernel, x, w, want, depth: c.kernel[0]! * c.kernel[1]! * c.kernel[2]!, ...(splits !== undefined ? { splits } : {}), ...(threads !== undefined ? { threads } : {}) });
    }
  });
  const results = runNativeCases(all.map((a): NativeCase => ({
    kernel: a.kernel, operands: [a.x, a.w], resultBytes: [a.want.length * F.BYTES_PER_ELEMENT],
    ...(a.splits !== undefined ? { splits: a.splits } : {}), ...(a.threads !== undefined ? { threads: a.threads } : {}),
  })), name);
  all.forEach((a, i) => {
    const bytes = results[i]![0]!;
    const got = new F(bytes.buffer as ArrayBuffer, bytes.byteOffset, a.want.length);
    const tol = 16 * (type === "f32" ? 2 ** -23 : 2 ** -52) * a.depth;
    a.want.forEach((v, j) => {
      const g = got[j]!;
      const ok = Number.isFinite(v) ? Math.abs(g - v) <= tol * Math.max(1, Math.abs(v)) : Object.is(g, v) || (Number.isNaN(g) && Number.isNaN(v));
      if (!ok) assert.fail(`${a.kernel.name} element ${j}: ${g} vs the interpreter's ${v}`);
    });
  });
}

test("native conv f32: every family; padding, strides, dilation, channel counts, layouts vs the interpreter", { skip }, () => {
  runCases("f32", CASES.map((c) => ({ c })), "native conv f32");
});

test("native conv f64: every family vs the interpreter", { skip }, () => {
  runCases("f64", CASES.slice(0, 6).map((c) => ({ c })), "native conv f64");
});

test("native conv: split ranges and the module's threads", { skip }, () => {
  const big: ConvCase = { input: [2, 16, 16, 8], kernel: [3, 3, 8, 24], padding: [[1, 1], [1, 1]] };
  runCases("f32", [{ c: big, splits: 3 }, { c: big, threads: 2 }, { c: CASES[3]!, splits: 2 }], "native conv splits");
});

test("native conv: unsupported forms say why", () => {
  const cpu = { arch: "x86_64", avx2: true, fma: true, avx512f: true, neon: false };
  const { conv: grouped } = buildConv({ input: [1, 5, 5, 4], kernel: [3, 3, 2, 4], featureGroupCount: 2 });
  const k = emitConvC(grouped, cpu);
  assert.ok("declined" in k && /group/.test(k.declined));
  const { conv } = buildConv({ input: [1, 5, 5, 2], kernel: [3, 3, 2, 3] }, "f32");
  assert.ok(!("declined" in emitConvC(conv, cpu)));
  // Empty windows and no output features, alone and (the window) under an epilogue: the C kernels' one rule.
  const declined = (k: NativeKernel | { declined: string }): string => ("declined" in k ? k.declined : "compiled");
  for (const kernel of [[3, 3, 0, 3], [0, 3, 2, 3]]) {
    const input = [1, 5, 5, kernel[2]!];
    assert.match(declined(emitConvC(buildConv({ input, kernel }).conv, cpu)), /^convolution: empty kernel window$/, `${kernel}`);
    const b = new XlaBuilder("fused_conv_relu");
    const y = convGeneralDilated(parameter(b, 0, arrayShape("f32", input)), parameter(b, 1, arrayShape("f32", kernel)), [1, 1], [[1, 1], [1, 1]], [], [], NHWC);
    assert.match(declined(emitOutputFusionC(b.build(max(y, constantR0(b, "f32", 0))), cpu, "fused")), /^convolution: empty kernel window$/, `${kernel} with an epilogue`);
  }
  assert.match(declined(emitConvC(buildConv({ input: [1, 5, 5, 2], kernel: [3, 3, 2, 0] }).conv, cpu)), /^convolution: no output features$/);
});
