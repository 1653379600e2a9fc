// Parameter donation on the WebGPU backend (compile's `donate`, as the CPU backends
// honour it: test/compiler/donation.test.ts): a result written into the donated
// parameter's buffer, the donated array invalid afterwards with the CPU backends'
// error, results equal to the interpreter's, a training loop fed its own results.
//
// Skipped, saying so, where neither the `webgpu` package nor SwiftShader's Vulkan
// driver is installed (as webgpu.test.ts).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { webgpuSkip } from "./gpu_available.js";
import { compile } from "../../../src/compiler/index.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { dumpGpuProgram } from "../../../src/compiler/webgpu/executable.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import {
  Literal, XlaBuilder, add, arrayShape, constantR0, evaluate, mul, parameter, reduce, scalarShape, sub, tuple, type Computation,
} from "../../../src/index.js";
import { CompileError, ExecutionError } from "../../../src/types/errors.js";
import { rng } from "../../support/prng.js";

const skip = webgpuSkip;

after(() => releaseGpu());

const random = rng(91);
const vector = (n: number): Literal => Literal.fromValues("f32", [n], Array.from({ length: n }, () => random() - 0.5));

function assertClose(got: readonly Literal[], want: Literal, tol = 1e-5): void {
  const w = want.shape.kind === "tuple" ? want.elements : [want];
  assert.equal(got.length, w.length);
  w.forEach((x, j) => {
    const a = got[j]!.toNumbers(), e = x.toNumbers();
    e.forEach((v, i) => assert.ok(Math.abs(a[i]! - v) <= tol * Math.max(1, Math.abs(v)), `result ${j} element ${i}: ${a[i]} vs ${v}`));
  });
}

/** A gradient step on weights w: (loss = sum((w·x - t)²), w - 0.1·2(w·x - t)·x), elementwise. */
function step(n: number): Computation {
  const b = new XlaBuilder("gpu_step");
  const x = parameter(b, 0, arrayShape("f32", [n]), "x");
  const t = parameter(b, 1, arrayShape("f32", [n]), "t");
  const w = parameter(b, 2, arrayShape("f32", [n]), "w");
  const err = sub(mul(w, x), t);
  const sum = b.createSubBuilder("sum");
  const adder = sum.build(add(parameter(sum, 0, scalarShape("f32")), parameter(sum, 1, scalarShape("f32"))));
  const loss = reduce(mul(err, err), constantR0(b, "f32", 0), adder, [0]);
  const w1 = sub(w, mul(mul(err, x), constantR0(b, "f32", 0.2)));
  return b.build(tuple(b, [loss, w1]));
}

test("donated weights: the update is written into their buffer, the donated array is invalid, a loop of steps matches the interpreter", { skip }, async () => {
  const c = step(4096);
  const exe = await compile(c, { backend: "webgpu", donate: [2] });
  try {
    assert.match(exe.dump(), /donated parameter2: holds output1/);
    const args = [vector(4096), vector(4096), vector(4096)];
    // run() donates its own copies: the literals stay the caller's, and two runs agree.
    assertClose([await exe.run(args)].flatMap((l) => l.elements), evaluate(c, args));
    assertClose([await exe.run(args)].flatMap((l) => l.elements), evaluate(c, args));

    const [x, t] = [exe.bufferFromLiteral(args[0]!), exe.bufferFromLiteral(args[1]!)];
    let w = exe.bufferFromLiteral(args[2]!);
    let want = args[2]!;
    for (let i = 0; i < 3; i++) {
      const before = w;
      const results = await exe.execute([x, t, w]);
      const expected = evaluate(c, [args[0]!, args[1]!, want]);
      assertClose(await Promise.all(results.map((r) => r.toLiteral())), expected);
      assert.equal(results[1]!.offset, before.offset, "the new weights live in the donated buffer");
      assert.ok(before.isDeleted && !x.isDeleted && !t.isDeleted);
      await assert.rejects(before.toLiteral(), (e: unknown) => e instanceof ExecutionError && /donated to an execution of gpu_step \(its buffer is no longer the caller's\)/.test(e.message));
      await assert.rejects(exe.execute([x, t, before]), (e: unknown) => e instanceof ExecutionError && /donated to an execution of gpu_step/.test(e.message));
      results[0]!.delete();
      w = results[1]!;
      want = expected.elements[1]!;
    }
    for (const a of [x, t, w]) a.delete();
  } finally {
    exe.delete();
  }
});

test("a donated array passed twice is refused (and stays the caller's); donate names a parameter that exists", { skip }, async () => {
  const b = new XlaBuilder("twice");
  const c = b.build(add(parameter(b, 0, arrayShape("f32", [8])), parameter(b, 1, arrayShape("f32", [8]))));
  const exe = await compile(c, { backend: "webgpu", donate: [0] });
  try {
    const a = exe.bufferFromLiteral(Literal.fromValues("f32", [8], [1, 2, 3, 4, 5, 6, 7, 8]));
    await assert.rejects(exe.execute([a, a]), (e: unknown) => e instanceof ExecutionError && /argument 0 is donated, so it cannot also be passed as argument 1/.test(e.message));
    assert.ok(!a.isDeleted);
    const other = exe.bufferFromLiteral(Literal.fromValues("f32", [8], [1, 1, 1, 1, 1, 1, 1, 1]));
    const [r] = await exe.execute([a, other]);
    // x + y written over x, element for element.
    assert.equal(r!.offset, a.offset);
    assert.deepEqual((await r!.toLiteral()).toNumbers(), [2, 3, 4, 5, 6, 7, 8, 9]);
    for (const d of [r!, other]) d.delete();
  } finally {
    exe.delete();
  }
  assert.throws(() => planGpuProgram(c, { donate: [2] }), CompileError);
});

test("a donated parameter returned as it is needs no copy and no new buffer (the plan, without a device)", () => {
  const b = new XlaBuilder("identity");
  const p = parameter(b, 0, arrayShape("f32", [64]));
  const c = b.build(tuple(b, [p, add(p, p)]));
  const dump = dumpGpuProgram(planGpuProgram(c, { donate: [0] }));
  assert.match(dump, /donated parameter0: holds output0/);
  assert.doesNotMatch(dump, /copy to result 0/);
});
