// Programs with dynamic shapes through the runtime client (Client.compile/execute):
// JAX's shape-polymorphic exports (test/fixtures/shape_poly, with the results XLA
// computed for two batch sizes) compiled once and executed for each batch on the wasm
// and native backends, matching XLA's results and the interpreter's run of the program
// refined for the same shapes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { hasDynamicShapes, refineEntry, RefineError } from "../../src/passes/refine_shapes.js";
import { createClient } from "../../src/runtime/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { Literal } from "../../src/types/literal.js";
import { readNpz } from "../../src/types/npz.js";
import { assertCloseToXla } from "../support/close.js";
import { ExecutionError } from "../../src/types/errors.js";

const here = path.dirname(fileURLToPath(import.meta.url));
// dist/test/runtime -> the repository root.
const fixtures = path.resolve(here, "../../../test/fixtures/shape_poly");

const FIXTURES = ["weighted_rows", "doubled_pairs", "softmax_layer", "carried_loop"];

for (const backend of ["wasm", "native"] as const) {
  const available = BACKENDS[backend].available();
  test(`Client on ${backend}: shape-polymorphic JAX exports compile once and run for batches 3 and 5 (XLA's results, the interpreter's)`, { skip: available !== true && String(available) }, async () => {
    const client = await createClient({ backend, deviceCount: 2 });
    try {
      for (const name of FIXTURES) {
        const module = parseStableHlo(readFileSync(path.join(fixtures, `${name}.mlir`), "utf8"), `${name}.mlir`);
        assert.ok(hasDynamicShapes(module.entry));
        const arrays = readNpz(readFileSync(path.join(fixtures, `${name}.npz`)));
        // One compile, two partitions running the same program, each batch size its own specialization.
        const exe = await client.compile(module.entry, { partitions: 2 });
        try {
          for (const i of [0, 1, 0]) {
            const x = arrays.get(`x${i}`)!;
            const results = await client.execute(exe, [[x], [x]]);
            const got = await Promise.all(results.map((b) => b.toLiteral()));
            const batch = `batch ${x.dimensions[0]}`;
            const interpreted = evaluate(refineEntry(module.entry, [x.shape]), [x]);
            for (const r of got) {
              assertCloseToXla(r, arrays.get(`y${i}`)!, `${name} on ${backend}, ${batch}, against XLA`);
              assertCloseToXla(r, interpreted, `${name} on ${backend}, ${batch}, against the interpreter`);
            }
          }
        } finally {
          exe.delete();
        }
      }
    } finally {
      await client.close();
    }
  });
}

test("Client: a dynamic program's argument of a shape its type does not admit is an ExecutionError naming it; a failed shape assertion is a RefineError", async () => {
  const client = await createClient({ backend: "wasm" });
  try {
    const module = parseStableHlo(`func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = stablehlo.add %x, %x : tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}`);
    const exe = await client.compile(module.entry);
    await assert.rejects(client.execute(exe, [[Literal.fromValues("f32", [2, 5], new Array(10).fill(1))]]),
      (e: unknown) => e instanceof ExecutionError && /argument 0 has shape f32\[2,5\], which f32\[\?,4\] does not admit/.test(e.message));
    const [doubled] = await client.execute(exe, [[Literal.fromValues("f32", [2, 4], [1, 2, 3, 4, 5, 6, 7, 8])]]);
    assert.deepEqual((await doubled!.toLiteral()).toNested(), [[2, 4, 6, 8], [10, 12, 14, 16]]);
    exe.delete();
    // JAX's shape assertion (a batch of at least 1) fails for an empty batch: refinement says so.
    const rows = parseStableHlo(readFileSync(path.join(fixtures, "weighted_rows.mlir"), "utf8"), "weighted_rows.mlir");
    const exe2 = await client.compile(rows.entry);
    await assert.rejects(client.execute(exe2, [[Literal.fromValues("f32", [0, 4], [])]]),
      (e: unknown) => e instanceof RefineError && /Expected value >= 1 for dimension variable 'b'/.test(e.message));
    exe2.delete();
  } finally {
    await client.close();
  }
});
