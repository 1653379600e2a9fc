// Row pipelines (kernel/row_pipeline_kernel.ts, passes/row_fusion.ts): softmax, log-softmax
// and layer norm become one fusion whose kernel makes its passes row by row, skewed
// across rows. Every result is checked against the reference interpreter, over shapes
// whose rows are shorter than a vector, not a multiple of the unrolled loop, single
// rows, more rows than a thread's range, and special values (NaN, ±inf).

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, constantR0, div, evaluate, exp, log, max, mul, parameter, reduce, rsqrt, scalarShape, sub,
  type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import { compile, WasmDevice } from "../../../src/compiler/index.js";
import { rng } from "../../support/prng.js";
import { elementCount } from "../../../src/types/shape.js";

function reducer(b: XlaBuilder, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const sb = b.createSubBuilder(`r_${t}`);
  return sb.build(op(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

/** Softmax (or log-softmax) over the trailing `reduced` dimensions of `dims`. */
function softmax(t: ElementType, dims: number[], reduced: number, logSoftmax = false): Computation {
  const b = new XlaBuilder(logSoftmax ? "log_softmax" : "softmax");
  const x = parameter(b, 0, arrayShape(t, dims), "x");
  const rdims = dims.map((_, i) => i).slice(dims.length - reduced);
  const keep = dims.map((_, i) => i).slice(0, dims.length - reduced);
  const m = reduce(x, constantR0(b, t, -Infinity), reducer(b, t, max), rdims);
  const shifted = sub(x, m, keep);
  const e = exp(shifted);
  const s = reduce(e, constantR0(b, t, 0), reducer(b, t, add), rdims);
  return b.build(logSoftmax ? sub(shifted, log(s), keep) : div(e, s, keep));
}

/** Layer norm over the last dimension: (x - mean) · rsqrt(var + eps) · gamma + beta. */
function layerNorm(rows: number, cols: number): Computation {
  const b = new XlaBuilder("layer_norm");
  const x = parameter(b, 0, arrayShape("f32", [rows, cols]), "x");
  const gamma = parameter(b, 1, arrayShape("f32", [cols]), "gamma");
  const beta = parameter(b, 2, arrayShape("f32", [cols]), "beta");
  const sum = reducer(b, "f32", add);
  const inv = constantR0(b, "f32", 1 / cols);
  const mean = mul(reduce(x, constantR0(b, "f32", 0), sum, [1]), inv);
  const centered = sub(x, mean, [0]);
  const variance = mul(reduce(mul(centered, centered), constantR0(b, "f32", 0), sum, [1]), inv);
  const scale = rsqrt(add(variance, constantR0(b, "f32", 1e-5)));
  return b.build(add(mul(mul(centered, scale, [0]), gamma, [1]), beta, [1]));
}

function randomLiteral(seed: number, t: ElementType, dims: number[], special = false): Literal {
  const next = rng(seed);
  const n = elementCount(dims);
  const specials = [NaN, Infinity, -Infinity, -0, 0, 88, -104];
  return Literal.fromValues(t, dims, Array.from({ length: n }, (_, i) => (special && i % 11 === 3 ? specials[i % specials.length]! : next() * 16 - 8)));
}

/** |a - e| ≤ rel · max(|e|, floor) elementwise, NaN where the interpreter has NaN. */
function assertClose(actual: Literal, expected: Literal, rel: number, what = "", floor = 1e-30): void {
  const a = actual.toNumbers();
  const e = expected.toNumbers();
  assert.equal(a.length, e.length);
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(e[i])) {
      assert.ok(Number.isNaN(a[i]), `element ${i}: ${a[i]} where the interpreter has NaN`);
      continue;
    }
    assert.ok(a[i] === e[i] || Math.abs(a[i]! - e[i]!) <= rel * Math.max(Math.abs(e[i]!), floor), `${what} element ${i}: ${a[i]} vs ${e[i]}`);
  }
}

const SHAPES: [number[], number][] = [
  [[7, 33], 1], [[1, 5], 1], [[3, 1], 1], [[5, 4], 1], [[2, 4096], 1], [[64, 17], 1], [[2, 3, 19], 1], [[4, 3, 5], 2], [[300, 8], 1],
];

test("softmax is one fusion, one kernel: the row max, the exp-and-sum and the divide as stages of one pass over each row", async () => {
  const c = softmax("f32", [7, 33], 1);
  const exe = await compile(c);
  assert.equal(exe.stats.kernels, 1);
  assert.deepEqual(exe.program.steps.map((s) => s.kind), ["kernel"]);
  assert.match(exe.dump(), /row fusion: .* into /);
  exe.delete();
});

for (const threads of [1, 2]) {
  test(`softmax and log-softmax (f32, f64) match the interpreter on every shape, ${threads} thread(s)`, async () => {
    const device = await WasmDevice.create({ threads });
    try {
      for (const t of ["f32", "f64"] as const) {
        for (const [dims, reduced] of SHAPES) {
          for (const logSoftmax of [false, true]) {
            const c = softmax(t, dims, reduced, logSoftmax);
            const exe = await compile(c, { device });
            assert.equal(exe.stats.kernels, 1, `${c.name} ${dims}: one kernel`);
            for (const special of [false, true]) {
              const x = randomLiteral(dims.length * 31 + dims[0]!, t, dims, special);
              // exp within a few ulps, the divide exact; the sum is reassociated, and the
              // interpreter's sum in sequence is off by up to about n ulps of its own.
              const n = elementCount(dims.slice(dims.length - reduced));
              const rel = t === "f32" ? 2e-6 + n * 1e-8 : 1e-13;
              // log-softmax's x - max - log(sum) cancels: measured against its terms' scale, 1.
              assertClose(exe.run([x]), evaluate(c, [x]), rel, `${c.name} ${t} [${dims}]${special ? " with special values" : ""}:`, logSoftmax ? 1 : 1e-30);
            }
            exe.delete();
          }
        }
      }
    } finally {
      await device.close();
    }
  });
}

test("layer norm (two moments, then the normalization) is one kernel and matches the interpreter", async () => {
  for (const [rows, cols] of [[6, 37], [1, 3], [33, 256]] as const) {
    const c = layerNorm(rows, cols);
    const exe = await compile(c);
    assert.equal(exe.stats.kernels, 1);
    const args = [randomLiteral(rows, "f32", [rows, cols]), randomLiteral(cols, "f32", [cols]), randomLiteral(rows + cols, "f32", [cols])];
    // Outputs near 0 come from cancellation (x - mean): measured against the outputs' scale, 1.
    assertClose(exe.run(args), evaluate(c, args), 2e-5, `layer norm [${rows}, ${cols}]:`, 1);
    exe.delete();
  }
});

test("a softmax over the leading dimension stays three kernels (its rows are not contiguous) and matches", async () => {
  const b = new XlaBuilder("column_softmax");
  const x = parameter(b, 0, arrayShape("f32", [9, 6]), "x");
  const m = reduce(x, constantR0(b, "f32", -Infinity), reducer(b, "f32", max), [0]);
  const e = exp(sub(x, m, [1]));
  const c = b.build(div(e, reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [0]), [1]));
  const exe = await compile(c);
  assert.ok(exe.stats.kernels > 1);
  const arg = randomLiteral(5, "f32", [9, 6]);
  assertClose(exe.run([arg]), evaluate(c, [arg]), 2e-6);
  exe.delete();
});
