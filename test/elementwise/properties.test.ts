// Property tests on random inputs: for random shapes, broadcast_dimensions and ops,
// the interpreter's result has the inferred shape (checked by `run`) and every element
// equals a scalar reference computed independently by index arithmetic.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  add, and, broadcastInDim, div, exp, Literal, log1p, max, min, mul, or, rem, roundToFloatType, shiftLeft, sin, sqrt, sub,
  xor, type XlaOp,
} from "../../src/index.js";
import { run } from "./helpers.js";
import { compiled, runEach, testBackend } from "../support/backend.js";
import { rng } from "../support/prng.js";
import { ulpDistance } from "../support/ulp.js";
import { elementCount } from "../../src/types/shape.js";

const INT_MIN = -2147483648;
const I32_OPS: [string, (a: XlaOp, b: XlaOp, d?: readonly number[]) => XlaOp, (a: number, b: number) => number][] = [
  ["add", add, (a, b) => Number(BigInt.asIntN(32, BigInt(a) + BigInt(b)))],
  ["sub", sub, (a, b) => Number(BigInt.asIntN(32, BigInt(a) - BigInt(b)))],
  ["mul", mul, (a, b) => Number(BigInt.asIntN(32, BigInt(a) * BigInt(b)))],
  ["max", max, (a, b) => (a > b ? a : b)],
  ["min", min, (a, b) => (a < b ? a : b)],
  ["and", and, (a, b) => Number(BigInt.asIntN(32, BigInt(a) & BigInt(b)))],
  ["or", or, (a, b) => Number(BigInt.asIntN(32, BigInt(a) | BigInt(b)))],
  ["xor", xor, (a, b) => Number(BigInt.asIntN(32, BigInt(a) ^ BigInt(b)))],
  ["div", div, (a, b) => (b === 0 ? -1 : a === INT_MIN && b === -1 ? INT_MIN : Math.trunc(a / b) | 0)],
  ["rem", rem, (a, b) => (b === 0 ? a : a === INT_MIN && b === -1 ? 0 : (a - Math.trunc(a / b) * b) | 0)],
  ["shiftLeft", shiftLeft, (a, b) => (b >>> 0 >= 32 ? 0 : Number(BigInt.asIntN(32, BigInt(a) << BigInt(b))))],
];

function randomInt32(r: () => number): number {
  const pick = r();
  if (pick < 0.1) return [0, -1, 1, INT_MIN, 2147483647][Math.floor(r() * 5)]!;
  if (pick < 0.4) return Math.floor(r() * 65) - 32;
  return (Math.floor(r() * 2 ** 32) | 0);
}

const rowMajor = (dims: readonly number[], index: readonly number[]): number =>
  index.reduce((acc, i, d) => acc * dims[d]! + i, 0);

function* indices(dims: readonly number[]): Generator<number[]> {
  if (dims.some((d) => d === 0)) return;
  const idx = new Array<number>(dims.length).fill(0);
  for (;;) {
    yield [...idx];
    let d = dims.length - 1;
    while (d >= 0 && ++idx[d]! === dims[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

test("random s32 binary ops with random seed-003 broadcasting match a scalar reference", () => {
  const r = rng(3);
  const cases = Array.from({ length: 300 }, () => {
    const rank = Math.floor(r() * 4);
    const out = Array.from({ length: rank }, () => 1 + Math.floor(r() * 3));
    // The higher-rank operand: each dimension kept or made degenerate.
    const bigDims = out.map((d) => (r() < 0.25 ? 1 : d));
    // The lower-rank operand: a strictly increasing subset of dimensions (sizes equal or 1).
    const map = out.map((_, i) => i).filter(() => r() < 0.5);
    const smallDims = map.map((d) => (r() < 0.25 ? 1 : out[d]!));
    const result = out.map((d, i) => (bigDims[i] === 1 && !(map.includes(i) && smallDims[map.indexOf(i)] !== 1) ? 1 : d));
    const big = Literal.fromValues("s32", bigDims, Array.from({ length: elementCount(bigDims) }, () => randomInt32(r)));
    const small = Literal.fromValues("s32", smallDims, Array.from({ length: elementCount(smallDims) }, () => randomInt32(r)));
    const [name, op, ref] = I32_OPS[Math.floor(r() * I32_OPS.length)]!;
    const smallFirst = r() < 0.5;
    return { bigDims, smallDims, map, result, big, small, name, op, ref, smallFirst };
  });
  runEach(cases, ({ map, big, small, op, smallFirst }) => {
    const dims = map.length === big.dimensions.length ? undefined : map;
    return { build: (a, b) => op(a, b, dims), args: smallFirst ? [small, big] : [big, small] };
  }, ({ bigDims, smallDims, map, result, big, small, name, ref, smallFirst }, got) => {
    assert.deepEqual(got.dimensions, result, `${name} dims`);
    const bigVals = big.values() as number[];
    const smallVals = small.values() as number[];
    const gotVals = got.values() as number[];
    for (const idx of indices(result)) {
      const bv = bigVals[rowMajor(bigDims, idx.map((i, d) => (bigDims[d] === 1 ? 0 : i)))]!;
      const sv = smallVals[rowMajor(smallDims, map.map((d, k) => (smallDims[k] === 1 ? 0 : idx[d]!)))]!;
      const want = smallFirst ? ref(sv, bv) : ref(bv, sv);
      assert.equal(gotVals[rowMajor(result, idx)], want, `${name}(${smallFirst ? [sv, bv] : [bv, sv]}) at [${idx}]`);
    }
  });
});

test("random broadcastInDim: output[idx] = operand[idx mapped through broadcast_dimensions]", () => {
  const r = rng(7);
  const cases = Array.from({ length: 200 }, () => {
    const outRank = Math.floor(r() * 5);
    const out = Array.from({ length: outRank }, () => Math.floor(r() * 4));
    // Any set of distinct output dimensions, in any order (StableHLO allows transposing maps).
    const chosen = out.map((_, i) => i).filter(() => r() < 0.6);
    for (let i = chosen.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
    }
    const opDims = chosen.map((d) => (r() < 0.3 ? 1 : out[d]!));
    const n = elementCount(opDims);
    return { out, chosen, opDims, x: Literal.fromValues("f32", opDims, Array.from({ length: n }, (_, i) => i + 0.5)) };
  });
  runEach(cases, ({ out, chosen, x }) => ({ build: (v) => broadcastInDim(v, out, chosen), args: [x] }), ({ out, chosen, opDims, x }, got) => {
    const xs = x.toNumbers();
    const gs = got.toNumbers();
    for (const idx of indices(out)) {
      const src = rowMajor(opDims, chosen.map((d, k) => (opDims[k] === 1 ? 0 : idx[d]!)));
      assert.equal(gs[rowMajor(out, idx)], xs[src]);
    }
  });
});

test("random unary float ops on f32/f16/bf16 equal the double result rounded once to the type", () => {
  const r = rng(11);
  // The compiled backend computes f32 exp and log1p in f32 (as XLA's CPU backend does),
  // within the bounds src/compiler/kernel/approximations.ts states: 2 and 3 ulps of the rounded result;
  // the CPUs' sin is exact (reduced in f64), WebGPU's within 2 ulps (webgpu/wgsl_trig.ts: WGSL has no f64).
  const ops: [(x: XlaOp) => XlaOp, (x: number) => number, number][] = [
    [exp, Math.exp, compiled ? 2 : 0], [sin, Math.sin, testBackend === "webgpu" ? 2 : 0], [sqrt, Math.sqrt, 0], [log1p, Math.log1p, compiled ? 3 : 0],
  ];
  for (const t of ["f32", "f16", "bf16"] as const) {
    for (const [op, ref, f32Ulps] of ops) {
      const values = Array.from({ length: 50 }, () => roundToFloatType(t, (r() - 0.3) * 20));
      const got = run((x) => op(x), Literal.fromValues(t, [5, 10], values)).toNumbers();
      values.forEach((v, i) => {
        const want = roundToFloatType(t, ref(v));
        const close = t === "f32" && ulpDistance(t, got[i]!, want) <= f32Ulps;
        assert.ok(Object.is(got[i], want) || close || (Number.isNaN(got[i]) && Number.isNaN(want)), `${t} ${op.name}(${v}) = ${got[i]}, want ${want}`);
      });
    }
  }
});

test("every op on empty and rank-0 operands: result shape equals the inferred shape", () => {
  const unaryOps = [exp, sin, sqrt, log1p];
  for (const dims of [[0], [2, 0], []]) {
    const n = elementCount(dims);
    const x = Literal.fromValues("f32", dims, new Array(n).fill(0.25));
    for (const op of unaryOps) assert.deepEqual(run((v) => op(v), x).dimensions, dims);
    for (const [, op] of I32_OPS) {
      const y = Literal.fromValues("s32", dims, new Array(n).fill(3));
      assert.deepEqual(run((a, b) => op(a, b), y, y).dimensions, dims);
    }
  }
});
