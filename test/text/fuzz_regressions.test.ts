// The smallest inputs behind what `npm run fuzz` found (issue 10, items 5 and 6): each
// must end quickly in a typed error with a position, never a TypeError, RangeError or
// hang; shapes past the memory budget are ResourceErrors; runaway loops stop at a deadline.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  arrayShape, DeadlineError, evaluate, ExecutionError, Literal, ParseError, parseStableHlo, ResourceError, setMemoryBudget, verifyMemoryBudget,
} from "../../src/index.js";
import { compile } from "../../src/compiler/index.js";
import { InstructionFactory } from "../../src/ir/factory.js";
import { mlirCallChain } from "../../tools/fuzz/corpus.js";
import { tempFiles, xlats } from "../cli/helpers.js";
import { join } from "node:path";

function parseError(text: string, reason: RegExp, line: number, column?: number): void {
  assert.throws(() => parseStableHlo(text), (e: unknown) => {
    assert.ok(e instanceof ParseError, `expected a ParseError, got ${String(e)}`);
    assert.match(e.reason, reason);
    assert.equal(e.line, line);
    if (column !== undefined) assert.equal(e.column, column);
    return true;
  });
}

test("a huge result count is a ParseError at the count, not a hang", () => {
  const started = Date.now();
  parseError("func.func @f() {\n  %0:2147483647 = stablehlo.iota dim = 0 : tensor<4xi32>\n  func.return\n}", /result count must be between 1 and 65536/, 2, 6);
  parseError("func.func @f() {\n  %0:0 = stablehlo.iota dim = 0 : tensor<4xi32>\n  func.return\n}", /result count/, 2);
  assert.ok(Date.now() - started < 1000);
});

test("an op name swapped for one with more operands is a ParseError, not a TypeError in the importer", () => {
  parseError("func.func @f() {\n  %0 = stablehlo.outfeed dense<[1.0]> : tensor<1xf32>\n  func.return\n}", /outfeed: too few operands/, 2);
  parseError("func.func @f() {\n  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n  %1 = stablehlo.dynamic_broadcast_in_dim %0 : (tensor<f32>) -> tensor<2xf32>\n  func.return\n}",
    /missing attribute broadcast_dimensions/, 3);
});

test("complex elements do not nest: deep parentheses in a dense literal are a ParseError, not a stack overflow", () => {
  parseError(`func.func @f() {\n  %0 = stablehlo.constant dense<${"(".repeat(100_000)}> : tensor<complex<f32>>\n  func.return\n}`, /expected a dense element/, 2, 34);
});

test("a signed hex bit pattern is a ParseError, not a SyntaxError from BigInt", () => {
  parseError("func.func @f() {\n  %0 = stablehlo.constant dense<-0xFF800000> : tensor<f32>\n  func.return\n}", /bit pattern -0xFF800000 has a sign/, 2, 33);
  // A complex part's bit pattern too (found by the 100,000-input run).
  parseError("func.func @f() {\n  %0 = stablehlo.constant dense<(0x0, -0x11111111)> : tensor<complex<f32>>\n  func.return\n}", /bit pattern -0x11111111 has a sign/, 2, 39);
});

test("a convolution spatial label past the rank is a ParseError, not a 2^31-long sparse array (a hang)", () => {
  const conv = (dims: string): string => "func.func @f(%x: tensor<1x4x4x1xf32>, %w: tensor<1x2x1x4xf32>) -> tensor<1x4x3x4xf32> {\n" +
    `  %0 = stablehlo.convolution(%x, %w) dim_numbers = ${dims}, window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<1x2x1x4xf32>) -> tensor<1x4x3x4xf32>\n` +
    "  func.return %0 : tensor<1x4x3x4xf32>\n}";
  const started = Date.now();
  parseError(conv("[b, 0, 1, f]x[2147483647, 1, i, o]->[b, 0, 1, f]"), /spatial dimension label '2147483647'.*must be 0 to 1, each once/, 2);
  parseError(conv("[b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]"), /spatial dimension label '0'.*each once/, 2);
  assert.ok(Date.now() - started < 1000);
  // The well-formed numbering still reads.
  assert.equal(parseStableHlo(conv("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]")).entry.root.opcode, "convolution");
});

test("a call chain deeper than the stack, callers written before callees, imports; evaluating it is a typed error", () => {
  const module = parseStableHlo(mlirCallChain(3000));
  assert.equal(module.computations.length, 3001);
  assert.throws(() => evaluate(module.entry, []), (e: unknown) => e instanceof ExecutionError && /nest more than 1000 calls deep/.test(e.message));
  // A chain closed into a cycle (found by the text fuzzer, seed 11, input 17618) is a
  // ParseError naming the cycle, found before building would recurse through it.
  const cycle = mlirCallChain(3000).replace("func.call @f2778(", "func.call @f1(");
  assert.throws(() => parseStableHlo(cycle), (e: unknown) => e instanceof ParseError && /@f1 calls itself \(through @f2777\); recursion is not supported/.test(e.message));
  // A shallow chain still computes: negate once at the end of 10 calls.
  assert.deepEqual(evaluate(parseStableHlo(mlirCallChain(10)).entry, []).toNumbers(), [-1]);
});

test("unique names: the n-th value of one name is name.n, and a name given back is reused", () => {
  const f = new InstructionFactory("c");
  const names = Array.from({ length: 5 }, () => f.uniqueName("x"));
  assert.deepEqual(names, ["x", "x.1", "x.2", "x.3", "x.4"]);
  f.releaseName("x.1");
  assert.equal(f.uniqueName("x"), "x.1");
  assert.equal(f.uniqueName("x"), "x.5");
});

const hugeIota = "func.func @main() -> tensor<4294967296xf32> {\n  %0 = stablehlo.iota dim = 0 : tensor<4294967296xf32>\n  func.return %0 : tensor<4294967296xf32>\n}\n";

test("a value past the memory budget is a ResourceError at verification, naming the instruction and its size", () => {
  assert.throws(() => verifyMemoryBudget(parseStableHlo(hugeIota)), (e: unknown) => {
    assert.ok(e instanceof ResourceError, String(e));
    assert.equal(e.bytes, 4 * 2 ** 32);
    assert.match(e.message, /instruction 0 \(line 2, column 3\): f32\[4294967296\] needs 17179869184 bytes, more than the memory budget/);
    return true;
  });
  // A byte size past 2^53 is said to overflow, not printed as a wrong number.
  assert.throws(() => Literal.zeros(arrayShape("f64", [2 ** 30, 2 ** 30, 2 ** 10])), (e: unknown) => e instanceof ResourceError && /overflows/.test(e.message));
});

test("the memory budget is configurable", () => {
  const module = parseStableHlo("func.func @main() -> tensor<1024xf32> {\n  %0 = stablehlo.iota dim = 0 : tensor<1024xf32>\n  func.return %0 : tensor<1024xf32>\n}\n");
  verifyMemoryBudget(module);
  const previous = setMemoryBudget(1000);
  try {
    assert.throws(() => verifyMemoryBudget(module), (e: unknown) => e instanceof ResourceError && e.bytes === 4096);
    assert.throws(() => Literal.zeros(arrayShape("f32", [1024])), ResourceError);
  } finally {
    setMemoryBudget(previous);
  }
});

const endlessLoop = `func.func @main() -> tensor<i64> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%i = %zero) : tensor<i64>
  cond {
    %c = stablehlo.compare GE, %i, %zero : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %n : tensor<i64>
  }
  func.return %r : tensor<i64>
}
`;

test("an endless while stops at the deadline on the interpreter and compiled", async () => {
  const entry = parseStableHlo(endlessLoop).entry;
  let started = Date.now();
  assert.throws(() => evaluate(entry, [], { deadline: started + 200 }), DeadlineError);
  assert.ok(Date.now() - started < 5000);
  const exe = await compile(entry);
  started = Date.now();
  assert.throws(() => exe.run([], { deadline: started + 200 }), DeadlineError);
  assert.ok(Date.now() - started < 5000);
});

test("xlats run --timeout stops an endless loop with an error", () => {
  const dir = tempFiles({ "loop.mlir": endlessLoop, "big.mlir": hugeIota });
  for (const backend of ["interpreter", "wasm"]) {
    const r = xlats("run", join(dir, "loop.mlir"), "--timeout", "0.3", "--backend", backend);
    assert.equal(r.code, 1);
    // The run's own deadline check, or, when start-up on a loaded machine takes longer
    // than the deadline's 1 s grace, the parent stopping the child: both are a stop.
    assert.match(r.stderr, /passed its deadline|past its --timeout of 0\.3 s: stopped/);
  }
  assert.match(xlats("run", join(dir, "loop.mlir"), "--timeout", "soon").stderr, /--timeout takes a positive number of seconds/);
  const big = xlats("run", join(dir, "big.mlir"));
  assert.equal(big.code, 1);
  assert.match(big.stderr, /more than the memory budget/);
});

test("a tensor dimension past 2^53 is a ParseError, not silently rounded to a neighbour (the text fuzzer, seed 11 input 22420)", () => {
  const text = "func.func @main() -> tensor<9007199254740993x0x3xi4> {\n  %0 = stablehlo.constant dense<> : tensor<9007199254740993x0x3xi4>\n  return %0 : tensor<9007199254740993x0x3xi4>\n}";
  assert.throws(() => parseStableHlo(text), (e: unknown) => e instanceof ParseError && /dimension size 9007199254740993 is out of range/.test(e.message) && /1:29/.test(e.message));
});

test("a zero splat is left as allocated, a -0 splat still written with its sign", () => {
  const splat = (v: string): number[] =>
    evaluate(parseStableHlo(`func.func @main() -> tensor<3xf32> {\n  %0 = stablehlo.constant dense<${v}> : tensor<3xf32>\n  return %0 : tensor<3xf32>\n}`).entry, []).toNumbers();
  assert.ok(splat("0.0").every((x) => Object.is(x, 0)));
  assert.ok(splat("-0.0").every((x) => Object.is(x, -0)));
  assert.deepEqual(splat("2.5"), [2.5, 2.5, 2.5]);
});

test("a splat is written only when read: a 1 GiB splat before a parse error allocates nothing", () => {
  const before = process.memoryUsage().arrayBuffers;
  for (const body of ["1.5", '"0x0000C03F"']) {
    parseError(`func.func @f() {\n  %0 = stablehlo.constant dense<${body}> : tensor<268435456xf32>\n  %1 = stablehlo.bogus %0 : tensor<268435456xf32>\n}`, /unknown operation/, 3);
  }
  assert.ok(process.memoryUsage().arrayBuffers - before < 2 ** 26, "the splat's storage was allocated");
  // Read, it holds its element everywhere (complex: both parts; hex: the bytes of one element).
  const run = (text: string): Literal[] => [evaluate(parseStableHlo(text).entry, [])].flatMap((r) => (r.shape.kind === "tuple" ? r.elements : [r]));
  const [c, h] = run(`func.func @main() -> (tensor<3xcomplex<f32>>, tensor<2xbf16>) {
  %0 = stablehlo.constant dense<(1.5, -2.0)> : tensor<3xcomplex<f32>>
  %1 = stablehlo.constant dense<"0x803F"> : tensor<2xbf16>
  return %0, %1 : tensor<3xcomplex<f32>>, tensor<2xbf16>
}`);
  assert.deepEqual([...c!.data], [1.5, -2, 1.5, -2, 1.5, -2]);
  assert.deepEqual(h!.toNumbers(), [1, 1]);
});

test("the constant size limit counts bytes as stored: an i1 takes a byte", () => {
  parseError("func.func @f() {\n  %0 = stablehlo.constant dense<true> : tensor<2147483647xi1>\n  func.return\n}", /would take 2147483647 bytes; the limit is 1073741824/, 2);
});
