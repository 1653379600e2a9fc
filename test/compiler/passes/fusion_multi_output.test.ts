// Multi-output fusion decisions: softmax's exp is stored from its sum's loop (three
// kernels, not four), layer norm's two sibling reductions share one loop, and merges
// that would need a value both before and after the merged kernel are refused. Every
// program is also compiled and compared with the interpreter.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, arrayShape, broadcastInDim, constantR0, div, evaluate, exp, Literal, log, max, mul, parameter, reduce, rsqrt, scalarShape, sub,
  XlaBuilder, type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { compile } from "../../../src/compiler/index.js";
import { separateFusionsPipeline } from "../../support/pipelines.js";
import { runPasses } from "../../../src/passes/pass.js";
import { HloModule, type Instruction } from "../../../src/ir/computation.js";
import { rng } from "../../support/prng.js";

function reducer(b: XlaBuilder, t: ElementType, op: (a: XlaOp, b: XlaOp) => XlaOp): Computation {
  const s = b.createSubBuilder("r");
  return s.build(op(parameter(s, 0, scalarShape(t)), parameter(s, 1, scalarShape(t))));
}

function rowSum(x: XlaOp): XlaOp {
  return reduce(x, constantR0(x.builder, "f32", 0), reducer(x.builder, "f32", add), [1]);
}

function rowMax(x: XlaOp): XlaOp {
  return reduce(x, constantR0(x.builder, "f32", -Infinity), reducer(x.builder, "f32", max), [1]);
}

const R = 6, C = 37;
const rows = (v: XlaOp): XlaOp => broadcastInDim(v, [R, C], [0]);

function softmax(): Computation {
  const b = new XlaBuilder("softmax");
  const x = parameter(b, 0, arrayShape("f32", [R, C]), "x");
  const e = exp(sub(x, rows(rowMax(x))));
  return b.build(div(e, rows(rowSum(e))));
}

function layerNorm(): Computation {
  const b = new XlaBuilder("layer_norm");
  const x = parameter(b, 0, arrayShape("f32", [R, C]), "x");
  const n = constantR0(b, "f32", C);
  const mean = div(rowSum(x), broadcastInDim(n, [R], []));
  const meanSq = div(rowSum(mul(x, x)), broadcastInDim(n, [R], []));
  const variance = sub(meanSq, mul(mean, mean));
  const inv = rsqrt(add(variance, broadcastInDim(constantR0(b, "f32", 1e-5), [R], [])));
  return b.build(mul(sub(x, rows(mean)), rows(inv)));
}

/** The entry's fusions after the default pipeline, with the pass log. */
function fused(c: Computation): { fusions: Instruction<"fusion">[]; log: string[] } {
  const { module, log } = runPasses(new HloModule(c.name, c), separateFusionsPipeline(), {});
  const fusions = module.entry.instructions.filter((i): i is Instruction<"fusion"> => i.opcode === "fusion");
  return { fusions, log: log.filter((l) => l.pass === "fusion").map((l) => l.message) };
}

function rootOpcodes(f: Instruction<"fusion">): string[] {
  const root = f.attrs.calledComputation.root;
  return root.opcode === "tuple" ? root.operands.map((o) => o.opcode) : [root.opcode];
}

function randomInput(seed: number): Literal {
  const next = rng(seed);
  return Literal.fromValues("f32", [R, C], Array.from({ length: R * C }, () => next() * 8 - 4));
}

/** Compiles, compares with the interpreter, and returns the number of kernels. */
async function assertMatchesInterpreter(c: Computation, seed: number): Promise<number> {
  const exe = await compile(c, { passes: separateFusionsPipeline() });
  const x = randomInput(seed);
  const got = exe.run([x]).toNumbers();
  const want = evaluate(c, [x]).toNumbers();
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]!) <= 2e-5 * Math.max(1, Math.abs(want[i]!)), `${c.name} element ${i}: ${g} vs ${want[i]}`));
  const kernels = exe.stats.kernels;
  assert.equal(exe.stats.interpreted.length, 0, "every step is a compiled kernel");
  exe.delete();
  return kernels;
}

test("softmax: exp(x - max) is stored and summed in one kernel, so softmax is three kernels", async () => {
  const { fusions, log } = fused(softmax());
  assert.equal(fusions.length, 3);
  assert.deepEqual(rootOpcodes(fusions[1]!), ["reduce", "exp"]);
  assert.ok(log.some((l) => /multi-output: .* in one fusion \(.* reduces .*, which is also stored\)/.test(l)), log.join("\n"));
  assert.equal(await assertMatchesInterpreter(softmax(), 1), 3);
});

test("layer norm: the mean and the mean of squares are two accumulators of one loop", async () => {
  const { fusions, log } = fused(layerNorm());
  const input = fusions.filter((f) => f.attrs.kind === "input");
  assert.equal(input.length, 1);
  assert.deepEqual(rootOpcodes(input[0]!), ["reduce", "reduce"]);
  assert.ok(log.some((l) => /multi-output: .* in one fusion \(both read x\)/.test(l)), log.join("\n"));
  assert.equal(await assertMatchesInterpreter(layerNorm(), 2), 2);
});

test("log-softmax and a reduction of a reduction's input keep results equal to the interpreter's", async () => {
  const b = new XlaBuilder("log_softmax");
  const x = parameter(b, 0, arrayShape("f32", [R, C]), "x");
  const shifted = sub(x, rows(rowMax(x)));
  const e = exp(shifted);
  const c = b.build(sub(shifted, rows(log(rowSum(e)))));
  await assertMatchesInterpreter(c, 3);
});

test("a reduction whose input needs the other reduction is not merged with it (no cycle)", async () => {
  // s2 reduces x - broadcast(s1): s1 and s2 read x, but s2 needs s1 first.
  const b = new XlaBuilder("dependent");
  const x = parameter(b, 0, arrayShape("f32", [R, C]), "x");
  const s1 = rowSum(x);
  const s2 = rowSum(mul(sub(x, rows(s1)), sub(x, rows(s1))));
  const c = b.build(add(s1, s2));
  const { fusions, log } = fused(c);
  assert.equal(fusions.filter((f) => f.attrs.kind === "input").length, 2);
  assert.ok(log.some((l) => /not merging/.test(l)), log.join("\n"));
  await assertMatchesInterpreter(c, 4);
});

test("an elementwise value read by a column reduction is stored from its loop too", async () => {
  const b = new XlaBuilder("column");
  const x = parameter(b, 0, arrayShape("f32", [R, C]), "x");
  const e = exp(x);
  const colSum = reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [0]);
  const c = b.build(div(e, broadcastInDim(colSum, [R, C], [1])));
  const { fusions } = fused(c);
  assert.deepEqual(fusions.map(rootOpcodes), [["reduce", "exp"], ["divide"]]);
  assert.equal(await assertMatchesInterpreter(c, 5), 2);
});

test("a reduction over non-adjacent dimensions does not take a full-shape output", async () => {
  const b = new XlaBuilder("gap");
  const x = parameter(b, 0, arrayShape("f32", [3, R, C]), "x");
  const e = exp(x);
  const s = reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [0, 2]);
  const c = b.build(div(e, broadcastInDim(s, [3, R, C], [1])));
  const { fusions, log } = fused(c);
  assert.equal(fusions.length, 3);
  assert.ok(log.some((l) => /adjacent reduced dimensions/.test(l)), log.join("\n"));
  const exe = await compile(c);
  const next = rng(6);
  const arg = Literal.fromValues("f32", [3, R, C], Array.from({ length: 3 * R * C }, () => next() * 8 - 4));
  const got = exe.run([arg]).toNumbers();
  evaluate(c, [arg]).toNumbers().forEach((w, i) => assert.ok(Math.abs(got[i]! - w) <= 2e-5 * Math.max(1, Math.abs(w)), `element ${i}`));
  exe.delete();
});
