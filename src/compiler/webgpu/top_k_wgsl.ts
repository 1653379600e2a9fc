// Top-k as WGSL kernels of its own on the WebGPU backend: topK, and XLA's ApproxTopK
// custom call in its exact form (a stable sort by its comparator cut to each result's
// size), where the decomposition into a stable sort and slices (expansions/top_k.ts)
// would sort every lane whole. decompose leaves the ones this takes (webgpuCapabilities'
// topKKernel: topKKernelTakes), the planner runs them here, and a k too large against
// the lane is expanded into the sort as before (sort_wgsl.ts).
//
// The schedule, after XLA's GPU TopK (a splitter cutting long rows into batches of
// smaller top-ks whose candidates a second top-k merges) and the bitonic top-k of
// Shanbhag, Pirk and Madden (sort runs of k, merge pairs of runs keeping the better
// half): a lane is cut into chunks, a workgroup a chunk, every lane's chunks dispatched
// together, so that the long row of a language model's logits (GPT-2's 50257) keeps
// many workgroups busy rather than one. In a chunk (positions in workgroup memory, a
// u32 each) the positions are sorted in runs of R (k up to a power of two) by a bitonic
// network; then, level by level, each pair of runs is merged keeping its better R: the
// i-th of the first against the (R-1-i)-th of the second leaves, in the first's place,
// a bitonic sequence holding the pair's best R, which log2(R) rounds of half-cleaners
// sort. The chunk's best R go to a candidates temporary, a sorted run a chunk; the next
// stage takes chunks of those runs (no sorting, merging only), until one chunk holds a
// lane's candidates, whose best k the last stage writes as the results. Padding
// (positions past the lane or its candidates) is a sentinel that goes after everything.
//
// Exact: pairs compare by the comparator, then by position (sort_wgsl.ts goesFirst),
// which for a comparator that is a strict weak order (topK's total order; JAX's
// comparators) is a total order whose first k are the stable sort's, the interpreter's:
// XLA's total order on floats (NaN above +inf, -0 below +0), ties to the lower index.
// Positions are the lane's, so candidates from different chunks compare as they would in
// one. Results of 1- and 2-byte elements are gathered through the positions (as the
// sort's narrow operands are), a result word an invocation.

import type { Computation, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { maxOf } from "../../types/arrays.js";
import { rowMajorStrides } from "../../types/index_util.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { arrayShape, type ArrayShape, elementCount } from "../../types/shape.js";
import { approxTopKForm, topKComparatorBody } from "../expansions/top_k.js";
import { isDeclined, type Declined } from "../kernel/declined.js";
import { copyElementsKernel, tooLarge, u } from "./op_kernels_wgsl.js";
import { comparatorFunction, narrow, orderKernelHead, SORT_INVOCATIONS, WGSL_SORT_KEY_TYPES, type SortSlot, type SortStep, type SortSteps, type WgslComparator } from "./sort_wgsl.js";
import { DEFAULT_GPU_LIMITS } from "./gemm_tiles_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";

/** What a result of a top-k holds: an operand's first `count` elements of each lane in order, or their positions in the lane (topK's s32 indices). */
export type TopKResult = { readonly operand: number; readonly count: number } | { readonly positions: true; readonly count: number };

/** A top-k: the first elements of each lane of `operands` (one shape) along `dimension` after a stable sort by `comparator` (two parameters an operand). */
export interface TopKProblem {
  readonly operands: readonly ArrayShape[];
  readonly dimension: number;
  readonly comparator: Computation;
  readonly results: readonly TopKResult[];
}

/** topK's comparator of keys alone (no iota comes along), one per key type and direction. */
const keyComparators = new Map<string, Computation>();

function keyComparator(t: ElementType, largest: boolean): Computation {
  const name = `top_k_keys_${largest ? "greater" : "less"}_${t}`;
  let c = keyComparators.get(name);
  if (c === undefined) {
    const f = new InstructionFactory(name);
    keyComparators.set(name, (c = f.finish(topKComparatorBody(f, t, largest))));
  }
  return c;
}

/** `inst` as a top-k problem: a topK of a key type the kernels compare, or a valid ApproxTopK; undefined for anything else. */
export function topKProblem(inst: Instruction): TopKProblem | undefined {
  if (inst.opcode === "topK") {
    const x = inst.operands[0]!.shape;
    const shape = inst.shape;
    if (x.kind !== "array" || x.dynamicDimensions.some((d) => d) || !WGSL_SORT_KEY_TYPES.has(x.elementType) || shape.kind !== "tuple") return undefined;
    if ((shape.elements[1] as ArrayShape).elementType !== "s32") return undefined;
    const { k, largest } = (inst as Instruction<"topK">).attrs;
    return { operands: [x], dimension: x.dimensions.length - 1, comparator: keyComparator(x.elementType, largest), results: [{ operand: 0, count: k }, { positions: true, count: k }] };
  }
  if (inst.opcode !== "customCall" || (inst as Instruction<"customCall">).attrs.target !== "ApproxTopK") return undefined;
  const form = approxTopKForm(inst as Instruction<"customCall">, inst.operands.map((o) => o.shape));
  if (form === undefined) return undefined;
  return {
    operands: inst.operands.slice(0, form.inputs).map((o) => o.shape as ArrayShape), dimension: form.dimension, comparator: form.comparator,
    results: form.counts.map((count, operand) => ({ operand, count })),
  };
}

/**
 * The positions a workgroup holds in workgroup memory: WebGPU's guaranteed 16 KiB of
 * u32 (an adapter's larger memory is not used, so that a plan does not depend on it
 * and decompose, which runs without a device, decides as the planner does).
 */
export const MOST_POSITIONS = DEFAULT_GPU_LIMITS.maxComputeWorkgroupStorageSize / 4;

/**
 * The first stage's chunk, in positions: a lane of GPT-2's 50257 logits is 50 chunks,
 * 50 workgroups a lane rather than 13 of MOST_POSITIONS.
 */
const FIRST_CHUNK = 1024;

/**
 * The longest run (k up to a power of two) the kernel takes for a lane that workgroup
 * memory holds, where the sort is one kernel too: on SwiftShader, top-k of [4, 4096]
 * cost 34 ms of CPU against the sort's 58 with runs of 64, 48 against 56 with runs of
 * 256, and as much or more from 512 up (docs/benchmarks.md, session 55). A longer lane
 * takes runs up to half a chunk of workgroup memory: the sort's network across
 * dispatches cost 3.5 times the kernel's there even with runs of 2048 ([2, 16384]).
 */
export const MOST_RUN = 256;

/** The position that is no element: padding, after everything. */
const PAD = 0xffffffff;

/** One dispatch: `chunks` chunks of `chunk` positions a lane, read from the lane (`input` undefined) or from the previous stage's runs (`input` of them a lane). */
interface Stage {
  readonly input: number | undefined;
  readonly chunk: number;
  readonly chunks: number;
}

const powerOfTwoAtLeast = (n: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

/** The stages of a lane of n with runs of `run`: the first sorts runs of its chunks, each later one merges the previous one's, the last has one chunk. */
function stagesOf(n: number, run: number): Stage[] {
  const stages: Stage[] = [];
  let input: number | undefined;
  for (;;) {
    const entries = input ?? n;
    const chunk = input === undefined ? Math.max(2 * run, Math.min(FIRST_CHUNK, powerOfTwoAtLeast(n))) : Math.min(MOST_POSITIONS, powerOfTwoAtLeast(entries));
    const chunks = Math.ceil(entries / chunk);
    stages.push({ input, chunk, chunks });
    if (chunks === 1) return stages;
    input = chunks * run;
  }
}

/** WGSL statements setting `lane`'s coordinate c<d> along every dimension d but the top-k's (row-major over them). */
function laneCoordinates(dims: readonly number[], dimension: number): string[] {
  const lines: string[] = [];
  let inner = 1;
  for (let d = dims.length - 1; d >= 0; d--) {
    if (d === dimension) continue;
    lines.push(`  let c${d} = (lane / ${u(inner)}) % ${u(dims[d]!)};`);
    inner *= dims[d]!;
  }
  return lines;
}

/** The WGSL of the first element of the lane at coordinates c<d> (laneCoordinates) in an array whose elements are `strides` apart. */
const laneStart = (strides: readonly number[], dimension: number): string =>
  strides.flatMap((s, d) => (d === dimension ? [] : [`c${d} * ${u(s)}`])).join(" + ") || "0u";

/** What every stage's kernel shares. */
interface Geometry {
  readonly problem: TopKProblem;
  readonly n: number;
  readonly lanes: number;
  readonly strides: readonly number[];
  /** The results' count a lane (the most of any result's) and its run, a power of two. */
  readonly k: number;
  readonly run: number;
  readonly comparator: WgslComparator;
}

/**
 * The top-k of `problem` as dispatches: a kernel a stage, then a gather a result of 1- or
 * 2-byte elements; declined where k is past the bound (MOST_RUN in a lane workgroup
 * memory holds, half a chunk in a longer one) or past half the lane (the sort does as
 * well there), or where the comparator does not compile.
 */
export function topKStepsWgsl(problem: TopKProblem, maxWorkgroupsPerDimension: number): SortSteps | Declined {
  const { operands, dimension } = problem;
  const dims = operands[0]!.dimensions;
  const n = dims[dimension]!;
  const k = maxOf(problem.results.map((r) => r.count));
  const run = powerOfTwoAtLeast(k);
  if (k < 1) return { declined: "webgpu top-k: k is 0 (nothing to select)" };
  const most = n <= MOST_POSITIONS ? MOST_RUN : MOST_POSITIONS / 2;
  if (run > most || 2 * run > powerOfTwoAtLeast(n)) return { declined: `webgpu top-k: k = ${k} of ${n} is past the top-k kernel's bound (runs of ${run}: at most ${most} in a lane of ${n}, and at most half the lane): the sort` };
  const resultShapes = problem.results.map((r) => arrayShape("operand" in r ? operands[r.operand]!.elementType : "s32", dims.map((d, j) => (j === dimension ? r.count : d))));
  if (tooLarge([...operands, ...resultShapes])) return { declined: "webgpu top-k: an operand of 2 GiB or more" };
  // The kernels' argument slots: the operands, a stage's input and output or the results, the positions, the zero after them.
  if (2 * operands.length + 4 >= 64) return { declined: `webgpu top-k: ${operands.length} operands (the kernels bind up to 29)` };
  const strides = rowMajorStrides(dims);
  const comparator = comparatorFunction(operands, problem.comparator, strides[dimension]!, "webgpu top-k");
  if (isDeclined(comparator)) return comparator;
  const g: Geometry = { problem, n, lanes: elementCount(dims) / n, strides, k, run, comparator };
  const stages = stagesOf(n, run);
  const narrowResults = problem.results.flatMap((r, index) => ("operand" in r && narrow(ELEMENT_TYPES[operands[r.operand]!.elementType].storageBytes) ? [index] : []));
  // Temporaries: each stage's runs but the last's, then the positions the narrow results are gathered through.
  const temporaryBytes = stages.slice(0, -1).map((s) => g.lanes * s.chunks * run * 4);
  const positions = narrowResults.length > 0 ? temporaryBytes.push(g.lanes * k * 4) - 1 : undefined;
  const operandSlots: SortSlot[] = operands.map((_, operand) => ({ operand }));
  const steps: SortStep[] = stages.map((stage, s) => {
    const last = s === stages.length - 1;
    const input: SortSlot[] = s === 0 ? [] : [{ temporary: s - 1 }];
    const output: SortSlot[] = last ? ["results", ...(positions === undefined ? [] : [{ temporary: positions }])] : [{ temporary: s }];
    const slots = [...operandSlots, ...input, ...output];
    return { kernel: stageKernel(g, stage, last, positions !== undefined, maxWorkgroupsPerDimension), slots, name: stages.length === 1 ? "" : `stage ${s + 1}/${stages.length}` };
  });
  for (const r of narrowResults) {
    const operand = (problem.results[r] as { operand: number }).operand;
    steps.push({ kernel: narrowGather(g, operand, resultShapes[r]!, maxWorkgroupsPerDimension), slots: [{ operand }, { temporary: positions! }, { result: r }], name: `result ${r}` });
  }
  return { temporaryBytes, steps };
}

/** Whether the top-k kernels take `inst` (webgpuCapabilities' topKKernel: decompose leaves it to them). */
export function topKKernelTakes(inst: Instruction): boolean {
  const problem = topKProblem(inst);
  return problem !== undefined && !isDeclined(topKStepsWgsl(problem, DEFAULT_GPU_LIMITS.maxComputeWorkgroupsPerDimension));
}

/**
 * A stage's kernel: a workgroup a chunk of a lane. Buffers: the operands (the comparator
 * reads them), the previous stage's runs (not in the first), then this stage's runs, or
 * in the last stage the results and, with narrow results, the positions.
 */
function stageKernel(g: Geometry, stage: Stage, last: boolean, writesPositions: boolean, maxWorkgroupsPerDimension: number): WgslKernel {
  const { problem, lanes, run, k, comparator } = g;
  const { chunk, chunks, input } = stage;
  const count = problem.operands.length;
  // Argument slots: the input's after the operands, then the output's (the first result's in the last stage).
  const output = count + (input === undefined ? 0 : 1);
  const buffers = output + (last ? problem.results.length + (writesPositions ? 1 : 0) : 1);
  const units = lanes * chunks;
  const groupsX = Math.min(units, maxWorkgroupsPerDimension);
  const size = Math.max(1, Math.min(SORT_INVOCATIONS, chunk / 2));
  const exchange = (indent: string): string[] => [
    `${indent}let x = order[a];`,
    `${indent}let y = order[b];`,
    `${indent}if (less(base, y, x)) { order[a] = y; order[b] = x; }`,
  ];
  const load = input === undefined
    ? [`    let at = chunk * ${u(chunk)} + j;`, `    order[j] = select(${u(PAD)}, at, at < ${u(g.n)});`]
    : [`    let at = chunk * ${u(chunk)} + j;`, `    var p = ${u(PAD)};`, `    if (at < ${u(input)}) { p = mem[(args[${u(count)}] >> 2u) + lane * ${u(input)} + at]; }`, "    order[j] = p;"];
  // The first stage sorts each run of its chunk: the sort kernel's network stopped at blocks of `run`.
  const sortRuns = input !== undefined || run < 2 ? [] : [
    `  for (var k = 2u; k <= ${u(run)}; k = k << 1u) {`,
    "    for (var j = k >> 1u; j > 0u; j = j >> 1u) {",
    "      let partner = select(j, k - 1u, j == k >> 1u);",
    `      for (var t = lid.x; t < ${u(chunk / 2)}; t = t + ${u(size)}) {`,
    "        let a = ((t & ~(j - 1u)) << 1u) | (t & (j - 1u));",
    "        let b = a ^ partner;",
    ...exchange("        "),
    "      }",
    "      workgroupBarrier();",
    "    }",
    "  }",
  ];
  // Merging the runs `span` apart in pairs: each pair's better half in its first run's place, then sorted by half-cleaners.
  const merge = [
    `  for (var span = ${u(run)}; span < ${u(chunk)}; span = span << 1u) {`,
    `    let pairs = ${u(chunk)} / (span << 1u);`,
    `    for (var t = lid.x; t < pairs * ${u(run)}; t = t + ${u(size)}) {`,
    `      let i = t % ${u(run)};`,
    "      let a = (t / " + u(run) + ") * (span << 1u) + i;",
    // The second run's (run - 1 - i)-th: the first run reversed against the second is bitonic.
    `      let b = a - i + span + ${u(run - 1)} - i;`,
    "      let x = order[a];",
    "      let y = order[b];",
    "      if (less(base, y, x)) { order[a] = y; }",
    "    }",
    "    workgroupBarrier();",
    ...(run < 2 ? [] : [
      `    for (var j = ${u(run / 2)}; j > 0u; j = j >> 1u) {`,
      `      for (var t = lid.x; t < pairs * ${u(run / 2)}; t = t + ${u(size)}) {`,
      `        let r = t % ${u(run / 2)};`,
      `        let a = (t / ${u(run / 2)}) * (span << 1u) + (((r & ~(j - 1u)) << 1u) | (r & (j - 1u)));`,
      "        let b = a + j;",
      ...exchange("        "),
      "      }",
      "      workgroupBarrier();",
      "    }",
    ]),
    "  }",
  ];
  const store = last ? finalStores(g, output, size, writesPositions) : [
    `  for (var j = lid.x; j < ${u(run)}; j = j + ${u(size)}) {`,
    `    mem[(args[${u(output)}] >> 2u) + (lane * ${u(chunks)} + chunk) * ${u(run)} + j] = order[j];`,
    "  }",
  ];
  const dims = problem.operands[0]!.dimensions;
  const source = [
    ...orderKernelHead(comparator, chunk),
    // Padding goes after everything.
    "fn less(base: u32, x: u32, y: u32) -> bool {",
    `  if (x == ${u(PAD)}) { return false; }`,
    `  if (y == ${u(PAD)}) { return true; }`,
    "  return goesFirst(base, x, y);",
    "}",
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    // A zero the compiler cannot see (the slot after the buffers): float constants go through it.
    `  xk_opaque = args[${u(buffers)}];`,
    `  let unit = wid.x + wid.y * ${u(groupsX)};`,
    // Uniform in the workgroup, so the barriers below stay in uniform control flow.
    `  if (unit >= ${u(units)}) { return; }`,
    `  let lane = unit / ${u(chunks)};`,
    `  let chunk = unit % ${u(chunks)};`,
    ...laneCoordinates(dims, problem.dimension),
    `  let base = ${laneStart(g.strides, problem.dimension)};`,
    `  for (var j = lid.x; j < ${u(chunk)}; j = j + ${u(size)}) {`,
    ...load,
    "  }",
    "  workgroupBarrier();",
    ...sortRuns,
    ...merge,
    ...store,
    "}",
  ].join("\n");
  const what = input === undefined
    ? `top-k (k = ${k}) of ${lanes} lanes of ${g.n}: ${chunks} chunk${chunks === 1 ? "" : "s"} of ${chunk} a lane, runs of ${run} sorted and merged to the best ${run}`
    : `top-k (k = ${k}) of ${lanes} lanes: ${input} candidates a lane in ${chunks} chunk${chunks === 1 ? "" : "s"} of ${chunk}, runs of ${run} merged to the best ${run}`;
  return { source, buffers, units, invocationsPerUnit: size, workgroups: [groupsX, Math.ceil(units / groupsX)], what };
}

/**
 * The last stage's stores, each result's element j from the lane's j-th best position
 * (results from argument slot `first`): word-sized elements copied, positions written
 * as s32 indices, and with narrow results the positions for their gathers (after the results).
 */
function finalStores(g: Geometry, first: number, size: number, writesPositions: boolean): string[] {
  const { problem, k } = g;
  const dims = problem.operands[0]!.dimensions;
  const stride = g.strides[problem.dimension]!;
  const lines = [`  for (var j = lid.x; j < ${u(k)}; j = j + ${u(size)}) {`, "    let src = order[j];"];
  problem.results.forEach((r, index) => {
    const slot = first + index;
    const resultStrides = rowMajorStrides(dims.map((d, j) => (j === problem.dimension ? r.count : d)));
    const at = `${laneStart(resultStrides, problem.dimension)} + j * ${u(resultStrides[problem.dimension]!)}`;
    const guard = r.count < k ? `if (j < ${u(r.count)}) ` : "";
    if (!("operand" in r)) {
      lines.push(`    ${guard}{ mem[(args[${u(slot)}] >> 2u) + ${at}] = src; }`);
      return;
    }
    const bytes = ELEMENT_TYPES[problem.operands[r.operand]!.elementType].storageBytes;
    if (narrow(bytes)) return;
    const words = bytes / 4;
    const copies = Array.from({ length: words }, (_, w) =>
      `mem[(args[${u(slot)}] >> 2u) + (${at}) * ${u(words)} + ${u(w)}] = mem[(args[${u(r.operand)}] >> 2u) + (base + src * ${u(stride)}) * ${u(words)} + ${u(w)}];`);
    lines.push(`    ${guard}{ ${copies.join(" ")} }`);
  });
  if (writesPositions) lines.push(`    mem[(args[${u(first + problem.results.length)}] >> 2u) + lane * ${u(k)} + j] = src;`);
  lines.push("  }");
  return lines;
}

/**
 * The result of narrow operand `operand` (of `shape`) as a word an invocation
 * (copyElementsKernel): its element at position j of a lane is the operand's at the
 * lane's j-th best position. Buffers: the operand, the positions, the result.
 */
function narrowGather(g: Geometry, operand: number, shape: ArrayShape, maxWorkgroupsPerDimension: number): WgslKernel {
  const { problem, k } = g;
  const d = problem.dimension;
  const others = shape.dimensions.flatMap((_, j) => (j === d ? [] : [j]));
  const lane = others.reduce((e, j) => `(${e}) * ${u(shape.dimensions[j]!)} + o${j}`, "0u");
  const bytes = ELEMENT_TYPES[shape.elementType].storageBytes;
  const start = others.map((j) => `o${j} * ${u(g.strides[j]!)}`).join(" + ") || "0u";
  const kernel = copyElementsKernel(shape, 2, "", [
    `  let src = mem[(args[1u] >> 2u) + (${lane}) * ${u(k)} + o${d}];`,
    `  let srcByte = args[0u] + (${start} + src * ${u(g.strides[d]!)}) * ${u(bytes)};`,
  ], bytes, maxWorkgroupsPerDimension);
  return { ...kernel, what: `top-k's ${shape.elementType} result of operand ${operand} gathered through the positions, a word of ${4 / bytes} elements an invocation` };
}
