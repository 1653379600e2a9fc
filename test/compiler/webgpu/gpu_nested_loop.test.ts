// Loops nested in a GPU-driven loop (gpu_control.ts): unrolled into the outer loop's
// batches, gated by their own regions, nothing of theirs read back; the outer loop's
// one read a batch carries its count, its abort word (a nested loop that needed more
// bodies than were encoded: the batch is encoded again with twice as many) and the most
// bodies each nested loop ran. Every result is compared bit for bit with the
// interpreter's (integers, and sums of exact f32 values), and where it is known
// independently with that; the reads are checked through executable.lastRun: every
// read is a batch's report (4 bytes a nested loop, and 12), so a nested loop that read
// its pred (1 byte) or its own count (4 bytes) back fails.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gpuLoopBatches, webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import type { WebGpuExecutable } from "../../../src/compiler/webgpu/executable.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { Literal } from "../../../src/types/literal.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import type { HloModule } from "../../../src/ir/computation.js";
import { firstDifference } from "../literal_compare.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const C = Array.from({ length: 10 }, (_, k) => 0.25 * (k + 1) - 1);
const V = Literal.fromValues("f32", [10], C.map((c) => -2 * c + 0));

/** Runs `exe` and the interpreter on `args`; asserts they agree bit for bit; the result's leaves. */
async function runChecked(exe: WebGpuExecutable, module: HloModule, args: readonly Literal[], what: string): Promise<Literal[]> {
  const want = evaluate(module.entry, args);
  const got = await exe.run(args);
  const wantLeaves = want.shape.kind === "tuple" ? want.elements : [want];
  const gotLeaves = got.shape.kind === "tuple" ? [...got.elements] : [got];
  assert.equal(gotLeaves.length, wantLeaves.length);
  gotLeaves.forEach((g, i) => {
    const difference = firstDifference(g, wantLeaves[i]!);
    assert.equal(difference, undefined, `${what} result ${i}: ${difference}`);
  });
  return gotLeaves;
}

/**
 * Asserts that every read of the last run was a GPU-driven batch's report (the most
 * bodies of each of `nested` loops, the flag, the count and the abort word: 4 bytes
 * each), and returns the reads.
 */
function batchReadsOnly(exe: WebGpuExecutable, nested: number, what: string): number {
  const { readbacks, readbackBytes } = exe.lastRun!;
  assert.equal(readbackBytes, 4 * (nested + 3) * readbacks, `${what}: ${readbacks} reads of ${readbackBytes} bytes, not each a batch's report`);
  return readbacks;
}

/** The outer loop's batch cap dump() states (its nested loops encoded for their first 8 bodies). */
const batchCapOf = (exe: WebGpuExecutable): number => Number(/^while \S+: .*GPU-driven: batches of 1, 2, 4, \.\.\. up to (\d+) iterations/m.exec(exe.dump())![1]);

// Two fori-style loops: i < n outer, j < m inner, where m is the parameter `inner` or (`trips` "by index") (5 i) mod 67.
// The inner body adds 7 i + j to an s32 sum and a constant vector to an f32[10] (both in the outer state: the inner loop's state is the outer body's result).
function fori(trips: "parameter" | "by index"): string {
  const m = trips === "parameter" ? `m = s32[] get-tuple-element(p), index=2`
    : `five = s32[] constant(5)\n  i5 = s32[] multiply(i, five)\n  k67 = s32[] constant(67)\n  m = s32[] remainder(i5, k67)`;
  return `HloModule fori_${trips === "parameter" ? "fixed" : "by_index"}

inner_cond {
  p = (s32[], s32[], s32[], s32[], f32[10]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  m = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(j, m), direction=LT
}

inner_body {
  p = (s32[], s32[], s32[], s32[], f32[10]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  m = s32[] get-tuple-element(p), index=1
  i = s32[] get-tuple-element(p), index=2
  s = s32[] get-tuple-element(p), index=3
  v = f32[10] get-tuple-element(p), index=4
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  seven = s32[] constant(7)
  i7 = s32[] multiply(i, seven)
  d = s32[] add(i7, j)
  s1 = s32[] add(s, d)
  c = f32[10] constant({${C.join(", ")}})
  v1 = f32[10] add(v, c)
  ROOT t = (s32[], s32[], s32[], s32[], f32[10]) tuple(j1, m, i, s1, v1)
}

outer_cond {
  p = (s32[], s32[], s32[], s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = (s32[], s32[], s32[], s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  mi = s32[] get-tuple-element(p), index=2
  s = s32[] get-tuple-element(p), index=3
  v = f32[10] get-tuple-element(p), index=4
  ${m}
  z = s32[] constant(0)
  t0 = (s32[], s32[], s32[], s32[], f32[10]) tuple(z, m, i, s, v)
  w = (s32[], s32[], s32[], s32[], f32[10]) while(t0), condition=inner_cond, body=inner_body
  s1 = s32[] get-tuple-element(w), index=3
  v1 = f32[10] get-tuple-element(w), index=4
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[], s32[], s32[], f32[10]) tuple(i1, n, mi, s1, v1)
}

ENTRY main {
  n = s32[] parameter(0)
  m = s32[] parameter(1)
  v = f32[10] parameter(2)
  z = s32[] constant(0)
  t = (s32[], s32[], s32[], s32[], f32[10]) tuple(z, n, m, z, v)
  ROOT w = (s32[], s32[], s32[], s32[], f32[10]) while(t), condition=outer_cond, body=outer_body
}
`;
}

/** The s32 sum and the bodies run of fori: sum over i < n, j < m(i) of 7 i + j. */
function foriExpected(n: number, m: (i: number) => number): { sum: number; bodies: number } {
  let sum = 0;
  let bodies = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m(i); j++) sum = (sum + 7 * i + j) | 0;
    bodies += Math.max(0, m(i));
  }
  return { sum, bodies };
}

test("nested fori loops, trip counts 0, 1, 63, 64, 65 and 200 at both levels: the interpreter's bits, only the outer batches' reads", { skip, timeout: 300_000 }, async () => {
  const module = parseHlo(fori("parameter"));
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.match(exe.dump(), /^\s+while \S+: .*unrolled into the enclosing GPU-driven loop's batch/m);
    const cap = batchCapOf(exe);
    const trips = [0, 1, 63, 64, 65, 200];
    // First, an inner loop of 1 body (fewer than the 8 first encoded): the outer loop's batches exactly (as dump() states them;
    // later runs encode the inner loop for fewer bodies, fitted to that run). Then each level over every count with the other
    // at 3, and 64 against 65.
    const pairs = [[200, 1], [65, 0], [65, 1], ...trips.map((n) => [n, 3]), ...trips.map((m) => [3, m]), [64, 65]] as const;
    let first = true;
    for (const [n, m] of pairs) {
      const what = `n=${n} m=${m}`;
      const got = await runChecked(exe, module, [Literal.scalar("s32", n), Literal.scalar("s32", m), V], what);
      const { sum, bodies } = foriExpected(n, () => m);
      assert.equal(got[0]!.readLinear(0), Math.max(0, n), what);
      assert.equal(got[3]!.readLinear(0), sum, what);
      assert.deepEqual(got[4]!.values(), C.map((c) => -2 * c + 0 + bodies * c), what);
      const reads = batchReadsOnly(exe, 1, what);
      const { reencodedBatches } = exe.lastRun!;
      if (first) assert.equal(reads, gpuLoopBatches(n, cap), what);
      first = false;
      // At most one read a batch (at least one outer iteration each) and one a batch encoded again; the inner loop reading back would make at least one an outer iteration more.
      assert.ok(reads <= Math.max(1, n) + reencodedBatches + 1, `${what}: ${reads} reads`);
    }
    // The unroll kept from the run before (a quarter more than the most bodies run): a second run of 200 inner bodies encodes nothing again.
    await runChecked(exe, module, [Literal.scalar("s32", 5), Literal.scalar("s32", 200), V], "once");
    await runChecked(exe, module, [Literal.scalar("s32", 5), Literal.scalar("s32", 200), V], "again");
    assert.equal(exe.lastRun!.reencodedBatches, 0);
    batchReadsOnly(exe, 1, "again");
  } finally {
    exe.delete();
  }
});

test("an inner loop whose trip count depends on the outer index ((5 i) mod 67): the interpreter's bits, the unroll grown where too few", { skip, timeout: 300_000 }, async () => {
  const module = parseHlo(fori("by index"));
  const exe = await compile(module, { backend: "webgpu" });
  try {
    for (const round of [0, 1]) {
      const what = `round ${round}`;
      const got = await runChecked(exe, module, [Literal.scalar("s32", 24), Literal.scalar("s32", 0), V], what);
      const { sum } = foriExpected(24, (i) => (5 * i) % 67);
      assert.equal(got[3]!.readLinear(0), sum, what);
      batchReadsOnly(exe, 1, what);
      // First run: 8 bodies are too few for i = 2 (m = 10), 16 for i = 4, 32 for i = 7, 64 for i = 13 (and fewer kept after
      // batches of smaller counts may be too few again): at least 4 batches encoded again; at most one read a batch and one each.
      const { reencodedBatches, readbacks } = exe.lastRun!;
      if (round === 0) assert.ok(reencodedBatches >= 4, `${what}: ${reencodedBatches} batches encoded again`);
      assert.ok(readbacks <= 24 + reencodedBatches, `${what}: ${readbacks} reads`);
    }
  } finally {
    exe.delete();
  }
});

// A while_loop in a conditional's branch, inside a loop: even i spins an inner loop 3 i times adding c, odd i negates.
const IN_BRANCH = `HloModule loop_in_branch

inner_cond {
  p = (s32[], s32[], f32[10]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  m = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(j, m), direction=LT
}

inner_body {
  p = (s32[], s32[], f32[10]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  m = s32[] get-tuple-element(p), index=1
  v = f32[10] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  c = f32[10] constant({${C.join(", ")}})
  v1 = f32[10] add(v, c)
  ROOT t = (s32[], s32[], f32[10]) tuple(j1, m, v1)
}

spin {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  three = s32[] constant(3)
  m = s32[] multiply(i, three)
  z = s32[] constant(0)
  t0 = (s32[], s32[], f32[10]) tuple(z, m, v)
  w = (s32[], s32[], f32[10]) while(t0), condition=inner_cond, body=inner_body
  ROOT v1 = f32[10] get-tuple-element(w), index=2
}

flip {
  p = (s32[], f32[10]) parameter(0)
  v = f32[10] get-tuple-element(p), index=1
  ROOT n = f32[10] negate(v)
}

outer_cond {
  p = (s32[], s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = (s32[], s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  v = f32[10] get-tuple-element(p), index=2
  two = s32[] constant(2)
  r = s32[] remainder(i, two)
  z = s32[] constant(0)
  even = pred[] compare(r, z), direction=EQ
  a = (s32[], f32[10]) tuple(i, v)
  v1 = f32[10] conditional(even, a, a), true_computation=spin, false_computation=flip
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[], f32[10]) tuple(i1, n, v1)
}

ENTRY main {
  n = s32[] parameter(0)
  v = f32[10] parameter(1)
  z = s32[] constant(0)
  t = (s32[], s32[], f32[10]) tuple(z, n, v)
  ROOT w = (s32[], s32[], f32[10]) while(t), condition=outer_cond, body=outer_body
}
`;

test("a while_loop in a conditional's branch inside a loop: the conditional decided on the GPU, its loop unrolled, only the outer batches' reads", { skip, timeout: 120_000 }, async () => {
  const module = parseHlo(IN_BRANCH);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    const dump = exe.dump();
    assert.match(dump, /^\s+conditional \(pred\[\] \S+\) \S+: .*decided on the GPU: a gate kernel/m, dump);
    assert.match(dump, /^\s+while \S+: .*unrolled into the enclosing GPU-driven loop's batch/m, dump);
    for (const n of [0, 1, 2, 5, 30]) {
      const what = `n=${n}`;
      const got = await runChecked(exe, module, [Literal.scalar("s32", n), V], what);
      assert.equal(got[0]!.readLinear(0), n, what);
      batchReadsOnly(exe, 1, what);
      assert.ok(exe.lastRun!.readbacks <= Math.max(1, n) + exe.lastRun!.reencodedBatches + 1, what);
    }
  } finally {
    exe.delete();
  }
});

// The same conditional outside any loop: the host reads its selector (one pred), then the loop in the branch taken runs GPU-driven.
const BRANCH_AT_TOP = IN_BRANCH.replace(/outer_cond \{[\s\S]*$/, `ENTRY main {
  q = pred[] parameter(0)
  i = s32[] parameter(1)
  v = f32[10] parameter(2)
  a = (s32[], f32[10]) tuple(i, v)
  ROOT v1 = f32[10] conditional(q, a, a), true_computation=spin, false_computation=flip
}
`).replace("HloModule loop_in_branch", "HloModule loop_in_branch_at_top");

test("a conditional holding a loop outside any loop: its selector read back (one pred), the loop in the branch taken GPU-driven", { skip }, async () => {
  const module = parseHlo(BRANCH_AT_TOP);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.match(exe.dump(), /^conditional \(pred\[\] \S+\) \S+: .*the host reads the selector back \(1 element\): a branch holds a loop/m);
    for (const [q, i] of [[true, 0], [true, 7], [false, 7]] as const) {
      const what = `q=${q} i=${i}`;
      await runChecked(exe, module, [Literal.scalar("pred", q), Literal.scalar("s32", i), V], what);
      const { readbacks, readbackBytes } = exe.lastRun!;
      // The pred, then (branch 0) the loop's batches of 3 i bodies, a u32 each.
      const batches = q ? gpuLoopBatches(3 * i) : 0;
      assert.equal(readbacks, 1 + batches, what);
      assert.equal(readbackBytes, 1 + 4 * batches, what);
    }
  } finally {
    exe.delete();
  }
});

// Three levels, and a loop in the outer condition: while (count to i) < n { for j < n2 { for l < j + i { acc += l } } }.
const THREE_LEVELS = `HloModule three_levels

count_cond {
  p = (s32[], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=0
  lim = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(k, lim), direction=LT
}

count_body {
  p = (s32[], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=0
  lim = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  ROOT t = (s32[], s32[]) tuple(k1, lim)
}

in_cond {
  p = (s32[], s32[], s32[]) parameter(0)
  l = s32[] get-tuple-element(p), index=0
  lim = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(l, lim), direction=LT
}

in_body {
  p = (s32[], s32[], s32[]) parameter(0)
  l = s32[] get-tuple-element(p), index=0
  lim = s32[] get-tuple-element(p), index=1
  acc = s32[] get-tuple-element(p), index=2
  one = s32[] constant(1)
  l1 = s32[] add(l, one)
  acc1 = s32[] add(acc, l)
  ROOT t = (s32[], s32[], s32[]) tuple(l1, lim, acc1)
}

mid_cond {
  p = (s32[], s32[], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n2 = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(j, n2), direction=LT
}

mid_body {
  p = (s32[], s32[], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  acc = s32[] get-tuple-element(p), index=2
  n2 = s32[] get-tuple-element(p), index=3
  lim = s32[] add(j, i)
  z = s32[] constant(0)
  t0 = (s32[], s32[], s32[]) tuple(z, lim, acc)
  w = (s32[], s32[], s32[]) while(t0), condition=in_cond, body=in_body
  acc1 = s32[] get-tuple-element(w), index=2
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  ROOT t = (s32[], s32[], s32[], s32[]) tuple(j1, i, acc1, n2)
}

outer_cond {
  p = (s32[], s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  z = s32[] constant(0)
  t0 = (s32[], s32[]) tuple(z, i)
  w = (s32[], s32[]) while(t0), condition=count_cond, body=count_body
  k = s32[] get-tuple-element(w), index=0
  ROOT lt = pred[] compare(k, n), direction=LT
}

outer_body {
  p = (s32[], s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  acc = s32[] get-tuple-element(p), index=2
  n2 = s32[] get-tuple-element(p), index=3
  z = s32[] constant(0)
  t0 = (s32[], s32[], s32[], s32[]) tuple(z, i, acc, n2)
  w = (s32[], s32[], s32[], s32[]) while(t0), condition=mid_cond, body=mid_body
  acc1 = s32[] get-tuple-element(w), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[], s32[], s32[]) tuple(i1, n, acc1, n2)
}

ENTRY main {
  n = s32[] parameter(0)
  n2 = s32[] parameter(1)
  z = s32[] constant(0)
  t = (s32[], s32[], s32[], s32[]) tuple(z, n, z, n2)
  ROOT w = (s32[], s32[], s32[], s32[]) while(t), condition=outer_cond, body=outer_body
}
`;

test("three levels of loops and a loop in the outer condition: the interpreter's bits, only the outer batches' reads (a batch stopped in the condition or the body encoded again)", { skip, timeout: 120_000 }, async () => {
  const module = parseHlo(THREE_LEVELS);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    const dump = exe.dump();
    assert.equal((dump.match(/unrolled into the enclosing GPU-driven loop's batch/g) ?? []).length, 3, dump);
    for (const [n, n2] of [[0, 3], [1, 0], [3, 3], [12, 4], [20, 2]] as const) {
      const what = `n=${n} n2=${n2}`;
      const got = await runChecked(exe, module, [Literal.scalar("s32", n), Literal.scalar("s32", n2)], what);
      let acc = 0;
      for (let i = 0; i < n; i++) for (let j = 0; j < n2; j++) for (let l = 0; l < j + i; l++) acc += l;
      assert.equal(got[2]!.readLinear(0), acc, what);
      // The outer loop's report: its three nested loops' most bodies, its flag, count and abort word.
      batchReadsOnly(exe, 3, what);
    }
  } finally {
    exe.delete();
  }
});

test("an inner loop of more bodies than an outer iteration may encode: the outer loop reads its pred back from there, the inner runs as a root loop", { skip, timeout: 300_000 }, async () => {
  const module = parseHlo(fori("parameter"));
  const exe = await compile(module, { backend: "webgpu" });
  try {
    const got = await runChecked(exe, module, [Literal.scalar("s32", 2), Literal.scalar("s32", 2100), V], "n=2 m=2100");
    assert.equal(got[3]!.readLinear(0), foriExpected(2, () => 2100).sum);
    const { readbacks, readbackBytes, reencodedBatches } = exe.lastRun!;
    assert.ok(reencodedBatches >= 1);
    // Some reads are the outer pred (1 byte) or the inner loop's count (4), smaller than the outer loop's report (16).
    assert.ok(readbackBytes < 16 * readbacks, `${readbacks} reads of ${readbackBytes} bytes`);
  } finally {
    exe.delete();
  }
});
