// The native backend: the toolchain, the on-disk module cache, compiler errors, bounds
// checks, threads, and its C kernels against the interpreter on every element type
// they compile. Skipped, saying why, where there is no working C compiler.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile, compileManySync, compileSync } from "../../../src/compiler/index.js";
import { buildNativeModuleSync } from "../../../src/compiler/native/build.js";
import { ALWAYS_PARALLEL_COST } from "../../../src/compiler/native/glue.js";
import { PRELUDE } from "../../../src/compiler/native/prelude.js";
import { linkerCommand, nativeBuildStats, nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { CompileError } from "../../../src/types/errors.js";
import { ELEMENT_TYPES, integerRange, type ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { firstDifference } from "../literal_compare.js";
import { ulpDistance } from "../../support/ulp.js";
import { rng } from "../../support/prng.js";
import { needsCompiler, SOFTMAX, tracedParts } from "./native_support.js";
import { separateFusionsPipeline } from "../../support/pipelines.js";


const toolchain = nativeToolchain();
const random = rng(12);

/** Values of type t to test with: edges (zero, ±1, extremes, NaN, ±inf, -0 for floats) then random ones. */
function values(t: ElementType, n: number): (number | bigint | boolean)[] {
  const info = ELEMENT_TYPES[t];
  if (t === "pred") return Array.from({ length: n }, (_, i) => (i < 2 ? i === 1 : random() < 0.5));
  if (info.kind === "float") {
    const edges = [0, -0, 1, -1, 0.5, -2.5, 3.5, NaN, Infinity, -Infinity, 1e-3, 65504, 1e30];
    return Array.from({ length: n }, (_, i) => (i < edges.length ? edges[i]! : (random() - 0.5) * 20));
  }
  const { min, max } = integerRange(t);
  const edges = [0n, 1n, min, max, -1n, 2n, 3n, BigInt(info.bitWidth), BigInt(info.bitWidth) + 1n].filter((v) => v >= min && v <= max);
  return Array.from({ length: n }, (_, i) => {
    const v = i < edges.length ? edges[i]! : min + BigInt(Math.floor(random() * Number(max - min + 1n)));
    return info.bitWidth === 64 ? v : Number(v);
  });
}

function literal(t: ElementType, dims: readonly number[], xs: readonly (number | bigint | boolean)[]): Literal {
  return Literal.fromValues(t, dims, xs as never);
}

/** The interpreter's result and the native backend's for an HLO program; asserts some kernels were C. */
function both(text: string, args: readonly Literal[], threads = 1, expectC = true): { want: Literal; got: Literal; dump: string } {
  const module = parseHlo(text);
  const want = evaluate(module.entry, args);
  const exe = compileSync(module, { backend: "native", threads });
  try {
    if (expectC) assert.ok(exe.program.kernels.some(isProgramNativeKernel), `no C kernel in:\n${exe.dump()}`);
    return { want, got: exe.run(args), dump: exe.dump() };
  } finally {
    exe.delete();
  }
}

test("the toolchain is checked once and describes the CPU", (t) => {
  if (!needsCompiler(t) || typeof toolchain === "string") return;
  assert.equal(nativeToolchain(), toolchain);
  assert.match(toolchain.version, /\S/);
  assert.ok(["x86_64", "aarch64"].includes(toolchain.cpu.arch) || toolchain.cpu.arch.length > 0);
  assert.ok(toolchain.flags.includes("-ffp-contract=off"), "no FMA contraction: each op rounds as the interpreter's");
});

const ELEMENTWISE_TYPES: readonly ElementType[] = ["pred", "s4", "u4", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "f64"];

/** Exact elementwise ops per kind of type (the transcendentals are checked separately, within ulps). */
function exactOps(t: ElementType): string[] {
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "pred") return ["and", "or", "xor", "not", "add", "multiply", "maximum", "minimum"];
  const common = ["add", "subtract", "multiply", "divide", "maximum", "minimum", ...(kind === "unsigned" ? [] : ["negate", "abs", "sign"])];
  // f64 power and atan2 run on the interpreter (libm's last place may differ from V8's).
  if (kind === "float") return [...common, "remainder", ...(t === "f64" ? [] : ["power", "atan2"]), "floor", "ceil", "round-nearest-even", "round-nearest-afz", "sqrt", "is-finite"];
  return [...common, "remainder", "and", "or", "xor", "not", "shift-left", "shift-right-logical", "shift-right-arithmetic", "count-leading-zeros", "popcnt"];
}

const UNARY = new Set(["negate", "abs", "sign", "not", "floor", "ceil", "round-nearest-even", "round-nearest-afz", "sqrt", "is-finite", "count-leading-zeros", "popcnt"]);

/**
 * One program computing every result of `ops` (name, HLO type, expression over a and b)
 * as a tuple, so that one C build covers them all; asserts that none ran on the
 * interpreter and names the op of the first element that differs.
 */
function checkEvery(ops: readonly { name: string; type: string; body: string }[], dims: string, operandTypes: readonly string[], args: readonly Literal[]): void {
  const params = operandTypes.map((t, i) => `  ${"ab"[i]} = ${t}${dims} parameter(${i})`);
  const lines = ops.map((o, i) => `  r${i} = ${o.type}${dims} ${o.body}`);
  const tuple = `(${ops.map((o) => `${o.type}${dims}`).join(", ")})`;
  const text = `HloModule m\nENTRY e {\n${[...params, ...lines].join("\n")}\n  ROOT r = ${tuple} tuple(${ops.map((_, i) => `r${i}`).join(", ")})\n}\n`;
  const module = parseHlo(text);
  const want = evaluate(module.entry, args);
  const exe = compileSync(module, { backend: "native", threads: 1 });
  try {
    const interpreted = exe.program.steps.filter((s) => s.kind === "interpret");
    assert.deepEqual(interpreted.map((s) => s.kind === "interpret" && s.name), [], `every op in C:\n${exe.dump()}`);
    const got = exe.run(args);
    ops.forEach((o, i) => {
      const d = firstDifference(want.elements[i]!, got.elements[i]!, (x, y) => Object.is(x, y) || (typeof x === "number" && typeof y === "number" && Number.isNaN(x) && Number.isNaN(y)));
      assert.equal(d, undefined, `${o.name}: ${d}`);
    });
  } finally {
    exe.delete();
  }
}

for (const t of ELEMENTWISE_TYPES) {
  test(`elementwise ops on ${t} match the interpreter exactly`, (t2) => {
    if (!needsCompiler(t2)) return;
    const n = 40;
    const a = literal(t, [n], values(t, n));
    const b = literal(t, [n], [...values(t, n)].reverse());
    const ops = exactOps(t).map((op) => ({ name: `${op} on ${t}`, type: op === "is-finite" ? "pred" : t, body: UNARY.has(op) ? `${op}(a)` : `${op}(a, b)` }));
    checkEvery(ops, `[${n}]`, [t, t], [a, b]);
  });
}

test("converts between every pair of element types match the interpreter exactly", (t) => {
  if (!needsCompiler(t)) return;
  const n = 24;
  for (const from of ELEMENTWISE_TYPES) {
    const a = literal(from, [n], values(from, n));
    // A convert to its own type of a non-float is no op at all: left out.
    const targets = ELEMENTWISE_TYPES.filter((to) => to !== from);
    checkEvery(targets.map((to) => ({ name: `convert ${from} -> ${to}`, type: to, body: "convert(a)" })), `[${n}]`, [from], [a]);
  }
});

test("f32 transcendentals in whole programs stay within the wasm backend's ulp bounds (math.test.ts sweeps them)", (t) => {
  if (!needsCompiler(t)) return;
  const n = 4096;
  const xs = Array.from({ length: n }, (_, i) => (i < 6 ? [0, -0, NaN, Infinity, -Infinity, 1e-30][i]! : (random() - 0.5) * (i % 2 === 0 ? 20 : 200)));
  const a = literal("f32", [n], xs);
  const bounds: Record<string, number> = { exponential: 3, tanh: 4, log: 2, "exponential-minus-one": 3, "log-plus-one": 3, logistic: 4, erf: 4, cbrt: 2, sine: 1, cosine: 1 };
  for (const [op, ulps] of Object.entries(bounds)) {
    const arg = op === "log" || op === "log-plus-one" ? "b" : "a";
    const text = `HloModule m\nENTRY e {\n  a = f32[${n}] parameter(0)\n  b = f32[${n}] abs(a)\n  ROOT r = f32[${n}] ${op}(${arg})\n}\n`;
    const { want, got } = both(text, [a]);
    const w = want.values() as number[];
    const g = got.values() as number[];
    let worst = 0;
    for (let i = 0; i < n; i++) worst = Math.max(worst, ulpDistance("f32", w[i]!, g[i]!));
    assert.ok(worst <= ulps, `${op}: ${worst} ulps`);
  }
});

const REDUCTION_TYPES: readonly ElementType[] = ["pred", "s8", "u8", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "f64"];

for (const t of REDUCTION_TYPES) {
  test(`row and column reductions of ${t} match the interpreter`, (t2) => {
    if (!needsCompiler(t2)) return;
    const float = ELEMENT_TYPES[t].kind === "float";
    const kinds = t === "pred" ? ["and", "or"] : ["add", "multiply", "maximum", "minimum"];
    const [rows, cols] = [13, 70];
    const xs = values(t, rows * cols).map((v) => (float && typeof v === "number" && !Number.isFinite(v) ? 0.5 : v));
    const x = literal(t, [rows, cols], xs);
    for (const kind of kinds) {
      for (const dims of [[1], [0], [0, 1]]) {
        const kept = [rows, cols].filter((_, d) => !dims.includes(d));
        const text = `HloModule m\nop {\n  p = ${t}[] parameter(0)\n  q = ${t}[] parameter(1)\n  ROOT r = ${t}[] ${kind}(p, q)\n}\n` +
          `ENTRY e {\n  x = ${t}[${rows},${cols}] parameter(0)\n  i = ${t}[] parameter(1)\n  ROOT r = ${t}[${kept.join(",")}] reduce(x, i), dimensions={${dims.join(",")}}, to_apply=op\n}\n`;
        const init = literal(t, [], [kind === "multiply" ? (t === "pred" ? true : float ? 1 : ELEMENT_TYPES[t].bitWidth === 64 ? 1n : 1) : values(t, 1)[0]!]);
        const { want, got } = both(text, [x, init]);
        // f32 and f64 sums and products are reassociated; everything else is exact (f16 and bf16 run in the interpreter's order).
        const loose = (t === "f32" || t === "f64") && (kind === "add" || kind === "multiply");
        const d = firstDifference(want, got, (p, q) => Object.is(p, q) || (typeof p === "number" && typeof q === "number" &&
          ((Number.isNaN(p) && Number.isNaN(q)) || (loose && Math.abs(p - q) <= 1e-5 * Math.max(1, Math.abs(p))))));
        assert.equal(d, undefined, `${kind} over ${dims} of ${t}: ${d}`);
      }
    }
  });
}

test("softmax (a row pipeline) and argmax (a generic reducer) match the interpreter", (t) => {
  if (!needsCompiler(t)) return;
  const [rows, cols] = [37, 333];
  const x = literal("f32", [rows, cols], Array.from({ length: rows * cols }, () => (random() - 0.5) * 30));
  const softmax = SOFTMAX(rows, cols);
  const r = both(softmax, [x]);
  assert.equal(firstDifference(r.want, r.got, (p, q) => Math.abs((p as number) - (q as number)) <= 1e-6 * Math.max(1e-30, Math.abs(p as number)) * 16), undefined);
  assert.match(r.dump, /C xk_reduce_/);
  const argmax = `HloModule m
am {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  g = pred[] compare(a, b), direction=GE
  v = f32[] select(g, a, b)
  i = s32[] select(g, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  io = s32[${rows},${cols}] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = s32[] constant(0)
  r = (f32[${rows}], s32[${rows}]) reduce(x, io, ninf, z), dimensions={1}, to_apply=am
  ROOT i = s32[${rows}] get-tuple-element(r), index=1
}
`;
  const g = both(argmax, [x]);
  assert.equal(firstDifference(g.want, g.got), undefined);
});

test("a fusion the C generators decline runs its WebAssembly kernel, and dump() says why", (t) => {
  if (!needsCompiler(t)) return;
  const text = `HloModule m\nENTRY e {\n  a = f8e4m3fn[16] parameter(0)\n  b = f8e4m3fn[16] parameter(1)\n  ROOT r = f8e4m3fn[16] add(a, b)\n}\n`;
  const xs = literal("f8e4m3fn", [16], Array.from({ length: 16 }, (_, i) => i / 4));
  const module = parseHlo(text);
  const exe = compileSync(module, { backend: "native" });
  try {
    assert.match(exe.dump(), /bytes of wasm; not C: f8e4m3fn is not compiled to C/);
    assert.equal(firstDifference(evaluate(module.entry, [xs, xs]), exe.run([xs, xs])), undefined);
  } finally {
    exe.delete();
  }
});

test("steps run from call lists match the interpreter over reruns, two executables, donation, row groups and a WebAssembly kernel beside C ones", async (t) => {
  if (!needsCompiler(t)) return;
  const [rows, cols] = [48, 200];
  // A softmax (a row group with a block buffer), an f8 fusion (WebAssembly: it splits the call lists), and acc + x into the donated acc.
  const text = `HloModule m
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
sm {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  acc = f32[${rows},${cols}] parameter(1)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[${rows}] reduce(x, ninf), dimensions={1}, to_apply=mx
  mb = f32[${rows},${cols}] broadcast(m), dimensions={0}
  xm = f32[${rows},${cols}] subtract(x, mb)
  ex = f32[${rows},${cols}] exponential(xm)
  s = f32[${rows}] reduce(ex, zero), dimensions={1}, to_apply=sm
  sb = f32[${rows},${cols}] broadcast(s), dimensions={0}
  y = f32[${rows},${cols}] divide(ex, sb)
  c = f8e4m3fn[${rows},${cols}] convert(x)
  d = f8e4m3fn[${rows},${cols}] add(c, c)
  back = f32[${rows},${cols}] convert(d)
  ty = f32[${rows},${cols}] tanh(y)
  out = f32[${rows},${cols}] add(ty, back)
  acc2 = f32[${rows},${cols}] add(acc, x)
  ROOT t = (f32[${rows},${cols}], f32[${rows},${cols}]) tuple(out, acc2)
}
`;
  const module = parseHlo(text);
  const values = (): Literal => literal("f32", [rows, cols], Array.from({ length: rows * cols }, () => (random() - 0.5) * 8));
  const close = (p: unknown, q: unknown): boolean => Math.abs((p as number) - (q as number)) <= 1e-5 * Math.max(1, Math.abs(p as number));
  // Without row fusion, the softmax is kernels that run as a row group.
  const options = { backend: "native", donate: [1], passes: separateFusionsPipeline() } as const;
  const exes = [compileSync(module, { ...options, threads: 1 }), await compile(module, { ...options, threads: 2 })];
  try {
    const dump = exes[0]!.dump();
    assert.match(dump, /row group of .* block buffer/);
    assert.match(dump, /bytes of wasm; not C/);
    for (const exe of exes) assert.equal(exe.stats.donation[0]?.output, 1, "acc + x is written into the donated acc");
    const accs = exes.map((exe) => exe.device.bufferFromLiteral(values()));
    for (const exe of exes) exe.kernelTimes = new Float64Array(exe.program.kernels.length);
    // Each run with new x, the previous acc donated: the two executables' runs interleaved.
    for (let run = 0; run < 3; run++) {
      exes.forEach((exe, i) => {
        const x = values();
        const want = evaluate(module.entry, [x, accs[i]!.toLiteral()]);
        const xa = exe.device.bufferFromLiteral(x);
        const [out, acc] = exe.execute([xa, accs[i]!]);
        xa.delete();
        assert.equal(firstDifference(want.elements[0]!, out!.toLiteral(), close), undefined, `executable ${i}, run ${run}: out`);
        assert.equal(firstDifference(want.elements[1]!, acc!.toLiteral(), close), undefined, `executable ${i}, run ${run}: acc`);
        out!.delete();
        accs[i] = acc!;
      });
    }
    for (const a of accs) a.delete();
    // The profiler's times show which kernels ran from call lists: the C kernel steps, not a group with a WebAssembly member.
    for (const exe of exes) {
      const isC = (k: { kernel: number }): boolean => isProgramNativeKernel(exe.program.kernels[k.kernel]!);
      const fromLists = exe.program.steps.flatMap((s) => (s.kind === "kernel" ? [isC(s)] : s.kind === "group" ? s.steps.map(() => s.steps.every(isC)) : []));
      assert.deepEqual(fromLists, [false, false, false, true], exe.dump());
      assert.deepEqual(exe.program.kernels.map((_, i) => exe.kernelTimes![i]! > 0), fromLists);
    }
  } finally {
    for (const exe of exes) exe.delete();
  }
  // A row group of C kernels alone, with block buffers and several blocks, runs from its call list.
  const [r, c] = [200, 256];
  const softmax = parseHlo(SOFTMAX(r, c));
  const x = literal("f32", [r, c], Array.from({ length: r * c }, () => (random() - 0.5) * 30));
  for (const threads of [1, 2]) {
    const exe = await compile(softmax, { backend: "native", threads, passes: separateFusionsPipeline() });
    try {
      const group = exe.program.steps[0]!;
      assert.ok(group.kind === "group" && group.blockBuffers.length > 0 && group.block < r, exe.dump());
      exe.kernelTimes = new Float64Array(exe.program.kernels.length);
      assert.equal(firstDifference(evaluate(softmax.entry, [x]), exe.run([x]), close), undefined);
      assert.ok(group.steps.every((k) => exe.kernelTimes![k.kernel]! > 0), "every member ran from the call list");
    } finally {
      exe.delete();
    }
  }
});

test("programs compiled together (compileManySync) share one module, built by one compiler run, and each runs as if compiled alone", (t) => {
  if (!needsCompiler(t)) return;
  const [rows, cols] = [40, 96];
  const elementwise = (op: string): string =>
    `HloModule ${op}\nENTRY e {\n  a = f32[${rows},${cols}] parameter(0)\n  b = f32[${rows},${cols}] parameter(1)\n  m = f32[${rows},${cols}] ${op}(a, b)\n  ROOT r = f32[${rows},${cols}] tanh(m)\n}\n`;
  const f8 = `HloModule f8\nENTRY e {\n  a = f8e4m3fn[16] parameter(0)\n  ROOT r = f8e4m3fn[16] add(a, a)\n}\n`;
  // The softmax's kernels run as a row group from a call list: after the first program's
  // kernels in the shared module, so its calls must name the module's kernels, not the program's.
  const modules = [parseHlo(elementwise("add")), parseHlo(SOFTMAX(rows, cols)), parseHlo(f8), parseHlo(elementwise("multiply"))];
  const x = literal("f32", [rows, cols], Array.from({ length: rows * cols }, () => (random() - 0.5) * 8));
  const y = literal("f32", [rows, cols], Array.from({ length: rows * cols }, () => (random() - 0.5) * 8));
  const q = literal("f8e4m3fn", [16], Array.from({ length: 16 }, (_, i) => i / 4));
  const args = [[x, y], [x], [q], [x, y]];
  const before = nativeBuildStats.compiled + nativeBuildStats.cacheHits;
  const exes = compileManySync(modules, { backend: "native", passes: separateFusionsPipeline() });
  try {
    assert.equal(nativeBuildStats.compiled + nativeBuildStats.cacheHits - before, 1, "one module built or found for the four programs");
    const paths = exes.map((e) => e.stats.native?.path);
    assert.equal(paths[2], undefined, "the f8 program has no C kernels");
    assert.ok(paths[0] !== undefined && paths[1] === paths[0] && paths[3] === paths[0], `one module: ${paths.join(", ")}`);
    const group = exes[1]!.program.steps[0]!;
    assert.ok(group.kind === "group", exes[1]!.dump());
    const close = (p: unknown, r: unknown): boolean => Math.abs((p as number) - (r as number)) <= 1e-5 * Math.max(1, Math.abs(p as number));
    for (let run = 0; run < 2; run++) {
      exes.forEach((exe, i) => {
        exe.kernelTimes = new Float64Array(exe.program.kernels.length);
        const alone = compileSync(modules[i]!, { backend: "native", passes: separateFusionsPipeline() });
        try {
          const got = exe.run(args[i]!);
          assert.equal(firstDifference(alone.run(args[i]!), got), undefined, `program ${i}: as compiled alone`);
          assert.equal(firstDifference(evaluate(modules[i]!.entry, args[i]!), got, close), undefined, `program ${i}: as the interpreter`);
        } finally {
          alone.delete();
        }
      });
    }
    assert.ok(group.kind === "group" && group.steps.every((k) => exes[1]!.kernelTimes![k.kernel]! > 0), "the softmax's row group ran from its call list");
  } finally {
    for (const exe of exes) exe.delete();
  }
});

test("a row group is split as one call: each thread runs whole rows through every kernel, every row once, one thread's bits", async (t) => {
  if (!needsCompiler(t)) return;
  const child = fileURLToPath(new URL("./row_group_trace_child.js", import.meta.url));
  const r = spawnSync(process.execPath, [child], { env: { ...process.env, XLATS_POOL_TRACE: "1" }, encoding: "utf8", timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  const { rows, block, members, cost, same } = JSON.parse(r.stdout) as { rows: number; block: number; members: number; cost: number; same: boolean };
  assert.ok(same, "two threads gave other bits than one");
  assert.ok(cost >= ALWAYS_PARALLEL_COST && block < rows && members === 3, `cost ${cost}, block ${block} of ${rows} rows, ${members} kernels`);
  // One line per run (not one per block: the group is one split call).
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("xk_pool_trace ") && l.includes(" group of "));
  assert.equal(lines.length, 3, r.stderr);
  for (const line of lines) {
    assert.match(line, new RegExp(`group of 3 kernels, rows \\[0, ${rows}\\) in blocks of ${block}, [\\d.]+ us`));
    // Each of the 2 x 2 ranges of rows ran on exactly one part; the parts' rows add up to the group's.
    tracedParts(line, rows);
  }
});

test("large kernels split across threads give the same results", async (t) => {
  if (!needsCompiler(t)) return;
  const n = 1 << 20;
  const text = `HloModule m\nENTRY e {\n  a = f32[${n}] parameter(0)\n  b = f32[${n}] parameter(1)\n  m = f32[${n}] multiply(a, b)\n  ROOT r = f32[${n}] tanh(m)\n}\n`;
  const a = literal("f32", [n], Array.from({ length: n }, () => random() * 4 - 2));
  const one = compileSync(parseHlo(text), { backend: "native", threads: 1 });
  const two = await compile(parseHlo(text), { backend: "native", threads: 2 });
  try {
    assert.equal(firstDifference(one.run([a, a]), two.run([a, a])), undefined);
  } finally {
    one.delete();
    two.delete();
  }
});

/** A one-result kernel whose C function `xk_<name>` has the body `body` (for the build's error paths). */
function kernelOfC(name: string, body: string) {
  return {
    name, operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 1, costPerUnit: 1,
    c: { symbol: `xk_${name}`, source: `static void xk_${name}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) { ${body} }` },
  };
}

test("a compiler error is a CompileError naming the program and quoting the compiler", (t) => {
  if (!needsCompiler(t)) return;
  const kernel = kernelOfC("broken", "this is not C;");
  assert.throws(() => buildNativeModuleSync([{ kernel, bufferBytes: [4] }], "my_program"),
    (e: unknown) => e instanceof CompileError && /^my_program: the native module did not compile/.test(e.message) && /error/.test(e.message));
});

test("the prelude's own declarations of the C library agree with the system's <math.h> and <string.h>", (t) => {
  if (!needsCompiler(t) || typeof toolchain === "string") return;
  const dir = mkdtempSync(join(tmpdir(), "xlats-prelude-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const c = join(dir, "prelude.c");
  // A prototype that differs from the header's is a conflicting-types error; the macros are the headers' then.
  writeFileSync(c, `#include <math.h>\n#include <string.h>\n${PRELUDE}\nint xk_use(double x) { return signbit(x) + isfinite(x) + (x == INFINITY) + (x != NAN); }\n`);
  assert.doesNotThrow(() => execFileSync(toolchain.cc, [...toolchain.flags, "-fsyntax-only", c], { stdio: "pipe" }));
});

test("a call of a C library function the prelude does not declare stops the build (no implicit int)", (t) => {
  if (!needsCompiler(t)) return;
  const kernel = kernelOfC("undeclared", "(void)begin; (void)end; double h = hypot(3.0, 4.0); memcpy(mem + args[0], &h, 4);");
  assert.throws(() => buildNativeModuleSync([{ kernel, bufferBytes: [4] }], "undeclared"),
    (e: unknown) => e instanceof CompileError && /implicit declaration of function .hypot./.test(e.message));
});

test("a module links with the linker the driver runs, read from its -### output; output not understood leaves the link to the driver", () => {
  const gcc = `Using built-in specs.
COLLECT_GCC_OPTIONS='-shared' '-nostdlib' '-o' 'xk-link-output.so'
 /usr/lib/gcc/x86_64-linux-gnu/12/collect2 -plugin /usr/lib/gcc/liblto_plugin.so "-plugin-opt=/usr/lib/gcc/lto-wrapper" "-plugin-opt=-fresolution=/tmp/cc1.res" --eh-frame-hdr -m elf_x86_64 -shared -o xk-link-output.so "-L/opt/a dir" xk-link-kernels.o -lgcc
COLLECT_GCC_OPTIONS='-shared' '-nostdlib' '-o' 'xk-link-output.so'`;
  assert.deepEqual(linkerCommand(gcc, () => "/usr/bin/ld"),
    ["/usr/bin/ld", "--eh-frame-hdr", "-m", "elf_x86_64", "-shared", "-o", "xk-link-output.so", "-L/opt/a dir", "xk-link-kernels.o", "-lgcc"]);
  const clang = `clang version 16.0.6
 "/usr/bin/ld" "-shared" "-o" "xk-link-output.so" "xk-link-kernels.o" "-lgcc"`;
  assert.deepEqual(linkerCommand(clang, () => assert.fail("not collect2")), ["/usr/bin/ld", "-shared", "-o", "xk-link-output.so", "xk-link-kernels.o", "-lgcc"]);
  // Not understood: no command, a program that is no linker, a stand-in missing or twice, no linker found for collect2.
  assert.equal(linkerCommand("cc: error: unrecognized option '-###'", () => "ld"), undefined);
  assert.equal(linkerCommand(" /usr/bin/mystery -o xk-link-output.so xk-link-kernels.o", () => "ld"), undefined);
  assert.equal(linkerCommand(" /usr/bin/ld -o xk-link-output.so", () => "ld"), undefined);
  assert.equal(linkerCommand(" /usr/bin/ld -o xk-link-output.so xk-link-kernels.o xk-link-kernels.o", () => "ld"), undefined);
  assert.equal(linkerCommand(gcc, () => ""), undefined);
});

test("a call whose buffers lie outside device memory throws instead of running", (t) => {
  if (!needsCompiler(t)) return;
  const kernel = {
    name: "fill", operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 16, costPerUnit: 1,
    c: { symbol: "xk_fill_test", source: "static void xk_fill_test(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {\n  float *out = (float *)(mem + args[0]);\n  for (int64_t i = begin; i < end; i++) out[i] = 7.0f;\n}" },
  };
  const m = buildNativeModuleSync([{ kernel, bufferBytes: [64] }], "fill");
  const memory = new WebAssembly.Memory({ initial: 1 });
  m.run(0, memory, new Uint32Array([128]), 0, 16);
  assert.equal(new Float32Array(memory.buffer, 128, 16)[15], 7);
  assert.throws(() => m.run(0, memory, new Uint32Array([65536 - 32]), 0, 16), /lies outside device memory/);
  assert.throws(() => m.run(0, memory, new Uint32Array([0]), 0, 17), /outside \[0, 16\)/);
  // From a call list (the executor's form): in blocks, each call checked as run's are, timed when asked.
  const calls = m.prepareCalls([{ rows: 16, block: 5, members: [{ kernel: 0, timeSlot: 1, pointers: [256] }] }], { memory, threads: 1, scratchOffsets: [] });
  const times = new Float64Array(3);
  calls.run(times);
  assert.deepEqual([...new Float32Array(memory.buffer, 256, 17)], [...Array(16).fill(7), 0]);
  assert.ok(times[1]! > 0 && times[0] === 0 && times[2] === 0, "the call's wall time lands in its slot");
  calls.words[calls.pointerAt[0]![0]!] = 65536 - 32;
  assert.throws(() => calls.run(), /xk_fill_test: buffer 0 .* lies outside device memory/);
  assert.throws(() => m.prepareCalls([{ rows: 16, block: 16, members: [{ kernel: 1, timeSlot: 0, pointers: [256] }] }], { memory, threads: 1, scratchOffsets: [] }).run(), /runCalls: a malformed call/);
  assert.throws(() => calls.run(new Float64Array(1)), /time slot is outside times/);
  // After memory.grow the module sees the new size (the base pointer is read per call).
  memory.grow(1);
  m.run(0, memory, new Uint32Array([65536 - 32]), 0, 16);
  assert.equal(new Float32Array(memory.buffer, 65536 - 32, 16)[15], 7);
});

test("a second process loads the cached module without compiling", (t) => {
  if (!needsCompiler(t)) return;
  const cache = mkdtempSync(join(tmpdir(), "xlats-native-cache-"));
  try {
    const script = fileURLToPath(new URL("./cache_child.js", import.meta.url));
    const run = (): { cached: boolean; compiled: number } => JSON.parse(execFileSync(process.execPath, [script], { env: { ...process.env, XLATS_NATIVE_CACHE: cache }, encoding: "utf8" }));
    const first = run();
    const second = run();
    assert.deepEqual(first, { cached: false, compiled: 2 }, "the first process builds the probe and the program's module");
    assert.deepEqual(second, { cached: true, compiled: 0 }, "the second finds both in the cache");
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
  void nativeBuildStats;
});
