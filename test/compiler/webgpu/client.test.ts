// A runtime client on the webgpu backend: each device a worker thread with a GPUDevice
// of its own on the one adapter (SwiftShader here). Every collective is a host step on
// that backend (the device reads its operands back, meets its peers in shared memory,
// writes the result back), so each is checked against the interpreter's client on the
// same program and arguments: bit for bit, the inputs being integers or floats whose
// sums are exact. Around each collective there are GPU kernels (operands computed and
// results consumed on the GPU: the plan shows it). Then Shardy-
// partitioned programs run on the webgpu devices against the unsharded program on the
// interpreter (interpreter.run_parallel's conformance cases run on webgpu clients in
// test/conformance/stablehlo_webgpu.test.ts). One test runs in process: arguments in shared memory. And in
// headless Chromium with WebGPU on (where it is installed), two devices on Web Workers,
// each with its own GPUDevice, meet in an all-reduce.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startStaticServer } from "../../../tools/static_server.js";
import {
  add, allGather, arrayShape, compile, allReduce, allToAll, collectivePermute, constantR0, convertElementType, Literal, mul, parseStableHlo, partition, partitionId, reduceScatter,
  replicaId, runPartitioned, scalarReducer, broadcastInDim, type Computation,
} from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import { program, randomInts, rng, shape } from "../../runtime/helpers.js";
import { unsharded } from "../../sdy/partition/both_ways.js";
import { webgpuSkip } from "./gpu_available.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { planGpuProgram } from "../../../src/compiler/webgpu/program.js";
import { elementCount } from "../../../src/types/shape.js";

const DEVICES = 4;
let gpu: Client;
let reference: Client;
before(async () => {
  if (webgpuSkip !== false) return;
  // SwiftShader compiles pipelines slowly, and four devices compile theirs at once on a loaded machine: a generous timeout.
  gpu = await createClient({ backend: "webgpu", deviceCount: DEVICES, collectiveTimeoutMs: 240_000 });
  reference = await createClient({ backend: "interpreter", deviceCount: DEVICES });
});
after(async () => {
  await gpu?.close();
  await reference?.close();
  // This thread's own device (the in-process test's, the check runner's one-device cases).
  await releaseGpu();
});

const skip = webgpuSkip === false ? false : webgpuSkip;
const ids = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Runs `c` on both clients with one argument list per process; every process's result equal bit for bit. */
async function sameOnBoth(c: Computation, args: readonly (readonly Literal[])[], options: { replicas?: number; partitions?: number }): Promise<Literal[]> {
  const got = await gpu.run(c, args, options);
  const want = await reference.run(c, args, options);
  got.forEach((g, i) => {
    assert.deepEqual(g.shape, want[i]!.shape, `process ${i}: shape`);
    assert.deepEqual(g.toNumbers(), want[i]!.toNumbers(), `process ${i}`);
  });
  return got;
}

/** s32 arguments [n] per process, drawn from `seed`. */
function intArgs(seed: number, dims: number[], processes = DEVICES): Literal[][] {
  const next = rng(seed);
  const n = elementCount(dims);
  return ids(processes).map(() => [Literal.fromValues("s32", dims, randomInts(next, n))]);
}

describe("collectives on webgpu devices equal the interpreter's", { skip }, () => {
  test("all-reduce between GPU kernels: (x*x + 1) summed over 4 replicas, then doubled", async () => {
    const c = program("ar", [shape("s32", [64])], (b, [x]) => {
      const y = add(mul(x!, x!), broadcastInDim(constantR0(b, "s32", 1), [64], []));
      const s = allReduce(y, scalarReducer(b, "add", "s32"));
      return add(s, s);
    });
    // The plan: the collective is the one host step, between GPU kernels.
    const plan = planGpuProgram(c, {});
    const hostSteps = plan.steps.filter((s) => s.kind === "host");
    assert.deepEqual(hostSteps.map((s) => s.kind === "host" && s.instruction.opcode), ["allReduce"]);
    assert.ok(plan.steps.indexOf(hostSteps[0]!) > 0 && plan.steps.at(-1)!.kind === "kernel", plan.steps.map((s) => s.kind).join(" "));
    const got = await sameOnBoth(c, intArgs(1, [64]), { replicas: DEVICES });
    // Independently: the sum over the devices' arguments, by hand.
    const args = intArgs(1, [64]).map(([l]) => l!.toNumbers());
    const want = args[0]!.map((_, i) => 2 * args.reduce((s, a) => s + a[i]! * a[i]! + 1, 0));
    assert.deepEqual(got[3]!.toNumbers(), want);
  });

  test("f32 all-reduce with a general reducer (max) and replica groups {0,2},{1,3}", async () => {
    const c = program("ar", [shape("f32", [5])], (b, [x]) => allReduce(mul(x!, x!), scalarReducer(b, "maximum", "f32"), { replicaGroups: [[0, 2], [1, 3]] }));
    const args = ids(DEVICES).map((d) => [Literal.fromValues("f32", [5], [d - 1.5, -d, 0.25 * d, -0, d * 3])]);
    await sameOnBoth(c, args, { replicas: DEVICES });
  });

  test("all-gather, reduce-scatter and all-to-all", async () => {
    const ag = program("ag", [shape("s32", [2, 3])], (_b, [x]) => allGather(mul(x!, x!), 1, DEVICES));
    await sameOnBoth(ag, intArgs(2, [2, 3]), { replicas: DEVICES });
    const rs = program("rs", [shape("s32", [8, 2])], (b, [x]) => reduceScatter(add(x!, x!), scalarReducer(b, "add", "s32"), 0, DEVICES));
    await sameOnBoth(rs, intArgs(3, [8, 2]), { replicas: DEVICES });
    const a2a = program("a2a", [shape("s32", [4, 4])], (_b, [x]) => allToAll(x!, 0, 1, DEVICES));
    await sameOnBoth(a2a, intArgs(4, [4, 4]), { replicas: DEVICES });
  });

  test("collective-permute (a ring, one device receiving nothing gets zeros) and replica/partition ids on 2x2", async () => {
    const cp = program("cp", [shape("s32", [6])], (_b, [x]) => collectivePermute(add(x!, x!), [[0, 1], [1, 2], [2, 0]]));
    const got = await sameOnBoth(cp, intArgs(5, [6]), { replicas: DEVICES });
    assert.deepEqual(got[3]!.toNumbers(), [0, 0, 0, 0, 0, 0]);
    const idc = program("ids", [shape("s32", [3])], (b, [x]) => {
      const r = broadcastInDim(convertElementType(replicaId(b), "s32"), [3], []);
      const p = broadcastInDim(convertElementType(partitionId(b), "s32"), [3], []);
      return add(mul(r, broadcastInDim(constantR0(b, "s32", 10), [3], [])), add(p, x!));
    });
    const out = await sameOnBoth(idc, ids(DEVICES).map(() => [Literal.fromValues("s32", [3], [0, 100, 200])]), { replicas: 2, partitions: 2 });
    assert.deepEqual(out.map((r) => r.toNumbers()[0]), [0, 1, 10, 11]);
  });

  test("device buffers in, results read back; a device's error rejects execute as the interpreter's client does", async () => {
    const c = program("ar", [shape("s32", [4])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "s32")));
    const exe = await gpu.compile(c, { replicas: 2 });
    const buffers = await Promise.all([0, 1].map((d) => gpu.bufferFromLiteral(Literal.fromValues("s32", [4], [d, 2 * d, 3, 4]), gpu.devices[d])));
    const results = await gpu.execute(exe, buffers.map((b) => [b]));
    for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), [1, 2, 6, 8]);
    for (const b of [...buffers, ...results]) b.delete();
    exe.delete();
    // A replica group naming a replica that does not exist: the devices' host step refuses it as the interpreter's kernel does.
    const bad = program("bad", [shape("s32", [2])], (b, [x]) => allReduce(add(x!, x!), scalarReducer(b, "add", "s32"), { replicaGroups: [[0, 5]] }));
    const args = [0, 1].map(() => [Literal.fromValues("s32", [2], [1, 2])]);
    const refusal = await reference.run(bad, args, { replicas: 2 }).then(() => undefined, (e: Error) => e);
    assert.ok(refusal instanceof Error);
    await assert.rejects(gpu.run(bad, args, { replicas: 2 }), (e: Error) => e.name === refusal.name && e.message === refusal.message);
  });
});

test("in process: arguments in shared memory (as a client's device workers get them) are copied to the GPU, not handed to Dawn", { skip }, async () => {
  // Dawn's writeBuffer crashed the process on a view of a SharedArrayBuffer.
  const c = program("twice", [shape("f32", [5])], (_b, [x]) => add(x!, x!));
  const exe = await compile(c, { backend: "webgpu" });
  try {
    const data = new Float32Array(new SharedArrayBuffer(20));
    data.set([1, -2, 0.5, 3, -0]);
    const out = await exe.run([Literal.fromStorage(arrayShape("f32", [5]), data)]);
    assert.deepEqual(out.toNumbers(), [2, -4, 1, 6, -0]);
  } finally {
    exe.delete();
  }
});

describe("Shardy-partitioned programs on webgpu devices equal the unsharded program", { skip }, () => {
  // One f32 product a device (a GEMM kernel), tanh and a row sum on the GPU, the sum's
  // all-reduce over "y" on the host. (The MLP training step of the CPU clients' tests has
  // six GEMM shapes, whose pipelines each of four devices compiles: minutes on SwiftShader.)
  test("a product, tanh and a row sum on a 2x2 mesh (rows over x, columns over y: an all-reduce of partial sums)", async () => {
    const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %w: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %1 = stablehlo.tanh %0 : tensor<8x6xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}`;
    const next = rng(5);
    const floats = (n: number): number[] => randomInts(next, n).map((v) => v / 64);
    const args = [Literal.fromValues("f32", [8, 4], floats(32)), Literal.fromValues("f32", [4, 6], floats(24))];
    const module = partition(parseStableHlo(text, "test.mlir"));
    assert.ok(module.entry.instructions.some((i) => i.opcode === "allReduce"), "the partitioned program all-reduces the partial sums");
    const [got] = await runPartitioned(gpu, module, args);
    const want = unsharded(text, args)[0]!.toNumbers();
    const scale = want.reduce((m, v) => Math.max(m, Math.abs(v)), 1);
    // tanh on the GPU is within its stated ulp bound, and the sums go in another order: 1e-5 of the largest value, as on the CPU client.
    got!.toNumbers().forEach((v, i) => assert.ok(Math.abs(v - want[i]!) / scale < 1e-5, `element ${i}: ${v} against ${want[i]}`));
  });

  test("an integer matmul on a 2x2 mesh, rows and columns sharded, is exact", async () => {
    const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %w: tensor<6x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<4x8xi32> {
  %0 = stablehlo.multiply %a, %a : tensor<4x6xi32>
  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<4x6xi32>, tensor<6x8xi32>) -> tensor<4x8xi32>
  return %1 : tensor<4x8xi32>
}`;
    const next = rng(9);
    const args = [Literal.fromValues("s32", [4, 6], randomInts(next, 24)), Literal.fromValues("s32", [6, 8], randomInts(next, 48))];
    const [got] = await runPartitioned(gpu, partition(parseStableHlo(text, "test.mlir")), args);
    assert.deepEqual(got!.toNested(), unsharded(text, args)[0]!.toNested());
  });
});

/** Debian's Chromium, where it is installed ($CHROMIUM first, as the browser test takes it). */
function chromiumPath(): string | undefined {
  for (const path of [process.env["CHROMIUM"], "/usr/bin/chromium"]) {
    if (path === undefined || path === "") continue;
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const browser = chromiumPath();
const browserSkip = skip !== false ? skip : browser === undefined ? "no Chromium here (test/browser/browser.test.ts says how to install it)" : false;

test("in headless Chromium: two webgpu devices on Web Workers, each opening the GPU itself, all-reduce", { skip: browserSkip }, async () => {
  const root = fileURLToPath(new URL("../../../../", import.meta.url));
  // Cross-origin isolated (SharedArrayBuffer, which the devices meet in); the test page's runModule runs the code.
  const server = await startStaticServer({ mounts: { "/dist/": join(root, "dist"), "/page/": join(root, "test/browser") }, index: "/page/page.html" });
  const profile = mkdtempSync(join(tmpdir(), "xlats-chromium-"));
  const args = ["--headless", "--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--ignore-gpu-blocklist"];
  const context = await chromium.launchPersistentContext(profile, { executablePath: browser!, args, headless: true });
  try {
    const page = await context.newPage();
    await page.goto(server.url);
    await page.waitForFunction("globalThis.xlatsTest !== undefined", undefined, { timeout: 60_000 });
    const code = `
      import { XlaBuilder, Literal, arrayShape, parameter, mul, allReduce, scalarReducer, createClient } from "${server.url}dist/src/browser.js";
      const b = new XlaBuilder("ar");
      const x = parameter(b, 0, arrayShape("s32", [4]), "x");
      const program = b.build(allReduce(mul(x, x), scalarReducer(b, "add", "s32")));
      const client = await createClient({ deviceCount: 2, backend: "webgpu", collectiveTimeoutMs: 240000 });
      try {
        const out = await client.run(program, [[Literal.from("s32", [1, 2, 3, 4])], [Literal.from("s32", [5, 6, 7, 8])]], { replicas: 2 });
        out.forEach((r, d) => console.log("device " + d + ": " + r.toString()));
      } finally {
        await client.close();
      }`;
    const run = await page.evaluate((c) => (globalThis as unknown as { xlatsTest: { runModule(c: string): Promise<{ lines: string[]; error?: string }> } }).xlatsTest.runModule(c), code);
    assert.equal(run.error, undefined);
    // 1+25, 4+36, 9+49, 16+64 on both devices.
    assert.deepEqual(run.lines, [0, 1].map((d) => `device ${d}: s32[4] {26, 40, 58, 80}`));
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
