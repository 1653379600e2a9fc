// Whole programs that mix op families, built with XlaBuilder and run by the reference
// interpreter, each checked against the same computation written in plain JS (a second,
// independent method). Floats are compared with a relative tolerance: the programs run
// in f32, the JS references in double.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, constantR0, conv, div, dot, exp, gather, getTupleElement, gt, iota,
  lt, max, mul, parameter, reduce, reduceWindow, reshape, scalarShape, slice, sort, sub, topK, tuple, tupleShape,
  whileLoop, type Computation, type ElementType, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { assertClose, rng } from "../reduction/support.js";

/** A scalar (a, b) -> op(a, b) sub-computation. */
function binary(b: XlaBuilder, name: string, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const sub = b.createSubBuilder(name);
  return sub.build(op(parameter(sub, 0, scalarShape(t)), parameter(sub, 1, scalarShape(t))));
}

/** n f32-representable values in [lo, hi) from a seeded generator. */
function randomF32(next: () => number, n: number, lo = -1, hi = 1): number[] {
  return Array.from({ length: n }, () => Math.fround(lo + (hi - lo) * next()));
}

/** Row-major matrix product of a [m, k] and b [k, n] (flat arrays). */
function matmul(a: readonly number[], bm: readonly number[], m: number, k: number, n: number): number[] {
  const out = new Array<number>(m * n).fill(0);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let p = 0; p < k; p++) out[i * n + j]! += a[i * k + p]! * bm[p * n + j]!;
  return out;
}

// ---- 1. MLP forward pass: relu(x·W1 + b1)·W2 + b2, then a numerically stable softmax

test("MLP forward pass with softmax matches a plain-JS forward pass", () => {
  const [batch, inputs, hidden, classes] = [4, 5, 6, 3];
  const next = rng(11);
  const xs = randomF32(next, batch * inputs, -2, 2);
  const w1 = randomF32(next, inputs * hidden);
  const b1 = randomF32(next, hidden);
  const w2 = randomF32(next, hidden * classes);
  const b2 = randomF32(next, classes);

  const b = new XlaBuilder("mlp");
  const px = parameter(b, 0, arrayShape("f32", [batch, inputs]));
  const pw1 = parameter(b, 1, arrayShape("f32", [inputs, hidden]));
  const pb1 = parameter(b, 2, arrayShape("f32", [hidden]));
  const pw2 = parameter(b, 3, arrayShape("f32", [hidden, classes]));
  const pb2 = parameter(b, 4, arrayShape("f32", [classes]));
  const h = max(add(dot(px, pw1), pb1, [1]), constantR0(b, "f32", 0));
  const logits = add(dot(h, pw2), pb2, [1]);
  const rowMax = reduce(logits, constantR0(b, "f32", -Infinity), binary(b, "max", "f32", max), [1]);
  const e = exp(sub(logits, rowMax, [0]));
  const rowSum = reduce(e, constantR0(b, "f32", 0), binary(b, "sum", "f32", add), [1]);
  const program = b.build(tuple(b, [logits, div(e, rowSum, [0])]));

  const args = [
    Literal.fromValues("f32", [batch, inputs], xs), Literal.fromValues("f32", [inputs, hidden], w1),
    Literal.fromValues("f32", [hidden], b1), Literal.fromValues("f32", [hidden, classes], w2), Literal.fromValues("f32", [classes], b2),
  ];
  const out = evaluate(program, args);

  // The same forward pass in double precision.
  const hRef = matmul(xs, w1, batch, inputs, hidden).map((v, i) => Math.max(v + b1[i % hidden]!, 0));
  const logitsRef = matmul(hRef, w2, batch, hidden, classes).map((v, i) => v + b2[i % classes]!);
  const probsRef: number[] = [];
  for (let r = 0; r < batch; r++) {
    const row = logitsRef.slice(r * classes, (r + 1) * classes);
    const m = Math.max(...row);
    const exps = row.map((v) => Math.exp(v - m));
    const total = exps.reduce((s, v) => s + v, 0);
    probsRef.push(...exps.map((v) => v / total));
  }
  assertClose(out.elements[0]!.toNumbers(), logitsRef, 1e-5, "logits");
  const probs = out.elements[1]!.toNumbers();
  assertClose(probs, probsRef, 1e-5, "softmax");
  for (let r = 0; r < batch; r++) {
    const rowTotal = probs.slice(r * classes, (r + 1) * classes).reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(rowTotal - 1) < 1e-6, `row ${r} sums to ${rowTotal}`);
  }
});

// ---- 2. A while loop over a tuple state: Fibonacci and factorial together, in s64

test("while loop over (i, n, fib_i, fib_i+1, i!) computes Fibonacci and factorial exactly, wrapping like s64", () => {
  const s64 = scalarShape("s64");
  const state = tupleShape([s64, s64, s64, s64, s64]);
  const b = new XlaBuilder("fib_fact");
  const cb = b.createSubBuilder("cond");
  const cs = parameter(cb, 0, state);
  const cond = cb.build(lt(getTupleElement(cs, 0), getTupleElement(cs, 1)));
  const bb = b.createSubBuilder("body");
  const bs = parameter(bb, 0, state);
  const [i, n, fa, fb, fact] = [0, 1, 2, 3, 4].map((k) => getTupleElement(bs, k));
  const next = add(i!, constantR0(bb, "s64", 1n));
  const body = bb.build(tuple(bb, [next, n!, fb!, add(fa!, fb!), mul(fact!, next)]));
  const pn = parameter(b, 0, s64);
  const init = tuple(b, [constantR0(b, "s64", 0n), pn, constantR0(b, "s64", 0n), constantR0(b, "s64", 1n), constantR0(b, "s64", 1n)]);
  const loop = whileLoop(cond, body, init);
  const program = b.build(tuple(b, [getTupleElement(loop, 2), getTupleElement(loop, 4)]));

  for (const n of [0, 1, 2, 10, 20, 21, 25, 92]) {
    // Plain JS with BigInt, reduced to signed 64 bits after every step as s64 arithmetic wraps.
    let [a, c, f] = [0n, 1n, 1n];
    for (let k = 1n; k <= BigInt(n); k++) {
      [a, c] = [c, BigInt.asIntN(64, a + c)];
      f = BigInt.asIntN(64, f * k);
    }
    const out = evaluate(program, [Literal.scalar("s64", BigInt(n))]);
    assert.deepEqual(out.elements[0]!.values(), [a], `fib(${n})`);
    assert.deepEqual(out.elements[1]!.values(), [f], `${n}! mod 2^64`);
  }
  // Known values as a third check: fib(92) is the largest Fibonacci number below 2^63; 20! fits, 21! wraps.
  assert.deepEqual(evaluate(program, [Literal.scalar("s64", 92n)]).elements[0]!.values(), [7540113804746346429n]);
  assert.deepEqual(evaluate(program, [Literal.scalar("s64", 20n)]).elements[1]!.values(), [2432902008176640000n]);
  assert.deepEqual(evaluate(program, [Literal.scalar("s64", 21n)]).elements[1]!.values(), [BigInt.asIntN(64, 51090942171709440000n)]);
});

// ---- 3. Top-k retrieval: stable sort of (score, index) pairs, slice k indices, gather rows

test("sort + slice + gather top-k pipeline matches a JS ranking (ties keep the lower index) and agrees with topK", () => {
  const [n, d, k] = [12, 3, 5];
  const next = rng(7);
  // Scores rounded to one decimal so that ties occur.
  const scores = Array.from({ length: n }, () => Math.fround(Math.round(next() * 6) / 10));
  const table = randomF32(next, n * d, -5, 5);

  const b = new XlaBuilder("topk");
  const ps = parameter(b, 0, arrayShape("f32", [n]));
  const pt = parameter(b, 1, arrayShape("f32", [n, d]));
  const cmp = b.createSubBuilder("by_score_desc");
  const [s0, s1] = [parameter(cmp, 0, scalarShape("f32")), parameter(cmp, 1, scalarShape("f32"))];
  parameter(cmp, 2, scalarShape("s32"));
  parameter(cmp, 3, scalarShape("s32"));
  const comparator = cmp.build(gt(s0, s1));
  const sorted = sort([ps, iota(b, "s32", n)], comparator, 0, true);
  const topScores = slice(getTupleElement(sorted, 0), [0], [k], [1]);
  const topIndices = slice(getTupleElement(sorted, 1), [0], [k], [1]);
  const rows = gather(pt, topIndices, { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 1 }, [1, d]);
  const viaTopK = topK(ps, k);
  const program = b.build(tuple(b, [topScores, topIndices, rows, getTupleElement(viaTopK, 0), getTupleElement(viaTopK, 1)]));
  const out = evaluate(program, [Literal.fromValues("f32", [n], scores), Literal.fromValues("f32", [n, d], table)]);

  const ranking = scores.map((s, i) => ({ s, i })).sort((p, q) => q.s - p.s || p.i - q.i).slice(0, k);
  const expectedIndices = ranking.map((r) => r.i);
  assert.ok(new Set(scores).size < n, "the test data has ties");
  assert.deepEqual(out.elements[0]!.toNumbers(), ranking.map((r) => r.s));
  assert.deepEqual(out.elements[1]!.toNumbers(), expectedIndices);
  assert.deepEqual(out.elements[2]!.dimensions, [k, d]);
  assert.deepEqual(out.elements[2]!.toNumbers(), expectedIndices.flatMap((i) => table.slice(i * d, (i + 1) * d)));
  assert.deepEqual(out.elements[3]!.toNumbers(), ranking.map((r) => r.s));
  assert.deepEqual(out.elements[4]!.toNumbers(), expectedIndices);
});

// ---- 4. A small CNN: conv (SAME) + bias + relu, 2x2 max pooling, flatten, dense layer

test("small CNN (conv + relu + reduce_window max pool + reshape + dot) matches direct JS loops", () => {
  const [batch, inC, outC, hw, kw, classes] = [2, 2, 3, 6, 3, 4];
  const pooled = hw / 2;
  const flat = outC * pooled * pooled;
  const next = rng(5);
  const input = randomF32(next, batch * inC * hw * hw);
  const kernel = randomF32(next, outC * inC * kw * kw);
  const bias = randomF32(next, outC);
  const dense = randomF32(next, flat * classes);

  const b = new XlaBuilder("cnn");
  const px = parameter(b, 0, arrayShape("f32", [batch, inC, hw, hw]));
  const pk = parameter(b, 1, arrayShape("f32", [outC, inC, kw, kw]));
  const pbias = parameter(b, 2, arrayShape("f32", [outC]));
  const pdense = parameter(b, 3, arrayShape("f32", [flat, classes]));
  // Default dimension numbers: input NCHW, kernel OIHW, output NCHW.
  const features = max(add(conv(px, pk, [1, 1], "SAME"), pbias, [1]), constantR0(b, "f32", 0));
  const pool = reduceWindow(features, constantR0(b, "f32", -Infinity), binary(b, "max", "f32", max), [1, 1, 2, 2], [1, 1, 2, 2], "VALID");
  const logits = dot(reshape(pool, [batch, flat]), pdense);
  const program = b.build(logits);
  const out = evaluate(program, [
    Literal.fromValues("f32", [batch, inC, hw, hw], input), Literal.fromValues("f32", [outC, inC, kw, kw], kernel),
    Literal.fromValues("f32", [outC], bias), Literal.fromValues("f32", [flat, classes], dense),
  ]);
  assert.deepEqual(out.dimensions, [batch, classes]);

  // The same network as loops: SAME padding with a 3x3 kernel and stride 1 pads 1 on each side.
  const pad = (kw - 1) / 2;
  const at = (n: number, c: number, y: number, x: number): number =>
    y < 0 || y >= hw || x < 0 || x >= hw ? 0 : input[((n * inC + c) * hw + y) * hw + x]!;
  const conved = (n: number, o: number, y: number, x: number): number => {
    let v = bias[o]!;
    for (let c = 0; c < inC; c++) {
      for (let ky = 0; ky < kw; ky++) for (let kx = 0; kx < kw; kx++) v += at(n, c, y + ky - pad, x + kx - pad) * kernel[((o * inC + c) * kw + ky) * kw + kx]!;
    }
    return Math.max(v, 0);
  };
  const flattened: number[] = [];
  for (let n = 0; n < batch; n++) {
    for (let o = 0; o < outC; o++) {
      for (let py = 0; py < pooled; py++) {
        for (let px2 = 0; px2 < pooled; px2++) {
          flattened.push(Math.max(conved(n, o, 2 * py, 2 * px2), conved(n, o, 2 * py, 2 * px2 + 1),
            conved(n, o, 2 * py + 1, 2 * px2), conved(n, o, 2 * py + 1, 2 * px2 + 1)));
        }
      }
    }
  }
  assertClose(out.toNumbers(), matmul(flattened, dense, batch, flat, classes), 1e-5, "cnn logits");
});
