// Dot canonicalization (XLA's DotDecomposer): rewrites every dot_general of f16, bf16,
// f32 and f64 operands and result (the types some backend's GEMM kernels take: the CPU
// backends' f32 and f64, WebGPU's halves too; WebGPU's pipeline asks for the types its
// kernels take, integers and f8 operands too: dotDecomposerFor) into the forms the GEMM kernels take —
// lhs [batch..., M, K], rhs [batch..., K, N] or [batch..., N, K] — with
// transposes that bring the batch, free and contracting dimensions into that order and
// reshapes that merge the free and the contracting ones, then reshapes the [batch...,
// M, N] product back to dot_general's result order (batch, lhs free, rhs free). The
// transposes become copy kernels after fusion; a dot already in GEMM form is left as
// it is. Exact: only the order of the data changes, not the arithmetic (the contracting
// dimensions merge in their listed order, the order the interpreter sums them in). A
// backend whose kernels read a dot's operands in place through strides (WebGPU's; the
// CPU backends' packed GEMMs, plan.ts cpuDotDecomposer) keeps the dots they take so
// (dotDecomposerFor's `inPlace`): no copy kernels.
//
// A dot of preds (an OR of ANDs over the contraction, as the interpreter's arithmetic has
// it), where the kernels take s32 products but no pred ones (WebGPU's), becomes the dot of
// the operands converted to s32 with its sums compared with zero: each product is 0 or 1,
// so a sum is nonzero exactly when some product is true (a wrap to zero would need a
// contraction of 2^32 elements).

import type { HloModule, Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import { gemmGeometryOfDot } from "../kernel/gemm_plan.js";
import type { ElementType } from "../../types/element_type.js";
import type { Pass } from "../../passes/pass.js";
import { Literal } from "../../types/literal.js";

function transposed(f: InstructionFactory, x: Instruction, permutation: number[], from: Instruction): Instruction {
  return permutation.every((p, i) => p === i) ? x : f.add("transpose", [x], { permutation }, { from });
}

function reshaped(f: InstructionFactory, x: Instruction, dimensions: number[], from: Instruction): Instruction {
  const s = x.shape;
  if (s.kind === "array" && s.dimensions.length === dimensions.length && s.dimensions.every((d, i) => d === dimensions[i])) return x;
  return f.add("reshape", [x], { dimensions }, { from });
}

/** The element types some backend's GEMM kernels take (operands and result). */
const GEMM_TYPES: ReadonlySet<ElementType> = new Set<ElementType>(["f16", "bf16", "f32", "f64"]);

/** Whether a backend's GEMM kernels take a dot of these element types (operands, then result). */
export type GemmTypes = (types: readonly ElementType[]) => boolean;

/** Whether a backend's GEMM kernels read a dot not in GEMM form as it is (WebGPU's: operands read in place, kernel/gemm_plan.ts stridedGemmOfDot). */
export type ReadsInPlace = (dot: Instruction<"dot">) => boolean;

function canonicalize(dot: Instruction<"dot">, operands: readonly Instruction[], f: InstructionFactory, takes: GemmTypes, inPlace?: ReadsInPlace): Instruction | undefined {
  const [lhs, rhs] = operands;
  if (lhs === undefined || rhs === undefined || lhs.shape.kind !== "array" || rhs.shape.kind !== "array" || dot.shape.kind !== "array") return undefined;
  if (!takes([lhs.shape.elementType, rhs.shape.elementType, dot.shape.elementType])) return undefined;
  if (!("declined" in gemmGeometryOfDot(dot)) || inPlace?.(dot) === true) return undefined;
  const { lhsBatchDimensions: lb, rhsBatchDimensions: rb, lhsContractingDimensions: lc, rhsContractingDimensions: rc } = dot.attrs.dimensionNumbers;
  const ld = lhs.shape.dimensions;
  const rd = rhs.shape.dimensions;
  const lf = ld.map((_, i) => i).filter((i) => !lb.includes(i) && !lc.includes(i));
  const rf = rd.map((_, i) => i).filter((i) => !rb.includes(i) && !rc.includes(i));
  const size = (dims: readonly number[], of: readonly number[]): number => of.reduce((p, i) => p * dims[i]!, 1);
  const batch = lb.map((i) => ld[i]!);
  const m = size(ld, lf);
  const n = size(rd, rf);
  const k = size(ld, lc);
  const nb = batch.length;
  const a = reshaped(f, transposed(f, lhs, [...lb, ...lf, ...lc], dot), [...batch, m, k], dot);
  // B as [batch..., n, k] (stored transposed, which the GEMM kernels read as such) where the
  // rhs's minor dimension is its last contracting one: the transpose then moves whole rows of
  // k, a plain copy, where [batch..., k, n] would gather every element a row apart (the
  // encoder's keys [s][h][d] contracted over d: 31-33 us for 4 x 64 x 128 gathered, against
  // 4-6 us for the same data copied as [h][s][d], native, 2026-12-01, docs/benchmarks_history.md).
  const bTransposed = rf.length > 0 && rc[rc.length - 1] === rd.length - 1;
  const b = bTransposed
    ? reshaped(f, transposed(f, rhs, [...rb, ...rf, ...rc], dot), [...batch, n, k], dot)
    : reshaped(f, transposed(f, rhs, [...rb, ...rc, ...rf], dot), [...batch, k, n], dot);
  const indices = batch.map((_, i) => i);
  const product = f.add("dot", [a, b], {
    ...dot.attrs,
    dimensionNumbers: {
      lhsBatchDimensions: indices, rhsBatchDimensions: indices, lhsContractingDimensions: [nb + 1], rhsContractingDimensions: [bTransposed ? nb + 1 : nb],
    },
  }, { from: dot });
  return reshaped(f, product, [...dot.shape.dimensions], dot);
}

/** A dot of preds as an s32 dot compared with zero (see above), or undefined. */
function predDot(dot: Instruction<"dot">, operands: readonly Instruction[], f: InstructionFactory, takes: GemmTypes, inPlace?: ReadsInPlace): Instruction | undefined {
  const isPred = (x: Instruction): boolean => x.shape.kind === "array" && x.shape.elementType === "pred";
  if (!isPred(dot) || !operands.every(isPred) || dot.shape.kind !== "array" || takes(["pred", "pred", "pred"]) || !takes(["s32", "s32", "s32"])) return undefined;
  const extras = { from: dot };
  const [lhs, rhs] = operands.map((o) => f.add("convert", [o], { elementType: "s32" }, extras)) as [Instruction, Instruction];
  const plain = f.add("dot", [lhs, rhs], { ...dot.attrs, preferredElementType: "s32" }, extras);
  const sums = canonicalize(plain, [lhs, rhs], f, takes, inPlace) ?? plain;
  const zero = f.add("broadcastInDim", [f.constant(Literal.scalar("s32", 0), extras)], { dimensions: [...dot.shape.dimensions], broadcastDimensions: [] }, extras);
  return f.add("compare", [sums, zero], { direction: "NE" }, extras);
}

/** The decomposer of the dots whose element types `takes` accepts (the rest are left as they are), but those `inPlace` says the kernels read as they are. */
export function dotDecomposerFor(takes: GemmTypes, inPlace?: ReadsInPlace): Pass {
  return {
    name: "dot-decomposer",
    run(module: HloModule): HloModule {
      return mapComputations(module, (c) => rebuild(c, (inst, operands, f) => {
        if (inst.opcode !== "dot") return undefined;
        const dot = inst as Instruction<"dot">;
        return predDot(dot, operands, f, takes, inPlace) ?? canonicalize(dot, operands, f, takes, inPlace);
      }));
    },
  };
}

/** Whether a dot's element types (operands and result) are all GEMM_TYPES. */
export const gemmTypes: GemmTypes = (types) => types.every((t) => GEMM_TYPES.has(t));

/** The decomposer of dots of the GEMM_TYPES, operands and result. */
export const dotDecomposer: Pass = dotDecomposerFor(gemmTypes);
