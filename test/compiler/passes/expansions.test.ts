// The expansions table (src/compiler/expansions): its coverage list names what each of
// its users expands, written out here by hand; every listed op is really rewritten away
// by its user and left alone by the other; CHLO's expansions agree with the
// interpreter's own kernels (series in double) within a few ulps of f64.
import { test } from "node:test";
import assert from "node:assert/strict";
import { batchNormTraining } from "../../../src/builder/linalg.js";
import { afterAll, call, compositeCall, getTupleElement, tuple } from "../../../src/builder/control.js";
import { add, mul, select } from "../../../src/builder/elementwise.js";
import { parameter } from "../../../src/builder/xla_builder.js";
import { map } from "../../../src/builder/reduction.js";
import { topK } from "../../../src/builder/data_movement.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { EXPANDED, EXPANSIONS, expandModule, type ExpansionUse } from "../../../src/compiler/expansions/index.js";
import { SORT_KEY_TYPES } from "../../../src/compiler/wasm/routines/sort.js";
import { WGSL_SORT_KEY_TYPES } from "../../../src/compiler/webgpu/sort_wgsl.js";
import { HloModule } from "../../../src/ir/computation.js";
import { InstructionFactory } from "../../../src/ir/factory.js";
import type { Opcode } from "../../../src/ir/opcodes.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { arrayShape, scalarShape } from "../../../src/types/shape.js";
import { ELEMENT_TYPES, type ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { ulpDistance } from "../../support/ulp.js";
import { build } from "./helpers.js";

const COMPILE: readonly Opcode[] = ["batchNormTraining", "batchNormInference", "batchNormGrad", "call", "composite", "map", "select", "topK", "customCall", "scaledDot"];
const LOWER_CHLO: readonly Opcode[] = ["acos", "asin", "atan", "acosh", "asinh", "atanh", "cosh", "sinh", "erfc", "nextAfter"];

test("the coverage list is the table's, by user", () => {
  assert.deepEqual([...EXPANDED.compile].sort(), [...COMPILE].sort());
  assert.deepEqual([...EXPANDED.lowerChlo].sort(), [...LOWER_CHLO].sort());
  assert.deepEqual(Object.keys(EXPANSIONS).sort(), [...COMPILE, ...LOWER_CHLO].sort());
});

/** A module whose entry applies `opcode` to f64[n] parameters. */
function chloModule(opcode: Opcode, n: number): HloModule {
  const f = new InstructionFactory("main");
  const ps = Array.from({ length: opcode === "nextAfter" ? 2 : 1 }, (_, i) => f.parameter(i, arrayShape("f64", [n])));
  return new HloModule("m", f.finish(f.add(opcode, ps, {} as never)));
}

/** Programs of the compile rows: a call, a composite, an elementwise map and a batch norm. */
function compileModules(): HloModule[] {
  const s = [["f32", [4, 3]], ["f32", [3]], ["f32", [3]]] as const;
  return [
    build("calls", [["f32", [3]]], (b, [x]) => {
      const sub = b.createSubBuilder("f");
      const p = parameter(sub, 0, arrayShape("f32", [3]));
      const callee = sub.build(mul(p, p));
      return compositeCall(b, callee, [call(b, callee, [x!])], "my.square");
    }),
    build("map", [["f32", [3]]], (b, [x]) => {
      const sub = b.createSubBuilder("g");
      const p = parameter(sub, 0, scalarShape("f32"));
      return map(b, [x!], sub.build(add(p, p)), [0]);
    }),
    build("bn", s.map(([t, d]) => [t, [...d]]), (_, [x, scale, offset]) => getTupleElement(batchNormTraining(x!, scale!, offset!, 1e-3, 1), 0)),
    tupleSelectModule(),
    build("top_k", [["f32", [2, 7]]], (_, [x]) => topK(x!, 3)),
    approxTopKModule(2, 1, "tensor<3x2xf32>, tensor<3x2xi32>"),
    scaledDotModule("f8e4m3fn", "f8e8m0fnu", "f32"),
  ];
}

/** A scaled dot of [2,4] x [4,3] operands of type t, scales of type s over blocks of 2 along the contraction (and 1 elsewhere), to result type r. */
function scaledDotModule(t: string, s: string, r: string): HloModule {
  return parseHlo(`HloModule sd
ENTRY %main (l: ${t}[2,4], ls: ${s}[2,2], r: ${t}[4,3], rs: ${s}[2,3]) -> ${r}[2,3] {
  %l = ${t}[2,4]{1,0} parameter(0)
  %ls = ${s}[2,2]{1,0} parameter(1)
  %r = ${t}[4,3]{1,0} parameter(2)
  %rs = ${s}[2,3]{1,0} parameter(3)
  ROOT %d = ${r}[2,3]{1,0} scaled-dot(${t}[2,4]{1,0} %l, ${t}[4,3]{1,0} %r, ${s}[2,2]{1,0} %ls, ${s}[2,3]{1,0} %rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`);
}

/** XLA's ApproxTopK (JAX's approx_max_k) of a 3x5 f32 and its iota along `dim`, top_k `k`, with JAX's comparator (GT on the values). */
function approxTopKModule(k: number, dim: number, result: string, aggregate = true): HloModule {
  return parseStableHlo(`func.func @gt(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @main(%x: tensor<3x5xf32>) -> (${result}) {
  %i = stablehlo.iota dim = ${dim} : tensor<3x5xi32>
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %f = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%x, %i, %f, %c) {called_computations = [@gt], mhlo.backend_config = {top_k = ${k} : i64, reduction_dim = ${dim} : i64, aggregate_to_topk = ${aggregate}}} : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (${result})
  return %0#0, %0#1 : ${result}
}`);
}

/** A select between nested tuples (with a token leaf) by a scalar pred. */
function tupleSelectModule(): HloModule {
  return build("tuple_select", [["pred", []], ["f32", [3]], ["s32", [2, 2]]], (b, [p, x, y]) => {
    const t = afterAll(b, []);
    return select(p!, tuple(b, [x!, tuple(b, [y!, t])]), tuple(b, [mul(x!, x!), tuple(b, [add(y!, y!), t])]));
  });
}

/** The opcodes of m; an array select is not the table's (only a select between tuples is expanded). */
const allOpcodes = (m: HloModule): Set<string> =>
  new Set(m.computations.flatMap((c) => c.instructions.filter((i) => i.opcode !== "select" || i.shape.kind !== "array").map((i) => i.opcode)));

test("each row is run by its user only", () => {
  const expandedAway = (m: HloModule, use: ExpansionUse, listed: readonly Opcode[]): void => {
    const present = listed.filter((o) => allOpcodes(m).has(o));
    const out = expandModule(m, use, SORT_KEY_TYPES);
    assert.ok(out.count > 0, `${use}: ${present.join(", ")}`);
    for (const o of present) assert.ok(!allOpcodes(out.module).has(o), `${use} left ${o}`);
    const other: ExpansionUse = use === "compile" ? "lowerChlo" : "compile";
    const untouched = expandModule(m, other, SORT_KEY_TYPES);
    assert.equal(untouched.count, 0, `${other} expanded ${present.join(", ")}`);
    assert.ok(present.every((o) => allOpcodes(untouched.module).has(o)), other);
  };
  const modules = compileModules();
  const covered = new Set(modules.flatMap((m) => [...allOpcodes(m)]));
  for (const o of COMPILE.filter((o) => !o.startsWith("batchNorm") || o === "batchNormTraining")) assert.ok(covered.has(o), o);
  for (const m of modules) expandedAway(m, "compile", COMPILE);
  for (const o of LOWER_CHLO) expandedAway(chloModule(o, 4), "lowerChlo", LOWER_CHLO);
});

test("a select between tuples becomes its leaves' selects, the interpreter's values for either pred", () => {
  const m = tupleSelectModule();
  const out = expandModule(m, "compile", SORT_KEY_TYPES).module;
  assert.deepEqual(out.entry.instructions.filter((i) => i.opcode === "select").map((i) => i.shape.kind), ["array", "array"]);
  const x = Literal.from("f32", [1.5, -0, 3]), y = Literal.fromValues("s32", [2, 2], [1, -2, 2147483647, 4]);
  for (const p of [true, false]) {
    const args = [Literal.scalar("pred", p ? 1 : 0), x, y];
    assert.deepEqual(evaluate(out.entry, args).arrayLeaves().map((l) => l.values()), evaluate(m.entry, args).arrayLeaves().map((l) => l.values()));
  }
});

/** The bits of every leaf of `x`'s results (NaN payloads and signed zeros too). */
const leafBits = (l: Literal): number[][] => l.arrayLeaves().map((a) => [...new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength)]);

/** Every bit pattern of a one-byte (or narrower) float, `lanes` lanes of them in scrambled orders with repeats (ties). */
function allPatterns(t: ElementType, lanes: number, n: number): Literal {
  const patterns = 2 ** ELEMENT_TYPES[t].bitWidth;
  const x = Literal.zeros(arrayShape(t, [lanes, n]));
  for (let i = 0; i < lanes * n; i++) x.data[i] = (i * 37 + ((i / n) | 0) * 11) % patterns;
  return x;
}

test("topK as a stable total-order sort and slices: the interpreter's bits (NaNs of both signs, -0 and +0, ties to the lower index), largest and smallest", () => {
  const f32 = [3, Number.NaN, -0, 0, 3, -Infinity, 7, 3, Infinity, -1, 0, -0, 3, 2];
  const x = Literal.from("f32", [f32.slice(0, 7), f32.slice(7)]);
  // A NaN with the sign bit set sorts below -inf in the total order.
  new Uint32Array(x.data.buffer, x.data.byteOffset, 14)[9] = 0xffc00001;
  const negativeNaN = (t: "f64" | "f16", bits: number): Literal => {
    const l = Literal.from(t, [f32.slice(0, 7), f32.slice(7)]);
    if (t === "f64") new BigUint64Array(l.data.buffer, l.data.byteOffset, 14)[9] = 0xfff8000000000001n;
    else l.data[9] = bits;
    return l;
  };
  const cases: [string, Literal][] = [
    ["f32", x],
    ["s32", Literal.from("s32", [[5, -2, 5, 2147483647, -2147483648, 5, 0], [1, 1, 1, 0, 1, -1, 1]])],
    ["u64", Literal.from("u64", [[18446744073709551615n, 3n, 18446744073709551615n, 0n, 4294967296n, 3n, 7n], [9n, 9n, 9n, 9n, 9n, 9n, 9n]])],
    ["bf16", Literal.from("bf16", [f32.slice(0, 7), f32.slice(7)])],
    ["u8", Literal.from("u8", [[255, 3, 255, 0, 128, 3, 7], [9, 9, 9, 9, 9, 9, 9]])],
    ["s16", Literal.from("s16", [[-32768, 3, 32767, 0, -1, 3, 7], [9, -9, 9, -9, 9, -9, 9]])],
    // Since session 52, per backend (kernel/capabilities.ts sortKeyTypes): f64 and pred on the CPU; f16 and the narrow floats on the GPU.
    ["f64", negativeNaN("f64", 0)],
    ["pred", Literal.from("pred", [[true, false, true, true, false, false, true], [false, false, false, false, false, false, false]])],
    ["f16", negativeNaN("f16", 0xfe01)],
  ];
  for (const t of ["f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu", "f6e2m3fn", "f6e3m2fn", "f4e2m1fn"] as const) {
    cases.push([t, allPatterns(t, 2, 7)]);
  }
  for (const [t, v] of cases) {
    const n = v.dimensions[1]!;
    for (const [backend, keys] of [["cpu", SORT_KEY_TYPES], ["webgpu", WGSL_SORT_KEY_TYPES]] as const) {
      for (const largest of [true, false]) {
        for (const k of [0, 3, n]) {
          const m = build("top_k", [[t as "f32", [2, n]]], (_, [p]) => topK(p!, k, largest));
          const out = expandModule(m, "compile", keys);
          // A type the sort kernel does not compare keeps the interpreter's topK (its sort would call the comparator per comparison).
          if (!keys.has(t as ElementType)) {
            assert.equal(out.count, 0, `${backend} ${t}`);
            continue;
          }
          assert.equal(out.count, 1);
          assert.ok(!allOpcodes(out.module).has("topK"));
          assert.deepEqual(leafBits(evaluate(out.module.entry, [v])), leafBits(evaluate(m.entry, [v])), `${backend} ${t} largest=${largest} k=${k}`);
        }
      }
    }
  }
  // Which backend expands which: f64 and pred only where the CPU's sort compares them, the halves and narrow floats only on the GPU.
  const expands = (keys: ReadonlySet<ElementType>): string[] => cases.map(([t]) => t).filter((t) => keys.has(t as ElementType));
  assert.deepEqual(expands(SORT_KEY_TYPES), ["f32", "s32", "u64", "bf16", "u8", "s16", "f64", "pred"]);
  assert.deepEqual(expands(WGSL_SORT_KEY_TYPES), cases.map(([t]) => t).filter((t) => t !== "f64"));
});

test("ApproxTopK as a stable sort by its comparator and slices: the interpreter's values; one the interpreter refuses is left to it", () => {
  const x = Literal.from("f32", [[4, -1, 4, Number.NaN, 0], [-0, 0, 2, 2, -3], [1, 2, 3, 4, 5]]);
  const cases: [HloModule, Literal][] = [
    [approxTopKModule(2, 1, "tensor<3x2xf32>, tensor<3x2xi32>"), x],
    // Not aggregated: the caller's result size along the dimension (at least 1).
    [approxTopKModule(2, 1, "tensor<3x4xf32>, tensor<3x4xi32>", false), x],
    [approxTopKModule(2, 0, "tensor<2x5xf32>, tensor<2x5xi32>"), x],
  ];
  for (const [m, v] of cases) {
    const out = expandModule(m, "compile", SORT_KEY_TYPES);
    assert.equal(out.count, 1);
    assert.ok(!allOpcodes(out.module).has("customCall"));
    assert.deepEqual(leafBits(evaluate(out.module.entry, [v])), leafBits(evaluate(m.entry, [v])));
  }
  // top_k past the dimension's size: kept, so that the interpreter's error reaches the caller.
  const bad = approxTopKModule(6, 1, "tensor<3x6xf32>, tensor<3x6xi32>");
  assert.equal(expandModule(bad, "compile", SORT_KEY_TYPES).count, 0);
  assert.throws(() => evaluate(bad.entry, [x]), /ApproxTopK: top_k must be in \[0, 5\], got 6/);
});

test("scaled dot as scaled f32 operands and a dot: the interpreter's bits (products rounded once: subnormal, overflowing, NaN scales); f64 left alone", () => {
  const cases: [string, string, string, number[], number[], number[], number[]][] = [
    // e8m0 scales of 2^-127 (f32 subnormal products), 2^127 (overflow to inf) and NaN (0xFF).
    ["f8e4m3fn", "f8e8m0fnu", "f32", [1.5, -2, 448, 0.001953125, 3, -0, 7, 0.5], [2 ** -127, 2 ** 127, 1, 0.25], [1, 2, 3, -4, 5, 6, 0.125, 8, -9, 10, 11, 12], [1, 2, Number.NaN, 4, 0.5, 2 ** -20]],
    // bf16 operands and f32 scales whose products need rounding to f32, to a bf16 result.
    ["bf16", "f32", "bf16", [1.0078125, -3.5, 7, 1e30, 2, 3, 4, 5], [1.1, 3.3333, -0.7, 1e-30], [1, -1, 3, 0.5, 2, 7, 9, -3, 1, 2, 3, 4], [0.3, 0.7, 1.9, 2.1, 5.5, -1]],
  ];
  for (const [t, st, r, l, ls, rr, rs] of cases) {
    const m = scaledDotModule(t, st, r);
    const out = expandModule(m, "compile", SORT_KEY_TYPES);
    assert.equal(out.count, 1);
    assert.ok(!allOpcodes(out.module).has("scaledDot"));
    const args = [Literal.fromValues(t as "f32", [2, 4], l), Literal.fromValues(st as "f32", [2, 2], ls), Literal.fromValues(t as "f32", [4, 3], rr), Literal.fromValues(st as "f32", [2, 3], rs)];
    assert.deepEqual(leafBits(evaluate(out.module.entry, args)), leafBits(evaluate(m.entry, args)), `${t} x ${st} -> ${r}`);
  }
  // f64 scales: the interpreter's products round in double first; left to it.
  assert.equal(expandModule(scaledDotModule("f32", "f64", "f32"), "compile", SORT_KEY_TYPES).count, 0);
});

// cosh and sinh add log ½ to x before exp: the rounding of that sum grows with |x|, and so does the bound.
test("CHLO's expansions agree with the interpreter's kernels (f64, within 8 ulps; cosh and sinh 8 + 2|x|)", () => {
  const xs: Record<string, readonly number[]> = {
    acos: [-1, -0.75, -0.3, 0, 0.2, 0.6, 0.99], asin: [-0.9, -0.3, 0, 0.25, 0.7], atan: [-40, -1, -0.1, 0, 0.5, 3, 1e6],
    acosh: [1, 1.5, 2, 10, 1e3, 1e200], asinh: [-1e200, -3, -0.5, 0, 1e-8, 0.7, 20], atanh: [-0.9, -0.2, 0, 0.3, 0.8],
    cosh: [-5, -1, 0, 0.5, 3, 20], sinh: [-5, -1, -0.5, 0, 1e-9, 0.5, 2, 20], erfc: [-2, -0.5, 0, 0.3, 0.6],
    nextAfter: [1, 0, -3, 2.5, 1e300],
  };
  for (const opcode of LOWER_CHLO) {
    const x = xs[opcode]!;
    const m = chloModule(opcode, x.length);
    const args = [Literal.from("f64", [...x]), ...(opcode === "nextAfter" ? [Literal.from("f64", x.map((v, i) => (i % 2 === 0 ? v + 1 : -Infinity)))] : [])];
    const want = evaluate(m.entry, args).toNumbers();
    const got = evaluate(expandModule(m, "lowerChlo", SORT_KEY_TYPES).module.entry, args).toNumbers();
    x.forEach((v, i) => {
      const d = ulpDistance("f64", got[i]!, want[i]!);
      assert.ok(d <= (opcode === "nextAfter" ? 0 : opcode === "cosh" || opcode === "sinh" ? 8 + 2 * Math.abs(v) : 8), `${opcode}(${v}): ${got[i]} vs the interpreter's ${want[i]} (${d} ulp)`);
    });
  }
});
