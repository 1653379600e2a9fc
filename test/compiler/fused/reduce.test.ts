// Input fusions: reductions of fused expressions (row, column, multi-output, epilogue).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, and, arrayShape, broadcastInDim, iota, constantR0, convertElementType, div, exp, max, min, mul, or, parameter,
  reduce, scalarShape, sin, sub, transpose, tuple, XlaBuilder, Literal, type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { checkFusion, randomLiteral, SCALAR_TARGET, TARGET } from "./harness.js";
import { argmaxComputation } from "../../reduction/support.js";

type Op = (a: XlaOp, b: XlaOp) => XlaOp;

function reducer(b: XlaBuilder, t: ElementType, op: Op): Computation {
  const s = b.createSubBuilder("r");
  return s.build(op(parameter(s, 0, scalarShape(t)), parameter(s, 1, scalarShape(t))));
}

const INIT: Record<string, number | boolean> = { add: 0, mul: 1, max: -Infinity, min: Infinity, and: true, or: false };

function reduceCase(t: ElementType, dims: number[], rdims: number[], opName: keyof typeof INIT, op: Op, pre?: (x: XlaOp) => XlaOp) {
  const b = new XlaBuilder(`reduce_${t}_${opName}_${dims.join("x")}_${rdims.join("")}`);
  const x = parameter(b, 0, arrayShape(t, dims));
  const init = INIT[opName]!;
  const isInt = t.startsWith("s") || t.startsWith("u");
  const initValue = typeof init === "boolean" ? (t === "pred" ? init : init ? -1 : 0)
    : isInt && !Number.isFinite(init) ? (init > 0 ? (t.startsWith("u") ? 255 : 127) : (t.startsWith("u") ? 0 : -128)) : init;
  const c = b.build(reduce(pre ? pre(x) : x, constantR0(b, t, initValue), reducer(b, t, op), rdims));
  return { c, args: [randomLiteral(t, dims, dims.length * 7 + rdims.length)] };
}

for (const target of [TARGET, SCALAR_TARGET]) {
  const mode = target.simd ? "simd" : "scalar";

  test(`${mode}: row and column reductions of every kind`, () => {
    const shapes: [number[], number[]][] = [[[37, 53], [1]], [[37, 53], [0]], [[5, 6, 7], [1, 2]], [[5, 6, 7], [0, 1]], [[5, 6, 7], [0, 2]], [[103], [0]], [[4, 9], [0, 1]]];
    for (const [dims, rdims] of shapes) {
      for (const t of ["f32", "f64"] as const) {
        for (const [name, op] of [["add", add], ["mul", mul], ["max", max], ["min", min]] as const) {
          // Products of many random values overflow; keep them near 1.
          const pre = name === "mul" ? (x: XlaOp) => add(constantR0(x.builder, t, 1), div(x, constantR0(x.builder, t, 1e6))) : undefined;
          const { c, args } = reduceCase(t, dims, rdims, name, op, pre);
          checkFusion(c, args, { rel: 1e-5, absFloor: 1e-3 }, target);
        }
      }
      for (const t of ["s32", "u8", "s64", "s8", "u32"] as const) {
        for (const [name, op] of [["add", add], ["mul", mul], ["max", max], ["min", min], ["and", and], ["or", or]] as const) {
          const { c, args } = reduceCase(t, dims, rdims, name, op);
          checkFusion(c, args, {}, target);
        }
      }
      for (const [name, op] of [["and", and], ["or", or]] as const) {
        const { c, args } = reduceCase("pred", dims, rdims, name, op);
        checkFusion(c, args, {}, target);
      }
    }
  });

  test(`${mode}: multi-output reduction (sum and sum of squares) with an epilogue`, () => {
    const b = new XlaBuilder("moments");
    const x = parameter(b, 0, arrayShape("f32", [13, 70]));
    const scale = parameter(b, 1, arrayShape("f32", [13]));
    const r = reducer(b, "f32", add);
    const zero = constantR0(b, "f32", 0);
    const s = reduce(x, zero, r, [1]);
    const s2 = reduce(mul(x, x), zero, r, [1]);
    const c = b.build(tuple(b, [mul(s, scale), sub(s2, mul(s, s)), s]));
    checkFusion(c, [randomLiteral("f32", [13, 70], 1), randomLiteral("f32", [13], 2)], { rel: 1e-5, absFloor: 1e-2 }, target);
  });

  test(`${mode}: softmax's two reductions over fused inputs`, () => {
    const b = new XlaBuilder("softmax_sum");
    const x = parameter(b, 0, arrayShape("f32", [9, 130]));
    const m = parameter(b, 1, arrayShape("f32", [9]));
    const e = exp(sub(x, broadcastInDim(m, [9, 130], [0])));
    const c = b.build(reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [1]));
    const xs = randomLiteral("f32", [9, 130], 5);
    checkFusion(c, [xs, randomLiteral("f32", [9], 6)], { rel: 1e-5, absFloor: 1e-30 }, target);
    const bt = new XlaBuilder("transposed_max");
    const y = parameter(bt, 0, arrayShape("f32", [40, 6]));
    const ct = bt.build(reduce(transpose(y, [1, 0]), constantR0(bt, "f32", -Infinity), reducer(bt, "f32", max), [1]));
    checkFusion(ct, [randomLiteral("f32", [40, 6], 8)], {}, target);
    const bs = new XlaBuilder("sum_of_sines");
    const w = parameter(bs, 0, arrayShape("f32", [7, 45]));
    const cs = bs.build(reduce(sin(mul(w, constantR0(bs, "f32", 1e5))), constantR0(bs, "f32", 0), reducer(bs, "f32", add), [1]));
    checkFusion(cs, [randomLiteral("f32", [7, 45], 11)], { rel: 1e-5, absFloor: 1e-3 }, target);
    const bc = new XlaBuilder("converted_sum");
    const z = parameter(bc, 0, arrayShape("u8", [3, 300]));
    const cc = bc.build(reduce(convertElementType(z, "s32"), constantR0(bc, "s32", 7), reducer(bc, "s32", add), [1]));
    checkFusion(cc, [randomLiteral("u8", [3, 300], 9)], {}, target);
  });
}

test("float max and min reductions are bit-exact: NaN anywhere, and max(-0, +0) = +0, min(-0, +0) = -0", () => {
  // Rows of 37 (9 vectors of 4 and a tail, or 18 of 2 and a tail), each with one pattern.
  const n = 37;
  const rows: number[][] = [];
  const fill = (v: number): number[] => new Array<number>(n).fill(v);
  rows.push(fill(-0), fill(0), fill(-Infinity), fill(Infinity), fill(NaN));
  for (const at of [0, 1, 5, 17, 33, 36]) {
    for (const [base, odd] of [[-0, 0], [0, -0], [-3, 0], [-3, -0], [3, 0], [3, -0], [-0, NaN], [0, NaN], [-1, NaN], [1, NaN], [-Infinity, 0]]) {
      const row = fill(base!);
      row[at] = odd!;
      rows.push(row);
    }
    // Negatives (positives) with a zero of each sign, and a NaN after the zeros.
    const mixed = Array.from({ length: n }, (_, i) => -1 - i);
    mixed[at] = 0;
    mixed[(at + 7) % n] = -0;
    rows.push(mixed, mixed.map((v) => -v), mixed.map((v, i) => (i === (at + 11) % n ? NaN : v)));
  }
  for (const t of ["f32", "f64"] as const) {
    for (const [name, op, init] of [["max", max, -Infinity], ["min", min, Infinity]] as const) {
      for (const target of [TARGET, SCALAR_TARGET]) {
        // Row reduction over [rows, n], and the column reduction of its transpose.
        for (const [dims, rdims, values] of [
          [[rows.length, n], [1], rows.flat()],
          [[n, rows.length], [0], Array.from({ length: n * rows.length }, (_, i) => rows[i % rows.length]![Math.floor(i / rows.length)]!)],
        ] as const) {
          const b = new XlaBuilder(`${name}_${t}_${rdims.join("")}`);
          const x = parameter(b, 0, arrayShape(t, [...dims]));
          const c = b.build(reduce(x, constantR0(b, t, init), reducer(b, t, op), [...rdims]));
          checkFusion(c, [Literal.fromValues(t, [...dims], values)], {}, target);
        }
      }
    }
  }
});

test("generic reducers (argmax, non-associative bodies) run in the interpreter's order, bit-exact", () => {
  for (const target of [TARGET, SCALAR_TARGET]) {
    for (const [dims, rdims] of [[[6, 50], [1]], [[6, 50], [0]], [[3, 4, 5], [0, 2]]] as [number[], number[]][]) {
      const b = new XlaBuilder("argmax");
      const x = parameter(b, 0, arrayShape("f32", dims));
      const idx = iota(b, arrayShape("s32", dims), rdims[rdims.length - 1]!);
      const c = b.build(reduce(b, [x, idx], [constantR0(b, "f32", -Infinity), constantR0(b, "s32", 0)], argmaxComputation(b), rdims));
      checkFusion(c, [randomLiteral("f32", dims, 4)], {}, target);
    }
    const b = new XlaBuilder("sum_of_squares_in_order");
    const x = parameter(b, 0, arrayShape("f32", [5, 33]));
    const s = b.createSubBuilder("r");
    const p = parameter(s, 0, scalarShape("f32"));
    const q = parameter(s, 1, scalarShape("f32"));
    const c = b.build(reduce(x, constantR0(b, "f32", 0.5), s.build(add(mul(p, constantR0(s, "f32", 0.75)), mul(q, q))), [1]));
    checkFusion(c, [randomLiteral("f32", [5, 33], 2)], {}, target);
  }
});

test("a reducer with an op that does not fuse is unsupported", () => {
  // Complex sums fuse (kernel/complex_ops.ts); a complex product as the reducer does not.
  const b = new XlaBuilder("odd");
  const x = parameter(b, 0, arrayShape("c64", [4]));
  const s = b.createSubBuilder("r");
  const p = parameter(s, 0, scalarShape("c64"));
  const q = parameter(s, 1, scalarShape("c64"));
  const c = b.build(reduce(x, constantR0(b, "c64", { re: 1, im: 0 }), s.build(mul(p, q)), [0]));
  const k = emitFusionKernel(c, TARGET);
  assert.ok(isDeclined(k) && /complex reductions other than sums/.test(k.declined), JSON.stringify(k));
});
