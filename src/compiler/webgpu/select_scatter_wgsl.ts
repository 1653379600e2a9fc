// Select-and-scatter as a WGSL kernel of the WebGPU backend, deterministic and bit-exact
// with the interpreter (interpreter/kernels/reduction.ts): an invocation per element of
// the result (the operand's shape) starts from the init value and visits the windows
// that contain its element, in the source's row-major order; for each it picks the
// window's selected element as the interpreter does (the first in the window's
// row-major order, replaced by a later one where `select(kept, later)` is false, padding
// never selected), and where that is its own element combines the window's source value
// with the scatter computation. Each result element thus sees the same combines in the
// same order as the interpreter's sequential scatter: no atomics, floats included.
// Cost: (window elements)² select calls an element (81 for a 3x3 max-pool gradient).

import type { Computation, Instruction } from "../../ir/computation.js";
import { rowMajorStrides } from "../../types/index_util.js";
import type { ElementType } from "../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../types/shape.js";
import { DeclinedError, type Declined } from "../kernel/declined.js";
import { KernelGraph } from "../kernel/graph.js";
import { lowerScalarBody } from "../kernel/lower_fusion.js";
import { combineExpression, COMPUTED_ELEMENT, COMPUTED_TYPES, elementKernel, tooLarge, u } from "./op_kernels_wgsl.js";
import { WGSL_HELPERS, WgslValues, wgslMathSources, type WgslMathName } from "./wgsl_values.js";
import type { WgslKernel } from "./wgsl_kernel.js";

const i32 = (x: number): string => `${x}i`;

/** `fn keepFirst(a: T, b: T) -> bool`: the select computation on two values of t. */
function selectFunction(select: Computation, t: ElementType, wgslT: string): { source: string; math: ReadonlySet<WgslMathName> } | Declined {
  const g = new KernelGraph();
  const params = [0, 1].map((k) => g.op("rin", t, [], k));
  const results = lowerScalarBody(g, select, params);
  if ("declined" in results) return { declined: `webgpu select-and-scatter: the select computation: ${results.declined}` };
  if (results.length !== 1) return { declined: "webgpu select-and-scatter: a select computation with more than one result" };
  const values = new WgslValues(g, {
    load: () => { throw new Error("a select computation loads nothing"); },
    leaf: (n) => (n.attr === 0 ? "a" : "b"),
  });
  const lines: string[] = [];
  try {
    values.emit(g.nodes.map((n) => n.id), lines, "  ");
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: `webgpu select-and-scatter: the select computation: ${e.message}` };
    throw e;
  }
  const result = g.node(results[0]!).type === "cond" ? values.v(results[0]!) : `${values.v(results[0]!)} != 0u`;
  return { source: [`fn keepFirst(a: ${wgslT}, b: ${wgslT}) -> bool {`, ...lines, `  return ${result};`, "}"].join("\n"), math: values.math };
}

/** Select-and-scatter of `inst` over its operand, source and init value, then its result; or why not. */
export function selectAndScatterKernelWgsl(inst: Instruction<"selectAndScatter">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const [operand, source] = inst.operands.map((o) => o.shape as ArrayShape) as [ArrayShape, ArrayShape];
  const t = operand.elementType;
  const element = COMPUTED_ELEMENT[t];
  if (element === undefined) return { declined: `webgpu select-and-scatter on ${t} (the WGSL kernel takes ${COMPUTED_TYPES})` };
  if (tooLarge([operand, source])) return { declined: "webgpu select-and-scatter: an operand of 2 GiB or more" };
  const window = inst.attrs.window;
  if (window.some((w) => w.windowDilation !== 1 || w.baseDilation !== 1 || w.windowReversal)) {
    return { declined: "webgpu select-and-scatter: a dilated or reversed window" };
  }
  const combine = combineExpression(inst.attrs.scatter, t, "select-and-scatter");
  if ("declined" in combine) return combine;
  const keep = selectFunction(inst.attrs.select, t, element.wgslType);
  if ("declined" in keep) return keep;
  const dims = operand.dimensions;
  const opStrides = rowMajorStrides(dims);
  const srcStrides = rowMajorStrides(source.dimensions);
  const size = elementCount(window.map((w) => w.size));
  const words = element.words;
  const body = [`  var acc = ${element.load("args[2u] >> 2u")};`];
  // The windows holding element o: window offset k in reverse row-major order gives their sources in row-major order.
  body.push(`  for (var wr = 0u; wr < ${u(size)}; wr = wr + 1u) {`, `    var r = ${u(size - 1)} - wr;`, "    var valid = true;", "    var s = 0u;");
  for (let d = window.length - 1; d >= 0; d--) body.push(`    let k${d} = r % ${u(window[d]!.size)}; r = r / ${u(window[d]!.size)};`);
  window.forEach((w, d) => {
    body.push(`    let n${d} = i32(o${d}) + ${i32(w.paddingLow)} - i32(k${d});`);
    body.push(`    let s${d} = n${d} / ${i32(w.stride)};`);
    body.push(`    if (n${d} < 0i || n${d} % ${i32(w.stride)} != 0i || s${d} >= ${i32(source.dimensions[d]!)}) { valid = false; } else { s = s + u32(s${d}) * ${u(srcStrides[d]!)}; }`);
  });
  // Window s's selected element, as the interpreter picks it.
  body.push("    if (valid) {", "      var selected = -1i;", `      var kept = acc;`, `      for (var j = 0u; j < ${u(size)}; j = j + 1u) {`, "        var q = j;", "        var inside = true;", "        var at = 0u;");
  for (let d = window.length - 1; d >= 0; d--) body.push(`        let c${d} = q % ${u(window[d]!.size)}; q = q / ${u(window[d]!.size)};`);
  window.forEach((w, d) => {
    body.push(`        let p${d} = s${d} * ${i32(w.stride)} + i32(c${d}) - ${i32(w.paddingLow)};`);
    body.push(`        if (p${d} < 0i || p${d} >= ${i32(dims[d]!)}) { inside = false; } else { at = at + u32(p${d}) * ${u(opStrides[d]!)}; }`);
  });
  body.push(
    "        if (inside) {",
    `          let x = ${element.load(`(args[0u] >> 2u) + at * ${u(words)}`)};`,
    "          if (selected < 0i || !keepFirst(kept, x)) { selected = i32(at); kept = x; }",
    "        }",
    "      }",
    "      if (selected == i32(i)) {",
    `        let v = ${element.load(`(args[1u] >> 2u) + s * ${u(words)}`)};`,
    `        acc = ${combine.expression};`,
    "      }",
    "    }",
    "  }",
    `  ${element.store(`(args[3u] >> 2u) + i * ${u(words)}`, "acc")}`,
  );
  return elementKernel(operand, 3, [WGSL_HELPERS, ...wgslMathSources(new Set([...combine.math, ...keep.math])), combine.source, keep.source].join("\n"), body, maxWorkgroupsPerDimension);
}
