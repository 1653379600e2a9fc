// Row pipelines (kernel/row_pipeline_kernel.ts) as the WebAssembly and native backends
// print them, against the interpreter: softmax, log-softmax and layer norm written as
// one input fusion (kInput, so that each backend gets the pipeline as written), in f32,
// f16 and bf16, on rows shorter than a vector, with vector bodies and scalar tails,
// single rows, ranges of rows split across threads (so not starting at 0), a kernel
// large enough for the AVX-512 form, and rows of NaN, -inf, +inf and zeros. f32 runs as
// the skewed pipeline; f16 and bf16 sums run in the interpreter's order (native: one row
// at a time, the stages in turn; WebAssembly declines them and runs them otherwise).

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../src/compiler/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseHlo } from "../../src/text/hlo/index.js";
import { Literal } from "../../src/types/literal.js";
import type { ElementType } from "../../src/types/element_type.js";
import { firstDifference } from "./literal_compare.js";
import { rng } from "../support/prng.js";
import { needsCompiler } from "./native/native_support.js";

const random = rng(2031);

const REDUCERS = (t: string): string => ["maximum", "add"].map((op) =>
  `${op.slice(0, 3)} {\n  a = ${t}[] parameter(0)\n  b = ${t}[] parameter(1)\n  ROOT s = ${t}[] ${op}(a, b)\n}\n`).join("");

/** d = x - max and ex = exp(d) along the rows, and s, the rows' sums of ex. */
const SHIFTED_EXP = (t: string, rows: number, cols: number): string => `  ninf = ${t}[] constant(-inf)
  z = ${t}[] constant(0)
  m = ${t}[${rows}] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = ${t}[${rows},${cols}] broadcast(m), dimensions={0}
  d = ${t}[${rows},${cols}] subtract(x, mb)
  ex = ${t}[${rows},${cols}] exponential(d)
  s = ${t}[${rows}] reduce(ex, z), dimensions={1}, to_apply=add`;

/** The fused computation's body for a [rows, cols] parameter x of type t. */
const BODIES: Record<string, (t: string, rows: number, cols: number) => string> = {
  softmax: (t, rows, cols) => `${SHIFTED_EXP(t, rows, cols)}
  sb = ${t}[${rows},${cols}] broadcast(s), dimensions={0}
  ROOT y = ${t}[${rows},${cols}] divide(ex, sb)`,
  "log-softmax": (t, rows, cols) => `${SHIFTED_EXP(t, rows, cols)}
  ls = ${t}[${rows}] log(s)
  lb = ${t}[${rows},${cols}] broadcast(ls), dimensions={0}
  ROOT y = ${t}[${rows},${cols}] subtract(d, lb)`,
  "layer norm": (t, rows, cols) => `  z = ${t}[] constant(0)
  n = ${t}[] constant(${cols})
  eps = ${t}[] constant(1e-5)
  s = ${t}[${rows}] reduce(x, z), dimensions={1}, to_apply=add
  nb = ${t}[${rows}] broadcast(n), dimensions={}
  mean = ${t}[${rows}] divide(s, nb)
  mb = ${t}[${rows},${cols}] broadcast(mean), dimensions={0}
  d = ${t}[${rows},${cols}] subtract(x, mb)
  d2 = ${t}[${rows},${cols}] multiply(d, d)
  v = ${t}[${rows}] reduce(d2, z), dimensions={1}, to_apply=add
  var = ${t}[${rows}] divide(v, nb)
  eb = ${t}[${rows}] broadcast(eps), dimensions={}
  ve = ${t}[${rows}] add(var, eb)
  sd = ${t}[${rows}] sqrt(ve)
  sdb = ${t}[${rows},${cols}] broadcast(sd), dimensions={0}
  ROOT y = ${t}[${rows},${cols}] divide(d, sdb)`,
};

const program = (name: string, t: string, rows: number, cols: number): string => `HloModule m
${REDUCERS(t)}fused {
  x = ${t}[${rows},${cols}] parameter(0)
${BODIES[name]!(t, rows, cols)}
}
ENTRY e {
  p = ${t}[${rows},${cols}] parameter(0)
  ROOT f = ${t}[${rows},${cols}] fusion(p), kind=kInput, calls=fused
}
`;

/** Random rows (|x| < `range`), with a NaN in row 1, row 2 all -inf, row 3 zeros, a +inf in row 4. */
function input(t: ElementType, rows: number, cols: number, range: number): Literal {
  const xs = Array.from({ length: rows * cols }, () => (random() - 0.5) * 2 * range);
  if (rows > 4) {
    xs[cols + Math.floor(random() * cols)] = NaN;
    for (let c = 0; c < cols; c++) xs[2 * cols + c] = -Infinity;
    for (let c = 0; c < cols; c++) xs[3 * cols + c] = 0;
    xs[4 * cols + Math.floor(random() * cols)] = Infinity;
  }
  return Literal.fromValues(t as "f32", [rows, cols], xs);
}

/**
 * Closeness: f32 sums are reassociated (a bound growing with the row's length, relative,
 * plus `scale` absolutely for layer norm, whose x - mean cancels); f16 and bf16 run in
 * the interpreter's order, off by a few units in the last place where an exp rounds
 * differently.
 */
const close = (t: ElementType, cols: number, scale: number) => (p: unknown, q: unknown): boolean => {
  const a = p as number, b = q as number;
  if (Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b))) return true;
  const unit = t === "f32" ? 8 * cols * 2 ** -23 : t === "f16" ? 8 * 2 ** -10 : 8 * 2 ** -7;
  return Math.abs(a - b) <= unit * (Math.max(1e-6, Math.abs(a)) + scale);
};

const SHAPES: readonly (readonly [number, number, number])[] = [[5, 3, 1], [9, 64, 1], [37, 333, 1], [2, 1000, 1], [1, 70, 1], [40, 129, 2], [130, 129, 3]];

for (const backend of ["wasm", "native"] as const) {
  for (const t of ["f32", "f16", "bf16"] as const) {
    test(`softmax, log-softmax and layer norm of ${t} on ${backend} match the interpreter`, (tc) => {
      if (backend === "native" && !needsCompiler(tc)) return;
      for (const name of Object.keys(BODIES)) {
        for (const [rows, cols, threads] of SHAPES) {
          // Halves: layer norm's sums of squares stay finite.
          const x = input(t, rows, cols, t === "f32" ? 15 : 2);
          const module = parseHlo(program(name, t, rows, cols));
          const want = evaluate(module.entry, [x]);
          const exe = compileSync(module, { backend, threads });
          try {
            const dump = exe.dump();
            // f32 pipelines are compiled by both backends; halves by C (WebAssembly declines their sums).
            if (t === "f32" || backend === "native") assert.match(dump, /1 kernel\(s\), 0 interpreted/, `${name} ${t} ${rows}x${cols}:\n${dump}`);
            const d = firstDifference(want, exe.run([x]), close(t, cols, name === "layer norm" ? 1 : 0));
            assert.equal(d, undefined, `${name} of ${t} ${rows}x${cols} on ${backend}, ${threads} thread(s): ${d}`);
          } finally {
            exe.delete();
          }
        }
      }
    });
  }
}
