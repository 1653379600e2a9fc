// Control flow and structure (seed 000: Tuple, GetTupleElement, Call, CompositeCall,
// Conditional, While, CustomCall, OptimizationBarrier, AfterAll, AddDependency), with
// cases from StableHLO's interpreter tests (tuple_and_get_tuple_element, if, case,
// optimization_barrier, after_all, while, call, composite). Loop counters and sums use
// the elementwise ops (add, lt); custom-call targets appear only in the CustomCall tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ExecutionError, Literal, ShapeError, TOKEN_SHAPE, XlaBuilder, addDependency, afterAll, arrayShape, call,
  add, compositeCall, conditional, conditionalIndexed, constantLiteral, createToken, customCall,
  getTupleElement, lt, optimizationBarrier, parameter, scalarShape, tuple, tupleShape, whileLoop, type Computation,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { verifyComputation } from "../../src/ir/verify.js";
import { testTargets } from "./helpers.js";

const s64 = (v: number | bigint): Literal => Literal.scalar("s64", BigInt(v));
const s64Vec = (vs: number[]): Literal => Literal.fromValues("s64", [vs.length], vs.map(BigInt));

/** A computation of one parameter of `shape` that returns `value` (ignoring the parameter). */
function constantBranch(b: XlaBuilder, name: string, paramShape: Parameters<typeof parameter>[2], value: Literal): Computation {
  const sb = b.createSubBuilder(name);
  parameter(sb, 0, paramShape);
  const v = constantLiteral(sb, value);
  return sb.build(tuple(sb, [v, v]));
}

test("seed 000 Tuple / GetTupleElement: t = (v, s); gte(t, 1) is s", () => {
  const b = new XlaBuilder("t");
  const v = constantLiteral(b, Literal.fromValues("f32", [10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  const s = constantLiteral(b, Literal.scalar("s32", 5));
  const t = tuple(b, [v, s]);
  const e1 = getTupleElement(t, 1);
  assert.deepEqual(e1.shape, scalarShape("s32"));
  const r = evaluate(b.build(tuple(b, [getTupleElement(t, 0), e1])), []);
  assert.deepEqual(r.elements[0]!.toNumbers(), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(r.elements[1]!.values(), [5]);
});

test("StableHLO get_tuple_element: nested tuples ([1.0, 2.0], (3))", () => {
  const b = new XlaBuilder("nested");
  const val0 = constantLiteral(b, Literal.fromValues("f64", [2], [1, 2]));
  const val1 = tuple(b, [constantLiteral(b, s64(3))]);
  const operand = tuple(b, [val0, val1]);
  assert.equal(operand.shape.kind, "tuple");
  const r = evaluate(b.build(tuple(b, [getTupleElement(operand, 0), getTupleElement(getTupleElement(operand, 1), 0)])), []);
  assert.deepEqual(r.elements[0]!.toNumbers(), [1, 2]);
  assert.deepEqual(r.elements[1]!.values(), [3n]);
});

test("empty tuple and tuple of tokens", () => {
  const b = new XlaBuilder("e");
  const t = tuple(b, [tuple(b, []), createToken(b)]);
  assert.deepEqual(t.shape, tupleShape([tupleShape([]), TOKEN_SHAPE]));
  const r = evaluate(b.build(t), []);
  assert.equal(r.elements[0]!.elements.length, 0);
  assert.equal(r.elements[1]!.shape.kind, "token");
});

test("GetTupleElement rejects an out-of-range index and a non-tuple", () => {
  const b = new XlaBuilder("bad");
  const t = tuple(b, [constantLiteral(b, s64(1))]);
  assert.throws(() => getTupleElement(t, 1), /out of range/);
  assert.throws(() => getTupleElement(t, -1), ShapeError);
  assert.throws(() => getTupleElement(constantLiteral(b, s64(1)), 0), /must be a tuple/);
});

test("Call runs the computation on its operands (StableHLO call.mlir: add_2(1) = 3)", () => {
  const b = new XlaBuilder("main");
  const sb = b.createSubBuilder("add_2");
  const x = parameter(sb, 0, scalarShape("s64"));
  const add2 = sb.build(add(x, constantLiteral(sb, s64(2))));
  const c = b.build(call(b, add2, [constantLiteral(b, s64(1))]));
  verifyComputation(c);
  assert.deepEqual(evaluate(c, []).values(), [3n]);
});

test("Call with no operands, and argument mismatches", () => {
  const b = new XlaBuilder("main");
  const sb = b.createSubBuilder("seven");
  const seven = sb.build(constantLiteral(sb, s64(7)));
  assert.deepEqual(evaluate(b.build(call(b, seven, [])), []).values(), [7n]);
  const b2 = new XlaBuilder("main2");
  assert.throws(() => call(b2, seven, [constantLiteral(b2, s64(1))]), /must take 1 parameter\(s\) \(s64\[\]\), it takes 0/);
  const sb2 = b2.createSubBuilder("id");
  const id = sb2.build(parameter(sb2, 0, scalarShape("s64")));
  assert.throws(() => call(b2, id, [constantLiteral(b2, Literal.scalar("s32", 1))]), /has shape s64\[\], expected s32\[\]/);
});

test("CompositeCall runs its decomposition (StableHLO composite.mlir: add_n with n = 2)", () => {
  const b = new XlaBuilder("main");
  const sb = b.createSubBuilder("add_n.impl");
  const x = parameter(sb, 0, scalarShape("s64"));
  const impl = sb.build(add(x, constantLiteral(sb, s64(2))));
  const op = compositeCall(b, impl, [constantLiteral(b, s64(1))], "stablehlo.add_n", {
    attributes: { n: { kind: "int", value: 2n, type: "s64" } }, version: 1,
  });
  assert.equal((op.instruction.attrs as { name: string }).name, "stablehlo.add_n");
  const c = b.build(op);
  verifyComputation(c);
  assert.deepEqual(evaluate(c, []).values(), [3n]);
  assert.throws(() => compositeCall(new XlaBuilder("x"), impl, [], ""), /name: must not be empty/);
});

function ifProgram(pred: boolean): Literal {
  const b = new XlaBuilder("if");
  const unit = tupleShape([]);
  const t = constantBranch(b, "true", unit, s64Vec([0, 0]));
  const f = constantBranch(b, "false", unit, s64Vec([1, 1]));
  const e = tuple(b, []);
  return evaluate(b.build(conditional(constantLiteral(b, Literal.scalar("pred", pred)), e, t, e, f)), []);
}

test("StableHLO if.mlir: true runs the first branch, false the second", () => {
  const t = ifProgram(true);
  assert.deepEqual(t.elements.map((e) => e.values()), [[0n, 0n], [0n, 0n]]);
  const f = ifProgram(false);
  assert.deepEqual(f.elements.map((e) => e.values()), [[1n, 1n], [1n, 1n]]);
});

function caseProgram(index: number): bigint[] {
  const b = new XlaBuilder("case");
  const unit = tupleShape([]);
  const b0 = constantBranch(b, "b0", unit, s64Vec([0, 0]));
  const b1 = constantBranch(b, "b1", unit, s64Vec([1, 1]));
  const e = tuple(b, []);
  const r = evaluate(b.build(conditionalIndexed(constantLiteral(b, Literal.scalar("s32", index)), [b0, b1], [e, e])), []);
  return r.elements[0]!.values() as bigint[];
}

test("StableHLO case.mlir: in-range index, negative and past-the-end indices run the last branch", () => {
  assert.deepEqual(caseProgram(0), [0n, 0n]);
  assert.deepEqual(caseProgram(1), [1n, 1n]);
  assert.deepEqual(caseProgram(-1), [1n, 1n]);
  assert.deepEqual(caseProgram(2), [1n, 1n]);
  assert.deepEqual(caseProgram(-2147483648), [1n, 1n]);
});

test("Conditional passes each branch its own operand", () => {
  const b = new XlaBuilder("ops");
  const sf = b.createSubBuilder("first");
  const first = sf.build(getTupleElement(parameter(sf, 0, tupleShape([scalarShape("s32"), scalarShape("s32")])), 0));
  const ss = b.createSubBuilder("scalar");
  const ident = ss.build(parameter(ss, 0, scalarShape("s32")));
  const pair = tuple(b, [constantLiteral(b, Literal.scalar("s32", 10)), constantLiteral(b, Literal.scalar("s32", 20))]);
  const alone = constantLiteral(b, Literal.scalar("s32", 30));
  const c = b.build(conditionalIndexed(parameter(b, 0, scalarShape("s32")), [first, ident], [pair, alone]));
  assert.deepEqual(evaluate(c, [Literal.scalar("s32", 0)]).values(), [10]);
  assert.deepEqual(evaluate(c, [Literal.scalar("s32", 1)]).values(), [30]);
});

test("Conditional shape errors: selector type, branch count, branch signatures", () => {
  const b = new XlaBuilder("bad");
  const unit = tupleShape([]);
  const b0 = constantBranch(b, "b0", unit, s64Vec([0]));
  const b1 = constantBranch(b, "b1", unit, s64Vec([1, 1]));
  const e = tuple(b, []);
  const idx = constantLiteral(b, Literal.scalar("s32", 0));
  assert.throws(() => conditionalIndexed(constantLiteral(b, Literal.scalar("s64", 0)), [b0], [e]), /pred\[\] predicate or an s32\[\] index/);
  assert.throws(() => conditionalIndexed(constantLiteral(b, Literal.scalar("pred", true)), [b0], [e]), /exactly 2/);
  assert.throws(() => conditionalIndexed(idx, [b0, b1], [e, e]), /must return/);
  assert.throws(() => conditionalIndexed(idx, [b0], [e, e]), /one operand per branch/);
  assert.throws(() => conditionalIndexed(idx, [b0], [idx]), /parameter 0/);
  assert.throws(() => conditionalIndexed(idx, [], []), /at least one/);
});

/** while (i < limit) { i += 1; sum += 1 }, XLA's one-tuple form. */
function countingLoop(limit: number, init: number): Computation {
  const b = new XlaBuilder("while");
  const stateShape = tupleShape([scalarShape("s64"), scalarShape("s64")]);
  const cb = b.createSubBuilder("cond");
  const cs = parameter(cb, 0, stateShape);
  const cond = cb.build(lt(getTupleElement(cs, 0), constantLiteral(cb, s64(limit))));
  const bb = b.createSubBuilder("body");
  const bs = parameter(bb, 0, stateShape);
  const inc = (x: ReturnType<typeof getTupleElement>) => add(x, constantLiteral(bb, s64(1)));
  const body = bb.build(tuple(bb, [inc(getTupleElement(bs, 0)), inc(getTupleElement(bs, 1))]));
  const initOp = tuple(b, [constantLiteral(b, s64(init)), constantLiteral(b, s64(0))]);
  return b.build(whileLoop(cond, body, initOp));
}

test("StableHLO while.mlir: counting to 10 gives (10, 10)", () => {
  const r = evaluate(countingLoop(10, 0), []);
  assert.deepEqual(r.elements.map((e) => e.values()), [[10n], [10n]]);
});

test("While whose condition is false at once returns init unchanged", () => {
  const r = evaluate(countingLoop(3, 5), []);
  assert.deepEqual(r.elements.map((e) => e.values()), [[5n], [0n]]);
});

test("While with several values (StableHLO form): params per value, body returns a tuple", () => {
  const b = new XlaBuilder("multi");
  const s = scalarShape("s64");
  const cb = b.createSubBuilder("cond");
  const ci = parameter(cb, 0, s);
  parameter(cb, 1, s);
  const cond = cb.build(lt(ci, constantLiteral(cb, s64(4))));
  const bb = b.createSubBuilder("body");
  const bi = parameter(bb, 0, s);
  const bsum = parameter(bb, 1, s);
  const body = bb.build(tuple(bb, [add(bi, constantLiteral(bb, s64(1))), add(bsum, bi)]));
  const c = b.build(whileLoop(cond, body, [constantLiteral(b, s64(0)), constantLiteral(b, s64(0))]));
  verifyComputation(c);
  const r = evaluate(c, []);
  assert.deepEqual(r.elements.map((e) => e.values()), [[4n], [6n]]); // 0+1+2+3
});

test("seed 000 While example: 1000 iterations adding a constant vector", () => {
  const b = new XlaBuilder("train");
  const vec = Literal.fromValues("f32", [10], Array(10).fill(0.5));
  const st = tupleShape([scalarShape("s32"), vec.shape]);
  const cb = b.createSubBuilder("cond");
  const cs = parameter(cb, 0, st);
  const cond = cb.build(lt(getTupleElement(cs, 0), constantLiteral(cb, Literal.scalar("s32", 1000))));
  const bb = b.createSubBuilder("body");
  const bs = parameter(bb, 0, st);
  const body = bb.build(tuple(bb, [
    add(getTupleElement(bs, 0), constantLiteral(bb, Literal.scalar("s32", 1))),
    add(getTupleElement(bs, 1), constantLiteral(bb, vec)),
  ]));
  const init = tuple(b, [constantLiteral(b, Literal.scalar("s32", 0)), constantLiteral(b, Literal.fromValues("f32", [10], Array(10).fill(0)))]);
  const r = evaluate(b.build(whileLoop(cond, body, init)), []);
  assert.deepEqual(r.elements[0]!.values(), [1000]);
  assert.deepEqual(r.elements[1]!.toNumbers(), Array(10).fill(500));
});

test("While shape errors: condition must return pred[], body must return the state", () => {
  const b = new XlaBuilder("bad");
  const s = scalarShape("s64");
  const cb = b.createSubBuilder("cond");
  const cond = cb.build(parameter(cb, 0, s));
  const bb = b.createSubBuilder("body");
  const body = bb.build(parameter(bb, 0, s));
  const pb = b.createSubBuilder("pcond");
  parameter(pb, 0, s);
  const goodCond = pb.build(constantLiteral(pb, Literal.scalar("pred", false)));
  const wb = b.createSubBuilder("wrong");
  parameter(wb, 0, s);
  const wrongBody = wb.build(constantLiteral(wb, Literal.scalar("s32", 0)));
  const init = constantLiteral(b, s64(0));
  assert.throws(() => whileLoop(cond, body, init), /condition: .*must return pred\[\]/);
  assert.throws(() => whileLoop(goodCond, wrongBody, init), /body: .*must return s64\[\]/);
  assert.throws(() => whileLoop(goodCond, body, constantLiteral(b, Literal.scalar("s32", 0))), /parameter 0/);
  assert.deepEqual(evaluate(b.build(whileLoop(goodCond, body, init)), []).values(), [0n]);
});

test("CustomCall: target gets operands, shape and backend config; result shape is checked", () => {
  const b = new XlaBuilder("cc");
  const x = parameter(b, 0, arrayShape("f32", [2]));
  const out = customCall(b, "my.scale", [x], arrayShape("f32", [2]), { backendConfig: "3", hasSideEffect: true });
  const c = b.build(out);
  const targets = testTargets().register("my.scale", ([v], shape, config) => {
    assert.deepEqual(shape, arrayShape("f32", [2]));
    return Literal.fromValues("f32", [2], v!.toNumbers().map((e) => e * Number(config)));
  });
  assert.deepEqual(evaluate(c, [Literal.fromValues("f32", [2], [1, -2])], { customCalls: targets }).toNumbers(), [3, -6]);
  assert.throws(() => evaluate(c, [Literal.fromValues("f32", [2], [1, 2])]), (e: unknown) =>
    e instanceof ExecutionError && /no target named "my.scale"/.test(e.message));
  const wrong = testTargets().register("my.scale", () => Literal.fromValues("f32", [3], [1, 2, 3]));
  assert.throws(() => evaluate(c, [Literal.fromValues("f32", [2], [1, 2])], { customCalls: wrong }), /returned f32\[3\], the op declares f32\[2\]/);
  assert.throws(() => testTargets().register("test.add", () => Literal.token()), /already registered/);
  assert.throws(() => customCall(new XlaBuilder("e"), "", [], TOKEN_SHAPE), /must not be empty/);
});

test("CustomCall targets can run the op's called computations", () => {
  const b = new XlaBuilder("cc");
  const sb = b.createSubBuilder("twice");
  const p = parameter(sb, 0, scalarShape("s64"));
  const twice = sb.build(customCall(sb, "test.add", [p, p], scalarShape("s64")));
  const out = customCall(b, "apply", [constantLiteral(b, s64(21))], scalarShape("s64"), { calledComputations: [twice] });
  const targets = testTargets().register("apply", (ops, _s, _c, ctx) => ctx.call(ctx.calledComputations[0]!, ops));
  assert.deepEqual(evaluate(b.build(out), [], { customCalls: targets }).values(), [42n]);
});

test("StableHLO optimization_barrier: values pass through, one or several", () => {
  const b = new XlaBuilder("ob");
  const zero = constantLiteral(b, Literal.scalar("f32", 0));
  const one = constantLiteral(b, Literal.scalar("f32", 1));
  const single = optimizationBarrier(tuple(b, [zero, one]));
  const many = b.addInstruction("optimizationBarrier", [zero, one], {});
  assert.deepEqual(many.shape, single.shape);
  const r = evaluate(b.build(tuple(b, [single, many])), []);
  assert.deepEqual(r.elements.map((t) => t.elements.map((e) => e.toNumbers()[0])), [[0, 1], [0, 1]]);
});

test("StableHLO after_all: tokens join; AddDependency passes its value through", () => {
  const b = new XlaBuilder("aa");
  const t0 = afterAll(b, []);
  const t1 = createToken(b);
  const joined = afterAll(b, [t0, t1]);
  assert.deepEqual(joined.shape, TOKEN_SHAPE);
  const v = addDependency(constantLiteral(b, Literal.fromValues("s32", [2], [4, 5])), joined);
  assert.throws(() => afterAll(b, [v]), /tokens\[0\]: must be a token/);
  assert.throws(() => addDependency(v, v), /token: must be a token/);
  assert.deepEqual(evaluate(b.build(v), []).toNumbers(), [4, 5]);
});

test("property: every control result has the inferred shape", () => {
  for (let n = 0; n < 5; n++) {
    const b = new XlaBuilder(`p${n}`);
    const parts = Array.from({ length: n }, (_, i) => constantLiteral(b, Literal.fromValues("s32", [i], Array(i).fill(i))));
    const t = tuple(b, [...parts, createToken(b)]);
    const c = b.build(optimizationBarrier(t));
    assert.deepEqual(evaluate(c, []).shape, c.root.shape);
  }
});
