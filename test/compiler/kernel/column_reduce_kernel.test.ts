// Column reductions (kernel/column_reduce_kernel.ts): the statements on their own (a
// vector of outputs with its per-lane results and the scalar tail for WebAssembly's
// schedule, C's blocks of lane arrays), then the printed kernels against the interpreter
// on shapes that reach the vector body and the tails, every reducer kind and element
// type the backends compile, NaNs and signed zeros for max and min: on WebAssembly with
// and without SIMD, and as C where there is a C compiler.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  XlaBuilder, add, and, arrayShape, constantR0, iota, max, min, mul, or, parameter, reduce, tuple,
  Literal, type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { lowerFusion, type FusedKernelIR } from "../../../src/compiler/kernel/lower_fusion.js";
import { scheduleReduce, type ReduceTarget } from "../../../src/compiler/kernel/schedule_reduce.js";
import { columnReduceKernel } from "../../../src/compiler/kernel/column_reduce_kernel.js";
import type { Kernel } from "../../../src/compiler/kernel/kernel_ir.js";
import { WASM_REDUCE_TARGET } from "../../../src/compiler/wasm/emit_reduce.js";
import { C_REDUCE_KERNEL_TARGET, C_REDUCE_TARGET } from "../../../src/compiler/native/emit_c_reduce.js";
import { compileSync } from "../../../src/compiler/index.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { HloModule } from "../../../src/ir/computation.js";
import { checkFusion, randomLiteral, SCALAR_TARGET, TARGET as WASM } from "../fused/harness.js";
import { needsCompiler } from "../native/native_support.js";
import { argmaxComputation } from "../../reduction/support.js";
import { only, reducer, VECTOR128_TARGET as TARGET } from "./programs.js";

type Op = (x: XlaOp, y: XlaOp) => XlaOp;

function columnReduce(t: ElementType, dims: number[], rdims: number[], op: Op, init: number | boolean): Computation {
  const b = new XlaBuilder(`column_${t}_${dims.join("x")}`);
  const x = parameter(b, 0, arrayShape(t, dims), "x");
  return b.build(reduce(x, constantR0(b, t, init), reducer(b, t, op), rdims));
}

function kernelOf(c: Computation, reduceTarget: ReduceTarget = WASM_REDUCE_TARGET, target = TARGET): Kernel | undefined {
  const ir = lowerFusion(c);
  if ("declined" in ir) throw new Error(ir.declined);
  const s = scheduleReduce(ir as FusedKernelIR, reduceTarget);
  if ("declined" in s) throw new Error(s.declined);
  return columnReduceKernel(ir as FusedKernelIR, s, target);
}

test("a column sum of 10 outputs: a vector of 4 outputs at a time, each lane folded into a result of its own, then a scalar tail", () => {
  const k = kernelOf(columnReduce("f32", [100, 10], [0], add, 0))!;
  // The vector accumulator of four outputs, a fresh scalar for each of its lanes, then the tail's.
  assert.deepEqual(only(k, "accumulator").map((a) => [a.name, a.lanes, a.copies, a.sides, a.start]), [
    ["a0", 4, 1, false, { identity: -0 }],
    ...Array.from({ length: 5 }, () => ["s0", 1, 1, false, { identity: -0 }]),
  ]);
  assert.deepEqual(only(k, "loop").map((l) => [l.index, l.stop, l.lanes, l.copies]), [["jb", 10, 4, 1]]);
  // r inside the vector loop, the tail's outputs, r inside the tail.
  assert.deepEqual(only(k, "for").map((l) => [l.index, l.stop, l.step]), [["r", 100, 1], ["jb", 10, 1], ["r", 100, 1]]);
  assert.deepEqual(only(k, "at").map((a) => [a.index, a.lanes, a.body.map((x) => x.s)]), [["i", 4, ["vectorValues", "combine"]], ["i", 1, ["values", "combine"]]]);
  assert.deepEqual(only(k, "combine").map((c) => c.acc), ["a0", "s0"]);
  assert.deepEqual(only(k, "repair").map((r) => r.accs), [["a0"]]);
  assert.deepEqual(only(k, "extract").map((x) => [x.acc, x.lane, x.into]), [0, 1, 2, 3].map((l) => ["a0", l, "s0"]));
  // Four outputs from the lanes (at jb + lane), one from the tail.
  assert.equal(only(k, "result").length, 5);
  assert.deepEqual(only(k, "storeElement").map((x) => x.index), [
    ...["jl", "jl", "jl", "jl", "i"].map((j) => ({ op: "add", a: { op: "mul", a: { op: "index", name: "row" }, b: { op: "const", value: 10 } }, b: { op: "index", name: j } })),
  ]);
  assert.deepEqual(only(k, "index").filter((x) => x.name === "jl").map((x) => x.value), [0, 1, 2, 3].map((l) => ({ op: "add", a: { op: "index", name: "jb" }, b: { op: "const", value: l } })));
  // The vector section holds the whole vector loop; the tail follows it.
  const sections = k.unit.filter((x) => x.s === "vector");
  assert.equal(sections.length, 1);
  assert.deepEqual(sections[0]!.body.map((x) => x.s), ["loop"]);
  assert.ok(k.unit.indexOf(sections[0]!) < k.unit.findIndex((x) => x.s === "for"));
  assert.equal(k.inner, "i");
  assert.equal(k.lanes, 4);
});

test("a column max keeps side accumulators; fewer outputs than lanes, integer types and generic reducers stay scalar", () => {
  const m = kernelOf(columnReduce("f32", [9, 8], [0], max, -Infinity))!;
  assert.deepEqual(only(m, "accumulator").filter((a) => a.lanes > 1).map((a) => [a.name, a.sides]), [["a0", true]]);
  const s32 = kernelOf(columnReduce("s32", [9, 8], [0], max, -(2 ** 31)))!;
  assert.deepEqual(only(s32, "accumulator").filter((a) => a.lanes > 1).map((a) => [a.name, a.sides]), [["a0", false]]);
  // Three outputs: no vector of four.
  const narrow = kernelOf(columnReduce("f32", [9, 3], [0], add, 0))!;
  assert.equal(only(narrow, "vector").length, 0);
  assert.deepEqual(only(narrow, "for").map((l) => [l.index, l.stop]), [["jb", 3], ["r", 9]]);
  // argmax over the column: in the interpreter's order, from the inits, by its body.
  const b = new XlaBuilder("argmax");
  const x = parameter(b, 0, arrayShape("f32", [6, 50]));
  const idx = iota(b, arrayShape("s32", [6, 50]), 0);
  const k = kernelOf(b.build(reduce(b, [x, idx], [constantR0(b, "f32", -Infinity), constantR0(b, "s32", 0)], argmaxComputation(b), [0])))!;
  assert.equal(only(k, "vector").length, 0);
  assert.deepEqual(only(k, "accumulator").map((a) => [a.name, "node" in a.start]), [["s0", true], ["s1", true]]);
  assert.deepEqual(only(k, "update").map((u) => u.accs), [["s0", "s1"]]);
  assert.deepEqual(only(k, "result").map((r) => r.init), [undefined, undefined]);
  // A row reduction is not a column one.
  assert.equal(kernelOf(columnReduce("f32", [10, 100], [1], add, 0)), undefined);
});

test("C's column reductions: blocks of 256 outputs in lane arrays, the last one partial; halves start each lane at the init", () => {
  const k = kernelOf(columnReduce("f32", [7, 300], [0], add, 0), C_REDUCE_TARGET, C_REDUCE_KERNEL_TARGET)!;
  assert.deepEqual(only(k, "for").map((l) => [l.index, l.stop, l.step]), [["j0", 300, 256], ["r", 7, 1]]);
  assert.deepEqual(only(k, "index").find((x) => x.name === "j1")!.value, {
    op: "min", a: { op: "add", a: { op: "index", name: "j0" }, b: { op: "const", value: 256 } }, b: { op: "const", value: 300 },
  });
  assert.deepEqual(only(k, "accumulator").map((a) => [a.name, a.lanes, a.copies, a.start]), [["acc0", 256, 1, { identity: -0 }]]);
  // The elements of the block inside r, then the block's results.
  assert.deepEqual(only(k, "lanes").map((l) => [l.index, l.from, l.to, l.lanes, l.body.map((x) => x.s)]), [
    ["j", "j0", "j1", 256, ["bind", "values", "combine"]],
    ["j", "j0", "j1", 256, ["bind", "values", "result", "values", "store"]],
  ]);
  assert.equal(only(k, "vector").length, 0);
  assert.equal(only(k, "assign").length, 0);
  // Fewer outputs than a block: one block of them all.
  const small = kernelOf(columnReduce("f32", [7, 100], [0], max, -Infinity), C_REDUCE_TARGET, C_REDUCE_KERNEL_TARGET)!;
  assert.deepEqual(only(small, "for")[0]!.step, 100);
  assert.equal(only(small, "accumulator")[0]!.sides, false);
  // An f16 sum runs in the interpreter's order: each lane starts at its init.
  const half = kernelOf(columnReduce("f16", [7, 300], [0], add, 0), C_REDUCE_TARGET, C_REDUCE_KERNEL_TARGET)!;
  assert.deepEqual(only(half, "accumulator").map((a) => a.start), [{ assigned: true }]);
  assert.deepEqual(only(half, "lanes")[0]!.body.map((x) => x.s), ["bind", "values", "assign"]);
  assert.deepEqual(only(half, "result").map((r) => r.init), [undefined]);
});

// ---- the printed kernels against the interpreter ----

const INT_INIT: Record<string, (t: ElementType) => number | bigint> = {
  add: () => 0, mul: () => 1, and: () => -1, or: () => 0,
  max: (t) => (t.startsWith("u") ? 0 : t === "s8" ? -128 : t === "s16" ? -32768 : t === "s32" ? -(2 ** 31) : -(2n ** 63n)),
  min: (t) => (t === "u8" ? 255 : t === "u16" ? 65535 : t === "u32" ? 2 ** 32 - 1 : t === "s8" ? 127 : t === "s32" ? 2 ** 31 - 1 : 2n ** 63n - 1n),
};
const OPS: Record<string, Op> = { add, mul, max, min, and, or };
/** [Rn, J] shapes reduced over 0: J below one vector, whole vectors, vectors and a tail (of 2 and of 4 lanes); and [3, 5, 7] over 1. */
const SHAPES: [number[], number[]][] = [[[11, 3], [0]], [[11, 8], [0]], [[17, 11], [0]], [[5, 37], [0]], [[3, 5, 7], [1]], [[4, 6, 5], [0, 1]]];

for (const target of [WASM, SCALAR_TARGET]) {
  const mode = target.simd ? "simd" : "scalar";
  test(`${mode}: column reductions of every reducer kind and type match the interpreter`, () => {
    for (const [dims, rdims] of SHAPES) {
      for (const t of ["f32", "f64"] as const) {
        for (const name of ["add", "max", "min"] as const) {
          const init = name === "add" ? 0 : name === "max" ? -Infinity : Infinity;
          checkFusion(columnReduce(t, dims, rdims, OPS[name]!, init), [randomLiteral(t, dims, dims.length + 3)], { rel: 1e-5, absFloor: 1e-3 }, target);
        }
      }
      // Halves: max and min (WebAssembly declines their sums, which would not round as the interpreter's).
      for (const t of ["f16", "bf16"] as const) {
        for (const name of ["max", "min"] as const) {
          checkFusion(columnReduce(t, dims, rdims, OPS[name]!, name === "max" ? -Infinity : Infinity), [randomLiteral(t, dims, 5)], {}, target);
        }
      }
      for (const t of ["s8", "u8", "s32", "u32", "s64"] as const) {
        for (const name of ["add", "mul", "max", "min", "and", "or"] as const) {
          const b = new XlaBuilder(`column_${t}_${name}`);
          const x = parameter(b, 0, arrayShape(t, dims));
          const init = INT_INIT[name]!(t);
          const c = b.build(reduce(x, constantR0(b, t, t === "s64" ? BigInt(init) : init), reducer(b, t, OPS[name]!), rdims));
          checkFusion(c, [randomLiteral(t, dims, 7)], {}, target);
        }
      }
      for (const name of ["and", "or"] as const) checkFusion(columnReduce("pred", dims, rdims, OPS[name]!, name === "and"), [randomLiteral("pred", dims, 9)], {}, target);
    }
  });
}

/** Columns of one pattern each: NaNs and zeros of both signs, at the first, middle and last r. */
function extremaColumns(rn: number): number[][] {
  const cols: number[][] = [];
  const fill = (v: number): number[] => new Array<number>(rn).fill(v);
  cols.push(fill(-0), fill(0), fill(NaN), fill(-Infinity), fill(Infinity));
  for (const at of [0, Math.floor(rn / 2), rn - 1]) {
    for (const [base, odd] of [[-0, 0], [0, -0], [-3, 0], [-3, -0], [3, 0], [3, -0], [-0, NaN], [1, NaN], [-Infinity, 0]]) {
      const col = fill(base!);
      col[at] = odd!;
      cols.push(col);
    }
  }
  return cols;
}

test("column max and min are exact: NaN anywhere, max(-0, +0) = +0, min(-0, +0) = -0, in vectors and tails", () => {
  const rn = 9;
  const cols = extremaColumns(rn);
  const J = cols.length; // 32: whole vectors; drop some for a tail
  for (const j of [J, J - 3]) {
    for (const t of ["f32", "f64", "bf16", "f16"] as const) {
      const values = Array.from({ length: rn * j }, (_, i) => cols[i % j]![Math.floor(i / j)]!);
      for (const [op, init] of [[max, -Infinity], [min, Infinity]] as const) {
        for (const target of [WASM, SCALAR_TARGET]) {
          checkFusion(columnReduce(t, [rn, j], [0], op, init), [Literal.fromValues(t, [rn, j], values)], {}, target);
        }
      }
    }
  }
});

test("column reductions with several outputs, a full-shape output and argmax match the interpreter", () => {
  for (const target of [WASM, SCALAR_TARGET]) {
    for (const dims of [[6, 10], [13, 3]]) {
      // A sum and a max of the same column in one pass, and x · 2 stored whole.
      const b = new XlaBuilder("column_moments");
      const x = parameter(b, 0, arrayShape("f32", dims));
      const y = mul(x, constantR0(b, "f32", 2));
      const c = b.build(tuple(b, [reduce(y, constantR0(b, "f32", 0), reducer(b, "f32", add), [0]), reduce(y, constantR0(b, "f32", -Infinity), reducer(b, "f32", max), [0]), y]));
      checkFusion(c, [randomLiteral("f32", dims, 3)], { rel: 1e-5, absFloor: 1e-3 }, target);
      const a = new XlaBuilder("column_argmax");
      const v = parameter(a, 0, arrayShape("f32", dims));
      const idx = iota(a, arrayShape("s32", dims), 0);
      checkFusion(a.build(reduce(a, [v, idx], [constantR0(a, "f32", -Infinity), constantR0(a, "s32", 0)], argmaxComputation(a), [0])), [randomLiteral("f32", dims, 4)], {}, target);
    }
  }
});

test("C column reductions (blocks of 256, the last partial) of every kind and type match the interpreter", (t) => {
  if (!needsCompiler(t)) return;
  // One program: every reduction of one input, so one C module holds them all.
  const cases: [ElementType, string[]][] = [
    ["f32", ["add", "mul", "max", "min"]], ["f64", ["add", "max", "min"]], ["f16", ["add", "mul", "max", "min"]], ["bf16", ["add", "max", "min"]],
    ["s8", ["add", "mul", "max", "min", "and", "or"]], ["u32", ["add", "max", "min", "and", "or"]], ["s64", ["add", "mul", "max", "min"]],
    ["pred", ["and", "or"]],
  ];
  for (const [dims, rdims] of [[[5, 300], [0]], [[3, 2, 40], [1]]] as [number[], number[]][]) {
    for (const [type, kinds] of cases) {
      const b = new XlaBuilder(`c_columns_${type}`);
      const x = parameter(b, 0, arrayShape(type, dims));
      const float = type.startsWith("f") || type === "bf16";
      const initOf = (k: string): number | bigint | boolean => {
        if (type === "pred") return k === "and";
        if (float) return { add: 0, mul: 1, max: -Infinity, min: Infinity }[k]!;
        const v = INT_INIT[k]!(type);
        return type === "s64" ? BigInt(v) : v;
      };
      // Products of halves near 1, so they do not overflow or vanish.
      const mulInput = float ? add(constantR0(b, type, 1), mul(x, constantR0(b, type, 1 / 64))) : x;
      const outs = kinds.map((k) => reduce(k === "mul" ? mulInput : x, constantR0(b, type, initOf(k)), reducer(b, type, OPS[k]!), rdims));
      const c = b.build(tuple(b, outs));
      const args = [randomLiteral(type, dims, 21)];
      const want = evaluate(c, args);
      const exe = compileSync(new HloModule("m", c), { backend: "native" });
      try {
        assert.ok(exe.program.kernels.some(isProgramNativeKernel), `no C kernel in:\n${exe.dump()}`);
        const got = exe.run(args);
        // f32 and f64 sums and products are reassociated; all else exact (halves run in the interpreter's order).
        const loose = type === "f32" || type === "f64";
        const g = got.elements, w = want.elements;
        kinds.forEach((k, n) => {
          const gv = g[n]!.values(), wv = w[n]!.values();
          for (let i = 0; i < wv.length; i++) {
            const p = wv[i]!, q = gv[i]!;
            const same = Object.is(p, q) || (typeof p === "number" && typeof q === "number" &&
              ((Number.isNaN(p) && Number.isNaN(q)) || (loose && (k === "add" || k === "mul") && Math.abs(p - q) <= 1e-5 * Math.max(1, Math.abs(p)))));
            assert.ok(same, `${k} of ${type} over ${rdims} of ${dims}, output ${i}: got ${String(q)}, want ${String(p)}`);
          }
        });
      } finally {
        exe.delete();
      }
    }
  }
});
