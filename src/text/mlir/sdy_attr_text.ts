// The MLIR text forms of Shardy's attributes (seed 002, "Attributes"), parsed into the
// typed values of model.ts and printed back the way Shardy prints them:
//
//   #sdy.mesh<["a"=2, "b"=4], device_ids=[...]>     (`<...>` alone after `sdy.mesh @m =`)
//   #sdy.sharding<@mesh, [{"a", ?}p0, {}], replicated={"b"}, unreduced=max{"c"}>
//   #sdy.sharding_per_value<[<@mesh, [...]>, ...]>   (`[<...>, ...]` stripped in op syntax)
//   #sdy<manual_axes{"a", "b"}>                       (`{"a", "b"}` after `manual_axes=`)
//   [{"b", "c"}, {}, {"d"}]   [{"b"}: 0->2]   {"a", "b"}   (collective operands)
//   #sdy.propagation_edges<[{step-2 = [{"y" = operand-1 -> [operand-0, result-0]}]}]>
//
// Parsing reads from the MLIR cursor at the attribute, so failures point into the
// source; each failure carries Shardy's own chain of messages (see diagnostics.ts).
// `#sdy.op_sharding_rule<...>` is read and written by src/sdy/rule_text.ts.

import type { Cursor } from "./cursor.js";
import { quoteString as quote } from "./print_attr.js";
import { symbolRef } from "./print_ops.js";
import { inContext, sdyParseError } from "./diagnostics.js";
import type {
  AllToAllParam, AxisRef, AxisToPropagationDetails, DimensionSharding, EdgeValueRef, ManualAxes, Mesh, MeshAxis,
  OpShardingRule, PropagationEdges, PropagationOneStep, ReductionOp, TensorSharding, TensorShardingPerValue,
} from "../../sharding/model.js";
import { printOpShardingRule, readOpShardingRule } from "./sdy_rule_text.js";

/** A `#sdy...` attribute value as it appears in an attribute dictionary. */
export type SdyAttribute =
  | { readonly kind: "mesh"; readonly value: Mesh }
  | { readonly kind: "sharding"; readonly value: TensorSharding }
  | { readonly kind: "shardingPerValue"; readonly value: TensorShardingPerValue }
  | { readonly kind: "manualAxes"; readonly value: ManualAxes }
  | { readonly kind: "axisRefList"; readonly value: readonly AxisRef[] }
  | { readonly kind: "axesPerDim"; readonly value: readonly (readonly AxisRef[])[] }
  | { readonly kind: "allToAllParams"; readonly value: readonly AllToAllParam[] }
  | { readonly kind: "propagationEdges"; readonly value: PropagationEdges }
  /** `#sdy<propagation_direction NONE>`, `#sdy<reduction_op max>`: one of the dialect's enums. */
  | { readonly kind: "enum"; readonly name: string; readonly value: string }
  | { readonly kind: "shardingRule"; readonly value: OpShardingRule };

const PARAM = (attr: string, param: string, cppType: string): string =>
  `failed to parse ${attr} parameter '${param}' which is to be a \`${cppType}\``;

const INT64_MAX = 2n ** 63n - 1n;

// ---------------------------------------------------------------- small pieces

/** `"name"`: Shardy's StringRef parameters. */
function quoted(c: Cursor): string {
  const s = c.stringLiteral();
  if (s === undefined) throw sdyParseError(c, "expected string");
  return s;
}

/** A decimal integer of int64 range (JavaScript-safe, since it becomes a number). */
function int64(c: Cursor, what: string): number {
  c.skipWs();
  const at = c.pos;
  const m = /^-?[0-9]+/.exec(c.text.slice(c.pos, c.pos + 40));
  if (m === null) throw sdyParseError(c, "expected integer value", at);
  const v = BigInt(m[0]);
  if (v > INT64_MAX || v < -INT64_MAX - 1n) throw sdyParseError(c, `integer value too large for ${what}`, at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw sdyParseError(c, `${what} ${m[0]} is beyond 2^53 (the largest integer xlats keeps exactly in an attribute)`, at);
  }
  c.pos += m[0].length;
  return Number(v);
}

function expect(c: Cursor, token: string): void {
  if (!c.accept(token)) throw sdyParseError(c, `expected '${token}'`);
}

/** `a, b, c` up to (not including) `close`; empty when `close` comes first and `allowEmpty`. */
function commaList<T>(c: Cursor, close: string, item: () => T, allowEmpty = true): T[] {
  const out: T[] = [];
  if (allowEmpty && c.lookingAt(close)) return out;
  do out.push(item()); while (c.accept(","));
  return out;
}

// ---------------------------------------------------------------- meshes

/** `"a"=2`. */
function parseMeshAxis(c: Cursor): MeshAxis {
  const name = inContext(c, PARAM("Sdy_MeshAxis", "name", "::llvm::StringRef"), () => quoted(c));
  expect(c, "=");
  const at = c.pos;
  const size = inContext(c, PARAM("Sdy_MeshAxis", "size", "int64_t"), () => int64(c, "an axis size"));
  if (size < 1) throw sdyParseError(c, `axis size must be at least 1, got: ${size}`, at);
  return { name, size };
}

/** `<["a"=2, "b"=4], device_ids=[1, 0, ...]>`; iota device ids are dropped, as Shardy's builder does. */
export function parseMesh(c: Cursor): Mesh {
  const start = c.pos;
  expect(c, "<");
  expect(c, "[");
  const axes = inContext(c, PARAM("Sdy_Mesh", "axes", "::llvm::ArrayRef<MeshAxisAttr>"), () => commaList(c, "]", () => parseMeshAxis(c)));
  expect(c, "]");
  let deviceIds: number[] | undefined;
  if (c.accept(",")) {
    if (!c.accept("device_ids")) throw sdyParseError(c, "expected 'device_ids'");
    expect(c, "=");
    expect(c, "[");
    deviceIds = inContext(c, PARAM("Sdy_Mesh", "device_ids", "::llvm::ArrayRef<int64_t>"),
      () => commaList(c, "]", () => int64(c, "a device id"), false));
    expect(c, "]");
  }
  expect(c, ">");
  const problem = meshProblem(axes, deviceIds ?? []);
  if (problem !== undefined) throw sdyParseError(c, problem, start);
  const iota = axes.length > 0 && deviceIds !== undefined && deviceIds.every((d, i) => d === i);
  return deviceIds === undefined || iota ? { axes } : { axes, deviceIds };
}

/**
 * What Shardy's MeshAttr::verify rejects, in its words; undefined for a valid mesh.
 * (Explicit iota device ids are accepted when parsing and dropped, as the builder does.)
 */
export function meshProblem(axes: readonly MeshAxis[], deviceIds: readonly number[]): string | undefined {
  const negative = deviceIds.find((d) => d < 0);
  if (negative !== undefined) return `device id must be non-negative, got: ${negative}`;
  if (axes.length === 0) return deviceIds.length > 1 ? "axes is empty and device_ids has more than one element" : undefined;
  const seen = new Set<string>();
  for (const a of axes) {
    if (seen.has(a.name)) return `duplicate axis name: ${JSON.stringify(a.name)}`;
    seen.add(a.name);
  }
  if (deviceIds.length === 0) return undefined;
  const product = axes.reduce((n, a) => n * a.size, 1);
  if (product !== deviceIds.length) {
    return `total product of axis sizes must match total number of device ids, got: ${product} != ${deviceIds.length}`;
  }
  const sorted = [...deviceIds].sort((a, b) => a - b);
  if (!sorted.every((d, i) => d === i)) return `sorted device ids must be iota(product(axes)), got: ${sorted.join(", ")}`;
  return undefined;
}

/** `<["a"=2, "b"=4]>`, `<[], device_ids=[3]>`. */
export function printMesh(mesh: Mesh): string {
  const axes = mesh.axes.map((a) => `${quote(a.name)}=${a.size}`).join(", ");
  return `<[${axes}]${mesh.deviceIds !== undefined ? `, device_ids=[${mesh.deviceIds.join(", ")}]` : ""}>`;
}

// ---------------------------------------------------------------- axis references

/** `"a"` or `"a":(2)4`. */
export function parseAxisRef(c: Cursor): AxisRef {
  const name = inContext(c, PARAM("Sdy_AxisRef", "name", "::llvm::StringRef"), () => quoted(c));
  if (c.text[c.pos] !== ":") return { name };
  c.pos++;
  const subAxis = inContext(c, PARAM("Sdy_AxisRef", "sub_axis_info", "SubAxisInfoAttr"), () => {
    expect(c, "(");
    const preSize = inContext(c, PARAM("Sdy_SubAxisInfo", "pre_size", "int64_t"), () => int64(c, "a sub-axis pre-size"));
    expect(c, ")");
    const size = inContext(c, PARAM("Sdy_SubAxisInfo", "size", "int64_t"), () => int64(c, "a sub-axis size"));
    return { preSize, size };
  });
  return { name, subAxis };
}

export function printAxisRef(a: AxisRef): string {
  return `${quote(a.name)}${a.subAxis !== undefined ? `:(${a.subAxis.preSize})${a.subAxis.size}` : ""}`;
}

/** `{"a", "b":(1)2}` or `{}` (Shardy's AxisRefListAttr). */
export function parseAxisRefList(c: Cursor): AxisRef[] {
  expect(c, "{");
  const axes = commaList(c, "}", () => parseAxisRef(c));
  expect(c, "}");
  return axes;
}

export function printAxisRefList(axes: readonly AxisRef[]): string {
  return `{${axes.map(printAxisRef).join(", ")}}`;
}

/** `[{"b", "c"}, {}, {"d"}]`: per dimension, the axes a collective works along. */
export function parseAxesPerDim(c: Cursor): AxisRef[][] {
  expect(c, "[");
  const lists = commaList(c, "]", () => parseAxisRefList(c));
  expect(c, "]");
  return lists;
}

export function printAxesPerDim(lists: readonly (readonly AxisRef[])[]): string {
  return `[${lists.map(printAxisRefList).join(", ")}]`;
}

/** `{"a", "b"}`: the axes a manual computation is manual on. */
export function parseManualAxes(c: Cursor): string[] {
  expect(c, "{");
  const names = commaList(c, "}", () => quoted(c));
  expect(c, "}");
  return names;
}

export function printManualAxes(axes: ManualAxes): string {
  return `{${axes.map(quote).join(", ")}}`;
}

/** `[{"b"}: 0->2, {"c"}: 1->3]`. */
export function parseAllToAllParams(c: Cursor): AllToAllParam[] {
  expect(c, "[");
  const params = commaList(c, "]", () => {
    expect(c, "{");
    const axes = inContext(c, PARAM("Sdy_AllToAllParam", "axes", "::llvm::ArrayRef<AxisRefAttr>"),
      () => commaList(c, "}", () => parseAxisRef(c), false));
    expect(c, "}");
    expect(c, ":");
    const srcDim = inContext(c, PARAM("Sdy_AllToAllParam", "src_dim", "int64_t"), () => int64(c, "a source dimension"));
    expect(c, "->");
    const tgtDim = inContext(c, PARAM("Sdy_AllToAllParam", "tgt_dim", "int64_t"), () => int64(c, "a target dimension"));
    return { axes, srcDim, tgtDim };
  });
  expect(c, "]");
  return params;
}

export function printAllToAllParams(params: readonly AllToAllParam[]): string {
  return `[${params.map((p) => `{${p.axes.map(printAxisRef).join(", ")}}: ${p.srcDim}->${p.tgtDim}`).join(", ")}]`;
}

// ---------------------------------------------------------------- shardings

/** `{"a", ?}p0`, `{?}`, `{}`. */
function parseDimensionSharding(c: Cursor): DimensionSharding {
  expect(c, "{");
  const axes: AxisRef[] = [];
  let isClosed = true;
  while (!c.accept("}")) {
    if (axes.length > 0) expect(c, ",");
    if (c.accept("?")) {
      isClosed = false;
      expect(c, "}");
      break;
    }
    axes.push(parseAxisRef(c));
  }
  c.skipWs();
  const at = c.pos;
  const word = /^[A-Za-z_][A-Za-z0-9_$.]*/.exec(c.text.slice(c.pos, c.pos + 64))?.[0];
  if (word === undefined) return { axes, isClosed };
  c.pos += word.length;
  const digits = word.slice(1);
  if (word.length < 2 || word[0] !== "p" || !/^[0-9]+$/.test(digits)) {
    throw sdyParseError(c, `expecting priority in format 'p<number>', got: ${word}`, at);
  }
  if (digits.length > 1 && digits.startsWith("0")) throw sdyParseError(c, `priorities with leading zeros are not allowed, got: ${word}`, at);
  if (BigInt(digits) > INT64_MAX) throw sdyParseError(c, `expecting integer priority, got: ${word}`, at);
  if (BigInt(digits) > BigInt(Number.MAX_SAFE_INTEGER)) throw sdyParseError(c, `priority ${word} is beyond 2^53`, at);
  return { axes, isClosed, priority: Number(digits) };
}

function printDimensionSharding(d: DimensionSharding): string {
  const parts = d.axes.map(printAxisRef);
  if (!d.isClosed) parts.push("?");
  return `{${parts.join(", ")}}${d.priority !== undefined ? `p${d.priority}` : ""}`;
}

/** `, replicated={...}, unreduced=max{...}` after the dimension shardings (either order, each once). */
function parseReplicatedAndUnreduced(c: Cursor): { replicated: AxisRef[]; unreduced: AxisRef[]; reductionOp: ReductionOp } {
  let replicated: AxisRef[] = [];
  let unreduced: AxisRef[] = [];
  let reductionOp: ReductionOp = "sum";
  const axisList = (): AxisRef[] => {
    expect(c, "{");
    const axes = inContext(c, "failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`",
      () => commaList(c, "}", () => parseAxisRef(c), false));
    expect(c, "}");
    return axes;
  };
  while (c.accept(",")) {
    if (replicated.length === 0 && c.accept("replicated")) {
      replicated = inContext(c, "failed to parse Sdy_TensorSharding parameter 'replicated_axes'", () => {
        expect(c, "=");
        return axisList();
      });
    } else if (unreduced.length === 0 && c.accept("unreduced")) {
      unreduced = inContext(c, "failed to parse Sdy_TensorSharding parameter 'unreduced_axes'", () => {
        if (c.accept("=")) reductionOp = c.accept("max") ? "max" : c.accept("min") ? "min" : (c.accept("sum"), "sum");
        return axisList();
      });
    } else {
      throw sdyParseError(c, "failed to parse Sdy_TensorSharding, expected valid named axis list after comma");
    }
  }
  return { replicated, unreduced, reductionOp };
}

/** `<@mesh, [{"a"}, {}], replicated={"b"}>` or `<mesh<["x"=2]>, [...]>`: a sharding without its `#sdy.sharding` (or with it). */
export function parseTensorSharding(c: Cursor): TensorSharding {
  // Where the stripped form is expected, the full one is accepted too (as MLIR does).
  if (c.lookingAt("#sdy.sharding<")) c.pos += "#sdy.sharding".length;
  expect(c, "<");
  let meshOrRef: string | Mesh;
  if (c.accept("mesh")) {
    meshOrRef = inContext(c, "failed to parse MeshAttr", () => parseMesh(c));
  } else {
    const name = c.peek() === "@" ? c.symbol() : undefined;
    if (name === undefined) throw sdyParseError(c, `expecting MeshAttr or FlatSymbolRefAttr, got: ${c.describeNext()}`);
    meshOrRef = name;
  }
  expect(c, ",");
  expect(c, "[");
  const dimShardings = inContext(c, PARAM("Sdy_TensorSharding", "dim_shardings", "::llvm::ArrayRef<DimensionShardingAttr>"),
    () => commaList(c, "]", () => parseDimensionSharding(c)));
  expect(c, "]");
  const { replicated, unreduced, reductionOp } = parseReplicatedAndUnreduced(c);
  expect(c, ">");
  return {
    meshOrRef, dimShardings, replicatedAxes: replicated, unreducedAxes: unreduced,
    ...(unreduced.length > 0 && reductionOp !== "sum" ? { reductionOp } : {}),
  };
}

/** `<@mesh, [...]>` (the form op syntax uses; `#sdy.sharding` adds the prefix). */
export function printTensorShardingBody(s: TensorSharding): string {
  const mesh = typeof s.meshOrRef === "string" ? symbolRef(s.meshOrRef) : `mesh${printMesh(s.meshOrRef)}`;
  let out = `<${mesh}, [${s.dimShardings.map(printDimensionSharding).join(", ")}]`;
  if (s.replicatedAxes.length > 0) out += `, replicated=${printAxisRefList(s.replicatedAxes)}`;
  if (s.unreducedAxes.length > 0) {
    const op = s.reductionOp !== undefined && s.reductionOp !== "sum" ? s.reductionOp : "";
    out += `, unreduced=${op}${printAxisRefList(s.unreducedAxes)}`;
  }
  return `${out}>`;
}

export function printTensorSharding(s: TensorSharding): string {
  return `#sdy.sharding${printTensorShardingBody(s)}`;
}

/** `[<@mesh, ...>, ...]`: the per-value list as op syntax writes it (in_shardings=...). */
export function parseStrippedShardingPerValue(c: Cursor): TensorSharding[] {
  expect(c, "[");
  const list = commaList(c, "]", () => parseTensorSharding(c));
  expect(c, "]");
  return list;
}

export function printStrippedShardingPerValue(list: TensorShardingPerValue): string {
  return `[${list.map(printTensorShardingBody).join(", ")}]`;
}

/** `<[<@mesh, ...>, ...]>`: the body of `#sdy.sharding_per_value`. */
function parseShardingPerValueBody(c: Cursor): TensorSharding[] {
  expect(c, "<");
  expect(c, "[");
  const list = inContext(c, PARAM("Sdy_TensorShardingPerValue", "shardings", "::llvm::ArrayRef<TensorShardingAttr>"),
    () => commaList(c, "]", () => parseTensorSharding(c)));
  expect(c, "]");
  expect(c, ">");
  return list;
}

export function printShardingPerValue(list: TensorShardingPerValue): string {
  return `#sdy.sharding_per_value<${printStrippedShardingPerValue(list)}>`;
}

// ---------------------------------------------------------------- propagation edges

/** `operand-0`, `result-1`. */
export function parseEdgeValueRef(c: Cursor): EdgeValueRef {
  c.skipWs();
  const m = /^(operand|result)-([0-9]+)/.exec(c.text.slice(c.pos, c.pos + 40));
  if (m === null) throw sdyParseError(c, `expected an edge value reference (operand-N or result-N), found ${c.describeNext()}`);
  c.pos += m[0].length;
  return { type: m[1] as EdgeValueRef["type"], index: Number(m[2]) };
}

export function printEdgeValueRef(r: EdgeValueRef): string {
  return `${r.type}-${r.index}`;
}

/** `{"y" = operand-1 -> [operand-0, result-0]}`. */
function parseAxisToPropagationDetails(c: Cursor): AxisToPropagationDetails {
  expect(c, "{");
  const axisName = parseAxisRef(c);
  expect(c, "=");
  const source = parseEdgeValueRef(c);
  expect(c, "->");
  expect(c, "[");
  const targets = commaList(c, "]", () => parseEdgeValueRef(c), false);
  expect(c, "]");
  expect(c, "}");
  return { axisName, source, targets };
}

/** `{step-2 = [...]}`. */
function parsePropagationOneStep(c: Cursor): PropagationOneStep {
  expect(c, "{");
  if (!c.accept("step")) throw sdyParseError(c, "expected 'step'");
  expect(c, "-");
  const stepIndex = int64(c, "a step index");
  expect(c, "=");
  expect(c, "[");
  const axisEntries = commaList(c, "]", () => parseAxisToPropagationDetails(c), false);
  expect(c, "]");
  expect(c, "}");
  return { stepIndex, axisEntries };
}

/** `<[{step-0 = ...}, ...]>`, checked as Shardy's PropagationEdgesAttr::verify does. */
export function parsePropagationEdges(c: Cursor): PropagationOneStep[] {
  const start = c.pos;
  expect(c, "<");
  expect(c, "[");
  const steps = commaList(c, "]", () => parsePropagationOneStep(c), false);
  expect(c, "]");
  expect(c, ">");
  const problem = propagationEdgesProblem(steps);
  if (problem !== undefined) throw sdyParseError(c, problem, start);
  return steps;
}

function propagationEdgesProblem(steps: PropagationEdges): string | undefined {
  const seen = new Set<number>();
  for (const step of steps) {
    if (step.stepIndex < 0) return `propagation edges have negative step index: ${step.stepIndex}`;
    if (seen.has(step.stepIndex)) return `propagation edges have duplicate step index: ${step.stepIndex}`;
    seen.add(step.stepIndex);
    for (const entry of step.axisEntries) {
      const targets = new Set<string>();
      for (const t of entry.targets) {
        if (t.type === entry.source.type && t.index === entry.source.index) {
          return "propagation edges have a source that is the same as a target";
        }
        const key = printEdgeValueRef(t);
        if (targets.has(key)) {
          return `propagation edges have duplicate targets for step index: ${step.stepIndex} and axis: ${entry.axisName.name}`;
        }
        targets.add(key);
      }
    }
  }
  return undefined;
}

export function printPropagationEdges(steps: PropagationEdges): string {
  const entry = (e: AxisToPropagationDetails): string =>
    `{${printAxisRef(e.axisName)} = ${printEdgeValueRef(e.source)} -> [${e.targets.map(printEdgeValueRef).join(", ")}]}`;
  const step = (s: PropagationOneStep): string => `{step-${s.stepIndex} = [${s.axisEntries.map(entry).join(", ")}]}`;
  return `#sdy.propagation_edges<[${steps.map(step).join(", ")}]>`;
}

// ---------------------------------------------------------------- `#sdy...` attributes

/** The `#sdy.<mnemonic>` attributes this module reads, by mnemonic. */
const DIALECT_ATTRIBUTES: Readonly<Record<string, (c: Cursor) => SdyAttribute>> = {
  mesh: (c) => ({ kind: "mesh", value: parseMesh(c) }),
  sharding: (c) => ({ kind: "sharding", value: parseTensorSharding(c) }),
  sharding_per_value: (c) => ({ kind: "shardingPerValue", value: parseShardingPerValueBody(c) }),
  manual_axes: (c) => ({ kind: "manualAxes", value: parseManualAxes(c) }),
  axis_ref_list: (c) => ({ kind: "axisRefList", value: parseAxisRefList(c) }),
  list_of_axis_ref_lists: (c) => ({ kind: "axesPerDim", value: parseAxesPerDim(c) }),
  all_to_all_param_list: (c) => ({ kind: "allToAllParams", value: parseAllToAllParams(c) }),
  propagation_edges: (c) => ({ kind: "propagationEdges", value: parsePropagationEdges(c) }),
  propagation_direction: (c) => enumAttribute(c, "propagation_direction", ["NONE", "FORWARD", "BACKWARD", "BOTH"]),
  reduction_op: (c) => enumAttribute(c, "reduction_op", ["sum", "max", "min"]),
  edge_node_type: (c) => enumAttribute(c, "edge_node_type", ["operand", "result"]),
  op_sharding_rule: (c) => ({ kind: "shardingRule", value: readOpShardingRule(c) }),
};

/** `NONE` in `#sdy<propagation_direction NONE>`. */
function enumAttribute(c: Cursor, name: string, cases: readonly string[]): SdyAttribute {
  const value = c.identifier();
  if (value === undefined || !cases.includes(value)) {
    throw sdyParseError(c, `expected one of [${cases.join(", ")}] for ${name}, found ${value ?? c.describeNext()}`);
  }
  return { kind: "enum", name, value };
}

/** Whether the text at the cursor is a Shardy attribute (`#sdy.` or `#sdy<`). */
export function atSdyAttribute(c: Cursor): boolean {
  return c.lookingAt("#sdy.") || c.lookingAt("#sdy<");
}

/** `#sdy.sharding<...>`, `#sdy<manual_axes{...}>`, ...: the dialect's attributes in either spelling. */
export function parseSdyAttribute(c: Cursor): SdyAttribute {
  c.skipWs();
  const at = c.pos;
  const generic = c.text.startsWith("#sdy<", at);
  c.pos += "#sdy".length + 1;
  const m = /^[a-z_]+/.exec(c.text.slice(c.pos, c.pos + 64));
  const mnemonic = m?.[0] ?? "";
  const parse = Object.prototype.hasOwnProperty.call(DIALECT_ATTRIBUTES, mnemonic) ? DIALECT_ATTRIBUTES[mnemonic] : undefined;
  if (parse === undefined) throw sdyParseError(c, `unknown attribute '#sdy${generic ? "<" : "."}${mnemonic}' of the sdy dialect`, at);
  c.pos += mnemonic.length;
  const value = parse(c);
  if (generic) expect(c, ">");
  return value;
}

export function printSdyAttribute(a: SdyAttribute): string {
  switch (a.kind) {
    case "mesh": return `#sdy.mesh${printMesh(a.value)}`;
    case "sharding": return printTensorSharding(a.value);
    case "shardingPerValue": return printShardingPerValue(a.value);
    case "manualAxes": return `#sdy<manual_axes${printManualAxes(a.value)}>`;
    case "axisRefList": return `#sdy<axis_ref_list${printAxisRefList(a.value)}>`;
    case "axesPerDim": return `#sdy<list_of_axis_ref_lists${printAxesPerDim(a.value)}>`;
    case "allToAllParams": return `#sdy<all_to_all_param_list${printAllToAllParams(a.value)}>`;
    case "propagationEdges": return printPropagationEdges(a.value);
    case "enum": return `#sdy<${a.name} ${a.value}>`;
    case "shardingRule": return printOpShardingRule(a.value);
  }
}
