// Signs of fused values (src/compiler/kernel/value_facts.ts) and the exp they select:
// e^v for v never positive (emitExpNonPositive) within the bound of emitExp against the
// interpreter, and chosen only where the sign is proved.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  abs, arrayShape, constantR0, evaluate, exp, min, mul, neg, parameter, reduce, scalarShape, sub, max, Literal, XlaBuilder,
  type Computation, type Instruction, type XlaOp,
} from "../../../src/index.js";
import { compile, WasmDevice } from "../../../src/compiler/index.js";
import { EXP_OF_NON_POSITIVE } from "../../../src/compiler/kernel/graph.js";
import { lowerFusion } from "../../../src/compiler/kernel/lower_fusion.js";
import { rowMaxima, type RowMaximum } from "../../../src/compiler/kernel/value_facts.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { rng } from "../../support/prng.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { separateFusionsPipeline } from "../../support/pipelines.js";
import { runKernel, SCALAR_TARGET, TARGET, ulpDistance } from "./harness.js";

/** The exp nodes of the lowered computation: whether each has the non-positive form. */
function expForms(c: Computation, maxima: readonly RowMaximum[] = []): boolean[] {
  const ir = lowerFusion(c, maxima);
  if ("declined" in ir) assert.fail(ir.declined);
  return ir.graph.nodes.filter((n) => n.op === "exp").map((n) => n.attr === EXP_OF_NON_POSITIVE);
}

function maxReducer(b: XlaBuilder) {
  const s = b.createSubBuilder("max");
  return s.build(max(parameter(s, 0, scalarShape("f32")), parameter(s, 1, scalarShape("f32"))));
}

/** exp(x - m[row]) over rows of x [n, 2], m [n] (operand 1 is the row maximum of operand 0). */
function shiftedExp(n: number): Computation {
  const b = new XlaBuilder("shifted_exp");
  const x = parameter(b, 0, arrayShape("f32", [n, 2]));
  const m = parameter(b, 1, arrayShape("f32", [n]));
  return b.build(exp(sub(x, m, [0])));
}

test("exp(x - row max) within 3 ulp over the whole non-positive line, NaN and ±inf included (SIMD and scalar)", () => {
  // Rows [v, 0]: x - max covers -|v| for every v drawn (all exponents), and 0.
  const r = rng(77);
  const bits = new Uint32Array(1);
  const asFloat = new Float32Array(bits.buffer);
  const vs = [NaN, Infinity, -Infinity, 0, -0, -1e-45, -1e-40, -87.3, -87.34, -88, -103.97, -103.98, -104, -110, -3.4028235e38];
  for (let i = 0; i < 20000; i++) {
    bits[0] = Math.floor(r() * 2 ** 32);
    vs.push(asFloat[0]!, -110 * r());
  }
  for (let i = 0; i <= 1200; i++) vs.push(-i / 8, -i * 1e-3);
  const n = vs.length;
  const x = Literal.fromStorage(arrayShape("f32", [n, 2]), Float32Array.from(vs.flatMap((v) => [v, 0])));
  const b = new XlaBuilder("row_max");
  const rowMax = evaluate(b.build(reduce(parameter(b, 0, arrayShape("f32", [n, 2])), constantR0(b, "f32", -Infinity), maxReducer(b), [1])), [x]);
  const c = shiftedExp(n);
  const maxima = [{ max: 1, of: 0, dims: [1] }];
  assert.deepEqual(expForms(c, maxima), [true]);
  const expected = evaluate(c, [x, rowMax]).values() as number[];
  for (const target of [TARGET, SCALAR_TARGET]) {
    const k = emitFusionKernel(c, target, c.name, maxima);
    if (isDeclined(k)) assert.fail(k.declined);
    const got = runKernel(k, target, c, [x, rowMax])[0]!.values() as number[];
    let worst = 0;
    got.forEach((g, i) => {
      const d = ulpDistance("f32", g, expected[i]!);
      assert.ok(d <= 3, `exp(${vs[i >> 1]} row, element ${i & 1}) = ${g}, expected ${expected[i]} (${d} ulp, simd ${target.simd})`);
      worst = Math.max(worst, d);
    });
    if (process.env.SHOW_ULPS) console.log("exp of non-positive", target.simd, worst);
  }
});

test("the non-positive exp only where the sign is proved: -|x|, -x², min(x, 0), x - max of its own row", () => {
  const unary = (name: string, f: (x: XlaOp) => XlaOp): Computation => {
    const b = new XlaBuilder(name);
    return b.build(f(parameter(b, 0, arrayShape("f32", [8, 8]))));
  };
  assert.deepEqual(expForms(unary("neg_abs", (x) => exp(neg(abs(x))))), [true]);
  assert.deepEqual(expForms(unary("neg_square", (x) => exp(neg(mul(x, x))))), [true]);
  assert.deepEqual(expForms(unary("min_zero", (x) => exp(min(x, constantR0(x.builder, "f32", 0))))), [true]);
  assert.deepEqual(expForms(unary("plain", (x) => exp(x))), [false]);
  assert.deepEqual(expForms(unary("neg", (x) => exp(neg(x)))), [false]);
  assert.deepEqual(expForms(unary("x_times_neg_x", (x) => exp(mul(x, neg(abs(x)))))), [false]);
  // x - m: only with the fact, and only when m is read at x's own row.
  const b = new XlaBuilder("shifts");
  const x = parameter(b, 0, arrayShape("f32", [8, 8]));
  const m = parameter(b, 1, arrayShape("f32", [8]));
  const ownRow = b.build(exp(sub(x, m, [0])));
  assert.deepEqual(expForms(ownRow), [false]);
  assert.deepEqual(expForms(ownRow, [{ max: 1, of: 0, dims: [1] }]), [true]);
  const b2 = new XlaBuilder("other_row");
  const otherRow = b2.build(exp(sub(parameter(b2, 0, arrayShape("f32", [8, 8])), parameter(b2, 1, arrayShape("f32", [8])), [1])));
  assert.deepEqual(expForms(otherRow, [{ max: 1, of: 0, dims: [1] }]), [false]);
  // The maximum over columns, read at each element's column, is also its bound.
  assert.deepEqual(expForms(otherRow, [{ max: 1, of: 0, dims: [0] }]), [true]);
});

test("softmax's exp fusion learns that its first operand is the row maximum of its second", async () => {
  const b = new XlaBuilder("softmax");
  const x = parameter(b, 0, arrayShape("f32", [16, 40]));
  const e = exp(sub(x, reduce(x, constantR0(b, "f32", -Infinity), maxReducer(b), [1]), [0]));
  // (With row fusion the max and the exp are one row pipeline, which knows it of its own stages.)
  const exe = await compile(b.build(e), { device: new WasmDevice(), passes: separateFusionsPipeline() });
  const fusions = exe.module!.entry.instructions.filter((i) => i.opcode === "fusion") as Instruction<"fusion">[];
  const facts = fusions.map((f) => rowMaxima(f));
  assert.deepEqual(facts.filter((f) => f.length > 0), [[{ max: 0, of: 1, dims: [1] }]], exe.dump());
  exe.delete();
});

/**
 * GPT-2's masked softmax after fusion: the first fusion computes select(causal mask,
 * x·0.125, -1e9), its row max, and the mask (a second output); the second reads x, the
 * mask and the max, and computes select(mask, x·`scale`, -1e9) - max. The exp there is
 * of a non-positive value only when it is the same select (scale 0.125).
 */
function maskedSoftmaxModule(scale: string): string {
  return `HloModule masked_softmax

%max_f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(f32[] %a, f32[] %b)
}

%fused_max (p0: f32[2,8,8]) -> (f32[2,8], pred[2,8,8]) {
  %i0 = s32[2,8,8]{2,1,0} iota(), iota_dimension=2
  %i1 = s32[2,8,8]{2,1,0} iota(), iota_dimension=1
  %mask = pred[2,8,8]{2,1,0} compare(s32[2,8,8]{2,1,0} %i0, s32[2,8,8]{2,1,0} %i1), direction=LE
  %c0 = f32[] constant(0.125)
  %b0 = f32[2,8,8]{2,1,0} broadcast(f32[] %c0), dimensions={}
  %p0 = f32[2,8,8]{2,1,0} parameter(0)
  %s0 = f32[2,8,8]{2,1,0} multiply(f32[2,8,8]{2,1,0} %p0, f32[2,8,8]{2,1,0} %b0)
  %c1 = f32[] constant(-1000000000)
  %b1 = f32[2,8,8]{2,1,0} broadcast(f32[] %c1), dimensions={}
  %sel = f32[2,8,8]{2,1,0} select(pred[2,8,8]{2,1,0} %mask, f32[2,8,8]{2,1,0} %s0, f32[2,8,8]{2,1,0} %b1)
  %ninf = f32[] constant(-inf)
  %r = f32[2,8]{1,0} reduce(f32[2,8,8]{2,1,0} %sel, f32[] %ninf), dimensions={2}, to_apply=%max_f32
  ROOT %t = (f32[2,8]{1,0}, pred[2,8,8]{2,1,0}) tuple(f32[2,8]{1,0} %r, pred[2,8,8]{2,1,0} %mask)
}

%fused_exp (q0: f32[2,8,8], q1: pred[2,8,8], q2: f32[2,8]) -> f32[2,8,8] {
  %c2 = f32[] constant(${scale})
  %b2 = f32[2,8,8]{2,1,0} broadcast(f32[] %c2), dimensions={}
  %q0 = f32[2,8,8]{2,1,0} parameter(0)
  %s1 = f32[2,8,8]{2,1,0} multiply(f32[2,8,8]{2,1,0} %q0, f32[2,8,8]{2,1,0} %b2)
  %c3 = f32[] constant(-1000000000)
  %b3 = f32[2,8,8]{2,1,0} broadcast(f32[] %c3), dimensions={}
  %q1 = pred[2,8,8]{2,1,0} parameter(1)
  %sel1 = f32[2,8,8]{2,1,0} select(pred[2,8,8]{2,1,0} %q1, f32[2,8,8]{2,1,0} %s1, f32[2,8,8]{2,1,0} %b3)
  %q2 = f32[2,8]{1,0} parameter(2)
  %bm = f32[2,8,8]{2,1,0} broadcast(f32[2,8]{1,0} %q2), dimensions={0,1}
  %d = f32[2,8,8]{2,1,0} subtract(f32[2,8,8]{2,1,0} %sel1, f32[2,8,8]{2,1,0} %bm)
  ROOT %e = f32[2,8,8]{2,1,0} exponential(f32[2,8,8]{2,1,0} %d)
}

ENTRY %main (x: f32[2,8,8]) -> f32[2,8,8] {
  %x = f32[2,8,8]{2,1,0} parameter(0)
  %f0 = (f32[2,8]{1,0}, pred[2,8,8]{2,1,0}) fusion(f32[2,8,8]{2,1,0} %x), kind=kInput, calls=%fused_max
  %max = f32[2,8]{1,0} get-tuple-element((f32[2,8]{1,0}, pred[2,8,8]{2,1,0}) %f0), index=0
  %mask = pred[2,8,8]{2,1,0} get-tuple-element((f32[2,8]{1,0}, pred[2,8,8]{2,1,0}) %f0), index=1
  ROOT %f1 = f32[2,8,8]{2,1,0} fusion(f32[2,8,8]{2,1,0} %x, pred[2,8,8]{2,1,0} %mask, f32[2,8]{1,0} %max), kind=kLoop, calls=%fused_exp
}
`;
}

test("a row max of an expression (GPT-2's masked, scaled scores) bounds the same expression in the next fusion, and only it", () => {
  for (const [scale, want] of [["0.125", true], ["0.25", false]] as const) {
    const module = parseHlo(maskedSoftmaxModule(scale));
    const consumer = module.entry.root as Instruction<"fusion">;
    const maxima = rowMaxima(consumer);
    assert.equal(maxima.length, 1);
    assert.equal(maxima[0]!.max, 2);
    assert.deepEqual(maxima[0]!.dims, [2]);
    assert.deepEqual(expForms(consumer.attrs.calledComputation, maxima), [want], `scale ${scale}`);
    // The kernels built with the fact give the interpreter's values within exp's bound.
    const x = Literal.fromStorage(arrayShape("f32", [2, 8, 8]), Float32Array.from({ length: 128 }, (_, i) => Math.sin(i * 7.3) * 60));
    const expected = evaluate(module.entry, [x]).values() as number[];
    for (const target of [TARGET, SCALAR_TARGET]) {
      const producer = consumer.operands[1]!.operands[0]!;
      const computed = evaluate((producer as Instruction<"fusion">).attrs.calledComputation, [x]);
      const [max, mask] = computed.elements;
      const k = emitFusionKernel(consumer.attrs.calledComputation, target, "fused_exp", maxima);
      if (isDeclined(k)) assert.fail(k.declined);
      const got = runKernel(k, target, consumer.attrs.calledComputation, [x, mask!, max!])[0]!.values() as number[];
      got.forEach((g, i) => assert.ok(ulpDistance("f32", g, expected[i]!) <= 3, `element ${i}: ${g}, expected ${expected[i]} (scale ${scale}, simd ${target.simd})`));
    }
  }
});
