// The primitive table's rules, row by row, at the row's example arguments (random
// float64 points): each JVP rule against central finite differences, each VJP rule
// against finite differences of <cotangent, f> (so the transposes are checked
// independently of the JVP rules), and each batching rule against a loop over the
// batch. A new row is tested here without a test of its own.

import { test } from "node:test";
import assert from "node:assert/strict";
import { rng } from "../support/prng.js";
import { PRIMITIVES, derivativeCoverage, type PrimitiveName, type ExampleArg } from "../../src/frontend/primitives.js";
import { bind, type ArrayBase } from "../../src/frontend/core.js";
import { numpy as np, lax, jvp, vjp, vmap, FrontendError } from "../../src/index.js";
import { elementCount } from "../../src/types/shape.js";



function randomArg(spec: ExampleArg, next: () => number, batch?: number): ArrayBase {
  const shape = batch === undefined ? [...spec.shape] : [batch, ...spec.shape];
  if (spec.kind === "bool") return np.reshape(np.array(Array.from({ length: elementCount(shape) }, () => next() < 0.5)), shape);
  if (spec.kind === "int32") {
    const [lo, hi] = spec.range ?? [0, 2];
    return np.reshape(np.array(Array.from({ length: elementCount(shape) }, () => Math.floor(lo + (hi - lo) * next())), { dtype: "int32" }), shape);
  }
  if (spec.kind === "spd") {
    // m mᵀ + n I for a random m (per batch element when batched).
    const n = spec.shape.at(-1)!;
    const m = np.reshape(np.array(Array.from({ length: elementCount(shape) }, () => 2 * next() - 1), { dtype: "float64" }), shape);
    return np.add(np.matmul(m, np.swapaxes(m, -1, -2)), np.multiply(np.eye(n, n, { dtype: "float64" }), n));
  }
  if (spec.kind === "complex") {
    const part = (): ArrayBase => randomArg({ shape: spec.shape, range: spec.range }, next, batch);
    return lax.complex(part(), part());
  }
  if (spec.kind === "uint32") return np.reshape(np.array(Array.from({ length: elementCount(shape) }, () => Math.floor(next() * 2 ** 32)), { dtype: "uint32" }), shape);
  const [lo, hi] = spec.range ?? [-2, 2];
  return np.reshape(np.array(Array.from({ length: elementCount(shape) }, () => lo + (hi - lo) * next()), { dtype: "float64" }), shape);
}

/** The elements as numbers; a complex array's real parts, then its imaginary parts. */
const flat = (x: ArrayBase): number[] => {
  if (x.dtype.startsWith("complex")) return [...flat(np.real(x)), ...flat(np.imag(x))];
  return x.ndim === 0 ? [Number(x.item())] : (np.ravel(x).tolist() as (number | boolean | bigint)[]).map(Number);
};
/** JAX's pairing of cotangents with tangents: Re Σ a·b (no conjugate), a float64 number. */
const pairing = (a: ArrayBase, b: ArrayBase): number => Number(np.real(np.sum(np.multiply(a, b))).item());
const isComplex = (x: ArrayBase): boolean => x.dtype.startsWith("complex");

function assertClose(actual: readonly number[], expected: readonly number[], atol: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  actual.forEach((a, i) => {
    const e = expected[i]!;
    assert.ok(Math.abs(a - e) <= atol + 1e-5 * Math.abs(e), `${what}: element ${i} is ${a}, expected ${e} (tolerance ${atol})`);
  });
}

const H = 1e-6;
type Example = (typeof PRIMITIVES)[PrimitiveName]["example"];
/** A row's example and its further ones (other dtypes, other branches of its rules). */
const examplesOf = (name: PrimitiveName): readonly Example[] => [PRIMITIVES[name].example, ...(PRIMITIVES[name].moreExamples ?? [])];

/** The primitive at `params` (default its example's): its result, or (several results) its float results raveled and joined, so that each is checked. */
const apply = (name: PrimitiveName, params: unknown = PRIMITIVES[name].example.params) => (...xs: ArrayBase[]): ArrayBase => {
  const outs = bind(name, xs, params as never);
  const floats = outs.filter((o) => o.dtype.startsWith("float") || o.dtype.startsWith("complex"));
  return outs.length === 1 || floats.length === 0 ? outs[0]! : np.concatenate(floats.map((o) => np.ravel(o)));
};
/** The absolute tolerance of a finite difference whose result has this dtype (float32 results round at 6e-8 relative). */
const tolerance = (out: ArrayBase): number => (out.dtype === "float64" || out.dtype === "complex128" ? 1e-6 : 1e-2);

for (const name of derivativeCoverage().differentiable) {
  test(`${name}: the JVP and VJP rules match central finite differences`, () => {
    const next = rng(name.length * 7919 + name.charCodeAt(0));
    for (const example of examplesOf(name)) {
      const f = apply(name, example.params);
      const xs = example.args.map((a) => randomArg(a, next));
      const isFloat = example.args.map((a) => a.kind === undefined || a.kind === "float" || a.kind === "spd" || a.kind === "complex");
      const ts = example.args.map((a, i) => (isFloat[i] ? randomArg({ shape: a.shape, range: [-1, 1], kind: a.kind === "complex" ? "complex" : "float" }, next) : np.zerosLike(xs[i]!)));
      const [out, tangent] = jvp(f, xs, ts) as [ArrayBase, ArrayBase];
      const h = tolerance(out) < 1e-3 ? H : 1e-3;
      const shifted = (s: number): ArrayBase[] => xs.map((x, i) => (isFloat[i] ? np.add(x, np.multiply(ts[i]!, s * h)) : x));
      const fd = np.divide(np.subtract(f(...shifted(1)), f(...shifted(-1))), 2 * h);
      assertClose(flat(tangent), flat(fd), tolerance(out), `${name} JVP`);

      // VJP: <vjp(ct), t> = d/ds <ct, f(x + s t)> at s = 0.
      // A complex result's cotangent is complex; the pairing is JAX's (Re Σ a·b), for which the VJP is the JVP's transpose.
      const ct = randomArg({ shape: out.shape, range: [-1, 1], kind: isComplex(out) ? "complex" : "float" }, next);
      const [, pullback] = vjp(f, ...xs) as [ArrayBase, (c: ArrayBase) => ArrayBase[]];
      const cts = pullback(np.astype(ct, out.dtype));
      const wide = (x: ArrayBase): ArrayBase => np.astype(x, isComplex(x) ? "complex128" : "float64");
      const lhs = cts.reduce((acc, c, i) => acc + (isFloat[i] ? pairing(wide(c), ts[i]!) : 0), 0);
      const along = (s: number): number => pairing(ct, wide(f(...shifted(s))));
      const rhs = (along(1) - along(-1)) / (2 * h);
      assert.ok(Math.abs(lhs - rhs) <= tolerance(out) * 10 + 1e-5 * Math.abs(rhs), `${name} VJP: <vjp(ct), t> = ${lhs}, finite difference ${rhs}`);
    }
  });
}

test("the coverage list: every primitive is differentiable, piecewise constant (zero derivative) or named unsupported", () => {
  const c = derivativeCoverage();
  assert.equal(c.zero.length + c.unsupported.length + c.differentiable.length, Object.keys(PRIMITIVES).length);
  for (const n of ["eq", "lt", "argmax", "floor", "and", "iota"] as const) assert.ok(c.zero.includes(n), n);
  for (const [name] of c.unsupported) {
    const row = PRIMITIVES[name];
    const xs = row.example.args.map((a) => randomArg(a, rng(1)));
    assert.throws(() => jvp(apply(name), xs, xs), FrontendError, `${name}: jvp names the missing rule`);
  }
});

for (const name of Object.keys(PRIMITIVES) as PrimitiveName[]) {
  if (PRIMITIVES[name].example.args.length === 0) continue;
  test(`${name}: the batching rule matches a loop over the batch`, () => {
    const next = rng(name.length * 104729 + name.charCodeAt(1));
    for (const example of examplesOf(name)) {
      const f = apply(name, example.params);
      const B = 3;
      const n = example.args.length;
      // Which arguments are batched: all, only the first, only the last.
      const configs = [Array.from({ length: n }, () => true), Array.from({ length: n }, (_, i) => i === 0), Array.from({ length: n }, (_, i) => i === n - 1)];
      let passed = 0;
      for (const batched of configs) {
        const xs = example.args.map((a, i) => randomArg(a, next, batched[i] ? B : undefined));
        // The first batched argument carries its batch axis last, to exercise moving it.
        const firstBatched = batched.indexOf(true);
        const inAxes = batched.map((b, i) => (b ? (i === firstBatched ? xs[i]!.ndim - 1 : 0) : null));
        const moved = xs.map((x, i) => (inAxes[i] !== null && inAxes[i] !== 0 ? np.moveaxis(x, 0, inAxes[i]!) : x));
        let batchedOut: ArrayBase;
        try {
          batchedOut = vmap(f, { inAxes })(...moved) as ArrayBase;
        } catch (e) {
          if (e instanceof FrontendError && /not supported/.test(e.message)) continue;
          throw e;
        }
        const loop = np.stack(Array.from({ length: B }, (_, k) => f(...xs.map((x, i) => (batched[i] ? [...x][k]! : x)))));
        assert.deepEqual(batchedOut.shape, loop.shape, `${name}: batched shape`);
        assertClose(flat(batchedOut), flat(loop), 1e-12, `${name} batched ${batched}`);
        passed++;
      }
      assert.ok(passed > 0, `${name}: no configuration of batched arguments is supported`);
    }
  });
}
