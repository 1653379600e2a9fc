// Conditionals decided on the GPU (gpu_control.ts): a gate kernel reads the selector and
// writes the workgroup counts of every branch's kernels, zeros but for the branch it
// picks; nothing is read back. Every result is compared bit for bit with the
// interpreter's and with the same program decided by the host (XLATS_WEBGPU_GPU_LOOPS=0:
// the selector read back), over the selectors where XLA's rule matters: an s32 index
// out of range (negative, n, the largest) runs the last branch, a pred runs branch 0
// for true. The readbacks are counted (executable.lastRun): none for a conditional,
// and a conditional in a loop body leaves the loop GPU-driven, one u32 a batch.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gpuLoopBatches, webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { dumpGpuProgram, type WebGpuExecutable } from "../../../src/compiler/webgpu/executable.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { Literal } from "../../../src/types/literal.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import type { HloModule } from "../../../src/ir/computation.js";
import { firstDifference } from "../literal_compare.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/** The module compiled twice: its control flow decided on the GPU where it can be, and all of it by the host. */
async function compileBoth(module: HloModule): Promise<{ gpu: WebGpuExecutable; host: WebGpuExecutable }> {
  const gpu = await compile(module, { backend: "webgpu" });
  process.env["XLATS_WEBGPU_GPU_LOOPS"] = "0";
  try {
    return { gpu, host: await compile(module, { backend: "webgpu" }) };
  } finally {
    delete process.env["XLATS_WEBGPU_GPU_LOOPS"];
  }
}

/** Runs both executables and the interpreter; asserts they agree bit for bit; the results' leaves and each executable's readbacks. */
async function runAll(exes: { gpu: WebGpuExecutable; host: WebGpuExecutable }, module: HloModule, args: readonly Literal[], what: string): Promise<{ got: Literal[]; gpuReads: number; hostReads: number }> {
  const want = evaluate(module.entry, args);
  const wantLeaves = want.shape.kind === "tuple" ? want.elements : [want];
  const reads: number[] = [];
  let got: Literal[] = [];
  for (const exe of [exes.gpu, exes.host]) {
    const r = await exe.run(args);
    got = r.shape.kind === "tuple" ? [...r.elements] : [r];
    reads.push(exe.lastRun!.readbacks);
    assert.equal(got.length, wantLeaves.length);
    got.forEach((g, i) => {
      const difference = firstDifference(g, wantLeaves[i]!);
      assert.equal(difference, undefined, `${what} result ${i}: ${difference}\n${exe.dump()}`);
    });
  }
  return { got, gpuReads: reads[0]!, hostReads: reads[1]! };
}

const X = Literal.fromValues("f32", [64], Array.from({ length: 64 }, (_, i) => ((i * 37) % 64) / 16 - 2));

// An s32 index picks one of four branches (a multiply, a negate, the operand itself (a
// copy), a row max subtracted: kernels of different workgroup shapes); a pred picks
// between two more over the first's result.
const PICK = `HloModule pick

square {
  p = f32[64] parameter(0)
  ROOT m = f32[64] multiply(p, p)
}

negate {
  p = f32[64] parameter(0)
  ROOT n = f32[64] negate(p)
}

same {
  ROOT p = f32[64] parameter(0)
}

max_of {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

below_max {
  p = f32[64] parameter(0)
  lowest = f32[] constant(-inf)
  m = f32[] reduce(p, lowest), dimensions={0}, to_apply=max_of
  mb = f32[64] broadcast(m), dimensions={}
  ROOT d = f32[64] subtract(p, mb)
}

halve {
  p = f32[64] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[64] broadcast(h), dimensions={}
  ROOT m = f32[64] multiply(p, hb)
}

ENTRY main {
  k = s32[] parameter(0)
  q = pred[] parameter(1)
  x = f32[64] parameter(2)
  c = f32[64] conditional(k, x, x, x, x), branch_computations={square, negate, same, below_max}
  d = f32[64] conditional(q, c, x), true_computation=halve, false_computation=negate
  ROOT t = (f32[64], f32[64]) tuple(c, d)
}
`;

test("s32 indices -1, 0, 1, n-1, n and the extremes, and pred true/false: the interpreter's bits and the host-decided path's, nothing read back", { skip }, async () => {
  const module = parseHlo(PICK);
  const exes = await compileBoth(module);
  try {
    const dump = exes.gpu.dump();
    assert.deepEqual(exes.gpu.stats.interpreted, [], dump);
    assert.equal(dump.match(/decided on the GPU: a gate kernel reads the selector/g)?.length, 2, dump);
    assert.match(dump, /all 4 branches' kernels are dispatched indirectly/);
    assert.match(exes.host.dump(), /the host reads the selector back \(1 element\): control flow decided on the GPU is off/);
    const xs = X.values() as number[];
    const last = (v: number): number => v - Math.max(...xs);
    const expected: Record<number, (v: number) => number> = { 0: (v) => v * v, 1: (v) => -v, 2: (v) => v, 3: last };
    for (const k of [-1, 0, 1, 2, 3, 4, 2147483647, -2147483648]) {
      for (const q of [true, false]) {
        const args = [Literal.scalar("s32", k), Literal.scalar("pred", q), X];
        const { got, gpuReads, hostReads } = await runAll(exes, module, args, `k=${k} q=${q}`);
        // Independently of the interpreter: out of range picks the last branch (3).
        const branch = expected[k >= 0 && k < 4 ? k : 3]!;
        assert.deepEqual(got[0]!.values(), xs.map((v) => Math.fround(branch(v))), `k=${k}`);
        assert.deepEqual(got[1]!.values(), xs.map((v, i) => (q ? 0.5 * (got[0]!.values()[i] as number) : -v)), `k=${k} q=${q}`);
        assert.equal(gpuReads, 0, `k=${k} q=${q}`);
        assert.equal(hostReads, 2, `k=${k} q=${q}`);
      }
    }
  } finally {
    exes.gpu.delete();
    exes.host.delete();
  }
});

// A loop whose condition holds a conditional (a pred: the bound is n, or 3 where n > 100)
// and whose body picks by i mod 3 among adding a constant, halving, and a nested pred
// conditional (negate or double, by the sign of the first element).
const IN_LOOP = `HloModule conditional_in_loop

below_n {
  p = (s32[], s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

below_3 {
  p = (s32[], s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}

cond {
  p = (s32[], s32[], f32[64]) parameter(0)
  n = s32[] get-tuple-element(p), index=1
  hundred = s32[] constant(100)
  big = pred[] compare(n, hundred), direction=GT
  ROOT c = pred[] conditional(big, p, p), true_computation=below_3, false_computation=below_n
}

add_quarter {
  p = f32[64] parameter(0)
  c = f32[] constant(0.25)
  cb = f32[64] broadcast(c), dimensions={}
  ROOT a = f32[64] add(p, cb)
}

halve {
  p = f32[64] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[64] broadcast(h), dimensions={}
  ROOT m = f32[64] multiply(p, hb)
}

negate {
  p = f32[64] parameter(0)
  ROOT n = f32[64] negate(p)
}

double {
  p = f32[64] parameter(0)
  ROOT a = f32[64] add(p, p)
}

by_sign {
  p = f32[64] parameter(0)
  first = f32[1] slice(p), slice={[0:1]}
  f = f32[] reshape(first)
  zero = f32[] constant(0)
  positive = pred[] compare(f, zero), direction=GT
  ROOT c = f32[64] conditional(positive, p, p), true_computation=negate, false_computation=double
}

body {
  p = (s32[], s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  v = f32[64] get-tuple-element(p), index=2
  three = s32[] constant(3)
  r = s32[] remainder(i, three)
  v1 = f32[64] conditional(r, v, v, v), branch_computations={add_quarter, halve, by_sign}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[], f32[64]) tuple(i1, n, v1)
}

ENTRY main {
  n = s32[] parameter(0)
  x = f32[64] parameter(1)
  z = s32[] constant(0)
  t = (s32[], s32[], f32[64]) tuple(z, n, x)
  ROOT w = (s32[], s32[], f32[64]) while(t), condition=cond, body=body
}
`;

/** The loop's result computed in float64 (every step is exact in f32 for these values). */
function loopReference(trips: number, x: readonly number[]): number[] {
  let v = [...x];
  for (let i = 0; i < trips; i++) {
    if (i % 3 === 0) v = v.map((e) => e + 0.25);
    else if (i % 3 === 1) v = v.map((e) => e * 0.5);
    else v = v[0]! > 0 ? v.map((e) => -e) : v.map((e) => 2 * e);
  }
  return v.map((e) => e + 0);
}

test("conditionals in a loop's condition and body (one nested in a branch) keep the loop GPU-driven: one u32 a batch, the interpreter's bits past the batches' ends", { skip }, async () => {
  const module = parseHlo(IN_LOOP);
  const exes = await compileBoth(module);
  try {
    const dump = exes.gpu.dump();
    assert.match(dump, /while \S+: .*GPU-driven: batches of 1, 2, 4, \.\.\. up to 64 iterations, its kernels dispatched indirectly/, dump);
    assert.equal(dump.match(/decided on the GPU: a gate kernel/g)?.length, 3, dump);
    for (const n of [0, 1, 2, 5, 7, 200]) {
      const { got, gpuReads, hostReads } = await runAll(exes, module, [Literal.scalar("s32", n), X], `n=${n}`);
      const trips = n > 100 ? 3 : Math.max(0, n);
      assert.equal(got[0]!.readLinear(0), trips, `n=${n}`);
      assert.deepEqual(got[2]!.values(), loopReference(trips, X.values() as number[]), `n=${n}`);
      assert.equal(gpuReads, gpuLoopBatches(trips), `n=${n}`);
      // The host reads each pred, and the selectors of the condition's and the body's conditionals (and the nested one's every third trip).
      assert.equal(hostReads, 2 * (trips + 1) + trips + Math.floor(trips / 3), `n=${n}`);
    }
  } finally {
    exes.gpu.delete();
    exes.host.delete();
  }
});

test("the plan says which conditionals the GPU decides and why the host decides the others, without a device", () => {
  const on = planGpuProgram(parseHlo(IN_LOOP), {});
  assert.equal(on.control.loops.size, 1);
  assert.equal(on.control.conditionals.size, 3);
  assert.equal(on.control.hostDecided.size, 0);
  // A branch with a host step (an f64 add) makes the host decide, as does (outside a GPU-driven loop) a loop in a branch; a conditional in a loop of such a body stays GPU-decided.
  const mixed = parseHlo(`HloModule mixed

wide {
  p = f64[4] parameter(0)
  ROOT a = f64[4] add(p, p)
}

keep {
  ROOT p = f64[4] parameter(0)
}

count_cond {
  p = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(p, ten), direction=LT
}

count_body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(p, one)
}

counts {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=count_cond, body=count_body
}

ENTRY main {
  k = s32[] parameter(0)
  q = pred[] parameter(1)
  d = f64[4] parameter(2)
  c = f64[4] conditional(k, d, d), branch_computations={keep, wide}
  l = s32[] conditional(q, k, k), true_computation=counts, false_computation=count_body
  ROOT t = (f64[4], s32[]) tuple(c, l)
}
`);
  const dump = dumpGpuProgram(planGpuProgram(mixed, {}));
  assert.match(dump, /conditional \(s32\[\] \S+\) c: .*the host reads the selector back \(1 element\): its branch 1 has a host step \(a\)/, dump);
  assert.match(dump, /conditional \(pred\[\] \S+\) l: .*the host reads the selector back \(1 element\): a branch holds a loop, decided on the GPU inside a GPU-driven loop only/, dump);
  process.env["XLATS_WEBGPU_GPU_LOOPS"] = "0";
  try {
    const off = planGpuProgram(parseHlo(IN_LOOP), {});
    assert.equal(off.control.conditionals.size, 0);
    assert.equal(off.control.hostDecided.size, 4);
    assert.equal(off.control.controlWords, 0);
  } finally {
    delete process.env["XLATS_WEBGPU_GPU_LOOPS"];
  }
});
