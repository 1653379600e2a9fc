// Bugs `npm run fuzz` found past the parsers (its compiled and sharded surfaces), each as
// the smallest program that showed it, compared with values known independently.

import { spawnSync } from "node:child_process";
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, arrayShape, broadcastInDim, Literal, parameter, XlaBuilder } from "../../src/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { compileSync } from "../../src/compiler/index.js";

const compiledBackends = (["wasm", "native"] as const).filter((b) => BACKENDS[b].available() === true);

test("a broadcast_in_dim that transposes while adding a size-1 dimension is not a reshape (fuzz compiled seed 11, program 2144)", () => {
  // The simplifier's transpose-or-broadcast-is-reshape took broadcast_in_dim(f32[3,3] ->
  // f32[3,3,1], dimensions={1,0}) for a reshape: sizes matched, the order was not checked.
  const b = new XlaBuilder("transposing_broadcast");
  const p = parameter(b, 0, arrayShape("f32", [3, 3]), "p");
  const c = b.build(broadcastInDim(add(p, p), [3, 3, 1], [1, 0]));
  const x = Literal.fromValues("f32", [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // out[i][j][0] = 2 · x[j][i]
  for (const backend of compiledBackends) {
    const executable = compileSync(c, { backend });
    try {
      assert.deepEqual(executable.run([x]).toNumbers(), [2, 8, 14, 4, 10, 16, 6, 12, 18], backend);
    } finally {
      executable.delete();
    }
  }
});

test("polygamma and zeta at q = -∞ end, with XLA's values (fuzz compiled seed 11, batches 513 and 5699)", () => {
  // The Hurwitz sum ran from k = ∞ down: -∞ is no integer to Number.isInteger, but XLA's
  // test, q == floor(q), takes it for a non-positive integer: ζ(s, -∞) = +∞, and
  // ψ⁽ⁿ⁾(-∞) = (-1)^(n+1) n! ζ(n+1, -∞): +∞ for odd n, -∞ for even n. In a child
  // process with a time limit: a kernel's endless loop is out of reach of any deadline.
  const index = new URL("../../src/index.js", import.meta.url).href;
  const script = `
    import { arrayShape, binaryOp, evaluate, Literal, parameter, XlaBuilder } from ${JSON.stringify(index)};
    const run = (opcode, first) => {
      const b = new XlaBuilder(opcode);
      const c = b.build(binaryOp(opcode, parameter(b, 0, arrayShape("f64", [3]), "a"), parameter(b, 1, arrayShape("f64", [3]), "q")));
      return evaluate(c, [Literal.fromValues("f64", [3], first), Literal.fromValues("f64", [3], [-Infinity, -Infinity, -Infinity])]).toNumbers().map(String);
    };
    console.log(JSON.stringify([run("polygamma", [1, 2, 3]), run("zeta", [2, 3, 4.5])]));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.signal, null, "the evaluation did not end");
  assert.equal(r.status, 0, r.stderr);
  const [polygamma, zeta] = JSON.parse(r.stdout) as string[][];
  assert.deepEqual(polygamma, ["Infinity", "-Infinity", "Infinity"]);
  assert.deepEqual(zeta, ["Infinity", "Infinity", "Infinity"]);
});
