// The custom calls every evaluation knows without registering them, other than LAPACK's
// (test/linalg/lapack_*): XLA's ApproxTopK and the one-device sharding/placement markers.
// JAX-exported programs (tools/fixtures/custom_calls.py) match XLA's results on CPU.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ExecutionError, Literal, parseStableHlo, readNpz } from "../../src/index.js";
import { evaluate } from "../support/backend.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures/custom_calls");

for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith(".mlir")).sort()) {
  const name = file.slice(0, -".mlir".length);
  test(`custom calls: ${name} as JAX exports it matches XLA's results`, () => {
    const module = parseStableHlo(readFileSync(path.join(FIXTURES, file), "utf8"), file);
    const data = readNpz(new Uint8Array(readFileSync(path.join(FIXTURES, `${name}.npz`))));
    const out = evaluate(module.entry, [data.get("arg0")!]);
    const got = out.shape.kind === "tuple" ? [...out.elements] : [out];
    const want = [...data.keys()].filter((k) => k.startsWith("result")).sort().map((k) => data.get(k)!);
    assert.equal(got.length, want.length);
    got.forEach((g, i) => {
      assert.deepEqual(g.dimensions, want[i]!.dimensions, `result ${i} dimensions`);
      assert.deepEqual(g.toNumbers(), want[i]!.toNumbers(), `result ${i}`);
    });
  });
}

const marker = (target: string, result = "tensor<2x3xf32>"): string => `func.func @main(%x: tensor<2x3xf32>) -> ${result} {
  %0 = stablehlo.custom_call @${target}(%x) {backend_config = ""} : (tensor<2x3xf32>) -> ${result}
  return %0 : ${result}
}`;

test("custom calls: sharding and placement markers pass the value through on one device", () => {
  const x = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  for (const target of ["Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement", "MoveToHost", "MoveToDevice"]) {
    assert.deepEqual(evaluate(parseStableHlo(marker(target)).entry, [x]).toNested(), [[1, 2, 3], [4, 5, 6]], target);
  }
});

test("custom calls: a shard shape other than the full shape needs the partitioner (typed error)", () => {
  const x = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  assert.throws(() => evaluate(parseStableHlo(marker("SPMDFullToShardShape", "tensor<1x3xf32>")).entry, [x]),
    (e: unknown) => e instanceof ExecutionError && /SPMDFullToShardShape: on one device the result must have the operand's type f32\[2,3\]/.test(e.message));
});

test("custom calls: ApproxTopK checks its operands and attributes", () => {
  const text = (config: string, result = "tensor<2x2xf32>, tensor<2x2xi32>"): string => `
func.func @gt(%a: tensor<f32>, %b: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
  %0 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
}
func.func @main(%x: tensor<2x3xf32>) -> (${result}) {
  %i = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %f = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0:2 = stablehlo.custom_call @ApproxTopK(%x, %i, %f, %c) {called_computations = [@gt], mhlo.backend_config = {${config}}} : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (${result})
  return %0#0, %0#1 : ${result}
}`;
  const x = Literal.from("f32", [[1, 5, 3], [9, 2, 9]]);
  const run = (config: string, result?: string) => evaluate(parseStableHlo(text(config, result)).entry, [x]);
  const ok = run("top_k = 2 : i64, reduction_dim = 1 : i64, aggregate_to_topk = true");
  assert.deepEqual(ok.elements.map((e) => e.toNested()), [[[5, 3], [9, 9]], [[1, 2], [0, 2]]]);
  assert.throws(() => run("top_k = 4 : i64, reduction_dim = 1 : i64"), /ApproxTopK: top_k must be in \[0, 3\], got 4/);
  assert.throws(() => run("top_k = 2 : i64, reduction_dim = 2 : i64"), /reduction_dim must be a dimension of the 2-D input, got 2/);
  assert.throws(() => run("top_k = 2 : i64, reduction_dim = 1 : i64", "tensor<2x1xf32>, tensor<2x1xi32>"), /result 0 must be f32 with the input's shape cut along dimension 1, got f32\[2,1\]/);
});
