// Issue 9, tried as a new user would: StableHLO that JAX exports for jnp.arcsinh,
// jax.scipy.special.gammaln and jax.random.gamma (test/fixtures/jax_new_user, written by
// tools/fixtures/jax_new_user.py), run on the interpreter and compared with XLA's CPU
// outputs and, for the deterministic functions, with a 200-bit mpmath reference.
//
// XLA's CPU backend flushes f32 subnormals to zero; where XLA gives ±0 and the
// interpreter a subnormal (or the input was subnormal), the two agree up to that flush.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Literal } from "../../src/types/literal.js";
import { fixtureDir, loadJaxFixture } from "../support/jax_fixture.js";
import { ulpDistance } from "../support/ulp.js";

const dir = fixtureDir("jax_new_user");
const SMALLEST_NORMAL = 2 ** -126;
const isSubnormal = (x: number): boolean => x !== 0 && Math.abs(x) < SMALLEST_NORMAL;
const numbers = (lit: Literal): number[] => lit.values().map(Number);

/** Max ULP distance between interpreter and `against`, leaving out the pairs XLA's flush of subnormals explains. */
function maxUlp(got: number[], against: number[], inputs: number[] | undefined, what: string): number {
  let worst = 0;
  got.forEach((g, i) => {
    const w = against[i]!;
    const flushed = (w === 0 && isSubnormal(g)) || (inputs !== undefined && isSubnormal(inputs[i]!));
    if (flushed) return;
    const d = ulpDistance("f32", g, w);
    assert.ok(Number.isFinite(d), `${what}[${i}]: interpreter ${g}, expected ${w}`);
    worst = Math.max(worst, d);
  });
  return worst;
}

for (const [name, vsReference] of [["arcsinh_f32", 0], ["gammaln_f32", 1]] as const) {
  test(`jax new user: ${name} is within ${vsReference} ulp of the exactly rounded value, and as close to XLA as XLA is to it`, (t) => {
    const { run, args, arrays } = loadJaxFixture(dir, name);
    const got = numbers(run(args)), xla = numbers(arrays.get("xla")!), reference = numbers(arrays.get("reference")!);
    const inputs = numbers(args[0]!);
    const toReference = maxUlp(got, reference, inputs, `${name} vs reference`);
    assert.ok(toReference <= vsReference, `${name}: ${toReference} ulp from the reference`);
    const xlaToReference = maxUlp(xla, reference, inputs, `${name} XLA vs reference`);
    const toXla = maxUlp(got, xla, inputs, `${name} vs XLA`);
    assert.ok(toXla <= xlaToReference + vsReference, `${name}: ${toXla} ulp from XLA`);
    t.diagnostic(`${name}: ${toReference} ulp from the reference, ${toXla} from XLA (XLA is ${xlaToReference} from the reference)`);
  });
}

test("jax new user: jax.random.gamma draws XLA's samples within 8 ulp (log, pow and erf_inv round differently)", (t) => {
  const { run, args, arrays } = loadJaxFixture(dir, "random_gamma_f32");
  const got = numbers(run(args)), xla = numbers(arrays.get("xla")!);
  const toXla = maxUlp(got, xla, undefined, "random_gamma_f32");
  assert.ok(toXla <= 8, `random_gamma_f32: ${toXla} ulp from XLA`);
  t.diagnostic(`random_gamma_f32: ${toXla} ulp from XLA`);
});
