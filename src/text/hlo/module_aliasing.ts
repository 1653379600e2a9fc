// The HloModule header's buffer donation attributes, as XLA writes them:
//
//   input_output_alias={ {0}: (1, {}, may-alias), {1}: (2, {}, must-alias) }
//   buffer_donor={ (0, {}), (3, {1}) }
//
// (result shape index: (parameter number, parameter shape index[, kind]); the kind
// defaults to may-alias, as in XLA's parser).

import type { BufferDonor, InputOutputAlias } from "../../ir/computation.js";
import type { Cursor } from "./cursor.js";

function parseShapeIndex(c: Cursor): number[] {
  c.expect("{", "a shape index '{...}'");
  const out: number[] = [];
  if (c.accept("}")) return out;
  do out.push(c.count("a shape index entry")); while (c.accept(","));
  c.expect("}", "'}' closing the shape index");
  return out;
}

function parseDonor(c: Cursor): BufferDonor {
  c.expect("(");
  const parameter = c.count("a parameter number");
  c.expect(",");
  const parameterIndex = parseShapeIndex(c);
  return { parameter, parameterIndex };
}

/** After `input_output_alias=`. */
export function parseInputOutputAlias(c: Cursor): InputOutputAlias[] {
  c.expect("{");
  const out: InputOutputAlias[] = [];
  if (c.accept("}")) return out;
  do {
    const output = parseShapeIndex(c);
    c.expect(":");
    const donor = parseDonor(c);
    let kind: InputOutputAlias["kind"] = "may-alias";
    if (c.accept(",")) {
      const at = c.pos;
      const word = c.ident("may-alias or must-alias");
      if (word !== "may-alias" && word !== "must-alias") throw c.error(`expected may-alias or must-alias, found '${word}'`, at);
      kind = word;
    }
    c.expect(")");
    out.push({ output, ...donor, kind });
  } while (c.accept(","));
  c.expect("}");
  return out;
}

/** After `buffer_donor=`. */
export function parseBufferDonors(c: Cursor): BufferDonor[] {
  c.expect("{");
  const out: BufferDonor[] = [];
  if (c.accept("}")) return out;
  do {
    out.push(parseDonor(c));
    c.expect(")");
  } while (c.accept(","));
  c.expect("}");
  return out;
}

const index = (i: readonly number[]): string => `{${i.join(",")}}`;

export function printInputOutputAlias(aliases: readonly InputOutputAlias[]): string {
  return `input_output_alias={ ${aliases.map((a) => `${index(a.output)}: (${a.parameter}, ${index(a.parameterIndex)}, ${a.kind})`).join(", ")} }`;
}

export function printBufferDonors(donors: readonly BufferDonor[]): string {
  return `buffer_donor={ ${donors.map((d) => `(${d.parameter}, ${index(d.parameterIndex)})`).join(", ")} }`;
}
