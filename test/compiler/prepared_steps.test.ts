// The executor prepares each kernel's arguments once per step list (executable.ts's
// runnableSteps: the constants' and scratch's offsets written, the rest patched from the
// run's parameters, outputs and arena before each call). These runs move every buffer
// the patches depend on: each run's arguments and results at new offsets (earlier runs'
// buffers kept alive, holding earlier values, so a stale offset reads a wrong answer),
// a donated parameter whose buffer holds temporaries, a while loop whose body's state
// alternates between two sets of buffers and reads a passed-through parameter, a row
// group, a GEMM; on one thread, on a device's pool, on the native backend's call lists,
// and through executeAt. Every run is checked against the interpreter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate, Literal } from "../../src/index.js";
import { compile, WasmDevice, type DeviceArray, type Executable } from "../../src/compiler/index.js";
import type { HloModule } from "../../src/ir/computation.js";
import { parseHlo } from "../../src/text/hlo/index.js";
import { rng } from "../support/prng.js";
import { nativeSkipReason } from "./native/gemm_harness.js";
import { separateFusionsPipeline } from "../support/pipelines.js";
import { elementCount } from "../../src/types/shape.js";

// x + d feeds a GEMM with w; its rows' softmax (a row group: its fusions kept apart); a loop of three iterations
// over (counter, state, w2), the body a GEMM with the passed-through w2 and a fusion. d is
// donated and no result has its shape: its buffer holds temporaries.
const PROGRAM = `HloModule prepared_steps

max_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[48,40], f32[40,40]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[48,40], f32[40,40]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[48,40] get-tuple-element(p), index=1
  w2 = f32[40,40] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  hw = f32[48,40] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[48,40] tanh(hw)
  h1 = f32[48,40] add(t, h)
  ROOT r = (s32[], f32[48,40], f32[40,40]) tuple(i1, h1, w2)
}

ENTRY main {
  x = f32[48,72] parameter(0)
  w = f32[72,40] parameter(1)
  d = f32[48,72] parameter(2)
  w2 = f32[40,40] parameter(3)
  xd = f32[48,72] add(x, d)
  h = f32[48,40] dot(xd, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  m = f32[48] reduce(h, ninf), dimensions={1}, to_apply=max_f
  mb = f32[48,40] broadcast(m), dimensions={0}
  c = f32[48,40] subtract(h, mb)
  e = f32[48,40] exponential(c)
  zero = f32[] constant(0)
  s = f32[48] reduce(e, zero), dimensions={1}, to_apply=add_f
  sb = f32[48,40] broadcast(s), dimensions={0}
  sm = f32[48,40] divide(e, sb)
  i0 = s32[] constant(0)
  init = (s32[], f32[48,40], f32[40,40]) tuple(i0, h, w2)
  loop = (s32[], f32[48,40], f32[40,40]) while(init), condition=cond, body=body
  acc = f32[48,40] get-tuple-element(loop), index=1
  ROOT out = (f32[48,40], f32[48,40]) tuple(sm, acc)
}
`;

const DONATED = 2;
const OPTIONS = (device: WasmDevice) => ({ device, donate: [DONATED], passes: separateFusionsPipeline() });

function randomArgs(module: HloModule, seed: number): Literal[] {
  const next = rng(seed);
  return module.entry.parameters.map((p) => {
    const s = p.shape.kind === "array" ? p.shape : undefined;
    assert.ok(s !== undefined);
    const n = elementCount(s.dimensions);
    return Literal.fromValues("f32", s.dimensions, Array.from({ length: n }, () => next() - 0.5));
  });
}

function assertInterpreter(module: HloModule, args: readonly Literal[], got: readonly Literal[], what: string, dump: () => string): void {
  const want = evaluate(module.entry, args);
  assert.equal(want.shape.kind, "tuple");
  want.elements.forEach((w, j) => {
    const g = got[j]!.toNumbers(), e = w.toNumbers();
    const bad = e.findIndex((v, i) => !(Math.abs(g[i]! - v) <= 1e-5 * Math.max(1, Math.abs(v))));
    assert.ok(bad < 0, `${what}: result ${j} element ${bad}: ${g[bad]} vs ${e[bad]}\n${dump()}`);
  });
}

/** What the program must exercise for the runs to test the prepared steps. */
function assertShape(exe: Executable): void {
  const steps = exe.program.steps;
  assert.ok(steps.some((s) => s.kind === "group"), `a row group:\n${exe.dump()}`);
  assert.ok(steps.some((s) => s.kind === "while"), `a while loop:\n${exe.dump()}`);
  const donation = exe.stats.donation.find((d) => d.parameterLeaf === DONATED);
  assert.ok(donation !== undefined && donation.output === undefined && donation.temporaries > 0, `temporaries in the donated buffer: ${JSON.stringify(exe.stats.donation)}`);
}

/** One run of exe on device arrays: `execute`, or `executeAt` on the arrays' offsets and new result arrays'. */
type Call = (exe: Executable, arrays: readonly DeviceArray[]) => DeviceArray[];

// A loop whose counter a stale offset no longer reaches would run forever: a deadline ends it.
const deadline = (): { deadline: number } => ({ deadline: Date.now() + 20_000 });

const viaExecute: Call = (exe, arrays) => {
  const outputs = exe.execute(arrays, deadline());
  assert.ok(arrays[DONATED]!.isDeleted, "the donated argument was consumed");
  return outputs;
};

const viaExecuteAt: Call = (exe, arrays) => {
  const outputs = exe.program.outputs.map((s) => exe.device.allocate(s));
  exe.executeAt(arrays.map((a) => a.offset), outputs.map((o) => o.offset), deadline());
  return outputs;
};

/**
 * Runs `exe` four times, each argument and result at an offset no earlier run gave it (the
 * earlier runs' buffers kept alive, except a donated array, which the run consumes).
 */
function runsAtNewOffsets(exe: Executable, module: HloModule, what: string, call: Call = viaExecute): void {
  const device = exe.device;
  const kept: DeviceArray[] = [];
  // Each argument's and result's offsets so far: a stale offset reads what an earlier run's buffer holds (or another buffer's now).
  const seen = new Map<string, Set<number>>();
  const fresh = (offset: number, name: string): void => {
    const offsets = seen.get(name) ?? new Set<number>();
    assert.ok(!offsets.has(offset), `${what}: ${name} at ${offset} again: the run would not show a stale offset`);
    seen.set(name, offsets.add(offset));
  };
  for (let run = 0; run < 4; run++) {
    // A spacer of another size each run, so that the donated array (freed by the last run) lands elsewhere too.
    kept.push(device.bufferFromLiteral(Literal.fromValues("f32", [64 * (run + 1)], new Array<number>(64 * (run + 1)).fill(0))));
    const args = randomArgs(module, 100 + run);
    const arrays = args.map((a) => device.bufferFromLiteral(a));
    arrays.forEach((a, i) => fresh(a.offset, `argument ${i}`));
    const outputs = call(exe, arrays);
    outputs.forEach((o, j) => fresh(o.offset, `result ${j}`));
    assertInterpreter(module, args, outputs.map((o) => o.toLiteral()), `${what}, run ${run}`, () => exe.dump());
    for (const a of [...arrays, ...outputs]) if (!a.isDeleted) kept.push(a);
  }
  for (const a of kept) a.delete();
}

test("wasm on one thread: kernels called from prepared argument lists, patched for every run's buffers", async () => {
  const module = parseHlo(PROGRAM);
  const device = new WasmDevice();
  const exe = await compile(module, OPTIONS(device));
  assertShape(exe);
  runsAtNewOffsets(exe, module, "wasm");
  // executeAt runs the same prepared steps.
  runsAtNewOffsets(exe, module, "wasm, executeAt", viaExecuteAt);
  exe.delete();
});

test("wasm on a device's thread pool: the pool's members patched for every run's buffers", async () => {
  const module = parseHlo(PROGRAM);
  const device = await WasmDevice.create({ threads: 2 });
  try {
    const exe = await compile(module, OPTIONS(device));
    assertShape(exe);
    runsAtNewOffsets(exe, module, "wasm, 2 threads");
    exe.delete();
  } finally {
    await device.close();
  }
});

test("native: call lists patched for every run's buffers", { skip: nativeSkipReason() }, async () => {
  const module = parseHlo(PROGRAM);
  const device = new WasmDevice();
  const exe = await compile(module, { ...OPTIONS(device), backend: "native" });
  assertShape(exe);
  runsAtNewOffsets(exe, module, "native");
  exe.delete();
});
