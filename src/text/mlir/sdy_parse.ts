// The pretty syntax of the sdy ops (Shardy's ops.td assembly formats), parsed into the
// generic OpNode with typed sdy attributes under the ops' attribute names, so the
// importer reads the pretty and the generic form (`"sdy.reshard"(%0) <{sharding =
// #sdy.sharding<...>}> : ...`) alike:
//
//   sdy.mesh @mesh = <["a"=2]>
//   sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>      (reshard alike)
//   sdy.manual_computation(%0) in_shardings=[...] out_shardings=[...] manual_axes={"a"} (%arg1: t) {...} : (t) -> t
//   sdy.named_computation<"foo">(%0) in_shardings=[...] out_shardings=[...] (%arg1: t) {...} : (t) -> t
//   sdy.sharding_group %0 group_id=3 : t        sdy.propagation_barrier %0 allowed_direction=NONE : t
//   sdy.data_flow_edge %0 sharding=<...> : t    sdy.func_data_flow_edge %0 : t    sdy.constant dense<...> : t
//   sdy.all_gather [{"b"}, {}] %1 out_sharding=<...> : t    sdy.all_reduce max {"a"} %1 out_sharding=<...> : t
//   sdy.all_to_all [{"b"}: 0->2] %1 out_sharding=<...> : t  sdy.collective_permute %1 out_sharding=<...> : t

import { parseAllToAllParams, parseAxesPerDim, parseAxisRefList, parseManualAxes, parseMesh, parseStrippedShardingPerValue, parseTensorSharding, type SdyAttribute } from "./sdy_attr_text.js";
import { prefixed, sdyParseError } from "./diagnostics.js";
import { ParseError } from "../../types/errors.js";
import type { Attr, AttrDict, OpNode, ValueUse } from "./ast.js";
import type { Cursor } from "./cursor.js";
import { denseToLiteral, parseDenseBody } from "./literal.js";
import type { Parser } from "./parser.js";
import { parseType } from "./types.js";

type NodeOf = (fields: Partial<OpNode> & Pick<OpNode, "name">) => OpNode;

const sdy = (value: SdyAttribute): Attr => ({ kind: "sdy", value });

function operand(c: Cursor): ValueUse {
  const v = c.valueRef();
  if (v === undefined) throw c.error(`expected SSA operand, found ${c.describeNext()}`);
  return v;
}

/** `key=` (MLIR's keyword followed by `=`). */
function keyword(c: Cursor, key: string): void {
  if (!c.accept(key)) throw c.error(`expected '${key}'`);
  c.expect("=");
}

/** `attr-dict : type`: the op's attribute dictionary, then its one (operand and result) type. */
function dictAndType(p: Parser, attrs: AttrDict): ReturnType<typeof parseType> {
  const c = p.c;
  if (c.peek() === "{") for (const [k, v] of p.parseAttrDict()) attrs.set(k, v);
  c.expect(":");
  return parseType(c);
}

/** Ops of the form `[axes] %tensor out_sharding=<...> attr-dict : type` (and the one without axes). */
const COLLECTIVE_AXES: Readonly<Record<string, { readonly key: string; readonly parse: (c: Cursor) => SdyAttribute } | undefined>> = {
  "sdy.all_gather": { key: "gathering_axes", parse: (c) => ({ kind: "axesPerDim", value: parseAxesPerDim(c) }) },
  "sdy.all_slice": { key: "slicing_axes", parse: (c) => ({ kind: "axesPerDim", value: parseAxesPerDim(c) }) },
  "sdy.reduce_scatter": { key: "reduce_scatter_axes", parse: (c) => ({ kind: "axesPerDim", value: parseAxesPerDim(c) }) },
  "sdy.all_reduce": { key: "reduction_axes", parse: (c) => ({ kind: "axisRefList", value: parseAxisRefList(c) }) },
  "sdy.all_to_all": { key: "params", parse: (c) => ({ kind: "allToAllParams", value: parseAllToAllParams(c) }) },
  "sdy.sharded_to_unreduced": { key: "axes", parse: (c) => ({ kind: "axesPerDim", value: parseAxesPerDim(c) }) },
  "sdy.replicated_to_unreduced": { key: "axes", parse: (c) => ({ kind: "axisRefList", value: parseAxisRefList(c) }) },
  "sdy.collective_permute": undefined,
};

/** Parses the sdy op `name` (its name already read), or returns undefined for ops other code reads (`sdy.return`). */
export function parseSdyOp(p: Parser, name: string, node: NodeOf): OpNode | undefined {
  const c = p.c;
  const attrs: AttrDict = new Map();
  const unary = (): OpNode => {
    const input = operand(c);
    const t = dictAndType(p, attrs);
    return node({ name, operands: [input], attrs, operandTypes: [t], resultTypes: [t] });
  };
  switch (name) {
    case "sdy.mesh": {
      const sym = c.symbol();
      if (sym === undefined) throw c.error("expected @name after sdy.mesh");
      c.expect("=");
      attrs.set("sym_name", { kind: "string", value: sym });
      c.accept("#sdy.mesh"); // the mesh may be written with its attribute prefix
      try {
        attrs.set("mesh", sdy({ kind: "mesh", value: parseMesh(c) }));
      } catch (e) {
        throw e instanceof ParseError ? prefixed(c, e, "custom op 'sdy.mesh' ") : e;
      }
      if (c.peek() === "{") for (const [k, v] of p.parseAttrDict()) attrs.set(k, v);
      return node({ name, attrs });
    }
    case "sdy.sharding_constraint": case "sdy.reshard": {
      const input = operand(c);
      attrs.set("sharding", sdy({ kind: "sharding", value: parseTensorSharding(c) }));
      const t = dictAndType(p, attrs);
      return node({ name, operands: [input], attrs, operandTypes: [t], resultTypes: [t] });
    }
    case "sdy.sharding_group": {
      const input = operand(c);
      keyword(c, "group_id");
      attrs.set("group_id", { kind: "int", value: BigInt(c.integer("a group id")) });
      const t = dictAndType(p, attrs);
      return node({ name, operands: [input], attrs, operandTypes: [t], resultTypes: [] });
    }
    case "sdy.propagation_barrier": {
      const input = operand(c);
      keyword(c, "allowed_direction");
      attrs.set("allowed_direction", { kind: "enum", value: c.expectIdentifier("a propagation direction") });
      const t = dictAndType(p, attrs);
      return node({ name, operands: [input], attrs, operandTypes: [t], resultTypes: [t] });
    }
    case "sdy.data_flow_edge": {
      const input = operand(c);
      if (c.accept("sharding")) {
        c.expect("=");
        attrs.set("sharding", sdy({ kind: "sharding", value: parseTensorSharding(c) }));
      }
      const t = dictAndType(p, attrs);
      return node({ name, operands: [input], attrs, operandTypes: [t], resultTypes: [t] });
    }
    case "sdy.func_data_flow_edge":
      return unary();
    case "sdy.constant": {
      if (c.peek() === "{") for (const [k, v] of p.parseAttrDict()) attrs.set(k, v);
      const at = c.pos;
      if (!c.accept("dense")) throw c.error(`expected dense<...>, found ${c.describeNext()}`);
      const body = parseDenseBody(c);
      c.expect(":");
      c.skipWs();
      if (/^tensor<\s*\*/.test(c.text.slice(c.pos, c.pos + 16))) throw sdyParseError(c, "elements literal type must have static shape", at);
      const shape = parseType(c);
      if (shape.kind !== "array") throw c.error("sdy.constant needs a tensor type", at);
      if (shape.dynamicDimensions.some((d) => d)) throw sdyParseError(c, "elements literal type must have static shape", at);
      attrs.set("value", { kind: "dense", literal: denseToLiteral(c, body, shape) });
      return node({ name, attrs, operandTypes: [], resultTypes: [shape] });
    }
    case "sdy.manual_computation": case "sdy.named_computation": {
      if (name === "sdy.named_computation") {
        c.expect("<");
        const s = c.stringLiteral();
        if (s === undefined) throw c.error("expected the computation name string");
        attrs.set("name", { kind: "string", value: s });
        c.expect(">");
      }
      c.expect("(");
      const operands: ValueUse[] = [];
      if (!c.accept(")")) {
        do operands.push(operand(c)); while (c.accept(","));
        c.expect(")");
      }
      const perValue = (key: string): void => {
        keyword(c, key);
        attrs.set(key, sdy({ kind: "shardingPerValue", value: parseStrippedShardingPerValue(c) }));
      };
      if (name === "sdy.manual_computation") {
        perValue("in_shardings");
        perValue("out_shardings");
        keyword(c, "manual_axes");
        attrs.set("manual_axes", sdy({ kind: "manualAxes", value: parseManualAxes(c) }));
      } else {
        if (c.lookingAt("in_shardings")) perValue("in_shardings");
        if (c.lookingAt("out_shardings")) perValue("out_shardings");
      }
      c.expect("(");
      const args = p.blockArgList();
      const region = p.parseRegion(args);
      if (c.peek() === "{") for (const [k, v] of p.parseAttrDict()) attrs.set(k, v);
      c.expect(":");
      const fn = p.parseFunctionType();
      return node({ name, operands, attrs, regions: [region], operandTypes: fn.inputs, resultTypes: fn.results });
    }
    default: {
      if (!Object.prototype.hasOwnProperty.call(COLLECTIVE_AXES, name)) return undefined;
      const axes = COLLECTIVE_AXES[name];
      if (name === "sdy.all_reduce" || name === "sdy.reduce_scatter") {
        const op = /^(sum|max|min)\b/.exec(c.text.slice(c.pos).trimStart())?.[1];
        if (op !== undefined) {
          c.accept(op);
          attrs.set("reduction_op", { kind: "enum", value: op });
        }
      }
      if (axes !== undefined) attrs.set(axes.key, sdy(axes.parse(c)));
      const input = operand(c);
      keyword(c, "out_sharding");
      attrs.set("out_sharding", sdy({ kind: "sharding", value: parseTensorSharding(c) }));
      const t = dictAndType(p, attrs);
      return node({ name, operands: [input], attrs, operandTypes: [t], resultTypes: [t] });
    }
  }
}
