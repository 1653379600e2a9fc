// Convolution kernels in WGSL, as an implicit GEMM: the tiled product of
// gemm_tiles_wgsl.ts with the im2col matrix never built. For feature group g, the
// product's rows are the output pixels (batch, then the output's spatial positions),
// its columns the group's output features, and its depth the window positions times the
// group's input features (input feature fastest); the tile loads of A gather each
// patch element straight from the input (zero where the window falls on padding or
// between the holes of a base dilation), the loads of B read the kernel in place.
//
// Any layout: the geometry keeps an element stride for every dimension of the input,
// kernel and output, so NHWC, NCHW, HWIO, OIHW and the rest are one kernel; any number
// of spatial dimensions; window strides, low/high padding (negative too), base and
// window dilation, window reversal, feature groups. Batch groups are declined.
// Accumulation in f32 as in the tiled GEMM, over the depth in order (window positions
// in the kernel's spatial order, input features fastest). Types as for the GEMM
// (gemm_tiles_wgsl.ts productStorage): floats summed in f32, an f32, f16 or bf16 result
// (a half rounded once from the f32 sum); integers summed in i32, wrapping. A result
// narrower than a word is stored by vec4s or pairs of output features where they are
// innermost (see convKernel), else element by element on an atomic memory.

import type { Instruction } from "../../ir/computation.js";
import { rowMajorStrides } from "../../types/index_util.js";
import { type ArrayShape, elementCount } from "../../types/shape.js";
import type { ConvGeometry } from "../kernel/conv_plan.js";
import type { Declined } from "../kernel/declined.js";
import { DEFAULT_SLOTS, type GpuEpilogue } from "./gemm_wgsl.js";
import type { ArgumentSlots } from "./epilogue_wgsl.js";
import { storageBytes } from "../../types/element_type.js";
import {
  defaultTile, deviceMemoryDeclarations, operandAccess, productStorage, productValue, renderTiledProduct, resultAccess, storageHelpers, type GemmTile, type GpuBinding,
  type GpuKernel, type GpuLimits, type KernelChoice, type KernelMemory, type StorageType, type TileOperand, type TileStaging,
} from "./gemm_tiles_wgsl.js";

/** A convolution as the WGSL kernel sees it; every stride in elements of its operand's buffer. */
export interface ConvWgslGeometry {
  /** How input, kernel and output are stored (f16, bf16: packed pairs, as for the GEMM). */
  readonly inputType: StorageType;
  readonly kernelType: StorageType;
  readonly outputType: StorageType;
  readonly batch: number;
  readonly inputFeatures: number;
  readonly outputFeatures: number;
  readonly featureGroups: number;
  /** Per spatial dimension, in the convolution's spatial order (dimension numbers' order). */
  readonly inputSizes: readonly number[];
  readonly kernelSizes: readonly number[];
  readonly outputSizes: readonly number[];
  readonly windowStrides: readonly number[];
  readonly padLow: readonly number[];
  readonly baseDilation: readonly number[];
  readonly windowDilation: readonly number[];
  readonly windowReversal: readonly boolean[];
  readonly input: { readonly batch: number; readonly feature: number; readonly spatial: readonly number[] };
  readonly kernel: { readonly inputFeature: number; readonly outputFeature: number; readonly spatial: readonly number[] };
  readonly output: { readonly batch: number; readonly feature: number; readonly spatial: readonly number[] };
}

/** The geometry of a convolution instruction (any dimension numbers, dense row-major operands), or why the kernel declines it. */
export function convWgslGeometry(conv: Instruction<"convolution">): ConvWgslGeometry | Declined {
  const [lhs, rhs] = conv.operands;
  if (lhs === undefined || rhs === undefined || lhs.shape.kind !== "array" || rhs.shape.kind !== "array" || conv.shape.kind !== "array") {
    return { declined: "webgpu convolution: operands and result must be arrays" };
  }
  const input = lhs.shape as ArrayShape, kernel = rhs.shape as ArrayShape, output = conv.shape as ArrayShape;
  const { featureGroupCount, batchGroupCount, window } = conv.attrs;
  const storage = productStorage([input.elementType, kernel.elementType, output.elementType]);
  if ("declined" in storage) return { declined: `webgpu convolution ${conv.name}: ${storage.declined}` };
  const [inputType, kernelType, outputType] = storage.types as [StorageType, StorageType, StorageType];
  if (batchGroupCount !== 1) return { declined: `webgpu convolution ${conv.name}: batch_group_count ${batchGroupCount} (only 1 is compiled)` };
  const dn = conv.attrs.dimensionNumbers;
  const is = rowMajorStrides(input.dimensions), ks = rowMajorStrides(kernel.dimensions), os = rowMajorStrides(output.dimensions);
  return {
    inputType,
    kernelType,
    outputType,
    batch: input.dimensions[dn.inputBatchDimension]!,
    inputFeatures: input.dimensions[dn.inputFeatureDimension]!,
    outputFeatures: kernel.dimensions[dn.kernelOutputFeatureDimension]!,
    featureGroups: featureGroupCount,
    inputSizes: dn.inputSpatialDimensions.map((d) => input.dimensions[d]!),
    kernelSizes: dn.kernelSpatialDimensions.map((d) => kernel.dimensions[d]!),
    outputSizes: dn.outputSpatialDimensions.map((d) => output.dimensions[d]!),
    windowStrides: window.map((w) => w.stride),
    padLow: window.map((w) => w.paddingLow),
    baseDilation: window.map((w) => w.baseDilation),
    windowDilation: window.map((w) => w.windowDilation),
    windowReversal: window.map((w) => w.windowReversal),
    input: { batch: is[dn.inputBatchDimension]!, feature: is[dn.inputFeatureDimension]!, spatial: dn.inputSpatialDimensions.map((d) => is[d]!) },
    kernel: { inputFeature: ks[dn.kernelInputFeatureDimension]!, outputFeature: ks[dn.kernelOutputFeatureDimension]!, spatial: dn.kernelSpatialDimensions.map((d) => ks[d]!) },
    output: { batch: os[dn.outputBatchDimension]!, feature: os[dn.outputFeatureDimension]!, spatial: dn.outputSpatialDimensions.map((d) => os[d]!) },
  };
}

/** The same convolution described by the CPU backends' plan (kernel/conv_plan.ts: features innermost, one group). */
export function convWgslGeometryOfPlan(g: ConvGeometry): ConvWgslGeometry | Declined {
  if (g.type !== "f32") return { declined: `webgpu convolution: ${g.type} (WGSL has no f64)` };
  const spatialOfKernel = [0, 0];
  g.kernelSpatial.forEach((spatial, memoryPosition) => { spatialOfKernel[spatial] = memoryPosition; });
  const kernelStrides = rowMajorStrides([g.kernelSizes[0], g.kernelSizes[1], g.c, g.o]);
  const outputStrides = rowMajorStrides([g.outputSizes[0], g.outputSizes[1], g.outputSizes[2], g.o]);
  const outPosition = (role: number): number => g.outputRoles.indexOf(role);
  return {
    inputType: "f32",
    kernelType: "f32",
    outputType: "f32",
    batch: g.outputSizes[outPosition(0)]!,
    inputFeatures: g.c,
    outputFeatures: g.o,
    featureGroups: 1,
    inputSizes: [g.inputSizes[0], g.inputSizes[1]],
    kernelSizes: [g.kernelSizes[spatialOfKernel[0]!]!, g.kernelSizes[spatialOfKernel[1]!]!],
    outputSizes: [g.outputSizes[outPosition(1)]!, g.outputSizes[outPosition(2)]!],
    windowStrides: g.stride,
    padLow: g.padLow,
    baseDilation: [1, 1],
    windowDilation: g.dilation,
    windowReversal: [false, false],
    input: { batch: g.inputStrides[0], feature: 1, spatial: [g.inputStrides[1], g.inputStrides[2]] },
    kernel: { inputFeature: kernelStrides[2]!, outputFeature: 1, spatial: [kernelStrides[spatialOfKernel[0]!]!, kernelStrides[spatialOfKernel[1]!]!] },
    output: { batch: outputStrides[outPosition(0)]!, feature: 1, spatial: [outputStrides[outPosition(1)]!, outputStrides[outPosition(2)]!] },
  };
}

/** Why the kernel cannot take a geometry (malformed or too large for WGSL's u32/i32 indices), or undefined. */
export function convWgslProblem(g: ConvWgslGeometry): string | undefined {
  const rank = g.inputSizes.length;
  const perDim = [g.kernelSizes, g.outputSizes, g.windowStrides, g.padLow, g.baseDilation, g.windowDilation, g.windowReversal, g.input.spatial, g.kernel.spatial, g.output.spatial];
  if (perDim.some((xs) => xs.length !== rank)) return "webgpu convolution: every spatial attribute needs one entry per spatial dimension";
  const G = g.featureGroups;
  if (!Number.isInteger(G) || G < 1 || g.inputFeatures % G !== 0 || g.outputFeatures % G !== 0) {
    return `webgpu convolution: feature_group_count ${G} must divide the input features ${g.inputFeatures} and output features ${g.outputFeatures}`;
  }
  if ([g.windowStrides, g.baseDilation, g.windowDilation].some((xs) => xs.some((x) => !Number.isInteger(x) || x < 1))) return "webgpu convolution: strides and dilations must be positive integers";
  if (maxElement(g, "input") >= 2 ** 31 || maxElement(g, "kernel") >= 2 ** 31 || maxElement(g, "output") >= 2 ** 31) return "webgpu convolution: an operand past 2^31 elements";
  return undefined;
}

/** The highest element index an operand spans (+1: its element count, dense or strided). */
function maxElement(g: ConvWgslGeometry, which: "input" | "kernel" | "output"): number {
  const span = (extents: readonly number[], strides: readonly number[]): number => extents.reduce((s, e, i) => s + Math.max(0, e - 1) * strides[i]!, 0) + 1;
  if (which === "input") return span([g.batch, g.inputFeatures, ...g.inputSizes], [g.input.batch, g.input.feature, ...g.input.spatial]);
  if (which === "kernel") return span([g.inputFeatures / g.featureGroups, g.outputFeatures, ...g.kernelSizes], [g.kernel.inputFeature, g.kernel.outputFeature, ...g.kernel.spatial]);
  return span([g.batch, g.outputFeatures, ...g.outputSizes], [g.output.batch, g.output.feature, ...g.output.spatial]);
}

export interface ConvWgslOptions {
  readonly tile?: GemmTile;
  /** As for the GEMM: how the default tile stages its operands (default "workgroup"). */
  readonly staging?: TileStaging;
  readonly vectorLoads?: boolean;
  /** As for the GEMM; the site's row is the output pixel (batch, then spatial positions), col the output feature, index the element's offset in `out`. */
  readonly epilogue?: GpuEpilogue;
  /** As for the GEMM (default "bindings"). */
  readonly memory?: KernelMemory;
  /** As for the GEMM: with memory "device", the argument slots of the input, the kernel and the output. */
  readonly slots?: ArgumentSlots;
}

const u = (x: number): string => `${x}u`;
const i = (x: number): string => `${x}i`;

/** WGSL statements splitting `k` into the input feature `c` and window positions w0..: the depth's order (window in kernel order, feature fastest). */
function splitDepth(g: ConvWgslGeometry, cg: number): string {
  const lines = [`let c = k % ${u(cg)};`, `var rest = k / ${u(cg)};`];
  for (let d = g.kernelSizes.length - 1; d >= 0; d--) {
    lines.push(`let w${d} = rest % ${u(g.kernelSizes[d]!)};`);
    if (d > 0) lines.push(`rest = rest / ${u(g.kernelSizes[d]!)};`);
  }
  return lines.join(" ");
}

/** The convolution kernel for a geometry (from convWgslGeometry or convWgslGeometryOfPlan), or why none. */
export function convKernel(g: ConvWgslGeometry, limits: GpuLimits, options: ConvWgslOptions = {}): GpuKernel | Declined {
  const problem = convWgslProblem(g);
  if (problem !== undefined) return { declined: problem };
  const rank = g.inputSizes.length;
  const G = g.featureGroups;
  const cg = g.inputFeatures / G, og = g.outputFeatures / G;
  const pixels = g.batch * elementCount(g.outputSizes);
  const depth = cg * elementCount(g.kernelSizes);
  const { inputType, kernelType, outputType } = g;
  const storage = productStorage([inputType, kernelType, outputType]);
  if ("declined" in storage) return { declined: `webgpu convolution: ${storage.declined}` };
  const accumulator = storage.accumulator;
  const allowVectors = options.vectorLoads ?? true;
  const multipleOf4 = (xs: readonly number[]): boolean => xs.every((x) => x % 4 === 0);
  // Vectors of 4 input features (k fastest) when features are the input's unit-stride
  // dimension, each group's features come in fours, and every other stride keeps a
  // patch row's start aligned.
  const inputVectors = allowVectors && g.input.feature === 1 && cg % 4 === 0 && multipleOf4([g.input.batch, ...g.input.spatial]);
  const kernelVectors = allowVectors && g.kernel.outputFeature === 1 && og % 4 === 0 && multipleOf4([g.kernel.inputFeature, ...g.kernel.spatial]);
  const memory = options.memory ?? "bindings";
  const slots = options.slots ?? DEFAULT_SLOTS;
  const epilogue = options.epilogue;
  // Stored by vec4s of output features where they are unit-stride, a multiple of 4 per group, and every other stride keeps the vec4s aligned.
  const outVectors = epilogue === undefined && g.output.feature === 1 && og % 4 === 0 && multipleOf4([g.output.batch, ...g.output.spatial]);
  // A 2-byte result, else, by pairs of output features: each word of the output two features of one pixel.
  const bytes = storageBytes(outputType);
  const outPairs = bytes === 2 && epilogue === undefined && g.output.feature === 1 && og % 2 === 0 && [g.output.batch, ...g.output.spatial].every((x) => x % 2 === 0);
  // Else a result narrower than a word element by element, through byte stores on an atomic memory.
  const atomic = epilogue !== undefined ? epilogue.storesBytes === true : bytes < 4 && !outVectors && !outPairs;
  if (atomic && memory !== "device") {
    return { declined: `webgpu convolution: the ${outputType} output would be stored element by element, which needs memory "device" (its words atomic)` };
  }
  const x = operandAccess("lhs", slots.lhs, inputType, inputVectors, memory, accumulator, atomic);
  const w = operandAccess("rhs", slots.rhs, kernelType, kernelVectors, memory, accumulator, atomic);
  const result = resultAccess(outputType, outVectors, memory, slots.out, atomic);
  const outBytes = result.byteSize(maxElement(g, "output"));

  // gatherPatch(p, k, g): the im2col element; its position in the input, or none (padding, holes).
  const pixelSplit: string[] = [];
  pixelSplit.push("var pr = p;");
  for (let d = rank - 1; d >= 0; d--) pixelSplit.push(`let o${d} = pr % ${u(g.outputSizes[d]!)}; pr = pr / ${u(g.outputSizes[d]!)};`);
  const position: string[] = [`var at = pr * ${u(g.input.batch)} + (grp * ${u(cg)} + c) * ${u(g.input.feature)};`];
  for (let d = 0; d < rank; d++) {
    const wd = g.windowReversal[d] ? `(${u(g.kernelSizes[d]! - 1)} - w${d})` : `w${d}`;
    position.push(`let s${d} = i32(o${d} * ${u(g.windowStrides[d]!)} + ${wd} * ${u(g.windowDilation[d]!)}) - ${i(g.padLow[d]!)};`);
    const base = g.baseDilation[d]!;
    if (base === 1) {
      position.push(`if (s${d} < 0i || s${d} >= ${i(g.inputSizes[d]!)}) { return none; }`);
      position.push(`at = at + u32(s${d}) * ${u(g.input.spatial[d]!)};`);
    } else {
      // The dilated input has its elements at multiples of `base`, holes (zeros) between them.
      position.push(`if (s${d} < 0i || s${d} % ${i(base)} != 0i || s${d} / ${i(base)} >= ${i(g.inputSizes[d]!)}) { return none; }`);
      position.push(`at = at + u32(s${d} / ${i(base)}) * ${u(g.input.spatial[d]!)};`);
    }
  }
  const patchFn = (name: string, type: string, read: string): string =>
    `fn ${name}(p: u32, k: u32, grp: u32) -> ${type} {\n  let none = ${type}();\n  ${splitDepth(g, cg)}\n  ${pixelSplit.join(" ")}\n  ${position.join("\n  ")}\n  return ${read};\n}`;
  const weightAt = (): string => {
    const terms = [`c * ${u(g.kernel.inputFeature)}`, `(grp * ${u(og)} + j) * ${u(g.kernel.outputFeature)}`];
    for (let d = 0; d < rank; d++) terms.push(`w${d} * ${u(g.kernel.spatial[d]!)}`);
    return terms.join(" + ");
  };
  const weightFn = (name: string, type: string, read: (at: string) => string): string =>
    `fn ${name}(j: u32, k: u32, grp: u32) -> ${type} {\n  ${splitDepth(g, cg)}\n  return ${read(weightAt())};\n}`;
  const functions = [patchFn("gatherPatch", accumulator, x.scalar("at")), weightFn("kernelAt", accumulator, w.scalar)];
  if (inputVectors) functions.push(patchFn("gatherPatch4", `vec4<${accumulator}>`, x.vector("at")));
  if (kernelVectors) functions.push(weightFn("kernelAt4", `vec4<${accumulator}>`, w.vector));

  const outIndex = (row: string, col: string, z: string): string => {
    const split: string[] = [];
    let rest = row;
    const terms: string[] = [];
    for (let d = rank - 1; d >= 0; d--) {
      terms.push(`((${rest}) % ${u(g.outputSizes[d]!)}) * ${u(g.output.spatial[d]!)}`);
      rest = `(${rest}) / ${u(g.outputSizes[d]!)}`;
    }
    split.push(`${rest} * ${u(g.output.batch)}`);
    return `(${split.concat(terms).join(" + ")} + (${z} * ${u(og)} + ${col}) * ${u(g.output.feature)})`;
  };
  const store = (value: string, row: string, col: string, z: string): string => {
    const index = outIndex(row, col, z);
    return epilogue !== undefined ? epilogue.store({ value: productValue(outputType, value), row, col: `(${z} * ${u(og)} + ${col})`, index }) : result.store(index, value);
  };
  const storeVector = !outVectors ? undefined : (value: string, row: string, col: string, z: string) => result.storeVector(outIndex(row, col, z), value);
  const storePair = !outPairs ? undefined : (value: string, row: string, col: string, z: string) => result.storePair(outIndex(row, col, z), value);

  const a: TileOperand = { scalar: (p, k, z) => `gatherPatch(${p}, ${k}, ${z})`, contiguous: g.input.feature === 1 ? "k" : "outer", ...(inputVectors ? { vector: (p: string, k: string, z: string) => `gatherPatch4(${p}, ${k}, ${z})` } : {}) };
  const b: TileOperand = { scalar: (j, k, z) => `kernelAt(${j}, ${k}, ${z})`, contiguous: g.kernel.outputFeature === 1 ? "outer" : "k", ...(kernelVectors ? { vector: (j: string, k: string, z: string) => `kernelAt4(${j}, ${k}, ${z})` } : {}) };
  const bindings: GpuBinding[] = [
    { binding: 0, name: "lhs", role: "lhs", access: "read", byteSize: x.byteSize(maxElement(g, "input")) },
    { binding: 1, name: "rhs", role: "rhs", access: "read", byteSize: w.byteSize(maxElement(g, "kernel")) },
    { binding: 2, name: "out", role: "output", access: "read_write", byteSize: outBytes },
  ];
  for (const extra of epilogue?.bindings ?? []) bindings.push(extra);
  for (const bd of bindings) {
    if (bd.byteSize > limits.maxStorageBufferBindingSize) return { declined: `webgpu convolution: binding ${bd.name} (${bd.byteSize} bytes) exceeds maxStorageBufferBindingSize ${limits.maxStorageBufferBindingSize}` };
  }
  const declarations = [memory === "device" ? deviceMemoryDeclarations(atomic) : "", storageHelpers([inputType, kernelType], epilogue?.declarations, outputType), x.declaration, w.declaration, epilogue === undefined || memory === "bindings" ? result.declaration : "", epilogue?.declarations ?? "", functions.join("\n")].filter((s) => s !== "").join("\n");
  const tile = options.tile ?? defaultTile(G, pixels, og, limits, options.staging);
  if ("declined" in tile) return tile;
  const rendered = renderTiledProduct(
    { count: G, rows: pixels, cols: og, depth, declarations, accumulator, a, b, store, ...(storeVector !== undefined ? { storeVector } : {}), ...(storePair !== undefined ? { storePair } : {}) },
    tile, limits, inputVectors, kernelVectors,
  );
  if ("declined" in rendered) return rendered;
  const choice: KernelChoice = { kind: "tiled", tile, tileFrom: options.tile !== undefined ? "options" : "limits", vectorLoads: { lhs: inputVectors, rhs: kernelVectors } };
  return { code: rendered.code, entryPoint: "main", workgroupSize: [tile.threadsX, tile.threadsY, 1], dispatch: rendered.dispatch, bindings, choice, flops: 2 * G * pixels * og * depth };
}
