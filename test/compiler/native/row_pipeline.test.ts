// The native backend's row reductions and row pipelines (kernel/reduce_kernel.ts and
// row_pipeline_kernel.ts, printed by emit_c_loop.ts) against the interpreter: float
// max and min exact with NaNs and signed zeros anywhere in the row (the lanes'
// pmax/pmin and their repair), softmax and layer norm (two and three skewed stages) on
// row lengths below, at and past the lane count, on one thread and split across
// threads (so ranges of rows that do not start at 0). Where the CPU has AVX-512,
// these kernels (and elementwise loops) run in their vector form (emit_c_vector.ts),
// which must give the scalar form's bits: both are built here and compared; on AVX2
// with FMA, loops alone have it, compared alike. The scalar form's element loop is what
// the C compiler vectorizes elsewhere: GPT-2's GELU is checked to keep both forms (the
// written one, and a loop GCC reports vectorized).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { compileSync } from "../../../src/compiler/index.js";
import { emitFusionKernelC } from "../../../src/compiler/native/emit_c_reduce.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { Literal } from "../../../src/types/literal.js";
import { firstDifference } from "../literal_compare.js";
import { rng } from "../../support/prng.js";
import { nativeCpu, nativeSkipReason, runNativeCases } from "./gemm_harness.js";
import { needsCompiler, REDUCERS, SOFTMAX } from "./native_support.js";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { PRELUDE } from "../../../src/compiler/native/prelude.js";
import { LOOP_VECTOR_CONDITION } from "../../../src/compiler/native/c_math.js";


const random = rng(77);

function run(text: string, args: readonly Literal[], threads: number): { want: Literal; got: Literal; dump: string } {
  const module = parseHlo(text);
  const want = evaluate(module.entry, args);
  const exe = compileSync(module, { backend: "native", threads });
  try {
    assert.ok(exe.program.kernels.some(isProgramNativeKernel), `no C kernel in:\n${exe.dump()}`);
    return { want, got: exe.run(args), dump: exe.dump() };
  } finally {
    exe.delete();
  }
}

for (const t of ["f32", "f64"]) {
  test(`row max and min of ${t} are exact with NaNs, infinities and signed zeros anywhere in the row`, (tc) => {
    if (!needsCompiler(tc)) return;
    for (const cols of [7, 64, 100, 333]) {
      // Row kinds: only -0 and +0 (in either order), only -0, NaN at a random place, -inf only, +inf only, random,
      // and (for the fold of the lanes' sign words) values <= 0 with -0s and one +0, values >= 0 with +0s and one -0.
      // 64 rows: at 333 columns the kernel is large enough for its vector form (VECTOR_MIN_ELEMENTS).
      const rows: number[][] = [];
      for (let r = 0; r < 64; r++) {
        const kind = r % 8;
        const row = Array.from({ length: cols }, () => (random() - 0.5) * 100);
        if (kind === 0) row.forEach((_, i) => { row[i] = random() < 0.5 ? -0 : 0; });
        if (kind === 1) row.fill(-0);
        if (kind === 2) row[Math.floor(random() * cols)] = NaN;
        if (kind === 3) row.fill(-Infinity);
        if (kind === 4) row.fill(Infinity);
        if (kind === 5 && r % 16 === 5) row[cols - 1] = 0;
        if (kind === 6 || kind === 7) {
          const sign = kind === 6 ? -1 : 1;
          row.forEach((v, i) => { row[i] = random() < 0.3 ? sign * 0 : sign * Math.abs(v); });
          row[Math.floor(random() * cols)] = -sign * 0;
        }
        rows.push(row);
      }
      const x = Literal.fromValues(t as "f32", [rows.length, cols], rows.flat());
      for (const op of ["max", "min"]) {
        const init = op === "max" ? "-inf" : "inf";
        const text = `HloModule m\n${REDUCERS(t)}ENTRY e {\n  x = ${t}[${rows.length},${cols}] parameter(0)\n  i = ${t}[] constant(${init})\n` +
          `  ROOT r = ${t}[${rows.length}] reduce(x, i), dimensions={1}, to_apply=${op}\n}\n`;
        const { want, got } = run(text, [x], 1);
        assert.equal(firstDifference(want, got), undefined, `${op} over ${cols} columns of ${t}`);
      }
    }
  });
}

// Layer norm without its affine part: mean, then the variance of x - mean, then (x - mean) / sqrt(var + eps):
// three stages, the last one a full-shape output.
const LAYER_NORM = (rows: number, cols: number): string => `HloModule m
${REDUCERS("f32")}ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  z = f32[] constant(0)
  n = f32[] constant(${cols})
  eps = f32[] constant(1e-5)
  s = f32[${rows}] reduce(x, z), dimensions={1}, to_apply=add
  nb = f32[${rows}] broadcast(n), dimensions={}
  mean = f32[${rows}] divide(s, nb)
  mb = f32[${rows},${cols}] broadcast(mean), dimensions={0}
  d = f32[${rows},${cols}] subtract(x, mb)
  d2 = f32[${rows},${cols}] multiply(d, d)
  v = f32[${rows}] reduce(d2, z), dimensions={1}, to_apply=add
  var = f32[${rows}] divide(v, nb)
  eb = f32[${rows}] broadcast(eps), dimensions={}
  ve = f32[${rows}] add(var, eb)
  sd = f32[${rows}] sqrt(ve)
  sdb = f32[${rows},${cols}] broadcast(sd), dimensions={0}
  ROOT y = f32[${rows},${cols}] divide(d, sdb)
}
`;

/**
 * Closeness for results of reassociated f32 sums over `cols` terms: relative, plus
 * `scale` times the same bound absolutely (layer norm's x - mean cancels: its error is
 * relative to x, and its outputs are of order 1).
 */
const close = (cols: number, scale: number) => (p: unknown, q: unknown): boolean => {
  const a = p as number, b = q as number;
  if (Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b))) return true;
  return Math.abs(a - b) <= 8 * cols * 2 ** -23 * (Math.max(1e-6, Math.abs(a)) + scale);
};

for (const [name, program, scale] of [["softmax", SOFTMAX, 0], ["layer norm", LAYER_NORM, 1]] as const) {
  test(`${name} as a skewed row pipeline matches the interpreter, on one thread and split across threads`, (t) => {
    if (!needsCompiler(t)) return;
    for (const [rows, cols, threads] of [[5, 3, 1], [9, 64, 1], [37, 333, 1], [2, 1000, 1], [1, 70, 1], [400, 700, 2], [301, 1024, 3]] as const) {
      const xs = Array.from({ length: rows * cols }, () => (random() - 0.5) * 30);
      // A row with NaN, one with -inf everywhere (softmax: NaN throughout, as in the interpreter), one of zeros.
      if (rows > 3) {
        xs[cols + 2] = NaN;
        for (let c = 0; c < cols; c++) xs[2 * cols + c] = -Infinity;
        for (let c = 0; c < cols; c++) xs[3 * cols + c] = 0;
      }
      const x = Literal.fromValues("f32", [rows, cols], xs);
      const r = run(program(rows, cols), [x], threads);
      assert.match(r.dump, /1 kernel\(s\)/);
      assert.match(r.dump, /C xk_reduce_/);
      const d = firstDifference(r.want, r.got, close(cols, scale));
      assert.equal(d, undefined, `${name} ${rows}x${cols} on ${threads} thread(s): ${d}`);
    }
  });
}

/** f(x) - max(x) along the rows: a two-stage pipeline whose second stage computes f on every element. */
const MINUS_ROW_MAX = (op: string) => (rows: number, cols: number): string => `HloModule m
${REDUCERS("f32")}ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[${rows}] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[${rows},${cols}] broadcast(m), dimensions={0}
  fx = f32[${rows},${cols}] ${op}(x)
  ROOT y = f32[${rows},${cols}] subtract(fx, mb)
}
`;

/** Row values: random bit patterns without NaN or +inf (they would make the row's max NaN or inf), edges and specials. */
function rowValues(n: number): Float32Array {
  const edges = [-Infinity, 0, -0, 1e-45, -1e-45, 1.1754942e-38, 88.72283, 88.72284, 89, -87.33654, -103.97208, -104, -150, 9.01, -9.1, 16.6355, -16.6355, 0.5, -0.5];
  const bits = new Uint32Array(n);
  const xs = new Float32Array(bits.buffer);
  for (let i = 0; i < n; i++) {
    do bits[i] = Math.floor(random() * 2 ** 32) >>> 0; while (Number.isNaN(xs[i]) || xs[i] === Infinity);
    if (i % 7 === 0) xs[i] = (random() - 0.5) * 40;
    if (i % 13 === 0) xs[i] = edges[(i / 13) % edges.length]!;
  }
  return xs;
}

/** Elementwise loops: tanh(a*b+c) (8 MiB of output: streaming stores), and a mix of ops over a length with a scalar tail. */
const TANH_FMA = (n: number): string => `HloModule m
ENTRY e {
  a = f32[${n}] parameter(0)
  b = f32[${n}] parameter(1)
  c = f32[${n}] parameter(2)
  ab = f32[${n}] multiply(a, b)
  s = f32[${n}] add(ab, c)
  ROOT t = f32[${n}] tanh(s)
}
`;
const MIX = (n: number): string => `HloModule m
ENTRY e {
  x = f32[${n}] parameter(0)
  one = f32[] constant(1)
  two = f32[] constant(2)
  o = f32[${n}] broadcast(one), dimensions={}
  w = f32[${n}] broadcast(two), dimensions={}
  xx = f32[${n}] multiply(x, x)
  n1 = f32[${n}] add(xx, o)
  ax = f32[${n}] abs(x)
  d = f32[${n}] sqrt(ax)
  d2 = f32[${n}] add(d, w)
  q = f32[${n}] divide(n1, d2)
  l1 = f32[${n}] add(ax, o)
  l = f32[${n}] log(l1)
  th = f32[${n}] tanh(x)
  lg = f32[${n}] logistic(x)
  m = f32[${n}] maximum(th, lg)
  nx = f32[${n}] negate(x)
  hi = f32[${n}] maximum(x, nx)
  lo = f32[${n}] minimum(nx, x)
  r = f32[${n}] subtract(q, l)
  r2 = f32[${n}] add(r, m)
  ih = f32[${n}] divide(o, hi)
  il = f32[${n}] divide(o, lo)
  r3 = f32[${n}] subtract(ih, il)
  ROOT y = f32[${n}] multiply(r3, r2)
}
`;

// A one-stage row reduction of f(x) (kernel/reduce_kernel.ts): lane arrays, or their vector form.
const ROW_REDUCE = (op: string, init: string, f: string) => (rows: number, cols: number): string => `HloModule m
${REDUCERS("f32")}ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  i = f32[] constant(${init})
  y = f32[${rows},${cols}] ${f}
  ROOT r = f32[${rows}] reduce(y, i), dimensions={1}, to_apply=${op}
}
`;

/** GPT-2's MLP activation, GELU's tanh form x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))), x³ as x·x·x (as JAX's x ** 3 and the bench's GPT-2 write it). */
const GELU = (rows: number, cols: number): string => `HloModule m
ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  ${[["a", "0.044715"], ["k", "0.7978845608"], ["h", "0.5"], ["one", "1"]].map(([n, v]) =>
    `${n} = f32[] constant(${v})\n  ${n}b = f32[${rows},${cols}] broadcast(${n}), dimensions={}`).join("\n  ")}
  x2 = f32[${rows},${cols}] multiply(x, x)
  x3 = f32[${rows},${cols}] multiply(x2, x)
  ax3 = f32[${rows},${cols}] multiply(x3, ab)
  inner = f32[${rows},${cols}] add(x, ax3)
  z = f32[${rows},${cols}] multiply(inner, kb)
  t = f32[${rows},${cols}] tanh(z)
  hx = f32[${rows},${cols}] multiply(x, hb)
  t1 = f32[${rows},${cols}] add(t, oneb)
  ROOT y = f32[${rows},${cols}] multiply(hx, t1)
}
`;

test("GPT-2's GELU keeps its vector forms: the written one (AVX-512, AVX2 with FMA), and an element loop GCC vectorizes without it", (t) => {
  const kernel = emitFusionKernelC(parseHlo(GELU(128, 3072)).entry, "gelu");
  if ("declined" in kernel) assert.fail(`GELU: ${kernel.declined}`);
  const source = kernel.c.source;
  // Every node on sixteen lanes, tanh by its vector form.
  assert.match(source, /const xk_vf w\d+ = xk_v_tanh_f32\(w\d+\);/, "tanh in the vector loop");
  assert.match(source, /xk_vstore\(out0 \+ i, w\d+\);/, "the vector loop stores the result");
  // The scalar element loop: straight-line code, tanh the prelude's inline function (a libm call would stop the vectorizer).
  const scalarAt = source.lastIndexOf("#pragma GCC ivdep\n");
  assert.ok(scalarAt > 0, "a scalar element loop");
  const scalarLoop = source.slice(scalarAt);
  assert.match(scalarLoop, /xk_tanh_f32\(/);
  assert.doesNotMatch(scalarLoop, /\b(tanhf?|powf?|expf?)\(/);
  if (!needsCompiler(t)) return;
  const toolchain = nativeToolchain();
  if (typeof toolchain === "string" || /clang/i.test(toolchain.version)) { t.skip("the vectorizer report is GCC's (-fopt-info-vec)"); return; }
  // GCC's report on the scalar form, built for x86-64 without AVX-512 and FMA (the written form's condition false, as
  // on AVX-only CPUs; elsewhere as the target is): the element loop's line must be vectorized.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "xlats-gelu-"));
  try {
    const symbol = /static void (\w+)\(/.exec(source)![1]!;
    const unit = `${PRELUDE}\n${source}\nvoid gelu_entry(uint8_t *mem, const uint32_t *args, int64_t b, int64_t e) { ${symbol}(mem, args, b, e); }\n`;
    fs.writeFileSync(path.join(dir, "gelu.c"), unit);
    const loopLine = unit.slice(0, unit.lastIndexOf("#pragma GCC ivdep\n")).split("\n").length + 1;
    const scalarOnly = toolchain.cpu.arch === "x86_64" ? ["-mno-avx512f", "-mno-fma"] : [];
    execFileSync(toolchain.cc, [...toolchain.flags, ...scalarOnly, "-fopt-info-vec-optimized=" + path.join(dir, "report.txt"), "-c", "-o", path.join(dir, "gelu.o"), path.join(dir, "gelu.c")], { stdio: "ignore" });
    const report = fs.readFileSync(path.join(dir, "report.txt"), "utf8");
    assert.match(report, new RegExp(`gelu\\.c:${loopLine}:\\d+: optimized: loop vectorized`), `line ${loopLine} (the element loop) vectorized; GCC said:\n${report}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** f(x) elementwise over n f32 (a loop kernel). */
const ELEMENTWISE = (op: string) => (n: number): string => `HloModule m
ENTRY e {
  x = f32[${n}] parameter(0)
  ROOT y = f32[${n}] ${op}(x)
}
`;

/** exp(x - m) with m an operand the caller says is x's row max (a loop kernel: exp of values <= 0, exp's ldexp form). */
const EXP_MINUS_MAX = (rows: number, cols: number): string => `HloModule m
ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  m = f32[${rows}] parameter(1)
  mb = f32[${rows},${cols}] broadcast(m), dimensions={0}
  d = f32[${rows},${cols}] subtract(x, mb)
  ROOT y = f32[${rows},${cols}] exponential(d)
}
`;

/**
 * GPT-2's masked softmax with its mask an operand (the first fusion's second output in
 * the program): select(mask, x·0.125, -1e9), its row max, exp, sum and divide. Every
 * masked element's exp underflows to 0.
 */
const MASKED_SOFTMAX = (rows: number, cols: number): string => `HloModule m
${REDUCERS("f32")}ENTRY e {
  x = f32[${rows},${cols}] parameter(0)
  mask = pred[${rows},${cols}] parameter(1)
  k = f32[] constant(0.125)
  kb = f32[${rows},${cols}] broadcast(k), dimensions={}
  xs = f32[${rows},${cols}] multiply(x, kb)
  low = f32[] constant(-1000000000)
  lowb = f32[${rows},${cols}] broadcast(low), dimensions={}
  sel = f32[${rows},${cols}] select(mask, xs, lowb)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[${rows}] reduce(sel, ninf), dimensions={1}, to_apply=max
  mb = f32[${rows},${cols}] broadcast(m), dimensions={0}
  d = f32[${rows},${cols}] subtract(sel, mb)
  ex = f32[${rows},${cols}] exponential(d)
  s = f32[${rows}] reduce(ex, z), dimensions={1}, to_apply=add
  sb = f32[${rows},${cols}] broadcast(s), dimensions={0}
  ROOT y = f32[${rows},${cols}] divide(ex, sb)
}
`;

/** select(mask, exp(x), -x) elementwise over n f32 (a loop kernel). */
const MASKED_EXP = (n: number): string => `HloModule m
ENTRY e {
  x = f32[${n}] parameter(0)
  mask = pred[${n}] parameter(1)
  ex = f32[${n}] exponential(x)
  nx = f32[${n}] negate(x)
  ROOT y = f32[${n}] select(mask, ex, nx)
}
`;

test("the masked softmax (a pred operand) matches the interpreter, on one thread and split across threads", (t) => {
  if (!needsCompiler(t)) return;
  for (const [rows, cols, threads] of [[7, 5, 1], [160, 130, 1], [384, 128, 2]] as const) {
    const x = Literal.fromValues("f32", [rows, cols], Array.from({ length: rows * cols }, () => (random() - 0.5) * 60));
    // Causal rows, and a last row with everything masked (softmax of -1e9s: uniform).
    const mask = Literal.fromValues("pred", [rows, cols], Array.from({ length: rows * cols }, (_, i) => i < (rows - 1) * cols && i % cols <= Math.floor(i / cols) % cols));
    const r = run(MASKED_SOFTMAX(rows, cols), [x, mask], threads);
    assert.match(r.dump, /C xk_reduce_/);
    const d = firstDifference(r.want, r.got, close(cols, 0));
    assert.equal(d, undefined, `masked softmax ${rows}x${cols} on ${threads} thread(s): ${d}`);
  }
});

test("the vector form of row pipelines and loops gives the scalar form's bits (AVX-512 builds against -mno-avx512f builds; loops on AVX2 against -mno-avx2)", (t) => {
  const skip = nativeSkipReason();
  if (skip !== undefined) { t.skip(skip); return; }
  const cpu = nativeCpu();
  const avx512 = cpu.arch === "x86_64" && cpu.avx512f;
  if (!avx512 && !(cpu.arch === "x86_64" && cpu.avx2 && cpu.fma)) { t.skip("no AVX-512 or AVX2 with FMA here: kernels run in their scalar form only"); return; }
  // Without AVX-512 only loop kernels have a vector form (c_math.ts's LOOP_VECTOR_CONDITION): the row pipelines and reductions are left out.
  const hasVectorForm = (source: string): boolean => avx512 || source.includes(LOOP_VECTOR_CONDITION);
  const programs: [string, string, Float32Array][] = [
    // 8 MiB of output: written by streaming stores.
    ["softmax 2048x1024", SOFTMAX(2048, 1024), Float32Array.from({ length: 2048 * 1024 }, () => (random() - 0.5) * 30)],
    ["softmax 64x333", SOFTMAX(64, 333), rowValues(64 * 333)],
    ["layer norm 100x200", LAYER_NORM(100, 200), Float32Array.from({ length: 100 * 200 }, () => (random() - 0.5) * 30)],
    ...["exponential", "log", "exponential-minus-one", "tanh", "logistic", "cbrt"].flatMap((op): [string, string, Float32Array][] =>
      [[op, MINUS_ROW_MAX(op)(500, 80), rowValues(500 * 80)], [`${op} elementwise`, ELEMENTWISE(op)(20000), rowValues(20000)]]),
    // NaN, infinities and signed zeros too: maximum and minimum's NaN and tie cases.
    ["elementwise mix 20007", MIX(20007), rowValues(20007).map((v, i) => [NaN, Infinity, 0, -0][i % 11] ?? v)],
    ["gelu 64x300", GELU(64, 300), rowValues(64 * 300)],
  ];
  // One-stage row reductions: the sums in the same lanes, folded alike (a tail of 1000 mod 64 elements).
  const reductions: [string, string, Float32Array][] = [
    // Finite sums and products, so that a different order would round differently.
    ["row sum of squares 300x1000", ROW_REDUCE("add", "0", "multiply(x, x)")(300, 1000), Float32Array.from({ length: 300 * 1000 }, () => (random() - 0.5) * 30)],
    ["row product 300x1000", ROW_REDUCE("mul", "1", "exponential(x)")(300, 1000), Float32Array.from({ length: 300 * 1000 }, () => (random() - 0.5) * 0.2)],
    ["row max 300x1000", ROW_REDUCE("max", "-inf", "negate(x)")(300, 1000), rowValues(300 * 1000).map((v, i) => [NaN, -0, 0][i % 4099] ?? v)],
    ["row min 300x1000", ROW_REDUCE("min", "inf", "negate(x)")(300, 1000), rowValues(300 * 1000).map((v, i) => [0, -0][i % 5003] ?? v)],
  ];
  const n = 2 << 20;
  const abc = [0, 1, 2].map(() => Float32Array.from({ length: n }, () => (random() - 0.5) * 8));
  // exp(x - max): the row maxima computed here, the last rows' with NaN and -inf elements.
  const [er, ec] = [200, 100];
  const ex = rowValues(er * ec);
  const emax = Float32Array.from({ length: er }, (_, r) => ex.subarray(r * ec, (r + 1) * ec).reduce((a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b)), -Infinity));
  // Causal masks (row r keeps columns <= r mod cols, the last rows all or nothing) and a random one.
  const [mr, mc] = [160, 130];
  const causal = Uint8Array.from({ length: mr * mc }, (_, i) => {
    const r = Math.floor(i / mc);
    return r >= mr - 2 ? r & 1 : Number(i % mc <= r % mc);
  });
  const me = 20007;
  const cases = [
    ...programs.map(([name, text, x]) => ({ name, text, operands: [x] as (Float32Array | Uint8Array)[], maxima: [] })),
    { name: "masked softmax 160x130", text: MASKED_SOFTMAX(mr, mc), operands: [rowValues(mr * mc), causal], maxima: [] },
    { name: "masked exp 20007", text: MASKED_EXP(me), operands: [rowValues(me), Uint8Array.from({ length: me }, () => Number(random() < 0.5))], maxima: [] },
    { name: "tanh(a*b+c) 2M", text: TANH_FMA(n), operands: abc, maxima: [] },
    { name: "exp(x - row max) loop", text: EXP_MINUS_MAX(er, ec), operands: [ex, emax], maxima: [{ max: 1, of: 0, dims: [1] }] },
  ].map(({ name, text, operands, maxima }) => {
    const kernel = emitFusionKernelC(parseHlo(text).entry, name.replace(/\W/g, "_"), maxima);
    if ("declined" in kernel) throw new Error(`${name}: ${kernel.declined}`);
    assert.match(kernel.c.source, /xk_vf /, `${name} has a vector form`);
    return { name, kernel, operands, resultBytes: [operands[0]!.byteLength], splits: 3 };
  }).filter((c) => hasVectorForm(c.kernel.c.source));
  for (const name of ["softmax 2048x1024", "tanh(a*b+c) 2M"]) {
    const c = cases.find((x) => x.name === name);
    if (c !== undefined) assert.match(c.kernel.c.source, /xk_vstream/, `${name} streams its output`);
  }
  assert.match(cases.find((c) => c.name === "exp(x - row max) loop")!.kernel.c.source, /xk_vldexp/, "exp of values <= 0 scales by ldexp");
  // The masks are read sixteen bytes at a time (the row pipeline's only on AVX-512).
  for (const c of cases.filter((x) => x.name.startsWith("masked"))) assert.match(c.kernel.c.source, /xk_vloadpred\(/, `${c.name} loads its mask as vectors`);
  assert.equal(cases.filter((x) => x.name.startsWith("masked")).length, avx512 ? 2 : 1);
  for (const [name, text, x] of avx512 ? reductions : []) {
    const kernel = emitFusionKernelC(parseHlo(text).entry, name.replace(/\W/g, "_"));
    if ("declined" in kernel) throw new Error(`${name}: ${kernel.declined}`);
    assert.match(kernel.c.source, /xk_vf /, `${name} has a vector form`);
    cases.push({ name, kernel, operands: [x], resultBytes: [300 * 4], splits: 3 });
  }
  const vector = runNativeCases(cases, "row_pipeline_vector");
  const scalar = runNativeCases(cases, "row_pipeline_scalar", [avx512 ? "-mno-avx512f" : "-mno-avx2"]);
  cases.forEach(({ name }, i) => {
    const v = vector[i]![0]!, s = scalar[i]![0]!;
    const at = v.findIndex((b, k) => b !== s[k]);
    assert.equal(at, -1, `${name}: the two forms differ at byte ${at}`);
  });
});
