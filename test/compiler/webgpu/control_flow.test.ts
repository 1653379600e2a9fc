// Control flow on the WebGPU backend: a while's condition and body, a conditional's
// branches and a callee run as nested step lists of GPU kernels over the loop state
// where it lies in device memory (control_flow.ts). A loop of kernels only is driven on
// the GPU (gpu_control.ts): the host reads back one u32 a batch of iterations (1, 2, 4,
// ... 64); a loop with a host step or nested loop reads one element an iteration (the
// predicate); a conditional of kernels only is decided on the GPU and reads nothing
// back; nothing else: lastRun counts every readback (gpu_loop.test.ts has the
// GPU-driven loops' trip counts, gpu_conditional.test.ts the conditionals' selectors).
// Results are compared with the interpreter's, and where a value is known
// independently (an iteration count, the branch picked) with it.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { gpuLoopBatches, webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import type { WebGpuExecutable } from "../../../src/compiler/webgpu/executable.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { Literal } from "../../../src/types/literal.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import type { HloModule } from "../../../src/ir/computation.js";
import { rng } from "../../support/prng.js";
import { firstDifference, literalsClose } from "../literal_compare.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = webgpuSkip;

after(() => releaseGpu());

function randomF32(seed: number, dims: number[], scale = 1): Literal {
  const next = rng(seed);
  return Literal.fromValues("f32", dims, Array.from({ length: elementCount(dims) }, () => (next() * 2 - 1) * scale));
}

/** Runs the module through execute (device arrays in and out) and the interpreter; returns the result and the run's stats. */
async function runBoth(exe: WebGpuExecutable, module: HloModule, args: readonly Literal[], rtol = 1e-5): Promise<{ got: Literal[]; readbacks: number; readbackBytes: number }> {
  const inputs = args.map((a) => exe.bufferFromLiteral(a));
  const outputs = await exe.execute(inputs);
  const { readbacks, readbackBytes } = exe.lastRun!;
  const got = await Promise.all(outputs.map((o) => o.toLiteral()));
  for (const a of [...inputs, ...outputs]) a.delete();
  const want = evaluate(module.entry, args);
  const wantLeaves = want.shape.kind === "tuple" ? want.elements : [want];
  assert.equal(got.length, wantLeaves.length);
  got.forEach((g, i) => assert.ok(literalsClose(g, wantLeaves[i]!, rtol, 1e-6), `${module.name} result ${i}: ${firstDifference(g, wantLeaves[i]!)}\n${exe.dump()}`));
  return { got, readbacks, readbackBytes };
}

/** The lines the dump prints directly under the nested list whose header starts with `role`. */
function nestedDump(dump: string, role: string): string[] {
  const lines = dump.split("\n");
  const start = lines.findIndex((l) => l.trimStart().startsWith(`${role} `) && l.includes("(nested steps"));
  assert.ok(start >= 0, `no nested list '${role}' in the dump:\n${dump}`);
  const depth = lines[start]!.search(/\S/);
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    const d = l.search(/\S/);
    if (d <= depth) break;
    if (d === depth + 2) out.push(l.trim());
  }
  return out;
}

// A fori loop: acc = 0.75 * acc + (x + i) for i < 150 (an s32 counter, an accumulator, an invariant input).
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

test("a fori loop runs its condition and body as GPU kernels, driven on the GPU: one u32 read back a batch of iterations", { skip }, async () => {
  const module = parseHlo(FORI);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    const dump = exe.dump();
    const body = nestedDump(dump, "body");
    assert.ok(body.length > 0 && body.every((l) => l.startsWith("kernel ")), dump);
    assert.ok(nestedDump(dump, "condition").every((l) => l.startsWith("kernel ")), dump);
    // The condition (i < 150) is one invocation: dispatched directly, past the loop's end too (it never writes the state).
    assert.match(dump, /while \S+: .*GPU-driven: batches of 1, 2, 4, \.\.\. up to 64 iterations, its body's kernels \(the condition's, one workgroup each, directly\).*the host reads back one u32 a batch/);
    // x passes through the body unchanged: its state is its operand's buffer, no copy.
    assert.match(dump, /next state [^;]*\(same\)/);
    for (const seed of [1, 2]) {
      const { got, readbacks, readbackBytes } = await runBoth(exe, module, [randomF32(seed, [256])]);
      assert.equal(got[0]!.readLinear(0), 150, "the loop ran 150 times");
      // Batches of 1, 2, ... 64 iterations (127 after seven), the eighth stops at 150: a 4-byte count each, nothing else reached the host.
      assert.equal(readbacks, 8);
      assert.equal(readbacks, gpuLoopBatches(150));
      assert.equal(readbackBytes, 4 * 8);
    }
  } finally {
    exe.delete();
  }
});

// Halves x until its squared norm falls below 1e-3: a data-dependent trip count, reductions in the condition (the
// rows' in 64 workgroups: the GPU-driven loop gates the condition's kernels too).
const UNTIL_SMALL = `HloModule until_small

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[64,32]) parameter(0)
  x = f32[64,32] get-tuple-element(p), index=1
  sq = f32[64,32] multiply(x, x)
  z = f32[] constant(0)
  rows = f32[64] reduce(sq, z), dimensions={1}, to_apply=add
  norm = f32[] reduce(rows, z), dimensions={0}, to_apply=add
  bound = f32[] constant(0.001)
  ROOT gt = pred[] compare(norm, bound), direction=GE
}

body {
  p = (s32[], f32[64,32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64,32] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[64,32] broadcast(h), dimensions={}
  x1 = f32[64,32] multiply(x, hb)
  ROOT t = (s32[], f32[64,32]) tuple(i1, x1)
}

ENTRY main {
  x = f32[64,32] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[64,32]) tuple(z, x)
  ROOT w = (s32[], f32[64,32]) while(t), condition=cond, body=body
}
`;

test("a data-dependent while (until a norm falls below a bound) runs on the GPU, one read a batch", { skip }, async () => {
  const module = parseHlo(UNTIL_SMALL);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    assert.ok(nestedDump(exe.dump(), "condition").every((l) => l.startsWith("kernel ")), exe.dump());
    // On a software adapter the condition's row sum (64 rows) runs a row an invocation: one workgroup, dispatched directly.
    assert.match(exe.dump(), /GPU-driven: batches of 1, 2, 4, \.\.\. up to 64 iterations, its (kernels|body's kernels \(the condition's, one workgroup each, directly\)) dispatched indirectly/);
    for (const [seed, scale] of [[3, 1], [4, 100]] as const) {
      const x = randomF32(seed, [64, 32], scale);
      // The trip count from float64: halving is exact, so the norm is the initial one over 4^k.
      let norm = x.values().reduce<number>((s, v) => s + Number(v) ** 2, 0);
      let trips = 0;
      while (norm >= 0.001) {
        norm /= 4;
        trips++;
      }
      const { got, readbacks } = await runBoth(exe, module, [x], 0);
      assert.equal(got[0]!.readLinear(0), trips);
      assert.equal(readbacks, gpuLoopBatches(trips));
    }
  } finally {
    exe.delete();
  }
});

const CONDITIONAL = `HloModule pick

b0 {
  p = f32[128] parameter(0)
  ROOT e = f32[128] exponential(p)
}

b1 {
  p = f32[128] parameter(0)
  ROOT n = f32[128] negate(p)
}

b2 {
  p = f32[128] parameter(0)
  ROOT m = f32[128] multiply(p, p)
}

twice {
  p = f32[128] parameter(0)
  ROOT s = f32[128] add(p, p)
}

ENTRY main {
  k = s32[] parameter(0)
  x = f32[128] parameter(1)
  c = f32[128] conditional(k, x, x, x), branch_computations={b0, b1, b2}
  ROOT r = f32[128] call(c), to_apply=twice
}
`;

test("a conditional of kernels is decided on the GPU (no readback) and runs the chosen branch; the call is inlined (a kernel)", { skip }, async () => {
  const module = parseHlo(CONDITIONAL);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    const dump = exe.dump();
    assert.match(dump, /conditional \(s32\[\] \S+\) \S+: .*decided on the GPU: a gate kernel reads the selector .* all 3 branches' kernels are dispatched indirectly; nothing is read back/);
    for (const role of ["branch 0", "branch 1", "branch 2"]) assert.ok(nestedDump(dump, role).every((l) => l.startsWith("kernel ")), dump);
    const x = randomF32(5, [128]);
    // Index 7 is out of range: the last branch runs (the spec's rule).
    for (const [k, expect] of [[0, (v: number) => 2 * Math.exp(v)], [1, (v: number) => -2 * v], [2, (v: number) => 2 * v * v], [7, (v: number) => 2 * v * v]] as const) {
      const { got, readbacks, readbackBytes } = await runBoth(exe, module, [Literal.scalar("s32", k), x]);
      assert.equal(readbacks, 0);
      assert.equal(readbackBytes, 0);
      got[0]!.values().forEach((g, i) => assert.ok(Math.abs((g as number) - expect(x.values()[i] as number)) <= 1e-5 * Math.max(1, Math.abs(g as number)), `branch ${k} element ${i}`));
    }
  } finally {
    exe.delete();
  }
});

test("the plan without a device prints nested lists as GPU kernels and no host step", () => {
  const dump = dumpGpuProgram(planGpuProgram(parseHlo(FORI), {}));
  assert.match(dump, /0 host step\(s\)/);
  assert.ok(nestedDump(dump, "body").every((l) => l.startsWith("kernel ")), dump);
});

// A conditional inside a loop body, and an f64 add (which WGSL cannot compute) run on the host every iteration.
const NESTED = `HloModule nested

cond {
  p = (s32[], f32[16], f64[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

square {
  p = f32[16] parameter(0)
  ROOT m = f32[16] multiply(p, p)
}

halve {
  p = f32[16] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[16] broadcast(h), dimensions={}
  ROOT m = f32[16] multiply(p, hb)
}

body {
  p = (s32[], f32[16], f64[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[16] get-tuple-element(p), index=1
  d = f64[] get-tuple-element(p), index=2
  two = s32[] constant(2)
  parity = s32[] remainder(i, two)
  y = f32[16] conditional(parity, x, x), branch_computations={square, halve}
  step = f64[] constant(0.25)
  d1 = f64[] add(d, step)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[16], f64[]) tuple(i1, y, d1)
}

ENTRY main {
  x = f32[16] parameter(0)
  z = s32[] constant(0)
  d0 = f64[] constant(1)
  t = (s32[], f32[16], f64[]) tuple(z, x, d0)
  ROOT w = (s32[], f32[16], f64[]) while(t), condition=cond, body=body
}
`;

test("a conditional nested in a loop body runs on the GPU; an f64 add in the body runs on the host every iteration, listed under the body", { skip }, async () => {
  const module = parseHlo(NESTED);
  const exe = await compile(module, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted.map((s) => s.name), ["body/d1"], exe.dump());
    assert.match(exe.stats.interpreted[0]!.why, /f64/);
    // The host drives this loop: the dump says so and why (the first step it cannot gate).
    assert.match(exe.dump(), /while \S+: .*the host reads the predicate back once an iteration \(1 element\): its body has a host step \(d1\)/);
    const { got, readbacks } = await runBoth(exe, module, [randomF32(6, [16])]);
    assert.equal(got[0]!.readLinear(0), 5);
    assert.equal(got[2]!.readLinear(0), 2.25);
    // 6 predicates and the host add's operand d each iteration (its constant is not read back); the conditional reads nothing (decided on the GPU).
    assert.match(exe.dump(), /conditional \(s32\[\] \S+\) \S+: .*decided on the GPU/);
    assert.equal(readbacks, 6 + 5);
  } finally {
    exe.delete();
  }
});
