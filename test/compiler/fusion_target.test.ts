// Fusion asks the target what it can lower (kernel/capabilities.ts): an op no generator
// of the backend has code for runs alone on the interpreter's kernel, and the ops around
// it still become kernels, on wasm and on native (where a C compiler works); a reduction
// it declines likewise runs alone, and its input is still a kernel. Results are
// compared with the interpreter: bit for bit where every compiled op is exact, within
// the transcendental's ulp bound where tanh is compiled.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compileSync, defaultDevice } from "../../src/compiler/index.js";
import { nativeToolchain } from "../../src/compiler/native/toolchain.js";
import { nativeCapabilities } from "../../src/compiler/native/capabilities.js";
import { wasmCapabilities } from "../../src/compiler/wasm/capabilities.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import type { Instruction } from "../../src/ir/computation.js";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import { Literal } from "../../src/types/literal.js";
import { XlaBuilder, add, arrayShape, constantR0, mul, parameter, reduce, scalarShape, type Computation, type ElementType } from "../../src/index.js";
import { ulpDistance } from "../support/ulp.js";

const toolchain = nativeToolchain();
const BACKENDS = typeof toolchain === "string" ? ["wasm"] as const : ["wasm", "native"] as const;
if (typeof toolchain === "string") console.log(`# native half skipped: ${toolchain}`);

const N = 4096;
const T = `tensor<${N}xf32>`;

/** The example: lgamma -> multiply -> add -> tanh. */
const LGAMMA_TANH = `func.func @main(%x: ${T}, %y: ${T}) -> ${T} {
    %0 = chlo.lgamma %x : ${T} -> ${T}
    %1 = stablehlo.multiply %0, %y : ${T}
    %2 = stablehlo.add %1, %y : ${T}
    %3 = stablehlo.tanh %2 : ${T}
    return %3 : ${T}
  }`;

/** lgamma between two exact chains: its producers and its users become one kernel each. */
const BETWEEN = `func.func @main(%x: ${T}, %y: ${T}) -> ${T} {
    %0 = stablehlo.multiply %x, %y : ${T}
    %1 = stablehlo.abs %0 : ${T}
    %2 = chlo.lgamma %1 : ${T} -> ${T}
    %3 = stablehlo.subtract %2, %y : ${T}
    %4 = stablehlo.maximum %3, %x : ${T}
    return %4 : ${T}
  }`;

function inputs(): Literal[] {
  const x = Array.from({ length: N }, (_, i) => 0.05 + (i % 97) * 0.11);
  const y = Array.from({ length: N }, (_, i) => ((i * 37) % 101) / 50 - 1);
  return [Literal.from("f32", x), Literal.from("f32", y)];
}

function run(text: string, backend: "wasm" | "native", ulps: number): { kernels: number; interpreted: readonly { name: string; why: string }[]; dump: string } {
  const module = parseStableHlo(text);
  const args = inputs();
  const expected = evaluate(module.entry, args).toNumbers();
  const exe = compileSync(module, { backend });
  try {
    const got = exe.run(args).toNumbers();
    for (let i = 0; i < N; i++) {
      const d = ulpDistance("f32", got[i]!, expected[i]!);
      assert.ok(d <= ulps, `${backend} element ${i}: ${got[i]} vs the interpreter's ${expected[i]} (${d} ulp)`);
    }
    return { kernels: exe.stats.kernels, interpreted: exe.stats.interpreted, dump: exe.dump() };
  } finally {
    exe.delete();
  }
}

for (const backend of BACKENDS) {
  test(`${backend}: lgamma -> multiply -> add -> tanh is one kernel and lgamma interpreted`, () => {
    const r = run(LGAMMA_TANH, backend, 4);
    assert.equal(r.kernels, 1, r.dump);
    assert.equal(r.interpreted.length, 1, r.dump);
    assert.match(r.interpreted[0]!.why, /lgamma/);
    assert.match(r.dump, /lgamma\(/);
  });

  test(`${backend}: an op the target declines cuts the group in two, bit for bit as the interpreter`, () => {
    const r = run(BETWEEN, backend, 0);
    assert.equal(r.kernels, 2, r.dump);
    assert.deepEqual(r.interpreted.map((s) => /lgamma/.test(s.why)), [true], r.dump);
  });
}

/** sum over rows of x·x + x, in type t: a loop fusion's ops feeding a reduce. */
function rowSums(t: ElementType): Computation {
  const b = new XlaBuilder(`row_sums_${t}`);
  const x = parameter(b, 0, arrayShape(t, [64, 300]), "x");
  const sb = b.createSubBuilder("sum");
  const sum = sb.build(add(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
  return b.build(reduce(add(mul(x, x), x), constantR0(b, t, 0), sum, [1]));
}

for (const backend of BACKENDS) {
  test(`${backend}: a reduction the target declines (f8e4m3fn sums) runs alone on the interpreter, and its input is one kernel`, () => {
    const c = rowSums("f8e4m3fn");
    const args = [Literal.fromValues("f8e4m3fn", [64, 300], Array.from({ length: 64 * 300 }, (_, i) => (((i * 7) % 13) - 6) / 8))];
    const expected = evaluate(c, args).toNumbers();
    const exe = compileSync(c, { backend });
    try {
      const got = exe.run(args).toNumbers();
      const dump = exe.dump();
      // The kernel's x·x + x rounds each op to f8e4m3fn as the interpreter does, and the sum is the interpreter's own.
      for (let i = 0; i < expected.length; i++) assert.ok(Object.is(got[i], expected[i]), `${backend} row ${i}: ${got[i]} vs ${expected[i]}`);
      assert.equal(exe.stats.kernels, 1, dump);
      assert.equal(exe.stats.interpreted.length, 1, dump);
      assert.match(exe.stats.interpreted[0]!.name, /^reduce/, dump);
      // Fusion's log says why the reduce was left out.
      assert.match(dump, /reduce[.\d]* \(reduce\) is not fused: reductions of f8e4m3fn are not compiled/, dump);
    } finally {
      exe.delete();
    }
  });
}

test("capabilities: reductions, by element type and reducer", () => {
  const reduceOf = (c: Computation): Instruction => c.root;
  const targets = [wasmCapabilities({ wasm: defaultDevice().target }), ...(BACKENDS.length === 2 ? [nativeCapabilities({ wasm: defaultDevice().target })] : [])];
  for (const capabilities of targets) {
    const f8 = capabilities.canLowerReduction(reduceOf(rowSums("f8e4m3fn")));
    assert.notEqual(f8, true);
    assert.match((f8 as { declined: string }).declined, /f8e4m3fn/);
    assert.equal(capabilities.canLowerReduction(reduceOf(rowSums("f32"))), true);
  }
  // bf16 sums: the WebAssembly generator declines them (they would not round as the interpreter's), the C one has them.
  const bf16 = reduceOf(rowSums("bf16"));
  assert.notEqual(wasmCapabilities({ wasm: defaultDevice().target }).canLowerReduction(bf16), true);
  if (BACKENDS.length === 2) assert.equal(nativeCapabilities({ wasm: defaultDevice().target }).canLowerReduction(bf16), true);
});

test("capabilities: the generators' answers, with their reasons", () => {
  const module = parseStableHlo(LGAMMA_TANH);
  const byOpcode = (opcode: string): Instruction => module.entry.instructions.find((i) => i.opcode === opcode)!;
  const targets = [wasmCapabilities({ wasm: defaultDevice().target }), ...(BACKENDS.length === 2 ? [nativeCapabilities({ wasm: defaultDevice().target })] : [])];
  for (const capabilities of targets) {
    const lgamma = capabilities.canLowerScalar(byOpcode("lgamma"));
    assert.notEqual(lgamma, true);
    assert.match((lgamma as { declined: string }).declined, /interpreter/);
    for (const opcode of ["multiply", "add", "tanh"]) assert.equal(capabilities.canLowerScalar(byOpcode(opcode)), true, opcode);
  }
});
