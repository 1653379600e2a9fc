// Identities on shape and data-movement ops (reshape, transpose, broadcast, slice,
// concatenate, pad, reverse) and the degenerate cases of reduce and dot. These move
// values without computing on them, so each is exact for every element type; the
// reduce and dot rules apply the reducer / the multiply exactly as the interpreter
// does for a single element (acc = reducer(init, x); dot: acc = 0 + a * b).

import type { Instruction } from "../../../ir/computation.js";
import type { InstructionFactory } from "../../../ir/factory.js";
import { OP_TABLE } from "../../../ir/opcodes.js";
import { any, op, splatValue, type Rule } from "../../../passes/pattern.js";
import { range } from "../../../types/arrays.js";
import { elementCount } from "../../../types/shape.js";
import { arrayOf, elementTypeOf, isFloatType, makeSplat, sameList, scalarOf } from "./util.js";

type Of<O extends Instruction["opcode"]> = Instruction<O>;
const dimsOf = (inst: Instruction): readonly number[] => arrayOf(inst)?.dimensions ?? [];

interface SliceBounds { startIndices: number[]; limitIndices: number[]; strides: number[] }

/** slice(slice(x, inner), outer) as one slice of x. */
export function composeSlices(inner: SliceBounds, outer: SliceBounds): SliceBounds {
  const out: SliceBounds = { startIndices: [], limitIndices: [], strides: [] };
  inner.startIndices.forEach((s1, d) => {
    const t1 = inner.strides[d]!;
    const [s2, l2, t2] = [outer.startIndices[d]!, outer.limitIndices[d]!, outer.strides[d]!];
    const n = l2 > s2 ? Math.ceil((l2 - s2) / t2) : 0;
    const start = s1 + s2 * t1;
    const stride = t1 * t2;
    if (n === 0) out.startIndices.push(0), out.limitIndices.push(0), out.strides.push(1);
    else out.startIndices.push(start), out.limitIndices.push(start + (n - 1) * stride + 1), out.strides.push(stride);
  });
  return out;
}

function mergeAdjacentSlices(operands: readonly Instruction[], dim: number, f: InstructionFactory): Instruction[] | undefined {
  const out: Instruction[] = [];
  let merged = false;
  for (const o of operands) {
    const prev = out.at(-1);
    if (prev !== undefined && prev.opcode === "slice" && o.opcode === "slice" && prev.operands[0] === o.operands[0]) {
      const a = (prev as Of<"slice">).attrs;
      const b = (o as Of<"slice">).attrs;
      const others = a.startIndices.every((_, d) => d === dim ||
        (a.startIndices[d] === b.startIndices[d] && a.limitIndices[d] === b.limitIndices[d] && a.strides[d] === b.strides[d]));
      if (others && a.strides[dim] === 1 && b.strides[dim] === 1 && a.limitIndices[dim] === b.startIndices[dim]) {
        const limitIndices = [...a.limitIndices];
        limitIndices[dim] = b.limitIndices[dim]!;
        out[out.length - 1] = f.add("slice", [o.operands[0]!], { startIndices: [...a.startIndices], limitIndices, strides: [...a.strides] }, { from: prev });
        merged = true;
        continue;
      }
    }
    out.push(o);
  }
  return merged ? out : undefined;
}

/** The reducer's result for one element, when it is a single op on (accumulator, element), or a parameter. */
function applyReducerOnce(reducer: Instruction<"reduce">["attrs"]["toApply"], init: Instruction, x: Instruction, f: InstructionFactory, from: Instruction): Instruction | undefined {
  const [acc, elem] = reducer.parameters;
  const root = reducer.root;
  if (acc === undefined || elem === undefined || reducer.parameters.length !== 2) return undefined;
  if (root === acc) return init;
  if (root === elem) return x;
  if (reducer.instructions.length !== 3 || root.operands.length !== 2 || !OP_TABLE[root.opcode].elementwise) return undefined;
  const pick = (o: Instruction): Instruction | undefined => (o === acc ? init : o === elem ? x : undefined);
  const [a, b] = [pick(root.operands[0]!), pick(root.operands[1]!)];
  if (a === undefined || b === undefined) return undefined;
  return f.add(root.opcode, [a, b], root.attrs, { from });
}

/** dot(lhs, rhs) whose contracting dimensions all have size 1 (or there are none): an outer product, lhs * rhs broadcast. */
function degenerateDot(m: { inst: Instruction; operands: readonly Instruction[] }, f: InstructionFactory): Instruction | undefined {
  const dot = m.inst as Of<"dot">;
  const [lhs, rhs] = m.operands as [Instruction, Instruction];
  const t = elementTypeOf(dot);
  if (t === undefined || t === "pred" || elementTypeOf(lhs) !== t || elementTypeOf(rhs) !== t) return undefined;
  const dn = dot.attrs.dimensionNumbers;
  const [ld, rd] = [dimsOf(lhs), dimsOf(rhs)];
  if (!dn.lhsContractingDimensions.every((d) => ld[d] === 1)) return undefined;
  const outDims = [...dimsOf(dot)];
  const nb = dn.lhsBatchDimensions.length;
  const side = (x: Instruction, dims: readonly number[], batch: readonly number[], contract: readonly number[], firstFree: number): Instruction => {
    const free = range(dims.length).filter((d) => !batch.includes(d) && !contract.includes(d));
    const perm = [...batch, ...free, ...contract];
    const moved = sameList(perm, range(dims.length)) ? x : f.add("transpose", [x], { permutation: perm }, { from: dot });
    const kept = [...batch, ...free].map((d) => dims[d]!);
    const squeezed = contract.length === 0 ? moved : f.add("reshape", [moved], { dimensions: kept }, { from: dot });
    const positions = [...range(nb), ...free.map((_, i) => firstFree + i)];
    return f.add("broadcastInDim", [squeezed], { dimensions: outDims, broadcastDimensions: positions }, { from: dot });
  };
  const nlFree = ld.length - nb - dn.lhsContractingDimensions.length;
  const a = side(lhs, ld, dn.lhsBatchDimensions, dn.lhsContractingDimensions, nb);
  const b = side(rhs, rd, dn.rhsBatchDimensions, dn.rhsContractingDimensions, nb + nlFree);
  const product = f.add("multiply", [a, b], {}, { from: dot });
  // The interpreter's dot sums from +0: for floats, 0 + (-0) is +0.
  if (!isFloatType(t)) return product;
  return f.add("add", [makeSplat(f, arrayOf(dot)!, scalarOf(t, 0), dot), product], {}, { from: dot });
}

/** A start index clamped into [0, hi], as dynamic-slice clamps. */
function clampStart(v: number | bigint, hi: number): number {
  const b = BigInt(v);
  return b < 0n ? 0 : b > BigInt(hi) ? hi : Number(b);
}

/** The scalar a splat broadcasts (a broadcast of a rank-0 value), or undefined. */
function splatSource(inst: Instruction): Instruction | undefined {
  if (inst.opcode !== "broadcastInDim") return undefined;
  const x = inst.operands[0]!;
  return dimsOf(x).length === 0 ? x : undefined;
}

/** Whether `perm` keeps the order of the dimensions of size > 1 (so the transpose only moves size-1 dimensions). */
function movesOnlyUnitDims(perm: readonly number[], dims: readonly number[]): boolean {
  const big = perm.filter((d) => dims[d]! > 1);
  return big.every((d, i) => i === 0 || big[i - 1]! < d);
}

export const SHAPE_RULES: readonly Rule[] = [
  {
    name: "reshape-same-shape", root: ["reshape", "transpose", "broadcastInDim", "reverse", "slice", "pad", "convert"],
    operands: [any("x")],
    guard: (m) => {
      const x = m.get("x");
      if (!sameList(dimsOf(x), dimsOf(m.inst)) || elementTypeOf(x) !== elementTypeOf(m.inst)) return false;
      const inst = m.inst as Instruction;
      switch (inst.opcode) {
        case "reshape": case "convert": return true;
        case "transpose": return sameList((inst as Of<"transpose">).attrs.permutation, range(dimsOf(x).length));
        case "broadcastInDim": return sameList((inst as Of<"broadcastInDim">).attrs.broadcastDimensions, range(dimsOf(x).length));
        case "reverse": return (inst as Of<"reverse">).attrs.dimensions.every((d) => dimsOf(x)[d]! <= 1);
        case "slice": return (inst as Of<"slice">).attrs.strides.every((s, d) => s === 1 || dimsOf(x)[d]! <= 1);
        default: return false;
      }
    },
    rewrite: (m) => m.get("x"),
  },
  {
    name: "pad-nothing", root: "pad", operands: [any("x"), any()],
    guard: (m) => {
      const a = (m.inst as Of<"pad">).attrs;
      return [...a.edgePaddingLow, ...a.edgePaddingHigh, ...a.interiorPadding].every((p) => p === 0);
    },
    rewrite: (m) => m.get("x"),
  },
  {
    name: "reshape-reshape", root: "reshape", operands: [op("reshape", [any("x")])],
    rewrite: (m, f) => f.add("reshape", [m.get("x")], (m.inst as Of<"reshape">).attrs, { from: m.inst }),
  },
  {
    name: "transpose-transpose", root: "transpose", operands: [op("transpose", [any("x")], "inner")],
    rewrite: (m, f) => {
      const p1 = (m.get("inner") as Of<"transpose">).attrs.permutation;
      const p2 = (m.inst as Of<"transpose">).attrs.permutation;
      return f.add("transpose", [m.get("x")], { permutation: p2.map((d) => p1[d]!) }, { from: m.inst });
    },
  },
  {
    name: "broadcast-broadcast", root: "broadcastInDim", operands: [op("broadcastInDim", [any("x")], "inner")],
    rewrite: (m, f) => {
      const inner = (m.get("inner") as Of<"broadcastInDim">).attrs.broadcastDimensions;
      const outer = m.inst as Of<"broadcastInDim">;
      return f.add("broadcastInDim", [m.get("x")], {
        dimensions: outer.attrs.dimensions, broadcastDimensions: inner.map((d) => outer.attrs.broadcastDimensions[d]!),
      }, { from: m.inst });
    },
  },
  {
    name: "slice-slice", root: "slice", operands: [op("slice", [any("x")], "inner")],
    rewrite: (m, f) => {
      const a = (m.get("inner") as Of<"slice">).attrs;
      const b = (m.inst as Of<"slice">).attrs;
      const bounds = composeSlices(
        { startIndices: [...a.startIndices], limitIndices: [...a.limitIndices], strides: [...a.strides] },
        { startIndices: [...b.startIndices], limitIndices: [...b.limitIndices], strides: [...b.strides] },
      );
      return f.add("slice", [m.get("x")], bounds, { from: m.inst });
    },
  },
  {
    name: "reverse-reverse", root: "reverse", operands: [op("reverse", [any("x")], "inner")],
    guard: (m) => {
      const a = [...(m.get("inner") as Of<"reverse">).attrs.dimensions].sort();
      const b = [...(m.inst as Of<"reverse">).attrs.dimensions].sort();
      return sameList(a, b);
    },
    rewrite: (m) => m.get("x"),
  },
  { name: "concatenate-one", root: "concatenate", operands: [any("x")], rewrite: (m) => m.get("x") },
  {
    name: "concatenate-adjacent-slices", root: "concatenate",
    rewrite: (m, f) => {
      const merged = mergeAdjacentSlices(m.operands, (m.inst as Of<"concatenate">).attrs.dimension, f);
      if (merged === undefined) return undefined;
      return merged.length === 1 ? merged[0]! : f.add("concatenate", merged, (m.inst as Of<"concatenate">).attrs, { from: m.inst });
    },
  },
  {
    name: "reduce-at-most-one-element", root: "reduce", operands: [any("x"), any("init")],
    rewrite: (m, f) => {
      const r = m.inst as Of<"reduce">;
      const x = m.get("x");
      const n = elementCount(r.attrs.dimensions.map((d) => dimsOf(x)[d]!));
      if (n > 1) return undefined;
      const out = arrayOf(r)!;
      const init = f.add("broadcastInDim", [m.get("init")], { dimensions: [...out.dimensions], broadcastDimensions: [] }, { from: r });
      if (n === 0) return init;
      const squeezed = f.add("reshape", [x], { dimensions: [...out.dimensions] }, { from: r });
      return applyReducerOnce(r.attrs.toApply, init, squeezed, f, r);
    },
  },
  {
    // A data-movement op on a splat is the splat of the result's shape.
    name: "move-splat", root: ["reshape", "transpose", "slice", "reverse", "broadcastInDim"], operands: [op("broadcastInDim", undefined, "b")],
    guard: (m) => splatSource(m.get("b")) !== undefined,
    rewrite: (m, f) => f.add("broadcastInDim", [splatSource(m.get("b"))!], { dimensions: [...dimsOf(m.inst)], broadcastDimensions: [] }, { from: m.inst }),
  },
  {
    name: "pad-splat-with-its-value", root: "pad", operands: [op("broadcastInDim", undefined, "b"), any("v")],
    guard: (m) => splatSource(m.get("b")) === m.get("v") && (m.inst as Of<"pad">).attrs.edgePaddingLow.every((p) => p >= 0) &&
      (m.inst as Of<"pad">).attrs.edgePaddingHigh.every((p) => p >= 0),
    rewrite: (m, f) => f.add("broadcastInDim", [m.get("v")], { dimensions: [...dimsOf(m.inst)], broadcastDimensions: [] }, { from: m.inst }),
  },
  {
    // Moving only size-1 dimensions, or adding them, keeps the row-major order of the elements: a reshape.
    name: "transpose-or-broadcast-is-reshape", root: ["transpose", "broadcastInDim"], operands: [any("x")],
    guard: (m) => {
      const x = m.get("x");
      const inst = m.inst as Instruction;
      if (inst.opcode === "transpose") {
        const perm = (inst as Of<"transpose">).attrs.permutation;
        return !sameList(perm, range(perm.length)) && movesOnlyUnitDims(perm, dimsOf(x));
      }
      const bd = (inst as Of<"broadcastInDim">).attrs.broadcastDimensions;
      // The operand's dimensions longer than 1 must keep their order: broadcast dimensions [1, 0] transpose.
      const kept = bd.filter((_, i) => dimsOf(x)[i] !== 1);
      return dimsOf(x).length > 0 && dimsOf(x).length < dimsOf(inst).length && elementCount(dimsOf(x)) === elementCount(dimsOf(inst)) &&
        bd.every((d, i) => dimsOf(x)[i] === dimsOf(inst)[d]) && kept.every((d, i) => i === 0 || d > kept[i - 1]!);
    },
    rewrite: (m, f) => f.add("reshape", [m.get("x")], { dimensions: [...dimsOf(m.inst)] }, { from: m.inst }),
  },
  {
    // A slice that lies within one operand of a concatenate slices that operand.
    name: "slice-of-concatenate", root: "slice", operands: [op("concatenate", undefined, "cat")],
    rewrite: (m, f) => {
      const cat = m.get("cat") as Of<"concatenate">;
      const a = (m.inst as Of<"slice">).attrs;
      const dim = cat.attrs.dimension;
      const n = dimsOf(m.inst)[dim]!;
      if (n === 0) return undefined;
      const first = a.startIndices[dim]!;
      const last = first + (n - 1) * a.strides[dim]!;
      let offset = 0;
      for (const part of cat.operands) {
        const size = dimsOf(part)[dim]!;
        if (first >= offset && last < offset + size) {
          const startIndices = [...a.startIndices];
          const limitIndices = [...a.limitIndices];
          startIndices[dim] = first - offset;
          limitIndices[dim] = last - offset + 1;
          return f.add("slice", [part], { startIndices, limitIndices, strides: [...a.strides] }, { from: m.inst });
        }
        offset += size;
      }
      return undefined;
    },
  },
  {
    // Constant start indices: a static slice, at the indices clamped as dynamic-slice clamps them.
    name: "dynamic-slice-constant-starts", root: "dynamicSlice",
    rewrite: (m, f) => {
      const [x, ...starts] = m.operands as [Instruction, ...Instruction[]];
      const values = starts.map(splatValue);
      if (!values.every((v): v is number | bigint => typeof v === "number" || typeof v === "bigint")) return undefined;
      const sizes = (m.inst as Of<"dynamicSlice">).attrs.sliceSizes;
      const startIndices = dimsOf(x).map((n, d) => clampStart(values[d]!, n - sizes[d]!));
      return f.add("slice", [x], { startIndices, limitIndices: startIndices.map((st, d) => st + sizes[d]!), strides: sizes.map(() => 1) }, { from: m.inst });
    },
  },
  {
    // An update as large as the operand replaces all of it, wherever the (clamped) start.
    name: "dynamic-update-slice-whole", root: "dynamicUpdateSlice",
    guard: (m) => sameList(dimsOf(m.operands[0]!), dimsOf(m.operands[1]!)),
    rewrite: (m) => m.operands[1],
  },
  // Not here on purpose: tuple(gte(t, 0), ..., gte(t, n-1)) => t. Runtimes take the
  // elements of a root `tuple` instruction as a program's results (src/check/parallel.ts),
  // so a root tuple must stay a tuple instruction.
  {
    name: "get-tuple-element-of-tuple", root: "getTupleElement", operands: [op("tuple", undefined, "t")],
    rewrite: (m) => m.get("t").operands[(m.inst as Of<"getTupleElement">).attrs.index],
  },
  {
    name: "dot-degenerate-contraction", root: "dot",
    guard: (m) => {
      const a = (m.inst as Of<"dot">).attrs;
      return a.preferredElementType === undefined || a.preferredElementType === elementTypeOf(m.operands[0]!);
    },
    rewrite: (m, f) => degenerateDot(m, f),
  },
];
