// The syntax of HLO attribute values, shared by many ops: integer lists `{1,2}`,
// windows `{size=3x3 stride=2x2 pad=1_1x1_1}`, convolution `dim_labels`, slices,
// padding, replica groups (explicit and iota forms), source-target pairs, metadata,
// frontend attributes and operand precision. Each kind has a parser (reading from a
// Cursor) and a printer producing XLA's canonical spelling.

import type {
  ConvDimensionNumbers, OpMetadata, Precision, ReplicaGroups, WindowDimension,
} from "../../ir/attributes.js";
import { Cursor, MAX_NESTING } from "./cursor.js";
import { elementCount } from "../../types/shape.js";
import { rowMajorStrides } from "../../types/index_util.js";

// ---------------------------------------------------------------- integer lists

export function parseIntList(c: Cursor, what = "a list of integers"): number[] {
  c.expect("{", `'{' starting ${what}`);
  const out: number[] = [];
  if (c.accept("}")) return out;
  do out.push(c.int());
  while (c.accept(","));
  c.expect("}", `',' or '}' in ${what}`);
  return out;
}

export const printIntList = (xs: readonly number[]): string => `{${xs.join(",")}}`;

export function parseBool(c: Cursor): boolean {
  const at = c.pos;
  const w = c.tryIdent();
  if (w === "true") return true;
  if (w === "false") return false;
  throw c.error(`expected true or false${w === undefined ? c.describeNext() : `, found '${w}'`}`, at);
}

export function parseFloatValue(c: Cursor): number {
  c.skipSpace();
  const m = /^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?/.exec(c.text.slice(c.pos, Math.min(c.end, c.pos + 100)));
  if (!m) throw c.error(`expected a number${c.describeNext()}`);
  c.pos += m[0].length;
  return Number(m[0]);
}

/** One of `choices` (case-insensitive in input, as XLA's parser is for enums). */
export function parseEnum<T extends string>(c: Cursor, choices: readonly T[], what: string): T {
  const at = c.pos;
  const w = c.ident(what);
  const hit = choices.find((x) => x.toLowerCase() === w.toLowerCase());
  if (hit === undefined) throw c.error(`unknown ${what} '${w}'; expected one of ${choices.join(", ")}`, at);
  return hit;
}

// ---------------------------------------------------------------- windows

const WINDOW_DEFAULT: WindowDimension = {
  size: 1, stride: 1, paddingLow: 0, paddingHigh: 0, windowDilation: 1, baseDilation: 1, windowReversal: false,
};

/** Numbers joined by `sep` (`3x3`, `1_1`), at least one. */
function parseJoined(c: Cursor, sep: string): number[] {
  const out = [c.int()];
  while (c.peek() === sep) {
    c.pos++;
    out.push(c.int());
  }
  return out;
}

export function parseWindow(c: Cursor): WindowDimension[] {
  c.expect("{", "'{' starting a window");
  const fields = new Map<string, number[][]>();
  while (!c.accept("}")) {
    const at = c.pos;
    const key = c.ident("a window field (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal)");
    c.expect("=");
    if (fields.has(key)) throw c.error(`window field '${key}' given twice`, at);
    if (key === "pad") {
      const dims = [parseJoined(c, "_")];
      while (c.peek() === "x") {
        c.pos++;
        dims.push(parseJoined(c, "_"));
      }
      if (dims.some((d) => d.length !== 2)) throw c.error("window pad must be low_high per dimension, e.g. pad=1_1x0_0", at);
      fields.set(key, dims);
    } else if (["size", "stride", "lhs_dilate", "rhs_dilate", "rhs_reversal"].includes(key)) {
      fields.set(key, parseJoined(c, "x").map((v) => [v]));
    } else {
      throw c.error(`unknown window field '${key}'`, at);
    }
  }
  const size = fields.get("size");
  if (size === undefined) {
    if (fields.size > 0) throw c.error("window has no size=");
    return [];
  }
  const rank = size.length;
  for (const [key, values] of fields) {
    if (values.length !== rank) throw c.error(`window ${key} has ${values.length} dimensions, size has ${rank}`);
  }
  const get = (key: string, i: number, j = 0): number | undefined => fields.get(key)?.[i]?.[j];
  const out: WindowDimension[] = [];
  for (let i = 0; i < rank; i++) {
    const reversal = get("rhs_reversal", i) ?? 0;
    if (reversal !== 0 && reversal !== 1) throw c.error("window rhs_reversal entries must be 0 or 1");
    out.push({
      size: get("size", i)!,
      stride: get("stride", i) ?? 1,
      paddingLow: get("pad", i, 0) ?? 0,
      paddingHigh: get("pad", i, 1) ?? 0,
      baseDilation: get("lhs_dilate", i) ?? 1,
      windowDilation: get("rhs_dilate", i) ?? 1,
      windowReversal: reversal === 1,
    });
  }
  return out;
}

export function printWindow(window: readonly WindowDimension[]): string {
  if (window.length === 0) return "{}";
  const parts = [`size=${window.map((d) => d.size).join("x")}`];
  const field = (name: string, pick: (d: WindowDimension) => string | number, isDefault: (d: WindowDimension) => boolean): void => {
    if (!window.every(isDefault)) parts.push(`${name}=${window.map(pick).join("x")}`);
  };
  field("stride", (d) => d.stride, (d) => d.stride === WINDOW_DEFAULT.stride);
  field("pad", (d) => `${d.paddingLow}_${d.paddingHigh}`, (d) => d.paddingLow === 0 && d.paddingHigh === 0);
  field("lhs_dilate", (d) => d.baseDilation, (d) => d.baseDilation === 1);
  field("rhs_dilate", (d) => d.windowDilation, (d) => d.windowDilation === 1);
  field("rhs_reversal", (d) => (d.windowReversal ? 1 : 0), (d) => !d.windowReversal);
  return `{${parts.join(" ")}}`;
}

// ---------------------------------------------------------------- convolution dim_labels

/** `b01f_01io->b01f`: batch/feature letters and one digit per spatial dimension. */
export function parseDimLabels(c: Cursor): ConvDimensionNumbers {
  c.skipSpace();
  const at = c.pos;
  const m = /^([A-Za-z0-9]+)_([A-Za-z0-9]+)->([A-Za-z0-9]+)/.exec(c.text.slice(c.pos, c.end));
  if (!m) throw c.error("expected dim_labels like b01f_01io->b01f");
  c.pos += m[0].length;
  const [input, kernel, output] = [m[1]!, m[2]!, m[3]!];
  const spatialCount = input.length - 2;
  const read = (labels: string, letters: [string, string], part: string): [number, number, number[]] => {
    if (labels.length !== spatialCount + 2) {
      throw c.error(`dim_labels ${part} '${labels}' has ${labels.length} dimensions, input has ${spatialCount + 2}`, at);
    }
    const first = labels.indexOf(letters[0]);
    const second = labels.indexOf(letters[1]);
    const spatial: number[] = [];
    for (let k = 0; k < spatialCount; k++) spatial.push(labels.indexOf(String(k)));
    const all = [first, second, ...spatial];
    if (all.some((x) => x < 0) || new Set(all).size !== all.length) {
      throw c.error(`dim_labels ${part} '${labels}' must name '${letters[0]}', '${letters[1]}' and spatial dimensions 0..${spatialCount - 1} once each`, at);
    }
    return [first, second, spatial];
  };
  if (spatialCount < 0 || spatialCount > 10) throw c.error("dim_labels: between 0 and 10 spatial dimensions are supported", at);
  const [ib, ifeat, is] = read(input, ["b", "f"], "input");
  const [ki, ko, ks] = read(kernel, ["i", "o"], "kernel");
  const [ob, of, os] = read(output, ["b", "f"], "output");
  return {
    inputBatchDimension: ib, inputFeatureDimension: ifeat, inputSpatialDimensions: is,
    kernelInputFeatureDimension: ki, kernelOutputFeatureDimension: ko, kernelSpatialDimensions: ks,
    outputBatchDimension: ob, outputFeatureDimension: of, outputSpatialDimensions: os,
  };
}

export function printDimLabels(d: ConvDimensionNumbers): string {
  const labels = (rank: number, a: [number, string], b: [number, string], spatial: readonly number[]): string => {
    const chars = new Array<string>(rank).fill("?");
    chars[a[0]] = a[1];
    chars[b[0]] = b[1];
    spatial.forEach((dim, k) => (chars[dim] = String(k)));
    return chars.join("");
  };
  const rank = d.inputSpatialDimensions.length + 2;
  if (rank > 12) throw new RangeError("dim_labels: more than 10 spatial dimensions");
  return `${labels(rank, [d.inputBatchDimension, "b"], [d.inputFeatureDimension, "f"], d.inputSpatialDimensions)}_` +
    `${labels(rank, [d.kernelInputFeatureDimension, "i"], [d.kernelOutputFeatureDimension, "o"], d.kernelSpatialDimensions)}->` +
    `${labels(rank, [d.outputBatchDimension, "b"], [d.outputFeatureDimension, "f"], d.outputSpatialDimensions)}`;
}

// ---------------------------------------------------------------- slice and padding

export interface SliceBounds {
  startIndices: number[];
  limitIndices: number[];
  strides: number[];
}

/** `{[0:2], [1:5:2]}`: start:limit[:stride] per dimension. */
export function parseSlice(c: Cursor): SliceBounds {
  const out: SliceBounds = { startIndices: [], limitIndices: [], strides: [] };
  c.expect("{", "'{' starting slice bounds");
  if (c.accept("}")) return out;
  do {
    c.expect("[", "'[' starting start:limit[:stride]");
    out.startIndices.push(c.int());
    c.expect(":");
    out.limitIndices.push(c.int());
    out.strides.push(c.accept(":") ? c.int() : 1);
    c.expect("]");
  } while (c.accept(","));
  c.expect("}", "',' or '}' in slice bounds");
  return out;
}

export function printSlice(s: { startIndices: readonly number[]; limitIndices: readonly number[]; strides: readonly number[] }): string {
  const dims = s.startIndices.map((st, i) => `[${st}:${s.limitIndices[i]}${s.strides[i] === 1 ? "" : `:${s.strides[i]}`}]`);
  return `{${dims.join(", ")}}`;
}

export interface PaddingConfig {
  edgePaddingLow: number[];
  edgePaddingHigh: number[];
  interiorPadding: number[];
}

/** `0_0x1_2_1`: low_high[_interior] per dimension, `x` between dimensions. */
export function parsePadding(c: Cursor): PaddingConfig {
  const out: PaddingConfig = { edgePaddingLow: [], edgePaddingHigh: [], interiorPadding: [] };
  c.skipSpace();
  if (c.atEnd()) return out; // rank 0: `padding=` is empty in XLA's text
  for (;;) {
    const at = c.pos;
    const parts = parseJoined(c, "_");
    if (parts.length !== 2 && parts.length !== 3) throw c.error("padding must be low_high or low_high_interior per dimension", at);
    out.edgePaddingLow.push(parts[0]!);
    out.edgePaddingHigh.push(parts[1]!);
    out.interiorPadding.push(parts[2] ?? 0);
    if (c.peek() !== "x") return out;
    c.pos++;
  }
}

export function printPadding(p: { edgePaddingLow: readonly number[]; edgePaddingHigh: readonly number[]; interiorPadding: readonly number[] }): string {
  const interior = p.interiorPadding.some((x) => x !== 0);
  return p.edgePaddingLow.map((lo, i) => `${lo}_${p.edgePaddingHigh[i]}${interior ? `_${p.interiorPadding[i]}` : ""}`).join("x");
}

// ---------------------------------------------------------------- replica groups and pairs

/** `{{0,1},{2,3}}`, `{}` or the iota form `[2,2]<=[4]` / `[2,2]<=[2,2]T(1,0)`. */
export function parseReplicaGroups(c: Cursor): ReplicaGroups {
  c.skipSpace();
  if (c.peek() !== "[") return parseNestedIntLists(c, "replica groups");
  const at = c.pos;
  const groupDims = parseBracketInts(c);
  if (groupDims.length !== 2) throw c.error("iota replica groups need [groups,size]", at);
  c.expect("<=", "'<=' in iota replica groups");
  const reshape = parseBracketInts(c);
  let perm = reshape.map((_, i) => i);
  if (c.accept("T")) {
    c.expect("(");
    perm = [];
    if (!c.accept(")")) {
      do perm.push(c.count());
      while (c.accept(","));
      c.expect(")");
    }
  }
  const total = elementCount(reshape);
  if (groupDims[0]! * groupDims[1]! !== total) throw c.error(`iota replica groups: ${groupDims.join("x")} != ${total} devices`, at);
  if (total > 1 << 20) throw c.error("iota replica groups: too many devices", at);
  if (perm.length !== reshape.length || new Set(perm).size !== perm.length || perm.some((p) => p >= reshape.length)) {
    throw c.error("iota replica groups: T(...) must be a permutation of the reshape dimensions", at);
  }
  // Device ids are iota(total) reshaped to `reshape`, transposed by `perm`, read row-major.
  const transposed = perm.map((p) => reshape[p]!);
  const strides = rowMajorStrides(reshape);
  const ids: number[] = [];
  const index = new Array<number>(transposed.length).fill(0);
  for (let n = 0; n < total; n++) {
    ids.push(index.reduce((acc, v, k) => acc + v * strides[perm[k]!]!, 0));
    for (let k = index.length - 1; k >= 0; k--) {
      if (++index[k]! < transposed[k]!) break;
      index[k] = 0;
    }
  }
  const groups: number[][] = [];
  for (let g = 0; g < groupDims[0]!; g++) groups.push(ids.slice(g * groupDims[1]!, (g + 1) * groupDims[1]!));
  return groups;
}

function parseBracketInts(c: Cursor): number[] {
  c.expect("[");
  const out: number[] = [];
  if (c.accept("]")) return out;
  do out.push(c.count());
  while (c.accept(","));
  c.expect("]", "',' or ']'");
  return out;
}

/** `{{0,1},{2,3}}`: a list of integer lists. */
export function parseNestedIntLists(c: Cursor, what: string): number[][] {
  c.expect("{", `'{' starting ${what}`);
  const out: number[][] = [];
  if (c.accept("}")) return out;
  do out.push(parseIntList(c, what));
  while (c.accept(","));
  c.expect("}", `',' or '}' in ${what}`);
  return out;
}

export const printNestedIntLists = (groups: readonly (readonly number[])[]): string =>
  `{${groups.map((g) => printIntList(g)).join(",")}}`;

export function parsePairs(c: Cursor): [number, number][] {
  const lists = parseNestedIntLists(c, "source_target_pairs");
  return lists.map((l) => {
    if (l.length !== 2) throw c.error("each source_target_pairs entry must be {source,target}");
    return [l[0]!, l[1]!];
  });
}

// ---------------------------------------------------------------- precision

const PRECISIONS: readonly Precision[] = ["DEFAULT", "HIGH", "HIGHEST"];

export function parsePrecisionList(c: Cursor): Precision[] {
  c.expect("{", "'{' starting operand_precision");
  const out: Precision[] = [];
  if (c.accept("}")) return out;
  do out.push(parseEnum(c, PRECISIONS, "precision"));
  while (c.accept(","));
  c.expect("}", "',' or '}' in operand_precision");
  return out;
}

export const printPrecisionList = (p: readonly Precision[]): string => `{${p.map((x) => x.toLowerCase()).join(",")}}`;

// ---------------------------------------------------------------- metadata and frontend attributes

const METADATA_STRINGS = { op_type: "opType", op_name: "opName", source_file: "sourceFile" } as const;
const METADATA_INTS = {
  source_line: "sourceLine", source_end_line: "sourceEndLine", source_column: "sourceColumn",
  source_end_column: "sourceEndColumn",
} as const;

export function parseMetadata(c: Cursor): OpMetadata {
  c.expect("{", "'{' starting metadata");
  const out: Record<string, string | number> = {};
  while (!c.accept("}")) {
    c.accept(",");
    const at = c.pos;
    const key = c.ident("a metadata field");
    c.expect("=");
    if (key in METADATA_STRINGS) out[METADATA_STRINGS[key as keyof typeof METADATA_STRINGS]] = c.string();
    else if (key in METADATA_INTS) out[METADATA_INTS[key as keyof typeof METADATA_INTS]] = c.int();
    else throw c.error(`unsupported metadata field '${key}'`, at);
  }
  return out as OpMetadata;
}

export function printMetadata(m: OpMetadata): string {
  const parts: string[] = [];
  const fields = m as Record<string, string | number | undefined>;
  for (const [key, field] of Object.entries(METADATA_STRINGS)) {
    if (fields[field] !== undefined) parts.push(`${key}=${quote(String(fields[field]))}`);
  }
  for (const [key, field] of Object.entries(METADATA_INTS)) {
    if (fields[field] !== undefined) parts.push(`${key}=${fields[field]}`);
  }
  return `{${parts.join(" ")}}`;
}

/** `{key="value", key2={raw dict}}`. Raw `{...}` values are kept as their text. */
export function parseFrontendAttributes(c: Cursor): Record<string, string> {
  c.expect("{", "'{' starting frontend_attributes");
  const out: Record<string, string> = {};
  if (c.accept("}")) return out;
  do {
    const at = c.pos;
    c.skipSpace();
    const key = c.peek() === '"' ? c.string() : c.ident("an attribute name");
    c.expect("=");
    c.skipSpace();
    if (Object.prototype.hasOwnProperty.call(out, key)) throw c.error(`frontend attribute '${key}' given twice`, at);
    out[key] = c.peek() === "{" ? rawBraces(c) : c.string("a quoted value");
  } while (c.accept(","));
  c.expect("}", "',' or '}' in frontend_attributes");
  return out;
}

/** The text of a balanced `{...}` group starting at the cursor (strings skipped whole). */
export function rawBraces(c: Cursor): string {
  c.skipSpace();
  const start = c.pos;
  if (c.peek() !== "{") throw c.error(`expected '{'${c.describeNext()}`);
  let depth = 0;
  do {
    const ch = c.peek();
    if (ch === "") throw c.error("unclosed '{'", start);
    if (ch === '"') {
      c.string();
      continue;
    }
    if (ch === "{") {
      if (++depth > MAX_NESTING) throw c.error("braces nest too deeply");
    } else if (ch === "}") depth--;
    c.pos++;
  } while (depth > 0);
  return c.text.slice(start, c.pos);
}

/**
 * Whether `s` is one balanced `{...}` dictionary (`{}`, `{key=...}`, `{"key": ...}`, `{k = 1 : i32}`),
 * which XLA prints raw rather than quoted.
 */
export function isBalancedBraces(s: string): boolean {
  if (!s.startsWith("{") || !s.endsWith("}")) return false;
  if (!/^\{\s*(\}|("[^"]*"|[A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:])/.test(s)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0 && i !== s.length - 1) return false;
    if (ch === "\n") return false;
  }
  return depth === 0 && !inString;
}

export function printFrontendAttributes(attrs: Readonly<Record<string, string>>): string {
  const keys = Object.keys(attrs).sort();
  const key = (k: string): string => (/^[A-Za-z_][A-Za-z0-9_.\-]*$/.test(k) ? k : quote(k));
  return `{${keys.map((k) => `${key(k)}=${isBalancedBraces(attrs[k]!) ? attrs[k] : quote(attrs[k]!)}`).join(",")}}`;
}

/** A double-quoted string with C escapes. */
export function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}
