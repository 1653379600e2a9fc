// Compiled sort against the interpreter, bit for bit: 1-D and batched along any
// dimension, ascending and descending, FLOAT and TOTALORDER compares, with payloads
// (argsort), many ties (stability) and -0/+0; topK of f64 and pred, which the CPU
// backends expand into their sort since session 52.
import { test } from "node:test";
import {
  XlaBuilder, arrayShape, compare, gt, iota, lt, parameter, scalarShape, sort, topK, type ComparisonDirection, type ElementType, type Literal,
} from "../../../src/index.js";
import type { Computation } from "../../../src/ir/computation.js";
import { Literal as L } from "../../../src/types/literal.js";
import { checkCompiled, checkRoutine, randomLiteral, rng } from "./harness.js";
import { elementCount } from "../../../src/types/shape.js";

/** compare(p[2k], p[2k+1]) (or swapped) over `types`, one pair of parameters per operand. */
function comparator(b: XlaBuilder, types: readonly ElementType[], keyOperand: number, direction: ComparisonDirection, swapped: boolean, total: boolean): Computation {
  const sb = b.createSubBuilder("cmp");
  const ps = types.flatMap((t, i) => [parameter(sb, 2 * i, scalarShape(t)), parameter(sb, 2 * i + 1, scalarShape(t))]);
  const [x, y] = [ps[2 * keyOperand]!, ps[2 * keyOperand + 1]!];
  const [l, r] = swapped ? [y, x] : [x, y];
  return sb.build(total ? compare(l, r, direction, { compareType: "TOTALORDER" }) : (direction === "LT" ? lt : gt)(l, r));
}

const KEY_TYPES: readonly ElementType[] = ["f32", "s32", "f64", "u32", "s64", "u8", "s16", "pred", "bf16", "u64"];

function tiedLiteral(next: () => number, t: ElementType, dims: number[]): Literal {
  const n = elementCount(dims);
  if (t === "pred") return L.fromValues(t, dims, Array.from({ length: n }, () => next() < 0.5));
  if (t !== "f32" && t !== "f64" && t !== "bf16") return randomLiteral(next, t, dims, 4);
  return L.fromValues(t, dims, Array.from({ length: n }, () => {
    const v = Math.round(next() * 6 - 3) / 2;
    return v === 0 && next() < 0.5 ? -0 : v;
  }));
}

test("sort: random shapes, dimensions, directions, keys and payloads match the interpreter bit for bit", async () => {
  const next = rng(41);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  for (let trial = 0; trial < 100; trial++) {
    const rank = 1 + (trial % 3);
    const dims = Array.from({ length: rank }, () => int(1, trial % 5 === 0 ? 70 : 9));
    const dim = int(0, rank - 1);
    const count = 1 + (trial % 3);
    const types: ElementType[] = Array.from({ length: count }, (_, i) => KEY_TYPES[(trial + 3 * i) % KEY_TYPES.length]!);
    const keyOperand = int(0, count - 1);
    const kt = types[keyOperand]!;
    const total = (kt === "f32" || kt === "f64" || kt === "bf16") && trial % 2 === 0;
    const b = new XlaBuilder("sort");
    const ops = types.map((t, i) => parameter(b, i, arrayShape(t, dims), `x${i}`));
    const cmp = comparator(b, types, keyOperand, trial % 4 < 2 ? "LT" : "GT", trial % 3 === 0, total);
    const c = b.build(sort(ops, cmp, dim, true));
    // Few distinct keys: many ties; floats include -0 and +0.
    const args: Literal[] = types.map((t) => tiedLiteral(next, t, dims));
    checkRoutine(c, args, `${types.join(",")} key ${keyOperand} ${JSON.stringify({ dims, dim, total })}`);
  }
});

test("sort: argsort (values with an iota payload) compiles and matches", async () => {
  const next = rng(42);
  const b = new XlaBuilder("argsort");
  const x = parameter(b, 0, arrayShape("f32", [8, 100]), "x");
  const idx = iota(b, arrayShape("s32", [8, 100]), 1);
  const c = b.build(sort([x, idx], comparator(b, ["f32", "s32"], 0, "LT", false, true), 1, true));
  await checkCompiled(c, [randomLiteral(next, "f32", [8, 100], 10)], "argsort");
});

test("topK of f64 and pred: a sort on the CPU backends (their sort compares those keys, kernel/capabilities.ts sortKeyTypes), the interpreter's bits", async () => {
  const next = rng(43);
  // f64 lanes with ties, -0 and +0, infinities and NaNs of both signs (the total order: -NaN lowest, NaN highest).
  const f64 = tiedLiteral(next, "f64", [4, 50]);
  const words = new BigUint64Array(f64.data.buffer, f64.data.byteOffset, 200);
  [[3, 0x7ff8000000000001n], [17, 0xfff8000000000002n], [60, 0x7ff0000000000000n], [99, 0xfff0000000000000n], [151, 0xfff8000000000000n]].forEach(([i, w]) => { words[Number(i)] = w as bigint; });
  for (const [t, x] of [["f64", f64], ["pred", tiedLiteral(next, "pred", [4, 50])]] as const) {
    for (const [largest, k] of [[true, 50], [false, 7]] as const) {
      const b = new XlaBuilder(`top_k_${t}`);
      const c = b.build(topK(parameter(b, 0, arrayShape(t, [4, 50]), "x"), k, largest));
      await checkCompiled(c, [x], `topK of ${t} largest=${largest} k=${k}`);
    }
  }
});
