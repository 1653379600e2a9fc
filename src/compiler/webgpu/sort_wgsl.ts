// Sort as a WGSL kernel of the WebGPU backend: a workgroup a lane (the 1-D run of
// elements along the sort dimension), sorting a permutation of the lane's positions in
// workgroup memory by a bitonic network, then copying every operand's elements in that
// order. The comparator is the sort's computation compiled into a WGSL function (its
// body lowered as the fusions' scalar ops are, kernel/lower_fusion.ts, and printed by
// the value renderer, wgsl_values.ts), reading the compared elements from memory.
//
// Why a bitonic network: its log2(P)·(log2(P)+1)/2 rounds (P: the lane's length rounded
// up to a power of two) of P/2 independent compare-exchanges each take a barrier a
// round, where the odd-even transposition it replaced (session 53) took n rounds for a
// lane of n: for a lane of 1024, 55 rounds and 28160 comparisons instead of 1024 rounds
// and 523776. A merge network (Batcher's odd-even merge sort) has a few fewer
// comparisons, but rounds in which some positions sit idle and partners found by a
// test a position; every bitonic round pairs all positions, each with itself XOR a
// mask. A network is not stable by itself, so pairs compare by the comparator, then by
// position (goesFirst): a total order for every comparator that is a strict weak order
// (integers, TOTALORDER floats, JAX's comparators), whose sorted order is unique and is
// the stable sort's, so the kernel is bit-exact with the interpreter (JS's stable sort)
// whether is_stable is set or not.
// For a comparator that is not one (a plain LT on floats with NaNs) the order around a
// NaN is the network's, as in XLA, and the result still a permutation: every exchange
// swaps two whole entries. A lane's permutation (a u32 a lane element) must fit the
// adapter's workgroup memory (4096 elements in WebGPU's guaranteed 16 KiB); longer
// lanes are sorted by a bitonic network across dispatches (longSortSteps).
//
// Operands of 1- and 2-byte elements (bf16, f16, the f8 types, 8- and 16-bit integers,
// pred): the comparator reads them from their bytes, but no invocation may write one of
// their results element by element (neighbouring elements share a 32-bit word, and
// WGSL's plain stores are of whole words). The sort then writes its permutation (the
// source position of every lane element) into a temporary, and a gather kernel a
// narrow operand writes its result a word an invocation, each word's elements fetched
// from the positions the permutation names: the same permutation, so the same result.

import type { Computation, Instruction } from "../../ir/computation.js";
import { rowMajorStrides } from "../../types/index_util.js";
import { arrayShape, type ArrayShape, elementCount } from "../../types/shape.js";
import { DeclinedError, type Declined } from "../kernel/declined.js";
import { KernelGraph } from "../kernel/graph.js";
import { lowerScalarBody } from "../kernel/lower_fusion.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { copyElementsKernel, elementKernel, neededNodes, tooLarge, u } from "./op_kernels_wgsl.js";
import { unsupportedType, WGSL_HELPERS, WgslValues, wgslMathSources, type WgslMathName } from "./wgsl_values.js";
import { loadAs, memoryHelpers, type WgslKernel } from "./wgsl_kernel.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";

/**
 * The key types the comparator compares (kernel/capabilities.ts sortKeyTypes): every
 * type the value renderer holds (f64 and complex are not), MLIR's index aside (never an
 * array's). Floats in total order are compared on their bit patterns (legalize.ts,
 * wgsl_values.ts), so f16, bf16 and the one-byte and sub-byte floats order as the
 * interpreter's topK: -NaN below -inf, -0 below +0, NaN above +inf.
 */
export const WGSL_SORT_KEY_TYPES: ReadonlySet<ElementType> = new Set(
  (Object.keys(ELEMENT_TYPES) as ElementType[]).filter((t) => t !== "index" && unsupportedType(t) === undefined),
);

/** A comparator compiled into WGSL (`fn before`), with the math functions it calls. */
export interface WgslComparator {
  readonly source: string;
  readonly math: ReadonlySet<WgslMathName>;
}

/**
 * `fn before(base: u32, x: u32, y: u32) -> bool`: `comparator` (a sort's: two parameters
 * an operand) on the lane elements at positions x and y of the lane of `operands`
 * starting at element `base` (elements `stride` apart): true when x goes first. `op`
 * names the kernel in a declined reason ("webgpu sort", "webgpu top-k").
 */
export function comparatorFunction(operands: readonly ArrayShape[], comparator: Computation, stride: number, op: string): WgslComparator | Declined {
  const g = new KernelGraph();
  // The comparator's parameters, interleaved: operand k's element at x, then at y.
  const params = operands.flatMap((o, k) => [0, 1].map((side) => g.op("rin", o.elementType, [], 2 * k + side)));
  const results = lowerScalarBody(g, comparator, params);
  if ("declined" in results) return { declined: `${op}: the comparator: ${results.declined}` };
  if (results.length !== 1) return { declined: `${op}: a comparator with more than one result` };
  // Loaded from its bytes (wgsl_kernel.ts loadAs): the value as the fusions' renderer holds it, whatever its width.
  const leaf = (p: number): string => {
    const k = p >> 1;
    const t = operands[k]!.elementType;
    const why = unsupportedType(t);
    if (why !== undefined) throw new DeclinedError(`${op}: the comparator compares ${t} values (${why})`);
    return loadAs(t, `i32(args[${u(k)}] + (base + ${p % 2 === 0 ? "x" : "y"} * ${u(stride)}) * ${u(ELEMENT_TYPES[t].storageBytes)})`);
  };
  const values = new WgslValues(g, {
    load: () => { throw new Error("a comparator loads nothing"); },
    leaf: (n) => leaf(n.attr as number),
  });
  // Only what the result depends on: operands the comparator does not read may be of any type.
  const lines: string[] = [];
  try {
    values.emit(neededNodes(g, [results[0]!]), lines, "  ");
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: e.message.startsWith(op) ? e.message : `${op}: the comparator: ${e.message}` };
    throw e;
  }
  const result = g.node(results[0]!).type === "cond" ? values.v(results[0]!) : `${values.v(results[0]!)} != 0u`;
  return { source: ["fn before(base: u32, x: u32, y: u32) -> bool {", ...lines, `  return ${result};`, "}"].join("\n"), math: values.math };
}

/** What both sort schedules check and share: the lane geometry, each operand's bytes an element and the comparator. */
interface SortParts {
  readonly dims: readonly number[];
  readonly dimension: number;
  readonly n: number;
  readonly lanes: number;
  readonly strides: readonly number[];
  readonly stride: number;
  readonly bytes: readonly number[];
  readonly comparator: WgslComparator;
}

/** Whether an operand's elements share words (its results are written by a gather kernel through the permutation). */
export const narrow = (bytes: number): boolean => bytes % 4 !== 0;

function sortParts(inst: Instruction<"sort">): SortParts | Declined {
  const operands = inst.operands.map((o) => o.shape as ArrayShape);
  const dims = operands[0]!.dimensions;
  const dimension = inst.attrs.dimension;
  if (tooLarge(operands)) return { declined: "webgpu sort: an operand of 2 GiB or more" };
  // A kernel's argument slot holds 64 words (executable.ts): the buffers' offsets (and a permutation's), the zero after them and two parameters.
  if (2 * operands.length + 5 >= 64) return { declined: `webgpu sort: ${operands.length} operands (the kernels bind up to 29)` };
  const strides = rowMajorStrides(dims);
  const stride = strides[dimension]!;
  const comparator = comparatorFunction(operands, inst.attrs.comparator, stride, "webgpu sort");
  if ("declined" in comparator) return comparator;
  const n = dims[dimension]!;
  return { dims, dimension, n, lanes: elementCount(dims) / n, strides, stride, bytes: operands.map((o) => ELEMENT_TYPES[o.elementType].storageBytes), comparator };
}

/** WGSL statements setting `base`, the first element of lane `lane` (its index over the dims other than the sort's, row-major). */
function laneBase(p: SortParts): string[] {
  const split: string[] = ["  var laneRest = lane;", "  var base = 0u;"];
  for (let d = p.dims.length - 1; d >= 0; d--) {
    if (d !== p.dimension) split.push(`  base = base + (laneRest % ${u(p.dims[d]!)}) * ${u(p.strides[d]!)}; laneRest = laneRest / ${u(p.dims[d]!)};`);
  }
  return split;
}

/** WGSL statements copying element `src` of every operand's lane to element `j` of the result's, word by word (operands from buffer 0, results from `results`; narrow operands are left to their gather kernels). */
function laneCopies(p: SortParts, results: number, indent: string): string[] {
  return p.bytes.flatMap((bytes, k) => {
    if (narrow(bytes)) return [];
    const words = bytes / 4;
    return Array.from({ length: words }, (_, w) =>
      `${indent}mem[(args[${u(results + k)}] >> 2u) + (base + j * ${u(p.stride)}) * ${u(words)} + ${u(w)}] = mem[(args[${u(k)}] >> 2u) + (base + src * ${u(p.stride)}) * ${u(words)} + ${u(w)}];`);
  });
}

/**
 * The result of narrow operand `k` as a word an invocation (op_kernels_wgsl.ts
 * copyElementsKernel): result element i, position j of its lane, is the operand's element
 * at the position the permutation holds for it (`lanePositions` apart a lane).
 * Buffers: the operand, the permutation, the result.
 */
function narrowGather(inst: Instruction<"sort">, p: SortParts, k: number, lanePositions: number, maxWorkgroupsPerDimension: number): WgslKernel {
  const shape = inst.operands[k]!.shape as ArrayShape;
  const others = p.dims.flatMap((_, d) => (d === p.dimension ? [] : [d]));
  const lane = others.reduce((e, d) => `(${e}) * ${u(p.dims[d]!)} + o${d}`, "0u");
  const bytes = p.bytes[k]!;
  const kernel = copyElementsKernel(shape, 2, "", [
    `  let lane = ${lane};`,
    `  let src = mem[(args[1u] >> 2u) + lane * ${u(lanePositions)} + o${p.dimension}];`,
    // i less its position along the lane is the lane's first element.
    `  let srcByte = args[0u] + (i - o${p.dimension} * ${u(p.stride)} + src * ${u(p.stride)}) * ${u(bytes)};`,
  ], bytes, maxWorkgroupsPerDimension);
  return { ...kernel, what: `sort's ${shape.elementType} operand ${k} gathered through the permutation, a word of ${4 / bytes} elements an invocation` };
}

/** A buffer a sort's or top-k's step binds: every operand, every result, one of its temporaries, or one operand's or result's. */
export type SortSlot = "operands" | "results" | { readonly temporary: number } | { readonly operand: number } | { readonly result: number };

/** One dispatch of a sort or top-k: its kernel, the buffers it binds in order, its parameter words and what its step is called after the instruction's name ("": the name alone). */
export interface SortStep {
  readonly kernel: WgslKernel;
  readonly slots: readonly SortSlot[];
  readonly parameters?: readonly number[];
  readonly name: string;
}

/** A sort's or top-k's dispatches, in order, and the bytes of each temporary they share (a sort's: the permutation, where it has one). */
export interface SortSteps {
  readonly temporaryBytes: readonly number[];
  readonly steps: readonly SortStep[];
}

/** A sort's permutation: its one temporary. */
const PERMUTATION = { temporary: 0 } as const;

/**
 * The sort of `inst` as dispatches: one kernel where a lane fits in workgroup memory
 * (sortKernel), else a bitonic network across dispatches (longSortSteps); then, for each
 * narrow operand, its gather through the permutation.
 */
export function sortStepsWgsl(inst: Instruction<"sort">, limits: GpuLimits, maxWorkgroupsPerDimension: number): SortSteps | Declined {
  const parts = sortParts(inst);
  if ("declined" in parts) return parts;
  // The lane's permutation, a u32 an element, in workgroup memory.
  const longest = Math.floor(limits.maxComputeWorkgroupStorageSize / 4);
  const hasNarrow = parts.bytes.some(narrow);
  let sorted: SortSteps & { readonly lanePositions: number };
  if (parts.n <= longest) {
    const kernel = sortKernel(parts, hasNarrow, limits, maxWorkgroupsPerDimension);
    sorted = {
      temporaryBytes: hasNarrow ? [parts.lanes * parts.n * 4] : [], lanePositions: parts.n,
      steps: [{ kernel, slots: hasNarrow ? ["operands", "results", PERMUTATION] : ["operands", "results"], name: "" }],
    };
  } else {
    const long = longSortSteps(parts, maxWorkgroupsPerDimension);
    if ("declined" in long) return long;
    sorted = long;
  }
  const gathers: SortStep[] = parts.bytes.flatMap((bytes, k) => (narrow(bytes)
    ? [{ kernel: narrowGather(inst, parts, k, sorted.lanePositions, maxWorkgroupsPerDimension), slots: [{ operand: k }, PERMUTATION, { result: k }], name: `operand ${k}` }]
    : []));
  return { temporaryBytes: sorted.temporaryBytes, steps: [...sorted.steps, ...gathers] };
}

/**
 * `fn goesFirst(base: u32, x: u32, y: u32) -> bool`: whether lane position x goes before
 * y in the order of the comparator, then of position: a total order for a comparator
 * that is a strict weak order, so a sorting network yields the stable sort's result. One
 * comparator call: for x before y in the lane, "x goes first" is "y does not", which
 * asymmetry makes the same as comparing the pair both ways. For a comparator that is not
 * a strict weak order any answer still exchanges whole elements: a permutation.
 */
export const GOES_FIRST = [
  "fn goesFirst(base: u32, x: u32, y: u32) -> bool {",
  "  if (x < y) { return !before(base, y, x); }",
  "  return before(base, x, y);",
  "}",
].join("\n");

/**
 * The head of a kernel that orders a lane's positions in workgroup memory (the sort's, the
 * top-k kernels'): the device memory and the argument words, the helpers, the comparator
 * with the math it calls, `order` (`length` positions, a u32 each) and goesFirst.
 */
export function orderKernelHead(comparator: WgslComparator, length: number): string[] {
  return [
    "@group(0) @binding(0) var<storage, read_write> mem: array<u32>;",
    "@group(0) @binding(1) var<storage, read> args: array<u32>;",
    WGSL_HELPERS,
    memoryHelpers(false),
    ...wgslMathSources(comparator.math),
    `var<workgroup> order: array<u32, ${length}>;`,
    comparator.source,
    GOES_FIRST,
  ];
}

/**
 * The most invocations a lane's workgroup has: a wavefront on AMD, two warps on NVIDIA.
 * More would shorten a round on a GPU with few lanes to sort; on SwiftShader, which runs
 * a workgroup's invocations on one thread, switching between them at every barrier,
 * 64 cost 5-45% less CPU time than 256 on the probe's programs (docs/benchmarks.md,
 * "The WGSL sort, session 53"). An invocation taking its own block of 16 positions
 * through the rounds that stay within it, with no barrier between them, gained nothing
 * measurable there, so every round is one barrier.
 */
export const SORT_INVOCATIONS = 64;

/**
 * The sort kernel over the operands then the results (then, with narrow operands, the
 * permutation it writes): a workgroup a lane, the lane's permutation in workgroup memory
 * sorted by a bitonic network. The network is the form whose compare-exchanges all put
 * the first in order at the lower position: merging two sorted blocks of k/2 into a
 * block of k first pairs each position of the lower half with its mirror in the upper
 * (a, a ^ (k - 1)), then with the position j higher for j = k/4 down to 1 (a, a + j).
 * The lane is padded to a power of two P with positions that go after everything, so
 * a pair whose upper position is padding never exchanges: the padding is left out of
 * workgroup memory and of the work. log2(P)·(log2(P)+1)/2 rounds of at most P/2
 * compare-exchanges, a barrier a round.
 */
function sortKernel(parts: SortParts, writesPermutation: boolean, limits: GpuLimits, maxWorkgroupsPerDimension: number): WgslKernel {
  const { n, lanes, comparator } = parts;
  const P = 2 ** Math.ceil(Math.log2(Math.max(2, n)));
  const pairs = P / 2;
  const groupsX = Math.min(lanes, maxWorkgroupsPerDimension);
  const size = Math.max(1, Math.min(SORT_INVOCATIONS, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX, pairs));
  const count = parts.bytes.length;
  const buffers = 2 * count + (writesPermutation ? 1 : 0);
  const rounds = Math.log2(P) * (Math.log2(P) + 1) / 2;
  const source = [
    ...orderKernelHead(comparator, n),
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    // A zero the compiler cannot see (the slot after the buffers): float constants go through it.
    `  xk_opaque = args[${u(buffers)}];`,
    `  let lane = wid.x + wid.y * ${u(groupsX)};`,
    // Uniform in the workgroup, so the barriers below stay in uniform control flow.
    `  if (lane >= ${u(lanes)}) { return; }`,
    ...laneBase(parts),
    `  for (var j = lid.x; j < ${u(n)}; j = j + ${u(size)}) { order[j] = j; }`,
    "  workgroupBarrier();",
    `  for (var k = 2u; k <= ${u(P)}; k = k << 1u) {`,
    "    for (var j = k >> 1u; j > 0u; j = j >> 1u) {",
    // The round's partner of a position of the lower side: its mirror in the block of k first, then the position j higher.
    "      let partner = select(j, k - 1u, j == k >> 1u);",
    `      for (var t = lid.x; t < ${u(pairs)}; t = t + ${u(size)}) {`,
    // Pair t's lower position: t with a zero bit inserted at j.
    "        let a = ((t & ~(j - 1u)) << 1u) | (t & (j - 1u));",
    "        let b = a ^ partner;",
    `        if (b < ${u(n)}) {`,
    "          let x = order[a];",
    "          let y = order[b];",
    "          if (goesFirst(base, y, x)) { order[a] = y; order[b] = x; }",
    "        }",
    "      }",
    "      workgroupBarrier();",
    "    }",
    "  }",
    `  for (var j = lid.x; j < ${u(n)}; j = j + ${u(size)}) {`,
    "    let src = order[j];",
    ...laneCopies(parts, count, "    "),
    ...(writesPermutation ? [`    mem[(args[${u(2 * count)}] >> 2u) + lane * ${u(n)} + j] = src;`] : []),
    "  }",
    "}",
  ].join("\n");
  return {
    source, buffers, units: lanes, invocationsPerUnit: size, workgroups: [groupsX, Math.ceil(lanes / groupsX)],
    what: `sort of ${lanes} lanes of ${n}, a bitonic network of ${rounds} rounds in workgroup memory`,
  };
}

/**
 * A sort whose lanes are longer than workgroup memory holds: a bitonic network across
 * dispatches over a permutation in device memory (a u32 a lane element, the lane padded
 * to a power of two P). The first step sets the identity permutation; each of the
 * log2(P)·(log2(P)+1)/2 passes runs one kernel with its (k, j) as the step's parameters,
 * exchanging the pairs (i, i ^ j) of every lane into the order of block k; the last
 * copies every word-sized operand in the sorted order (narrow ones are gathered after).
 * The pairs compare by the comparator, then by position (goesFirst: a total order, so
 * the result is the stable sort's, the interpreter's for any strict weak order), the
 * padding after everything.
 */
function longSortSteps(parts: SortParts, maxWorkgroupsPerDimension: number): (SortSteps & { readonly lanePositions: number }) | Declined {
  const { n, lanes, comparator } = parts;
  const count = parts.bytes.length;
  const P = 2 ** Math.ceil(Math.log2(Math.max(2, n)));
  if (lanes * P * 4 >= 2 ** 31) return { declined: `webgpu sort: a permutation of ${lanes} lanes of ${P} elements is 2 GiB or more` };
  const flat = (elements: number): ArrayShape => arrayShape("u32", [elements]);
  const init = elementKernel(flat(lanes * P), 0, "", [`  mem[(args[0u] >> 2u) + i] = i % ${u(P)};`], maxWorkgroupsPerDimension);
  const pass = elementKernel(flat(lanes * P), count, [WGSL_HELPERS, memoryHelpers(false), ...wgslMathSources(comparator.math), comparator.source, GOES_FIRST,
    // Positions past the lane (padding) go last.
    "fn less(base: u32, x: u32, y: u32) -> bool {",
    `  if (x >= ${u(n)}) { return false; }`,
    `  if (y >= ${u(n)}) { return true; }`,
    "  return goesFirst(base, x, y);",
    "}"].join("\n"), [
    `  xk_opaque = args[${u(count + 1)}];`,
    `  let k = args[${u(count + 2)}];`,
    `  let j = args[${u(count + 3)}];`,
    `  let lane = i / ${u(P)};`,
    `  let a = i % ${u(P)};`,
    "  let b = a ^ j;",
    "  if (b <= a) { return; }",
    ...laneBase(parts),
    `  let at = (args[${u(count)}] >> 2u) + lane * ${u(P)};`,
    "  let x = mem[at + a];",
    "  let y = mem[at + b];",
    // Block k ascending where bit k of the position is clear, descending where set.
    "  let ascending = (a & k) == 0u;",
    "  if ((ascending && less(base, y, x)) || (!ascending && less(base, x, y))) { mem[at + a] = y; mem[at + b] = x; }",
  ], maxWorkgroupsPerDimension);
  const steps: SortStep[] = [{ kernel: init, slots: [PERMUTATION], name: "permutation" }];
  const passKernel = { ...pass, what: `bitonic pass of a sort of ${lanes} lanes of ${n} (padded to ${P}), across dispatches` };
  for (let k = 2; k <= P; k *= 2) {
    for (let j = k / 2; j >= 1; j /= 2) steps.push({ kernel: passKernel, slots: ["operands", PERMUTATION], parameters: [k, j], name: `pass ${k}/${j}` });
  }
  if (parts.bytes.some((b) => !narrow(b))) {
    const finish = elementKernel(flat(lanes * n), 2 * count, WGSL_HELPERS, [
      `  let lane = i / ${u(n)};`,
      `  let j = i % ${u(n)};`,
      ...laneBase(parts),
      `  let src = mem[(args[${u(count)}] >> 2u) + lane * ${u(P)} + j];`,
      ...laneCopies(parts, count + 1, "  "),
    ], maxWorkgroupsPerDimension);
    steps.push({ kernel: finish, slots: ["operands", PERMUTATION, "results"], name: "" });
  }
  return { temporaryBytes: [lanes * P * 4], lanePositions: P, steps };
}
