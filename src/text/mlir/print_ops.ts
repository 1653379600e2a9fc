// Each opcode as StableHLO prints it: the op's assembly format where StableHLO has one
// (`stablehlo.add %a, %b : tensor<4xf32>`, `stablehlo.slice %x [0:4, 1:2]`,
// `stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]`), else MLIR's generic
// form (`"stablehlo.gather"(%a, %b) <{...}> : (...) -> ...`). Attribute dictionaries
// are sorted by name, as MLIR keeps them. The table is total over opcodes; ops with no
// StableHLO form say so when printed. while, case/if, tuples and sdy ops need the
// printer's view of values and regions and are built in printer.ts.

import type { Computation, Instruction } from "../../ir/computation.js";
import {
  BINARY_OPCODES, SDY_OPCODES, OP_TABLE, tableOf, UNARY_OPCODES, type ConvWindowAttribute, type OpAttributes, type Opcode,
} from "../../ir/opcodes.js";
import type { SdyOpcode } from "../../ir/shape/sdy.js";
import type { DotDimensionNumbers, ReplicaGroupMeshAxes, ResultAccuracy, Window } from "../../ir/attributes.js";
import { XlaError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import type { Shape } from "../../types/shape.js";
import type { Mesh } from "../../sharding/model.js";
import { UNREGISTERED_OP_PREFIX } from "./ast.js";
import { formatMlirScalarFloat, printDenseBody } from "./literal.js";
import { quoteString } from "./print_attr.js";
import type { MOp, MRegion, MValue, OpPrinter } from "./print_model.js";
import { elementTypeToMlir, shapeToMlir } from "./types.js";
import { printsAsXlaCustomCall, xlaCustomCallAttributes } from "./xla_ops.js";
import { maxOf } from "../../types/arrays.js";
import { unquoteMlirString } from "../../types/mlir_string.js";

/** An attribute-dictionary entry: name and printed value (undefined: a unit attribute, printed as its name alone). */
export type AttrEntry = readonly [string, string | undefined];

/** What building one op needs from the printer. */
export interface OpContext {
  readonly inst: Instruction;
  /** Operand values, tuples materialized. */
  readonly operands: readonly MValue[];
  /** One value per StableHLO result. */
  readonly results: readonly MValue[];
  /** Attributes the IR keeps beside the op's own (frontend attributes, sdy shardings). */
  readonly discardable: readonly AttrEntry[];
  /** `@name` of a computation printed as a function. */
  funcName(c: Computation): string;
  /** A computation as a region: its parameters become the entry block's arguments. */
  region(c: Computation): MRegion;
  /** A constant op emitted before this one (operands StableHLO needs that the IR keeps as attributes). */
  constant(literal: Literal): MValue;
}

type Build = (ctx: OpContext) => MOp;

const NO_STABLEHLO_NAME: Partial<Record<Opcode, string>> = {
  erf: "chlo.erf", topK: "chlo.top_k", raggedDot: "chlo.ragged_dot",
  acos: "chlo.acos", acosh: "chlo.acosh", asin: "chlo.asin", asinh: "chlo.asinh", atan: "chlo.atan", atanh: "chlo.atanh", cosh: "chlo.cosh", sinh: "chlo.sinh", lgamma: "chlo.lgamma", digamma: "chlo.digamma", erfInv: "chlo.erf_inv", erfc: "chlo.erfc", besselI1e: "chlo.bessel_i1e", polygamma: "chlo.polygamma", zeta: "chlo.zeta", nextAfter: "chlo.next_after",
};

export function stablehloName(inst: Instruction): string {
  const name = OP_TABLE[inst.opcode].stablehlo ?? NO_STABLEHLO_NAME[inst.opcode];
  if (name === undefined) throw new XlaError(`printStableHlo: ${OP_TABLE[inst.opcode].hlo} has no StableHLO form`);
  return name;
}

// ---------------------------------------------------------------- attribute text

export const arr = (xs: readonly number[]): string => (xs.length === 0 ? "array<i64>" : `array<i64: ${xs.join(", ")}>`);
const list = (xs: readonly number[]): string => `[${xs.join(", ")}]`;
export const i64 = (x: number): string => `${x} : i64`;
export const matrix = (rows: readonly (readonly number[])[], cols: number): string => {
  const lit = Literal.fromValues("s64", [rows.length, cols], rows.flat().map((x) => BigInt(x)));
  return `${printDenseBody(lit)} : tensor<${rows.length}x${cols}xi64>`;
};
export const precision = (p: readonly string[]): string[] =>
  p.length === 0 ? [] : [`precision_config = [${p.map((x) => `#stablehlo<precision ${x}>`).join(", ")}]`];

/** `<name = [..], ...>` fields as StableHLO's struct printer writes them: empty lists and zero integers left out. */
const fields = (entries: [string, readonly number[] | number][]): string =>
  entries.filter(([, v]) => (typeof v === "number" ? v !== 0 : v.length > 0))
    .map(([k, v]) => `${k} = ${typeof v === "number" ? v : list(v)}`).join(", ");

/** `#stablehlo.dot<...>`. */
export function dotDimensionNumbers(d: DotDimensionNumbers): string {
  return `#stablehlo.dot<${fields([["lhs_batching_dimensions", d.lhsBatchDimensions], ["rhs_batching_dimensions", d.rhsBatchDimensions],
    ["lhs_contracting_dimensions", d.lhsContractingDimensions], ["rhs_contracting_dimensions", d.rhsContractingDimensions]])}>`;
}

export function collectiveAttrs(a: { replicaGroups: readonly (readonly number[])[]; channelId?: number; useGlobalDeviceIds?: boolean }): string[] {
  return collectiveEntries(a).map(([k, v]) => (v === undefined ? k : `${k} = ${v}`));
}

/** `#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, ...]>`. */
function stablehloMesh(mesh: Mesh): string {
  return `#stablehlo.mesh<axes = [${mesh.axes.map((a) => `#stablehlo.mesh_axis<name = ${JSON.stringify(a.name)}, size = ${a.size}>`).join(", ")}]>`;
}

function collectiveEntries(a: {
  replicaGroups: readonly (readonly number[])[]; replicaGroupMeshAxes?: ReplicaGroupMeshAxes; channelId?: number; channelType?: number; useGlobalDeviceIds?: boolean;
}): AttrEntry[] {
  const width = Math.max(0, maxOf(a.replicaGroups.map((g) => g.length)));
  const rows = a.replicaGroups.map((g) => [...g, ...new Array<number>(width - g.length).fill(-1)]);
  const byAxes = a.replicaGroupMeshAxes;
  const groups = byAxes !== undefined
    ? `#stablehlo.replica_group_mesh_axes<mesh = ${typeof byAxes.mesh === "string" ? `@${byAxes.mesh}` : stablehloMesh(byAxes.mesh)}, axes = [${byAxes.axes.map((n) => `#stablehlo.axis_ref<name = ${JSON.stringify(n)}>`).join(", ")}]>`
    : rows.length === 0 ? "dense<> : tensor<0x0xi64>" : matrix(rows, width);
  const out: AttrEntry[] = [["replica_groups", groups]];
  if (a.channelId !== undefined) out.push(["channel_handle", `#stablehlo.channel_handle<handle = ${a.channelId}, type = ${a.channelType ?? 1}>`]);
  if (a.useGlobalDeviceIds) out.push(["use_global_device_ids", undefined]);
  return out;
}

/** ` {a = 1 : i64, b}`: entries sorted by name (MLIR's dictionaries are); "" when empty. */
export function attrDict(entries: readonly AttrEntry[]): string {
  if (entries.length === 0) return "";
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return ` {${sorted.map(([k, v]) => (v === undefined ? k : `${k} = ${v}`)).join(", ")}}`;
}

/** `"k = v"` strings (as the XLA custom-call helpers write them) as entries. */
function entriesOf(items: readonly string[]): AttrEntry[] {
  return items.map((s) => {
    const eq = s.indexOf(" = ");
    return eq < 0 ? [s, undefined] : [s.slice(0, eq), s.slice(eq + 3)];
  });
}

const CHANNEL_TYPE = { DEVICE_TO_DEVICE: 1, DEVICE_TO_HOST: 2, HOST_TO_DEVICE: 3 } as const;

const floatText = (x: number): string => formatMlirScalarFloat(x, "f64");

/** `#stablehlo.result_accuracy<...>`, fields at their defaults left out as StableHLO prints them. */
function resultAccuracyText(r: ResultAccuracy): string {
  const parts: string[] = [];
  if (r.atol !== 0) parts.push(`atol = ${floatText(r.atol)}`);
  if (r.rtol !== 0) parts.push(`rtol = ${floatText(r.rtol)}`);
  if (r.ulps !== 0) parts.push(`ulps = ${r.ulps}`);
  parts.push(`mode = #stablehlo.result_accuracy_mode<${r.mode}>`);
  return `#stablehlo.result_accuracy<${parts.join(", ")}>`;
}

function attributeValueText(v: OpAttributes["composite"]["compositeAttributes"][string]): string {
  switch (v.kind) {
    case "int": return v.type ? `${v.value} : ${elementTypeToMlir(v.type)}` : String(v.value);
    case "float": return v.type ? `${formatMlirScalarFloat(v.value, v.type === "f32" ? "f32" : "f64")} : ${elementTypeToMlir(v.type)}` : floatText(v.value);
    case "bool": return String(v.value);
    case "string": return quoteString(v.value);
    case "array": return `[${v.value.map(attributeValueText).join(", ")}]`;
  }
}

// ---------------------------------------------------------------- types

const t = (s: Shape): string => shapeToMlir(s);

/** MLIR's functional type: `(a, b) -> r`, `(a) -> (r1, r2)`. */
export function functionalType(inputs: readonly Shape[], results: readonly Shape[]): string {
  const res = results.length === 1 ? t(results[0]!) : `(${results.map(t).join(", ")})`;
  return `(${inputs.map(t).join(", ")}) -> ${res}`;
}

const fnOf = (ctx: OpContext): string => functionalType(ctx.operands.map((o) => o.type), ctx.results.map((r) => r.type));

/** StableHLO's SameOperandsAndResultType: the one type when every operand has the result's, else the functional type. */
function sameType(ctx: OpContext): string {
  const r = t(ctx.results[0]!.type);
  return ctx.operands.every((o) => t(o.type) === r) ? r : fnOf(ctx);
}

// ---------------------------------------------------------------- op builders

const make = (ctx: OpContext, print: (p: OpPrinter) => string, extra: Partial<MOp> = {}): MOp =>
  ({ results: ctx.results, regions: [], ...extra, print });

/** The op's own attributes not consumed by its format, with the discardable ones, as ` {...}`. */
const dictOf = (ctx: OpContext, own: readonly AttrEntry[] = []): string => attrDict([...own, ...ctx.discardable]);

const accuracy = (ctx: OpContext): AttrEntry[] => {
  const a = (ctx.inst.attrs as { resultAccuracy?: ResultAccuracy }).resultAccuracy;
  return a === undefined || (a.mode === "DEFAULT" && a.atol === 0 && a.rtol === 0 && a.ulps === 0) ? [] : [["result_accuracy", resultAccuracyText(a)]];
};

/** `name %a, %b {attrs} : T` (elementwise ops). */
const elementwise: Build = (ctx) => make(ctx, (p) => `${stablehloName(ctx.inst)} ${p.values(ctx.operands)}${dictOf(ctx, accuracy(ctx))} : ${sameType(ctx)}`);

/** CHLO's unary form: `chlo.acos %x : tensor<f32> -> tensor<f32>`. */
const chloUnary: Build = (ctx) => make(ctx, (p) => `${stablehloName(ctx.inst)} ${p.value(ctx.operands[0]!)}${dictOf(ctx)} : ${t(ctx.operands[0]!.type)} -> ${t(ctx.results[0]!.type)}`);

/** CHLO's binary form: `chlo.zeta %x, %q : tensor<f32>, tensor<f32> -> tensor<f32>`. */
const chloBinary: Build = (ctx) => make(ctx, (p) =>
  `${stablehloName(ctx.inst)} ${p.values(ctx.operands)}${dictOf(ctx)} : ${ctx.operands.map((o) => t(o.type)).join(", ")} -> ${t(ctx.results[0]!.type)}`);

/** `name %a, %b {attrs} : (..) -> ..`. */
const functional: Build = (ctx) => make(ctx, (p) => `${stablehloName(ctx.inst)} ${p.values(ctx.operands)}${dictOf(ctx)} : ${fnOf(ctx)}`);

/** `name %a, <text> {attrs} : <type>`: an operand list, then the op's keyword attributes. */
const keyed = (ctx: OpContext, text: string, type: (c: OpContext) => string = fnOf, own: readonly AttrEntry[] = []): MOp =>
  make(ctx, (p) => `${stablehloName(ctx.inst)} ${p.values(ctx.operands)}, ${text}${dictOf(ctx, own)} : ${type(ctx)}`);

/** MLIR's generic form: `"name"(%a) <{props}> ({regions}) {attrs} : (..) -> ..`. */
export function genericOp(ctx: OpContext, name: string, props: readonly AttrEntry[], regions: readonly MRegion[] = [],
  operands: readonly MValue[] = ctx.operands): MOp {
  return make(ctx, (p) => {
    const propText = props.length > 0 ? ` <${attrDict(props).trimStart()}>` : "";
    const regionText = regions.length > 0 ? ` (${regions.map((r) => p.region(r, { entryArgs: true })).join(", ")})` : "";
    return `"${name}"(${p.values(operands)})${propText}${regionText}${dictOf(ctx)} : ${
      functionalType(operands.map((o) => o.type), ctx.results.map((r) => r.type))}`;
  }, { regions });
}

const generic = (ctx: OpContext, props: readonly AttrEntry[], regions: readonly MRegion[] = []): MOp =>
  genericOp(ctx, stablehloName(ctx.inst), props, regions);

function windowEntries(w: Window, withDilation: boolean): AttrEntry[] {
  const out: AttrEntry[] = [["window_dimensions", arr(w.map((d) => d.size))], ["window_strides", arr(w.map((d) => d.stride))]];
  if (withDilation) out.push(["base_dilations", arr(w.map((d) => d.baseDilation))], ["window_dilations", arr(w.map((d) => d.windowDilation))]);
  out.push(["padding", matrix(w.map((d) => [d.paddingLow, d.paddingHigh]), 2)]);
  return out;
}

/** Whether a reduce body is one commutative stablehlo op of its two arguments in order, which StableHLO prints as `applies <op>`. */
function compactReducer(c: Computation, scalar: string): string | undefined {
  const body = c.instructions.filter((i) => i.opcode !== "parameter");
  const root = c.root;
  if (c.parameters.length !== 2 || body.length !== 1 || body[0] !== root || !OP_TABLE[root.opcode].commutative) return undefined;
  if (root.operands[0] !== c.parameters[0] || root.operands[1] !== c.parameters[1]) return undefined;
  if (![root, ...root.operands].every((i) => t(i.shape) === scalar)) return undefined;
  return OP_TABLE[root.opcode].stablehlo;
}

function gatherDims(d: OpAttributes["gather"]["dimensionNumbers"]): string {
  return `#stablehlo.gather<${fields([["offset_dims", d.offsetDims], ["collapsed_slice_dims", d.collapsedSliceDims],
    ["operand_batching_dims", d.operandBatchingDims], ["start_indices_batching_dims", d.startIndicesBatchingDims],
    ["start_index_map", d.startIndexMap], ["index_vector_dim", d.indexVectorDim]])}>`;
}

function reduceOp(ctx: OpContext): MOp {
  const a = ctx.inst.attrs as OpAttributes["reduce"];
  const n = ctx.operands.length / 2;
  const first = ctx.operands[0]!.type;
  const applies = n === 1 && first.kind === "array" ? compactReducer(a.toApply, t(ctx.operands[n]!.type)) : undefined;
  const region = applies === undefined ? ctx.region(a.toApply) : undefined;
  return make(ctx, (p) => {
    const pairs = Array.from({ length: n }, (_, i) => `(${p.value(ctx.operands[i]!)} init: ${p.value(ctx.operands[n + i]!)})`).join(", ");
    const head = `stablehlo.reduce${pairs}${applies !== undefined ? ` applies ${applies}` : ""} across dimensions = ${list(a.dimensions)}${
      dictOf(ctx)} : ${fnOf(ctx)}`;
    if (region === undefined) return head;
    const args = region.block.args;
    const reducer = Array.from({ length: n }, (_, i) => `(${p.argument(args[i]!)}, ${p.argument(args[n + i]!)}) `).join("");
    return `${head}${p.newline()} reducer${reducer} ${p.region(region)}`;
  }, { regions: region === undefined ? [] : [region] });
}

/** `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`. */
function convDims(d: OpAttributes["convolution"]["dimensionNumbers"]): string {
  const labels = (rank: number, x: number, xl: string, y: number, yl: string, spatial: readonly number[]): string => {
    const out = new Array<string>(rank).fill("?");
    out[x] = xl;
    out[y] = yl;
    spatial.forEach((s, i) => (out[s] = String(i)));
    return `[${out.join(", ")}]`;
  };
  const rank = d.inputSpatialDimensions.length + 2;
  return `${labels(rank, d.inputBatchDimension, "b", d.inputFeatureDimension, "f", d.inputSpatialDimensions)}x${
    labels(rank, d.kernelInputFeatureDimension, "i", d.kernelOutputFeatureDimension, "o", d.kernelSpatialDimensions)}->${
    labels(rank, d.outputBatchDimension, "b", d.outputFeatureDimension, "f", d.outputSpatialDimensions)}`;
}

function convolutionOp(ctx: OpContext): MOp {
  const a = ctx.inst.attrs as OpAttributes["convolution"];
  const w = a.window;
  const win: string[] = [];
  const shown = (key: ConvWindowAttribute, nonDefault: boolean): boolean => nonDefault || a.spelledWindowAttributes?.includes(key) === true;
  if (shown("stride", w.some((x) => x.stride !== 1))) win.push(`stride = ${list(w.map((x) => x.stride))}`);
  if (shown("pad", w.some((x) => x.paddingLow !== 0 || x.paddingHigh !== 0))) win.push(`pad = [${w.map((x) => `[${x.paddingLow}, ${x.paddingHigh}]`).join(", ")}]`);
  if (shown("lhs_dilate", w.some((x) => x.baseDilation !== 1))) win.push(`lhs_dilate = ${list(w.map((x) => x.baseDilation))}`);
  if (shown("rhs_dilate", w.some((x) => x.windowDilation !== 1))) win.push(`rhs_dilate = ${list(w.map((x) => x.windowDilation))}`);
  if (shown("reverse", w.some((x) => x.windowReversal))) win.push(`reverse = [${w.map((x) => String(x.windowReversal)).join(", ")}]`);
  const own: AttrEntry[] = [["batch_group_count", i64(a.batchGroupCount)], ["feature_group_count", i64(a.featureGroupCount)],
    ...entriesOf(precision(a.precisionConfig))];
  return make(ctx, (p) => `stablehlo.convolution(${p.values(ctx.operands)}) dim_numbers = ${convDims(a.dimensionNumbers)}, window = {${
    win.join(", ")}}${dictOf(ctx, own)} : ${fnOf(ctx)}`);
}

/** Whether a dot was written `stablehlo.dot` (its source spelling, kept by the importer), and still has that op's form. */
function printsAsDot(inst: Instruction<"dot">): boolean {
  if (inst.metadata?.opType !== "stablehlo.dot") return false;
  const d = inst.attrs.dimensionNumbers;
  const [lhs, rhs] = inst.operands;
  const rank = (i: Instruction | undefined): number => (i?.shape.kind === "array" ? i.shape.dimensions.length : -1);
  return d.lhsBatchDimensions.length === 0 && d.rhsBatchDimensions.length === 0 && rank(lhs) <= 2 && rank(rhs) <= 2 &&
    d.lhsContractingDimensions.length === 1 && d.lhsContractingDimensions[0] === rank(lhs) - 1 &&
    d.rhsContractingDimensions.length === 1 && d.rhsContractingDimensions[0] === 0;
}

function dotOp(ctx: OpContext): MOp {
  const inst = ctx.inst as Instruction<"dot">;
  const a = inst.attrs;
  const prec = a.precisionConfig.length > 0 ? `, precision = [${a.precisionConfig.join(", ")}]` : "";
  const [lhs, rhs] = ctx.operands;
  if (printsAsDot(inst)) return make(ctx, (p) => `stablehlo.dot ${p.value(lhs!)}, ${p.value(rhs!)}${prec}${dictOf(ctx)} : ${fnOf(ctx)}`);
  const d = a.dimensionNumbers;
  const batching = d.lhsBatchDimensions.length > 0 || d.rhsBatchDimensions.length > 0
    ? `batching_dims = ${list(d.lhsBatchDimensions)} x ${list(d.rhsBatchDimensions)}, ` : "";
  return make(ctx, (p) => `stablehlo.dot_general ${p.value(lhs!)}, ${p.value(rhs!)}, ${batching}contracting_dims = ${
    list(d.lhsContractingDimensions)} x ${list(d.rhsContractingDimensions)}${prec}${dictOf(ctx)} : ${fnOf(ctx)}`);
}

function customCallOp(ctx: OpContext): MOp {
  const inst = ctx.inst as Instruction<"customCall">;
  const a = inst.attrs;
  if (isKept(a.target)) return keptOp(ctx);
  const own: AttrEntry[] = [];
  if (a.hasSideEffect) own.push(["has_side_effect", "true"]);
  if (a.typedFfi === true) own.push(["mhlo.backend_config", a.backendConfig]);
  else if (a.backendConfig !== "") own.push(["backend_config", quoteString(a.backendConfig)]);
  const callees = [...a.calledComputations.map((c) => ctx.funcName(c)), ...(a.undefinedCallees ?? []).map(symbolRef)];
  if (callees.length > 0) own.push(["called_computations", `[${callees.join(", ")}]`]);
  return customCallText(ctx, a.target, own);
}

/** `stablehlo.custom_call @target(%a) {attrs} : (..) -> ..`. */
function customCallText(ctx: OpContext, target: string, own: readonly AttrEntry[]): MOp {
  return make(ctx, (p) => `stablehlo.custom_call ${symbolRef(target)}(${p.values(ctx.operands)})${dictOf(ctx, own)} : ${fnOf(ctx)}`);
}

/** An XLA op StableHLO has no op for, as the custom call XLA exports it as (see xla_ops.ts). */
function xlaCustomCallOp(ctx: OpContext): MOp {
  const entries = entriesOf(xlaCustomCallAttributes(ctx.inst, (c) => ctx.funcName(c)));
  const target = entries.find(([k]) => k === "call_target_name")![1]!;
  return customCallText(ctx, unquoteMlirString(target, "call_target_name"), entries.filter(([k]) => k !== "call_target_name"));
}

/** `@name`, quoted when it is not a bare identifier. */
export const symbolRef = (n: string): string => `@${/^[A-Za-z_][A-Za-z0-9_$.-]*$/.test(n) ? n : quoteString(n)}`;

/** Custom calls standing for ops of other dialects (see import_ops.ts). */
export function isKept(target: string): boolean {
  return target.startsWith("interpreter.") || target === "check.expect_serialized_eq" || target.startsWith(UNREGISTERED_OP_PREFIX);
}

/** The MLIR op name a kept custom call stands for. */
export function keptOpName(target: string): string {
  return target.startsWith(UNREGISTERED_OP_PREFIX) ? target.slice(UNREGISTERED_OP_PREFIX.length) : target;
}

/** An op of another dialect, kept as a custom call with its attribute dictionary's text: generic form. */
function keptOp(ctx: OpContext): MOp {
  const a = (ctx.inst as Instruction<"customCall">).attrs;
  // Computations it names by symbol are functions; the others were its regions.
  const regions = a.backendConfig.includes("@") ? [] : a.calledComputations.map((c) => ctx.region(c));
  const dict = a.backendConfig === "" ? [] : [a.backendConfig];
  return make(ctx, (p) => {
    const regionText = regions.length > 0 ? ` (${regions.map((r) => p.region(r, { entryArgs: true })).join(", ")})` : "";
    const own = dict.length > 0 ? ` ${dict[0]}` : "";
    const rest = ctx.discardable.length > 0 ? attrDict(ctx.discardable) : "";
    return `"${keptOpName(a.target)}"(${p.values(ctx.operands)})${regionText}${own}${rest} : ${fnOf(ctx)}`;
  }, { regions });
}

const at = <O extends Opcode>(ctx: OpContext): OpAttributes[O] => ctx.inst.attrs as OpAttributes[O];

const unsupported = (why: string): Build => (ctx) => {
  throw new XlaError(`printStableHlo: ${OP_TABLE[ctx.inst.opcode].hlo} ${why}`);
};

/** Every opcode as StableHLO prints it (the printer handles parameters, tuples it elides, while and conditional itself). */
export const MLIR_OPS: Readonly<Record<Opcode, Build>> = {
  // The elementwise families print by the row's names: StableHLO's ops generically, CHLO's as chlo.*.
  ...tableOf(UNARY_OPCODES, (o) => (OP_TABLE[o].stablehlo !== undefined ? elementwise : chloUnary)),
  ...tableOf(BINARY_OPCODES, (o) => (OP_TABLE[o].stablehlo !== undefined ? elementwise : chloBinary)),
  convert: elementwise,
  isFinite: functional,
  erf: (ctx) => make(ctx, (p) => `chlo.erf ${p.value(ctx.operands[0]!)}${dictOf(ctx, accuracy(ctx))} : ${t(ctx.operands[0]!.type)} -> ${t(ctx.results[0]!.type)}`),
  complex: (ctx) => {
    const res = ctx.results[0]!.type;
    const real = res.kind === "array" ? t({ ...res, elementType: res.elementType === "c128" ? "f64" : "f32" }) : "";
    return make(ctx, (p) => `stablehlo.complex ${p.values(ctx.operands)}${dictOf(ctx)} : ${
      ctx.operands.every((o) => t(o.type) === real) ? t(res) : fnOf(ctx)}`);
  },
  compare: (ctx) => {
    const a = at<"compare">(ctx);
    const [l, r] = ctx.operands;
    return make(ctx, (p) => `stablehlo.compare ${a.direction}, ${p.value(l!)}, ${p.value(r!)}${a.compareType ? `, ${a.compareType}` : ""}${
      dictOf(ctx)} : ${fnOf(ctx)}`);
  },
  select: (ctx) => {
    const [pred, onTrue, onFalse] = ctx.operands;
    const res = t(ctx.results[0]!.type);
    return make(ctx, (p) => `stablehlo.select ${p.values(ctx.operands)}${dictOf(ctx)} : ${
      t(onTrue!.type) === res && t(onFalse!.type) === res ? `${t(pred!.type)}, ${res}` : fnOf(ctx)}`);
  },
  clamp: elementwise,
  bitcastConvert: functional,
  uniformQuantize: functional,
  uniformDequantize: functional,
  reducePrecision: (ctx) => {
    const a = at<"reducePrecision">(ctx);
    return keyed(ctx, `format = e${a.exponentBits}m${a.mantissaBits}`, sameType);
  },
  parameter: unsupported("is a block argument, not an op"),
  constant: (ctx) => {
    const lit = at<"constant">(ctx).literal;
    // sdy.constant (a constant propagation may not merge with others) has stablehlo.constant's
    // syntax; only StableHLO's names its result (`%c` for integers, `%cst` otherwise).
    if (ctx.inst.metadata?.opType === "sdy.constant") return make(ctx, () => `sdy.constant${dictOf(ctx)} ${printDenseBody(lit)} : ${t(lit.shape)}`);
    return make(ctx, () => `stablehlo.constant${dictOf(ctx)} ${printDenseBody(lit)} : ${t(lit.shape)}`,
      { resultNames: [lit.shape.kind === "array" && /^(pred|[su][0-9]+)$/.test(lit.shape.elementType) ? "c" : "cst"] });
  },
  iota: (ctx) => make(ctx, () => `stablehlo.iota dim = ${at<"iota">(ctx).iotaDimension}${dictOf(ctx)} : ${t(ctx.results[0]!.type)}`),
  reshape: functional,
  dynamicReshape: unsupported("is printed by the printer (its sizes become one shape vector)"),
  transpose: (ctx) => keyed(ctx, `dims = ${list(at<"transpose">(ctx).permutation)}`),
  broadcastInDim: (ctx) => keyed(ctx, `dims = ${list(at<"broadcastInDim">(ctx).broadcastDimensions)}`),
  slice: (ctx) => {
    const a = at<"slice">(ctx);
    const ranges = a.startIndices.map((s, i) => `${s}:${a.limitIndices[i]}${a.strides[i] !== 1 ? `:${a.strides[i]}` : ""}`);
    return make(ctx, (p) => `stablehlo.slice ${p.value(ctx.operands[0]!)} [${ranges.join(", ")}]${dictOf(ctx)} : ${fnOf(ctx)}`);
  },
  dynamicSlice: (ctx) => keyed(ctx, `sizes = ${list(at<"dynamicSlice">(ctx).sliceSizes)}`),
  dynamicUpdateSlice: functional,
  pad: (ctx) => {
    const a = at<"pad">(ctx);
    return keyed(ctx, `low = ${list(a.edgePaddingLow)}, high = ${list(a.edgePaddingHigh)}, interior = ${list(a.interiorPadding)}`);
  },
  concatenate: (ctx) => keyed(ctx, `dim = ${at<"concatenate">(ctx).dimension}`),
  reverse: (ctx) => keyed(ctx, `dims = ${list(at<"reverse">(ctx).dimensions)}`, sameType),
  gather: (ctx) => {
    const a = at<"gather">(ctx);
    return generic(ctx, [
      ["dimension_numbers", gatherDims(a.dimensionNumbers)], ["indices_are_sorted", String(a.indicesAreSorted)], ["slice_sizes", arr(a.sliceSizes)],
    ]);
  },
  dynamicBroadcastInDim: (ctx) => {
    const a = at<"dynamicBroadcastInDim">(ctx);
    const known: AttrEntry[] = [];
    if (a.knownExpandingDimensions !== undefined) known.push(["known_expanding_dimensions", arr(a.knownExpandingDimensions)]);
    if (a.knownNonexpandingDimensions !== undefined) known.push(["known_nonexpanding_dimensions", arr(a.knownNonexpandingDimensions)]);
    return keyed(ctx, `dims = ${list(a.broadcastDimensions)}`, fnOf, known);
  },
  dynamicIota: (ctx) => keyed(ctx, `dim = ${at<"dynamicIota">(ctx).iotaDimension}`),
  dynamicPad: functional,
  dynamicGather: (ctx) => {
    const a = at<"dynamicGather">(ctx);
    return generic(ctx, [["dimension_numbers", gatherDims(a.dimensionNumbers)], ["indices_are_sorted", String(a.indicesAreSorted)]]);
  },
  dynamicConv: (ctx) => {
    const a = at<"dynamicConv">(ctx);
    const w = a.window;
    const props: AttrEntry[] = [["batch_group_count", i64(a.batchGroupCount)], ["dimension_numbers", `#stablehlo.conv<${convDims(a.dimensionNumbers)}>`],
      ["feature_group_count", i64(a.featureGroupCount)]];
    if (w.some((x) => x.baseDilation !== 1)) props.push(["lhs_dilation", arr(w.map((x) => x.baseDilation))]);
    if (a.precisionConfig.length > 0) props.push(["precision_config", `[${a.precisionConfig.map((x) => `#stablehlo<precision ${x}>`).join(", ")}]`]);
    if (w.some((x) => x.windowDilation !== 1)) props.push(["rhs_dilation", arr(w.map((x) => x.windowDilation))]);
    if (w.some((x) => x.windowReversal)) props.push(["window_reversal", `array<i1: ${w.map((x) => String(x.windowReversal)).join(", ")}>`]);
    if (w.some((x) => x.stride !== 1)) props.push(["window_strides", arr(w.map((x) => x.stride))]);
    return generic(ctx, props);
  },
  realDynamicSlice: functional,
  scatter: (ctx) => {
    const a = at<"scatter">(ctx);
    const d = a.dimensionNumbers;
    return generic(ctx, [
      ["indices_are_sorted", String(a.indicesAreSorted)],
      ["scatter_dimension_numbers", `#stablehlo.scatter<${fields([["update_window_dims", d.updateWindowDims],
        ["inserted_window_dims", d.insertedWindowDims], ["input_batching_dims", d.inputBatchingDims],
        ["scatter_indices_batching_dims", d.scatterIndicesBatchingDims], ["scatter_dims_to_operand_dims", d.scatterDimsToOperandDims],
        ["index_vector_dim", d.indexVectorDim]])}>`],
      ["unique_indices", String(a.uniqueIndices)],
    ], [ctx.region(a.toApply)]);
  },
  sort: (ctx) => {
    const a = at<"sort">(ctx);
    return generic(ctx, [["dimension", i64(a.dimension)], ["is_stable", String(a.isStable)]], [ctx.region(a.comparator)]);
  },
  topK: (ctx) => make(ctx, (p) => `chlo.top_k(${p.value(ctx.operands[0]!)}, k = ${at<"topK">(ctx).k})${dictOf(ctx)} : ${
    t(ctx.operands[0]!.type)} -> (${ctx.results.map((r) => t(r.type)).join(", ")})`, { resultNames: ["values", "indices"] }),
  getDimensionSize: (ctx) => keyed(ctx, `dim = ${at<"getDimensionSize">(ctx).dimension}`),
  setDimensionSize: (ctx) => keyed(ctx, `dim = ${at<"setDimensionSize">(ctx).dimension}`),
  reduce: reduceOp,
  reduceWindow: (ctx) => {
    const a = at<"reduceWindow">(ctx);
    return generic(ctx, windowEntries(a.window, true), [ctx.region(a.toApply)]);
  },
  selectAndScatter: (ctx) => {
    const a = at<"selectAndScatter">(ctx);
    return generic(ctx, windowEntries(a.window, false), [ctx.region(a.select), ctx.region(a.scatter)]);
  },
  map: (ctx) => {
    const a = at<"map">(ctx);
    return generic(ctx, [["dimensions", arr(a.dimensions)]], [ctx.region(a.toApply)]);
  },
  dot: dotOp,
  scaledDot: xlaCustomCallOp,
  raggedDot: (ctx) => {
    const a = at<"raggedDot">(ctx);
    const d = a.dimensionNumbers;
    const dd = d.dotDimensionNumbers;
    const props: AttrEntry[] = [["ragged_dot_dimension_numbers", `#chlo.ragged_dot<lhs_batching_dimensions = ${list(dd.lhsBatchDimensions)}, ` +
      `rhs_batching_dimensions = ${list(dd.rhsBatchDimensions)}, lhs_contracting_dimensions = ${list(dd.lhsContractingDimensions)}, ` +
      `rhs_contracting_dimensions = ${list(dd.rhsContractingDimensions)}, lhs_ragged_dimensions = ${list(d.lhsRaggedDimensions)}, ` +
      `rhs_group_dimensions = ${list(d.rhsGroupDimensions)}>`]];
    if (a.precisionConfig.length > 0) props.push(["precision_config", `[${a.precisionConfig.map((x) => `#chlo<precision ${x}>`).join(", ")}]`]);
    return generic(ctx, props);
  },
  convolution: convolutionOp,
  fft: (ctx) => {
    const a = at<"fft">(ctx);
    return keyed(ctx, `type = ${a.fftType}, length = ${list(a.fftLength)}`);
  },
  cholesky: (ctx) => make(ctx, (p) => `stablehlo.cholesky ${p.value(ctx.operands[0]!)}${at<"cholesky">(ctx).lower ? ", lower = true" : ""}${
    dictOf(ctx)} : ${sameType(ctx)}`),
  triangularSolve: (ctx) => {
    const a = at<"triangularSolve">(ctx);
    return generic(ctx, [["left_side", String(a.leftSide)], ["lower", String(a.lower)],
      ["transpose_a", `#stablehlo<transpose ${a.transposeA}>`], ["unit_diagonal", String(a.unitDiagonal)]]);
  },
  batchNormTraining: (ctx) => batchNorm(ctx, ["output", "batch_mean", "batch_var"]),
  batchNormInference: (ctx) => batchNorm(ctx, []),
  batchNormGrad: (ctx) => batchNorm(ctx, ["grad_operand", "grad_scale", "grad_offset"]),
  tuple: (ctx) => make(ctx, (p) => `stablehlo.tuple ${p.values(ctx.operands)}${dictOf(ctx)} : ${t(ctx.results[0]!.type)}`),
  getTupleElement: (ctx) => make(ctx, (p) => `stablehlo.get_tuple_element ${p.value(ctx.operands[0]!)}[${
    at<"getTupleElement">(ctx).index}]${dictOf(ctx)} : ${fnOf(ctx)}`),
  call: (ctx) => make(ctx, (p) => `${p.inFunctionBody ? "call" : "func.call"} ${ctx.funcName(at<"call">(ctx).toApply)}(${
    p.values(ctx.operands)})${dictOf(ctx)} : ${fnOf(ctx)}`),
  composite: (ctx) => {
    const a = at<"composite">(ctx);
    const own: AttrEntry[] = [["decomposition", ctx.funcName(a.decomposition)]];
    const ca = Object.entries(a.compositeAttributes);
    if (ca.length > 0) own.push(["composite_attributes", attrDict(ca.map(([k, v]) => [k, attributeValueText(v)])).trimStart()]);
    if (a.version !== 0) own.push(["version", `${a.version} : i32`]);
    return make(ctx, (p) => `stablehlo.composite ${quoteString(a.name)} ${p.values(ctx.operands)}${dictOf(ctx, own)} : ${fnOf(ctx)}`);
  },
  conditional: unsupported("is printed by the printer (its branches bind captured values)"),
  while: unsupported("is printed by the printer (its regions bind the loop state)"),
  customCall: customCallOp,
  optimizationBarrier: (ctx) => make(ctx, (p) => `stablehlo.optimization_barrier${dictOf(ctx)} ${
    ctx.operands.length === 0 ? "()" : `${p.values(ctx.operands)} : ${ctx.operands.map((o) => t(o.type)).join(", ")}`}`),
  fusion: xlaCustomCallOp,
  // With no tokens to join it makes a fresh token: XLA's create_token, which StableHLO spells create_token too.
  afterAll: (ctx) => make(ctx, (p) => (ctx.operands.length === 0
    ? `stablehlo.create_token${dictOf(ctx)} : ${sameType(ctx)}`
    : `stablehlo.after_all ${p.values(ctx.operands)}${dictOf(ctx)} : ${sameType(ctx)}`)),
  addDependency: xlaCustomCallOp,
  rngBitGenerator: (ctx) => make(ctx, (p) => `stablehlo.rng_bit_generator ${p.value(ctx.operands[0]!)}, algorithm = ${
    at<"rngBitGenerator">(ctx).algorithm}${dictOf(ctx)} : ${fnOf(ctx)}`, { resultNames: ["output_state", "output"] }),
  rng: (ctx) => {
    const a = at<"rng">(ctx);
    const dims = a.shape.kind === "array" ? a.shape.dimensions : [];
    const shape = ctx.constant(Literal.fromValues("s64", [dims.length], dims.map((x) => BigInt(x))));
    const operands = [...ctx.operands, shape];
    return make(ctx, (p) => `stablehlo.rng ${p.values(operands)}, distribution = ${a.distribution}${dictOf(ctx)} : ${
      functionalType(operands.map((o) => o.type), ctx.results.map((r) => r.type))}`);
  },
  allGather: (ctx) => {
    const a = at<"allGather">(ctx);
    return generic(ctx, [["all_gather_dim", i64(a.allGatherDimension)], ...collectiveEntries(a)]);
  },
  allReduce: (ctx) => generic(ctx, collectiveEntries(at<"allReduce">(ctx)), [ctx.region(at<"allReduce">(ctx).toApply)]),
  collectiveReduce: (ctx) => generic(ctx, collectiveEntries(at<"collectiveReduce">(ctx)), [ctx.region(at<"collectiveReduce">(ctx).toApply)]),
  reduceScatter: (ctx) => {
    const a = at<"reduceScatter">(ctx);
    return generic(ctx, [["scatter_dimension", i64(a.scatterDimension)], ...collectiveEntries(a)], [ctx.region(a.toApply)]);
  },
  allToAll: (ctx) => {
    const a = at<"allToAll">(ctx);
    const props: AttrEntry[] = [["split_count", i64(a.splitCount)], ...collectiveEntries(a)];
    if (a.splitDimension !== undefined) props.push(["split_dimension", i64(a.splitDimension)]);
    if (a.concatDimension !== undefined) props.push(["concat_dimension", i64(a.concatDimension)]);
    return generic(ctx, props);
  },
  raggedAllToAll: xlaCustomCallOp,
  collectivePermute: (ctx) => {
    const a = at<"collectivePermute">(ctx);
    const props: AttrEntry[] = [["source_target_pairs", a.sourceTargetPairs.length === 0 ? "dense<> : tensor<0x2xi64>" : matrix(a.sourceTargetPairs, 2)]];
    if (a.channelId !== undefined) props.push(["channel_handle", `#stablehlo.channel_handle<handle = ${a.channelId}, type = 1>`]);
    return generic(ctx, props);
  },
  collectiveBroadcast: (ctx) => {
    const a = at<"collectiveBroadcast">(ctx);
    return generic(ctx, [...collectiveEntries(a), ...(a.hasDynamicRoot ? [["has_dynamic_root", undefined] as AttrEntry] : [])]);
  },
  replicaId: (ctx) => make(ctx, () => `stablehlo.replica_id${dictOf(ctx)} : ${t(ctx.results[0]!.type)}`),
  partitionId: (ctx) => make(ctx, () => `stablehlo.partition_id${dictOf(ctx)} : ${t(ctx.results[0]!.type)}`),
  allGatherStart: xlaCustomCallOp, allGatherDone: xlaCustomCallOp, allReduceStart: xlaCustomCallOp, allReduceDone: xlaCustomCallOp,
  collectivePermuteStart: xlaCustomCallOp, collectivePermuteDone: xlaCustomCallOp,
  infeed: (ctx) => generic(ctx, [["infeed_config", quoteString(at<"infeed">(ctx).config)]]),
  outfeed: (ctx) => generic(ctx, [["outfeed_config", quoteString(at<"outfeed">(ctx).config)]]),
  send: (ctx) => generic(ctx, channelEntries(at<"send">(ctx))),
  recv: (ctx) => generic(ctx, channelEntries(at<"recv">(ctx))),
  ...Object.fromEntries(SDY_OPCODES.map((o) => [o, unsupported("is printed by the printer's sdy hook (sdy_print.ts)")])) as Record<SdyOpcode, Build>,
};

function channelEntries(a: OpAttributes["send"]): AttrEntry[] {
  const out: AttrEntry[] = [["channel_handle", `#stablehlo.channel_handle<handle = ${a.channel.handle}, type = ${CHANNEL_TYPE[a.channel.type]}>`]];
  if (a.isHostTransfer) out.push(["is_host_transfer", "true"]);
  return out;
}

function batchNorm(ctx: OpContext, names: readonly string[]): MOp {
  const a = at<"batchNormTraining">(ctx);
  return { ...generic(ctx, [["epsilon", `${floatText(a.epsilon)} : f32`], ["feature_index", i64(a.featureIndex)]]), resultNames: names };
}

/** The op for `inst`, unless it prints as an XLA custom call (ops StableHLO lacks). */
export function buildOp(ctx: OpContext): MOp {
  if (printsAsXlaCustomCall(ctx.inst)) return xlaCustomCallOp(ctx);
  return MLIR_OPS[ctx.inst.opcode](ctx);
}
