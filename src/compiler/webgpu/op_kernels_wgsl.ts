// Gather, dynamic-update-slice, scatter, reduce-window, RNG bits and bitcast-convert as WGSL kernels of the WebGPU backend:
// one invocation an element of the result (StableHLO's definitions, as the
// interpreter's kernels compute them: interpreter/kernels/gather_scatter.ts, dynamic.ts,
// reduction.ts, prng.ts).
// - Gather and dynamic-update-slice find the element they copy and copy its bytes:
//   pure data movement, so bit-exact for every element type (f64 and 64-bit integers
//   too: they are only copied); 1- and 2-byte elements an invocation a result word (its
//   elements' bytes gathered, so no two invocations share a word). Start indices of any
//   integer type, clamped as the spec says.
// - Scatter of one input: an invocation per result element scans the updates in order
//   (deterministic, duplicates combined as the interpreter does; see scatterKernelWgsl).
// - Reduce-window of one f32, s32, u32, s64 or u64 input whose reducer is one binary op
//   (add, mul, max, min, and, or): the window's elements combined in the interpreter's
//   order (row-major over the window, padding and base-dilation holes feeding the init
//   value), with the WGSL renderer's ops (wgsl_values.ts: XLA's NaN and -0 rules for
//   max and min; wgsl_int64.ts's word pairs for s64 and u64), so bit-exact with the
//   interpreter.
// - RngBitGenerator with THREE_FRY (Threefry2x32) and PHILOX or DEFAULT (Philox4x32):
//   each element encrypts the counter of its block, as interpreter/kernels/prng.ts lays
//   the blocks out; elements narrower than a word packed a result word an invocation;
//   an empty result is a one-invocation kernel writing the (unchanged) state.
// - Bitcast-convert: a copy of the operand's words between types that fill their bytes,
//   the bits gathered a result word an invocation where pred or a sub-byte type is one.
//
// Memory as the loop kernels see it (wgsl_kernel.ts): binding 0 is the device's one
// memory, u32 words; binding 1 the byte offsets of the operands, then the result.

import type { Computation, Instruction } from "../../ir/computation.js";
import { complementDims } from "../../ir/shape/dim_checks.js";
import { appendAll } from "../../types/arrays.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { rowMajorStrides } from "../../types/index_util.js";
import { arrayShape, type ArrayShape, elementCount } from "../../types/shape.js";
import { DeclinedError, type Declined } from "../kernel/declined.js";
import { KernelGraph } from "../kernel/graph.js";
import { lowerScalarBody, reducerKinds } from "../kernel/lower_fusion.js";
import { INT64_HOLDER, int64Words, WGSL_MUL_32X32 } from "./wgsl_int64.js";
import { WGSL_HELPERS, WgslValues, wgslMathSources, type WgslMathName } from "./wgsl_values.js";
import { COMBINE_OP, copyKernelWgsl, WORKGROUP_SIZE, type WgslKernel } from "./wgsl_kernel.js";

export const u = (x: number): string => `${x}u`;
const i32 = (x: number): string => `${x}i`;

/**
 * A WGSL function `clampedIndex(a: u32, lo: i32, hi: i32) -> i32`: the integer of `type`
 * at byte address a, clamped to [lo, hi] (lo <= 0 <= hi), exactly for every integer width.
 */
function clampedIndexFunction(type: ElementType): string | Declined {
  const info = ELEMENT_TYPES[type];
  if (info.kind !== "signed" && info.kind !== "unsigned") return { declined: `indices of type ${type} are not integers` };
  const bits = info.storageBytes * 8;
  const word = "mem[a >> 2u]";
  let body: string;
  if (bits === 64) {
    // Little-endian: the low word l first, then the high word h.
    body = info.kind === "signed"
      ? `let l = ${word}; let h = bitcast<i32>(mem[(a >> 2u) + 1u]);
  if (h > 0i) { return hi; }
  if (h == 0i) { return i32(min(l, u32(hi))); }
  if (h < -1i || l < 0x80000000u) { return lo; }
  return max(bitcast<i32>(l), lo);`
      : `if (mem[(a >> 2u) + 1u] != 0u) { return hi; } return i32(min(${word}, u32(hi)));`;
  } else if (info.kind === "unsigned") {
    const v = bits === 32 ? word : `((${word} >> ((a & 3u) * 8u)) & ${u(2 ** bits - 1)})`;
    body = `return i32(min(${v}, u32(hi)));`;
  } else {
    // Sign-extended by shifting the field to the top of an i32 and back.
    const v = bits === 32 ? `bitcast<i32>(${word})` : `(bitcast<i32>(${word} << (${u(32 - bits)} - (a & 3u) * 8u)) >> ${u(32 - bits)})`;
    body = `return clamp(${v}, lo, hi);`;
  }
  return `fn clampedIndex(a: u32, lo: i32, hi: i32) -> i32 {\n  ${body}\n}`;
}

/** Words an element of `t` copies, or why it is declined. */
export function elementWords(t: ElementType, op: string): number | Declined {
  const bytes = ELEMENT_TYPES[t].storageBytes;
  if (bytes % 4 !== 0) return { declined: `webgpu ${op}: ${t} elements are ${bytes} bytes (the WGSL kernel copies whole 32-bit words; neighbouring elements would share one)` };
  return bytes / 4;
}

/** Statements copying `words` words from word offset `src` to element i of the result (args[result]). */
const copyWords = (words: number, result: number): string[] =>
  Array.from({ length: words }, (_, w) => `  mem[(args[${result}u] >> 2u) + i * ${u(words)} + ${u(w)}] = mem[src + ${u(w)}];`);

/** Statements splitting element `i` of an array of `dims` into its multi-index o0.. (row-major). */
function splitIndex(dims: readonly number[]): string[] {
  const split: string[] = ["  var rest = i;"];
  for (let d = dims.length - 1; d >= 0; d--) split.push(`  let o${d} = rest % ${u(dims[d]!)}; rest = rest / ${u(dims[d]!)};`);
  return split;
}

/**
 * The kernel around `body` (WGSL statements given the element `i` of the result and its
 * multi-index o0.., which store it), for a result of `shape` at argument slot `result`.
 */
export function elementKernel(shape: ArrayShape, result: number, functions: string, body: string[], maxWorkgroupsPerDimension: number): WgslKernel {
  const dims = shape.dimensions;
  const count = elementCount(dims);
  const groups = Math.max(1, Math.ceil(count / WORKGROUP_SIZE));
  const groupsX = Math.min(groups, maxWorkgroupsPerDimension);
  const split = splitIndex(dims);
  const source = [
    "@group(0) @binding(0) var<storage, read_write> mem: array<u32>;",
    "@group(0) @binding(1) var<storage, read> args: array<u32>;",
    functions,
    `@compute @workgroup_size(${WORKGROUP_SIZE})`,
    "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {",
    `  let i = gid.x + gid.y * ${u(groupsX * WORKGROUP_SIZE)};`,
    `  if (i >= ${u(count)}) { return; }`,
    ...split,
    ...body,
    "}",
  ].join("\n");
  return { source, buffers: result + 1, units: count, invocationsPerUnit: 1, workgroups: [groupsX, Math.ceil(groups / groupsX)] };
}

/**
 * A kernel copying to each element `i` of a result of `shape` (at argument slot
 * `result`) the element of `bytes` bytes at byte address `srcByte`, which `body` sets
 * (given i and its multi-index o0..). Elements of 4 or 8 bytes are copied word by word,
 * an invocation an element; 1- and 2-byte elements (which share words) an invocation a
 * result word, gathering its 4 or 2 elements' bytes from wherever they lie, so that no
 * two invocations write one word.
 */
export function copyElementsKernel(shape: ArrayShape, result: number, functions: string, body: readonly string[], bytes: number, maxWorkgroupsPerDimension: number): WgslKernel {
  if (bytes % 4 === 0) return elementKernel(shape, result, functions, [...body, "  let src = srcByte >> 2u;", ...copyWords(bytes / 4, result)], maxWorkgroupsPerDimension);
  const count = elementCount(shape.dimensions);
  const perWord = 4 / bytes;
  const source = ["fn sourceByte(i: u32) -> u32 {", ...splitIndex(shape.dimensions), ...body, "  return srcByte;", "}"].join("\n");
  const words = Math.ceil(count / perWord);
  return elementKernel(arrayShape("u32", [words]), result, `${functions}\n${source}`, [
    "  var word = 0u;",
    `  for (var k = 0u; k < ${u(perWord)}; k = k + 1u) {`,
    `    let e = i * ${u(perWord)} + k;`,
    `    if (e < ${u(count)}) {`,
    "      let a = sourceByte(e);",
    `      word = word | (((mem[a >> 2u] >> ((a & 3u) * 8u)) & ${u(2 ** (8 * bytes) - 1)}) << (k * ${u(8 * bytes)}));`,
    "    }",
    "  }",
    `  mem[(args[${u(result)}] >> 2u) + i] = word;`,
  ], maxWorkgroupsPerDimension);
}

/** Too large for the kernels' u32 word offsets. */
export const tooLarge = (shapes: readonly ArrayShape[]): boolean => shapes.some((s) => elementCount(s.dimensions) * ELEMENT_TYPES[s.elementType].storageBytes >= 2 ** 31);

export function gatherKernelWgsl(inst: Instruction<"gather">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const [operand, indices] = inst.operands.map((o) => o.shape as ArrayShape) as [ArrayShape, ArrayShape];
  const shape = inst.shape as ArrayShape;
  if (tooLarge([operand, indices, shape])) return { declined: "webgpu gather: an operand of 2 GiB or more" };
  const index = clampedIndexFunction(indices.elementType);
  if (typeof index !== "string") return index;
  const { dimensionNumbers: dn, sliceSizes } = inst.attrs;
  const opDims = operand.dimensions;
  const outBatchDims = complementDims(shape.dimensions.length, dn.offsetDims);
  const offsetOperandDims = complementDims(opDims.length, [...dn.collapsedSliceDims, ...dn.operandBatchingDims]);
  const indexStrides = rowMajorStrides(indices.dimensions);
  const indexBytes = ELEMENT_TYPES[indices.elementType].storageBytes;
  // The index vector's first entry: the batch position (the result's batch dims, in order) over the indices' other dims.
  const otherIndexDims = indices.dimensions.map((_, d) => d).filter((d) => d !== dn.indexVectorDim);
  const vectorBase = otherIndexDims.map((d, k) => `o${outBatchDims[k]!} * ${u(indexStrides[d]! * indexBytes)}`);
  const vectorStep = dn.indexVectorDim < indices.dimensions.length ? indexStrides[dn.indexVectorDim]! * indexBytes : 0;
  const body = [`  let at = args[1u] + ${vectorBase.join(" + ") || "0u"};`];
  const full: string[][] = opDims.map(() => []);
  dn.startIndexMap.forEach((od, k) => {
    body.push(`  let s${k} = u32(clampedIndex(at + ${u(k * vectorStep)}, 0i, ${i32(opDims[od]! - sliceSizes[od]!)}));`);
    full[od]!.push(`s${k}`);
  });
  // An operand batching dim takes the batch position of its indices batching dim (counted among the indices' dims other than index_vector_dim).
  dn.operandBatchingDims.forEach((od, k) => {
    const d = dn.startIndicesBatchingDims[k]!;
    full[od]!.push(`o${outBatchDims[d < dn.indexVectorDim ? d : d - 1]!}`);
  });
  dn.offsetDims.forEach((outDim, k) => full[offsetOperandDims[k]!]!.push(`o${outDim}`));
  const strides = rowMajorStrides(opDims);
  const terms = full.flatMap((xs, d) => (xs.length === 0 ? [] : [`(${xs.join(" + ")}) * ${u(strides[d]!)}`]));
  const bytes = ELEMENT_TYPES[shape.elementType].storageBytes;
  body.push(`  let srcByte = args[0u] + (${terms.join(" + ") || "0u"}) * ${u(bytes)};`);
  return copyElementsKernel(shape, 2, index, body, bytes, maxWorkgroupsPerDimension);
}

export function dynamicUpdateSliceKernelWgsl(inst: Instruction<"dynamicUpdateSlice">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const [operand, update, ...starts] = inst.operands.map((o) => o.shape as ArrayShape) as [ArrayShape, ArrayShape, ...ArrayShape[]];
  if (tooLarge([operand, update])) return { declined: "webgpu dynamic-update-slice: an operand of 2 GiB or more" };
  const types = new Set(starts.map((s) => s.elementType));
  if (types.size > 1) return { declined: "webgpu dynamic-update-slice: start indices of different types" };
  const rank = operand.dimensions.length;
  const index = rank === 0 ? "" : clampedIndexFunction(starts[0]!.elementType);
  if (typeof index !== "string") return index;
  const body: string[] = [];
  const inside: string[] = [];
  operand.dimensions.forEach((n, d) => {
    const m = update.dimensions[d]!;
    body.push(`  let s${d} = u32(clampedIndex(args[${u(2 + d)}], 0i, ${i32(n - m)}));`);
    inside.push(`o${d} >= s${d} && o${d} < s${d} + ${u(m)}`);
  });
  const strides = rowMajorStrides(update.dimensions);
  const updateAt = operand.dimensions.map((_, d) => `(o${d} - s${d}) * ${u(strides[d]!)}`).join(" + ") || "0u";
  const bytes = ELEMENT_TYPES[operand.elementType].storageBytes;
  body.push(`  var srcByte = args[0u] + i * ${u(bytes)};`);
  // Every element of an empty update is outside; a rank-0 update replaces the only element.
  if (elementCount(update.dimensions) > 0) body.push(`  if (${inside.join(" && ") || "true"}) { srcByte = args[1u] + (${updateAt}) * ${u(bytes)}; }`);
  return copyElementsKernel(operand, 2 + rank, index, body, bytes, maxWorkgroupsPerDimension);
}

/** Whether t's bits fill its bytes (8-, 16-, 32-, 64- and 128-bit types): not pred and the 2-, 4- and 6-bit types, each a byte here. */
const fillsBytes = (t: ElementType): boolean => ELEMENT_TYPES[t].bitWidth === ELEMENT_TYPES[t].storageBytes * 8;

/**
 * Bitcast-convert, bit-exact (interpreter/kernels: the operand's elements' bits as one
 * little-endian stream, cut into the result's elements). In the default layout every
 * array has (layout_assignment.ts) the elements lie in row-major order, so between types
 * that fill their bytes the result's bytes are the operand's, whatever the shapes (f32[n]
 * to u8[n, 4], c128 to c64[2], f64 to s64): a copy of the words. A type that does not
 * (pred, the 2-, 4- and 6-bit types) is a byte an element here, its bits the byte's low
 * ones (a signed one's sign-extended, a pred's 0 or 1): an invocation a word of the
 * result gathers the word's bits from the stream, element by element on such an
 * operand, and stores such a result's elements a byte each, four to the word (no two
 * invocations share one).
 */
export function bitcastConvertKernelWgsl(inst: Instruction<"bitcastConvert">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const operand = inst.operands[0]!.shape as ArrayShape;
  const shape = inst.shape as ArrayShape;
  const [from, to] = [operand.elementType, shape.elementType];
  const bytes = elementCount(shape.dimensions) * ELEMENT_TYPES[to].storageBytes;
  const what = `bitcast-convert ${from} -> ${to}`;
  if (fillsBytes(from) && fillsBytes(to)) {
    if (tooLarge([operand, shape])) return { declined: "webgpu bitcast-convert: an operand of 2 GiB or more" };
    return { ...copyKernelWgsl(bytes, maxWorkgroupsPerDimension), what: `${what}: a copy of ${bytes} bytes` };
  }
  const bits = elementCount(shape.dimensions) * ELEMENT_TYPES[to].bitWidth;
  // Bit positions in the stream are u32s.
  if (bits >= 2 ** 32 || tooLarge([operand, shape])) return { declined: "webgpu bitcast-convert of packed bits: 2^32 bits or more" };
  const fw = ELEMENT_TYPES[from].bitWidth;
  const tw = ELEMENT_TYPES[to].bitWidth;
  const stream = fillsBytes(from)
    // Straight from memory: the bits at p, and the next word's where they cross into it.
    ? `fn streamBits(p: u32, n: u32) -> u32 {
  let w = (args[0u] >> 2u) + (p >> 5u);
  let s = p & 31u;
  var v = mem[w] >> s;
  if (s != 0u && s + n > 32u) { v = v | (mem[w + 1u] << (32u - s)); }
  return select(v & ((1u << n) - 1u), v, n == 32u);
}`
    : `fn operandElement(e: u32) -> u32 {
  let b = (mem[(args[0u] >> 2u) + (e >> 2u)] >> ((e & 3u) * 8u)) & 0xffu;
  return ${from === "pred" ? "select(0u, 1u, b != 0u)" : `b & ${u(2 ** fw - 1)}`};
}
fn streamBits(p: u32, n: u32) -> u32 {
  var v = 0u;
  var q = 0u;
  while (q < n) {
    let off = (p + q) % ${u(fw)};
    let take = min(${u(fw)} - off, n - q);
    v = v | (((operandElement((p + q) / ${u(fw)}) >> off) & ((1u << take) - 1u)) << q);
    q = q + take;
  }
  return v;
}`;
  const out = "(args[1u] >> 2u) + i";
  let body: string[];
  if (fillsBytes(to)) {
    body = [`  mem[${out}] = streamBits(32u * i, min(32u, ${u(bits)} - 32u * i));`];
  } else {
    const count = elementCount(shape.dimensions);
    const signed = ELEMENT_TYPES[to].kind === "signed";
    const byte = (v: string): string => (signed ? `(bitcast<u32>(bitcast<i32>(${v} << ${u(32 - tw)}) >> ${u(32 - tw)}) & 0xffu)` : v);
    body = ["  var word = 0u;", "  for (var k = 0u; k < 4u; k = k + 1u) {", "    let e = 4u * i + k;",
      `    if (e < ${u(count)}) { word = word | (${byte(`streamBits(e * ${u(tw)}, ${u(tw)})`)} << (8u * k)); }`, "  }", `  mem[${out}] = word;`];
  }
  const kernel = elementKernel(arrayShape("u32", [Math.ceil(bytes / 4)]), 1, stream, body, maxWorkgroupsPerDimension);
  return { ...kernel, what: `${what}: ${fillsBytes(from) ? "" : `${from} elements gathered into `}${Math.ceil(bytes / 4)} words of ${fillsBytes(to) ? "bits" : `${to} elements`}` };
}

/**
 * An element of a type the kernels of this file compute on (reduce-window, scatter,
 * select-and-scatter, a sort's comparator): its words in memory, the WGSL type holding
 * it (s64 and u64 as wgsl_int64.ts's word pairs), its value read from a word offset and
 * the statement storing one there.
 */
export interface ComputedElement {
  readonly words: number;
  readonly wgslType: string;
  /** The value whose first word is at word offset `at` (a u32 expression without side effects). */
  load(at: string): string;
  /** A statement storing value `v` at word offset `at`. */
  store(at: string, v: string): string;
}

const oneWord = (wgslType: string, load: (word: string) => string, bits: (v: string) => string): ComputedElement =>
  ({ words: 1, wgslType, load: (at) => load(`mem[${at}]`), store: (at, v) => `mem[${at}] = ${bits(v)};` });
const wordPair: ComputedElement = {
  words: 2, wgslType: INT64_HOLDER,
  load: (at) => int64Words(`mem[${at}]`, `mem[(${at}) + 1u]`),
  store: (at, v) => `mem[${at}] = ${v}.x; mem[(${at}) + 1u] = ${v}.y;`,
};

/** The element types those kernels compute on, each as it is held. */
export const COMPUTED_ELEMENT: Partial<Record<ElementType, ComputedElement>> = {
  f32: oneWord("f32", (w) => `bitcast<f32>(${w})`, (v) => `bitcast<u32>(${v})`),
  s32: oneWord("i32", (w) => `bitcast<i32>(${w})`, (v) => `bitcast<u32>(${v})`),
  u32: oneWord("u32", (w) => w, (v) => v),
  s64: wordPair,
  u64: wordPair,
};

/** What the kernels computing on elements say they take. */
export const COMPUTED_TYPES = "f32, s32, u32, s64 and u64";

/** Element pairs (result elements times update positions) above which a scatter's scanning kernel is declined. */
const SCATTER_SCAN_LIMIT = 2 ** 28;

/**
 * Scatter of N inputs, deterministic: an invocation per element of the results starts
 * from the inputs' elements and scans the update positions (the updates' scatter
 * dimensions) in row-major order, combining each update element that lands on it, so
 * duplicate indices combine in the interpreter's order (the updates' row-major order,
 * which is the positions' order when the update window dims are the trailing ones;
 * other layouts are declined). Indices are not clamped: an update element whose input
 * index falls outside is skipped, element by element, as the interpreter (the spec)
 * does. The update computation is one binary op of its parameters (add, mul, max, min,
 * and, or, with the renderer's NaN and -0 rules), any other scalar body on f32, s32,
 * u32, s64 and u64 (a subtract; N values: combineFunction), or, for one input, the update
 * itself (a replace, which copies words of any 4- or 8-byte type). The scan costs
 * result elements x update positions: above SCATTER_SCAN_LIMIT it is declined (the
 * host runs it) rather than a kernel that would take seconds.
 */
export function scatterKernelWgsl(inst: Instruction<"scatter">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  // Slots: the N inputs, the indices, the N updates, the N results.
  const n = (inst.operands.length - 1) / 2;
  const inputs = inst.operands.slice(0, n).map((o) => o.shape as ArrayShape);
  const indices = inst.operands[n]!.shape as ArrayShape;
  const updates = inst.operands.slice(n + 1).map((o) => o.shape as ArrayShape);
  const input = inputs[0]!;
  const { dimensionNumbers: dn, toApply } = inst.attrs;
  const types = inputs.map((x) => x.elementType);
  const updDims = updates[0]!.dimensions;
  const windowCount = dn.updateWindowDims.length;
  if (dn.updateWindowDims.some((d, k) => d !== updDims.length - windowCount + k)) {
    return { declined: "webgpu scatter: update window dims that are not the updates' trailing dims (the kernel's scan order would not be the updates' row-major order)" };
  }
  if (tooLarge([...inputs, indices, ...updates])) return { declined: "webgpu scatter: an operand of 2 GiB or more" };
  const index = clampedIndexFunction(indices.elementType);
  if (typeof index !== "string") return { declined: `webgpu scatter: ${index.declined}` };
  const root = toApply.root;
  const replace = n === 1 && root.opcode === "parameter" && (root as Instruction<"parameter">).attrs.number === 1;
  const name = (x: string, k: number): string => (n === 1 ? x : `${x}${k}`);
  let words: number[];
  const elements: ComputedElement[] = [];
  let combine: Combine | undefined;
  if (replace) {
    const w = elementWords(types[0]!, "scatter");
    if (typeof w !== "number") return w;
    words = [w];
  } else {
    for (const t of types) {
      const element = COMPUTED_ELEMENT[t];
      if (element === undefined) return { declined: `webgpu scatter combining ${t} values (the WGSL kernel combines ${COMPUTED_TYPES}, and replaces 4- and 8-byte elements of one input)` };
      elements.push(element);
    }
    const c: Combine | Declined = n === 1 ? combineExpression(toApply, types[0]!, "scatter") : (() => {
      const f = combineFunction(toApply, types, "scatter");
      return "declined" in f ? f : { ...f, expression: `xk_combine(${[...types.map((_, k) => `acc${k}`), ...types.map((_, k) => `v${k}`)].join(", ")})` };
    })();
    if ("declined" in c) return c;
    combine = c;
    words = elements.map((e) => e.words);
  }
  const inDims = input.dimensions;
  const scatterDims = updDims.slice(0, updDims.length - windowCount);
  const positions = elementCount(scatterDims);
  if (elementCount(inDims) * positions > SCATTER_SCAN_LIMIT) {
    return { declined: `webgpu scatter: ${elementCount(inDims)} result elements x ${positions} update positions is more than the scanning kernel's ${SCATTER_SCAN_LIMIT} pairs` };
  }
  const indexBytes = ELEMENT_TYPES[indices.elementType].storageBytes;
  const indexStrides = rowMajorStrides(indices.dimensions);
  const otherIndexDims = indices.dimensions.map((_, d) => d).filter((d) => d !== dn.indexVectorDim);
  const vectorStep = dn.indexVectorDim < indices.dimensions.length ? indexStrides[dn.indexVectorDim]! * indexBytes : 0;
  const updStrides = rowMajorStrides(updDims);
  // Past any index that can land in the input (dims are under 2^29 elements), and far from i32's ends.
  const far = 2 ** 30;
  const body = combine === undefined ? [`  var src = (args[0u] >> 2u) + i * ${u(words[0]!)};`]
    : elements.map((e, k) => `  var ${name("acc", k)} = ${e.load(`(args[${u(k)}] >> 2u) + i * ${u(e.words)}`)};`);
  body.push(`  for (var p = 0u; p < ${u(positions)}; p = p + 1u) {`, "    var rest = p;");
  for (let k = scatterDims.length - 1; k >= 0; k--) body.push(`    let q${k} = rest % ${u(scatterDims[k]!)}; rest = rest / ${u(scatterDims[k]!)};`);
  body.push(`    let at = args[${u(n)}] + ${otherIndexDims.map((d, k) => `q${k} * ${u(indexStrides[d]! * indexBytes)}`).join(" + ") || "0u"};`);
  // Where the window of position p starts in each input dim, and whether element i is in it.
  const starts: string[][] = inDims.map(() => []);
  dn.scatterDimsToOperandDims.forEach((d, k) => starts[d]!.push(`clampedIndex(at + ${u(k * vectorStep)}, ${i32(-far)}, ${i32(far)})`));
  dn.inputBatchingDims.forEach((d, k) => {
    const b = dn.scatterIndicesBatchingDims[k]!;
    starts[d]!.push(`i32(q${b < dn.indexVectorDim ? b : b - 1})`);
  });
  const windowInputDims = complementDims(inDims.length, [...dn.insertedWindowDims, ...dn.inputBatchingDims]);
  const inside: string[] = [];
  const updateAt = scatterDims.map((_, k) => `q${k} * ${u(updStrides[k]!)}`);
  inDims.forEach((_, d) => {
    body.push(`    let w${d} = i32(o${d}) - (${starts[d]!.join(" + ") || "0i"});`);
    const k = windowInputDims.indexOf(d);
    if (k < 0) {
      inside.push(`w${d} == 0i`);
    } else {
      const ud = dn.updateWindowDims[k]!;
      inside.push(`w${d} >= 0i && w${d} < ${i32(updDims[ud]!)}`);
      updateAt.push(`u32(w${d}) * ${u(updStrides[ud]!)}`);
    }
  });
  body.push(`    if (${inside.join(" && ") || "true"}) {`, `      let upd = ${updateAt.join(" + ") || "0u"};`);
  if (combine === undefined) body.push(`      src = (args[${u(n + 1)}] >> 2u) + upd * ${u(words[0]!)};`);
  else {
    elements.forEach((e, k) => body.push(`      let ${name("v", k)} = ${e.load(`(args[${u(n + 1 + k)}] >> 2u) + upd * ${u(e.words)}`)};`));
    appendAll(body, combinedAssignments(combine.expression, n, "      "));
  }
  body.push("    }", "  }");
  const store = combine === undefined ? copyWords(words[0]!, 3) : elements.map((e, k) => `  ${e.store(`(args[${u(2 * n + 1 + k)}] >> 2u) + i * ${u(e.words)}`, name("acc", k))}`);
  return elementKernel(input, 3 * n, [WGSL_HELPERS, ...wgslMathSources(combine?.math ?? new Set()), combine?.source ?? "", index].join("\n"), [...body, ...store], maxWorkgroupsPerDimension);
}

/**
 * Reduce-window of N inputs (N > 1: argmax-style windows of values and indices): an
 * invocation per result element folds its window in row-major order from the init
 * values, a position in padding or in a base-dilation hole feeding the init values, as
 * the interpreter does. One input combines inline where its computation is one reducer
 * op; otherwise (and for N > 1) the computation runs as a lowered function.
 */
export function reduceWindowKernelWgsl(inst: Instruction<"reduceWindow">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const n = inst.operands.length / 2;
  const bases = inst.operands.slice(0, n).map((o) => o.shape as ArrayShape);
  const shapes = (inst.shape.kind === "tuple" ? inst.shape.elements : [inst.shape]) as ArrayShape[];
  const base = bases[0]!;
  const types = bases.map((b) => b.elementType);
  const elements: ComputedElement[] = [];
  for (const t of types) {
    const element = COMPUTED_ELEMENT[t];
    if (element === undefined) return { declined: `webgpu reduce-window on ${t} (the WGSL kernel takes ${COMPUTED_TYPES})` };
    elements.push(element);
  }
  if (tooLarge([...bases, ...shapes])) return { declined: "webgpu reduce-window: an operand of 2 GiB or more" };
  const combine: Combine | Declined = n === 1 ? combineExpression(inst.attrs.toApply, types[0]!, "reduce-window") : (() => {
    const f = combineFunction(inst.attrs.toApply, types, "reduce-window");
    return "declined" in f ? f : { ...f, expression: `xk_combine(${[...types.map((_, k) => `acc${k}`), ...types.map((_, k) => `v${k}`)].join(", ")})` };
  })();
  if ("declined" in combine) return combine;
  const window = inst.attrs.window;
  const strides = rowMajorStrides(base.dimensions);
  // Slots: the inputs, the init values, the results; names acc, v for one input, acc0.., v0.. for several.
  const name = (x: string, k: number): string => (n === 1 ? x : `${x}${k}`);
  const init = (k: number): string => elements[k]!.load(`args[${u(n + k)}] >> 2u`);
  const body = [...elements.map((_, k) => `  var ${name("acc", k)} = ${init(k)};`), `  for (var wi = 0u; wi < ${u(elementCount(window.map((w) => w.size)))}; wi = wi + 1u) {`, "    var wr = wi;", "    var inside = true;", "    var at = 0u;"];
  // Row-major over the window: its last dimension fastest.
  for (let d = window.length - 1; d >= 0; d--) body.push(`    let k${d} = wr % ${u(window[d]!.size)}; wr = wr / ${u(window[d]!.size)};`);
  window.forEach((w, d) => {
    const k = w.windowReversal ? `(${u(w.size - 1)} - k${d})` : `k${d}`;
    body.push(`    let p${d} = i32(o${d} * ${u(w.stride)} + ${k} * ${u(w.windowDilation)}) - ${i32(w.paddingLow)};`);
    body.push(`    if (p${d} < 0i || p${d} % ${i32(w.baseDilation)} != 0i || p${d} / ${i32(w.baseDilation)} >= ${i32(base.dimensions[d]!)}) { inside = false; } else { at = at + u32(p${d} / ${i32(w.baseDilation)}) * ${u(strides[d]!)}; }`);
  });
  elements.forEach((e, k) => body.push(`    var ${name("v", k)} = ${init(k)};`, `    if (inside) { ${name("v", k)} = ${e.load(`(args[${u(k)}] >> 2u) + at * ${u(e.words)}`)}; }`));
  appendAll(body, combinedAssignments(combine.expression, n, "    "));
  body.push("  }");
  elements.forEach((e, k) => body.push(`  ${e.store(`(args[${u(2 * n + k)}] >> 2u) + i * ${u(e.words)}`, name("acc", k))}`));
  return elementKernel(shapes[0]!, 3 * n - 1, [WGSL_HELPERS, ...wgslMathSources(combine.math), combine.source].join("\n"), body, maxWorkgroupsPerDimension);
}

/**
 * The WGSL expression combining `acc` and `v` (values of t), the function it calls where
 * it is not one op (`source`, before the kernel), and the math functions it calls
 * (wgsl_int64.ts's for s64 and u64: wgslMathSources).
 */
export interface Combine {
  readonly expression: string;
  readonly source: string;
  readonly math: ReadonlySet<WgslMathName>;
}

/**
 * How `toApply` combines `acc` and `v`: one binary op of its two parameters inline, or
 * any other scalar body (a subtract: each update taken from the value in order, as the
 * interpreter's scatter does) lowered as the fusions' scalar ops are (kernel/lower_fusion.ts)
 * into a function `xk_combine(acc, v)`; or why not.
 */
export function combineExpression(toApply: Computation, t: ElementType, op: string): Combine | Declined {
  const kinds = reducerKinds(toApply, [t]);
  try {
    if (typeof kinds !== "string") {
      const values = new WgslValues(new KernelGraph(), NO_NODES);
      return { expression: values.binary(COMBINE_OP[kinds[0]!], t, "acc", "v"), source: "", math: values.math };
    }
    if (COMPUTED_ELEMENT[t] === undefined) return { declined: `webgpu ${op}: ${kinds}` };
    const f = combineFunction(toApply, [t], op);
    return "declined" in f ? f : { expression: "xk_combine(acc, v)", source: f.source, math: f.math };
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: `webgpu ${op}: ${e.message}` };
    throw e;
  }
}

/** The statements that set the accumulators to `expression` (a call of xk_combine): acc for one value, acc0.. from XkCombined's fields for N. */
function combinedAssignments(expression: string, n: number, indent: string): string[] {
  if (n === 1) return [`${indent}acc = ${expression};`];
  const lines = [`${indent}let c = ${expression};`];
  for (let k = 0; k < n; k++) lines.push(`${indent}acc${k} = c.r${k};`);
  return lines;
}

/**
 * The WGSL function `xk_combine(acc0.., v0..)` of an update computation of N values
 * (`types`, each in COMPUTED_ELEMENT), lowered as the fusions' scalar ops are
 * (kernel/lower_fusion.ts): one value returned as it is, N > 1 in the struct
 * XkCombined (fields r0..); or why not.
 */
export function combineFunction(toApply: Computation, types: readonly ElementType[], op: string): { source: string; math: ReadonlySet<WgslMathName> } | Declined {
  const n = types.length;
  const held: string[] = [];
  for (const t of types) {
    const element = COMPUTED_ELEMENT[t];
    if (element === undefined) return { declined: `webgpu ${op} combining ${t} values (the WGSL kernel combines ${COMPUTED_TYPES})` };
    held.push(element.wgslType);
  }
  const g = new KernelGraph();
  const names = [...types.map((_, k) => `acc${n === 1 ? "" : k}`), ...types.map((_, k) => `v${n === 1 ? "" : k}`)];
  const params = [...types, ...types].map((t, k) => g.op("rin", t, [], k));
  const results = lowerScalarBody(g, toApply, params);
  if ("declined" in results) return { declined: `webgpu ${op}: the update computation: ${results.declined}` };
  if (results.length !== n) return { declined: `webgpu ${op}: an update computation with ${results.length} results for ${n} values` };
  try {
    const values = new WgslValues(g, { load: NO_NODES.load, leaf: (node) => names[node.attr as number]! });
    const lines: string[] = [];
    values.emit(neededNodes(g, results), lines, "  ");
    const signature = names.map((name, k) => `${name}: ${held[k % n]}`).join(", ");
    const source = n === 1
      ? [`fn xk_combine(${signature}) -> ${held[0]} {`, ...lines, `  return ${values.v(results[0]!)};`, "}"]
      : [`struct XkCombined { ${held.map((h, k) => `r${k}: ${h}`).join(", ")} }`, `fn xk_combine(${signature}) -> XkCombined {`, ...lines,
        `  return XkCombined(${results.map((r) => values.v(r)).join(", ")});`, "}"];
    return { source: source.join("\n"), math: values.math };
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: `webgpu ${op}: ${e.message}` };
    throw e;
  }
}

/** The nodes `roots` depend on (themselves included), in the graph's order: what a scalar function emits. */
export function neededNodes(g: KernelGraph, roots: readonly number[]): number[] {
  const needed = new Set<number>();
  const visit = (id: number): void => {
    if (needed.has(id)) return;
    needed.add(id);
    for (const a of g.node(id).args) visit(a);
  };
  roots.forEach(visit);
  return [...needed].sort((a, b) => a - b);
}

/** A combine reads no graph nodes. */
const NO_NODES = {
  load: (): never => { throw new Error("a combine loads nothing"); },
  leaf: (): never => { throw new Error("a combine has no leaves"); },
};

/** Threefry2x32 with 20 rounds (interpreter/kernels/prng.ts): the counter (c0, c1) encrypted under the key (k0, k1). */
const THREEFRY_WGSL = `fn threefry(c0: u32, c1: u32, k0: u32, k1: u32) -> vec2<u32> {
  var ks = array<u32, 3>(k0, k1, 0x1bd11bdau ^ k0 ^ k1);
  var rotations = array<u32, 8>(13u, 15u, 26u, 6u, 17u, 29u, 16u, 24u);
  var x0 = c0 + k0;
  var x1 = c1 + k1;
  for (var g = 0u; g < 5u; g = g + 1u) {
    for (var r = 0u; r < 4u; r = r + 1u) {
      x0 = x0 + x1;
      let s = rotations[(g % 2u) * 4u + r];
      x1 = ((x1 << s) | (x1 >> (32u - s))) ^ x0;
    }
    x0 = x0 + ks[(g + 1u) % 3u];
    x1 = x1 + ks[(g + 2u) % 3u] + g + 1u;
  }
  return vec2<u32>(x0, x1);
}`;

/** Philox4x32 with 10 rounds (interpreter/kernels/prng.ts) on full 32x32-bit products. */
const PHILOX_WGSL = `${WGSL_MUL_32X32}
fn philox(counter: vec4<u32>, k0: u32, k1: u32) -> vec4<u32> {
  var x = counter;
  var key0 = k0;
  var key1 = k1;
  for (var round = 0u; round < 10u; round = round + 1u) {
    let a = xk_mul32x32(0xd2511f53u, x.x);
    let b = xk_mul32x32(0xcd9e8d57u, x.z);
    x = vec4<u32>(b.y ^ x.y ^ key0, b.x, a.y ^ x.w ^ key1, a.x);
    key0 = key0 + 0x9e3779b9u;
    key1 = key1 + 0xbb67ae85u;
  }
  return x;
}
// A 128-bit counter (four words, the lowest first) plus n.
fn add128(c: vec4<u32>, n: u32) -> vec4<u32> {
  let w0 = c.x + n;
  let w1 = c.y + select(0u, 1u, w0 < c.x);
  let w2 = c.z + select(0u, 1u, w1 < c.y);
  return vec4<u32>(w0, w1, w2, c.w + select(0u, 1u, w2 < c.z));
}`;

/**
 * RngBitGenerator bit for bit as the interpreter (XLA's expander), invocation 0 also
 * writing the new state; one invocation an element of 32 or 64 bits, one a result word
 * for narrower elements (its 2 or 4 elements' 32-bit values, each the value a 32-bit
 * result would hold there, cut to the element's bits as the interpreter stores them:
 * sub-byte signed types sign-extended to their byte), so no two invocations share a word.
 * - THREE_FRY: the state u64[2] is (key, counter); a 64-bit element i is the block of
 *   counter + i; a 32-bit (or narrower) element takes word 0 or 1 of the block of
 *   counter + (its index with the split dimension halved), the split dimension being
 *   the first even one (else the first largest).
 * - PHILOX and DEFAULT: the state u64[2] is (key, counter low) with the key as the
 *   counter's high half, u64[3] (key, counter low, counter high); element i of 32 bits
 *   (or fewer) is word i % 4 of block i / 4, of 64 bits words 2(i % 2) and 2(i % 2) + 1
 *   of block i / 2 (a block encrypting the 128-bit counter + its index).
 */
export function rngBitGeneratorKernelWgsl(inst: Instruction<"rngBitGenerator">, maxWorkgroupsPerDimension: number): WgslKernel | Declined {
  const { algorithm } = inst.attrs;
  const state = inst.operands[0]!.shape as ArrayShape;
  const shape = inst.attrs.shape as ArrayShape;
  const stateWords = state.dimensions[0] ?? 0;
  const threeFry = algorithm === "THREE_FRY";
  if (state.elementType !== "u64" || state.dimensions.length !== 1 || stateWords !== 2 && (threeFry || stateWords !== 3)) {
    return { declined: `webgpu rng-bit-generator: ${algorithm} with a state other than u64[2]${threeFry ? "" : " or u64[3]"}` };
  }
  if (tooLarge([shape])) return { declined: "webgpu rng-bit-generator: a result of 2 GiB or more" };
  const dims = shape.dimensions;
  const count = elementCount(dims);
  const info = ELEMENT_TYPES[shape.elementType];
  if (info.kind === "complex") return { declined: `webgpu rng-bit-generator: ${shape.elementType} bits` };
  const wide = info.bitWidth === 64;
  const generated = threeFry ? threeFryBody(dims, wide) : philoxBody(count, wide, stateWords);
  const functions = threeFry ? THREEFRY_WGSL : PHILOX_WGSL;
  const state0 = ["  let st = args[0u] >> 2u;", "  let key0 = mem[st];", "  let key1 = mem[st + 1u];", ...generated.state];
  const writeState = ["  if (i == 0u) {", ...generated.advance.map((st) => `  ${st}`), "    let next = args[1u] >> 2u;", "    mem[next] = key0;", "    mem[next + 1u] = key1;",
    ...generated.nextCounter.map((w, k) => `    mem[next + ${u(2 + k)}] = ${w};`), "  }"];
  // An empty result encrypts no block: the new state is the old one (the counter
  // advanced by zero blocks, as the interpreter's), written by a kernel of one invocation
  // (the element kernels' invocation 0 would not exist), so the state stays on the GPU.
  if (count === 0) return elementKernel(arrayShape("u32", [1]), 2, functions, [...state0, ...writeState], maxWorkgroupsPerDimension);
  const out = "(args[2u] >> 2u)";
  if (info.storageBytes >= 4) {
    const store = wide ? [`  mem[${out} + 2u * i] = x64.x;`, `  mem[${out} + 2u * i + 1u] = x64.y;`] : [`  mem[${out} + i] = ${generated.value};`];
    return elementKernel(shape, 2, functions, [...state0, ...generated.element, ...store, ...writeState], maxWorkgroupsPerDimension);
  }
  // Narrow elements: the 32-bit value of element e (its multi-index split as the element kernel splits i), packed a word an invocation.
  const bytes = info.storageBytes;
  const perWord = 4 / bytes;
  const bits = info.bitWidth;
  const signedSubByte = info.kind === "signed" && bits < 8;
  const element = ["fn elementBits(i: u32) -> u32 {", ...splitIndex(dims), ...state0, ...generated.element, `  return ${generated.value};`, "}"].join("\n");
  // The bits the interpreter stores: the low `bits`, sign-extended to the byte for a signed sub-byte type.
  const cut = signedSubByte ? `(u32((bitcast<i32>(v << ${u(32 - bits)}) >> ${u(32 - bits)})) & 0xffu)` : `(v & ${u(2 ** bits - 1)})`;
  return elementKernel(arrayShape("u32", [Math.ceil(count / perWord)]), 2, `${functions}\n${element}`, [
    ...state0,
    "  var word = 0u;",
    `  for (var k = 0u; k < ${u(perWord)}; k = k + 1u) {`,
    `    let e = i * ${u(perWord)} + k;`,
    `    if (e < ${u(count)}) {`,
    "      let v = elementBits(e);",
    `      word = word | (${cut} << (k * ${u(8 * bytes)}));`,
    "    }",
    "  }",
    `  mem[${out} + i] = word;`,
    ...writeState,
  ], maxWorkgroupsPerDimension);
}

/**
 * One generator's WGSL given i (and its multi-index o0..), key0, key1 and st (the
 * state's word offset): `state` loads the counter, `element` computes element i's block
 * and `value` is its 32-bit value (x64, a vec2 of the low and high words, for 64-bit
 * elements); `advance` sets the new counter's words, `nextCounter`.
 */
interface RngBody {
  readonly state: readonly string[];
  readonly element: readonly string[];
  readonly value: string;
  readonly advance: readonly string[];
  readonly nextCounter: readonly string[];
}

function threeFryBody(dims: readonly number[], wide: boolean): RngBody {
  let blockOf: string, blocks: number, value: string;
  if (wide) {
    blockOf = "i";
    blocks = elementCount(dims);
    value = "";
  } else {
    let split = dims.findIndex((d) => d % 2 === 0);
    if (split < 0) split = dims.reduce((best, d, k) => (d > dims[best]! ? k : best), 0);
    const half = dims.map((d, k) => (k === split ? Math.ceil(d / 2) : d));
    blocks = elementCount(half);
    const halfStrides = rowMajorStrides(half);
    blockOf = dims.map((_, d) => `${d === split ? `(o${d} / 2u)` : `o${d}`} * ${u(halfStrides[d]!)}`).join(" + ") || "0u";
    value = dims.length === 0 ? "x.x" : `select(x.x, x.y, o${split} % 2u == 1u)`;
  }
  return {
    state: ["  let ctr0 = mem[st + 2u];", "  let ctr1 = mem[st + 3u];"],
    element: [
      `  let block = ${blockOf};`,
      // counter + block, 64-bit, carried into the high word.
      "  let c0 = ctr0 + block;",
      "  let x = threefry(c0, ctr1 + select(0u, 1u, c0 < ctr0), key0, key1);",
      ...(wide ? ["  let x64 = x;"] : []),
    ],
    value,
    advance: [`  let n0 = ctr0 + ${u(blocks)};`],
    nextCounter: ["n0", "ctr1 + select(0u, 1u, n0 < ctr0)"],
  };
}

function philoxBody(count: number, wide: boolean, stateWords: number): RngBody {
  const perBlock = wide ? 2 : 4;
  return {
    // The counter's high half is state[2] in a u64[3] state, the key in a u64[2] one.
    state: [`  let counter = vec4<u32>(mem[st + 2u], mem[st + 3u], mem[st + ${stateWords === 3 ? "4u" : "0u"}], mem[st + ${stateWords === 3 ? "5u" : "1u"}]);`],
    element: [
      `  let x = philox(add128(counter, i / ${u(perBlock)}), key0, key1);`,
      ...(wide ? ["  let h = (i % 2u) * 2u;", "  let x64 = vec2<u32>(x[h], x[h + 1u]);"] : []),
    ],
    value: "x[i % 4u]",
    advance: [`  let advanced = add128(counter, ${u(Math.ceil(count / perBlock))});`],
    // A u64[2] state gets the new counter's low half only.
    nextCounter: stateWords === 3 ? ["advanced.x", "advanced.y", "advanced.z", "advanced.w"] : ["advanced.x", "advanced.y"],
  };
}
