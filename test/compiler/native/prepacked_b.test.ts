// Constant weights packed once: a GEMM kernel (native, or WebAssembly's plain dots) whose
// B is a constant of the program reads it in its panel layout, stored so when the program
// is planned (packB), instead of packing B on every call. Whole programs against the
// interpreter; the packer against a direct reading of its documented layout.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  Literal, XlaBuilder, add, arrayShape, constantLiteral, dot, dotGeneral, evaluate, max, parameter, constantR0, tuple,
  type Computation, type ElementType,
} from "../../../src/index.js";
import { compile } from "../../../src/compiler/index.js";
import { packB, packedBLength, type PackedB } from "../../../src/compiler/kernel/gemm_plan.js";
import { rng } from "../../support/prng.js";
import { ALWAYS_PARALLEL_COST, STREAMED_PARALLEL_COST } from "../../../src/compiler/native/glue.js";
import { nativeSkipReason } from "./gemm_harness.js";
import { elementCount } from "../../../src/types/shape.js";

const skip = nativeSkipReason();
const random = rng(24);

function randomLiteral(t: ElementType, dims: readonly number[]): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, Array.from({ length: n }, () => random() * 2 - 1));
}

/** Runs `c` on a backend and the interpreter; the kernels that read B pre-packed. */
async function check(c: Computation, k: number, backend: "native" | "wasm" = "native"): Promise<string[]> {
  const args = c.parameters.map((p) => randomLiteral(p.shape.kind === "array" ? p.shape.elementType : "f32", p.shape.kind === "array" ? p.shape.dimensions : []));
  const exe = await compile(c, { backend });
  const got = exe.run(args);
  const want = evaluate(c, args);
  const leaves = (l: Literal): readonly Literal[] => (l.shape.kind === "tuple" ? l.elements : [l]);
  leaves(want).forEach((w, o) => {
    const g = leaves(got)[o]!.toNumbers(), ws = w.toNumbers();
    const eps = w.shape.kind === "array" && w.shape.elementType === "f64" ? 2 ** -52 : 2 ** -23;
    for (let i = 0; i < ws.length; i++) {
      assert.ok(Math.abs(g[i]! - ws[i]!) <= 8 * eps * k * Math.max(1, Math.abs(ws[i]!)), `${c.name} output ${o} element ${i}: ${g[i]} vs ${ws[i]}`);
    }
  });
  assert.deepEqual(exe.stats.interpreted, []);
  return exe.dump().split("\n").filter((l) => l.includes("B pre-packed"));
}

test("packB: every element of B lands where the documented layout puts it, zero past the last column", () => {
  // B stored [n][k] (bK 1, bLine k), two batches; n = 19 in chunks of 12, cut into column
  // blocks of 8 (8 and 4 wide in the first chunk, 7 in the last, padded to 8), panels of 4;
  // k = 10 in blocks of 4.
  const l: PackedB = { elementType: "f32", batch: 2, k: 10, n: 19, nr: 4, kc: 4, chunk: 12, blockColumns: 8, bK: 1, bLine: 10 };
  const b = Float32Array.from({ length: 2 * 10 * 19 }, (_, i) => i + 1);
  const packed = packB(b, l);
  assert.equal(packed.length, packedBLength(l));
  const blocks = [[0, 8], [8, 4], [12, 7]] as const;
  let seen = 0;
  for (let bi = 0; bi < 2; bi++) for (const [jb, bw] of blocks) for (let p0 = 0; p0 < 10; p0 += 4) {
    const kl = Math.min(4, 10 - p0);
    const padded = Math.ceil(bw / 4) * 4;
    for (let q = 0; q < padded; q += 4) for (let pp = 0; pp < kl; pp++) for (let j = 0; j < 4; j++) {
      const col = jb + q + j;
      const at = bi * 10 * 20 + jb * 10 + p0 * padded + q * kl + pp * 4 + j;
      assert.equal(packed[at], col < jb + bw ? b[bi * 190 + col * 10 + p0 + pp] : 0, `batch ${bi} column ${col} step ${p0 + pp}`);
      if (col < jb + bw) seen++;
    }
  }
  assert.equal(seen, b.length);
});

test("native GEMMs with a constant B read it pre-packed: plain dot, output fusion, B transposed and batched, f32 and f64, a shared constant", { skip }, async () => {
  // One program (one C compiler run). m 20 (two row tiles, so the columns split into chunks
  // of two panels), k 530 (several blocks of k, the last short), n 300 (a partial chunk and panel).
  const b = new XlaBuilder("prepacked");
  const products = (["f32", "f64"] as const).map((t, i) => dot(parameter(b, i, arrayShape(t, [20, 530]), `x_${t}`), constantLiteral(b, randomLiteral(t, [530, 300]))));
  const x = parameter(b, 2, arrayShape("f32", [20, 530]), "x");
  const bias = constantLiteral(b, randomLiteral("f32", [300]));
  const fused = max(add(dot(x, constantLiteral(b, randomLiteral("f32", [530, 300]))), bias, [1]), constantR0(b, "f32", 0));
  // [3, 20, 40] · [3, 56, 40]ᵀ: batched, B stored [n][k].
  const batched = dotGeneral(parameter(b, 3, arrayShape("f32", [3, 20, 40]), "xb"), constantLiteral(b, randomLiteral("f32", [3, 56, 40])), {
    lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [2],
  });
  // w as B of x·w (pre-packed), as A of w·y (not), and returned as it is: it keeps its own bytes for those.
  const w = constantLiteral(b, randomLiteral("f32", [64, 48]));
  const shared = [dot(parameter(b, 4, arrayShape("f32", [20, 64]), "xw"), w), dot(w, parameter(b, 5, arrayShape("f32", [48, 20]), "y")), w];
  const packedKernels = await check(b.build(tuple(b, [...products, fused, batched, ...shared])), 530);
  assert.equal(packedKernels.length, 5, packedKernels.join("\n"));
});

test("WebAssembly GEMMs with a constant B read it pre-packed: plain dot, output fusion, f32 and f64, batched with B transposed, a shared constant", async () => {
  // m 20, k 530 (several blocks of k), n 300 (several column blocks, a partial panel).
  const b = new XlaBuilder("prepacked_wasm");
  const products = (["f32", "f64"] as const).map((t, i) => dot(parameter(b, i, arrayShape(t, [20, 530]), `x_${t}`), constantLiteral(b, randomLiteral(t, [530, 300]))));
  const fused = max(add(dot(parameter(b, 6, arrayShape("f32", [20, 530]), "xf"), constantLiteral(b, randomLiteral("f32", [530, 300]))),
    constantLiteral(b, randomLiteral("f32", [300])), [1]), constantR0(b, "f32", 0));
  const batched = dotGeneral(parameter(b, 2, arrayShape("f32", [3, 20, 40]), "xb"), constantLiteral(b, randomLiteral("f32", [3, 56, 40])), {
    lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [2],
  });
  // w as B of x·w (pre-packed), as A of w·y (not), and returned as it is.
  const w = constantLiteral(b, randomLiteral("f32", [64, 48]));
  const shared = [dot(parameter(b, 3, arrayShape("f32", [20, 64]), "xw"), w), dot(w, parameter(b, 4, arrayShape("f32", [48, 20]), "y")), w];
  // One row of A streams B as stored: not packed.
  const row = dot(parameter(b, 5, arrayShape("f32", [1, 530]), "x1"), constantLiteral(b, randomLiteral("f32", [530, 30])));
  const packedKernels = await check(b.build(tuple(b, [...products, fused, batched, ...shared, row])), 530, "wasm");
  assert.equal(packedKernels.length, 5, packedKernels.join("\n"));
});

test("native: a pre-packed product split over two threads gives one thread's bits, call after call", { skip }, async () => {
  // 128 x 256 x 1392 (M x K x N): chunks of 464 columns, three of them, so the two threads'
  // halves of the units meet inside the middle chunk, where each packs A for its rows; cost
  // past ALWAYS_PARALLEL_COST, so every call at two threads is split, its ranges claimed as
  // the threads come. Each element is summed in the same order whichever thread computes it.
  const b = new XlaBuilder("split_prepacked");
  const x = parameter(b, 0, arrayShape("f32", [128, 256]), "x");
  const c = b.build(dot(x, constantLiteral(b, randomLiteral("f32", [256, 1392]))));
  const exes = [await compile(c, { backend: "native", threads: 1 }), await compile(c, { backend: "native", threads: 2 })];
  try {
    assert.match(exes[1]!.dump(), /B pre-packed/);
    for (let run = 0; run < 3; run++) {
      const arg = randomLiteral("f32", [128, 256]);
      const [one, two] = exes.map((e) => e.run([arg]).toNumbers());
      for (let i = 0; i < one!.length; i++) assert.ok(Object.is(one![i], two![i]), `run ${run} element ${i}: ${one![i]} at one thread, ${two![i]} at two`);
    }
  } finally {
    for (const e of exes) e.delete();
  }
});

test("native: one or two rows against a constant B read it in panels, with the bits of B read as stored, at one thread and split over two", { skip }, async () => {
  // The same products with B a constant (the streaming kernel over panels, streamedPanelsOf)
  // and a parameter (the sweeps over B as stored): f32 1 x 530 · 530 x 300 (a last panel
  // of 44 columns), f64 2 x 530 · 530 x 300, an output fusion, and two batches of
  // 1 x 40 · 40 x 56; each element summed in order of k from zero by both kernels. Then
  // 1 x 1024 · 1024 x 2000 f32 at two threads, whose first calls alternate one thread and
  // the split (the split trials), against one thread's bits.
  const values = {
    f32: randomLiteral("f32", [530, 300]), f64: randomLiteral("f64", [530, 300]), fused: randomLiteral("f32", [530, 300]), batched: randomLiteral("f32", [2, 40, 56]), bias: randomLiteral("f32", [300]),
  };
  const program = (constant: boolean): Computation => {
    const b = new XlaBuilder(constant ? "panels" : "as_stored");
    let at = 0;
    const weight = (l: Literal): ReturnType<typeof parameter> => (constant ? constantLiteral(b, l) : parameter(b, 3 + at++, l.shape, `w${at}`));
    const x32 = parameter(b, 0, arrayShape("f32", [1, 530]), "x32");
    const x64 = parameter(b, 1, arrayShape("f64", [2, 530]), "x64");
    const xb = parameter(b, 2, arrayShape("f32", [2, 1, 40]), "xb");
    const fused = max(add(dot(x32, weight(values.fused)), constantLiteral(b, values.bias), [1]), constantR0(b, "f32", 0));
    const batched = dotGeneral(xb, weight(values.batched), {
      lhsBatchDimensions: [0], rhsBatchDimensions: [0], lhsContractingDimensions: [2], rhsContractingDimensions: [1],
    });
    return b.build(tuple(b, [dot(x32, weight(values.f32)), dot(x64, weight(values.f64)), fused, batched]));
  };
  const inputs = [randomLiteral("f32", [1, 530]), randomLiteral("f64", [2, 530]), randomLiteral("f32", [2, 1, 40])];
  const panels = await compile(program(true), { backend: "native" });
  const stored = await compile(program(false), { backend: "native" });
  try {
    assert.equal(panels.dump().split("\n").filter((l) => l.includes("(B in panels)")).length, 4, panels.dump());
    assert.ok(!stored.dump().includes("(B in panels)"));
    const leaves = (l: Literal): readonly Literal[] => (l.shape.kind === "tuple" ? l.elements : [l]);
    const got = leaves(panels.run(inputs)), want = leaves(stored.run([...inputs, values.fused, values.batched, values.f32, values.f64]));
    // The weights' parameters in the order program() builds them.
    got.forEach((g, o) => {
      const gv = g.toNumbers(), wv = want[o]!.toNumbers();
      assert.equal(gv.length, wv.length);
      for (let i = 0; i < gv.length; i++) assert.ok(Object.is(gv[i], wv[i]), `output ${o} element ${i}: ${gv[i]} in panels, ${wv[i]} as stored`);
    });
  } finally {
    panels.delete();
    stored.delete();
  }
  const b = new XlaBuilder("panels_split");
  const c = b.build(dot(parameter(b, 0, arrayShape("f32", [1, 1024]), "x"), constantLiteral(b, randomLiteral("f32", [1024, 2000]))));
  const exes = [await compile(c, { backend: "native", threads: 1 }), await compile(c, { backend: "native", threads: 2 })];
  try {
    assert.match(exes[1]!.dump(), /B in panels/);
    for (let run = 0; run < 8; run++) {
      const arg = randomLiteral("f32", [1, 1024]);
      const [one, two] = exes.map((e) => e.run([arg]).toNumbers());
      for (let i = 0; i < one!.length; i++) assert.ok(Object.is(one![i], two![i]), `run ${run} element ${i}: ${one![i]} at one thread, ${two![i]} at two`);
    }
  } finally {
    for (const e of exes) e.delete();
  }
});

test("native: a product over B in panels splits every call from STREAMED_PARALLEL_COST, without split trials, balanced, one thread's bits", { skip }, () => {
  // Below ALWAYS_PARALLEL_COST a kernel's first calls are split trials, alternately alone
  // and split (every other call on one thread); the kernel over panels skips them: all 16
  // calls split, none a trial, each split balanced (a unit a piece) and the bits of one thread.
  const child = fileURLToPath(new URL("./streamed_split_child.js", import.meta.url));
  const calls = 16;
  const r = spawnSync(process.execPath, [child, String(calls)], { env: { ...process.env, XLATS_POOL_TRACE: "1" }, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const { units, cost, grain, alwaysSplits, same } = JSON.parse(r.stdout) as { units: number; cost: number; grain: number; alwaysSplits: boolean; same: boolean };
  assert.ok(cost >= STREAMED_PARALLEL_COST && cost < ALWAYS_PARALLEL_COST, `cost ${cost}`);
  assert.ok(alwaysSplits && grain === 1 && units >= 4, `grain ${grain}, ${units} units`);
  assert.ok(same, "two threads gave other bits than one");
  const lines = r.stderr.split("\n");
  assert.equal(lines.filter((l) => l.startsWith("xk_pool_trace streamed_split units")).length, calls, r.stderr.slice(0, 2000));
  assert.equal(lines.filter((l) => l.startsWith("xk_pool_trace trial")).length, 0, r.stderr.slice(0, 2000));
});
