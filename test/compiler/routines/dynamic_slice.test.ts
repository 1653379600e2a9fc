// Compiled dynamic-slice and dynamic-update-slice against the interpreter, bit for
// bit, with start indices that need clamping on both sides.
import { test } from "node:test";
import {
  XlaBuilder, add, arrayShape, dynamicSlice, dynamicUpdateSlice, parameter, scalarShape, type ElementType, type Literal,
} from "../../../src/index.js";
import { Literal as L } from "../../../src/types/literal.js";
import { checkCompiled, checkRoutine, randomLiteral, rng } from "./harness.js";

function startLiteral(next: () => number, t: ElementType, hi: number): Literal {
  const v = Math.floor(next() * (hi + 6)) - 3;
  return L.scalar(t, t === "s64" ? BigInt(v) : t === "u32" ? Math.abs(v) : v);
}

test("dynamic-slice and dynamic-update-slice: random shapes, clamped starts, bit for bit", async () => {
  const next = rng(31);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  for (let trial = 0; trial < 80; trial++) {
    const rank = trial % 5;
    const t: ElementType = (["f32", "s32", "f64", "u8", "s64"] as const)[trial % 5];
    const it: ElementType = (["s32", "s64", "u32"] as const)[trial % 3];
    const dims = Array.from({ length: rank }, () => int(1, 7));
    const sizes = dims.map((d) => int(trial % 7 === 0 ? 0 : 1, d));
    const starts = dims.map((d) => startLiteral(next, it, d));
    const what = `${t}/${it} ${JSON.stringify({ dims, sizes })}`;

    const b = new XlaBuilder("ds");
    const x = parameter(b, 0, arrayShape(t, dims), "x");
    const ss = dims.map((_, d) => parameter(b, 1 + d, scalarShape(it), `s${d}`));
    const ds = b.build(dynamicSlice(x, ss, sizes));
    const xs = randomLiteral(next, t, dims);
    if (sizes.every((s) => s > 0)) checkRoutine(ds, [xs, ...starts], `dynamic-slice ${what}`);

    const ub = new XlaBuilder("dus");
    const ux = parameter(ub, 0, arrayShape(t, dims), "x");
    const uu = parameter(ub, 1, arrayShape(t, sizes), "u");
    const us = dims.map((_, d) => parameter(ub, 2 + d, scalarShape(it), `s${d}`));
    const dus = ub.build(dynamicUpdateSlice(ux, uu, us));
    checkRoutine(dus, [xs, randomLiteral(next, t, sizes), ...starts], `dynamic-update-slice ${what}`);
  }
});

test("dynamic-update-slice (a KV-cache write) compiles and matches", async () => {
  const next = rng(32);
  const b = new XlaBuilder("cache");
  const cache = parameter(b, 0, arrayShape("f32", [2, 16, 8]), "cache");
  const row = parameter(b, 1, arrayShape("f32", [2, 1, 8]), "row");
  const pos = parameter(b, 2, scalarShape("s32"), "pos");
  const zero = parameter(b, 3, scalarShape("s32"), "zero");
  const c = b.build(dynamicUpdateSlice(cache, add(row, row), [zero, pos, zero]));
  const args = [randomLiteral(next, "f32", [2, 16, 8]), randomLiteral(next, "f32", [2, 1, 8]), L.scalar("s32", 5), L.scalar("s32", 0)];
  await checkCompiled(c, args, "kv cache write");
});
