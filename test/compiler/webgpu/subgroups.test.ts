// Row reductions and row pipelines on WebGPU with subgroup operations (where the device
// has WGSL's `subgroups` feature: SwiftShader's has, with 4-wide subgroups) and with them
// turned off (XLATS_WEBGPU_SUBGROUPS=0: the workgroup tree), each against the
// interpreter: max and min bit-exact with NaN and signed zeros, integer sums (wrapping,
// narrow types), and/or, pred; f32 sums and products, softmax and layer norm within
// rounding (both forms reassociate).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { gpuContext, releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import {
  XlaBuilder, parameter, binaryOp, reduce, constantR0, tuple, exp, sub, div, mul, add, unaryOp, scalarReducer,
} from "../../../src/index.js";
import type { Computation } from "../../../src/ir/computation.js";
import type { BinaryOpcode } from "../../../src/ir/opcodes.js";
import type { ElementType } from "../../../src/types/element_type.js";
import { Literal, type Scalar } from "../../../src/types/literal.js";
import { arrayShape, scalarShape } from "../../../src/types/shape.js";
import { compareLeaf, type CompareTally } from "../../../tools/fuzz/compare_compiled.js";

const skip = webgpuSkip;
after(() => releaseGpu());

/** A reducer of one binary op on scalars of `t`. */
function reducer(b: XlaBuilder, op: BinaryOpcode, t: ElementType): Computation {
  const sb = b.createSubBuilder(`${op}_${t}`);
  return sb.build(binaryOp(op, parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

/** Compiled with subgroup operations allowed (`on`) or turned off, run, and the number of kernels that used them. */
async function runGpu(c: Computation, args: readonly Literal[], on: boolean): Promise<{ got: Literal; subgroupKernels: number; dump: string }> {
  const before = process.env["XLATS_WEBGPU_SUBGROUPS"];
  if (on) delete process.env["XLATS_WEBGPU_SUBGROUPS"];
  else process.env["XLATS_WEBGPU_SUBGROUPS"] = "0";
  try {
    const exe = await compile(c, { backend: "webgpu" });
    try {
      return { got: await exe.run(args), subgroupKernels: exe.stats.subgroupKernels, dump: exe.dump() };
    } finally {
      exe.delete();
    }
  } finally {
    if (before === undefined) delete process.env["XLATS_WEBGPU_SUBGROUPS"];
    else process.env["XLATS_WEBGPU_SUBGROUPS"] = before;
  }
}

const bits = (v: Scalar): string => (typeof v === "number" ? (Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : String(v)) : String(v));

function assertExact(want: Literal, got: Literal, what: string): void {
  assert.deepEqual(got.values().map(bits), want.values().map(bits), what);
}

function assertRounded(want: Literal, got: Literal, what: string): void {
  const tally: CompareTally = { compared: 0, unbounded: 0 };
  assert.equal(compareLeaf("f32", { cls: "rounded", ulps: 0, eps: 2 ** -23 }, want.values(), got.values(), tally), undefined, what);
}

/** Both forms, each against the interpreter; with subgroups, the kernels say they used them where the device has them. */
async function bothForms(c: Computation, args: readonly Literal[], check: (want: Literal, got: Literal, what: string) => void, reduces = true): Promise<void> {
  const want = evaluate(c, args);
  const hasSubgroups = (await gpuContext()).subgroups;
  for (const on of [true, false]) {
    const { got, subgroupKernels, dump } = await runGpu(c, args, on);
    check(want, got, `${c.name}, subgroups ${on ? "on" : "off"}`);
    if (on && hasSubgroups && reduces) {
      assert.ok(subgroupKernels > 0, `${c.name}: no kernel used subgroups`);
      assert.match(dump, /subgroup operations,/);
    } else {
      assert.equal(subgroupKernels, 0);
    }
  }
}

// Rows of 1 to 5000 elements: fewer elements than lanes, lanes with 1 to 47 each, workgroups of 64 to 256 (a row of 1 is no reduction: a copy).
const ROWS = [1, 3, 63, 64, 65, 700, 3000, 5000];

test("f32 max and min with NaN and signed zeros: bit-exact with the interpreter, with and without subgroups", { skip }, async () => {
  for (const n of ROWS) {
    const b = new XlaBuilder(`maxmin_${n}`);
    const x = parameter(b, 0, arrayShape("f32", [6, n]), "x");
    const c = b.build(tuple(b, [
      reduce(x, constantR0(b, "f32", -Infinity), scalarReducer(b, "maximum", "f32"), [1]),
      reduce(x, constantR0(b, "f32", Infinity), scalarReducer(b, "minimum", "f32"), [1]),
    ]));
    // Row 0: all -0; row 1: -0 and +0 mixed; row 2: a NaN at its end; row 3: negatives and -0; row 4: one NaN first; row 5: ±Infinity.
    const xs = Array.from({ length: 6 * n }, (_, k) => {
      const row = Math.floor(k / n), i = k % n;
      switch (row) {
        case 0: return -0;
        case 1: return i % 3 === 1 ? 0 : -0;
        case 2: return i === n - 1 ? NaN : Math.sin(i) * 100;
        case 3: return i === Math.floor(n / 2) ? -0 : -1 - i;
        case 4: return i === 0 ? NaN : i;
        default: return i % 2 === 0 ? Infinity : -Infinity;
      }
    });
    await bothForms(c, [Literal.fromValues("f32", [6, n], xs)], (want, got, what) => {
      want.elements.forEach((w, k) => assertExact(w, got.elements[k]!, `${what}: output ${k}`));
    }, n > 1);
  }
});

test("integer reductions (sums that wrap, narrow types, and, or, max, min, pred) are bit-exact, with and without subgroups", { skip }, async () => {
  for (const n of [5, 64, 1000]) {
    const b = new XlaBuilder(`ints_${n}`);
    const i = parameter(b, 0, arrayShape("s32", [4, n]), "i");
    const u = parameter(b, 1, arrayShape("u32", [4, n]), "u");
    const s8 = parameter(b, 2, arrayShape("s8", [4, n]), "s8");
    const u16 = parameter(b, 3, arrayShape("u16", [4, n]), "u16");
    const p = parameter(b, 4, arrayShape("pred", [4, n]), "p");
    const c = b.build(tuple(b, [
      reduce(i, constantR0(b, "s32", 7), reducer(b, "add", "s32"), [1]),
      reduce(i, constantR0(b, "s32", -1), reducer(b, "and", "s32"), [1]),
      reduce(u, constantR0(b, "u32", 0), reducer(b, "or", "u32"), [1]),
      reduce(u, constantR0(b, "u32", 0), reducer(b, "maximum", "u32"), [1]),
      reduce(i, constantR0(b, "s32", 2 ** 31 - 1), reducer(b, "minimum", "s32"), [1]),
      reduce(i, constantR0(b, "s32", 1), reducer(b, "multiply", "s32"), [1]),
      reduce(s8, constantR0(b, "s8", 3), reducer(b, "add", "s8"), [1]),
      reduce(u16, constantR0(b, "u16", 0), reducer(b, "add", "u16"), [1]),
      reduce(p, constantR0(b, "pred", true), reducer(b, "and", "pred"), [1]),
      reduce(p, constantR0(b, "pred", false), reducer(b, "or", "pred"), [1]),
    ]));
    const count = 4 * n;
    const args = [
      Literal.fromValues("s32", [4, n], Array.from({ length: count }, (_, k) => (k * 2654435761) | 0)),
      Literal.fromValues("u32", [4, n], Array.from({ length: count }, (_, k) => ((k * 40503) >>> 0) % 2 ** 32)),
      Literal.fromValues("s8", [4, n], Array.from({ length: count }, (_, k) => ((k * 37) % 256) - 128)),
      Literal.fromValues("u16", [4, n], Array.from({ length: count }, (_, k) => (k * 977) % 65536)),
      // Row 0 all true, row 1 one false, row 2 all false, row 3 alternating.
      Literal.fromValues("pred", [4, n], Array.from({ length: count }, (_, k) => {
        const row = Math.floor(k / n), j = k % n;
        return row === 0 ? true : row === 1 ? j !== n - 1 : row === 2 ? false : j % 2 === 0;
      })),
    ];
    await bothForms(c, args, (want, got, what) => {
      want.elements.forEach((w, k) => assertExact(w, got.elements[k]!, `${what}: output ${k}`));
    });
  }
});

test("f32 sums and products, softmax and layer norm: within rounding of the interpreter, with and without subgroups", { skip }, async () => {
  const n = 1500;
  const b = new XlaBuilder("sums");
  const x = parameter(b, 0, arrayShape("f32", [5, n]), "x");
  const sums = b.build(tuple(b, [
    reduce(x, constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), [1]),
    reduce(unaryOp("abs", x), constantR0(b, "f32", 1), reducer(b, "multiply", "f32"), [1]),
  ]));
  const s = new XlaBuilder("softmax");
  const v = parameter(s, 0, arrayShape("f32", [5, n]), "v");
  const e = exp(sub(v, reduce(v, constantR0(s, "f32", -Infinity), scalarReducer(s, "maximum", "f32"), [1]), [0]));
  const softmax = s.build(div(e, reduce(e, constantR0(s, "f32", 0), scalarReducer(s, "add", "f32"), [1]), [0]));
  const l = new XlaBuilder("layernorm");
  const y = parameter(l, 0, arrayShape("f32", [5, n]), "y");
  const mean = div(reduce(y, constantR0(l, "f32", 0), scalarReducer(l, "add", "f32"), [1]), constantR0(l, "f32", n));
  const d = sub(y, mean, [0]);
  const variance = div(reduce(mul(d, d), constantR0(l, "f32", 0), scalarReducer(l, "add", "f32"), [1]), constantR0(l, "f32", n));
  const layerNorm = l.build(mul(d, unaryOp("rsqrt", add(variance, constantR0(l, "f32", 1e-5))), [0]));
  // Products of values near 1 (no overflow); sums of values of mixed signs.
  const arg = Literal.fromValues("f32", [5, n], Array.from({ length: 5 * n }, (_, k) => 1 + Math.cos(k * 0.91) / 1000));
  const mixed = Literal.fromValues("f32", [5, n], Array.from({ length: 5 * n }, (_, k) => Math.cos(k * 0.91) * 5 + (k % 7)));
  await bothForms(sums, [arg], (want, got, what) => want.elements.forEach((w, k) => assertRounded(w, got.elements[k]!, `${what}: output ${k}`)));
  for (const c of [softmax, layerNorm]) await bothForms(c, [mixed], assertRounded);
});

test("with subgroups a reduction's kernel has one combining barrier, not the tree's log2(workgroup); the plan and dump say so", () => {
  const b = new XlaBuilder("rowsum");
  const x = parameter(b, 0, arrayShape("f32", [4, 4096]), "x");
  const c = b.build(reduce(x, constantR0(b, "f32", 0), scalarReducer(b, "add", "f32"), [1]));
  const barriers = (source: string): number => source.split("workgroupBarrier()").length - 1;
  const on = planGpuProgram(c, {}, { subgroups: true });
  const off = planGpuProgram(c, {}, { subgroups: false });
  const [k1] = on.kernels, [k0] = off.kernels;
  assert.ok(k1!.source.startsWith("enable subgroups;"));
  assert.match(k1!.source, /subgroupAdd\(/);
  // 256 lanes: the tree's 8 steps and its first store's barrier; subgroups: the leader bits cleared, the slots' ranks, then the subgroups' totals.
  assert.equal(barriers(k0!.source), 9);
  assert.equal(barriers(k1!.source), 3);
  assert.equal(k0!.subgroups, undefined);
  assert.match(dumpGpuProgram(on), /subgroup operations available[\s\S]*subgroup operations, 4 workgroups of 256/);
  assert.match(dumpGpuProgram(off), /no subgroup operations/);
});
