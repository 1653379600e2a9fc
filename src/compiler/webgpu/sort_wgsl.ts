// Sort as a WGSL kernel of the WebGPU backend: a workgroup a lane (the 1-D run of
// elements along the sort dimension), sorting a permutation of the lane's positions in
// workgroup memory by odd-even transposition, then copying every operand's elements in
// that order. The comparator is the sort's computation compiled into a WGSL function
// (its body lowered as the fusions' scalar ops are, kernel/lower_fusion.ts, and printed
// by the value renderer, wgsl_values.ts), reading the compared elements from memory.
//
// Why odd-even transposition: it swaps neighbours only when the right one strictly goes
// first, so the sort is stable (is_stable or not, as the interpreter's, which is JS's
// stable sort), and it yields a permutation whatever the comparator does. For a
// comparator that is a strict weak order (integers, TOTALORDER floats, JAX's
// comparators) every stable sort gives the same result, so the kernel is bit-exact with
// the interpreter; for one that is not (a plain LT on floats with NaNs) the order of
// the elements around a NaN is the algorithm's, as it is in XLA. Its cost is n rounds
// of n/2 comparisons for a lane of n, a barrier a round, over as many invocations as
// the adapter allows in a workgroup (up to n/2); a lane's permutation must fit the
// adapter's workgroup memory (4096 elements in WebGPU's guaranteed 16 KiB): longer
// lanes are declined and sorted on the host.

import type { Instruction } from "../../ir/computation.js";
import { rowMajorStrides } from "../../types/index_util.js";
import type { ArrayShape } from "../../types/shape.js";
import { DeclinedError, type Declined } from "../kernel/declined.js";
import { KernelGraph } from "../kernel/graph.js";
import { lowerScalarBody } from "../kernel/lower_fusion.js";
import { elementWords, product, tooLarge, u, WORD_VALUE } from "./op_kernels_wgsl.js";
import { WGSL_HELPERS, WgslValues, wgslMathSources, type WgslMathName } from "./wgsl_values.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";

/**
 * `fn before(base: u32, x: u32, y: u32) -> bool`: the comparator of `inst` on the lane
 * elements at positions x and y of the lane starting at element `base` (elements
 * `stride` apart): true when x goes first.
 */
function comparatorFunction(inst: Instruction<"sort">, stride: number): { source: string; math: ReadonlySet<WgslMathName> } | Declined {
  const operands = inst.operands.map((o) => o.shape as ArrayShape);
  const g = new KernelGraph();
  // The comparator's parameters, interleaved: operand k's element at x, then at y.
  const params = operands.flatMap((o, k) => [0, 1].map((side) => g.op("rin", o.elementType, [], 2 * k + side)));
  const results = lowerScalarBody(g, inst.attrs.comparator, params);
  if ("declined" in results) return { declined: `webgpu sort: the comparator: ${results.declined}` };
  if (results.length !== 1) return { declined: "webgpu sort: a comparator with more than one result" };
  const leaf = (p: number): string => {
    const k = p >> 1;
    const t = operands[k]!.elementType;
    const value = WORD_VALUE[t];
    if (value === undefined) throw new DeclinedError(`webgpu sort: the comparator compares ${t} values (the kernel compares f32, s32 and u32)`);
    return `${value(`mem[(args[${u(k)}] >> 2u) + base + ${p % 2 === 0 ? "x" : "y"} * ${u(stride)}]`)}`;
  };
  const values = new WgslValues(g, {
    load: () => { throw new Error("a comparator loads nothing"); },
    leaf: (n) => leaf(n.attr as number),
  });
  // Only what the result depends on: operands the comparator does not read may be of any type.
  const needed = new Set<number>();
  const visit = (id: number): void => {
    if (needed.has(id)) return;
    needed.add(id);
    for (const a of g.node(id).args) visit(a);
  };
  visit(results[0]!);
  const lines: string[] = [];
  try {
    values.emit([...needed].sort((a, b) => a - b), lines, "  ");
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: e.message.startsWith("webgpu sort") ? e.message : `webgpu sort: the comparator: ${e.message}` };
    throw e;
  }
  const result = g.node(results[0]!).type === "cond" ? values.v(results[0]!) : `${values.v(results[0]!)} != 0u`;
  return { source: ["fn before(base: u32, x: u32, y: u32) -> bool {", ...lines, `  return ${result};`, "}"].join("\n"), math: values.math };
}

/** The sort of `inst` as a kernel over its operands then its results, or why not. */
export function sortKernelWgsl(inst: Instruction<"sort">, limits: GpuLimits, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const operands = inst.operands.map((o) => o.shape as ArrayShape);
  const dims = operands[0]!.dimensions;
  const dimension = inst.attrs.dimension;
  const n = dims[dimension]!;
  // The lane's permutation, a u32 an element, in workgroup memory.
  const longest = Math.floor(limits.maxComputeWorkgroupStorageSize / 4);
  if (n > longest) return { declined: `webgpu sort: lanes of ${n} elements (the kernel sorts up to ${longest} in the adapter's ${limits.maxComputeWorkgroupStorageSize} bytes of workgroup memory)` };
  if (tooLarge(operands)) return { declined: "webgpu sort: an operand of 2 GiB or more" };
  // A kernel's argument slot holds 64 words (executable.ts): the buffers' offsets and the zero after them.
  if (2 * operands.length >= 64) return { declined: `webgpu sort: ${operands.length} operands (the kernel binds up to 31)` };
  const words: number[] = [];
  for (const o of operands) {
    const w = elementWords(o.elementType, "sort");
    if (typeof w !== "number") return w;
    words.push(w);
  }
  const strides = rowMajorStrides(dims);
  const stride = strides[dimension]!;
  const comparator = comparatorFunction(inst, stride);
  if ("declined" in comparator) return comparator;
  const lanes = product(dims) / n;
  const groupsX = Math.min(lanes, maxWorkgroupsPerDimension);
  const size = Math.max(1, Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX, Math.ceil(n / 2)));
  const count = operands.length;
  // The lane's first element: its index over the other dims, row-major.
  const split: string[] = ["  var rest = lane;", "  var base = 0u;"];
  for (let d = dims.length - 1; d >= 0; d--) {
    if (d !== dimension) split.push(`  base = base + (rest % ${u(dims[d]!)}) * ${u(strides[d]!)}; rest = rest / ${u(dims[d]!)};`);
  }
  const copies = operands.flatMap((_, k) => Array.from({ length: words[k]! }, (_, w) =>
    `    mem[(args[${u(count + k)}] >> 2u) + (base + j * ${u(stride)}) * ${u(words[k]!)} + ${u(w)}] = mem[(args[${u(k)}] >> 2u) + (base + src * ${u(stride)}) * ${u(words[k]!)} + ${u(w)}];`));
  const source = [
    "@group(0) @binding(0) var<storage, read_write> mem: array<u32>;",
    "@group(0) @binding(1) var<storage, read> args: array<u32>;",
    WGSL_HELPERS,
    ...wgslMathSources(comparator.math),
    `var<workgroup> order: array<u32, ${n}>;`,
    comparator.source,
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    // A zero the compiler cannot see (the slot after the buffers): float constants go through it.
    `  xk_opaque = args[${u(2 * count)}];`,
    `  let lane = wid.x + wid.y * ${u(groupsX)};`,
    // Uniform in the workgroup, so the barriers below stay in uniform control flow.
    `  if (lane >= ${u(lanes)}) { return; }`,
    ...split,
    `  for (var j = lid.x; j < ${u(n)}; j = j + ${u(size)}) { order[j] = j; }`,
    "  workgroupBarrier();",
    // Round r compares the pairs (a, a + 1) with a of r's parity; n rounds sort any lane.
    `  for (var r = 0u; r < ${u(n)}; r = r + 1u) {`,
    `    for (var a = 2u * lid.x + (r & 1u); a + 1u < ${u(n)}; a = a + ${u(2 * size)}) {`,
    "      let left = order[a];",
    "      let right = order[a + 1u];",
    "      if (before(base, right, left)) { order[a] = right; order[a + 1u] = left; }",
    "    }",
    "    workgroupBarrier();",
    "  }",
    `  for (var j = lid.x; j < ${u(n)}; j = j + ${u(size)}) {`,
    "    let src = order[j];",
    ...copies,
    "  }",
    "}",
  ].join("\n");
  return { source, buffers: 2 * count, units: lanes, invocationsPerUnit: size, workgroups: [groupsX, Math.ceil(lanes / groupsX)], what: `sort of ${lanes} lanes of ${n}, odd-even transposition in workgroup memory` };
}
