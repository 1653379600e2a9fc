// `xlats run --timeout` stops straight-line work too: one long dot on the interpreter
// (no loop iteration or call where the run's own deadline checks could see the time)
// is stopped soon after its deadline, with a message and exit code 1, where it would
// otherwise run for minutes.

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { test } from "node:test";
import { tempFiles, xlats } from "./helpers.js";

// 4000^3 = 6.4e10 multiply-adds: minutes for the interpreter's JavaScript kernel.
const LONG_DOT = `func.func @main() -> tensor<4000x4000xf32> {
  %i = stablehlo.iota dim = 0 : tensor<4000x4000xf32>
  %d = stablehlo.dot_general %i, %i, contracting_dims = [1] x [0] : (tensor<4000x4000xf32>, tensor<4000x4000xf32>) -> tensor<4000x4000xf32>
  return %d : tensor<4000x4000xf32>
}
`;

test("run --timeout stops one long kernel: exit 1 and a message, soon after the deadline", () => {
  const dir = tempFiles({ "dot.mlir": LONG_DOT });
  const started = Date.now();
  const r = xlats("run", join(dir, "dot.mlir"), "--backend", "interpreter", "--timeout", "2");
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  // The supervisor stops the dot. On a loaded machine the iota before it may itself end
  // past the deadline, and the run's own check between instructions stops it first:
  // also a stop with exit 1, and the only other message allowed.
  assert.match(r.stderr, /^error: run: (still running 1 s past its --timeout of 2 s: stopped|stopped at its --timeout of 2 s \(main: evaluation passed its deadline\))\n$/);
  // The helper's own limit is 30 s; the dot alone runs for minutes.
  assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
});

test("run --timeout on a program that ends in time prints its results and exits 0", () => {
  const dir = tempFiles({ "small.mlir": LONG_DOT.replaceAll("4000", "2") });
  const r = xlats("run", join(dir, "small.mlir"), "--backend", "interpreter", "--timeout", "60");
  assert.equal(r.code, 0, r.stderr);
  // iota along dim 0 is [[0, 0], [1, 1]]; its square is [[0, 0], [1, 1]].
  assert.equal(r.stdout, "dense<[[0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>\n");
});

// A while loop whose condition stays true: the run's own deadline check between
// iterations stops it, on the interpreter and on a compiled backend, and the message
// names the --timeout that did it (each backend words its check its own way).
const ENDLESS = `func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %r = stablehlo.while(%i = %x) : tensor<i32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      stablehlo.return %i : tensor<i32>
    }
  return %r : tensor<i32>
}
`;

test("run --timeout stops an endless loop with a message naming the --timeout, on the interpreter and on wasm", () => {
  const dir = tempFiles({ "loop.mlir": ENDLESS });
  // The interpreter names the computation whose check saw the time (the loop's condition or body).
  const said = { interpreter: String.raw`main(\.region\.\d+)?: evaluation passed its deadline`, wasm: String.raw`main: the run passed its deadline` };
  for (const backend of ["interpreter", "wasm"] as const) {
    const r = xlats("run", join(dir, "loop.mlir"), "--arg", "dense<0> : tensor<i32>", "--backend", backend, "--timeout", "1");
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, "");
    // Or, on a machine so loaded that the loop's check came late, the supervisor's stop.
    const expected = new RegExp(String.raw`^error: run: (stopped at its --timeout of 1 s \(${said[backend]}\)|still running 1 s past its --timeout of 1 s: stopped)\n$`);
    assert.match(r.stderr, expected, backend);
  }
});
