// Window arithmetic shared by ReduceWindow, SelectAndScatter and Convolution: how a
// window with strides, padding and dilations slides over a base area, and which base
// element (or padding, or dilation hole) each window position reads.

import type { Window, WindowDimension } from "../attributes.js";
import { UNBOUNDED_SIZE } from "../../types/shape.js";
import type { Opcode } from "../opcodes.js";
import { shapeError } from "./rule.js";

/** Size of a dimension of `size` elements after inserting `dilation - 1` holes between neighbours. */
export function dilatedSize(size: number, dilation: number): number {
  return size === 0 ? 0 : (size - 1) * dilation + 1;
}

/** Number of window positions along one dimension of a base area of `baseSize` elements. */
export function windowOutputSize(baseSize: number, w: WindowDimension): number {
  const padded = dilatedSize(baseSize, w.baseDilation) + w.paddingLow + w.paddingHigh;
  const span = dilatedSize(w.size, w.windowDilation);
  if (padded < span || padded <= 0) return 0;
  return Math.floor((padded - span) / w.stride) + 1;
}

/** Checks a window against the base dimensions and returns the output dimension sizes. */
export function windowOutputDimensions(
  opcode: Opcode, argument: string, baseDims: readonly number[], window: Window,
): number[] {
  if (window.length !== baseDims.length) {
    throw shapeError(opcode, argument, `window has ${window.length} dimension(s) but the operand has rank ${baseDims.length}`);
  }
  return window.map((w, i) => {
    const check = (value: number, name: string, min: number): void => {
      if (!Number.isInteger(value) || value < min) {
        throw shapeError(opcode, argument, `window dimension ${i}: ${name} must be an integer >= ${min}, got ${value}`);
      }
    };
    check(w.size, "size", 0);
    check(w.stride, "stride", 1);
    check(w.windowDilation, "window dilation", 1);
    check(w.baseDilation, "base dilation", 1);
    if (!Number.isInteger(w.paddingLow) || !Number.isInteger(w.paddingHigh)) {
      throw shapeError(opcode, argument, `window dimension ${i}: padding must be integers, got (${w.paddingLow}, ${w.paddingHigh})`);
    }
    // A `?` base dimension gives a `?` output dimension (its size is known only at run time).
    if (baseDims[i] === UNBOUNDED_SIZE) return UNBOUNDED_SIZE;
    const padded = dilatedSize(baseDims[i]!, w.baseDilation) + w.paddingLow + w.paddingHigh;
    if (padded < 0) {
      throw shapeError(opcode, argument,
        `window dimension ${i}: padding (${w.paddingLow}, ${w.paddingHigh}) removes more than the ${baseDims[i]} element(s) of the base`);
    }
    return windowOutputSize(baseDims[i]!, w);
  });
}

/**
 * The base index read by window element `windowIndex` of the window at output position
 * `outputIndex` along one dimension: a non-negative index into the base, or -1 when the
 * position falls into padding or into a hole left by base dilation.
 */
export function baseIndexOf(outputIndex: number, windowIndex: number, w: WindowDimension, baseSize: number): number {
  const k = w.windowReversal ? w.size - 1 - windowIndex : windowIndex;
  const pos = outputIndex * w.stride + k * w.windowDilation - w.paddingLow;
  if (pos < 0 || pos % w.baseDilation !== 0) return -1;
  const base = pos / w.baseDilation;
  return base < baseSize ? base : -1;
}

/** Padding mode shorthand of the builder ops ("SAME" keeps the size at stride 1). */
export type PaddingMode = "VALID" | "SAME";

/**
 * (low, high) padding of each dimension for a padding mode, as XLA's MakePadding
 * computes it: SAME pads so that the output has ceil(input / stride) elements, putting
 * the odd element of padding at the high end.
 */
export function paddingForMode(
  mode: PaddingMode, baseDims: readonly number[], windowDims: readonly number[], strides: readonly number[],
  windowDilations?: readonly number[],
): [number, number][] {
  return baseDims.map((n, i) => {
    if (mode === "VALID") return [0, 0];
    const span = dilatedSize(windowDims[i]!, windowDilations?.[i] ?? 1);
    const out = Math.ceil(n / strides[i]!);
    const total = Math.max(0, (out - 1) * strides[i]! + span - n);
    const low = Math.floor(total / 2);
    return [low, total - low];
  });
}

/** Builds a Window from per-dimension lists (missing lists mean 1, no padding, no reversal). */
export function makeWindow(options: {
  sizes: readonly number[]; strides?: readonly number[]; padding?: readonly (readonly [number, number])[];
  windowDilations?: readonly number[]; baseDilations?: readonly number[]; windowReversal?: readonly boolean[];
}): Window {
  return options.sizes.map((size, i) => ({
    size,
    stride: options.strides?.[i] ?? 1,
    paddingLow: options.padding?.[i]?.[0] ?? 0,
    paddingHigh: options.padding?.[i]?.[1] ?? 0,
    windowDilation: options.windowDilations?.[i] ?? 1,
    baseDilation: options.baseDilations?.[i] ?? 1,
    windowReversal: options.windowReversal?.[i] ?? false,
  }));
}
