// The native backend's row reductions and row pipelines (emit_c_reduce.ts) against the
// interpreter: float max and min exact with NaNs and signed zeros anywhere in the row
// (the lanes' pmax/pmin and their repair), softmax and layer norm (two and three skewed
// stages) on row lengths below, at and past the lane count, on one thread and split
// across threads (so ranges of rows that do not start at 0).

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../../src/compiler/index.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { Literal } from "../../../src/types/literal.js";
import { firstDifference } from "../literal_compare.js";
import { rng } from "../../support/prng.js";
import { needsCompiler, REDUCERS, SOFTMAX } from "./native_support.js";


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
      // Row kinds: only -0 and +0 (in either order), only -0, NaN at a random place, -inf only, +inf only, random.
      const rows: number[][] = [];
      for (let r = 0; r < 24; r++) {
        const kind = r % 6;
        const row = Array.from({ length: cols }, () => (random() - 0.5) * 100);
        if (kind === 0) row.forEach((_, i) => { row[i] = random() < 0.5 ? -0 : 0; });
        if (kind === 1) row.fill(-0);
        if (kind === 2) row[Math.floor(random() * cols)] = NaN;
        if (kind === 3) row.fill(-Infinity);
        if (kind === 4) row.fill(Infinity);
        if (kind === 5 && r % 12 === 5) row[cols - 1] = 0;
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
