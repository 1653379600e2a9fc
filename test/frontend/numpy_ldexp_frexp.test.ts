// np.frexp and np.ldexp on bit patterns: exact against float64 references computed here
// (frexp by halving/doubling, which is exact; a float32 ldexp is x·2^n exact in float64,
// rounded once by fround), subnormals, zeros, infinities and NaN included; float64's
// rounding at the bottom of the subnormals against values known in closed form.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, grad, jit, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const values = (x: A): number[] => x.tolist() as number[];

/** frexp in float64 arithmetic: halving and doubling a float are exact (a subnormal doubles exactly). */
function frexpReference(x: number): [number, number] {
  if (x === 0 || !Number.isFinite(x)) return [x, 0];
  let [m, e] = [Math.abs(x), 0];
  while (m >= 1) [m, e] = [m / 2, e + 1];
  while (m < 0.5) [m, e] = [m * 2, e - 1];
  return [Math.sign(x) * m, e];
}

const same = (got: number, want: number, what: string): void => assert.ok(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)), `${what}: ${got} vs ${want}`);

const FLOAT32 = [0, -0, 1, -1.5, 3, 0.1, 1e-40, -1.401298464324817e-45, 1.1754943508222875e-38, 3.4028234663852886e38, Infinity, -Infinity, NaN].map(Math.fround);

for (const dtype of ["float32", "float64"] as const) {
  test(`frexp (${dtype}): mantissa in [1/2, 1) and exponent as the halving reference; ldexp inverts it`, () => {
    const xs = dtype === "float32" ? FLOAT32 : [...FLOAT32, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 1e-310];
    const x = np.array(xs, { dtype });
    const [m, e] = np.frexp(x);
    assert.equal(e.dtype, "int32");
    xs.forEach((v, i) => {
      const [wm, we] = frexpReference(v);
      same(values(m)[i]!, wm, `mantissa(${v})`);
      same(values(e)[i]!, we, `exponent(${v})`);
    });
    values(np.ldexp(m, e)).forEach((v, i) => same(v, xs[i]!, `ldexp(frexp(${xs[i]}))`));
    // The same under jit.
    const [mj, ej] = jit((a: A) => np.frexp(a))(x) as [A, A];
    assert.deepEqual([values(mj), values(ej)].map((l) => l.map(String)), [values(m), values(e)].map((l) => l.map(String)));
  });
}

test("ldexp (float32): x·2^n rounded once, into and below the subnormals and past the top", () => {
  const xs = [1, -1.5, 3, 0.1, 1e-40, 1.401298464324817e-45, 3.4028234663852886e38].map(Math.fround);
  const ns = [-300, -160, -151, -150, -149, -140, -127, -126, -1, 0, 1, 100, 127, 128, 254, 400];
  for (const x of xs) {
    const got = values(np.ldexp(np.array(ns.map(() => x), { dtype: "float32" }), np.array(ns, { dtype: "int32" })));
    ns.forEach((n, i) => same(got[i]!, Math.fround(x * 2 ** n), `ldexp(${x}, ${n})`));
  }
});

test("ldexp (float64): the smallest subnormal, ties to even below it, overflow, zeros, infinities", () => {
  const cases: [number, number, number][] = [
    [1, -1074, 5e-324], [1, -1075, 0], [1.5, -1075, 5e-324], [3, -1076, 5e-324], [-1, -1075, -0],
    [0.5, 1024, 8.98846567431158e307], [0.5, 1025, Infinity], [1.7976931348623157e308, -1, 8.988465674311579e307],
    [5e-324, 1074, 1], [5e-324, 2000, 2 ** 926], [5e-324, 2097, 2 ** 1023], [5e-324, 2098, Infinity], [1, -5000, 0], [0, 5000, 0], [-0, 3, -0], [Infinity, -5000, Infinity], [NaN, 3, NaN],
    [1, 2 ** 31 - 1, Infinity], [1, -(2 ** 31), 0],
  ];
  const got = values(np.ldexp(np.array(cases.map((c) => c[0]), { dtype: "float64" }), np.array(cases.map((c) => c[1]), { dtype: "int32" })));
  cases.forEach(([x, n, want], i) => same(got[i]!, want, `ldexp(${x}, ${n})`));
  // Broadcasting and a wider exponent dtype.
  assert.deepEqual(values(np.ldexp(np.array([1, 2], { dtype: "float64" }), np.array([3n], { dtype: "int64" }))), [8, 16]);
  assert.deepEqual(values(np.ldexp(1, np.array([1, 255], { dtype: "uint8" }))), [2, Infinity]);
});

test("ldexp and frexp: derivatives 2^n and 2^-e; bad arguments are FrontendErrors", () => {
  assert.equal((grad((x: A) => np.ldexp(x, 3))(1.5) as A).item(), 8);
  assert.equal((grad((x: A) => np.frexp(x)[0])(12.5) as A).item(), 1 / 16);
  assert.equal((grad((x: A) => np.frexp(x)[0])(np.array(1e-40, { dtype: "float32" })) as A).item(), Math.fround(2 ** 133));
  assert.throws(() => np.ldexp(1.5, 2.5), FrontendError);
  assert.throws(() => np.frexp(np.array([{ re: 1, im: 1 }])), FrontendError);
});
