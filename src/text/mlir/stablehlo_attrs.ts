// StableHLO's struct-like attributes (`#stablehlo.dot<...>`, `#stablehlo.gather<...>`, ...)
// read exactly as MLIR reads them. Each attribute has one of three grammars, set by how
// StableHLO declares it:
// - "hlo": StableHLO's own parseStruct (dot, gather, scatter, conv raw): fields in any
//   order, each at most once, each optional (absent: [] or 0), a trailing comma allowed.
// - "mlir": MLIR's `struct(params)` directive (channel_handle, mesh_axis, axis_ref,
//   replica_group_mesh_axes): fields in any order, the required ones all present, no
//   trailing comma.
// - "ordered": a fixed assembly format (output_operand_alias, dot_algorithm,
//   result_accuracy, mesh): the fields in their declared order, an
//   optional one may be left out, no trailing comma.
// A field that is unknown, repeated, missing or unreadable is a ParseError at its position.

import type { Attr, AttrDict } from "./ast.js";
import type { Cursor } from "./cursor.js";

/** How a field's value is written: `[1, 2]`, `3`, `1.5`, `true`, or any attribute. */
type FieldValue = "dims" | "int" | "float" | "bool" | "attr";

interface FieldSpec {
  readonly name: string;
  readonly value: FieldValue;
  readonly optional?: boolean;
}

interface StructSpec {
  readonly grammar: "hlo" | "mlir" | "ordered";
  readonly fields: readonly FieldSpec[];
}

const dims = (name: string): FieldSpec => ({ name, value: "dims" });
const int = (name: string): FieldSpec => ({ name, value: "int" });

/** The struct attributes by their name after `#` (without `<`). */
export const STABLEHLO_STRUCT_ATTRS: ReadonlyMap<string, StructSpec> = new Map<string, StructSpec>([
  ["stablehlo.dot", {
    grammar: "hlo",
    fields: ["lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions", "rhs_contracting_dimensions"].map(dims),
  }],
  ["stablehlo.gather", {
    grammar: "hlo",
    fields: [...["offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims", "start_index_map"].map(dims), int("index_vector_dim")],
  }],
  ["stablehlo.scatter", {
    grammar: "hlo",
    fields: [...["update_window_dims", "inserted_window_dims", "input_batching_dims", "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"].map(dims), int("index_vector_dim")],
  }],
  // `#stablehlo.conv<raw ...>`; the compact `[b, 0, f]x[...]->[...]` form is read by parseConvDims.
  ["stablehlo.conv", {
    grammar: "hlo",
    fields: [
      int("input_batch_dimension"), int("input_feature_dimension"), dims("input_spatial_dimensions"),
      int("kernel_input_feature_dimension"), int("kernel_output_feature_dimension"), dims("kernel_spatial_dimensions"),
      int("output_batch_dimension"), int("output_feature_dimension"), dims("output_spatial_dimensions"),
    ],
  }],
  ["stablehlo.channel_handle", { grammar: "mlir", fields: [int("handle"), int("type")] }],
  ["stablehlo.mesh_axis", { grammar: "mlir", fields: [{ name: "name", value: "attr" }, int("size")] }],
  ["stablehlo.axis_ref", { grammar: "mlir", fields: [{ name: "name", value: "attr" }, { name: "sub_axis_info", value: "attr", optional: true }] }],
  ["stablehlo.replica_group_mesh_axes", { grammar: "mlir", fields: [{ name: "mesh", value: "attr" }, { name: "axes", value: "attr" }] }],
  ["stablehlo.mesh", { grammar: "ordered", fields: [{ name: "axes", value: "attr" }, { name: "device_ids", value: "attr", optional: true }] }],
  ["stablehlo.output_operand_alias", { grammar: "ordered", fields: [dims("output_tuple_indices"), int("operand_index"), dims("operand_tuple_indices")] }],
  ["stablehlo.dot_algorithm", {
    grammar: "ordered",
    fields: [
      { name: "lhs_precision_type", value: "attr" }, { name: "rhs_precision_type", value: "attr" }, { name: "accumulation_type", value: "attr" },
      int("lhs_component_count"), int("rhs_component_count"), int("num_primitive_operations"),
      { name: "allow_imprecise_accumulation", value: "bool" },
    ],
  }],
  ["stablehlo.result_accuracy", {
    grammar: "ordered",
    fields: [
      { name: "atol", value: "float", optional: true }, { name: "rtol", value: "float", optional: true },
      { name: "ulps", value: "int", optional: true }, { name: "mode", value: "attr" },
    ],
  }],
]);

/**
 * The fields of struct attribute `name` (`spec` its grammar), the cursor after its `<`
 * (and after `raw` for a convolution's). `parseAttr` reads a field whose value may be
 * any attribute.
 */
export function parseStablehloStruct(c: Cursor, name: string, spec: StructSpec, parseAttr: () => Attr): AttrDict {
  const fields: AttrDict = new Map();
  const known = spec.fields.map((f) => `\`${f.name}\``).join(", ");
  const field = (): void => {
    c.skipWs();
    const at = c.pos;
    const key = c.identifier();
    const f = spec.fields.find((s) => s.name === key);
    if (key === undefined || f === undefined) throw c.error(`#${name}: expected one of ${known}, found ${key === undefined ? c.describeNext() : `'${key}'`}`, at);
    if (fields.has(key)) throw c.error(`#${name}: duplicated \`${key}\` entry`, at);
    c.expect("=", `after ${key}`);
    fields.set(key, fieldValue(c, name, f, parseAttr));
  };
  if (spec.grammar === "hlo") {
    while (!c.accept(">")) {
      field();
      if (!c.accept(",")) {
        c.expect(">", `to close #${name}`);
        break;
      }
    }
  } else if (spec.grammar === "mlir") {
    if (spec.fields.some((f) => !f.optional) || !c.lookingAt(">")) {
      do field(); while (c.accept(","));
    }
    c.skipWs();
    const missing = spec.fields.find((f) => !f.optional && !fields.has(f.name));
    if (missing !== undefined && c.peek() === ">") throw c.error(`#${name}: missing required field \`${missing.name}\``);
    c.expect(">", `to close #${name}`);
  } else {
    let first = true;
    for (const f of spec.fields) {
      // Whether `f` comes next (after the comma that separates it from the field before).
      const save = c.pos;
      const next = (first || c.accept(",")) && c.identifier() === f.name;
      c.pos = save;
      if (!next) {
        if (f.optional) continue;
        c.skipWs();
        throw c.error(`#${name}: expected ${first ? "" : "', ' then "}\`${f.name}\`, found ${c.describeNext()}`);
      }
      if (!first) c.expect(",");
      c.expectIdentifier(`\`${f.name}\``);
      c.expect("=", `after ${f.name}`);
      fields.set(f.name, fieldValue(c, name, f, parseAttr));
      first = false;
    }
    c.skipWs();
    if (!c.accept(">")) throw c.error(`#${name}: expected '>' after the fields (${known}, in this order), found ${c.describeNext()}`);
  }
  return fields;
}

function fieldValue(c: Cursor, name: string, f: FieldSpec, parseAttr: () => Attr): Attr {
  c.skipWs();
  const at = c.pos;
  const what = `#${name}: ${f.name} must be`;
  switch (f.value) {
    case "attr": return parseAttr();
    case "int": return { kind: "int", value: BigInt(c.integer(`${what} an integer`)) };
    case "bool": {
      if (c.accept("true")) return { kind: "bool", value: true };
      if (c.accept("false")) return { kind: "bool", value: false };
      throw c.error(`${what} true or false, found ${c.describeNext()}`, at);
    }
    case "float": {
      const text = c.numberText();
      if (text === undefined) throw c.error(`${what} a number, found ${c.describeNext()}`, at);
      return { kind: "float", value: Number(text), text };
    }
    case "dims": {
      if (!c.accept("[")) throw c.error(`${what} a list of integers [...], found ${c.describeNext()}`, at);
      const items: Attr[] = [];
      if (!c.accept("]")) {
        do {
          items.push({ kind: "int", value: BigInt(c.integer(`${what} a list of integers`)) });
        } while (c.accept(","));
        c.expect("]", `to close ${f.name}`);
      }
      return { kind: "list", items };
    }
  }
}
