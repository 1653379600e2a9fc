// emitInterleaved (src/compiler/wasm/interleave.ts): the approximations (kernel/approximations.ts) for several
// vectors side by side give bit for bit what each gives alone, on inputs across every
// exponent and the specials.
import { test } from "node:test";
import assert from "node:assert/strict";
import { emitInterleaved } from "../../../src/compiler/wasm/interleave.js";
import {
  emitCbrt, emitErf, emitExp, emitExpm1, emitExpNonPositive, emitLog, emitLog1p, emitLogistic, emitTanh, type FloatOps,
} from "../../../src/compiler/kernel/approximations.js";
import { vectorF32Ops } from "../../../src/compiler/wasm/math.js";
import { rng } from "../../support/prng.js";
import { buildRun } from "./harness.js";

const ROUTINES: Record<string, (o: FloatOps, x: number) => void> = {
  exp: emitExp, expNonPositive: emitExpNonPositive, log: emitLog, log1p: emitLog1p, expm1: emitExpm1, tanh: emitTanh,
  logistic: emitLogistic, cbrt: emitCbrt, erf: emitErf,
};
const COPIES = 3;

/** run(in, out): out[c] = routine(in[c]) for vectors c < COPIES, interleaved or one after the other. */
function build(routine: (o: FloatOps, x: number) => void, interleaved: boolean) {
  return buildRun(["i32", "i32"], [], (f) => {
    const o = vectorF32Ops(f);
    const inputs = Array.from({ length: COPIES }, (_, c) => {
      const l = f.local("v128");
      f.localGet(0).v128Load(16 * c).localSet(l);
      return l;
    });
    const results = interleaved ? emitInterleaved(o, routine, inputs) : inputs.map((x) => {
      routine(o, x);
      const l = f.local("v128");
      f.localSet(l);
      return l;
    });
    results.forEach((l, c) => { f.localGet(1).localGet(l).v128Store(16 * c); });
  });
}

test("interleaved transcendentals equal the same routines one vector at a time, bit for bit", () => {
  const r = rng(5);
  const bits = new Uint32Array(4 * COPIES);
  for (const [name, routine] of Object.entries(ROUTINES)) {
    const one = build(routine, false);
    const side = build(routine, true);
    for (let trial = 0; trial < 200; trial++) {
      const values = new Float32Array(bits.buffer);
      for (let i = 0; i < bits.length; i++) bits[i] = Math.floor(r() * 2 ** 32);
      if (trial === 0) values.set([NaN, Infinity, -Infinity, 0, -0, 1, -1, 1e-45, 88.7, -87.5, -104, 0.5]);
      // The non-positive exp is defined for x ≤ 0 and NaN.
      if (name === "expNonPositive") for (let i = 0; i < values.length; i++) if (values[i]! > 0) values[i] = -values[i]!;
      const outputs = [one, side].map((b) => {
        new Uint32Array(b.memory.buffer, 0, bits.length).set(bits);
        b.run(0, 1024);
        return Array.from(new Uint32Array(b.memory.buffer, 1024, bits.length));
      });
      assert.deepEqual(outputs[1], outputs[0], `${name}: inputs ${Array.from(values).join(", ")}`);
    }
  }
});
