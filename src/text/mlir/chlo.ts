// CHLO ops lowered to IR the interpreter runs:
// - chlo.mulhi: the high half of the double-width product. Up to 32 bits via 64-bit
//   arithmetic; 64 bits via 32-bit halves (schoolbook), with the signed correction.
// - chlo.ragged_dot: the raggedDot opcode.
// - chlo.scan: a while loop over the scan dimension with dynamic slices.
// - chlo.erf: the erf opcode.
// - chlo.top_k: the topK opcode (chlo's top_k always keeps the largest).
// - chlo's special functions (acos, ..., lgamma, zeta, next_after): their opcodes, whose
//   kernels live in src/interpreter/kernels/chlo/.
// - broadcast_*, constant(_like), conj, square, is_*inf, tan: StableHLO (chlo_broadcast.ts).

import type { Instruction } from "../../ir/computation.js";
import type { OpAttributes, Opcode } from "../../ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, tupleShape, type ArrayShape, type Shape, elementCount } from "../../types/shape.js";
import { toInts } from "./attr_read.js";
import { lowerChloSugar } from "./chlo_broadcast.js";
import { readAccuracy, type LowerContext } from "./import_ops.js";
import { CompBuilder, elementsOf } from "./import.js";

/** CHLO ops that are an opcode of their own, with no attributes. */
const CHLO_OPCODES: Readonly<Record<string, Opcode>> = {
  "chlo.acos": "acos", "chlo.acosh": "acosh", "chlo.asin": "asin", "chlo.asinh": "asinh", "chlo.atan": "atan",
  "chlo.atanh": "atanh", "chlo.cosh": "cosh", "chlo.sinh": "sinh", "chlo.lgamma": "lgamma", "chlo.digamma": "digamma",
  "chlo.erf_inv": "erfInv", "chlo.erfc": "erfc", "chlo.bessel_i1e": "besselI1e", "chlo.polygamma": "polygamma",
  "chlo.zeta": "zeta", "chlo.next_after": "nextAfter",
};

export function lowerChlo(ctx: LowerContext): Instruction {
  const opcode = CHLO_OPCODES[ctx.op.name];
  if (opcode !== undefined) return ctx.add(opcode as "acos", ctx.operands, {}, ctx.declared);
  const sugar = lowerChloSugar(ctx);
  if (sugar !== undefined) return sugar;
  switch (ctx.op.name) {
    case "chlo.mulhi": return lowerMulhi(ctx);
    case "chlo.ragged_dot": return lowerRaggedDot(ctx);
    case "chlo.scan": return lowerScan(ctx);
    case "chlo.erf": return ctx.add("erf", ctx.operands, readAccuracy(ctx), ctx.declared);
    case "chlo.top_k": return ctx.add("topK", ctx.operands, { k: ctx.r.int("k"), largest: true }, ctx.declared);
    default: return ctx.fail(`unsupported CHLO operation '${ctx.op.name}'`);
  }
}

function arrayOf(ctx: LowerContext, s: Shape | undefined): ArrayShape {
  if (s === undefined || s.kind !== "array") return ctx.fail("expects tensors");
  return s;
}

function lowerMulhi(ctx: LowerContext): Instruction {
  const [a, b] = ctx.operands as [Instruction, Instruction];
  const shape = arrayOf(ctx, a.shape);
  const t = shape.elementType;
  const info = ELEMENT_TYPES[t];
  if (info.kind !== "signed" && info.kind !== "unsigned") return ctx.fail(`mulhi needs integers, got ${t}`);
  const signed = info.kind === "signed";
  const dims = shape.dimensions;
  const as = (e: ElementType): ArrayShape => arrayShape(e, dims);
  const splat = (e: ElementType, v: bigint | number): Instruction => {
    const lit = Literal.fromValues(e, dims, new Array(elementCount(shape.dimensions)).fill(v));
    return ctx.add("constant", [], { literal: lit }, as(e));
  };
  const bin = (op: "multiply" | "add" | "subtract" | "and" | "shiftRightLogical" | "shiftRightArithmetic", x: Instruction, y: Instruction): Instruction =>
    ctx.add(op, [x, y], {} as OpAttributes["add"], x.shape);
  const convert = (x: Instruction, e: ElementType): Instruction => ctx.add("convert", [x], { elementType: e }, as(e));
  if (info.bitWidth <= 32) {
    const wide: ElementType = signed ? "s64" : "u64";
    const product = bin("multiply", convert(a, wide), convert(b, wide));
    const shifted = bin(signed ? "shiftRightArithmetic" : "shiftRightLogical", product, splat(wide, BigInt(info.bitWidth)));
    return convert(shifted, t);
  }
  // 64 bits: unsigned high word from 32-bit halves, all in u64.
  const ua = signed ? ctx.add("bitcastConvert", [a], { elementType: "u64" }, as("u64")) : a;
  const ub = signed ? ctx.add("bitcastConvert", [b], { elementType: "u64" }, as("u64")) : b;
  const mask = splat("u64", 0xffffffffn);
  const k32 = splat("u64", 32n);
  const lo = (x: Instruction): Instruction => bin("and", x, mask);
  const hi = (x: Instruction): Instruction => bin("shiftRightLogical", x, k32);
  const loLo = bin("multiply", lo(ua), lo(ub));
  const hiLo = bin("multiply", hi(ua), lo(ub));
  const loHi = bin("multiply", lo(ua), hi(ub));
  const hiHi = bin("multiply", hi(ua), hi(ub));
  const cross = bin("add", bin("add", hi(loLo), lo(hiLo)), loHi);
  let high = bin("add", bin("add", hiHi, hi(hiLo)), hi(cross));
  if (signed) {
    // signed hi = unsigned hi - (a < 0 ? b : 0) - (b < 0 ? a : 0)  (mod 2^64)
    const k63 = splat("u64", 63n);
    const negMask = (x: Instruction): Instruction =>
      bin("subtract", splat("u64", 0n), bin("shiftRightLogical", x, k63)); // all ones when negative
    high = bin("subtract", high, bin("and", negMask(ua), ub));
    high = bin("subtract", high, bin("and", negMask(ub), ua));
    return ctx.add("bitcastConvert", [high], { elementType: t }, as(t));
  }
  return high;
}

function lowerRaggedDot(ctx: LowerContext): Instruction {
  const v = ctx.r.get("ragged_dot_dimension_numbers");
  if (v?.kind !== "struct") return ctx.fail("missing ragged_dot_dimension_numbers");
  const ints = (k: string): number[] => {
    const x = v.fields.get(k);
    return x ? toInts(x) ?? ctx.fail(`bad ${k}`) : [];
  };
  return ctx.add("raggedDot", ctx.operands, {
    dimensionNumbers: {
      dotDimensionNumbers: {
        lhsBatchDimensions: ints("lhs_batching_dimensions"), rhsBatchDimensions: ints("rhs_batching_dimensions"),
        lhsContractingDimensions: ints("lhs_contracting_dimensions"), rhsContractingDimensions: ints("rhs_contracting_dimensions"),
      },
      lhsRaggedDimensions: ints("lhs_ragged_dimensions"), rhsGroupDimensions: ints("rhs_group_dimensions"),
    },
    precisionConfig: ctx.r.precision(),
  }, ctx.declared);
}

/**
 * chlo.scan(inputs) inits(carries) dimension=d { body(elements..., carries...) -> (outputs..., carries...) }
 * becomes a while loop over i in [0, L): slice element i of every input, call the body, write each
 * output at position i (L-1-i when is_reverse).
 */
function lowerScan(ctx: LowerContext): Instruction {
  const nInputs = ctx.r.int("num_inputs");
  const dim = ctx.r.int("dimension");
  const reverse = ctx.r.bool("is_reverse");
  const inputs = ctx.operands.slice(0, nInputs);
  const inits = ctx.operands.slice(nInputs);
  const resultTypes = ctx.op.resultTypes.map((t) => arrayOf(ctx, t));
  const nOutputs = resultTypes.length - inits.length;
  const outputs = resultTypes.slice(0, nOutputs);
  const length = arrayOf(ctx, inputs[0]?.shape ?? outputs[0]).dimensions[dim] ?? ctx.fail("scan dimension out of range");
  const region = ctx.op.regions[0] ?? ctx.fail("missing body");
  const body = ctx.importer.region(region, ctx.b.name, { kind: "plain" }, ctx.scope);
  const off = ctx.op.offset;
  const s64 = arrayShape("s64", []);
  const i64 = (b: CompBuilder, v: number): Instruction => b.add("constant", [], { literal: Literal.scalar("s64", BigInt(v)) }, s64, off);

  // State: (i, inputs..., carries..., outputs...).
  const stateShapes: Shape[] = [s64, ...inputs.map((x) => x.shape), ...inits.map((x) => x.shape), ...outputs];
  const state = tupleShape(stateShapes);
  const nCarry = inits.length;

  const cond = new CompBuilder(`${ctx.b.name}.scan_cond`, ctx.importer.c);
  {
    const p = cond.add("parameter", [], { number: 0, shape: state }, state, off, "state");
    const i = cond.add("getTupleElement", [p], { index: 0 }, s64, off);
    const lt = cond.add("compare", [i, i64(cond, length)], { direction: "LT" }, arrayShape("pred", []), off);
    void lt;
  }
  const condComp = cond.build(cond.instructions.at(-1)!);

  const step = new CompBuilder(`${ctx.b.name}.scan_body`, ctx.importer.c);
  const p = step.add("parameter", [], { number: 0, shape: state }, state, off, "state");
  const part = (k: number): Instruction => step.add("getTupleElement", [p], { index: k }, stateShapes[k], off);
  const i = part(0);
  const pos = reverse ? step.add("subtract", [i64(step, length - 1), i], {}, s64, off) : i;
  const zero = i64(step, 0);
  const starts = (rank: number): Instruction[] => Array.from({ length: rank }, (_, d) => (d === dim ? pos : zero));
  const elements = inputs.map((x, k) => {
    const xs = x.shape as ArrayShape;
    const sizes = xs.dimensions.map((n, d) => (d === dim ? 1 : n));
    const slice = step.add("dynamicSlice", [part(1 + k), ...starts(sizes.length)], { sliceSizes: sizes }, arrayShape(xs.elementType, sizes), off);
    const elemDims = xs.dimensions.filter((_, d) => d !== dim);
    return step.add("reshape", [slice], { dimensions: elemDims }, arrayShape(xs.elementType, elemDims), off);
  });
  const carries = inits.map((_, k) => part(1 + nInputs + k));
  const called = step.add("call", [...elements, ...carries], { toApply: body }, body.root.shape, off);
  const nResults = nOutputs + nCarry;
  const produced = nResults === 1 ? [called]
    : Array.from({ length: nResults }, (_, k) => step.add("getTupleElement", [called], { index: k }, elementsOf(body.root.shape)[k], off));
  const newOutputs = outputs.map((o, k) => {
    const y = produced[k]!;
    const ys = y.shape as ArrayShape;
    const withDim = o.dimensions.map((n, d) => (d === dim ? 1 : n));
    const update = step.add("reshape", [y], { dimensions: withDim }, arrayShape(ys.elementType, withDim), off);
    return step.add("dynamicUpdateSlice", [part(1 + nInputs + nCarry + k), update, ...starts(o.dimensions.length)], {}, o, off);
  });
  const next = step.add("add", [i, i64(step, 1)], {}, s64, off);
  const newState = step.add("tuple", [next, ...inputs.map((_, k) => part(1 + k)), ...produced.slice(nOutputs), ...newOutputs], {}, state, off);
  const stepComp = step.build(newState);

  const initOutputs = outputs.map((o) => ctx.add("constant", [], { literal: Literal.zeros(arrayShape(o.elementType, o.dimensions)) }, o));
  const init = ctx.add("tuple", [i64Outer(ctx), ...inputs, ...inits, ...initOutputs], {}, state);
  const loop = ctx.add("while", [init], { condition: condComp, body: stepComp }, state);
  const results: Instruction[] = [
    ...outputs.map((o, k) => ctx.add("getTupleElement", [loop], { index: 1 + nInputs + nCarry + k }, o)),
    ...inits.map((c, k) => ctx.add("getTupleElement", [loop], { index: 1 + nInputs + k }, c.shape)),
  ];
  return results.length === 1 ? results[0]! : ctx.add("tuple", results, {}, ctx.declared);
}

function i64Outer(ctx: LowerContext): Instruction {
  return ctx.add("constant", [], { literal: Literal.scalar("s64", 0n) }, arrayShape("s64", []));
}
