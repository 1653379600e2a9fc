// Loop fusions: elementwise chains and index ops compiled to wasm, against the interpreter.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, arrayShape, broadcastInDim, reduce, concatInDim, constantR0, constantR1, convertElementType, div, dynamicSlice, eq, exp, iota, Literal,
  lt, max, min, mul, neg, pad, parameter, reshape, rev, scalarShape, select, slice, sub, transpose, tuple, XlaBuilder,
  and, or, xor, not, abs, sign, shiftLeft, shiftRightArithmetic, shiftRightLogical, rem, clz, populationCount,
  roundNearestAfz, roundNearestEven, reducePrecision, floor, ceil, sqrt, clamp, bitcastConvertType, isFinite, gtTotalOrder,
  evaluate, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { lowerFusion } from "../../../src/compiler/kernel/lower_fusion.js";
import { collapseDomain, reachable, splitAffine } from "../../../src/compiler/kernel/kernel_plan.js";
import { emitFusionKernel } from "../../../src/compiler/wasm/emit_loop.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { checkFusion, randomLiteral, runKernel, SCALAR_TARGET, TARGET } from "./harness.js";

function fusion(name: string, params: [ElementType, number[]][], body: (b: XlaBuilder, ps: XlaOp[]) => XlaOp): { c: ReturnType<XlaBuilder["build"]>; args: Literal[] } {
  const b = new XlaBuilder(name);
  const ps = params.map(([t, d], i) => parameter(b, i, arrayShape(t, d)));
  const c = b.build(body(b, ps));
  return { c, args: params.map(([t, d], i) => randomLiteral(t, d, 17 * i + name.length)) };
}

for (const target of [TARGET, SCALAR_TARGET]) {
  const mode = target.simd ? "simd" : "scalar";

  test(`${mode}: a + b on f32 collapses to one flat loop`, () => {
    const { c, args } = fusion("add", [["f32", [37, 129]], ["f32", [37, 129]]], (_b, [x, y]) => add(x!, y!));
    const k = checkFusion(c, args, {}, target);
    assert.equal(k.parallelExtent, 1); // one loop of 37 × 129 (a chunk of work), not 37 rows
    assert.equal(k.bytes.includes(0xfd), target.simd); // SIMD prefix only in the SIMD kernel
  });

  test(`${mode}: elementwise arithmetic on every float type`, () => {
    for (const t of ["f32", "f64", "bf16", "f16"] as const) {
      const { c, args } = fusion(`arith_${t}`, [[t, [5, 67]], [t, [5, 67]], [t, [5, 67]]], (_b, [x, y, z]) =>
        max(sub(mul(x!, y!), div(z!, x!)), min(neg(abs(y!)), sqrt(abs(z!)))));
      checkFusion(c, args, {}, target);
      const r = fusion(`round_${t}`, [[t, [3, 45]]], (_b, [x]) => tuple(_b, [
        roundNearestAfz(x!), roundNearestEven(x!), floor(x!), ceil(x!), sign(x!), add(x!, x!)]));
      checkFusion(r.c, r.args, {}, target);
    }
  });

  test(`${mode}: integer arithmetic wraps and divides as XLA on every width`, () => {
    for (const t of ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "s4", "u4", "s2", "u2"] as const) {
      const { c, args } = fusion(`int_${t}`, [[t, [3, 41]], [t, [3, 41]]], (b, [x, y]) => tuple(b, [
        add(x!, y!), sub(x!, y!), mul(x!, y!), div(x!, y!), rem(x!, y!), max(x!, y!), min(x!, y!),
        and(x!, y!), or(x!, y!), xor(x!, y!), not(x!), ...(t.startsWith("s") ? [neg(x!), abs(x!), sign(x!)] : []),
        shiftLeft(x!, y!), shiftRightArithmetic(x!, y!), shiftRightLogical(x!, y!), clz(x!), populationCount(x!),
      ]));
      checkFusion(c, args, {}, target);
    }
  });

  test(`${mode}: compare, select, clamp, pred ops`, () => {
    for (const t of ["f32", "f64", "s32", "u8", "s64", "u32", "bf16", "f16"] as const) {
      const { c, args } = fusion(`cmp_${t}`, [[t, [4, 33]], [t, [4, 33]]], (b, [x, y]) => tuple(b, [
        select(lt(x!, y!), x!, y!), select(eq(x!, y!), y!, x!), clamp(x!, y!, max(x!, y!)),
      ]));
      checkFusion(c, args, {}, target);
    }
    const p = fusion("pred", [["pred", [70]], ["pred", [70]], ["f32", [70]]], (b, [x, y, z]) => tuple(b, [
      and(x!, not(y!)), xor(x!, y!), or(x!, isFinite(z!)), gtTotalOrder(z!, neg(z!)),
    ]));
    checkFusion(p.c, p.args, {}, target);
  });

  test(`${mode}: reduce-precision on f32 and bf16 bits`, () => {
    for (const t of ["f32", "bf16"] as const) {
      const { c, args } = fusion(`rp_${t}`, [[t, [5, 37]]], (b, [x]) => tuple(b, [
        reducePrecision(x!, 8, 7), reducePrecision(x!, 5, 10), reducePrecision(x!, 4, 3), reducePrecision(x!, 2, 0),
        reducePrecision(x!, 8, 23), reducePrecision(mul(x!, x!), 3, 1),
      ]));
      checkFusion(c, args, {}, target);
    }
  });

  test(`${mode}: reduce-precision of every bf16 pattern, NaN payloads kept as the interpreter keeps them`, () => {
    const b = new XlaBuilder("rp_bf16_every");
    const x = parameter(b, 0, arrayShape("bf16", [65536]));
    const c = b.build(tuple(b, [reducePrecision(x, 5, 2), reducePrecision(x, 8, 3), reducePrecision(x, 4, 1), reducePrecision(x, 3, 0)]));
    const every = Literal.zeros(arrayShape("bf16", [65536]));
    for (let i = 0; i < 65536; i++) every.data[i] = i;
    const kernel = emitFusionKernel(c, target);
    if (isDeclined(kernel)) assert.fail(kernel.declined);
    const expected = evaluate(c, [every]).arrayLeaves();
    runKernel(kernel, target, c, [every]).forEach((actual, r) => {
      const want = expected[r]!.data, got = actual.data;
      const bad = Array.from(want as Uint16Array).findIndex((w, i) => w !== got[i]);
      assert.equal(bad, -1, `result ${r}: pattern 0x${bad.toString(16)} gave 0x${Number(got[bad]).toString(16)}, the interpreter 0x${Number(want[bad]).toString(16)}`);
    });
  });

  test(`${mode}: conversions between types`, () => {
    const types = ["pred", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f32", "f64", "bf16", "f16"] as const;
    for (const from of types) {
      const { c, args } = fusion(`conv_${from}`, [[from, [77]]], (b, [x]) =>
        tuple(b, types.filter((to) => !((to === "bf16" || to === "f16") && ["s32", "u32", "s64", "u64", "f64"].includes(from))).map((to) => convertElementType(x!, to))));
      checkFusion(c, args, {}, target);
    }
    const bc = fusion("bitcast", [["f32", [9]], ["s64", [9]], ["bf16", [9]], ["f16", [9]]], (b, [x, y, z, w]) => tuple(b, [
      convertElementType(bitcastConvertType(w!, "s16"), "s32"), bitcastConvertType(bitcastConvertType(w!, "u16"), "f16"),
      convertElementType(bitcastConvertType(x!, "s32"), "f32"), bitcastConvertType(bitcastConvertType(y!, "f64"), "s64"),
      convertElementType(bitcastConvertType(z!, "u16"), "f32"),
    ]));
    checkFusion(bc.c, bc.args, {}, target);
  });

  test(`${mode}: index ops compose into loads`, () => {
    const cases = [
      fusion("transpose_bcast", [["f32", [7, 5]], ["f32", [5]]], (_b, [x, y]) =>
        add(transpose(x!, [1, 0]), broadcastInDim(y!, [5, 7], [0]))),
      fusion("reshape", [["f32", [6, 10]]], (_b, [x]) => mul(reshape(x!, [4, 15]), reshape(x!, [4, 15]))),
      fusion("slice_rev", [["s32", [9, 13]]], (_b, [x]) => rev(slice(x!, [1, 2], [8, 13], [2, 3]), [0, 1])),
      fusion("pad", [["f32", [4, 5]]], (b, [x]) => pad(x!, constantR0(b, "f32", -1.5),
        [{ edgePaddingLow: 2, edgePaddingHigh: -1, interiorPadding: 1 }, { edgePaddingLow: -1, edgePaddingHigh: 3, interiorPadding: 0 }])),
      fusion("concat", [["u8", [3, 4]], ["u8", [3, 2]], ["u8", [3, 5]]], (b, [x, y, z]) => concatInDim(b, [x!, y!, z!], 1)),
      fusion("concat0", [["f32", [2, 9]], ["f32", [5, 9]]], (b, [x, y]) => exp(concatInDim(b, [x!, y!], 0))),
      fusion("iota", [["f32", [6, 11]]], (b, [x]) => add(x!, convertElementType(iota(b, arrayShape("s32", [6, 11]), 1), "f32"))),
      fusion("iota_f", [["f32", [6, 11]]], (b, [x]) => mul(x!, iota(b, arrayShape("f32", [6, 11]), 0))),
      fusion("small_constant", [["f32", [3, 4]]], (b, [x]) => add(x!, broadcastInDim(constantR1(b, "f32", [1.5, -0, 7, NaN]), [3, 4], [1]))),
      fusion("bcast_scalar", [["f64", [8, 3]], ["f64", []]], (_b, [x, y]) => sub(x!, broadcastInDim(y!, [8, 3], []))),
      fusion("bcast_inner", [["f32", [8, 12]], ["f32", [12]]], (_b, [x, y]) => div(x!, broadcastInDim(y!, [8, 12], [1]))),
    ];
    for (const { c, args } of cases) checkFusion(c, args, { ulps: 2 }, target);
    const b = new XlaBuilder("dyn");
    const x = parameter(b, 0, arrayShape("f32", [10, 8]));
    const i = parameter(b, 1, scalarShape("s32"));
    const j = parameter(b, 2, scalarShape("s32"));
    const c = b.build(dynamicSlice(x, [i, j], [3, 4]));
    for (const [si, sj] of [[2, 3], [-5, 100], [9, -1]]) {
      checkFusion(c, [randomLiteral("f32", [10, 8], 3), Literal.scalar("s32", si!), Literal.scalar("s32", sj!)], {}, target);
    }
    // 64-bit and unsigned start indices clamp before they narrow.
    for (const t of ["s64", "u64", "u32", "s8"] as const) {
      const bt = new XlaBuilder(`dyn_${t}`);
      const xt = parameter(bt, 0, arrayShape("s16", [10, 8]));
      const ct = bt.build(dynamicSlice(xt, [parameter(bt, 1, scalarShape(t)), parameter(bt, 2, scalarShape(t))], [3, 4]));
      const big = t === "s64" ? -(2n ** 40n) : t === "u64" ? 2n ** 63n + 5n : t === "u32" ? 2 ** 32 - 1 : -128;
      for (const [si, sj] of [[2, 3], [big, 1], [1, big]] as const) {
        const lit = (v: number | bigint): Literal => Literal.scalar(t, t.endsWith("64") ? BigInt(v) : Number(v));
        checkFusion(ct, [randomLiteral("s16", [10, 8], 3), lit(si), lit(sj)], {}, target);
      }
    }
  });
}

test("regression (random seed 50): a pred load in a 2-lane (f64) kernel stays scalar", () => {
  const b = new XlaBuilder("pred_f64");
  const p = parameter(b, 0, arrayShape("pred", [4]));
  const x = parameter(b, 1, scalarShape("f64"));
  const y = parameter(b, 2, scalarShape("f64"));
  const c = b.build(select(broadcastInDim(p, [1, 4], [1]), broadcastInDim(x, [1, 4], []), broadcastInDim(y, [1, 4], [])));
  checkFusion(c, [randomLiteral("pred", [4], 1), Literal.scalar("f64", 1.5), Literal.scalar("f64", -2)]);
});

test("zero-element shapes", () => {
  for (const target of [TARGET, SCALAR_TARGET]) {
    const b = new XlaBuilder("empty");
    const x = parameter(b, 0, arrayShape("f32", [3, 0]));
    checkFusion(b.build(add(x, x)), [randomLiteral("f32", [3, 0], 1)], {}, target);
    const br = new XlaBuilder("empty_reduce");
    const y = parameter(br, 0, arrayShape("f32", [4, 0]));
    const sb = br.createSubBuilder("r");
    const r = sb.build(add(parameter(sb, 0, scalarShape("f32")), parameter(sb, 1, scalarShape("f32"))));
    checkFusion(br.build(reduce(y, constantR0(br, "f32", 2.5), r, [1])), [randomLiteral("f32", [4, 0], 1)], {}, target);
  }
});

test("lowering: a transpose of a broadcast of a slice is one load", () => {
  const b = new XlaBuilder("compose");
  const x = parameter(b, 0, arrayShape("f32", [16, 16]));
  const c = b.build(transpose(broadcastInDim(slice(x, [2, 0], [10, 16], [1, 1]), [8, 16, 3], [0, 1]), [2, 1, 0]));
  const ir = lowerFusion(c);
  assert.ok(!("declined" in ir));
  const loads = ir.graph.nodes.filter((n) => n.op === "load");
  assert.equal(loads.length, 1);
});

test("a transpose back from heads is copied in runs: its last dimension splits where the loads read in order", () => {
  // [H, S, D] -> [S, H·D] (attention's heads back into rows): the output's last dimension reads
  // runs of D; split at D, every load is affine in the inner loop (no gather), and the kernel matches
  // the interpreter. A run that no divisor of the last dimension gives stays a gather.
  for (const [h, sq, d] of [[3, 5, 16], [4, 6, 8], [2, 3, 20]] as const) {
    const b = new XlaBuilder("heads");
    const x = parameter(b, 0, arrayShape("f32", [h, sq, d]));
    const c = b.build(reshape(transpose(x, [1, 0, 2]), [sq, h * d]));
    const ir = lowerFusion(c);
    assert.ok(!("declined" in ir));
    const col = collapseDomain(ir.graph, ir.domain, ir.outputs.map((o) => o.value));
    assert.deepEqual([col.outer, col.inner, col.split], [[sq, h], d, true], `${h}x${sq}x${d}`);
    const loads = reachable(col.graph, col.roots).filter((id) => col.graph.node(id).op === "load");
    assert.ok(loads.every((id) => splitAffine(col.graph, col.graph.node(id).args[0]!, col.innerVar) !== undefined));
    for (const target of [TARGET, SCALAR_TARGET]) checkFusion(c, [randomLiteral("f32", [h, sq, d], h * sq * d)], {}, target);
  }
  const b = new XlaBuilder("short_runs");
  const x = parameter(b, 0, arrayShape("f32", [4, 5, 3]));
  const c = b.build(reshape(transpose(x, [1, 0, 2]), [5, 12]));
  const ir = lowerFusion(c);
  assert.ok(!("declined" in ir));
  assert.equal(collapseDomain(ir.graph, ir.domain, ir.outputs.map((o) => o.value)).split, false);
  checkFusion(c, [randomLiteral("f32", [4, 5, 3], 7)]);
});

test("an iota of the domain keeps its dimension out of the inner loop: rows of the last dimension, the iota affine in them", () => {
  // A causal mask, j <= i over [H, S, S], and the mask selecting a parameter's elements: no
  // load would stop the whole domain collapsing into one loop, where each iota is a
  // division and a remainder of the inner index; the inner loop is the last dimension,
  // where iota j is the loop variable and iota i the row's. A wrong collapse (or a wrong
  // iota in it) gives another mask: the kernel is checked against the interpreter.
  for (const [h, s] of [[3, 16], [2, 37]] as const) {
    const causal = (selects: boolean): ReturnType<XlaBuilder["build"]> => {
      const b = new XlaBuilder("causal");
      const iotaOf = (dim: number): XlaOp => iota(b, arrayShape("s32", [h, s, s]), dim);
      const mask = lt(iotaOf(2), add(iotaOf(1), broadcastInDim(constantR0(b, "s32", 1), [h, s, s], [])));
      if (!selects) return b.build(mask);
      return b.build(select(mask, parameter(b, 0, arrayShape("f32", [h, s, s])), broadcastInDim(constantR0(b, "f32", -1e9), [h, s, s], [])));
    };
    for (const selects of [false, true]) {
      const c = causal(selects);
      const ir = lowerFusion(c);
      assert.ok(!("declined" in ir));
      const col = collapseDomain(ir.graph, ir.domain, ir.outputs.map((o) => o.value));
      assert.deepEqual([col.outer, col.inner, col.split], [[h, s], s, false], `${h}x${s}x${s}`);
      const iotas = reachable(col.graph, col.roots).filter((id) => col.graph.node(id).op === "fromIdx");
      assert.ok(iotas.length > 0 && iotas.every((id) => splitAffine(col.graph, col.graph.node(id).args[0]!, col.innerVar) !== undefined));
      const args = selects ? [randomLiteral("f32", [h, s, s], h * s)] : [];
      for (const target of [TARGET, SCALAR_TARGET]) checkFusion(c, args, {}, target);
    }
  }
});

test("unsupported cases say why", () => {
  const bc = new XlaBuilder("big_constant");
  const y = parameter(bc, 0, arrayShape("f32", [40]));
  const big = emitFusionKernel(bc.build(add(y, constantR1(bc, "f32", Array.from({ length: 40 }, (_, i) => i)))), TARGET);
  assert.ok(isDeclined(big) && /constant/.test(big.declined));
  const b = new XlaBuilder("cplx");
  const x = parameter(b, 0, arrayShape("c64", [4]));
  // Complex add fuses (kernel/complex_ops.ts); complex exp runs on the interpreter on a target with f64 (an f32 form on WGSL).
  const k = emitFusionKernel(b.build(exp(x)), TARGET);
  assert.ok(isDeclined(k) && /complex exp/.test(k.declined));
});
