// Convolution schedules, backend-neutral: which convolutions the kernels take
// (convGeometry) and how a kernel computes one (ConvSchedule). Both backends compute a
// 2-D convolution as im2col + GEMM: for each block of output pixels, the patches of the
// input they read become the rows of a matrix in scratch (zeros where the window hangs
// over the padding), and the GEMM microkernel multiplies it by the kernel seen as a
// [KH*KW*C][O] matrix, the pixels being the product's rows and the output features its
// columns. planConv decides the pixel block, the GEMM tiling and the blocking once, from
// the target's GemmTarget; wasm/conv.ts and native/conv_c.ts render it.
//
// Handled: feature dimensions innermost (input [.., C], kernel [.., .., C, O] with the
// two spatial dimensions first in either order, output [.., O]; the batch and spatial
// dimensions of input and output in any order), any strides, padding and window
// dilation; base (lhs) dilation, window reversal and feature or batch groups are not.
//
// Accumulation: in the element type, over the kernel's memory order (spatial, then input
// feature), in blocks of kc (one block while the kernel matrix fits in L2).

import type { Instruction } from "../../ir/computation.js";
import { roundUp, rowMajorStrides } from "../../types/index_util.js";
import type { ArrayShape } from "../../types/shape.js";
import type { Declined } from "./declined.js";
import {
  depthBlock, gemmElementBytes, gemmTiling, l2BlockBytes, productFitsOneBlock, targetCaches, vectorLanes, type GemmElement, type GemmTarget, type GemmTiling,
} from "./gemm_plan.js";

/** The geometry of a supported convolution, in elements. */
export interface ConvGeometry {
  readonly type: GemmElement;
  readonly c: number;
  readonly o: number;
  /** Input strides of the batch, spatial 0 and spatial 1 dimensions. */
  readonly inputStrides: readonly [number, number, number];
  readonly inputSizes: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly padLow: readonly [number, number];
  readonly dilation: readonly [number, number];
  /** The kernel's two leading (spatial) dimensions in memory order: sizes and which spatial dimension each is. */
  readonly kernelSizes: readonly [number, number];
  readonly kernelSpatial: readonly [number, number];
  /** The output's three leading dimensions in memory order: sizes and what each is (0 batch, 1 and 2 spatial). */
  readonly outputSizes: readonly [number, number, number];
  readonly outputRoles: readonly [number, number, number];
}

export function convGeometry(conv: Instruction<"convolution">): ConvGeometry | Declined {
  const [lhs, rhs] = conv.operands;
  if (lhs === undefined || rhs === undefined || lhs.shape.kind !== "array" || rhs.shape.kind !== "array" || conv.shape.kind !== "array") {
    return { declined: "convolution: operands and result must be arrays" };
  }
  const input = lhs.shape as ArrayShape, kernel = rhs.shape as ArrayShape, output = conv.shape as ArrayShape;
  const type = output.elementType;
  if ((type !== "f32" && type !== "f64") || input.elementType !== type || kernel.elementType !== type) {
    return { declined: "convolution: only f32 or f64 (input, kernel and output of one type)" };
  }
  const { featureGroupCount, batchGroupCount, window } = conv.attrs;
  if (featureGroupCount !== 1 || batchGroupCount !== 1) return { declined: "convolution: feature or batch groups" };
  const dn = conv.attrs.dimensionNumbers;
  if (input.dimensions.length !== 4 || window.length !== 2) return { declined: "convolution: only 2 spatial dimensions" };
  if (window.some((w) => w.baseDilation !== 1 || w.windowReversal)) return { declined: "convolution: base dilation or window reversal" };
  if (dn.inputFeatureDimension !== 3 || dn.kernelInputFeatureDimension !== 2 || dn.kernelOutputFeatureDimension !== 3 || dn.outputFeatureDimension !== 3) {
    return { declined: "convolution: feature dimensions must be innermost (NHWC / HWIO / NHWC)" };
  }
  const is = rowMajorStrides(input.dimensions);
  const [s0, s1] = dn.inputSpatialDimensions as [number, number];
  const [k0, k1] = dn.kernelSpatialDimensions as [number, number];
  const [o0, o1] = dn.outputSpatialDimensions as [number, number];
  const role = (d: number): number => (d === dn.outputBatchDimension ? 0 : d === o0 ? 1 : d === o1 ? 2 : -1);
  return {
    type,
    c: input.dimensions[3]!,
    o: kernel.dimensions[3]!,
    inputStrides: [is[dn.inputBatchDimension]!, is[s0]!, is[s1]!],
    inputSizes: [input.dimensions[s0]!, input.dimensions[s1]!],
    stride: [window[0]!.stride, window[1]!.stride],
    padLow: [window[0]!.paddingLow, window[1]!.paddingLow],
    dilation: [window[0]!.windowDilation, window[1]!.windowDilation],
    kernelSizes: [kernel.dimensions[0]!, kernel.dimensions[1]!],
    kernelSpatial: k0 === 0 && k1 === 1 ? [0, 1] : [1, 0],
    outputSizes: [output.dimensions[0]!, output.dimensions[1]!, output.dimensions[2]!],
    outputRoles: [role(0), role(1), role(2)],
  };
}

/** Output pixels of a geometry (the product's rows). */
export const convPixels = (g: ConvGeometry): number => g.outputSizes[0] * g.outputSizes[1] * g.outputSizes[2];

/** Depth of the kernel matrix, KH*KW*C (the product's k). */
export const convDepth = (g: ConvGeometry): number => g.kernelSizes[0] * g.kernelSizes[1] * g.c;

/** A window position of a patch row: its input offset from the window's corner and the patch column its input features start at. */
export interface ConvWindowPosition {
  /** Offsets in the input's spatial dimensions 0 and 1, dilated. */
  readonly dy: number;
  readonly dx: number;
  readonly column: number;
}

/**
 * The window's positions in the order of a patch row: the kernel's memory order (its two
 * spatial dimensions, then the C input features of each), so that the patch matrix's
 * columns meet the rows of the kernel seen as a [KH*KW*C][O] matrix.
 */
export function convWindowPositions(g: ConvGeometry): ConvWindowPosition[] {
  const positions: ConvWindowPosition[] = [];
  for (let a = 0; a < g.kernelSizes[0]; a++) {
    for (let b = 0; b < g.kernelSizes[1]; b++) {
      const offsets = [0, 0];
      offsets[g.kernelSpatial[0]] = a;
      offsets[g.kernelSpatial[1]] = b;
      positions.push({ dy: offsets[0]! * g.dilation[0], dx: offsets[1]! * g.dilation[1], column: (a * g.kernelSizes[1] + b) * g.c });
    }
  }
  return positions;
}

/** How a convolution kernel computes its geometry (im2col + GEMM); sizes in elements. */
export interface ConvSchedule {
  readonly geometry: ConvGeometry;
  readonly pixels: number;
  /** KH*KW*C: the depth of the product. */
  readonly kDepth: number;
  /** Output pixels per unit of work, per fill of the patch buffer. */
  readonly pixelBlock: number;
  /** Elements from one row of the patch matrix to the next (kDepth, or padded so that rows align alike). */
  readonly patchRow: number;
  /** The GEMM's tile and blocking (kc: the whole depth while the kernel matrix fits in L2). */
  readonly tiling: GemmTiling;
  /** Columns of a tile. */
  readonly nr: number;
  /** Units of work: blocks of output pixels. */
  readonly parallelExtent: number;
  readonly costPerUnit: number;
  /** Blocks of k (kernel depth) the output is accumulated over (1: each tile written once). */
  readonly kBlocks: number;
  /** The kernel can keep each block's product in scratch until an epilogue has read it (the depth in one block). */
  readonly productInScratch: boolean;
}

/**
 * The schedule of a geometry (one with a kernel window, convProblem) on a target;
 * `tilingOverride` replaces parts of the target's tiling (probes, tests).
 */
export function planConv(g: ConvGeometry, target: GemmTarget, tilingOverride?: Partial<GemmTiling>): ConvSchedule {
  const es = gemmElementBytes(g.type);
  const pixels = convPixels(g);
  const kDepth = convDepth(g);
  const o = g.o;
  const lanes = vectorLanes(target, g.type);
  if (target.blocking === "row-panels") {
    // 64 pixels a block; the GEMM's tiling for a 64-row product, the whole depth in one
    // block while the kernel matrix fits in L2 (no reloads of the output).
    const pixelBlock = 64;
    const base = gemmTiling({ elementType: g.type, batch: 1, m: Math.min(pixels, pixelBlock), n: o, k: kDepth }, target);
    const planned = { ...base, kc: kDepth * o * es <= l2BlockBytes(targetCaches(target)) ? Math.max(kDepth, 1) : base.kc };
    const tiling = { ...planned, ...tilingOverride };
    return {
      geometry: g, pixels, kDepth, pixelBlock, patchRow: kDepth, tiling, nr: tiling.nrVectors * lanes,
      parallelExtent: Math.ceil(pixels / pixelBlock),
      costPerUnit: 2 * pixelBlock * kDepth * o,
      kBlocks: Math.max(1, Math.ceil(kDepth / planned.kc)),
      productInScratch: productFitsOneBlock(kDepth, planned.kc),
    };
  }
  // About 64 pixels a block, whole tiles; the kernel matrix packed in nc-column blocks of
  // L2 (the whole depth while it fits); patch rows padded to 16 bytes so that each row's
  // loads align alike.
  const mr = target.tileRows;
  const nr = target.tileVectors * lanes;
  const pixelBlock = mr * Math.max(1, Math.round(64 / mr));
  const caches = targetCaches(target);
  const blockBytes = l2BlockBytes(caches);
  const kc = kDepth * roundUp(o, nr) * es <= blockBytes ? kDepth : Math.max(1, Math.min(kDepth, depthBlock(g.type, caches, nr)));
  const nc = kc === kDepth ? roundUp(o, nr) : roundUp(Math.min(o, Math.floor(blockBytes / (kc * es))), nr);
  const tiling = { mr, nrVectors: target.tileVectors, kc, nc, ...tilingOverride };
  return {
    geometry: g, pixels, kDepth, pixelBlock, patchRow: roundUp(kDepth, 16 / es), tiling, nr,
    parallelExtent: Math.ceil(pixels / pixelBlock),
    costPerUnit: 2 * pixelBlock * kDepth * o,
    kBlocks: Math.ceil(kDepth / kc),
    productInScratch: productFitsOneBlock(kDepth, kc),
  };
}

/** Why no convolution kernel takes a geometry beyond convGeometry's rules (an empty window), or undefined. */
export function convProblem(g: ConvGeometry): string | undefined {
  if (g.c === 0 || g.kernelSizes[0] * g.kernelSizes[1] === 0) return "convolution: empty kernel window";
  return undefined;
}
