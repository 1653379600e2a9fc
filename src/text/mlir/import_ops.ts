// One StableHLO/CHLO/check op -> IR instructions. Ops whose StableHLO name is in the op
// table map by that name (reverse lookup); sugar ops (broadcast, dot, if, dynamic_* with
// constant shape operands, ...) map onto the IR's opcodes; check.* and ops the IR has no
// opcode for become custom calls that keep their attributes. sdy ops: sdy_import.ts.

import type { ComparisonDirection, ComparisonType, RandomAlgorithm, RandomDistribution, ReplicaGroupMeshAxes } from "../../ir/attributes.js";
import { Computation, type Instruction } from "../../ir/computation.js";
import {
  BINARY_OPCODES, OP_TABLE, OPCODES, opcodesOf, UNARY_OPCODES, type BinaryOpcode, type ConvWindowAttribute, type OpAttributes, type Opcode,
  type OpcodeOf, type TernaryOpcode, type UnaryOpcode,
} from "../../ir/opcodes.js";
import { factoryFor, withInstructions } from "../../ir/rewrite.js";
import { Literal } from "../../types/literal.js";
import type { ElementType } from "../../types/element_type.js";
import { arrayShape, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { resultCount, UNREGISTERED_OP_PREFIX, type Attr, type OpNode } from "./ast.js";
import { AttrReader, convDimsFromStruct, makeWindow, parseConvDims, toBools, toInt, toInts } from "./attr_read.js";
import { lowerChlo } from "./chlo.js";
import { elementsOf, freeValues, valueKey, type CompBuilder, type Importer, type Scope } from "./import.js";
import { attrToText, dictToText } from "./print_attr.js";
import { elementTypeFromMlir, shapeToMlir } from "./types.js";
import { lowerXlaCustomCall, xlaOpcodeOfTarget } from "./xla_ops.js";
import { lowerSdyOp, SDY_TYPED_ATTRIBUTES, sdyValuesOf } from "./sdy_import.js";
import { DYNAMIC_SUGAR } from "./import_dynamic.js";

/** StableHLO op name -> opcode, from the op table. */
export const STABLEHLO_TO_OPCODE: ReadonlyMap<string, Opcode> = new Map(
  OPCODES.filter((o) => OP_TABLE[o].stablehlo !== undefined && o !== "call").map((o) => [OP_TABLE[o].stablehlo!, o]),
);

/**
 * Ops whose attributes are empty (or only result_accuracy): they map by name alone. The
 * elementwise families' StableHLO ops all do (compare has a direction; CHLO's ops come
 * through chlo.ts); the others are listed.
 */
const PLAIN_OPS: ReadonlySet<Opcode> = new Set<Opcode>([
  ...[...UNARY_OPCODES, ...BINARY_OPCODES, ...opcodesOf("ternary")].filter((o) => OP_TABLE[o].stablehlo !== undefined),
  "dynamicUpdateSlice", "tuple", "afterAll", "replicaId", "partitionId",
]);

/** The plain ops as a type: the elementwise families (those with a StableHLO name) and the listed ones. */
type PlainOpcode = UnaryOpcode | BinaryOpcode | TernaryOpcode | "dynamicUpdateSlice" | "tuple" | "afterAll" | "replicaId" | "partitionId";

/**
 * The opcodes no StableHLO op name imports here, and why: with PLAIN_OPS and LOWER they
 * cover every opcode (checked below), so an added op is either imported or listed.
 */
export const NOT_IMPORTED_BY_NAME = {
  parameter: "a function's arguments, made by the importer",
  call: "func.call, lowered by name before the table",
  topK: "chlo.top_k (chlo.ts)",
  scaledDot: "no StableHLO op: a custom call (xla_ops.ts)",
  raggedDot: "no StableHLO op: a custom call (xla_ops.ts)",
  dynamicBroadcastInDim: "import_dynamic.ts (the shape-polymorphic ops keep their declared result types)",
  dynamicIota: "import_dynamic.ts",
  dynamicPad: "import_dynamic.ts",
  dynamicGather: "import_dynamic.ts",
  dynamicConv: "import_dynamic.ts",
  realDynamicSlice: "import_dynamic.ts",
  fusion: "made by the compiler; no StableHLO op",
  addDependency: "no StableHLO op: a custom call (xla_ops.ts)",
  raggedAllToAll: "no StableHLO op: a custom call (xla_ops.ts)",
  allGatherStart: "XLA's async forms: custom calls (xla_ops.ts)",
  allGatherDone: "XLA's async forms: custom calls (xla_ops.ts)",
  allReduceStart: "XLA's async forms: custom calls (xla_ops.ts)",
  allReduceDone: "XLA's async forms: custom calls (xla_ops.ts)",
  collectivePermuteStart: "XLA's async forms: custom calls (xla_ops.ts)",
  collectivePermuteDone: "XLA's async forms: custom calls (xla_ops.ts)",
} as const satisfies Partial<Record<Opcode, string>>;
// Shardy's ops (sdy.*) are lowered by sdy_import.ts.
type Covered = PlainOpcode | keyof typeof LOWER | keyof typeof NOT_IMPORTED_BY_NAME | OpcodeOf<"sdy">;
/** An opcode neither imported nor listed makes this an error that names it. */
const everyOpcodeCovered: [Exclude<Opcode, Covered>] extends [never] ? true : Exclude<Opcode, Covered> = true;
void everyOpcodeCovered;

/** Ops of other dialects kept as custom calls named after the op (no IR opcode exists). */
const KEPT_AS_CUSTOM_CALL = new Set([
  "interpreter.run_parallel", "interpreter.probe", "interpreter.print",
  "check.expect_serialized_eq",
]);

export interface LowerContext {
  readonly importer: Importer;
  readonly b: CompBuilder;
  readonly scope: Scope;
  readonly op: OpNode;
  readonly r: AttrReader;
  readonly operands: readonly Instruction[];
  /** The declared result: one shape, or a tuple for several results. */
  readonly declared: Shape | undefined;
  add<O extends Opcode>(opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O], declared?: Shape): Instruction<O>;
  /**
   * `inst` (just made, unused yet) carrying the op's sdy attributes and unknown
   * attributes, for an op whose result is read out of another instruction (a loop whose
   * results are elements of its state): the result then gets none.
   */
  annotate(inst: Instruction): Instruction;
  fail(message: string): never;
}

export function lowerOp(importer: Importer, b: CompBuilder, scope: Scope, op: OpNode): void {
  const c = importer.c;
  const r = new AttrReader(c, op, importer.meshes);
  const operands = op.operands.map((u) => scope.lookup(u));
  if (op.operandTypes !== undefined && op.operandTypes.length === operands.length) {
    operands.forEach((v, i) => {
      const t = op.operandTypes![i]!;
      if (!sameType(v.shape, t)) {
        throw c.error(`${op.name}: operand ${i} (%${op.operands[i]!.name}) has type ${mlirOf(v.shape)}, but the op's signature says ${mlirOf(t)}`, op.operands[i]!.offset);
      }
    });
  }
  const n = resultCount(op);
  if (op.resultTypes.length !== n && !(n === 0)) {
    throw c.error(`${op.name}: ${n} result name(s) but ${op.resultTypes.length} result type(s)`, op.offset);
  }
  const declared = n === 0 ? undefined : n === 1 ? op.resultTypes[0] : tupleShape(op.resultTypes);
  const firstName = op.results[0]?.name;
  const extraAttrs = frontendAttributesOf(op);
  const annotated = (inst: Instruction): Instruction => {
    const unknownAttributes = unknownAttributesOf(op, r);
    // XLA's HloSharding text (`mhlo.sharding = "{replicated}"`) is the instruction's sharding, as HLO text's `sharding=`.
    const xlaSharding = op.attrs.get("mhlo.sharding");
    return b.withSdyValues(inst, {
      ...sdyValuesOf(c, op), ...(unknownAttributes !== undefined ? { unknownAttributes } : {}),
      ...(xlaSharding?.kind === "string" ? { sharding: xlaSharding.value } : {}),
    });
  };
  let carrier: Instruction | undefined;
  const ctx: LowerContext = {
    importer, b, scope, op, r, operands, declared,
    add: (opcode, ops, attrs, decl) => b.add(opcode, ops, attrs, decl, op.offset, firstName, extraAttrs, op.name),
    annotate: (inst) => (carrier = annotated(inst)),
    fail: (m) => r.fail(m),
  };
  const result = lowerOne(ctx);
  bindResults(ctx, result === undefined || carrier !== undefined ? result : annotated(result));
}

/**
 * The attributes named without a dialect that the op's lowering did not ask for (MLIR's
 * discardable attributes, which no dialect interprets), as text. Dialect-prefixed ones
 * are frontendAttributesOf's.
 */
function unknownAttributesOf(op: OpNode, r: AttrReader): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [k, v] of op.attrs) {
    if (k.includes(".") || r.asked.has(k) || k === "__positional") continue;
    (out ??= {})[k] = v.kind === "unit" ? "unit" : attrToText(v);
  }
  return out;
}

function mlirOf(s: Shape): string {
  return s.kind === "array" ? `${s.elementType}[${s.dimensions.join(",")}]` : s.kind;
}

/** Types equal, where a `?` dimension in the signature matches anything. */
function sameType(a: Shape, b: Shape): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "token") return true;
  if (a.kind === "tuple") {
    const bt = b as typeof a;
    return a.elements.length === bt.elements.length && a.elements.every((e, i) => sameType(e, bt.elements[i]!));
  }
  const ba = b as ArrayShape;
  return a.elementType === ba.elementType && a.dimensions.length === ba.dimensions.length &&
    a.dimensions.every((d, i) => d === ba.dimensions[i] || a.dynamicDimensions[i] || ba.dynamicDimensions[i]);
}

/** Attributes the IR has no field for (mhlo.* hints, sdy entries other than the typed ones) are kept as text. */
const INTERPRETED_ELSEWHERE = /^(__positional|result_accuracy|mhlo\.attributes|mhlo\.version|mhlo\.frontend_attributes)$/;
function frontendAttributesOf(op: OpNode): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [k, v] of op.attrs) {
    if (!k.includes(".") || INTERPRETED_ELSEWHERE.test(k) || SDY_TYPED_ATTRIBUTES.has(k) || (k === "mhlo.sharding" && v.kind === "string")) continue;
    if (k === "mhlo.backend_config" && op.name === "stablehlo.custom_call" && v.kind === "dict") continue; // customCall's typedFfi
    (out ??= {})[k] = attrToText(v);
  }
  // XLA's frontend attributes: a dictionary of strings.
  const xla = op.attrs.get("mhlo.frontend_attributes");
  if (xla?.kind === "dict") {
    for (const [k, v] of xla.entries) (out ??= {})[k] = v.kind === "string" ? v.value : attrToText(v);
  }
  return out;
}

function bindResults(ctx: LowerContext, result: Instruction | undefined): void {
  const { op, scope, b } = ctx;
  const n = resultCount(op);
  if (n === 0) return;
  if (result === undefined) return ctx.fail("produces no value");
  const keys: [string, number][] = [];
  for (const g of op.results) for (let i = 0; i < g.count; i++) keys.push([g.name, i]);
  if (n === 1) {
    scope.define(keys[0]![0], keys[0]![1], result);
    return;
  }
  const shape = result.shape;
  if (shape.kind !== "tuple" || shape.elements.length !== n) return ctx.fail(`expected ${n} results`);
  keys.forEach(([name, i], k) => scope.define(name, i, b.project(result, k, shape.elements[k], op.offset, `${name}.${i}`)));
}

/** Values of a constant operand (dynamic_* ops need their shape operands to be constants). */
export function constantInts(ctx: LowerContext, inst: Instruction | undefined, what: string): number[] {
  if (inst === undefined) return ctx.fail(`${what} is missing (too few operands)`);
  if (inst.opcode !== "constant") return ctx.fail(`${what} must be a constant (dynamic shapes are not supported)`);
  ctx.b.dropIfUnused(inst);
  return (inst as Instruction<"constant">).attrs.literal.values().map((v) => Number(v));
}

/** The declared result `i`, a tensor; with `staticShape`, one whose dimensions are all static (the op's sizes come from it). */
export function resultArray(ctx: LowerContext, i = 0, staticShape = true): ArrayShape {
  const t = ctx.op.resultTypes[i];
  if (t === undefined || t.kind !== "array") return ctx.fail(`result ${i} must be a tensor`);
  if (staticShape && t.dynamicDimensions.some((d) => d)) {
    return ctx.fail(`the result type ${shapeToMlir(t)} must be static (a shape-polymorphic program says its sizes with the dynamic_* ops)`);
  }
  return t;
}

function operandArray(ctx: LowerContext, i: number): ArrayShape {
  const s = ctx.operands[i]?.shape;
  if (s === undefined || s.kind !== "array") return ctx.fail(`operand ${i} must be a tensor`);
  return s;
}

/** Lowers a region of this op in "plain" mode (reducers, comparators): no captured non-constants. */
function plainRegion(ctx: LowerContext, i: number): Computation {
  const region = ctx.op.regions[i];
  if (region === undefined) return ctx.fail(`missing region ${i}`);
  return ctx.importer.region(region, ctx.b.name, { kind: "plain" }, ctx.scope);
}

function lowerOne(ctx: LowerContext): Instruction | undefined {
  const { op, r, operands } = ctx;
  const name = op.name;
  if (name.startsWith("check.")) return lowerCheck(ctx);
  if (name.startsWith("chlo.")) return lowerChlo(ctx);
  if (name.startsWith("sdy.")) return lowerSdyOp(ctx);
  if (KEPT_AS_CUSTOM_CALL.has(name)) return keptCustomCall(ctx, name);
  if (name === "func.call") {
    const callee = r.get("callee");
    if (callee?.kind !== "symbol") return ctx.fail("missing callee");
    return ctx.add("call", operands, { toApply: ctx.importer.func(callee.name, op.offset) }, ctx.declared);
  }
  const opcode = STABLEHLO_TO_OPCODE.get(name);
  if (opcode !== undefined && PLAIN_OPS.has(opcode)) {
    return ctx.add(opcode as "abs", operands, readAccuracy(ctx) as OpAttributes["abs"], ctx.declared);
  }
  const sugar = SUGAR[name];
  if (sugar !== undefined) return sugar(ctx);
  if (opcode !== undefined) {
    const lower = (LOWER as Partial<Record<Opcode, Lower>>)[opcode];
    if (lower !== undefined) return lower(ctx);
  }
  if (ctx.importer.options.allowUnregisteredDialect && !REGISTERED_DIALECTS.has(name.split(".")[0]!)) {
    return keptCustomCall(ctx, `${UNREGISTERED_OP_PREFIX}${name}`);
  }
  return ctx.fail(`unknown operation '${name}'`);
}

/** Dialects whose ops xlats knows; an op of any other is unregistered (kept only under allowUnregisteredDialect). */
const REGISTERED_DIALECTS = new Set(["builtin", "func", "stablehlo", "chlo", "mhlo", "sdy", "check", "interpreter"]);

/** The op's `result_accuracy = #stablehlo.result_accuracy<...>`, when it has one. */
export function readAccuracy(ctx: LowerContext): Pick<OpAttributes["exp"], "resultAccuracy"> {
  const a = ctx.r.get("result_accuracy");
  if (a === undefined) return {};
  if (a.kind !== "struct" || a.name !== "stablehlo.result_accuracy") return ctx.fail(`result_accuracy must be #stablehlo.result_accuracy<...>, got ${attrToText(a)}`);
  const num = (k: string): number => {
    const v = a.fields.get(k);
    return v?.kind === "float" ? v.value : v?.kind === "int" ? Number(v.value) : 0;
  };
  const modeAttr = a.fields.get("mode");
  const mode = modeAttr?.kind === "enum" ? modeAttr.value : undefined;
  if (mode !== "DEFAULT" && mode !== "HIGHEST" && mode !== "TOLERANCE") {
    return ctx.fail(`result_accuracy: mode must be #stablehlo.result_accuracy_mode<DEFAULT|HIGHEST|TOLERANCE>, got ${modeAttr === undefined ? "nothing" : attrToText(modeAttr)}`);
  }
  return { resultAccuracy: { atol: num("atol"), rtol: num("rtol"), ulps: num("ulps"), mode } };
}

// ---------------------------------------------------------------- per-opcode lowering

type Lower = (ctx: LowerContext) => Instruction | undefined;

const LOWER = {
  compare: (ctx) => {
    const pos = ctx.r.positional().filter((p) => p.kind === "enum").map((p) => (p as { value: string }).value);
    const direction = ctx.r.enumValue("comparison_direction", pos[0]) as ComparisonDirection;
    const type = ctx.r.get("compare_type") ? ctx.r.enumValue("compare_type") : pos[1];
    // NOTYPE: the comparison the element type has by default, as no compare_type at all.
    const attrs: OpAttributes["compare"] = type && type !== "NOTYPE" ? { direction, compareType: type as ComparisonType } : { direction };
    return ctx.add("compare", ctx.operands, attrs, ctx.declared);
  },
  convert: (ctx) => ctx.add("convert", ctx.operands, { elementType: resultArray(ctx, 0, false).elementType }, ctx.declared),
  bitcastConvert: (ctx) => ctx.add("bitcastConvert", ctx.operands, { elementType: resultArray(ctx, 0, false).elementType }, ctx.declared),
  uniformQuantize: (ctx) => {
    const quantization = resultArray(ctx, 0, false).quantization;
    if (quantization === undefined) return ctx.fail("the result must be a quantized tensor (tensor<...x!quant.uniform<...>>)");
    return ctx.add("uniformQuantize", ctx.operands, { quantization }, ctx.declared);
  },
  uniformDequantize: (ctx) => ctx.add("uniformDequantize", ctx.operands, {}, ctx.declared),
  reducePrecision: (ctx) => {
    const fmt = ctx.r.get("format");
    if (fmt?.kind === "enum") {
      const m = /^e([0-9]+)m([0-9]+)$/.exec(fmt.value);
      if (!m) return ctx.fail(`bad format '${fmt.value}'`);
      return ctx.add("reducePrecision", ctx.operands, { exponentBits: Number(m[1]), mantissaBits: Number(m[2]) }, ctx.declared);
    }
    return ctx.add("reducePrecision", ctx.operands,
      { exponentBits: ctx.r.int("exponent_bits"), mantissaBits: ctx.r.int("mantissa_bits") }, ctx.declared);
  },
  constant: (ctx) => {
    const v = ctx.r.get("value") ?? ctx.r.positional()[0];
    if (v?.kind !== "dense") return ctx.fail("expected a dense<...> value");
    // A quantized constant states its stored integers: `stablehlo.constant() {value = dense<[2, 4]> : tensor<2xi8>} : () -> tensor<2x!quant.uniform<i8:f32, 0.5>>`.
    const declared = ctx.declared;
    const quantization = declared?.kind === "array" ? declared.quantization : undefined;
    const storedAsDeclared = quantization !== undefined && v.literal.shape.kind === "array" && v.literal.shape.quantization === undefined
      && v.literal.elementType === quantization.storageType;
    return ctx.add("constant", [], { literal: storedAsDeclared ? v.literal.withQuantization(quantization) : v.literal }, declared);
  },
  iota: (ctx) => ctx.add("iota", [], { shape: resultArray(ctx), iotaDimension: ctx.r.int(["iota_dimension", "dim"]) }, ctx.declared),
  reshape: (ctx) => ctx.add("reshape", ctx.operands, { dimensions: resultArray(ctx).dimensions }, ctx.declared),
  dynamicReshape: (ctx) => lowerDynamicReshape(ctx),
  transpose: (ctx) => ctx.add("transpose", ctx.operands, { permutation: ctx.r.ints(["permutation", "dims"]) }, ctx.declared),
  broadcastInDim: (ctx) => ctx.add("broadcastInDim", ctx.operands,
    { dimensions: resultArray(ctx).dimensions, broadcastDimensions: ctx.r.ints(["broadcast_dimensions", "dims"]) }, ctx.declared),
  slice: (ctx) => ctx.add("slice", ctx.operands, {
    startIndices: ctx.r.ints("start_indices"), limitIndices: ctx.r.ints("limit_indices"),
    strides: ctx.r.ints("strides", ctx.r.ints("start_indices").map(() => 1)),
  }, ctx.declared),
  dynamicSlice: (ctx) => ctx.add("dynamicSlice", ctx.operands, { sliceSizes: ctx.r.ints(["slice_sizes", "sizes"]) }, ctx.declared),
  pad: (ctx) => ctx.add("pad", ctx.operands, {
    edgePaddingLow: ctx.r.ints(["edge_padding_low", "low"]), edgePaddingHigh: ctx.r.ints(["edge_padding_high", "high"]),
    interiorPadding: ctx.r.ints(["interior_padding", "interior"]),
  }, ctx.declared),
  concatenate: (ctx) => ctx.add("concatenate", ctx.operands, { dimension: ctx.r.int(["dimension", "dim"]) }, ctx.declared),
  reverse: (ctx) => ctx.add("reverse", ctx.operands, { dimensions: ctx.r.ints(["dimensions", "dims"]) }, ctx.declared),
  gather: (ctx) => lowerGather(ctx, ctx.r.ints("slice_sizes"), ctx.operands),
  scatter: (ctx) => {
    const f = ctx.r.struct("scatter_dimension_numbers");
    const ints = (k: string): number[] => (f.get(k) ? toInts(f.get(k)!) ?? ctx.fail(`bad ${k}`) : []);
    return ctx.add("scatter", ctx.operands, {
      dimensionNumbers: {
        updateWindowDims: ints("update_window_dims"), insertedWindowDims: ints("inserted_window_dims"),
        inputBatchingDims: ints("input_batching_dims"), scatterIndicesBatchingDims: ints("scatter_indices_batching_dims"),
        scatterDimsToOperandDims: ints("scatter_dims_to_operand_dims"), indexVectorDim: toInt(f.get("index_vector_dim")) ?? 0,
      },
      indicesAreSorted: ctx.r.bool("indices_are_sorted"), uniqueIndices: ctx.r.bool("unique_indices"),
      toApply: plainRegion(ctx, 0),
    }, ctx.declared);
  },
  sort: (ctx) => ctx.add("sort", ctx.operands, {
    dimension: ctx.r.int("dimension", -1), isStable: ctx.r.bool("is_stable"), comparator: plainRegion(ctx, 0),
  }, ctx.declared),
  setDimensionSize: (ctx) => ctx.add("setDimensionSize", ctx.operands, { dimension: ctx.r.int(["dimension", "dim"]) }, ctx.declared),
  getDimensionSize: (ctx) => ctx.add("getDimensionSize", ctx.operands, { dimension: ctx.r.int(["dimension", "dim"]) }, ctx.declared),
  reduce: (ctx) => ctx.add("reduce", ctx.operands, { dimensions: ctx.r.ints("dimensions"), toApply: plainRegion(ctx, 0) }, ctx.declared),
  reduceWindow: (ctx) => {
    const rank = operandArray(ctx, 0).dimensions.length;
    const window = makeWindow(rank, ctx.r.ints("window_dimensions"), ctx.r.ints("window_strides", []), ctx.r.matrix("padding", []),
      ctx.r.ints("base_dilations", []), ctx.r.ints("window_dilations", []));
    return ctx.add("reduceWindow", ctx.operands, { window, toApply: plainRegion(ctx, 0) }, ctx.declared);
  },
  selectAndScatter: (ctx) => {
    const rank = operandArray(ctx, 0).dimensions.length;
    const window = makeWindow(rank, ctx.r.ints("window_dimensions"), ctx.r.ints("window_strides", []), ctx.r.matrix("padding", []));
    return ctx.add("selectAndScatter", ctx.operands,
      { window, select: plainRegion(ctx, 0), scatter: plainRegion(ctx, 1) }, ctx.declared);
  },
  map: (ctx) => ctx.add("map", ctx.operands, { dimensions: ctx.r.ints("dimensions"), toApply: plainRegion(ctx, 0) }, ctx.declared),
  dot: (ctx) => {
    const v = ctx.r.get("dot_dimension_numbers");
    const get = (struct: string, pretty: string, side: 0 | 1): number[] => {
      if (v?.kind === "struct") {
        const x = v.fields.get(struct);
        return x ? toInts(x) ?? ctx.fail(`bad ${struct}`) : [];
      }
      const p = ctx.r.get(pretty);
      if (p === undefined) return [];
      if (p.kind !== "pair") return ctx.fail(`${pretty} must be '[...] x [...]'`);
      return toInts(side === 0 ? p.lhs : p.rhs) ?? ctx.fail(`bad ${pretty}`);
    };
    const attrs: OpAttributes["dot"] = {
      dimensionNumbers: {
        lhsBatchDimensions: get("lhs_batching_dimensions", "batching_dims", 0),
        rhsBatchDimensions: get("rhs_batching_dimensions", "batching_dims", 1),
        lhsContractingDimensions: get("lhs_contracting_dimensions", "contracting_dims", 0),
        rhsContractingDimensions: get("rhs_contracting_dimensions", "contracting_dims", 1),
      },
      precisionConfig: ctx.r.precision(),
      ...preferredElementType(ctx),
    };
    // dot_general's own attribute, which the IR has no field for (not an unknown one).
    ctx.r.own("algorithm");
    return ctx.add("dot", ctx.operands, attrs, ctx.declared);
  },
  convolution: (ctx) => lowerConvolution(ctx, ctx.operands, undefined),
  fft: (ctx) => ctx.add("fft", ctx.operands, {
    fftType: ctx.r.enumValue(["fft_type", "type"]) as OpAttributes["fft"]["fftType"], fftLength: ctx.r.ints(["fft_length", "length"]),
  }, ctx.declared),
  cholesky: (ctx) => ctx.add("cholesky", ctx.operands, { lower: ctx.r.bool("lower") }, ctx.declared),
  triangularSolve: (ctx) => ctx.add("triangularSolve", ctx.operands, {
    leftSide: ctx.r.bool("left_side"), lower: ctx.r.bool("lower"), unitDiagonal: ctx.r.bool("unit_diagonal"),
    transposeA: ctx.r.enumValue("transpose_a", "NO_TRANSPOSE") as OpAttributes["triangularSolve"]["transposeA"],
  }, ctx.declared),
  batchNormTraining: (ctx) => batchNorm(ctx, "batchNormTraining"),
  batchNormInference: (ctx) => batchNorm(ctx, "batchNormInference"),
  batchNormGrad: (ctx) => batchNorm(ctx, "batchNormGrad"),
  getTupleElement: (ctx) => ctx.add("getTupleElement", ctx.operands, { index: ctx.r.int("index") }, ctx.declared),
  composite: (ctx) => {
    const nameAttr = ctx.r.get("name") ?? ctx.r.positional().find((p) => p.kind === "string");
    const decomposition = ctx.r.get("decomposition");
    if (nameAttr?.kind !== "string" || decomposition?.kind !== "symbol") return ctx.fail("needs a name and a decomposition");
    const attrsDict = ctx.r.get("composite_attributes");
    const compositeAttributes: Record<string, OpAttributes["composite"]["compositeAttributes"][string]> = {};
    if (attrsDict?.kind === "dict") for (const [k, v] of attrsDict.entries) compositeAttributes[k] = toAttributeValue(ctx, v);
    return ctx.add("composite", ctx.operands, {
      name: nameAttr.value, decomposition: ctx.importer.func(decomposition.name, ctx.op.offset),
      version: ctx.r.int("version", 0), compositeAttributes,
    }, ctx.declared);
  },
  conditional: (ctx) => lowerBranches(ctx),
  while: (ctx) => lowerWhile(ctx),
  customCall: (ctx) => {
    const target = ctx.r.get("call_target_name") ?? ctx.r.positional().find((p) => p.kind === "symbol");
    const targetName = target?.kind === "string" ? target.value : target?.kind === "symbol" ? target.name : ctx.fail("missing target");
    const xlaOpcode = xlaOpcodeOfTarget(targetName);
    if (xlaOpcode !== undefined) return lowerXlaCustomCall(ctx, xlaOpcode);
    const bc = ctx.r.get("backend_config");
    // An empty backend_config is none to XLA, but MLIR prints one given explicitly back: it stays an unknown attribute.
    if (bc?.kind === "string" && bc.value === "") ctx.r.asked.delete("backend_config");
    const called = ctx.r.get("called_computations");
    const symbols = called?.kind === "list"
      ? called.items.map((s) => (s.kind === "symbol" ? s.name : ctx.fail("bad called_computations")))
      : [];
    const calledComputations = symbols.filter((n) => ctx.importer.hasFunc(n)).map((n) => ctx.importer.func(n, ctx.op.offset));
    const undefinedCallees = symbols.filter((n) => !ctx.importer.hasFunc(n));
    // JAX writes a typed-FFI call's attributes as `mhlo.backend_config = {...}` next to an empty `backend_config`.
    const ffi = ctx.op.attrs.get("mhlo.backend_config");
    const typedFfi = ffi?.kind === "dict" && (bc === undefined || (bc.kind === "string" && bc.value === ""));
    if (ffi?.kind === "dict" && !typedFfi) return ctx.fail("has both backend_config and an mhlo.backend_config dictionary");
    return ctx.add("customCall", ctx.operands, {
      target: targetName, resultShape: ctx.declared ?? tupleShape([]),
      backendConfig: typedFfi ? attrToText(ffi) : bc === undefined ? "" : bc.kind === "string" ? bc.value : attrToText(bc),
      hasSideEffect: ctx.r.bool("has_side_effect"), calledComputations, ...(undefinedCallees.length > 0 ? { undefinedCallees } : {}),
      ...(typedFfi ? { typedFfi: true as const } : {}),
    }, ctx.declared ?? tupleShape([]));
  },
  optimizationBarrier: (ctx) => {
    if (ctx.operands.length === 1) return ctx.add("optimizationBarrier", ctx.operands, {}, ctx.declared);
    const t = ctx.add("tuple", ctx.operands, {}, tupleShape(ctx.operands.map((o) => o.shape)));
    return ctx.add("optimizationBarrier", [t], {}, ctx.declared);
  },
  rngBitGenerator: (ctx) => ctx.add("rngBitGenerator", ctx.operands, {
    algorithm: ctx.r.enumValue(["rng_algorithm", "algorithm"], "DEFAULT") as RandomAlgorithm, shape: resultArray(ctx, 1),
  }, ctx.declared),
  rng: (ctx) => {
    // The sizes come from the static result type (as XLA reads the op); a constant shape operand must agree with it,
    // another value (computed by a client that knew the sizes anyway) is not read.
    const shape = resultArray(ctx);
    const given = ctx.operands[2];
    if (given?.opcode === "constant") {
      const sizes = constantInts(ctx, given, "shape");
      if (sizes.length !== shape.dimensions.length || sizes.some((d, i) => d !== shape.dimensions[i])) {
        return ctx.fail(`shape [${sizes.join(", ")}] does not match the result type ${shapeToMlir(shape)}`);
      }
    } else if (given === undefined) return ctx.fail("shape is missing (too few operands)");
    return ctx.add("rng", ctx.operands.slice(0, 2), {
      distribution: ctx.r.enumValue(["rng_distribution", "distribution"]) as RandomDistribution, shape,
    }, ctx.declared);
  },
  allGather: (ctx) => {
    const dim = ctx.r.int("all_gather_dim");
    const groups = collective(ctx);
    const shards = declaredShardCount(ctx, dim, groups.replicaGroups, (operand, result) => result / operand);
    return ctx.add("allGather", packOperands(ctx), { ...groups, allGatherDimension: dim, ...shards }, ctx.declared);
  },
  allReduce: (ctx) => ctx.add("allReduce", packOperands(ctx), { ...collective(ctx), toApply: plainRegion(ctx, 0) }, ctx.declared),
  collectiveReduce: (ctx) => ctx.add("collectiveReduce", ctx.operands, { ...collective(ctx), toApply: plainRegion(ctx, 0) }, ctx.declared),
  reduceScatter: (ctx) => {
    const dim = ctx.r.int("scatter_dimension");
    const groups = collective(ctx);
    const shards = declaredShardCount(ctx, dim, groups.replicaGroups, (operand, result) => operand / result);
    return ctx.add("reduceScatter", ctx.operands, { ...groups, scatterDimension: dim, toApply: plainRegion(ctx, 0), ...shards }, ctx.declared);
  },
  allToAll: (ctx) => ctx.add("allToAll", ctx.operands, {
    ...collective(ctx), splitDimension: ctx.r.int("split_dimension"), concatDimension: ctx.r.int("concat_dimension"),
    splitCount: ctx.r.int("split_count"),
  }, ctx.declared),
  collectivePermute: (ctx) => {
    const ch = ctx.r.channel();
    const pairs = ctx.r.matrix("source_target_pairs").map((p) => [p[0]!, p[1]!] as const);
    return ctx.add("collectivePermute", ctx.operands,
      ch ? { sourceTargetPairs: pairs, channelId: ch.handle } : { sourceTargetPairs: pairs }, ctx.declared);
  },
  collectiveBroadcast: (ctx) => {
    const ch = ctx.r.channel();
    const replicaGroups = ctx.r.replicaGroups();
    const attrs: OpAttributes["collectiveBroadcast"] = {
      replicaGroups, ...(ch ? { channelId: ch.handle } : {}), ...(ctx.r.bool("has_dynamic_root") ? { hasDynamicRoot: true } : {}),
    };
    return ctx.add("collectiveBroadcast", ctx.operands, attrs, ctx.declared);
  },
  infeed: (ctx) => {
    const data = ctx.op.resultTypes.slice(0, -1);
    const shape = data.length === 1 ? data[0]! : tupleShape(data);
    const inst = ctx.add("infeed", ctx.operands, { shape, config: ctx.r.string("infeed_config", "") }, tupleShape([shape, ctx.op.resultTypes.at(-1)!]));
    return flattenDataToken(ctx, inst, data.length);
  },
  outfeed: (ctx) => {
    const data = ctx.operands.slice(0, -1);
    const value = data.length === 1 ? data[0]! : ctx.add("tuple", data, {}, tupleShape(data.map((d) => d.shape)));
    return ctx.add("outfeed", [value, ctx.operands.at(-1)!], { outfeedShape: value.shape, config: ctx.r.string("outfeed_config", "") }, ctx.declared);
  },
  send: (ctx) => {
    const data = ctx.operands.slice(0, -1);
    const value = data.length === 1 ? data[0]! : ctx.add("tuple", data, {}, tupleShape(data.map((d) => d.shape)));
    return ctx.add("send", [value, ctx.operands.at(-1)!], { channel: channelHandle(ctx), isHostTransfer: ctx.r.bool("is_host_transfer") }, ctx.declared);
  },
  recv: (ctx) => {
    const data = ctx.op.resultTypes.slice(0, -1);
    const shape = data.length === 1 ? data[0]! : tupleShape(data);
    const inst = ctx.add("recv", ctx.operands, { channel: channelHandle(ctx), shape, isHostTransfer: ctx.r.bool("is_host_transfer") },
      tupleShape([shape, ctx.op.resultTypes.at(-1)!]));
    return flattenDataToken(ctx, inst, data.length);
  },
} satisfies Partial<Record<Opcode, Lower>>;

/** (data tuple, token) -> (data..., token) when several data values came from the text. */
function flattenDataToken(ctx: LowerContext, inst: Instruction, nData: number): Instruction {
  if (nData === 1) return inst;
  const data = ctx.add("getTupleElement", [inst], { index: 0 }, elementsOf(inst.shape)[0]);
  const token = ctx.add("getTupleElement", [inst], { index: 1 }, elementsOf(inst.shape)[1]);
  const parts: Instruction[] = [];
  for (let i = 0; i < nData; i++) parts.push(ctx.add("getTupleElement", [data], { index: i }, elementsOf(data.shape)[i]));
  return ctx.add("tuple", [...parts, token], {}, ctx.declared);
}

function channelHandle(ctx: LowerContext): OpAttributes["send"]["channel"] {
  const ch = ctx.r.channel() ?? { handle: 0, type: 1 };
  const type = ch.type === 2 ? "DEVICE_TO_HOST" : ch.type === 3 ? "HOST_TO_DEVICE" : "DEVICE_TO_DEVICE";
  return { handle: ch.handle, type };
}

/** Several operands of a collective: XLA's form takes them as they are (variadic). */
function packOperands(ctx: LowerContext): readonly Instruction[] {
  return ctx.operands;
}

/**
 * The shard count an all-gather / reduce-scatter was written for, read off its declared
 * result type: in cross-replica-and-partition mode a process group spans every
 * partition, so it can be larger than the listed replica group. Returned only when it
 * differs from what the replica groups imply (the shape rule's default).
 */
function declaredShardCount(
  ctx: LowerContext, dim: number, groups: OpAttributes["allGather"]["replicaGroups"], ratio: (operand: number, result: number) => number,
): { shardCount?: number } {
  const operand = ctx.operands[0]?.shape;
  const result = ctx.op.resultTypes[0];
  if (operand?.kind !== "array" || result?.kind !== "array") return {};
  const o = operand.dimensions[dim];
  const r = result.dimensions[dim];
  if (o === undefined || r === undefined || o === 0 || r === 0) return {};
  const n = ratio(o, r);
  if (!Number.isInteger(n) || n < 1) return {};
  const sizes = new Set(groups.map((g) => g.filter((id) => id !== -1).length));
  return sizes.size === 1 && sizes.has(n) ? {} : { shardCount: n };
}

type CollectiveFields = {
  replicaGroups: OpAttributes["allReduce"]["replicaGroups"]; replicaGroupMeshAxes?: ReplicaGroupMeshAxes; channelId?: number; channelType?: number; useGlobalDeviceIds?: boolean;
};

function collective(ctx: LowerContext): CollectiveFields {
  const ch = ctx.r.channel();
  const out: CollectiveFields = {
    replicaGroups: ctx.r.replicaGroups(),
  };
  const byAxes = ctx.r.replicaGroupMeshAxes();
  if (byAxes !== undefined) out.replicaGroupMeshAxes = byAxes;
  if (ch) out.channelId = ch.handle;
  if (ch && ch.type !== 1) out.channelType = ch.type;
  if (ctx.r.get("use_global_device_ids")) out.useGlobalDeviceIds = true;
  return out;
}

function batchNorm(ctx: LowerContext, opcode: "batchNormTraining" | "batchNormInference" | "batchNormGrad"): Instruction {
  return ctx.add(opcode, ctx.operands, { epsilon: ctx.r.float("epsilon"), featureIndex: ctx.r.int("feature_index") }, ctx.declared);
}

function toAttributeValue(ctx: LowerContext, v: Attr): OpAttributes["composite"]["compositeAttributes"][string] {
  switch (v.kind) {
    case "int": {
      const type = v.type === undefined ? undefined : elementTypeFromMlir(v.type);
      return type ? { kind: "int", value: v.value, type } : { kind: "int", value: v.value };
    }
    case "float": {
      const type = v.type === undefined ? undefined : elementTypeFromMlir(v.type);
      return type ? { kind: "float", value: v.value, type } : { kind: "float", value: v.value };
    }
    case "bool": return { kind: "bool", value: v.value };
    case "string": return { kind: "string", value: v.value };
    case "list": return { kind: "array", value: v.items.map((x) => toAttributeValue(ctx, x)) };
    case "denseArray": return { kind: "array", value: v.values.map((x) => ({ kind: "int", value: x })) };
    default: return { kind: "string", value: attrToText(v) };
  }
}


export function lowerGather(ctx: LowerContext, sliceSizes: number[], operands: readonly Instruction[]): Instruction {
  return ctx.add("gather", operands, gatherAttributes(ctx, sliceSizes), ctx.declared);
}

export function gatherAttributes(ctx: LowerContext, sliceSizes: number[]): OpAttributes["gather"] {
  const f = ctx.r.struct("dimension_numbers");
  const ints = (k: string): number[] => (f.get(k) ? toInts(f.get(k)!) ?? ctx.fail(`bad ${k}`) : []);
  return {
    dimensionNumbers: {
      offsetDims: ints("offset_dims"), collapsedSliceDims: ints("collapsed_slice_dims"),
      operandBatchingDims: ints("operand_batching_dims"), startIndicesBatchingDims: ints("start_indices_batching_dims"),
      startIndexMap: ints("start_index_map"), indexVectorDim: toInt(f.get("index_vector_dim")) ?? 0,
    },
    sliceSizes, indicesAreSorted: ctx.r.bool("indices_are_sorted"),
  };
}

/**
 * StableHLO states a dot's or convolution's result type outright; XLA's IR says it with
 * preferred_element_type when it differs from the operands' type. A quantized result
 * says it with its quantized type instead (its storage type, often i32 for i8
 * operands, is no element type the dot computes in), which the shape rules take as declared.
 */
function preferredElementType(ctx: LowerContext): { preferredElementType?: ElementType } {
  const declared = ctx.declared;
  const lhs = ctx.operands[0]?.shape;
  if (declared?.kind !== "array" || lhs?.kind !== "array" || declared.elementType === lhs.elementType) return {};
  if (declared.quantization !== undefined) return {};
  return { preferredElementType: declared.elementType };
}

/** convolution, or dynamic_conv with its padding operand `dynamicPadding` (a value known only at run time). */
export function lowerConvolution(
  ctx: LowerContext, operands: readonly Instruction[], padding: number[][] | undefined, dynamicPadding?: Instruction,
): Instruction {
  const dn = ctx.r.get("dimension_numbers", "dim_numbers");
  if (dn === undefined) return ctx.fail("missing dimension_numbers");
  const dimensionNumbers = dn.kind === "struct" && dn.name === "stablehlo.conv" ? convDimsFromStruct(dn.fields) : parseConvDims(attrToText(dn), (m) => ctx.fail(m));
  const spatial = dimensionNumbers.kernelSpatialDimensions.length;
  const kernel = operandArray(ctx, 1);
  const win = ctx.r.get("window");
  const wd = win?.kind === "dict" ? win.entries : new Map<string, Attr>();
  const winInts = (generic: string, pretty: string): number[] | undefined => {
    const v = ctx.r.get(generic) ?? wd.get(pretty);
    return v === undefined ? undefined : toInts(v) ?? ctx.fail(`bad ${generic}`);
  };
  const padAttr = ctx.r.get("padding") ?? wd.get("pad");
  const pad = padding ?? (padAttr === undefined ? undefined
    : padAttr.kind === "list" ? padAttr.items.map((p) => toInts(p) ?? ctx.fail("bad padding")) : ctx.r.matrix(ctx.r.get("padding") ? "padding" : "__none"));
  const reversal = toBools(ctx.r.get("window_reversal") ?? wd.get("reverse"));
  const strides = winInts("window_strides", "stride");
  const lhsDilation = winInts("lhs_dilation", "lhs_dilate");
  const rhsDilation = winInts("rhs_dilation", "rhs_dilate");
  const window = makeWindow(spatial, dimensionNumbers.kernelSpatialDimensions.map((d) => kernel.dimensions[d]!),
    strides, pad, lhsDilation, rhsDilation, reversal);
  const given: [ConvWindowAttribute, unknown][] = [["stride", strides], ["pad", padAttr], ["lhs_dilate", lhsDilation], ["rhs_dilate", rhsDilation], ["reverse", reversal]];
  const spelledWindowAttributes = given.filter(([, v]) => v !== undefined).map(([k]) => k);
  const attrs: OpAttributes["convolution"] = {
    window, dimensionNumbers, featureGroupCount: ctx.r.int("feature_group_count", 1),
    batchGroupCount: ctx.r.int("batch_group_count", 1), precisionConfig: ctx.r.precision(),
    ...preferredElementType(ctx), ...(spelledWindowAttributes.length > 0 ? { spelledWindowAttributes } : {}),
  };
  if (dynamicPadding !== undefined) return ctx.add("dynamicConv", [...operands, dynamicPadding], { ...attrs, shape: resultArray(ctx, 0, false) }, ctx.declared);
  return ctx.add("convolution", operands, attrs, ctx.declared);
}

/**
 * dynamic_reshape(operand, output_shape): a reshape when the shape is a constant; else
 * XLA's dynamic-reshape, which takes one scalar per output dimension and the bounds from
 * the result type. The scalars are read back from the concatenation of reshaped scalars
 * that printing writes (else sliced out of the shape vector).
 */
function lowerDynamicReshape(ctx: LowerContext): Instruction {
  const [operand, shape] = ctx.operands as [Instruction, Instruction | undefined];
  if (shape === undefined) return ctx.fail("needs an output_shape operand");
  if (shape.opcode === "constant") {
    constantInts(ctx, shape, "output_shape");
    return ctx.add("reshape", [operand], { dimensions: resultArray(ctx).dimensions }, ctx.declared);
  }
  const result = ctx.declared;
  if (result?.kind !== "array") return ctx.fail("result must be a tensor");
  const vector = shape.shape;
  if (vector.kind !== "array" || vector.dimensions.length !== 1 || vector.dimensions[0] !== result.dimensions.length) {
    return ctx.fail(`output_shape must be a vector of ${result.dimensions.length} sizes`);
  }
  let sizes: Instruction[];
  const parts = shape.opcode === "concatenate" ? shape.operands : [];
  if (parts.length === result.dimensions.length && parts.every((p) => p.opcode === "reshape" && isScalar(p.operands[0]!))) {
    sizes = parts.map((p) => p.operands[0]!);
    for (const p of [shape, ...parts]) ctx.b.dropIfUnused(p);
  } else {
    const element = (vector as ArrayShape).elementType;
    sizes = result.dimensions.map((_, i) => {
      const one = ctx.add("slice", [shape], { startIndices: [i], limitIndices: [i + 1], strides: [1] }, arrayShape(element, [1]));
      return ctx.add("reshape", [one], { dimensions: [] }, arrayShape(element, []));
    });
  }
  return ctx.add("dynamicReshape", [operand, ...sizes],
    { dimensions: result.dimensions, dynamicDimensions: result.dynamicDimensions }, result);
}

function isScalar(inst: Instruction): boolean {
  return inst.shape.kind === "array" && inst.shape.dimensions.length === 0;
}

/** case / if: each branch gets one operand, the value it captures (a tuple of them when it captures several). */
function lowerBranches(ctx: LowerContext): Instruction {
  const operands: Instruction[] = [ctx.operands[0]!];
  const branches: Computation[] = [];
  for (const region of ctx.op.regions) {
    const captures = freeValues(region).filter((u) => ctx.scope.lookup(u).opcode !== "constant");
    const values = captures.map((u) => ctx.scope.lookup(u));
    operands.push(values.length === 1 ? values[0]! : ctx.add("tuple", values, {}, tupleShape(values.map((v) => v.shape))));
    branches.push(ctx.importer.region(region, ctx.b.name, { kind: "branch", captures }, ctx.scope, ctx.op.resultTypes));
  }
  return ctx.add("conditional", operands, { branches }, ctx.declared);
}

/** while: captured values become extra loop-carried values the body passes through. */
function lowerWhile(ctx: LowerContext): Instruction {
  const [condRegion, bodyRegion] = ctx.op.regions;
  if (condRegion === undefined || bodyRegion === undefined) return ctx.fail("needs cond and body regions");
  const seen = new Set<string>();
  const captures = [...freeValues(condRegion), ...freeValues(bodyRegion)].filter((u) => {
    const k = valueKey(u.name, u.index);
    if (seen.has(k) || ctx.scope.lookup(u).opcode === "constant") return false;
    seen.add(k);
    return true;
  });
  const n = ctx.operands.length;
  const mode = { kind: "state", captures } as const;
  const cond = ctx.importer.region(condRegion, ctx.b.name, mode, ctx.scope);
  const extra = captures.map((u) => ctx.scope.lookup(u));
  const stateTypes = [...ctx.op.resultTypes, ...extra.map((e) => e.shape)];
  const body = ctx.importer.region(bodyRegion, ctx.b.name, mode, ctx.scope, ctx.op.resultTypes);
  if (n === 1 && captures.length === 0) return ctx.add("while", ctx.operands, { condition: cond, body }, ctx.declared);
  // The body returns (results...); append the captured values, read back from the state.
  const passBody = appendPassThrough(body, n, captures.length);
  const init = ctx.add("tuple", [...ctx.operands, ...extra], {}, tupleShape(stateTypes));
  const made = ctx.add("while", [init], { condition: cond, body: passBody }, tupleShape(stateTypes));
  if (captures.length === 0) return made;
  // The loop itself carries the op's shardings (one per loop value), not the values read out of its state.
  const loop = ctx.annotate(made);
  const parts: Instruction[] = [];
  for (let i = 0; i < n; i++) parts.push(ctx.add("getTupleElement", [loop], { index: i }, stateTypes[i]));
  return n === 1 ? parts[0]! : ctx.add("tuple", parts, {}, ctx.declared);
}

/** A copy of `body` whose root also returns state elements n..n+extra-1 unchanged. */
function appendPassThrough(body: Computation, n: number, extra: number): Computation {
  if (extra === 0 && n > 1) return body;
  const param = body.parameters[0]!;
  const state = elementsOf(param.shape);
  // Fresh ids and names: the body may have dropped unused values, so its instruction count is no guide.
  const f = factoryFor(body);
  const rootParts: Instruction[] = n === 1 ? [body.root] : [...body.root.operands];
  for (let j = 0; j < extra; j++) {
    rootParts.push(f.placeUnchecked("getTupleElement", [param], { index: n + j }, state[n + j]!, { name: `pass.${j}` }));
  }
  const root = f.placeUnchecked("tuple", rootParts, {}, tupleShape(rootParts.map((p) => p.shape)), { name: "state.next" });
  return withInstructions(body, [...body.instructions, ...f.created], root);
}

// ---------------------------------------------------------------- sugar

const SUGAR: Record<string, Lower> = {
  "stablehlo.if": (ctx) => lowerBranches(ctx),
  "stablehlo.broadcast": (ctx) => {
    const sizes = ctx.r.ints(["broadcast_sizes", "sizes"]);
    const rank = operandArray(ctx, 0).dimensions.length;
    const dims = Array.from({ length: rank }, (_, i) => sizes.length + i);
    return ctx.add("broadcastInDim", ctx.operands, { dimensions: resultArray(ctx).dimensions, broadcastDimensions: dims }, ctx.declared);
  },
  ...DYNAMIC_SUGAR,
  "stablehlo.dot": (ctx) => {
    const lhsRank = operandArray(ctx, 0).dimensions.length;
    return ctx.add("dot", ctx.operands, {
      dimensionNumbers: {
        lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [lhsRank - 1], rhsContractingDimensions: [0],
      },
      precisionConfig: ctx.r.precision(),
      ...preferredElementType(ctx),
    }, ctx.declared);
  },
  "stablehlo.create_token": (ctx) => ctx.add("afterAll", [], {}, ctx.declared),
};

// ---------------------------------------------------------------- check, sdy and kept ops

/** check.expect_*: a side-effecting custom call "check.expect_eq" / "_almost_eq" / "_close" comparing operand 0 with operand 1. */
function lowerCheck(ctx: LowerContext): Instruction {
  const { op, r } = ctx;
  let base = op.name;
  let operands = [...ctx.operands];
  if (base.endsWith("_const")) {
    base = base.slice(0, -"_const".length);
    const v = r.get("value") ?? r.positional().find((p) => p.kind === "dense");
    if (v?.kind !== "dense") return ctx.fail("expected the expected value dense<...>");
    operands = [operands[0]!, ctx.add("constant", [], { literal: v.literal }, v.literal.shape)];
  }
  const known = ["check.expect_eq", "check.expect_almost_eq", "check.expect_close"];
  if (!known.includes(base)) {
    if (op.name === "check.expect_serialized_eq") return keptCustomCall(ctx, op.name);
    return ctx.fail(`unknown check operation '${op.name}'`);
  }
  if (operands.length !== 2) return ctx.fail("expects two operands");
  const config: string[] = [];
  for (const key of ["tolerance", "min_ulp_difference", "max_ulp_difference"]) {
    const v = r.get(key);
    if (v !== undefined) config.push(`${key}=${v.kind === "float" ? v.text : attrToText(v).replace(/ : .*$/, "")}`);
  }
  return ctx.add("customCall", operands, {
    target: base, resultShape: tupleShape([]), backendConfig: config.join(","), hasSideEffect: true, calledComputations: [],
  }, tupleShape([]));
}

/** An op with no IR opcode: a custom call named after it, attributes as text, regions and symbols as called computations. */
function keptCustomCall(ctx: LowerContext, target: string): Instruction {
  const { op } = ctx;
  const called: Computation[] = op.regions.map((_, i) => plainRegion(ctx, i));
  const symbols: string[] = [];
  const walk = (a: Attr): void => {
    if (a.kind === "symbol") symbols.push(a.name);
    else if (a.kind === "list") a.items.forEach(walk);
    else if (a.kind === "dict") for (const v of a.entries.values()) walk(v);
  };
  for (const [k, v] of op.attrs) {
    ctx.r.asked.add(k);
    walk(v);
  }
  for (const s of symbols) {
    const f = ctx.importer.func(s, op.offset);
    if (!called.includes(f)) called.push(f);
  }
  // Sorted by name, as MLIR keeps an attribute dictionary (and prints it back).
  const attrs = [...op.attrs].filter(([k]) => k !== "__positional").sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const resultShape = ctx.declared ?? tupleShape([]);
  return ctx.add("customCall", ctx.operands, {
    target, resultShape, backendConfig: attrs.length > 0 ? dictToText(attrs) : "", hasSideEffect: true, calledComputations: called,
  }, resultShape);
}

export { Literal, arrayShape };
