// Parameter donation (compile's `donate`, the module's buffer_donor and
// input_output_alias): results against the interpreter, the donated device arrays
// invalid afterwards, results living in the donated buffers, and the peak memory lower
// than without donation.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, constantR0, dot, dotGeneral, evaluate, max, mul, parameter, scalarShape, sub, tanh, tuple,
  reduce, dynamicUpdateSlice, type Computation,
} from "../../src/index.js";
import { compile, compileSync, WasmDevice } from "../../src/compiler/index.js";
import { HloModule } from "../../src/ir/computation.js";
import { CompileError, ExecutionError } from "../../src/types/errors.js";
import { rng } from "../support/prng.js";
import { elementCount } from "../../src/types/shape.js";

const random = rng(77);

function randomArgs(c: Computation): Literal[] {
  return c.parameters.map((p) => {
    const s = p.shape.kind === "array" ? p.shape : arrayShape("f32", []);
    const n = elementCount(s.dimensions);
    return Literal.fromValues(s.elementType, s.dimensions, Array.from({ length: n }, () => random() - 0.5));
  });
}

function assertClose(got: Literal, want: Literal, tol = 1e-5): void {
  const leaves = (l: Literal): Literal[] => (l.shape.kind === "tuple" ? l.elements.flatMap(leaves) : [l]);
  const g = leaves(got), w = leaves(want);
  assert.equal(g.length, w.length);
  w.forEach((x, j) => {
    const a = g[j]!.toNumbers(), e = x.toNumbers();
    e.forEach((v, i) => assert.ok(Math.abs(a[i]! - v) <= tol * Math.max(1, Math.abs(v)), `result ${j} element ${i}: ${a[i]} vs ${v}`));
  });
}

/** One SGD step of a linear layer with a relu: returns (loss, w - lr·dw, b - lr·db). */
function sgdStep(batch: number, inputs: number, outputs: number): Computation {
  const b = new XlaBuilder("sgd_step");
  const x = parameter(b, 0, arrayShape("f32", [batch, inputs]), "x");
  const target = parameter(b, 1, arrayShape("f32", [batch, outputs]), "target");
  const w = parameter(b, 2, arrayShape("f32", [inputs, outputs]), "w");
  const bias = parameter(b, 3, arrayShape("f32", [outputs]), "bias");
  const z = add(dot(x, w), bias, [1]);
  const y = max(z, constantR0(b, "f32", 0));
  const err = sub(y, target);
  const sum = b.createSubBuilder("sum");
  const adder = sum.build(add(parameter(sum, 0, scalarShape("f32")), parameter(sum, 1, scalarShape("f32"))));
  const loss = reduce(mul(err, err), constantR0(b, "f32", 0), adder, [0, 1]);
  const dz = mul(err, constantR0(b, "f32", 2 / batch));
  const dw = dotGeneral(x, dz, { lhsContractingDimensions: [0], rhsContractingDimensions: [0] });
  const db = reduce(dz, constantR0(b, "f32", 0), adder, [0]);
  const lr = constantR0(b, "f32", 0.05);
  return b.build(tuple(b, [loss, sub(w, mul(dw, lr)), sub(bias, mul(db, lr))]));
}

test("a training step with its weights donated: the updated weights are written over the old ones, results match the interpreter, the peak drops", async () => {
  const c = sgdStep(32, 200, 96);
  const device = new WasmDevice();
  const plain = await compile(c, { device });
  const donated = await compile(c, { device, donate: [2, 3] });
  const args = randomArgs(c);
  const want = evaluate(c, args);
  assertClose(donated.run(args), want);
  // run() donates its own copies: the caller's literals are untouched, a second run agrees.
  assertClose(donated.run(args), want);

  assert.deepEqual(donated.stats.donation.map((d) => [d.parameterLeaf, d.output]), [[2, 1], [3, 2]]);
  const weightBytes = 200 * 96 * 4 + 96 * 4;
  assert.ok(donated.stats.peakBytes <= plain.stats.peakBytes - weightBytes, `peak ${donated.stats.peakBytes} vs ${plain.stats.peakBytes}`);
  assert.match(donated.dump(), /buffer_donor=\{ \(2, \{\}\), \(3, \{\}\) \}/);
  assert.match(donated.dump(), /donated parameter2: holds output1/);

  const inputs = args.map((a) => device.bufferFromLiteral(a));
  const w = inputs[2]!;
  const results = donated.execute(inputs);
  assert.equal(results[1]!.offset, w.offset, "the new weights live in the donated buffer");
  assertClose(Literal.tuple(results.map((r) => r.toLiteral())), want);
  // The donated arrays are invalid; the others are the caller's as before.
  assert.ok(w.isDeleted && inputs[3]!.isDeleted && !inputs[0]!.isDeleted && !inputs[1]!.isDeleted);
  assert.throws(() => w.toLiteral(), (e: unknown) => e instanceof ExecutionError && /donated to an execution of sgd_step/.test(e.message));
  assert.throws(() => donated.execute(inputs), ExecutionError);
  // The next step runs on the previous step's results, as a training loop does.
  const nextWant = evaluate(c, [args[0]!, args[1]!, results[1]!.toLiteral(), results[2]!.toLiteral()]);
  const next = donated.execute([inputs[0]!, inputs[1]!, results[1]!, results[2]!]);
  assertClose(Literal.tuple(next.map((r) => r.toLiteral())), nextWant);
  assert.ok(results[1]!.isDeleted && next[1]!.offset === w.offset);
  for (const r of [...next, results[0]!, inputs[0]!, inputs[1]!]) r.delete();
});

test("a donated parameter with no result of its shape holds temporaries once it is dead", () => {
  const b = new XlaBuilder("temporaries_in_donor");
  const p = parameter(b, 0, arrayShape("f32", [48, 48]));
  const a = tanh(p);
  const d1 = dot(a, a);
  const d2 = dot(d1, d1);
  const sum = b.createSubBuilder("sum");
  const adder = sum.build(add(parameter(sum, 0, scalarShape("f32")), parameter(sum, 1, scalarShape("f32"))));
  const c = b.build(reduce(d2, constantR0(b, "f32", 0), adder, [0, 1]));
  const device = new WasmDevice();
  const plain = compileSync(c, { device });
  const donated = compileSync(c, { device, donate: [0] });
  assert.ok(donated.stats.donation[0]!.temporaries >= 1, donated.dump());
  assert.ok(donated.stats.arenaBytes < plain.stats.arenaBytes, `${donated.stats.arenaBytes} vs ${plain.stats.arenaBytes}`);
  assert.match(donated.dump(), /temp\d+@parameter0\+/);
  const args = randomArgs(c);
  assertClose(donated.run(args), evaluate(c, args), 1e-4);
  const x = device.bufferFromLiteral(args[0]!);
  const [r] = donated.execute([x]);
  assertClose(r!.toLiteral(), evaluate(c, args), 1e-4);
  assert.ok(x.isDeleted);
  r!.delete();
});

test("a donated array passed twice is refused; donate names a parameter that exists", () => {
  const b = new XlaBuilder("twice");
  const x = parameter(b, 0, arrayShape("f32", [8]));
  const y = parameter(b, 1, arrayShape("f32", [8]));
  const c = b.build(add(x, y));
  const device = new WasmDevice();
  const exe = compileSync(c, { device, donate: [0] });
  const a = device.bufferFromLiteral(Literal.fromValues("f32", [8], [1, 2, 3, 4, 5, 6, 7, 8]));
  assert.throws(() => exe.execute([a, a]), (e: unknown) => e instanceof ExecutionError && /donated/.test(e.message));
  assert.ok(!a.isDeleted);
  a.delete();
  assert.throws(() => compileSync(c, { device, donate: [2] }), CompileError);
});

test("input_output_alias: an output computed while its parameter is still read goes through the arena and is copied over it at the end; an impossible must-alias is a CompileError", () => {
  const b = new XlaBuilder("late_reader");
  const p = parameter(b, 0, arrayShape("f32", [64]));
  const q = parameter(b, 1, arrayShape("f32", [64]));
  const doubled = mul(p, constantR0(b, "f32", 2));
  // `doubled` aliases p, but p is read again (through q's product) after it is computed.
  const later = dot(add(doubled, q), p);
  const c = b.build(tuple(b, [doubled, later]));
  const module = new HloModule(c.name, c);
  module.config = { ...module.config, inputOutputAlias: [{ output: [0], parameter: 0, parameterIndex: [], kind: "must-alias" }] };
  const device = new WasmDevice();
  const exe = compileSync(module, { device });
  const args = randomArgs(c);
  const inputs = args.map((a) => device.bufferFromLiteral(a));
  const results = exe.execute(inputs);
  assert.equal(results[0]!.offset, inputs[0]!.offset);
  assertClose(Literal.tuple(results.map((r) => r.toLiteral())), evaluate(c, args));
  for (const r of [...results, inputs[1]!]) r.delete();

  // The result returns p unchanged as its second element: p cannot also hold the first.
  const b2 = new XlaBuilder("returns_it");
  const p2 = parameter(b2, 0, arrayShape("f32", [4]));
  const c2 = b2.build(tuple(b2, [mul(p2, p2), p2]));
  const m2 = new HloModule(c2.name, c2);
  m2.config = { ...m2.config, inputOutputAlias: [{ output: [0], parameter: 0, parameterIndex: [], kind: "must-alias" }] };
  assert.throws(() => compileSync(m2, { device }), (e: unknown) => e instanceof CompileError && /must live in parameter leaf 0/.test(e.message));
  // As may-alias it compiles, without the alias.
  const m3 = new HloModule(c2.name, c2);
  m3.config = { ...m3.config, inputOutputAlias: [{ output: [0], parameter: 0, parameterIndex: [], kind: "may-alias" }] };
  const exe3 = compileSync(m3, { device });
  assert.deepEqual(exe3.stats.donation.map((d) => d.output), [undefined]);
  const a3 = [Literal.fromValues("f32", [4], [1, -2, 3, 0.5])];
  assertClose(exe3.run(a3), evaluate(c2, a3));
});

test("donated parameters returned as they are, or updated element for element, need no copy and no new buffer", () => {
  const b = new XlaBuilder("swap_and_scale");
  const p0 = parameter(b, 0, arrayShape("f32", [16]));
  const p1 = parameter(b, 1, arrayShape("f32", [16]));
  const c = b.build(tuple(b, [p1, mul(p0, constantR0(b, "f32", 2)), p0]));
  const device = new WasmDevice();
  const exe = compileSync(c, { device, donate: [0, 1] });
  // p0 is returned as it was (output 2), so the doubled value cannot overwrite it; p1 is output 0.
  assert.deepEqual(exe.stats.donation.map((d) => [d.parameterLeaf, d.output]), [[0, 2], [1, 0]]);
  assert.doesNotMatch(exe.dump(), /copy parameter/);
  const args = randomArgs(c);
  const inputs = args.map((a) => device.bufferFromLiteral(a));
  const results = exe.execute(inputs);
  assert.deepEqual([results[0]!.offset, results[2]!.offset], [inputs[1]!.offset, inputs[0]!.offset]);
  assertClose(Literal.tuple(results.map((r) => r.toLiteral())), evaluate(c, args));
  for (const r of results) r.delete();

  const b2 = new XlaBuilder("scale_in_place");
  const q0 = parameter(b2, 0, arrayShape("f32", [16]));
  const q1 = parameter(b2, 1, arrayShape("f32", [16]));
  const c2 = b2.build(tuple(b2, [q1, mul(q0, constantR0(b2, "f32", 2))]));
  const exe2 = compileSync(c2, { device, donate: [0, 1] });
  assert.deepEqual(exe2.stats.donation.map((d) => [d.parameterLeaf, d.output]), [[0, 1], [1, 0]]);
  assert.doesNotMatch(exe2.dump(), /\/\/   copy /);
  const args2 = randomArgs(c2);
  assertClose(exe2.run(args2), evaluate(c2, args2));
});

test("a decode step's donated KV cache: the new row is written into the cache's own buffer (no copy of the cache), and steps fed their predecessor's cache match the interpreter", () => {
  const b = new XlaBuilder("kv_decode");
  const cache = parameter(b, 0, arrayShape("f32", [16, 8]), "cache");
  const row = parameter(b, 1, arrayShape("f32", [1, 8]), "row");
  const at = parameter(b, 2, scalarShape("s32"), "at");
  const updated = dynamicUpdateSlice(cache, row, [at, constantR0(b, "s32", 0)]);
  // scores[0, j] = row · updated[j]: the attention's q·Kᵀ reads the updated cache.
  const scores = dotGeneral(row, updated, { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [1], rhsContractingDimensions: [1] });
  const c = b.build(tuple(b, [scores, updated]));
  const device = new WasmDevice();
  const exe = compileSync(c, { device, donate: [0] });
  assert.deepEqual(exe.stats.donation.map((d) => [d.parameterLeaf, d.output]), [[0, 1]]);
  assert.doesNotMatch(exe.dump(), /\/\/   copy /);
  let args = randomArgs(c);
  let cacheArray = device.bufferFromLiteral(args[0]!);
  const offset = cacheArray.offset;
  for (const pos of [5, 6, 15]) {
    args = [args[0]!, randomArgs(c)[1]!, Literal.scalar("s32", pos)];
    const want = evaluate(c, args);
    const [s, next] = exe.execute([cacheArray, device.bufferFromLiteral(args[1]!), device.bufferFromLiteral(args[2]!)]);
    assert.equal(next!.offset, offset, "the updated cache lives in the donated buffer");
    assert.ok(cacheArray.isDeleted);
    const [wantScores, wantCache] = want.elements;
    assertClose(s!.toLiteral(), wantScores!);
    // Exactly: every row but pos keeps the previous step's value; row pos holds the new one.
    assert.deepEqual(next!.toLiteral().toNumbers(), wantCache!.toNumbers());
    s!.delete();
    args[0] = next!.toLiteral();
    cacheArray = next!;
  }
  cacheArray.delete();
});
