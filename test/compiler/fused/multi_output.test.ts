// Input fusions with full-shape outputs: tuple(reduce(e), e) roots, where the
// elementwise value e is stored from the reduction's loop (multi-output fusion, as
// the fusion pass forms it for softmax), compared with the interpreter.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, arrayShape, broadcastInDim, constantR0, convertElementType, exp, gt, max, mul, parameter, reduce, scalarShape, sub, tuple,
  XlaBuilder, type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { checkFusion, randomLiteral, SCALAR_TARGET, TARGET } from "./harness.js";

function reducer(b: XlaBuilder, t: ElementType, op: (a: XlaOp, b: XlaOp) => XlaOp): Computation {
  const s = b.createSubBuilder("r");
  return s.build(op(parameter(s, 0, scalarShape(t)), parameter(s, 1, scalarShape(t))));
}

/** softmax's middle kernel: e = exp(x - broadcast(m)) over [rows, cols]; root tuple(sum(e), e). */
function expSum(t: ElementType, rows: number, cols: number): Computation {
  const b = new XlaBuilder(`exp_sum_${t}_${rows}x${cols}`);
  const m = parameter(b, 0, arrayShape(t, [rows]));
  const x = parameter(b, 1, arrayShape(t, [rows, cols]));
  const e = exp(sub(x, broadcastInDim(m, [rows, cols], [0])));
  return b.build(tuple(b, [reduce(e, constantR0(b, t, 0), reducer(b, t, add), [1]), e]));
}

for (const target of [TARGET, SCALAR_TARGET]) {
  const mode = target.simd ? "simd" : "scalar";

  test(`${mode}: tuple(sum(e), e) stores e from the reduction loop, for row lengths with and without a vector tail`, () => {
    for (const t of ["f32", "f64"] as const) {
      for (const [rows, cols] of [[3, 1], [5, 3], [7, 33], [4, 64], [2, 129]] as const) {
        const c = expSum(t, rows, cols);
        const args = [randomLiteral(t, [rows], rows), randomLiteral(t, [rows, cols], cols)];
        checkFusion(c, args, { ulps: 8, rel: 1e-5, absFloor: 1e-30 }, target);
      }
    }
  });

  test(`${mode}: several full outputs of other types (integer, pred), and two reductions, in one loop`, () => {
    const b = new XlaBuilder("int_multi");
    const x = parameter(b, 0, arrayShape("s32", [6, 5, 11]));
    const sq = mul(x, x);
    const pos = gt(x, constantR0(b, "s32", 0));
    const sum = reduce(sq, constantR0(b, "s32", 0), reducer(b, "s32", add), [1, 2]);
    const mx = reduce(x, constantR0(b, "s32", -(2 ** 31)), reducer(b, "s32", max), [1, 2]);
    const c = b.build(tuple(b, [sum, sq, mx, pos, convertElementType(x, "f32")]));
    const kernel = checkFusion(c, [randomLiteral("s32", [6, 5, 11], 3)], {}, target);
    assert.equal(kernel.resultCount, 5);
  });
}

for (const target of [TARGET, SCALAR_TARGET]) {
  test(`${target.simd ? "simd" : "scalar"}: a full output of a column reduction is stored along j (vectors and the scalar tail)`, () => {
    for (const [dims, rdims] of [[[8, 12], [0]], [[4, 6, 9], [1]], [[3, 5, 2, 7], [1, 2]]] as const) {
      const b = new XlaBuilder(`col_${dims.join("x")}`);
      const x = parameter(b, 0, arrayShape("f32", [...dims]));
      const e = exp(x);
      const c = b.build(tuple(b, [reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [...rdims]), e, mul(x, x)]));
      checkFusion(c, [randomLiteral("f32", [...dims], dims.length)], { ulps: 8, rel: 1e-5, absFloor: 1e-30 }, target);
    }
  });
}

test("full outputs of a reduction over non-adjacent dimensions are unsupported by the emitter (the pass does not form them)", () => {
  const b = new XlaBuilder("gap");
  const x = parameter(b, 0, arrayShape("f32", [3, 5, 2]));
  const e = exp(x);
  const k = emitFusionKernel(b.build(tuple(b, [reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [0, 2]), e])), TARGET);
  assert.ok(isDeclined(k));
  assert.match(k.declined, /non-adjacent/);
});
