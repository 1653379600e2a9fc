// jax.random: the threefry hash against Random123's known answers, split against the
// split of a program JAX exported (test/fixtures/jax_new_user, run by the reference
// interpreter), and the distributions' ranges and moments.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { numpy as np, random, parseStableHlo, evaluate, Literal, jit, FrontendError, type FrontendArray } from "../../src/index.js";
import { threefry2x32 } from "../../src/frontend/random.js";

type A = FrontendArray;

test("threefry2x32 matches Random123's known answers", () => {
  const cases: [number[], number[], number[]][] = [
    [[0, 0], [0, 0], [0x6b200159, 0x99ba4efe]],
    [[0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff], [0x1cb996fc, 0xbb002be7]],
    [[0x13198a2e, 0x03707344], [0x243f6a88, 0x85a308d3], [0xc4923a9c, 0x483df7a0]],
  ];
  for (const [k, [c0, c1], want] of cases) {
    const key = np.array(k, { dtype: "uint32" });
    const [a, b] = threefry2x32(key, np.array([c0!], { dtype: "uint32" }), np.array([c1!], { dtype: "uint32" }));
    assert.deepEqual([a.tolist(), b.tolist()], [[want[0]], [want[1]]]);
  }
});

test("split equals the threefry split of a JAX-exported program (run by the reference interpreter)", () => {
  const text = readFileSync("test/fixtures/jax_new_user/random_gamma_f32.mlir", "utf8");
  const module = parseStableHlo(text);
  const jaxSplit = module.computations.find((c) => c.name === "_threefry_split");
  assert.ok(jaxSplit !== undefined, "the fixture has JAX's _threefry_split");
  for (const seed of [0, 42, -7]) {
    const key = random.key(seed);
    const want = evaluate(jaxSplit, [Literal.from("u32", [key.tolist() as number[]])]).toNested() as number[][][];
    assert.deepEqual(random.split(key, 48).tolist(), want[0], `seed ${seed}`);
  }
  assert.deepEqual(random.key(-7).tolist(), [0, 2 ** 32 - 7]);
  assert.deepEqual(random.key(2n ** 40n + 5n).tolist(), [256, 5]);
});

test("keys: destructuring a split, foldIn, and the same result under jit", () => {
  const [k1, k2] = random.split(random.key(0)) as unknown as A[];
  assert.notDeepEqual(k1!.tolist(), k2!.tolist());
  assert.notDeepEqual(random.foldIn(k1!, 1).tolist(), random.foldIn(k1!, 2).tolist());
  const eager = random.uniform(k1!, [5]).tolist();
  assert.deepEqual((jit((k: A) => random.uniform(k, [5]))(k1!) as A).tolist(), eager);
  assert.throws(() => random.uniform(np.array([1, 2, 3], { dtype: "uint32" })), FrontendError);
});

test("uniform and normal: ranges and moments of 4096 draws", () => {
  const n = 4096;
  const u = random.uniform(random.key(1), [n], { minval: -2, maxval: 3 });
  const uv = u.tolist() as number[];
  assert.ok(uv.every((v) => v >= -2 && v < 3));
  assert.ok(Math.abs(uv.reduce((s, v) => s + v, 0) / n - 0.5) < 0.1);
  const z = random.normal(random.key(2), [n]).tolist() as number[];
  const mean = z.reduce((s, v) => s + v, 0) / n;
  const variance = z.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
  assert.ok(Math.abs(mean) < 0.06 && Math.abs(variance - 1) < 0.08, `mean ${mean}, variance ${variance}`);
  const b = random.bernoulli(random.key(3), 0.25, [n]).tolist() as boolean[];
  assert.ok(Math.abs(b.filter(Boolean).length / n - 0.25) < 0.03);
});
