// Constant folding, common-subexpression elimination and dead-code elimination: small
// programs with known results, and the differential property on random programs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, mul, neg, broadcastInDim, exp } from "../../../src/builder/elementwise.js";
import { constantR0, constantR1, iota } from "../../../src/builder/data_movement.js";
import { rngUniform } from "../../../src/builder/random.js";
import { reduce } from "../../../src/builder/reduction.js";
import { parameter, XlaBuilder } from "../../../src/builder/xla_builder.js";
import { HloModule } from "../../../src/ir/computation.js";
import { runPasses } from "../../../src/passes/pass.js";
import { arrayShape, scalarShape } from "../../../src/types/shape.js";
import { Literal } from "../../../src/types/literal.js";
import { constantFold, cse, dce, defaultSimplificationPipeline, simplify } from "../../../src/compiler/passes/index.js";
import { build, eval1, opcodes, rootOf, run } from "./helpers.js";
import { checkDifferential } from "./differential.js";
import * as RANDOM from "../random_program.js";
const { literalsIdentical } = RANDOM;

test("constant folding evaluates ops on constants with the interpreter's kernels", () => {
  const m = build("t", [["f32", [3]]], (b, [x]) => {
    const c = exp(add(constantR1(b, "f32", [0, 1, 2]), constantR1(b, "f32", [1, 1, 1])));
    const sub = b.createSubBuilder("sum");
    const sum = sub.build(add(parameter(sub, 0, scalarShape("f32")), parameter(sub, 1, scalarShape("f32"))));
    const total = reduce(c, constantR0(b, "f32", 0), sum, [0]);
    return add(x!, broadcastInDim(total, [3], []));
  });
  const out = run(m, constantFold);
  assert.deepEqual(opcodes(out), ["constant", "broadcastInDim", "add"]);
  const total = Math.fround(Math.fround(Math.fround(Math.exp(1)) + Math.fround(Math.exp(2))) + Math.fround(Math.exp(3)));
  assert.deepEqual(eval1(out, [Literal.fromValues("f32", [3], [0, 1, 2])]).toNumbers(), [total, total + 1, total + 2].map(Math.fround));
});

test("constant folding keeps splats as broadcasts, leaves iota, rng and large results alone", () => {
  const m = build("t", [], (b) => {
    const big = broadcastInDim(constantR0(b, "f32", 2), [64, 64], []);
    const folded = mul(big, broadcastInDim(constantR0(b, "f32", 3), [64, 64], [])); // a splat op: folded on scalars
    const i = neg(iota(b, arrayShape("s32", [2000]), 0)); // over the bound: kept
    const r = rngUniform(constantR0(b, "f32", 0), constantR0(b, "f32", 1), arrayShape("f32", [2]));
    return b.addInstruction("tuple", [folded, i, r], {});
  });
  const out = run(m, constantFold, dce);
  assert.deepEqual(opcodes(out), ["constant", "broadcastInDim", "iota", "negate", "constant", "constant", "rng", "tuple"]);
  assert.deepEqual(eval1(out, []).elements[0]!.values().slice(0, 2), [6, 6]);
});

test("a constant whose elements all have the same bits becomes a broadcast of its scalar (XLA's simplifier); -0 among 0s, other NaN payloads, complex parts that differ stay dense", () => {
  const nanBits = (bits: number): number => new Float32Array(new Uint32Array([bits]).buffer)[0]!;
  const dense = (values: readonly number[]): Literal => Literal.fromValues("f32", [2, values.length / 2], values);
  const cases: [Literal, boolean][] = [
    [dense(Array(64).fill(0.1)), true],
    [Literal.fromValues("c64", [3], [{ re: 1, im: -2 }, { re: 1, im: -2 }, { re: 1, im: -2 }]), true],
    [Literal.fromValues("s8", [5], [7, 7, 7, 7, 7]), true],
    [dense([0, 0, 0, -0]), false],
    [Literal.fromStorage(arrayShape("f32", [2]), new Float32Array([nanBits(0x7fc00000), nanBits(0x7fc00001)])), false],
    [Literal.fromValues("c64", [2], [{ re: 1, im: 2 }, { re: 1, im: 3 }]), false],
  ];
  for (const [lit, splat] of cases) {
    const m = build("t", [], (b) => b.addInstruction("constant", [], { literal: lit }));
    const out = run(m, constantFold);
    assert.deepEqual(opcodes(out), splat ? ["constant", "broadcastInDim"] : ["constant"], lit.toString());
    const bytes = (l: Literal): Buffer => Buffer.from(l.data.buffer, l.data.byteOffset, l.data.byteLength);
    assert.ok(bytes(eval1(out, [])).equals(bytes(lit)), lit.toString());
  }
});

test("constant folding leaves reductions whose reducer draws random numbers", () => {
  const m = build("t", [], (b) => {
    const sub = b.createSubBuilder("noisy");
    const acc = add(parameter(sub, 0, scalarShape("f32")), parameter(sub, 1, scalarShape("f32")));
    const noisy = sub.build(add(acc, rngUniform(constantR0(sub, "f32", 0), constantR0(sub, "f32", 1), scalarShape("f32"))));
    return reduce(constantR1(b, "f32", [1, 2]), constantR0(b, "f32", 0), noisy, [0]);
  });
  assert.deepEqual(opcodes(run(m, constantFold)), ["constant", "constant", "reduce"]);
});

test("CSE merges equal instructions and constants, never side-effecting ones", () => {
  const m = build("t", [["f32", [2]]], (b, [x]) => {
    const a1 = add(x!, constantR1(b, "f32", [1, 2]));
    const a2 = add(x!, constantR1(b, "f32", [1, 2]));
    const r1 = rngUniform(constantR0(b, "f32", 0), constantR0(b, "f32", 1), arrayShape("f32", [2]));
    const r2 = rngUniform(constantR0(b, "f32", 0), constantR0(b, "f32", 1), arrayShape("f32", [2]));
    return b.addInstruction("tuple", [mul(a1, a2), add(r1, r2)], {});
  });
  const out = run(m, cse);
  assert.equal(opcodes(out).filter((o) => o === "add").length, 2); // one x + c, one r1 + r2
  assert.equal(opcodes(out).filter((o) => o === "rng").length, 2);
  assert.equal(opcodes(out).filter((o) => o === "constant").length, 3); // [1, 2], 0 and 1, once each
  const mult = rootOf(out).operands[0]!;
  assert.equal(mult.operands[0], mult.operands[1]);
});

test("DCE drops unused instructions and computations, keeps side effects and parameters", () => {
  const b = new XlaBuilder("t");
  const x = parameter(b, 0, arrayShape("f32", [2]));
  parameter(b, 1, arrayShape("f32", [2])); // unused, but a parameter
  neg(x); // dead
  rngUniform(constantR0(b, "f32", 0), constantR0(b, "f32", 1), arrayShape("f32", [2])); // dead but stateful
  const root = exp(x);
  const unused = b.createSubBuilder("unused");
  const unusedComp = unused.build(neg(parameter(unused, 0, scalarShape("f32"))));
  const m = new HloModule("t", b.build(root), [unusedComp]);
  m.functions = [unusedComp, m.entry];
  const out = run(m, dce);
  assert.deepEqual(opcodes(out), ["constant", "constant", "rng", "exp"]);
  assert.equal(out.entry.parameters.length, 2);
  assert.deepEqual(out.computations.map((c) => c.name), ["t"]);
  assert.deepEqual(out.functions?.map((c) => c.name), ["t"]);
  assert.equal(run(out, dce), out, "nothing more to do: the same module");
});

test("each pass returns the same module when it has nothing to do", () => {
  const m = build("t", [["f32", [2]]], (_b, [x]) => exp(x!));
  for (const pass of [simplify(), constantFold, cse, dce, defaultSimplificationPipeline()]) assert.equal(run(m, pass), m, pass.name);
});

test("constant folding, CSE and DCE keep random programs' results bit-identical", () => {
  assert.ok(checkDifferential([constantFold], { seeds: 250 }) > 50);
  assert.ok(checkDifferential([cse], { seeds: 250 }) > 50);
  assert.ok(checkDifferential([dce], { seeds: 250 }) > 50);
});

test("the default simplification pipeline keeps random programs' results and shrinks them", () => {
  let before = 0;
  let after = 0;
  const pipeline = defaultSimplificationPipeline();
  assert.ok(checkDifferential([pipeline], { seeds: 300, firstSeed: 1000 }) > 250);
  for (let seed = 1000; seed < 1100; seed++) {
    const { randomProgram } = RANDOM;
    const { computation } = randomProgram(seed);
    const m = new HloModule("m", computation);
    before += m.entry.instructions.length;
    after += run(m, pipeline).entry.instructions.length;
  }
  assert.ok(after < before * 0.8, `${before} -> ${after} instructions`);
  assert.ok(literalsIdentical(Literal.scalar("f32", NaN), Literal.scalar("f32", NaN)));
});

test("the pipeline reaches its fixpoint on random programs (no rule undoes another)", () => {
  const { randomProgram } = RANDOM;
  for (let seed = 1; seed <= 150; seed++) {
    const m = new HloModule("m", randomProgram(seed, { size: 30 }).computation);
    const { log } = runPasses(m, [defaultSimplificationPipeline()]);
    assert.ok(!log.some((e) => e.message.includes("still changing")), `seed ${seed}`);
  }
});

test("CSE merges identical sub-computations, and then the reduces that use them", () => {
  const m = build("t", [["f32", [2, 3]]], (b, [x]) => {
    const sum = (name: string): ReturnType<typeof b.createSubBuilder> => b.createSubBuilder(name);
    const reducer = (name: string) => {
      const s = sum(name);
      return s.build(add(parameter(s, 0, scalarShape("f32")), parameter(s, 1, scalarShape("f32"))));
    };
    const other = b.createSubBuilder("prod");
    const prod = other.build(mul(parameter(other, 0, scalarShape("f32")), parameter(other, 1, scalarShape("f32"))));
    const zero = constantR0(b, "f32", 0);
    return b.addInstruction("tuple", [reduce(x!, zero, reducer("a"), [1]), reduce(x!, zero, reducer("b"), [1]), reduce(x!, zero, prod, [1])], {});
  });
  assert.equal(m.computations.length, 4);
  const out = run(m, cse, dce);
  assert.equal(out.computations.length, 3); // one sum, the product, the entry
  assert.equal(opcodes(out).filter((o) => o === "reduce").length, 2);
  const args = [Literal.fromValues("f32", [2, 3], [1, 2, 3, 4, 5, 6])];
  assert.ok(literalsIdentical(eval1(m, args), eval1(out, args)));
  // An entry that computes what another computation does stays the entry.
  const eb = new XlaBuilder("e");
  const entry = eb.build(add(parameter(eb, 0, scalarShape("f32")), parameter(eb, 1, scalarShape("f32"))));
  const rb = new XlaBuilder("r");
  const twin = rb.build(add(parameter(rb, 0, scalarShape("f32")), parameter(rb, 1, scalarShape("f32"))));
  const tiny = new HloModule("e", entry, [twin]);
  assert.equal(tiny.computations.length, 2);
  assert.equal(run(tiny, cse).entry.name, "e");
});
