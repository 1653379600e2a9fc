// A crash inside generated C code is an error, not the end of the process (glue.ts's
// guard): a store through NULL and a division by zero raise a NativeFaultError naming
// the program and the kernel; the module stays poisoned; a fault on a pool thread is
// reported to the caller; WebAssembly's out-of-bounds traps (V8's own SIGSEGV handler,
// which the guard passes signals on to) still work; and in a client whose device 0
// crashes in generated code, device 1's results are delivered, in the same moment and
// afterwards.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../../src/compiler/index.js";
import { NativeFaultError } from "../../../src/types/errors.js";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { ALWAYS_PARALLEL_COST } from "../../../src/compiler/native/glue.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { add, arrayShape, ExecutionError, Literal, mul, parameter, tanh, XlaBuilder } from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import type { Computation } from "../../../src/ir/computation.js";
import { firstDifference } from "../literal_compare.js";
import {
  buildTestModule, DIVIDE_BY_ZERO, FAULT_BACKEND, FAULTY, NULL_STORE, NULL_STORE_PAST_FIRST_PART, testKernel,
} from "./fault_kernels.js";
import { needsCompiler } from "./native_support.js";


const toolchain = nativeToolchain();
const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

const memory = (): WebAssembly.Memory => new WebAssembly.Memory({ initial: 1 });

test("a kernel storing through NULL raises a NativeFaultError naming the program and kernel, and poisons its module", (t) => {
  if (!needsCompiler(t)) return;
  const m = buildTestModule([testKernel("null_store", NULL_STORE), testKernel("fine", "")], "crashing_program");
  let first: NativeFaultError | undefined;
  assert.throws(() => m.run(0, memory(), new Uint32Array([64]), 0, 4), (e: Error) => {
    assert.ok(e instanceof NativeFaultError && e instanceof ExecutionError);
    assert.equal(e.program, "crashing_program");
    assert.equal(e.kernel, "null_store");
    assert.match(e.message, /crashing_program: the native kernel null_store faulted: xk_test_null_store: SIGSEGV .* on thread 0 of 1, in units \[0, 4\)/);
    first = e;
    return true;
  });
  // Its other kernel too: the module's buffers may hold a partial write.
  assert.throws(() => m.run(1, memory(), new Uint32Array([64]), 0, 4), (e: Error) => e === first);
  // Another module runs.
  const ok = buildTestModule([testKernel("fine", "")], "healthy_program");
  const mem = memory();
  ok.run(0, mem, new Uint32Array([64]), 0, 4);
  assert.deepEqual([...new Float32Array(mem.buffer, 64, 4)], [0, 1, 2, 3]);
});

test("a fault in a call list names the kernel whose call faulted, not the list's first", (t) => {
  if (!needsCompiler(t)) return;
  const m = buildTestModule([testKernel("null_store", NULL_STORE), testKernel("fine", "")], "listed_program");
  const mem = memory();
  const calls = m.prepareCalls([{ rows: 4, block: 4, members: [{ kernel: 1, timeSlot: 0, pointers: [64] }, { kernel: 0, timeSlot: 1, pointers: [64] }] }], { memory: mem, threads: 1, scratchOffsets: [] });
  assert.throws(() => calls.run(), (e: Error) => e instanceof NativeFaultError && e.kernel === "null_store" && /listed_program: the native kernel null_store faulted/.test(e.message));
  // The call before it ran.
  assert.deepEqual([...new Float32Array(mem.buffer, 64, 4)], [0, 1, 2, 3]);
  assert.throws(() => calls.run(), NativeFaultError);
});

test("an integer division by zero (SIGFPE) is a NativeFaultError", (t) => {
  if (!needsCompiler(t) || typeof toolchain === "string") return;
  if (toolchain.cpu.arch !== "x86_64") { t.skip("only x86 raises SIGFPE for an integer division by zero"); return; }
  const m = buildTestModule([testKernel("divide_by_zero", DIVIDE_BY_ZERO)], "dividing_program");
  assert.throws(() => m.run(0, memory(), new Uint32Array([64]), 0, 4), /dividing_program: the native kernel divide_by_zero faulted: .*SIGFPE/);
});

test("a fault on a pool thread is reported to the caller, after every thread has finished", (t) => {
  if (!needsCompiler(t)) return;
  const extent = 1 << 16;
  // Large enough per unit that every call splits across the pool (no timing of itself alone).
  const m = buildTestModule([testKernel("pool_fault", NULL_STORE_PAST_FIRST_PART, extent, ALWAYS_PARALLEL_COST / extent)], "threaded_program");
  const mem = new WebAssembly.Memory({ initial: 8 });
  assert.throws(() => m.run(0, mem, new Uint32Array([64]), 0, extent, 2), (e: Error) => {
    assert.ok(e instanceof NativeFaultError);
    // Each thread claims its own two quarters of the units first, then what is left: either may fault.
    assert.match(e.message, /SIGSEGV \(invalid memory access\) at address 0x10, on thread [01] of 2/);
    return true;
  });
  // The range at unit 0, which does not fault, ran to its end.
  const firstRange = new Float32Array(mem.buffer, 64, extent / 4);
  assert.equal(firstRange[extent / 4 - 1], extent / 4 - 1);
});

test("a fault in a row group split over the pool names the kernel and the group's part, after every part has finished", (t) => {
  if (!needsCompiler(t)) return;
  const extent = 1 << 16;
  // Two kernels over the same rows in blocks, costly enough that the group always splits as one call.
  const cost = ALWAYS_PARALLEL_COST / extent;
  const m = buildTestModule([testKernel("group_fault", NULL_STORE_PAST_FIRST_PART, extent, cost), testKernel("group_fine", "", extent, cost)], "grouped_program");
  const mem = new WebAssembly.Memory({ initial: 8 });
  const members = [{ kernel: 1, timeSlot: 0, pointers: [64] }, { kernel: 0, timeSlot: 1, pointers: [64] }];
  const calls = m.prepareCalls([{ rows: extent, block: extent / 8, members }], { memory: mem, threads: 2, scratchOffsets: [] });
  assert.throws(() => calls.run(), (e: Error) => {
    assert.ok(e instanceof NativeFaultError && e.kernel === "group_fault", String(e));
    assert.match(e.message, /SIGSEGV \(invalid memory access\) at address 0x10, .*\(part [01] of 2 of a row group split over threads\)/);
    return true;
  });
  // The group's first block, which does not fault, ran through both kernels.
  const firstBlock = new Float32Array(mem.buffer, 64, extent / 8);
  assert.equal(firstBlock[extent / 8 - 1], extent / 8 - 1);
});

// (module (memory 1) (func (export "f") (result i32) (i32.load (i32.const 0x80000000))))
const OUT_OF_BOUNDS = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7f, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 5, 1, 1, 0x66, 0, 0,
  10, 13, 1, 11, 0, 0x41, 0x80, 0x80, 0x80, 0x80, 0x78, 0x28, 2, 0, 0x0b,
]);

test("WebAssembly's out-of-bounds accesses still trap as RuntimeErrors once the guard is installed and a kernel has faulted", (t) => {
  if (!needsCompiler(t)) return;
  const m = buildTestModule([testKernel("null_store_again", NULL_STORE)], "crashing_again");
  assert.throws(() => m.run(0, memory(), new Uint32Array([64]), 0, 4), NativeFaultError);
  const f = new WebAssembly.Instance(new WebAssembly.Module(OUT_OF_BOUNDS)).exports["f"] as () => number;
  for (let i = 0; i < 3; i++) assert.throws(() => f(), (e: Error) => e instanceof WebAssembly.RuntimeError && /out of bounds/.test(e.message));
  // And a compiled program on the wasm backend computes.
  const c = tanhProgram("after_faults", 64);
  const x = input(64);
  const exe = compileSync(c, { backend: "wasm" });
  try {
    assert.equal(firstDifference(evaluate(c, [x]), exe.run([x]), close), undefined);
  } finally {
    exe.delete();
  }
});

function tanhProgram(name: string, n: number): Computation {
  const b = new XlaBuilder(name);
  const x = parameter(b, 0, arrayShape("f32", [n]));
  return b.build(tanh(add(mul(x, x), x)));
}

const input = (n: number): Literal => Literal.fromValues("f32", [n], Array.from({ length: n }, (_, i) => (i - n / 2) / 16));
const close = (p: unknown, q: unknown): boolean => Math.abs((p as number) - (q as number)) <= 4e-7 * Math.max(1, Math.abs(p as number));

test("in a client, a device crashing in generated code fails its run with the fault while the other device's results are delivered", async (t) => {
  if (!needsCompiler(t)) return;
  const client = await createClient({ backend: FAULT_BACKEND, deviceCount: 2, collectiveTimeoutMs: 5000 });
  clients.push(client);
  const n = 256;
  const good = tanhProgram("good", n);
  const faulty = new XlaBuilder(FAULTY);
  const crash = faulty.build(parameter(faulty, 0, arrayShape("f32", [n])));
  const x = input(n);
  const want = evaluate(good, [x]);
  // Device 0 runs the crashing program; meanwhile device 1 runs the good one on its own.
  const solo = await client.compile(good, { deviceAssignment: [[1]] });
  const [crashed, delivered] = await Promise.allSettled([client.run([[crash], [good]], [[x], [x]]), client.execute(solo, [[x]])]);
  assert.equal(crashed.status, "rejected");
  // The device's NativeFaultError, rebuilt on this side of the worker boundary with its fields.
  const reason = (crashed as PromiseRejectedResult).reason as unknown;
  assert.ok(reason instanceof NativeFaultError && reason instanceof ExecutionError, String(reason));
  assert.equal(reason.program, "faulty");
  assert.equal(reason.kernel, "device_null_store");
  assert.match(reason.message, /^faulty: the native kernel device_null_store faulted: .*SIGSEGV/);
  assert.equal(delivered.status, "fulfilled");
  const got = await (delivered as PromiseFulfilledResult<Awaited<ReturnType<Client["execute"]>>>).value[0]!.toLiteral();
  assert.equal(firstDifference(want, got, close), undefined);
  // Both devices go on computing.
  const again = await client.run([[good], [good]], [[x], [x]]);
  for (const r of again) assert.equal(firstDifference(want, r, close), undefined);
  solo.delete();
});
