// compile(): whole programs on the WebAssembly backend, each checked against the
// reference interpreter on the same inputs (bit for bit where the kernels compute
// exactly what the interpreter does, within a few ulps for transcendentals).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, constantR0, div, dot, dotGeneral, dynamicUpdateSlice, evaluate, exp, getTupleElement, max, mul, neg, parameter, reduce,
  parseHlo, parseStableHlo, reshape, rngUniform, scalarShape, sub, tanh, tuple, type Computation, type ElementType, type XlaOp,
} from "../../src/index.js";
import { compile, WasmDevice } from "../../src/compiler/index.js";
import { ExecutionError } from "../../src/types/errors.js";
import { rng } from "../support/prng.js";
import { separateFusionsPipeline } from "../support/pipelines.js";
import { elementCount } from "../../src/types/shape.js";

function reducer(b: XlaBuilder, name: string, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const sb = b.createSubBuilder(name);
  return sb.build(op(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

function randomLiteral(next: () => number, t: ElementType, dims: number[]): Literal {
  const n = elementCount(dims);
  const flat = Array.from({ length: n }, () => (t === "f32" || t === "f64" ? next() * 4 - 2 : Math.floor(next() * 200 - 100)));
  return Literal.fromValues(t, dims, flat);
}

/** Max distance in units of f32 precision relative to the magnitude, so that transcendental approximations pass and real bugs do not. */
function assertClose(actual: Literal, expected: Literal, relTol = 1e-6): void {
  const a = actual.toNumbers();
  const e = expected.toNumbers();
  assert.equal(a.length, e.length);
  for (let i = 0; i < a.length; i++) {
    const tol = relTol * Math.max(1, Math.abs(e[i]!));
    assert.ok(Math.abs(a[i]! - e[i]!) <= tol || (Number.isNaN(a[i]) && Number.isNaN(e[i])), `element ${i}: ${a[i]} vs ${e[i]}`);
  }
}

function softmax(rows: number, cols: number): Computation {
  const b = new XlaBuilder("softmax");
  const x = parameter(b, 0, arrayShape("f32", [rows, cols]), "x");
  const m = reduce(x, constantR0(b, "f32", -Infinity), reducer(b, "max", "f32", max), [1]);
  const e = exp(sub(x, m, [0]));
  const s = reduce(e, constantR0(b, "f32", 0), reducer(b, "sum", "f32", add), [1]);
  return b.build(div(e, s, [0]));
}

test("softmax compiles to one row pipeline (max; exp stored and summed; divide: exp is computed once) and matches the interpreter", async () => {
  const c = softmax(7, 33);
  const exe = await compile(c);
  // Row fusion: the max, the exp-and-sum and the divide are stages of one kernel's pass over each row.
  assert.equal(exe.stats.kernels, 1);
  assert.deepEqual(exe.program.steps.map((s) => s.kind), ["kernel"]);
  const x = randomLiteral(rng(1), "f32", [7, 33]);
  assertClose(exe.run([x]), evaluate(c, [x]), 4e-7);
  assert.match(exe.dump(), /kind=kInput/);
  exe.delete();
});

test("an elementwise chain on integers is bit-exact, and a chain on floats matches", async () => {
  const b = new XlaBuilder("chain");
  const x = parameter(b, 0, arrayShape("s32", [5, 9]), "x");
  const y = parameter(b, 1, arrayShape("s32", [9]), "y");
  const c = b.build(mul(add(x, y, [1]), sub(x, constantR0(b, "s32", 3), [])));
  const exe = await compile(c);
  const args = [randomLiteral(rng(2), "s32", [5, 9]), randomLiteral(rng(3), "s32", [9])];
  assert.deepEqual(exe.run(args).toNumbers(), evaluate(c, args).toNumbers());
  assert.equal(exe.stats.interpreted.length, 0, "the whole chain is one compiled kernel");

  const fb = new XlaBuilder("fchain");
  const a = parameter(fb, 0, arrayShape("f32", [1000]), "a");
  const bb = parameter(fb, 1, arrayShape("f32", [1000]), "b");
  const cc = parameter(fb, 2, arrayShape("f32", [1000]), "c");
  const fc = fb.build(tanh(add(mul(a, bb), cc)));
  const fexe = await compile(fc);
  const fargs = [0, 1, 2].map((s) => randomLiteral(rng(10 + s), "f32", [1000]));
  assertClose(fexe.run(fargs), evaluate(fc, fargs), 1e-6);
});

test("tuple results, a parameter returned as a result, a value returned twice, and an interpreted dot", async () => {
  const b = new XlaBuilder("tuples");
  const x = parameter(b, 0, arrayShape("f32", [3, 4]), "x");
  const w = parameter(b, 1, arrayShape("f32", [4, 2]), "w");
  const h = neg(dot(x, w));
  const t = tuple(b, [h, x, h]);
  const c = b.build(tuple(b, [getTupleElement(t, 0), getTupleElement(t, 1), getTupleElement(t, 2)]));
  const exe = await compile(c);
  const args = [randomLiteral(rng(4), "f32", [3, 4]), randomLiteral(rng(5), "f32", [4, 2])];
  const got = exe.run(args);
  const want = evaluate(c, args);
  for (let i = 0; i < 3; i++) assertClose(got.elements[i]!, want.elements[i]!, 1e-6);
});

test("stateful rng in interpreted steps advances across the execution (two draws differ)", async () => {
  const b = new XlaBuilder("draws");
  const s = arrayShape("f32", [8]);
  const lo = constantR0(b, "f32", 0);
  const hi = constantR0(b, "f32", 1);
  const c = b.build(tuple(b, [rngUniform(lo, hi, s), rngUniform(lo, hi, s)]));
  const exe = await compile(c);
  const got = exe.run([]);
  assert.notDeepEqual(got.elements[0]!.toNumbers(), got.elements[1]!.toNumbers());
  assert.deepEqual(got.elements.map((e) => e.toNumbers()), evaluate(c, []).elements.map((e) => e.toNumbers()));
});

test("device arrays: execute without copies, errors for deleted and mismatched arguments", async () => {
  const device = new WasmDevice();
  const b = new XlaBuilder("scale");
  const x = parameter(b, 0, arrayShape("f32", [4]), "x");
  const c = b.build(mul(x, constantR0(b, "f32", 2), []));
  const exe = await compile(c, { device });
  const arg = device.bufferFromLiteral(Literal.from("f32", [1, 2, 3, 4]));
  const [out] = exe.execute([arg]);
  assert.deepEqual(out!.toLiteral().toNumbers(), [2, 4, 6, 8]);
  const before = device.memory.bytesInUse;
  out!.delete();
  assert.ok(device.memory.bytesInUse < before);
  assert.throws(() => out!.toLiteral(), ExecutionError);
  assert.throws(() => exe.execute([device.bufferFromLiteral(Literal.from("f32", [1, 2]))]), /argument 0 has shape f32\[2\]/);
  arg.delete();
  assert.throws(() => exe.execute([arg]), /deleted/);
  exe.delete();
  assert.throws(() => exe.execute([device.bufferFromLiteral(Literal.from("f32", [1, 2, 3, 4]))]), /executable was deleted/);
});

test("buffer assignment reuses arena bytes of dead temporaries and writes in place", async () => {
  // A chain of four materialized reductions and broadcasts: the arena holds far less than all temporaries.
  const b = new XlaBuilder("chain");
  let v = parameter(b, 0, arrayShape("f32", [64, 64]), "x");
  const sum = reducer(b, "sum", "f32", add);
  for (let i = 0; i < 4; i++) {
    const r = reduce(v, constantR0(b, "f32", 0), sum, [1]);
    v = exp(sub(v, r, [0]));
  }
  const c = b.build(v);
  // One thread: the bound counts one thread's scratch (the row group's block buffers here).
  // Separate fusions: with row fusion the chain is one kernel and has no temporaries.
  const exe = await compile(c, { device: new WasmDevice(), passes: separateFusionsPipeline() });
  const x = randomLiteral(rng(6), "f32", [64, 64]);
  assertClose(exe.run([x]), evaluate(c, [x]), 1e-5);
  const temps = exe.program.temps.length;
  assert.ok(temps >= 4, `expected at least 4 temporaries, got ${temps}`);
  assert.ok(exe.stats.arenaBytes <= 2 * 64 * 64 * 4 + 4 * 64 * 4 + 1024, `arena ${exe.stats.arenaBytes} bytes`);
  assert.ok(exe.stats.peakBytes <= 1.25 * exe.stats.liveBytesBound, `peak ${exe.stats.peakBytes} vs bound ${exe.stats.liveBytesBound}`);
});

test("two threads give the same results as one: a large fusion and a GEMM split across the device's pool", async () => {
  const two = await WasmDevice.create({ threads: 2 });
  const one = new WasmDevice();
  try {
    const b = new XlaBuilder("mlp_layer");
    const x = parameter(b, 0, arrayShape("f32", [256, 256]), "x");
    const w = parameter(b, 1, arrayShape("f32", [256, 256]), "w");
    const c = b.build(tanh(mul(dot(x, w), constantR0(b, "f32", 0.01), [])));
    const args = [randomLiteral(rng(7), "f32", [256, 256]), randomLiteral(rng(8), "f32", [256, 256])];
    const pooled = await compile(c, { device: two });
    const single = await compile(c, { device: one });
    assert.equal(two.threads, 2);
    assert.equal(pooled.stats.interpreted.length, 0);
    assert.deepEqual(pooled.run(args).toNumbers(), single.run(args).toNumbers(), "threads split the work, not the arithmetic");
    assertClose(pooled.run(args), evaluate(c, args), 2e-5);
  } finally {
    await two.close();
  }
});

test("the same program compiles once per device: a second compile reuses the plan and its kernels", async () => {
  const device = new WasmDevice();
  const build = (): Computation => softmax(5, 6);
  const first = await compile(build(), { device });
  const second = await compile(build(), { device });
  assert.equal(second.program, first.program);
  const other = await compile(build(), { device: new WasmDevice() });
  assert.notEqual(other.program, first.program);
  const x = randomLiteral(rng(9), "f32", [5, 6]);
  assert.deepEqual(second.run([x]).toNumbers(), first.run([x]).toNumbers());
});

test("dot_general in any dimension order runs as GEMM after dot canonicalization", async () => {
  const cases: { lhs: number[]; rhs: number[]; dims: Parameters<typeof dotGeneral>[2] }[] = [
    // attention scores 'bhqd,bhkd->bhqk'
    { lhs: [2, 3, 5, 4], rhs: [2, 3, 6, 4], dims: { lhsBatchDimensions: [0, 1], rhsBatchDimensions: [0, 1], lhsContractingDimensions: [3], rhsContractingDimensions: [3] } },
    // batch dims not leading, two contracting dims, free dims on both sides of them
    { lhs: [3, 2, 4, 5], rhs: [5, 3, 7, 4], dims: { lhsBatchDimensions: [2], rhsBatchDimensions: [3], lhsContractingDimensions: [3, 0], rhsContractingDimensions: [0, 1] } },
    // outer product (no contracting dimension)
    { lhs: [4], rhs: [3], dims: { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [], rhsContractingDimensions: [] } },
  ];
  for (const [i, k] of cases.entries()) {
    const b = new XlaBuilder(`dot${i}`);
    const c = b.build(dotGeneral(parameter(b, 0, arrayShape("f32", k.lhs)), parameter(b, 1, arrayShape("f32", k.rhs)), k.dims));
    const exe = await compile(c);
    assert.deepEqual(exe.stats.interpreted, [], `case ${i} runs compiled`);
    const args = [randomLiteral(rng(20 + i), "f32", k.lhs), randomLiteral(rng(30 + i), "f32", k.rhs)];
    assertClose(exe.run(args), evaluate(c, args), 1e-5);
  }
});

test("a reshape between two dots moves no data: it names its operand's bytes", async () => {
  const b = new XlaBuilder("two_dots");
  const x = parameter(b, 0, arrayShape("f32", [4, 6]), "x");
  const w = parameter(b, 1, arrayShape("f32", [6, 6]), "w");
  const v = parameter(b, 2, arrayShape("f32", [3, 8]), "v");
  const h = reshape(dot(x, w), [8, 3]);
  const c = b.build(dot(h, v));
  const exe = await compile(c);
  assert.deepEqual(exe.program.steps.map((s) => s.kind), ["kernel", "kernel"], exe.dump());
  const args = [randomLiteral(rng(40), "f32", [4, 6]), randomLiteral(rng(41), "f32", [6, 6]), randomLiteral(rng(42), "f32", [3, 8])];
  assertClose(exe.run(args), evaluate(c, args), 1e-5);
});

test("identities take no step: an optimization barrier names its operands' bytes, add-dependency its value's, after-all's token none", async () => {
  // The barrier's first value is read after the dot, so the negate's bytes must outlive it
  // (aliasing must not let a later kernel write over them); its second is returned as is.
  const c = parseStableHlo(`func.func @main(%x: tensor<4x4xf32>, %y: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>) {
  %t = stablehlo.after_all : !stablehlo.token
  %n = stablehlo.negate %x : tensor<4x4xf32>
  %b:2 = stablehlo.optimization_barrier %n, %y : tensor<4x4xf32>, tensor<4xf32>
  %d = stablehlo.dot %b#0, %b#0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = stablehlo.tanh %d : tensor<4x4xf32>
  %s = stablehlo.add %e, %b#0 : tensor<4x4xf32>
  return %s, %b#1, %b#0 : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>
}`).entry;
  const exe = await compile(c);
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  const args = [randomLiteral(rng(60), "f32", [4, 4]), randomLiteral(rng(61), "f32", [4])];
  const got = exe.run(args).arrayLeaves(), want = evaluate(c, args).arrayLeaves();
  got.forEach((g, k) => assertClose(g, want[k]!, 1e-6));
  assert.deepEqual(got[1]!.values(), args[1]!.values());
  // add-dependency (HLO only): its value's bytes, read by the kernel after it.
  const dep = parseHlo(`HloModule dep
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %n = f32[4]{0} negate(f32[4]{0} %x)
  %tok = token[] after-all()
  %dep = f32[4]{0} add-dependency(f32[4]{0} %n, token[] %tok)
  ROOT %e = f32[4]{0} exponential(f32[4]{0} %dep)
}`);
  const depExe = await compile(dep);
  assert.deepEqual(depExe.stats.interpreted, [], depExe.dump());
  assertClose(depExe.run([args[1]!]), evaluate(dep.entry, [args[1]!]), 1e-6);
});

test("dynamic-update-slice writes in place over an operand that dies at it (a KV-cache update moves only the new row)", async () => {
  const b = new XlaBuilder("kv_update");
  const cache = parameter(b, 0, arrayShape("f32", [64, 32]), "cache");
  const row = parameter(b, 1, arrayShape("f32", [1, 32]), "row");
  const at = parameter(b, 2, scalarShape("s32"), "at");
  // neg(cache) is a temporary that dies at the update: the update reuses its bytes.
  const updated = dynamicUpdateSlice(neg(cache), row, [at, constantR0(b, "s32", 0)]);
  const c = b.build(tanh(updated));
  const exe = await compile(c);
  assert.deepEqual(exe.stats.interpreted, []);
  const dus = exe.program.steps.findIndex((s) => s.kind === "kernel" && s.name.startsWith("dynamicUpdateSlice"));
  assert.ok(dus >= 0, exe.dump());
  const step = exe.program.steps[dus] as Extract<(typeof exe.program.steps)[number], { kind: "kernel" }>;
  const loc = (l: (typeof step.operands)[number]): number => (l.space === "temp" ? exe.program.temps[l.index]!.offset : -1);
  assert.equal(loc(step.results[0]!), loc(step.operands[0]!), "the result takes the operand's bytes");
  for (const pos of [0, 17, 63, 99]) {
    const args = [randomLiteral(rng(50), "f32", [64, 32]), randomLiteral(rng(51), "f32", [1, 32]), Literal.scalar("s32", pos)];
    assertClose(exe.run(args), evaluate(c, args), 1e-6);
  }
});
