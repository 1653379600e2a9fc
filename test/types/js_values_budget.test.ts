// The interpreter stays inside the memory budget: a result larger than the budget is a
// ResourceError naming its instruction before the kernel runs, and so are the JS arrays
// its kernels hold values in (8 bytes an element, at most 2^27 - 3 elements: past that
// V8 ends the process). Printing reads only the elements it shows, so a summary of an
// array past a JS array's limit prints.

import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, ResourceError, XlaBuilder, add, arrayShape, broadcast, constantR0, evaluate, numpyRepr, parameter, reduce, scalarShape, setMemoryBudget,
} from "../../src/index.js";
import { MAX_JS_ARRAY_ELEMENTS } from "../../src/types/resource.js";

function sumOf(n: number) {
  const b = new XlaBuilder("sum_all");
  const s = b.createSubBuilder("add");
  const adder = s.build(add(parameter(s, 0, scalarShape("f32")), parameter(s, 1, scalarShape("f32"))));
  return b.build(reduce(parameter(b, 0, arrayShape("f32", [n]), "x"), constantR0(b, "f32", 0), adder, [0]));
}

function withBudget<T>(bytes: number, f: () => T): T {
  const previous = setMemoryBudget(bytes);
  try {
    return f();
  } finally {
    setMemoryBudget(previous);
  }
}

test("a kernel's JS values past the budget: a ResourceError naming the instruction (the storage fits, its JS array does not)", () => {
  const x = Literal.fromValues("f32", [10_000], new Float32Array(10_000).fill(1));
  // 40,000 bytes of storage fit a budget of 64,000; 10,000 JS values take 80,000.
  assert.throws(() => withBudget(64_000, () => evaluate(sumOf(10_000), [x])), (e: unknown) =>
    e instanceof ResourceError && e.bytes === 80_000 && /^sum_all, instruction reduce\.\d+: f32\[10000\] as JS values needs 80000 bytes, more than the memory budget of 64000 bytes$/.test(e.message));
  // Inside the budget the same reduction runs: 10,000 ones.
  assert.equal(withBudget(100_000, () => evaluate(sumOf(10_000), [x])).data[0], 10_000);
});

test("a result past the budget is refused before its kernel allocates it", () => {
  const b = new XlaBuilder("wide");
  const root = broadcast(parameter(b, 0, scalarShape("f32"), "x"), [1000, 1000]);
  assert.throws(() => withBudget(1_000_000, () => evaluate(b.build(root), [Literal.scalar("f32", 1)])), (e: unknown) =>
    e instanceof ResourceError && e.bytes === 4_000_000 && /^wide, instruction broadcastInDim\.\d+: f32\[1000,1000\] needs 4000000 bytes/.test(e.message));
});

test("more elements than a JS array holds: values() is a ResourceError, and numpyRepr still prints a summary", () => {
  const n = MAX_JS_ARRAY_ELEMENTS + 1;
  // One byte an element: 128 MiB of storage, under the default budget.
  const big = Literal.zeros(arrayShape("u8", [n]));
  big.data[n - 1] = 7;
  assert.throws(() => big.values(), (e: unknown) =>
    e instanceof ResourceError && /^u8\[134217726\] needs 134217726 elements as JS values, more than the 134217725 a JS array holds$/.test(e.message));
  assert.equal(numpyRepr(big), "array([0, 0, 0, ..., 0, 0, 7], shape=(134217726,), dtype=uint8)");
});
