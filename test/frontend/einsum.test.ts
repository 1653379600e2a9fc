// np.einsum against values computed by hand, against a brute-force float64 sum over every
// assignment of the letters (written here, independent of the front end), and against
// compositions of matmul, transpose, diagonal and sum; its path (which pair is contracted
// first), gradients, vmap and its errors.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, grad, vmap, jit, FrontendError, type FrontendArray } from "../../src/index.js";
import { elementCount } from "../../src/types/shape.js";

type A = FrontendArray;
type Nested = number | Nested[];

const close = (a: unknown, b: unknown, tol = 1e-9): void => {
  const fa = [a].flat(Infinity) as number[];
  const fb = [b].flat(Infinity) as number[];
  assert.equal(fa.length, fb.length, "element counts");
  fa.forEach((v, i) => assert.ok(Math.abs(v - fb[i]!) <= tol * (1 + Math.abs(fb[i]!)), `element ${i}: ${v} vs ${fb[i]}`));
};

/** A deterministic float64 array of `shape` with values in [-1, 1). */
function rand(shape: readonly number[], seed: number): A {
  let s = seed >>> 0;
  const n = elementCount(shape);
  const values = Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
  return np.reshape(np.array(values, { dtype: "float64" }), [...shape]);
}

/** Element `index` of a nested list. */
const at = (x: Nested, index: readonly number[]): number => index.reduce<Nested>((v, i) => (v as Nested[])[i]!, x) as number;

/**
 * The brute-force einsum of an explicit spec of letters (no ellipsis): every assignment
 * of values to the letters, each output element summing its products.
 */
function reference(spec: string, operands: readonly A[]): Nested {
  const [lhs, out] = spec.split("->") as [string, string];
  const inputs = lhs.split(",");
  const size = new Map<string, number>();
  inputs.forEach((s, k) => [...s].forEach((c, d) => size.set(c, operands[k]!.shape[d]!)));
  const letters = [...size.keys()];
  const values = operands.map((o) => o.tolist() as Nested);
  const result = new Map<string, number>();
  const assign = new Map<string, number>();
  const visit = (li: number): void => {
    if (li === letters.length) {
      const product = inputs.reduce((p, s, k) => p * at(values[k]!, [...s].map((c) => assign.get(c)!)), 1);
      const key = [...out].map((c) => assign.get(c)).join(",");
      result.set(key, (result.get(key) ?? 0) + product);
      return;
    }
    for (let v = 0; v < size.get(letters[li]!)!; v++) {
      assign.set(letters[li]!, v);
      visit(li + 1);
    }
  };
  visit(0);
  const build = (prefix: number[]): Nested =>
    prefix.length === out.length ? result.get(prefix.join(",")) ?? 0 : Array.from({ length: size.get(out[prefix.length]!)! }, (_, i) => build([...prefix, i]));
  return build([]);
}

test("einsum: diagonals, traces and implicit outputs by hand", () => {
  const a = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  assert.deepEqual(np.einsum("ii->i", a).tolist(), [1, 5, 9]);
  assert.equal(np.einsum("ii", a).item(), 15); // implicit: no letter appears once, so a trace
  assert.equal(np.einsum("ii->", a).item(), 15);
  assert.deepEqual(np.einsum("ij", a).tolist(), a.tolist()); // implicit output "ij"
  assert.deepEqual(np.einsum("ji", a).tolist(), [[1, 4, 7], [2, 5, 8], [3, 6, 9]]); // implicit output "ij": a transpose
  assert.equal(np.einsum("i,i", [1, 2], [3, 4]).item(), 11);
  assert.deepEqual(np.einsum("i,j", [1, 2], [3, 4]).tolist(), [[3, 4], [6, 8]]);
  assert.deepEqual(np.einsum("ba,b", [[1, 2], [3, 4]], [1, 10]).tolist(), [31, 42]); // output "a"
  // Upper case sorts before lower case, as numpy orders its letters.
  assert.deepEqual(np.einsum("aB", [[1, 2]]).shape, [2, 1]);
  // A letter three times in one operand: the main diagonal of a cube.
  const cube = np.reshape(np.arange(27), [3, 3, 3]);
  assert.deepEqual(np.einsum("iii->i", cube).tolist(), [0, 13, 26]);
  // Repeated letter beside other letters, and a diagonal shared with a second operand.
  assert.deepEqual(np.einsum("iji->j", cube).tolist(), [0 + 10 + 20, 3 + 13 + 23, 6 + 16 + 26]);
  assert.deepEqual(np.einsum("ii,i->i", a, [1, 0, 2]).tolist(), [1, 0, 18]);
  // Size-1 axes broadcast, as numpy's do.
  assert.deepEqual(np.einsum("ij,ij->ij", [[1, 2, 3]], [[1, 1, 1], [2, 2, 2]]).tolist(), [[1, 2, 3], [2, 4, 6]]);
  assert.deepEqual(np.einsum("i,i->i", [2], [1, 2, 3]).tolist(), [2, 4, 6]);
});

test("einsum: every spec equals the brute-force float64 sum", () => {
  const cases: [string, number[][]][] = [
    ["ij,jk->ik", [[3, 4], [4, 5]]],
    ["ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]],
    ["ij,jk,kl,lm->mi", [[2, 3], [3, 4], [4, 2], [2, 3]]],
    ["ab,bc,ca->", [[3, 4], [4, 2], [2, 3]]],
    ["bij,bjk,bkl->bil", [[2, 2, 3], [2, 3, 4], [2, 4, 2]]],
    ["ij,ik,il->jkl", [[3, 2], [3, 2], [3, 3]]],
    ["i,j,k->ijk", [[2], [3], [2]]],
    ["ijk,kj->i", [[2, 3, 4], [4, 3]]],
    ["iij,jk->ik", [[3, 3, 2], [2, 4]]],
    ["ij,jk,jl->jkl", [[2, 3], [3, 2], [3, 4]]],
    ["abc,cd,de,ea->b", [[2, 3, 4], [4, 2], [2, 3], [3, 2]]],
    ["i,ij,j->", [[3], [3, 4], [4]]],
  ];
  cases.forEach(([spec, shapes], n) => {
    const operands = shapes.map((s, k) => rand(s, 100 * n + k + 1));
    close(np.einsum(spec, ...operands).tolist(), reference(spec, operands));
    close(jit((...xs: A[]) => np.einsum(spec, ...xs))(...operands).tolist(), reference(spec, operands));
  });
});

test("einsum: ellipses broadcast like matmul's batch axes; compositions of matmul, transpose, diagonal and sum", () => {
  const x = rand([2, 1, 3, 4], 1);
  const y = rand([5, 4, 2], 2);
  const product = np.einsum("...ij,...jk->...ik", x, y);
  assert.deepEqual(product.shape, [2, 5, 3, 2]);
  close(product.tolist(), np.matmul(x, y).tolist());
  // The ellipsis in the middle, and an implicit output (the ellipsis's axes first).
  const z = rand([3, 2, 5, 4], 3);
  close(np.einsum("i...j->j...i", z).tolist(), np.transpose(z, [3, 1, 2, 0]).tolist());
  close(np.einsum("i...j", z).tolist(), np.transpose(z, [1, 2, 0, 3]).tolist());
  // Axes under an ellipsis the output omits are summed (opt_einsum's reading, which JAX uses).
  close(np.einsum("...i->i", z).tolist(), np.sum(z, { axis: [0, 1, 2] }).tolist());
  // "...ii->...i": the batched diagonal; "...ii->...": the batched trace.
  const m = rand([2, 3, 4, 4], 4);
  close(np.einsum("...ii->...i", m).tolist(), np.diagonal(m, { axis1: 2, axis2: 3 }).tolist());
  close(np.einsum("...ii->...", m).tolist(), np.trace(m, { axis1: 2, axis2: 3 }).tolist());
  const [a, b, c] = [rand([4, 3], 5), rand([3, 6], 6), rand([6, 2], 7)];
  close(np.einsum("ij,jk,kl->li", a, b, c).tolist(), np.transpose(np.matmul(np.matmul(a, b), c)).tolist());
  close(np.einsum("ij,ij->", a, a).tolist(), np.sum(np.multiply(a, a)).item());
  assert.equal(np.einsum("ij,jk", np.ones([2, 3], { dtype: "int32" }), np.ones([3, 2], { dtype: "int32" })).dtype, "int32");
  assert.equal(np.einsum("i,i", np.ones([2], { dtype: "float32" }), np.ones([2], { dtype: "float64" })).dtype, "float64");
});

test("einsum: the greedy path contracts the pair with the smallest product first", () => {
  // ij,jk,kl with i = l = 64, j = k = 2: (a·b) would be 64×64, (b·c) is 2×2.
  const text = jit((a: A, b: A, c: A) => np.einsum("ij,jk,kl->il", a, b, c)).lower(np.ones([64, 2]), np.ones([2, 64]), np.ones([64, 2])).asText();
  const dots = text.split("\n").filter((l) => l.includes("stablehlo.dot_general"));
  assert.equal(dots.length, 2);
  assert.match(dots[0]!, /-> tensor<2x2xf32>/);
  // a 2×64, b 64×32, c 32×2: a·b is 2×32, smaller than b·c (64×2).
  const text2 = jit((a: A, b: A, c: A) => np.einsum("ij,jk,kl->il", a, b, c)).lower(np.ones([2, 64]), np.ones([64, 32]), np.ones([32, 2])).asText();
  assert.match(text2.split("\n").find((l) => l.includes("stablehlo.dot_general"))!, /-> tensor<2x32xf32>/);
  // An outer product is put off while some pair shares a letter: "i,ij,j" never forms i⊗j.
  const text3 = jit((a: A, b: A, c: A) => np.einsum("i,ij,j->", a, b, c)).lower(np.ones([8]), np.ones([8, 8]), np.ones([8])).asText();
  const dots3 = text3.split("\n").filter((l) => l.includes("stablehlo.dot_general"));
  assert.equal(dots3.length, 2);
  assert.ok(dots3.every((l) => !/-> tensor<8x8xf32>/.test(l)), dots3.join("\n"));
});

test("einsum: gradients equal those of the composed products, and vmap the batched spec", () => {
  const [a, b, c] = [rand([3, 4], 11), rand([4, 5], 12), rand([5, 2], 13)];
  const w = rand([3, 2], 14);
  const viaEinsum = grad((x: A, y: A, z: A) => np.sum(np.multiply(np.einsum("ij,jk,kl->il", x, y, z), w)), { argnums: [0, 1, 2] });
  const viaMatmul = grad((x: A, y: A, z: A) => np.sum(np.multiply(np.matmul(np.matmul(x, y), z), w)), { argnums: [0, 1, 2] });
  const ge = viaEinsum(a, b, c) as A[];
  const gm = viaMatmul(a, b, c) as A[];
  ge.forEach((g, k) => close(g.tolist(), gm[k]!.tolist()));
  // The trace's gradient is the identity; the diagonal's scatters back onto the diagonal.
  const sq = rand([3, 3], 15);
  close((grad((x: A) => np.einsum("ii", x))(sq) as A).tolist(), np.eye(3).tolist());
  close((grad((x: A) => np.sum(np.multiply(np.einsum("ii->i", x), np.array([1, 2, 3], { dtype: "float64" }))))(sq) as A).tolist(), [[1, 0, 0], [0, 2, 0], [0, 0, 3]]);
  // Through an ellipsis with broadcasting: the same as matmul's gradient.
  const [p, q] = [rand([2, 1, 3, 4], 16), rand([5, 4, 2], 17)];
  const gp = grad((x: A) => np.sum(np.square(np.einsum("...ij,...jk->...ik", x, q))))(p) as A;
  const gq = grad((x: A) => np.sum(np.square(np.matmul(x, q))))(p) as A;
  close(gp.tolist(), gq.tolist());
  // vmap over a batch of vectors equals the spec with a batch letter.
  const m = rand([3, 4], 18);
  const xs = rand([6, 4], 19);
  close((vmap((x: A) => np.einsum("ij,j->i", m, x))(xs) as A).tolist(), np.einsum("ij,bj->bi", m, xs).tolist());
  close((vmap((x: A, y: A) => np.einsum("ij,jk,kl->il", x, y, c), { inAxes: [0, null] })(rand([2, 3, 4], 20), b) as A).tolist(),
    np.einsum("bij,jk,kl->bil", rand([2, 3, 4], 20), b, c).tolist());
});

test("einsum: bad subscripts and operands are FrontendErrors naming the rule", () => {
  const a = np.ones([2, 3]);
  const cases: [() => unknown, RegExp][] = [
    [() => np.einsum("ij,jk", a), /names 2 operand\(s\), 1 given/],
    [() => np.einsum("ij->i->j", a), /more than one "->"/],
    [() => np.einsum("i1", a), /has "1"; subscripts are letters/],
    [() => np.einsum("i.j", a), /has "\."/],
    [() => np.einsum("...i...", a), /more than one ellipsis/],
    [() => np.einsum("ijk", a), /rank 2 but "ijk" names 3 axes/],
    [() => np.einsum("...ijk", a), /rank 2, fewer than the 3 axes/],
    [() => np.einsum("ij->k", a), /output letter "k" is not in any input/],
    [() => np.einsum("ij->ii", a), /repeats "i"/],
    [() => np.einsum("ii", a), /sizes 2 and 3 of one operand/],
    [() => np.einsum("ij,jk", a, np.ones([4, 2])), /letter "j" has size 4 in operand 1 but 3 elsewhere/],
    [() => np.einsum("...i,...i", np.ones([2, 3]), np.ones([4, 3])), /an axis under the ellipsis has size 4/],
  ];
  for (const [f, message] of cases) {
    assert.throws(f, (e: unknown) => e instanceof FrontendError && message.test(e.message), String(message));
  }
});
