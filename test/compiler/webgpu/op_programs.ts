// What the op-kernel tests of the WebGPU backend share (op_kernels.test.ts,
// op_kernel_types.test.ts): a StableHLO program run on webgpu with no host step and compared
// with the interpreter bit for bit, and the texts of the programs they run.

import assert from "node:assert/strict";
import { compile } from "../../../src/compiler/index.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseMlirLiteral, parseStableHlo } from "../../../src/index.js";

/** Runs `text` on webgpu with `args` (MLIR literals): no host step, the interpreter's bits in every result. */
export async function checkSame(text: string, args: readonly string[]): Promise<void> {
  const computation = parseStableHlo(text).entry;
  const literals = args.map((a) => parseMlirLiteral(a));
  const exe = await compile(computation, { backend: "webgpu" });
  try {
    assert.deepEqual(exe.stats.interpreted, [], exe.dump());
    const got = await exe.run(literals);
    const want = evaluate(computation, literals);
    const bytes = (l: typeof got): Uint8Array => {
      const d = l.toDefaultLayout().data;
      return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
    };
    const wants = want.arrayLeaves();
    got.arrayLeaves().forEach((leaf, k) => {
      assert.deepEqual(leaf.values(), wants[k]!.values(), exe.dump());
      // NaN payloads and signed zeros too.
      assert.deepEqual(bytes(leaf), bytes(wants[k]!));
    });
  } finally {
    exe.delete();
  }
}

/** MLIR nested list text of `xs` in rows of `n`. */
export function chunk(xs: readonly string[], n: number): string {
  const rows: string[] = [];
  for (let k = 0; k < xs.length; k += n) rows.push(`[${xs.slice(k, k + n).join(", ")}]`);
  return rows.join(", ");
}

/** A scatter of `x` (XxT) by indices (IxI) and updates (UxT) whose update computation is `body` over %a (the current value) and %b (the update). */
export const scatter = (shapes: { x: string; i: string; u: string; t: string }, dims: string, body: string): string => {
  const scalar = `tensor<${shapes.t}>`;
  return `func.func @main(%x: tensor<${shapes.x}>, %i: tensor<${shapes.i}>, %u: tensor<${shapes.u}>) -> tensor<${shapes.x}> {
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: ${scalar}, %b: ${scalar}):
    ${body.replaceAll("T", scalar)}
  }) {scatter_dimension_numbers = #stablehlo.scatter<${dims}>, indices_are_sorted = false, unique_indices = false} : (tensor<${shapes.x}>, tensor<${shapes.i}>, tensor<${shapes.u}>) -> tensor<${shapes.x}>
  return %0 : tensor<${shapes.x}>
}`;
};

/** A sort of `operands` (their tensor types) along `dimension`, the comparator comparing the first operand's %a and %b by `compare`. */
export const sort = (operands: readonly string[], dimension: number, compare: string, stable: boolean): string => {
  const params = operands.flatMap((t, k) => [`%a${k}: tensor<${t.split("x").pop()}>`, `%b${k}: tensor<${t.split("x").pop()}>`]).join(", ");
  const types = operands.map((t) => `tensor<${t}>`).join(", ");
  const args = operands.map((_, k) => `%x${k}: tensor<${operands[k]}>`).join(", ");
  const key = `tensor<${operands[0]!.split("x").pop()}>`;
  return `func.func @main(${args}) -> (${types}) {
  %0:${operands.length} = "stablehlo.sort"(${operands.map((_, k) => `%x${k}`).join(", ")}) ({
  ^bb0(${params}):
    %p = stablehlo.compare ${compare.replace("A", "%a0").replace("B", "%b0")} : (${key}, ${key}) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = ${dimension} : i64, is_stable = ${stable}} : (${types}) -> (${types})
  return ${operands.map((_, k) => `%0#${k}`).join(", ")} : ${types}
}`;
};

/** A select-and-scatter of a 6x7 operand of `t` by 3x3 windows, stride 2, padding 1 (overlapping windows), select `dir`, scatter add. */
export const selectAndScatter = (t: string, dir: string, operand: readonly string[], source: readonly string[]): [string, string[]] => [`func.func @main(%x: tensor<6x7x${t}>, %s: tensor<3x4x${t}>) -> tensor<6x7x${t}> {
  %init = stablehlo.constant dense<${t === "f32" ? "0.5" : "3"}> : tensor<${t}>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %init) ({
    ^bb0(%a: tensor<${t}>, %b: tensor<${t}>):
      %c = stablehlo.compare ${dir}, %a, %b : (tensor<${t}>, tensor<${t}>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%a: tensor<${t}>, %b: tensor<${t}>):
      %c = stablehlo.add %a, %b : tensor<${t}>
      stablehlo.return %c : tensor<${t}>
  }) {window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 2, 2>, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<6x7x${t}>, tensor<3x4x${t}>, tensor<${t}>) -> tensor<6x7x${t}>
  return %0 : tensor<6x7x${t}>
}`, [`dense<[${chunk(operand, 7)}]> : tensor<6x7x${t}>`, `dense<[${chunk(source, 4)}]> : tensor<3x4x${t}>`]];
