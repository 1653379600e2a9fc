// While loops driven on the GPU (gpu_control.ts): iterations encoded in batches of 1, 2,
// 4, ... 64, each kernel dispatched with workgroup counts a gate kernel writes from the
// condition's pred, one u32 (the bodies a batch ran) read back a batch. Every result is
// compared bit for bit with the interpreter's and with the same program driven by the
// host (XLATS_WEBGPU_GPU_LOOPS=0: one pred read back an iteration), and where the
// value is known independently (trip counts, sums of exact f32 values) with it; the
// readbacks are counted (executable.lastRun).
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
import { DeadlineError } from "../../../src/types/errors.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import type { HloModule } from "../../../src/ir/computation.js";
import { firstDifference } from "../literal_compare.js";

const skip = webgpuSkip;

after(() => releaseGpu());

/** The module compiled twice: its loops driven on the GPU where they can be, and every loop driven by the host. */
async function compileBoth(module: HloModule): Promise<{ gpu: WebGpuExecutable; host: WebGpuExecutable }> {
  const gpu = await compile(module, { backend: "webgpu" });
  process.env["XLATS_WEBGPU_GPU_LOOPS"] = "0";
  try {
    return { gpu, host: await compile(module, { backend: "webgpu" }) };
  } finally {
    delete process.env["XLATS_WEBGPU_GPU_LOOPS"];
  }
}

/**
 * Runs the GPU-driven executable, the host-driven one (unless `host` is false: its round
 * trip an iteration is slow on SwiftShader) and the interpreter; asserts they agree bit
 * for bit; the results' leaves and each executable's readbacks.
 */
async function runAll(
  exes: { gpu: WebGpuExecutable; host: WebGpuExecutable }, module: HloModule, args: readonly Literal[], host = true,
): Promise<{ got: Literal[]; gpuReads: number; hostReads: number | undefined }> {
  const want = evaluate(module.entry, args);
  const wantLeaves = want.shape.kind === "tuple" ? want.elements : [want];
  const reads: number[] = [];
  let got: Literal[] = [];
  for (const exe of host ? [exes.gpu, exes.host] : [exes.gpu]) {
    const r = await exe.run(args);
    got = r.shape.kind === "tuple" ? [...r.elements] : [r];
    reads.push(exe.lastRun!.readbacks);
    assert.equal(got.length, wantLeaves.length);
    got.forEach((g, i) => {
      const difference = firstDifference(g, wantLeaves[i]!);
      assert.equal(difference, undefined, `${module.name} result ${i}: ${difference}\n${exe.dump()}`);
    });
  }
  return { got, gpuReads: reads[0]!, hostReads: reads[1] };
}

const C = Array.from({ length: 10 }, (_, k) => 0.25 * (k + 1) - 1);

// Seed 000's While: {iteration, vector} from {0, zeros}; while iteration < 1000, add 1 and a constant vector.
const SEED_WHILE = `HloModule seed_while

cond {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  c = f32[10] constant({${C.join(", ")}})
  v1 = f32[10] add(v, c)
  ROOT t = (s32[], f32[10]) tuple(i1, v1)
}

ENTRY main {
  z = s32[] constant(0)
  f = f32[] constant(0)
  zeros = f32[10] broadcast(f), dimensions={}
  t = (s32[], f32[10]) tuple(z, zeros)
  ROOT w = (s32[], f32[10]) while(t), condition=cond, body=body
}
`;

test("seed 000's While (1000 iterations adding a vector) runs GPU-driven: 21 reads instead of 1001, the interpreter's bits", { skip }, async () => {
  const module = parseHlo(SEED_WHILE);
  const exes = await compileBoth(module);
  try {
    assert.match(exes.gpu.dump(), /while \S+: .*GPU-driven: batches of 1, 2, 4, \.\.\. up to 64 iterations/);
    assert.match(exes.host.dump(), /while \S+: .*the host reads the predicate back once an iteration \(1 element\): control flow decided on the GPU is off/);
    // The host-driven run's 1001 round trips take seconds on SwiftShader: its bits are compared on the shorter loops below.
    const { got, gpuReads } = await runAll(exes, module, [], false);
    assert.equal(got[0]!.readLinear(0), 1000);
    // Each partial sum k*c is a multiple of 1/4 below 2^13: exact in f32.
    assert.deepEqual(got[1]!.values(), C.map((c) => 1000 * c + 0));
    assert.equal(gpuReads, 21);
    assert.equal(gpuReads, gpuLoopBatches(1000));
  } finally {
    exes.gpu.delete();
    exes.host.delete();
  }
});

// i counts to n (a parameter: the trip count is data); the body also moves the old sum to `prev` (a copy kernel, gated too).
const COUNTED = `HloModule counted

cond {
  p = (s32[], s32[], f32[10], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], s32[], f32[10], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  v = f32[10] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  c = f32[10] constant({${C.join(", ")}})
  v1 = f32[10] add(v, c)
  ROOT t = (s32[], s32[], f32[10], f32[10]) tuple(i1, n, v1, v)
}

ENTRY main {
  n = s32[] parameter(0)
  prev = f32[10] parameter(1)
  z = s32[] constant(0)
  f = f32[] constant(0)
  zeros = f32[10] broadcast(f), dimensions={}
  t = (s32[], s32[], f32[10], f32[10]) tuple(z, n, zeros, prev)
  ROOT w = (s32[], s32[], f32[10], f32[10]) while(t), condition=cond, body=body
}
`;

test("a trip count from a parameter: 0, 1, 2 and around the batches' ends (63, 64, 65 and the first 64-iteration batch's 126, 127, 128) give the interpreter's bits", { skip }, async () => {
  const module = parseHlo(COUNTED);
  const exes = await compileBoth(module);
  try {
    assert.match(exes.gpu.dump(), /GPU-driven/);
    const prev = Literal.fromValues("f32", [10], C.map((c) => -c));
    for (const n of [-3, 0, 1, 2, 3, 63, 64, 65, 126, 127, 128]) {
      const { got, gpuReads, hostReads } = await runAll(exes, module, [Literal.scalar("s32", n), prev], n <= 3);
      const trips = Math.max(0, n);
      assert.equal(got[0]!.readLinear(0), trips, `n=${n}`);
      // Sums from +0 (adding +0 makes a product's -0 the sum's +0).
      assert.deepEqual(got[2]!.values(), C.map((c) => trips * c + 0), `n=${n}`);
      assert.deepEqual(got[3]!.values(), C.map((c) => (trips === 0 ? -c : (trips - 1) * c + 0)), `n=${n}`);
      assert.equal(gpuReads, gpuLoopBatches(trips), `n=${n}`);
      if (hostReads !== undefined) assert.equal(hostReads, trips + 1, `n=${n}`);
    }
  } finally {
    exes.gpu.delete();
    exes.host.delete();
  }
});

// An outer loop whose inner loop runs 3i+1 times in outer iteration i: both GPU-driven, the inner unrolled into the outer's batches.
const NESTED = `HloModule nested_loops

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

outer_cond {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  three = s32[] constant(3)
  one = s32[] constant(1)
  i3 = s32[] multiply(i, three)
  m = s32[] add(i3, one)
  z = s32[] constant(0)
  t0 = (s32[], s32[], f32[10]) tuple(z, m, v)
  w = (s32[], s32[], f32[10]) while(t0), condition=inner_cond, body=inner_body
  v1 = f32[10] get-tuple-element(w), index=2
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[10]) tuple(i1, v1)
}

ENTRY main {
  x = f32[10] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[10]) tuple(z, x)
  ROOT w = (s32[], f32[10]) while(t), condition=outer_cond, body=outer_body
}
`;

test("a runaway loop stops at the run's deadline with a DeadlineError, GPU-driven and host-driven alike", { skip, timeout: 60_000 }, async () => {
  const module = parseHlo(COUNTED);
  const exes = await compileBoth(module);
  try {
    // 2^31 - 1 trips: far more than 150 ms holds on any device.
    const args = [Literal.scalar("s32", 2147483647), Literal.fromValues("f32", [10], C)];
    for (const exe of [exes.gpu, exes.host]) {
      const started = Date.now();
      await assert.rejects(exe.run(args, { deadline: started + 150 }), (e) => e instanceof DeadlineError && /passed its deadline/.test(e.message));
      assert.ok(Date.now() - started < 20_000, "stopped soon after its deadline");
    }
  } finally {
    exes.gpu.delete();
    exes.host.delete();
  }
});

test("nested loops: the inner loop is unrolled into the outer's batches;  a batch where it needed more bodies is encoded again, one 16-byte read a batch", { skip }, async () => {
  const module = parseHlo(NESTED);
  const exes = await compileBoth(module);
  try {
    const dump = exes.gpu.dump();
    assert.match(dump, /^while \S+: .*GPU-driven: .*the host reads back one u32 a batch \(the bodies run\) and one more \(whether a loop in it needed more bodies/m);
    assert.match(dump, /^\s+while \S+: .*unrolled into the enclosing GPU-driven loop's batch: an enter gate, 8 iterations each time it is reached/m);
    const x = Literal.fromValues("f32", [10], C.map((c) => 2 * c));
    const inner = [1, 4, 7, 10];
    for (const round of [0, 1]) {
      const { got, gpuReads, hostReads } = await runAll(exes, module, [x], round === 0);
      assert.deepEqual(got[1]!.values(), C.map((c) => 24 * c));
      const stats = exes.gpu.lastRun!;
      // The outer loop's batches of 1, 2 and 4 iterations; in the first run the fourth outer iteration's inner loop (10 bodies) needs more than 8: that batch again, with 16.
      assert.equal(stats.reencodedBatches, round === 0 ? 1 : 0);
      assert.equal(gpuReads, 3 + stats.reencodedBatches);
      // Every read is a batch's report (the inner loop's most bodies, the flag, the count, the abort word): nothing of the inner loop is read back.
      assert.equal(stats.readbackBytes, 16 * gpuReads);
      // Read back by the host: five outer preds, and every inner pred.
      if (hostReads !== undefined) assert.equal(hostReads, 5 + inner.reduce((s, m) => s + m + 1, 0));
    }
  } finally {
    exes.gpu.delete();
    exes.host.delete();
  }
});

test("the plan says which loops the GPU drives without a device; XLATS_WEBGPU_GPU_LOOPS=0 turns them off", () => {
  const on = planGpuProgram(parseHlo(NESTED), {});
  assert.equal(on.control.loops.size, 2);
  assert.equal(on.control.hostDecided.size, 0);
  assert.match(dumpGpuProgram(on), /GPU-driven: batches of 1, 2, 4, \.\.\. up to 45 iterations, its body's kernels \(the condition's, one workgroup each, directly\) dispatched indirectly .* \(1 workgroup shape\(s\)\)/);
  process.env["XLATS_WEBGPU_GPU_LOOPS"] = "0";
  try {
    const off = planGpuProgram(parseHlo(NESTED), {});
    assert.equal(off.control.loops.size, 0);
    assert.equal(off.control.controlWords, 0);
    assert.doesNotMatch(dumpGpuProgram(off), /GPU-driven:/);
  } finally {
    delete process.env["XLATS_WEBGPU_GPU_LOOPS"];
  }
});
