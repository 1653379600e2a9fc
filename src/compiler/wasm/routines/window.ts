// Compiled reduce-window and select-and-scatter (pooling and its gradient).
//
// Both walk a window over the base with the interpreter's arithmetic (src/shape/window.ts
// baseIndexOf): position = out * stride + k * window_dilation - padding_low, a hole when
// it is negative, not a multiple of the base dilation, or past the base. The window is
// visited in row-major order, one loop per window dimension (innermost last), and the
// bookkeeping of a dimension (its position, whether it is inside the base, its part of
// the address) is done once per iteration of its own loop.
//
// reduce-window: acc = init; acc = op(acc, x) for every window position, x = init in
// padding and holes (StableHLO semantics), as the interpreter and XLA's CPU backend do,
// so results are bit-exact. Work: rows of the output.
//
// select-and-scatter: the result starts as init; for each source element (row-major)
// the first in-base window element is the candidate, a later one replaces it when
// select(candidate, later) is false; then result[selected] = scatter(result[selected],
// source). Contributions to one result element are added in source order. Work: the
// leading dimensions whose window is trivial (size 1, stride 1, no padding or dilation)
// map source rows to disjoint result rows, so those are split; the rest is sequential.

import type { Instruction } from "../../../ir/computation.js";
import type { WindowDimension } from "../../../ir/attributes.js";
import type { ElementType } from "../../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { computeType } from "../wasm_types.js";
import {
  type BinaryReducer, binaryReducerOf, comparisonOf, emitBinary, emitCompare, forEachElement, isArithmeticType, loadScalar, rowCount,
  storageBytes, storeScalar,
} from "./common.js";
import { rowMajorStrides } from "../../../types/index_util.js";

interface WindowNest {
  /** Whether the innermost position is inside the base (i32 local, 0/1). */
  readonly valid: number;
  /** Byte offset of the innermost position in the base (i32 local; meaningful when valid). */
  readonly offset: number;
}

/**
 * Emits the loops over a window's positions for the output coordinates `out` (i32
 * locals); `body` runs at each position with the nest's valid/offset locals set.
 */
function emitWindowNest(
  f: FunctionBuilder, window: readonly WindowDimension[], baseDims: readonly number[], elementBytes: number,
  out: readonly number[], body: (nest: WindowNest) => void,
): void {
  const strides = rowMajorStrides(baseDims);
  const rank = window.length;
  const valid = Array.from({ length: rank + 1 }, () => f.local("i32"));
  const offset = Array.from({ length: rank + 1 }, () => f.local("i32"));
  const pos = f.local("i32");
  f.i32Const(1).localSet(valid[0]!);
  f.i32Const(0).localSet(offset[0]!);
  const level = (d: number): void => {
    if (d === rank) {
      body({ valid: valid[rank]!, offset: offset[rank]! });
      return;
    }
    const w = window[d]!;
    const k = f.local("i32");
    const step = (): void => {
      // pos = out * stride + k' * dilation - paddingLow, k' = k (or size - 1 - k when reversed)
      f.localGet(out[d]!).i32Const(w.stride).i32Mul();
      if (w.windowReversal) f.i32Const(w.size - 1).localGet(k).i32Sub();
      else f.localGet(k);
      f.i32Const(w.windowDilation).i32Mul().i32Add().i32Const(w.paddingLow).i32Sub().localSet(pos);
      // valid = outer valid && pos >= 0 && pos % baseDilation == 0 && pos / baseDilation < size
      f.localGet(valid[d]!).localGet(pos).i32Const(0).i32GeS().i32And();
      if (w.baseDilation > 1) {
        f.localGet(pos).i32Const(w.baseDilation).i32RemS().i32Eqz().i32And();
        f.localGet(pos).i32Const(w.baseDilation).i32DivS().localSet(pos);
      }
      f.localGet(pos).i32Const(baseDims[d]!).i32LtS().i32And().localSet(valid[d + 1]!);
      f.localGet(offset[d]!).localGet(pos).i32Const(strides[d]! * elementBytes).i32Mul().i32Add().localSet(offset[d + 1]!);
      level(d + 1);
    };
    if (w.size === 1) {
      f.i32Const(0).localSet(k);
      step();
      return;
    }
    f.i32Const(0).localSet(k);
    f.block().loop();
    f.localGet(k).i32Const(w.size).i32GeU().brIf(1);
    step();
    f.localGet(k).i32Const(1).i32Add().localSet(k);
    f.br(0).end().end();
  };
  level(0);
}

/** The SIMD form of `op` on type t (4 x 32-bit or 2 x 64-bit lanes), when wasm has one with the scalar op's exact semantics. */
function vectorOp(f: FunctionBuilder, op: BinaryReducer, t: ElementType): (() => void) | undefined {
  const table: Partial<Record<ElementType, Partial<Record<BinaryReducer, () => void>>>> = {
    f32: { add: () => f.f32x4Add(), multiply: () => f.f32x4Mul(), maximum: () => f.f32x4Max(), minimum: () => f.f32x4Min() },
    f64: { add: () => f.f64x2Add(), multiply: () => f.f64x2Mul(), maximum: () => f.f64x2Max(), minimum: () => f.f64x2Min() },
    s32: { add: () => f.i32x4Add(), multiply: () => f.i32x4Mul(), maximum: () => f.i32x4MaxS(), minimum: () => f.i32x4MinS() },
    u32: { add: () => f.i32x4Add(), multiply: () => f.i32x4Mul(), maximum: () => f.i32x4MaxU(), minimum: () => f.i32x4MinU() },
    s64: { add: () => f.i64x2Add(), multiply: () => f.i64x2Mul() },
    u64: { add: () => f.i64x2Add(), multiply: () => f.i64x2Mul() },
  };
  return table[t]?.[op];
}

/** Lane masks of compare(a, b) for 4 lanes of 32-bit type t. */
function emitVectorCompare(f: FunctionBuilder, direction: "GE" | "GT" | "LE" | "LT", t: ElementType): void {
  const signed = t === "s32";
  const ops = t === "f32"
    ? { GE: () => f.f32x4Ge(), GT: () => f.f32x4Gt(), LE: () => f.f32x4Le(), LT: () => f.f32x4Lt() }
    : signed
      ? { GE: () => f.i32x4GeS(), GT: () => f.i32x4GtS(), LE: () => f.i32x4LeS(), LT: () => f.i32x4LtS() }
      : { GE: () => f.i32x4GeU(), GT: () => f.i32x4GtU(), LE: () => f.i32x4LeU(), LT: () => f.i32x4LtU() };
  ops[direction]();
}

function splat(f: FunctionBuilder, t: ElementType): void {
  switch (computeType(t)) {
    case "f32": f.f32x4Splat(); return;
    case "f64": f.f64x2Splat(); return;
    case "i32": f.i32x4Splat(); return;
    case "i64": f.i64x2Splat(); return;
  }
}

function checkWindow(window: readonly WindowDimension[], baseDims: readonly number[]): string | undefined {
  for (const w of window) {
    if (w.size < 0 || w.stride < 1 || w.windowDilation < 1 || w.baseDilation < 1) return "window attributes out of range";
    const reach = Math.abs(w.paddingLow) + (w.size + 1) * w.windowDilation + w.stride;
    if (reach > 2 ** 28) return "window too large for 32-bit index arithmetic";
  }
  if (elementCount(baseDims) * 8 >= 2 ** 31) return "base too large for 32-bit offsets";
  return undefined;
}

const isTrivial = (w: WindowDimension): boolean =>
  w.size === 1 && w.stride === 1 && w.paddingLow === 0 && w.paddingHigh === 0 && w.baseDilation === 1 && w.windowDilation === 1 && !w.windowReversal;

/**
 * reduce-window whose last window dimension is trivial (NHWC pooling): the last
 * dimension runs in the base and the output alike, so each output row is reduced
 * vector-wise in place. The row starts as init; each window position (in row-major
 * order, as the scalar path) combines the base row there, or init in padding, into
 * it. Every element sees the same sequence of operands as in the scalar path.
 */
function emitChannelReduceWindow(module: ModuleBuilder, inst: Instruction<"reduceWindow">, op: BinaryReducer, t: ElementType, channels: number): void {
  const input = inst.operands[0]!.shape as ArrayShape;
  const baseDims = input.dimensions;
  const outDims = (inst.shape as ArrayShape).dimensions;
  const rank = outDims.length;
  const es = storageBytes(t);
  const ct = computeType(t);
  const lanes = 16 / es;
  const vectorEnd = Math.floor(channels / lanes) * lanes;
  const window = inst.attrs.window.slice(0, -1);
  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [base, initAt, result, begin, end] = [0, 1, 2, 3, 4];
    const init = f.local(ct);
    const initV = f.local("v128");
    const ta = f.local(ct);
    const tb = f.local(ct);
    const outPtr = f.local("i32");
    const c = f.local("i32");
    const src = f.local("i32");
    const vop = vectorOp(f, op, t)!;
    f.localGet(initAt);
    loadScalar(f, t);
    f.localSet(init);
    f.localGet(init);
    splat(f, t);
    f.localSet(initV);
    // combine(srcVector?) over the row: out[c] = op(out[c], src ? src[c] : init)
    const combineRow = (fromBase: boolean): void => {
      f.i32Const(0).localSet(c);
      f.block().loop();
      f.localGet(c).i32Const(vectorEnd * es).i32GeU().brIf(1);
      f.localGet(outPtr).localGet(c).i32Add();
      f.localGet(outPtr).localGet(c).i32Add().v128Load(0, 1);
      if (fromBase) f.localGet(src).localGet(c).i32Add().v128Load(0, 1);
      else f.localGet(initV);
      vop();
      f.v128Store(0, 1);
      f.localGet(c).i32Const(16).i32Add().localSet(c);
      f.br(0).end().end();
      for (let k = vectorEnd; k < channels; k++) {
        f.localGet(outPtr).i32Const(k * es).i32Add();
        f.localGet(outPtr).i32Const(k * es).i32Add();
        loadScalar(f, t);
        if (fromBase) {
          f.localGet(src).i32Const(k * es).i32Add();
          loadScalar(f, t);
        } else {
          f.localGet(init);
        }
        emitBinary(f, op, t, ta, tb);
        storeScalar(f, t);
      }
    };
    const rowDims = [...outDims.slice(0, -1), 1];
    f.localGet(result).localGet(begin).i32Const(channels * es).i32Mul().i32Add().localSet(outPtr);
    forEachElement(f, rowDims, begin, end, () => {}, (out) => {
      // the row = init
      f.i32Const(0).localSet(c);
      f.block().loop();
      f.localGet(c).i32Const(channels * es).i32GeU().brIf(1);
      f.localGet(outPtr).localGet(c).i32Add().localGet(init);
      storeScalar(f, t);
      f.localGet(c).i32Const(es).i32Add().localSet(c);
      f.br(0).end().end();
      emitWindowNest(f, window, baseDims.slice(0, -1), es * channels, out.slice(0, rank - 1), ({ valid, offset }) => {
        f.localGet(valid).if();
        f.localGet(base).localGet(offset).i32Add().localSet(src);
        combineRow(true);
        f.else();
        combineRow(false);
        f.end();
      });
      f.localGet(outPtr).i32Const(channels * es).i32Add().localSet(outPtr);
    });
  });
}

export function emitReduceWindowKernel(inst: Instruction<"reduceWindow">, target: WasmTarget): WasmKernel | Declined {
  if (inst.operands.length !== 2 || inst.shape.kind !== "array") return { declined: "reduceWindow: variadic (several inputs)" };
  const input = inst.operands[0]!.shape as ArrayShape;
  const t = input.elementType;
  if (!isArithmeticType(t)) return { declined: `reduceWindow: element type ${t}` };
  const op = binaryReducerOf(inst.attrs.toApply);
  if (op === undefined) return { declined: "reduceWindow: the reducer is not one add/multiply/maximum/minimum of its parameters" };
  const { window } = inst.attrs;
  const baseDims = input.dimensions;
  const outDims = inst.shape.dimensions;
  const problem = checkWindow(window, baseDims);
  if (problem !== undefined) return { declined: `reduceWindow: ${problem}` };
  const es = storageBytes(t);
  const ct = computeType(t);
  const last = outDims.length === 0 ? 1 : outDims[outDims.length - 1]!;
  const windowSize = elementCount(window.map((w) => w.size));

  const lastWindow = window[window.length - 1];
  const channels = lastWindow !== undefined && isTrivial(lastWindow) && target.simd && windowSize > 0 && (!t.endsWith("64") || t === "f64" || op === "add" || op === "multiply") && last >= 16 / es;
  const module = new ModuleBuilder().importMemory(target);
  if (channels) {
    emitChannelReduceWindow(module, inst, op, t, last);
  } else {
    module.addFunction("run", ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
      const [base, initAt, result, begin, end] = [0, 1, 2, 3, 4];
      const init = f.local(ct);
      const acc = f.local(ct);
      const ta = f.local(ct);
      const tb = f.local(ct);
      const outPtr = f.local("i32");
      f.localGet(initAt);
      loadScalar(f, t);
      f.localSet(init);
      f.localGet(result).localGet(begin).i32Const(last * es).i32Mul().i32Add().localSet(outPtr);
      forEachElement(f, outDims, begin, end, () => {}, (out) => {
        f.localGet(init).localSet(acc);
        if (windowSize > 0) {
          emitWindowNest(f, window, baseDims, es, out, ({ valid, offset }) => {
            f.localGet(acc);
            f.localGet(valid).if(ct);
            f.localGet(base).localGet(offset).i32Add();
            loadScalar(f, t);
            f.else().localGet(init).end();
            emitBinary(f, op, t, ta, tb);
            f.localSet(acc);
          });
        }
        f.localGet(outPtr).localGet(acc);
        storeScalar(f, t);
        f.localGet(outPtr).i32Const(es).i32Add().localSet(outPtr);
      });
    });
  }
  return {
    name: `reduce-window ${op} ${t} ${baseDims.join("x")} -> ${outDims.join("x")}${channels ? " (simd over the last dimension)" : ""}`,
    bytes: module.finish(),
    operandCount: 2,
    resultCount: 1,
    scratchBytes: 0,
    parallelExtent: rowCount(outDims),
    costPerUnit: last * Math.max(windowSize, 1) * 4,
  };
}


export function emitSelectAndScatterKernel(inst: Instruction<"selectAndScatter">, target: WasmTarget): WasmKernel | Declined {
  const [operandInst, sourceInst] = inst.operands;
  if (operandInst === undefined || sourceInst === undefined || inst.shape.kind !== "array") return { declined: "selectAndScatter: operands" };
  const operand = operandInst.shape as ArrayShape;
  const source = sourceInst.shape as ArrayShape;
  const t: ElementType = operand.elementType;
  const st: ElementType = source.elementType;
  if (!isArithmeticType(t) || st !== t) return { declined: `selectAndScatter: element types ${t}, ${st}` };
  const direction = comparisonOf(inst.attrs.select);
  if (direction === undefined) return { declined: "selectAndScatter: select is not one GE/GT/LE/LT compare of its parameters" };
  const op = binaryReducerOf(inst.attrs.scatter);
  if (op === undefined) return { declined: "selectAndScatter: scatter is not one add/multiply/maximum/minimum of its parameters" };
  const { window } = inst.attrs;
  const baseDims = operand.dimensions;
  const srcDims = source.dimensions;
  const problem = checkWindow(window, baseDims);
  if (problem !== undefined) return { declined: `selectAndScatter: ${problem}` };
  const es = storageBytes(t);
  const ct = computeType(t);
  // Leading dimensions with a trivial window: source and result rows correspond one to one.
  let split = 0;
  while (split < window.length - 1 && isTrivial(window[split]!)) split++;
  const parallelExtent = elementCount(srcDims.slice(0, split));
  const srcPerUnit = elementCount(srcDims.slice(split));
  const resultPerUnit = elementCount(baseDims.slice(split));
  const innerSrcDims = srcDims.slice(split);
  const innerBaseDims = baseDims.slice(split);
  const innerWindow = window.slice(split);
  const lastWindow = innerWindow[innerWindow.length - 1];
  const vector = target.simd && es === 4 && lastWindow !== undefined && isTrivial(lastWindow) && innerSrcDims[innerSrcDims.length - 1]! >= 4;

  const module = new ModuleBuilder().importMemory(target);
  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [opBase, srcBase, initAt, result, begin, end] = [0, 1, 2, 3, 4, 5];
    const init = f.local(ct);
    const best = f.local(ct);
    const x = f.local(ct);
    const ta = f.local(ct);
    const tb = f.local(ct);
    const unit = f.local("i32");
    const i = f.local("i32");
    const ob = f.local("i32");
    const rb = f.local("i32");
    const sp = f.local("i32");
    const selected = f.local("i32");
    const zero = f.local("i32");
    const rows = f.local("i32");
    f.localGet(initAt);
    loadScalar(f, t);
    f.localSet(init);
    f.localGet(begin).localSet(unit);
    f.block().loop();
    f.localGet(unit).localGet(end).i32GeU().brIf(1);
    // This unit's operand, result and source rows.
    f.localGet(opBase).localGet(unit).i32Const(resultPerUnit * es).i32Mul().i32Add().localSet(ob);
    f.localGet(result).localGet(unit).i32Const(resultPerUnit * es).i32Mul().i32Add().localSet(rb);
    f.localGet(srcBase).localGet(unit).i32Const(srcPerUnit * es).i32Mul().i32Add().localSet(sp);
    // result rows = init
    f.i32Const(0).localSet(i);
    f.block().loop();
    f.localGet(i).i32Const(resultPerUnit).i32GeU().brIf(1);
    f.localGet(rb).localGet(i).i32Const(es).i32Mul().i32Add().localGet(init);
    storeScalar(f, t);
    f.localGet(i).i32Const(1).i32Add().localSet(i);
    f.br(0).end().end();
    f.i32Const(0).localSet(zero);
    f.i32Const(rowCount(innerSrcDims)).localSet(rows);
    const chan = f.local("i32");
    // One source element: select in its window (the nest over `nestWindow`, positions
    // `nestBytes` apart, plus the channel's byte offset `chan`), scatter into the result.
    const scalarElement = (out: readonly number[], nestWindow: readonly WindowDimension[], nestDims: readonly number[], nestBytes: number): void => {
      f.i32Const(-1).localSet(selected);
      emitWindowNest(f, nestWindow, nestDims, nestBytes, out, ({ valid, offset }) => {
        f.localGet(valid).if();
        f.localGet(ob).localGet(offset).i32Add().localGet(chan).i32Add();
        loadScalar(f, t);
        f.localSet(x);
        f.localGet(selected).i32Const(0).i32LtS().if();
        f.localGet(offset).localGet(chan).i32Add().localSet(selected).localGet(x).localSet(best);
        f.else();
        // keep the candidate when select(candidate, x) holds
        f.localGet(best).localGet(x);
        emitCompare(f, direction, t);
        f.i32Eqz().if();
        f.localGet(offset).localGet(chan).i32Add().localSet(selected).localGet(x).localSet(best);
        f.end();
        f.end();
        f.end();
      });
      f.localGet(selected).i32Const(0).i32GeS().if();
      f.localGet(rb).localGet(selected).i32Add().localTee(i);
      f.localGet(i);
      loadScalar(f, t);
      f.localGet(sp);
      loadScalar(f, t);
      emitBinary(f, op, t, ta, tb);
      storeScalar(f, t);
      f.end();
      f.localGet(sp).i32Const(es).i32Add().localSet(sp);
    };
    f.i32Const(0).localSet(chan);
    if (!vector) {
      forEachElement(f, innerSrcDims, zero, rows, () => {}, (out) => scalarElement(out, innerWindow, innerBaseDims, es));
    } else {
      // The last window dimension is trivial: lanes of 4 channels select side by side.
      const channels = innerSrcDims[innerSrcDims.length - 1]!;
      const vectorEnd = Math.floor(channels / 4) * 4;
      const nestWindow = innerWindow.slice(0, -1);
      const nestDims = innerBaseDims.slice(0, -1);
      const rowDims = [...innerSrcDims.slice(0, -1), 1];
      const bestV = f.local("v128");
      const selV = f.local("v128");
      const xV = f.local("v128");
      const keep = f.local("v128");
      const have = f.local("i32");
      f.i32Const(rowCount(rowDims)).localSet(rows);
      forEachElement(f, rowDims, zero, rows, () => {}, (row) => {
        const out = row.slice(0, -1);
        f.i32Const(0).localSet(chan);
        f.block().loop();
        f.localGet(chan).i32Const(vectorEnd * es).i32GeU().brIf(1);
        f.i32Const(0).localSet(have);
        emitWindowNest(f, nestWindow, nestDims, es * channels, out, ({ valid, offset }) => {
          f.localGet(valid).if();
          f.localGet(ob).localGet(offset).i32Add().localGet(chan).i32Add().v128Load(0, 4).localSet(xV);
          f.localGet(have).i32Eqz().if();
          f.localGet(xV).localSet(bestV);
          f.localGet(offset).i32x4Splat().localSet(selV);
          f.i32Const(1).localSet(have);
          f.else();
          f.localGet(bestV).localGet(xV);
          emitVectorCompare(f, direction, t);
          f.localSet(keep);
          f.localGet(bestV).localGet(xV).localGet(keep).v128Bitselect().localSet(bestV);
          f.localGet(selV).localGet(offset).i32x4Splat().localGet(keep).v128Bitselect().localSet(selV);
          f.end();
          f.end();
        });
        f.localGet(have).if();
        for (let lane = 0; lane < 4; lane++) {
          // result[selected + channel] = scatter(result[...], source)
          f.localGet(rb).localGet(selV).i32x4ExtractLane(lane).i32Add().localGet(chan).i32Add().i32Const(lane * es).i32Add().localTee(i);
          f.localGet(i);
          loadScalar(f, t);
          f.localGet(sp).i32Const(lane * es).i32Add();
          loadScalar(f, t);
          emitBinary(f, op, t, ta, tb);
          storeScalar(f, t);
        }
        f.end();
        f.localGet(sp).i32Const(4 * es).i32Add().localSet(sp);
        f.localGet(chan).i32Const(4 * es).i32Add().localSet(chan);
        f.br(0).end().end();
        for (let k = vectorEnd; k < channels; k++) {
          f.i32Const(k * es).localSet(chan);
          scalarElement(out, nestWindow, nestDims, es * channels);
        }
      });
    }
    f.localGet(unit).i32Const(1).i32Add().localSet(unit);
    f.br(0).end().end();
  });
  return {
    name: `select-and-scatter ${direction}/${op} ${t} ${baseDims.join("x")}${vector ? " (simd over the last dimension)" : ""}`,
    bytes: module.finish(),
    operandCount: 3,
    resultCount: 1,
    scratchBytes: 0,
    parallelExtent,
    costPerUnit: srcPerUnit * Math.max(elementCount(innerWindow.map((w) => w.size)), 1) * 4 + resultPerUnit,
  };
}
