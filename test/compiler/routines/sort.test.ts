// Compiled sort against the interpreter, bit for bit: 1-D and batched along any
// dimension, ascending and descending, FLOAT and TOTALORDER compares, with payloads
// (argsort), many ties (stability) and -0/+0.
import { test } from "node:test";
import {
  XlaBuilder, arrayShape, compare, gt, iota, lt, parameter, scalarShape, sort, type ComparisonDirection, type ElementType, type Literal,
} from "../../../src/index.js";
import type { Computation } from "../../../src/ir/computation.js";
import { Literal as L } from "../../../src/types/literal.js";
import { checkCompiled, checkRoutine, randomLiteral, rng } from "./harness.js";

/** compare(p[2k], p[2k+1]) (or swapped) over `types`, one pair of parameters per operand. */
function comparator(b: XlaBuilder, types: readonly ElementType[], keyOperand: number, direction: ComparisonDirection, swapped: boolean, total: boolean): Computation {
  const sb = b.createSubBuilder("cmp");
  const ps = types.flatMap((t, i) => [parameter(sb, 2 * i, scalarShape(t)), parameter(sb, 2 * i + 1, scalarShape(t))]);
  const [x, y] = [ps[2 * keyOperand]!, ps[2 * keyOperand + 1]!];
  const [l, r] = swapped ? [y, x] : [x, y];
  return sb.build(total ? compare(l, r, direction, { compareType: "TOTALORDER" }) : (direction === "LT" ? lt : gt)(l, r));
}

function tiedLiteral(next: () => number, t: ElementType, dims: number[]): Literal {
  if (t !== "f32" && t !== "f64") return randomLiteral(next, t, dims, 4);
  const n = dims.reduce((a, b) => a * b, 1);
  return L.fromValues(t, dims, Array.from({ length: n }, () => {
    const v = Math.round(next() * 6 - 3) / 2;
    return v === 0 && next() < 0.5 ? -0 : v;
  }));
}

test("sort: random shapes, dimensions, directions, keys and payloads match the interpreter bit for bit", async () => {
  const next = rng(41);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  for (let trial = 0; trial < 60; trial++) {
    const rank = 1 + (trial % 3);
    const dims = Array.from({ length: rank }, () => int(1, trial % 5 === 0 ? 70 : 9));
    const dim = int(0, rank - 1);
    const count = 1 + (trial % 3);
    const types: ElementType[] = Array.from({ length: count }, (_, i) => (["f32", "s32", "f64", "u32", "s64", "u8"] as const)[(trial + i) % 6]);
    const keyOperand = int(0, count - 1);
    const kt = types[keyOperand]!;
    if (kt === "u8") types[keyOperand] = "f32";
    const total = (types[keyOperand] === "f32" || types[keyOperand] === "f64") && trial % 2 === 0;
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
