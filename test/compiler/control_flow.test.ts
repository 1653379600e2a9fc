// Control flow compiled: while loops, conditionals and calls run their computations as
// nested step lists of kernels (control_flow.ts). Each program is checked against the
// reference interpreter on the same inputs, and where a value is known independently
// (an iteration count, the branch an index picks) against that too; the dump and the
// stats show that the bodies ran as kernels.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "../../src/runtime/index.js";
import { evaluate, Literal } from "../../src/index.js";
import { compile, type Executable } from "../../src/compiler/index.js";
import { layoutAssignment } from "../../src/compiler/passes/index.js";
import { stepFusion } from "../../src/compiler/passes/step_fusion.js";
import type { HloModule } from "../../src/ir/computation.js";
import { verifyModule } from "../../src/ir/verify.js";
import { parseHlo } from "../../src/text/hlo/index.js";
import { rng } from "../support/prng.js";
import { firstDifference, literalsClose } from "./literal_compare.js";
import { elementCount } from "../../src/types/shape.js";

function randomF32(seed: number, dims: number[]): Literal {
  const next = rng(seed);
  return Literal.fromValues("f32", dims, Array.from({ length: elementCount(dims) }, () => next() * 2 - 1));
}

/** Runs `exe` and the interpreter on `args`; floats within `rtol`, everything else exact. */
function assertMatchesInterpreter(exe: Executable, module: HloModule, args: readonly Literal[], rtol = 1e-6): Literal {
  const actual = exe.run(args);
  const expected = evaluate(module.entry, args);
  assert.ok(literalsClose(actual, expected, rtol, 1e-6), `${module.name}: ${firstDifference(actual, expected)}\n${exe.dump()}`);
  return actual;
}

const indentOf = (line: string): number => line.slice(2).search(/\S/);

/** The steps the dump prints directly under the nested list whose header starts with `role` ("body", "branch 2 b2"). */
function nestedDump(exe: Executable, role: string): string[] {
  const lines = exe.dump().split("\n");
  const start = lines.findIndex((l) => l.startsWith("//") && l.slice(2).trimStart().startsWith(`${role} `));
  assert.ok(start >= 0, `no nested list '${role}' in the dump:\n${exe.dump()}`);
  const depth = indentOf(lines[start]!);
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith("//") || indentOf(l) <= depth) break;
    if (indentOf(l) === depth + 2) out.push(l.trim().slice(2).trim());
  }
  return out;
}

const FORI = `HloModule fori

cond {
  p = (s32[], f32[256], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(150)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[256], f32[256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[256] get-tuple-element(p), index=1
  x = f32[256] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  decay = f32[] constant(0.75)
  d = f32[256] broadcast(decay), dimensions={}
  fi = f32[] convert(i)
  fib = f32[256] broadcast(fi), dimensions={}
  scaled = f32[256] multiply(acc, d)
  shifted = f32[256] add(x, fib)
  acc1 = f32[256] add(scaled, shifted)
  ROOT t = (s32[], f32[256], f32[256]) tuple(i1, acc1, x)
}

ENTRY main {
  x = f32[256] parameter(0)
  z = s32[] constant(0)
  a0 = f32[] constant(0)
  acc0 = f32[256] broadcast(a0), dimensions={}
  t = (s32[], f32[256], f32[256]) tuple(z, acc0, x)
  w = (s32[], f32[256], f32[256]) while(t), condition=cond, body=body
  i = s32[] get-tuple-element(w), index=0
  acc = f32[256] get-tuple-element(w), index=1
  ROOT r = (s32[], f32[256]) tuple(i, acc)
}
`;

test("a fori_loop with tuple state (s32 counter, accumulator, invariant input) runs 150 iterations as kernels", async () => {
  const module = parseHlo(FORI);
  const exe = await compile(module);
  const x = randomF32(1, [256]);
  const result = assertMatchesInterpreter(exe, module, [x]);
  assert.equal(result.elements[0]!.readLinear(0), 150, "the loop ran 150 times");
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  const body = nestedDump(exe, "body");
  assert.ok(body.length > 0 && body.every((l) => l.startsWith("kernel ")), body.join("\n"));
  assert.ok(nestedDump(exe, "condition").every((l) => l.startsWith("kernel ")));
  // The accumulator is updated in place and x passed through unchanged: one buffer each. The
  // counter is read after its update is computed (by the accumulator's kernel): two buffers.
  assert.match(exe.dump(), /next state temp\d+@\d+, \(same\), \(same\);/);
  // Runs again on other inputs (the state is re-initialized every run).
  assertMatchesInterpreter(exe, module, [randomF32(2, [256])]);
  exe.delete();
});

const RNN = `HloModule rnn

cond {
  p = (s32[], f32[8,16], f32[16,16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(20)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8,16], f32[16,16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[8,16] get-tuple-element(p), index=1
  w = f32[16,16] get-tuple-element(p), index=2
  b = f32[16] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  hw = f32[8,16] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,16] broadcast(b), dimensions={1}
  pre = f32[8,16] add(hw, bb)
  act = f32[8,16] tanh(pre)
  half = f32[] constant(0.5)
  hb = f32[8,16] broadcast(half), dimensions={}
  mixed = f32[8,16] multiply(act, hb)
  h1 = f32[8,16] add(mixed, h)
  ROOT t = (s32[], f32[8,16], f32[16,16], f32[16]) tuple(i1, h1, w, b)
}

ENTRY main {
  h0 = f32[8,16] parameter(0)
  w = f32[16,16] parameter(1)
  b = f32[16] parameter(2)
  z = s32[] constant(0)
  t = (s32[], f32[8,16], f32[16,16], f32[16]) tuple(z, h0, w, b)
  r = (s32[], f32[8,16], f32[16,16], f32[16]) while(t), condition=cond, body=body
  ROOT h = f32[8,16] get-tuple-element(r), index=1
}
`;

test("a while whose body holds a dot and fusible elementwise chains runs the body as a GEMM with its epilogue", async () => {
  const module = parseHlo(RNN);
  const exe = await compile(module);
  const args = [randomF32(3, [8, 16]), randomF32(4, [16, 16]), randomF32(5, [16])];
  // The GEMM sums in another order and tanh is a polynomial: a few ulps per step, compounded over 20 steps.
  assertMatchesInterpreter(exe, module, args, 1e-4);
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  const body = nestedDump(exe, "body");
  assert.ok(body.every((l) => l.startsWith("kernel ")), body.join("\n"));
  // bias, tanh, scale and residual add: the GEMM's epilogue (an output fusion), so the body is at most two kernels.
  assert.ok(body.some((l) => /gemm 8x16x16 NN f32 with epilogue/.test(l)), `the dot and its epilogue are one kernel:\n${body.join("\n")}`);
  assert.ok(body.length <= 2, body.join("\n"));
  exe.delete();
});

const SWAP = `HloModule swap

cond {
  p = (s32[], (f32[8], pred[]), f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], (f32[8], pred[]), f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  inner = (f32[8], pred[]) get-tuple-element(p), index=1
  a = f32[8] get-tuple-element(inner), index=0
  flag = pred[] get-tuple-element(inner), index=1
  b = f32[8] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  nf = pred[] not(flag)
  f1 = f32[] constant(1)
  ones = f32[8] broadcast(f1), dimensions={}
  a1 = f32[8] add(a, ones)
  inner1 = (f32[8], pred[]) tuple(b, nf)
  ROOT t = (s32[], (f32[8], pred[]), f32[8]) tuple(i1, inner1, a1)
}

ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  z = s32[] constant(0)
  f = pred[] constant(false)
  inner = (f32[8], pred[]) tuple(a, f)
  t = (s32[], (f32[8], pred[]), f32[8]) tuple(z, inner, b)
  ROOT w = (s32[], (f32[8], pred[]), f32[8]) while(t), condition=cond, body=body
}
`;

test("nested tuples in the loop state, leaves that swap places each iteration, an odd iteration count", async () => {
  const module = parseHlo(SWAP);
  const exe = await compile(module);
  const a = randomF32(16, [8]);
  const b = randomF32(17, [8]);
  const result = assertMatchesInterpreter(exe, module, [a, b]);
  // (a, b) -> (b, a + 1), five times.
  let pair = [a.toNumbers(), b.toNumbers()];
  for (let i = 0; i < 5; i++) pair = [pair[1]!, pair[0]!.map((v) => Math.fround(v + 1))];
  assert.equal(result.elements[0]!.readLinear(0), 5);
  assert.deepEqual(result.elements[1]!.elements[0]!.toNumbers(), pair[0]);
  assert.equal(result.elements[1]!.elements[1]!.readLinear(0), true, "the flag was flipped five times");
  assert.deepEqual(result.elements[2]!.toNumbers(), pair[1]);
  assert.deepEqual(exe.stats.interpreted, []);
  exe.delete();
});

const NESTED = `HloModule nested

inner_cond {
  p = (s32[], f32[64], f32[64]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(j, n), direction=LT
}

inner_body {
  p = (s32[], f32[64], f32[64]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  acc = f32[64] get-tuple-element(p), index=1
  x = f32[64] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  fj = f32[] convert(j)
  fjb = f32[64] broadcast(fj), dimensions={}
  xj = f32[64] multiply(x, fjb)
  acc1 = f32[64] add(acc, xj)
  ROOT t = (s32[], f32[64], f32[64]) tuple(j1, acc1, x)
}

outer_cond {
  p = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[64] get-tuple-element(p), index=1
  x = f32[64] get-tuple-element(p), index=2
  z = s32[] constant(0)
  it = (s32[], f32[64], f32[64]) tuple(z, acc, x)
  iw = (s32[], f32[64], f32[64]) while(it), condition=inner_cond, body=inner_body
  acc1 = f32[64] get-tuple-element(iw), index=1
  tenth = f32[] constant(0.1)
  tb = f32[64] broadcast(tenth), dimensions={}
  acc2 = f32[64] multiply(acc1, tb)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[64], f32[64]) tuple(i1, acc2, x)
}

ENTRY main {
  x = f32[64] parameter(0)
  z = s32[] constant(0)
  a0 = f32[] constant(1)
  acc0 = f32[64] broadcast(a0), dimensions={}
  t = (s32[], f32[64], f32[64]) tuple(z, acc0, x)
  w = (s32[], f32[64], f32[64]) while(t), condition=outer_cond, body=outer_body
  ROOT acc = f32[64] get-tuple-element(w), index=1
}
`;

test("a while nested in a while: both bodies run as kernels, the inner loop's buffers inside the outer body's region", async () => {
  const module = parseHlo(NESTED);
  const exe = await compile(module);
  const x = randomF32(6, [64]);
  const result = assertMatchesInterpreter(exe, module, [x]);
  // Independently: each outer step adds x * (0+1+...+6) = 21x, then scales by 0.1.
  const xs = x.toNumbers();
  const expected = xs.map((v) => {
    let acc = 1;
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 7; j++) acc = Math.fround(acc + Math.fround(v * j));
      acc = Math.fround(acc * Math.fround(0.1));
    }
    return acc;
  });
  result.toNumbers().forEach((v, i) => assert.ok(Math.abs(v - expected[i]!) <= 1e-6 * Math.max(1, Math.abs(expected[i]!)), `element ${i}: ${v} vs ${expected[i]}`));
  assert.deepEqual(exe.stats.interpreted, []);
  const outer = nestedDump(exe, "body outer_body");
  assert.ok(outer.some((l) => l.startsWith("while ")), outer.join("\n"));
  assert.ok(outer.every((l) => l.startsWith("kernel ") || l.startsWith("while ")), outer.join("\n"));
  exe.delete();
});

const CONDITIONALS = `HloModule branches

on_true {
  x = f32[32] parameter(0)
  two = f32[] constant(2)
  tb = f32[32] broadcast(two), dimensions={}
  m = f32[32] multiply(x, tb)
  one = f32[] constant(1)
  ob = f32[32] broadcast(one), dimensions={}
  ROOT r = f32[32] add(m, ob)
}

on_false {
  x = f32[32] parameter(0)
  ROOT r = f32[32] negate(x)
}

b0 {
  x = f32[32] parameter(0)
  ROOT r = f32[32] abs(x)
}

b1 {
  p = (f32[32], s32[4]) parameter(0)
  x = f32[32] get-tuple-element(p), index=0
  ROOT r = f32[32] multiply(x, x)
}

b2 {
  x = f32[32] parameter(0)
  ROOT r = f32[32] subtract(x, x)
}

ENTRY main {
  p = pred[] parameter(0)
  k = s32[] parameter(1)
  x = f32[32] parameter(2)
  y = f32[32] parameter(3)
  c = f32[32] conditional(p, x, y), true_computation=on_true, false_computation=on_false
  s = s32[4] iota(), iota_dimension=0
  t = (f32[32], s32[4]) tuple(y, s)
  d = f32[32] conditional(k, x, t, c), branch_computations={b0, b1, b2}
  ROOT r = (f32[32], f32[32]) tuple(c, d)
}
`;

test("conditionals: a pred picks true/false, an s32 index picks its branch, an index out of range the last one", async () => {
  const module = parseHlo(CONDITIONALS);
  const exe = await compile(module);
  assert.deepEqual(exe.stats.interpreted, [], exe.dump());
  const x = randomF32(7, [32]);
  const y = randomF32(8, [32]);
  const xs = x.toNumbers();
  const ys = y.toNumbers();
  for (const p of [true, false]) {
    for (const k of [-1, 0, 1, 2, 3, 100]) {
      const args = [Literal.scalar("pred", p), Literal.scalar("s32", k), x, y];
      const result = assertMatchesInterpreter(exe, module, args);
      const c = xs.map((v, i) => (p ? Math.fround(Math.fround(v * 2) + 1) : -ys[i]!));
      assert.deepEqual(result.elements[0]!.toNumbers(), c, `pred ${p}`);
      const branch = k >= 0 && k < 3 ? k : 2;
      const d = [xs.map(Math.abs), ys.map((v) => Math.fround(v * v)), c.map(() => 0)][branch]!;
      assert.deepEqual(result.elements[1]!.toNumbers(), d, `index ${k} runs branch ${branch}`);
    }
  }
  assert.match(exe.dump(), /conditional \(pred\[\] parameter0\)/);
  assert.match(exe.dump(), /branch 2 b2/);
  exe.delete();
});

const CALLS = `HloModule calls

axpy {
  a = f32[] parameter(0)
  x = f32[128] parameter(1)
  y = f32[128] parameter(2)
  ab = f32[128] broadcast(a), dimensions={}
  ax = f32[128] multiply(ab, x)
  s = f32[128] add(ax, y)
  ROOT r = (f32[128], f32[128]) tuple(s, x)
}

ENTRY main {
  a = f32[] parameter(0)
  x = f32[128] parameter(1)
  y = f32[128] parameter(2)
  c = (f32[128], f32[128]) call(a, x, y), to_apply=axpy
  r = f32[128] get-tuple-element(c), index=0
  ROOT e = f32[128] exponential(r)
}
`;

test("a call runs its callee as a nested program of kernels (when no pass inlined it)", async () => {
  const module = parseHlo(CALLS);
  // Without decompose, which inlines calls: the call reaches the planner.
  const exe = await compile(module, { passes: [layoutAssignment, stepFusion] });
  assert.match(exe.dump(), /\/\/ {3}call c: /);
  const callee = nestedDump(exe, "callee");
  assert.ok(callee.length > 0 && callee.filter((l) => !l.startsWith("copy ")).every((l) => l.startsWith("kernel ")), callee.join("\n"));
  assert.deepEqual(exe.stats.interpreted, []);
  assertMatchesInterpreter(exe, module, [Literal.scalar("f32", 0.5), randomF32(9, [128]), randomF32(10, [128])], 4e-7);
  exe.delete();
  // The default pipeline inlines it: the same values.
  const inlined = await compile(module);
  assert.doesNotMatch(inlined.dump(), /call c: /);
  assertMatchesInterpreter(inlined, module, [Literal.scalar("f32", -2), randomF32(11, [128]), randomF32(12, [128])], 4e-7);
  inlined.delete();
});

const SCAN = `HloModule scan

cond {
  p = (s32[], f32[40,24], f32[24]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(40)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[40,24], f32[24]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  out = f32[40,24] get-tuple-element(p), index=1
  carry = f32[24] get-tuple-element(p), index=2
  fi = f32[] convert(i)
  fib = f32[24] broadcast(fi), dimensions={}
  carry1 = f32[24] add(carry, fib)
  row = f32[1,24] reshape(carry1)
  z = s32[] constant(0)
  out1 = f32[40,24] dynamic-update-slice(out, row, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[40,24], f32[24]) tuple(i1, out1, carry1)
}

ENTRY main {
  c0 = f32[24] parameter(0)
  z = s32[] constant(0)
  f0 = f32[] constant(0)
  o0 = f32[40,24] broadcast(f0), dimensions={}
  t = (s32[], f32[40,24], f32[24]) tuple(z, o0, c0)
  w = (s32[], f32[40,24], f32[24]) while(t), condition=cond, body=body
  ROOT out = f32[40,24] get-tuple-element(w), index=1
}
`;

test("a scan writing one row per iteration with dynamic-update-slice updates the state in place", async () => {
  const module = parseHlo(SCAN);
  const exe = await compile(module);
  const c0 = randomF32(13, [24]);
  const result = assertMatchesInterpreter(exe, module, [c0]);
  // Row i holds c0 + (0 + 1 + ... + i).
  const cs = c0.toNumbers();
  const rows: number[] = [];
  let carry = cs;
  for (let i = 0; i < 40; i++) {
    carry = carry.map((v) => Math.fround(v + i));
    rows.push(...carry);
  }
  assert.deepEqual(result.toNumbers(), rows);
  const whileLine = exe.dump().split("\n").find((l) => /^\/\/ {3}while /.test(l))!;
  assert.match(whileLine, /next state \(same\), \(same\)/, "the counter and the scanned buffer keep one buffer each");
  assert.deepEqual(exe.stats.interpreted, []);
  exe.delete();
});

test("an op the backend does not compile still runs in a loop body, on the interpreter's kernel, and is listed", async () => {
  // An s32 dot has no GEMM kernel.
  const text = `HloModule idot

cond {
  p = (s32[], s32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], s32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  m = s32[4,4] get-tuple-element(p), index=1
  sq = s32[4,4] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = s32[] constant(1)
  ob = s32[4,4] broadcast(one), dimensions={}
  m1 = s32[4,4] subtract(sq, ob)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[4,4]) tuple(i1, m1)
}

ENTRY main {
  m = s32[4,4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], s32[4,4]) tuple(z, m)
  ROOT w = (s32[], s32[4,4]) while(t), condition=cond, body=body
}
`;
  const module = parseHlo(text);
  const exe = await compile(module);
  const m = Literal.fromValues("s32", [4, 4], Array.from({ length: 16 }, (_, i) => (i % 5) - 2));
  assertMatchesInterpreter(exe, module, [m]);
  assert.deepEqual(exe.stats.interpreted.map((s) => s.name), ["body/sq"]);
  assert.ok(nestedDump(exe, "body").some((l) => l.startsWith("interpreter sq (")), exe.dump());
  exe.delete();
});

test("the fused module of a program with loops verifies: fused computations get unique names across bodies", async () => {
  const module = parseHlo(NESTED);
  const exe = await compile(module, { verifyEachPass: true });
  verifyModule(exe.module!);
  const names = exe.module!.computations.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, names.join(", "));
  // The entry's and the bodies' fusions all appear in the module.
  assert.ok(names.filter((n) => n.startsWith("fused_")).length >= 4, names.join(", "));
  exe.delete();
});

test("the runtime's wasm devices run a loop with an all-reduce in its body, in the region the host planned", async () => {
  const text = `HloModule loop_allreduce

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16] get-tuple-element(p), index=1
  half = f32[] constant(0.5)
  hb = f32[16] broadcast(half), dimensions={}
  xh = f32[16] multiply(x, hb)
  s = f32[16] all-reduce(xh), replica_groups={}, to_apply=sum
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[16]) tuple(i1, s)
}

ENTRY main {
  x = f32[16] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[16]) tuple(z, x)
  w = (s32[], f32[16]) while(t), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
}
`;
  const module = parseHlo(text);
  const client = await createClient({ backend: "wasm", deviceCount: 2, collectiveTimeoutMs: 5000 });
  try {
    const xs = [randomF32(14, [16]), randomF32(15, [16])];
    const results = await client.run(module.entry, xs.map((x) => [x]), { replicas: 2 });
    // Each step halves and sums over the two replicas: both end with the same values.
    const expected = xs[0]!.toNumbers().map((_, i) => {
      let v = [xs[0]!.toNumbers()[i]!, xs[1]!.toNumbers()[i]!];
      for (let k = 0; k < 4; k++) {
        const s = Math.fround(Math.fround(v[0]! * 0.5) + Math.fround(v[1]! * 0.5));
        v = [s, s];
      }
      return v[0]!;
    });
    for (const r of results) assert.deepEqual(r.toNumbers(), expected);
  } finally {
    await client.close();
  }
});
