// The algebraic simplifier: each rule on a small program whose result is known, the
// IEEE cases (x + +0 is not x; x + -0 is), and the differential property on random
// programs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, div, mul, neg, not, sub, abs, max, eq, gt, select, broadcastInDim } from "../../../src/builder/elementwise.js";
import { convertElementType } from "../../../src/builder/conversion.js";
import { constantR0, reshape, transpose, slice, concatInDim, pad, makeNoPaddingConfig, rev, sliceInDim } from "../../../src/builder/data_movement.js";
import { dotGeneral } from "../../../src/builder/linalg.js";
import { reduce } from "../../../src/builder/reduction.js";
import { parameter } from "../../../src/builder/xla_builder.js";
import { scalarShape } from "../../../src/types/shape.js";
import { Literal } from "../../../src/types/literal.js";
import { defaultSimplificationPipeline, simplify, SIMPLIFY_RULES } from "../../../src/compiler/passes/index.js";
import { any, op, splat, type Rule } from "../../../src/passes/pattern.js";
import { convertsExactly, composeSlices } from "../../../src/compiler/passes/simplify/index.js";
import { build, eval1, opcodes, rootOf, run } from "./helpers.js";
import { checkDifferential } from "./differential.js";
import { literalsIdentical, type RandomOpFamily } from "../random_program.js";

const F32_SPECIALS = Literal.fromValues("f32", [6], [-0, 0, NaN, Infinity, -Infinity, 1.5]);

test("x + -0, x - +0, x * 1, x / 1 are x for floats; x + +0 and x - -0 are kept", () => {
  const cases: [string, (x: ReturnType<typeof constantR0>) => ReturnType<typeof constantR0>, boolean][] = [
    ["x + -0", (x) => add(x, constantR0(x.builder, "f32", -0)), true],
    ["-0 + x", (x) => add(constantR0(x.builder, "f32", -0), x), true],
    ["x + +0", (x) => add(x, constantR0(x.builder, "f32", 0)), false],
    ["x - +0", (x) => sub(x, constantR0(x.builder, "f32", 0)), true],
    ["x - -0", (x) => sub(x, constantR0(x.builder, "f32", -0)), false],
    ["x * 1", (x) => mul(constantR0(x.builder, "f32", 1), x), true],
    ["x / 1", (x) => div(x, constantR0(x.builder, "f32", 1)), true],
    ["x * 0", (x) => mul(x, constantR0(x.builder, "f32", 0)), false],
  ];
  for (const [what, f, simplified] of cases) {
    const m = build("t", [["f32", [6]]], (_b, [x]) => f(x!));
    const out = run(m, simplify());
    assert.equal(rootOf(out).opcode === "parameter", simplified, what);
    assert.ok(literalsIdentical(eval1(m, [F32_SPECIALS]), eval1(out, [F32_SPECIALS])), what);
  }
});

test("integer identities: x + 0, x * 0, x - x, x xor x, compare(x, x)", () => {
  const m = build("t", [["s32", [3]]], (b, [x]) => {
    const zero = constantR0(b, "s32", 0);
    return add(add(x!, zero), add(mul(x!, zero), sub(x!, x!)));
  });
  const out = run(m, simplify());
  const args = [Literal.fromValues("s32", [3], [-2147483648, 5, -1])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
  assert.ok(!opcodes(out).includes("multiply") && !opcodes(out).includes("subtract"), opcodes(out).join(","));
  const cmp = run(build("c", [["s32", [3]]], (_b, [x]) => gt(x!, x!)), simplify());
  assert.deepEqual(eval1(cmp, args).values(), [false, false, false]);
  assert.ok(!opcodes(cmp).includes("compare"));
  // Floats: x > x is false but x == x is not true for NaN, so FLOAT compares stay.
  const fcmp = run(build("c", [["f32", [6]]], (_b, [x]) => eq(x!, x!)), simplify());
  assert.ok(opcodes(fcmp).includes("compare"));
});

test("involutions and idempotent ops: neg(neg x), not(not x), abs(abs x), max(x, x)", () => {
  const m = build("t", [["s8", [4]], ["pred", [2]]], (b, [x, p]) => {
    const y = max(neg(neg(x!)), neg(neg(x!)));
    return (b.addInstruction("tuple", [abs(abs(y)), not(not(p!))], {}));
  });
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["abs", "tuple"]);
  const args = [Literal.fromValues("s8", [4], [-128, -1, 0, 127]), Literal.fromValues("pred", [2], [true, false])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("convert: to the same type, and round trips through a type that holds every value", () => {
  assert.ok(convertsExactly("s8", "s32") && convertsExactly("s32", "u32") && convertsExactly("f16", "f32"));
  assert.ok(convertsExactly("s8", "bf16") && convertsExactly("u32", "f64") && convertsExactly("pred", "s8"));
  assert.ok(!convertsExactly("s32", "f32") && !convertsExactly("f32", "f16") && !convertsExactly("f16", "bf16") && !convertsExactly("s32", "s8"));
  const m = build("t", [["s8", [3]], ["f32", [2]]], (b, [x, y]) => b.addInstruction("tuple", [
    convertElementType(convertElementType(x!, "f16"), "s8"), convertElementType(y!, "f32"), convertElementType(convertElementType(y!, "f16"), "f32"),
  ], {}));
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["convert", "convert", "tuple"]); // only f32 -> f16 -> f32 stays
});

test("shape ops: reshape of reshape, transpose of transpose, identity ops, slice of slice", () => {
  const m = build("t", [["f32", [2, 3, 4]]], (_b, [x]) => {
    const r = reshape(reshape(x!, [6, 4]), [4, 6]);
    const t = transpose(transpose(x!, [2, 0, 1]), [1, 2, 0]); // the identity
    const s = slice(slice(x!, [0, 1, 0], [2, 3, 4], [1, 1, 2]), [1, 0, 1], [2, 2, 2], [1, 1, 1]);
    return x!.builder.addInstruction("tuple", [r, t, s, reshape(x!, [2, 3, 4]), rev(rev(x!, [0, 2]), [2, 0])], {});
  });
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["reshape", "slice", "tuple"]);
  const args = [Literal.fromValues("f32", [2, 3, 4], Array.from({ length: 24 }, (_, i) => i))];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
  // composeSlices against a direct computation: x[1:9:2][1:4:2] = x[3:8:4]
  assert.deepEqual(composeSlices({ startIndices: [1], limitIndices: [9], strides: [2] }, { startIndices: [1], limitIndices: [4], strides: [2] }),
    { startIndices: [3], limitIndices: [8], strides: [4] });
});

test("concatenate of adjacent slices, of one operand; pad with no padding; broadcast of broadcast", () => {
  const m = build("t", [["s32", [5, 2]]], (b, [x]) => b.addInstruction("tuple", [
    concatInDim(b, [sliceInDim(x!, 0, 2, 1, 0), sliceInDim(x!, 2, 4, 1, 0), sliceInDim(x!, 4, 5, 1, 0)], 0),
    concatInDim(b, [x!], 1),
    pad(x!, constantR0(b, "s32", 7), makeNoPaddingConfig(2)),
    broadcastInDim(broadcastInDim(x!, [5, 2, 3], [0, 1]), [4, 5, 2, 3], [1, 2, 3]),
  ], {}));
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["broadcastInDim", "tuple"]);
  const args = [Literal.fromValues("s32", [5, 2], Array.from({ length: 10 }, (_, i) => i * 3 - 7))];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("reduce over one element applies the reducer once; over none gives the init", () => {
  const m = build("t", [["f32", [3, 1]], ["f32", []]], (b, [x, init]) => {
    const sub = b.createSubBuilder("sum");
    const comp = sub.build(add(parameter(sub, 0, scalarShape("f32")), parameter(sub, 1, scalarShape("f32"))));
    return b.addInstruction("tuple", [reduce(x!, init!, comp, [1]), reduce(x!, constantR0(b, "f32", -0), comp, [1])], {});
  });
  const out = run(m, simplify());
  assert.ok(!opcodes(out).includes("reduce"), opcodes(out).join(","));
  const args = [Literal.fromValues("f32", [3, 1], [-0, 2, NaN]), Literal.scalar("f32", 0)];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("dot with a size-1 contracting dimension becomes a broadcast multiply (and + 0 for floats)", () => {
  for (const t of ["f32", "s32"] as const) {
    const m = build("t", [[t, [2, 3, 1]], [t, [2, 1, 4]]], (_b, [l, r]) =>
      dotGeneral(l!, r!, { lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1] }));
    const out = run(m, simplify());
    assert.ok(!opcodes(out).includes("dot") && opcodes(out).includes("multiply"), opcodes(out).join(","));
    const vals = (n: number): number[] => Array.from({ length: n }, (_, i) => (t === "f32" && i === 2 ? -0 : i - 3));
    const args = [Literal.fromValues(t, [2, 3, 1], vals(6)), Literal.fromValues(t, [2, 1, 4], vals(8))];
    assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)), t);
  }
});

test("select with a constant predicate picks a branch", () => {
  const m = build("t", [["f32", [2]], ["f32", [2]]], (b, [x, y]) =>
    select(broadcastInDim(constantR0(b, "pred", false), [2], []), x!, y!));
  assert.equal(rootOf(run(m, simplify())).name, rootOf(m).operands[2]!.name);
});

test("simplify keeps random programs' results bit-identical", () => {
  const changed = checkDifferential([simplify()], { seeds: 300 });
  assert.ok(changed > 100, `only ${changed} programs simplified`);
});

test("simplify on programs dense in simplifiable patterns, empty arrays and calls stays bit-identical", () => {
  const heavy = ["simplifiable", "simplifiable", "simplifiable", "shape", "elementwise", "reduce", "dot", "constant", "call"] as const;
  assert.ok(checkDifferential([simplify()], { seeds: 300, firstSeed: 3000, families: [...heavy] }) > 250);
  checkDifferential([simplify()], { seeds: 200, firstSeed: 4000, zeroSizeProbability: 0.25 });
});

test("more shape rules: ops on splats, transposes of unit dims, slices of concatenates", () => {
  const m = build("t", [["f32", [3, 1, 2]], ["f32", [2, 2]]], (b, [x, y]) => {
    const s = broadcastInDim(constantR0(b, "f32", 2), [4, 6], []);
    return b.addInstruction("tuple", [
      transpose(slice(s, [1, 0], [3, 6], [1, 2]), [1, 0]), // a splat
      transpose(x!, [1, 0, 2]), // only moves the size-1 dimension: a reshape
      slice(concatInDim(b, [y!, y!, y!], 0), [2, 1], [4, 2], [1, 1]), // within the second y
    ], {});
  });
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["constant", "broadcastInDim", "reshape", "slice", "tuple"]);
  const args = [Literal.fromValues("f32", [3, 1, 2], [1, 2, 3, 4, 5, 6]), Literal.fromValues("f32", [2, 2], [7, 8, 9, 10])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("more arithmetic rules: neutral bounds and bitwise constants, a - (-b), x * -1, abs(-x), select(not p)", () => {
  const m = build("t", [["s32", [3]], ["s32", [3]], ["pred", [3]], ["f32", [3]]], (b, [x, y, p, z]) => {
    const splatOf = (t: "s32" | "f32" | "pred", v: number | boolean): ReturnType<typeof constantR0> => broadcastInDim(constantR0(b, t, v), [3], []);
    return b.addInstruction("tuple", [
      max(x!, splatOf("s32", -2147483648)),
      b.addInstruction("and", [splatOf("s32", -1), b.addInstruction("shiftLeft", [x!, splatOf("s32", 0)], {})], {}),
      sub(x!, neg(y!)),
      abs(neg(x!)),
      mul(z!, splatOf("f32", -1)),
      select(not(p!), x!, y!),
      max(z!, splatOf("f32", Infinity)), // not an identity: stays
    ], {});
  });
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["add", "abs", "negate", "select", "constant", "broadcastInDim", "maximum", "tuple"]);
  const args = [Literal.fromValues("s32", [3], [-2147483648, 7, -1]), Literal.fromValues("s32", [3], [-2147483648, -3, 5]),
    Literal.fromValues("pred", [3], [true, false, true]), Literal.fromValues("f32", [3], [NaN, -0, 2])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("the random programs are strong enough to catch wrong rules", () => {
  const heavy = { seeds: 300, firstSeed: 3000, families: ["simplifiable", "simplifiable", "simplifiable", "shape", "elementwise", "reduce", "dot", "constant", "call"] as RandomOpFamily[] };
  const wrong: Rule[] = [
    { name: "x + 0 (wrong for -0)", root: "add", commutative: true, operands: [any("x"), splat((v) => v === 0)], rewrite: (m) => m.get("x") },
    { name: "x * 0 = 0 (wrong for NaN, -x)", root: "multiply", commutative: true, operands: [any(), splat((v) => v === 0, "z")], rewrite: (m) => m.get("z") },
    { name: "max(x, inf) = x", root: "maximum", commutative: true, operands: [any("x"), splat((v) => v === Infinity)], rewrite: (m) => m.get("x") },
    { name: "select(not p, a, b) = select(p, a, b)", root: "select", operands: [op("not", [any("p")]), any("a"), any("b")],
      rewrite: (m, f) => f.add("select", [m.get("p"), m.get("a"), m.get("b")], {}) },
    { name: "a - (-b) = b - a", root: "subtract", operands: [any("a"), op("negate", [any("b")])],
      rewrite: (m, f) => f.add("subtract", [m.get("b"), m.get("a")], {}) },
  ];
  for (const rule of wrong) {
    assert.throws(() => checkDifferential([simplify([rule, ...SIMPLIFY_RULES])], heavy), /results differ/, rule.name);
  }
});

test("dynamic-slice with constant starts is a slice at the clamped starts; a whole-operand update is the update", () => {
  const m = build("t", [["s32", [4, 3]], ["s32", [4, 3]]], (b, [x, u]) => b.addInstruction("tuple", [
    b.addInstruction("dynamicSlice", [x!, constantR0(b, "s32", 3), constantR0(b, "s32", -5)], { sliceSizes: [2, 2] }),
    b.addInstruction("dynamicUpdateSlice", [x!, u!, constantR0(b, "s64", 7), constantR0(b, "s64", 1)], {}),
  ], {}));
  const out = run(m, simplify());
  assert.deepEqual(opcodes(out), ["slice", "tuple"]);
  const slice0 = rootOf(out).operands[0]! as unknown as { attrs: { startIndices: number[] } };
  assert.deepEqual(slice0.attrs.startIndices, [2, 0]); // 3 clamped to 4 - 2, -5 clamped to 0
  const args = [Literal.fromValues("s32", [4, 3], Array.from({ length: 12 }, (_, i) => i)), Literal.fromValues("s32", [4, 3], Array.from({ length: 12 }, (_, i) => -i))];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
});

test("simplify and the pipeline keep random programs with dynamic slices bit-identical", () => {
  const families = ["elementwise", "shape", "dynamic", "dynamic", "simplifiable", "constant", "reduce"] as RandomOpFamily[];
  assert.ok(checkDifferential([simplify()], { seeds: 200, firstSeed: 5000, families }) > 150);
  checkDifferential([defaultSimplificationPipeline()], { seeds: 200, firstSeed: 5200, families });
});

test("regression: a root tuple of all the elements of a tuple-shaped op stays a tuple (runtimes read its elements)", () => {
  const m = build("t", [["f32", [2]], ["s32", []]], (b, [x, y]) => {
    const opaque = b.addInstruction("optimizationBarrier", [b.addInstruction("tuple", [x!, y!], {})], {});
    const get = (i: number): ReturnType<typeof constantR0> => b.addInstruction("getTupleElement", [opaque], { index: i });
    return b.addInstruction("tuple", [get(0), get(1)], {});
  });
  assert.equal(rootOf(run(m, defaultSimplificationPipeline())).opcode, "tuple");
});
