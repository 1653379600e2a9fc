// A literal as numpy's `repr` prints the same array (numpy 2.x defaults: precision 8,
// threshold 1000, edge items 3, line width 75, floatmode 'maxprec'), e.g.
// `array([[1., 2.]], dtype=float32)`. The rules are numpy's arrayprint.py:
//   - floats (float16/32/64): each value's shortest round-trip digits, at most 8 after the
//     point; scientific when a non-zero |value| is ≥ 1e8 (1e6 for float32, 1e3 for
//     float16) or < 1e-4, or max/min > 1000;
//     all elements padded to a common width (`1. `, `2.5`), nan/inf right-aligned;
//   - integers right-aligned to the widest; bools ` True`/`False`; complex as real and
//     signed imaginary parts, each formatted over its own values, `j` after the digits;
//   - ml_dtypes' types (bfloat16, float8_*, int4 ...) are not numpy number types, so numpy
//     prints each element's own repr, unpadded: C++ stream output (`%g`, 6 digits);
//   - `dtype=` unless implied (float64, int64, bool, complex128); `shape=` for empty
//     arrays other than (0,) and for arrays summarized with `...` (more than 1000 elements).

import { ELEMENT_TYPES, type ElementType } from "./element_type.js";
import { floatCodec } from "./float_codec.js";
import type { Literal, Scalar } from "./literal.js";
import { ML_DTYPES_NAMES, numpyDtypeName } from "./npy.js";
import { maxOf, minOf, range } from "./arrays.js";
import { elementCount } from "./shape.js";
import { rowMajorStrides } from "./index_util.js";

const PRECISION = 8;
const THRESHOLD = 1000;
const EDGE_ITEMS = 3;
const LINE_WIDTH = 75;

/** Shortest decimal digits that read back as `x` in type `t`: `{ digits: "15", exp: -5 }` is 1.5e-5. */
function shortestDigits(x: number, t: ElementType): { digits: string; exp: number } {
  let s = x.toExponential();
  if (t !== "f64") {
    const round = t === "f32" ? Math.fround : (v: number): number => floatCodec(t).decode(floatCodec(t).encode(v));
    for (let p = 0; p < 17; p++) {
      s = x.toExponential(p);
      if (round(Number(s)) === x) break;
    }
  }
  const [mant, e] = s.replace(/^-/, "").split("e") as [string, string];
  return { digits: mant.replace(".", "").replace(/0+$/, "") || "0", exp: Number(e) };
}

/** The exact decimal digits of |x| (finite, non-zero): `{ digits: "15", exp: -5 }` is 1.5e-5, no trailing zeros. */
function exactDigits(x: number): { digits: string; exp: number } {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, Math.abs(x));
  const hi = dv.getUint32(0);
  const biased = hi >>> 20;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(dv.getUint32(4));
  if (biased !== 0) mant |= 1n << 52n;
  const e2 = (biased === 0 ? 1 : biased) - 1075;
  // x = mant·2^e2 = mant·5^-e2 / 10^-e2 when e2 < 0: an exact decimal either way.
  const text = e2 >= 0 ? (mant << BigInt(e2)).toString() : (mant * 5n ** BigInt(-e2)).toString();
  const exp = text.length - 1 + Math.min(e2, 0);
  return { digits: text.replace(/0+$/, ""), exp };
}

/** |x| to `sig` significant digits, rounded half to even on the exact value (as numpy's Dragon4 rounds). */
function roundDigits(x: number, sig: number): { digits: string; exp: number } {
  const { digits, exp } = exactDigits(x);
  if (digits.length <= sig) return { digits: digits.padEnd(sig, "0"), exp };
  let kept = digits.slice(0, sig);
  const next = digits.charCodeAt(sig) - 48;
  const odd = (kept.charCodeAt(sig - 1) - 48) % 2 === 1;
  if (next > 5 || (next === 5 && (digits.length > sig + 1 || odd))) {
    const bumped = (BigInt(kept) + 1n).toString();
    if (bumped.length > sig) return { digits: bumped.slice(0, sig), exp: exp + 1 };
    kept = bumped;
  }
  return { digits: kept, exp };
}

/** Positional digits, unique and trimmed (`1.`, `2.5`, `0.33333333`), split at the point. */
function positional(x: number, t: ElementType): [string, string] {
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  let { digits, exp } = shortestDigits(x, t);
  if (digits.length - 1 - exp > PRECISION) {
    // More than 8 digits after the point: rounded there (positional mode shows |x| ≥ 1e-4 only).
    ({ digits, exp } = roundDigits(x, exp + 1 + PRECISION));
    digits = digits.replace(/0+$/, "") || "0";
  }
  const text = exp >= 0
    ? `${digits.slice(0, exp + 1).padEnd(exp + 1, "0")}.${digits.slice(exp + 1)}`
    : `0.${"0".repeat(-exp - 1)}${digits}`;
  const [i, f] = text.split(".") as [string, string];
  return [sign + i, f];
}

/** Scientific digits with at least `minDigits` after the point: mantissa integer part, fraction, exponent. */
function scientific(x: number, t: ElementType, minDigits = 0): [string, string, number] {
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  let { digits, exp } = shortestDigits(x, t);
  if (digits.length - 1 > PRECISION) ({ digits, exp } = roundDigits(x, PRECISION + 1));
  digits = digits.replace(/(.)0+$/, "$1");
  // numpy asks Dragon4 for `minDigits` digits at least: past the shortest ones come the
  // exact value's next digits (rounded), not zeros.
  if (digits.length - 1 < minDigits && x !== 0) ({ digits, exp } = roundDigits(x, minDigits + 1));
  return [sign + digits[0]!, digits.slice(1).padEnd(minDigits, "0"), exp];
}

type Format = (x: number) => string;

/** numpy's FloatingFormat over the values shown; `plusSign` for imaginary parts. */
function floatFormat(values: readonly number[], t: ElementType, plusSign = false): Format {
  const finite = values.filter(Number.isFinite);
  const nonZero = finite.filter((v) => v !== 0).map(Math.abs);
  let expFormat = false;
  if (nonZero.length > 0) {
    const max = maxOf(nonZero);
    const min = minOf(nonZero);
    // numpy ≥ 2.3: the cutoff is 10^(the type's decimal precision), at most 1e8.
    const cutoff = t === "f16" ? 1e3 : t === "f32" ? 1e6 : 1e8;
    expFormat = max >= cutoff || min < 1e-4 || max / min > 1000;
  }
  const signed = (s: string): string => (plusSign && !s.startsWith("-") ? `+${s}` : s);
  let padLeft = 0;
  let padRight = 0;
  let body: Format;
  if (finite.length === 0) body = () => "";
  else if (expFormat) {
    const parts = finite.map((v) => scientific(v, t));
    const precision = maxOf(parts.map((p) => p[1].length));
    const expSize = Math.max(2, maxOf(parts.map((p) => String(Math.abs(p[2])).length)));
    padLeft = maxOf(parts.map((p) => signed(p[0]).length));
    padRight = expSize + 2 + precision;
    body = (v) => {
      const [i, f, e] = scientific(v, t, precision);
      return `${signed(i).padStart(padLeft)}.${f}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(expSize, "0")}`;
    };
  } else {
    const parts = finite.map((v) => positional(v, t));
    padLeft = maxOf(parts.map((p) => signed(p[0]).length));
    padRight = maxOf(parts.map((p) => p[1].length));
    body = (v) => {
      const [i, f] = positional(v, t);
      return `${signed(i).padStart(padLeft)}.${f.padEnd(padRight)}`;
    };
  }
  if (finite.length !== values.length) {
    const negInf = plusSign || values.some((v) => v === -Infinity);
    padLeft = Math.max(padLeft, 3 - (padRight + 1), 3 + (negInf ? 1 : 0) - (padRight + 1));
  }
  return (v) => {
    if (Number.isFinite(v)) return body(v);
    const text = Number.isNaN(v) ? (plusSign ? "+nan" : "nan") : v < 0 ? "-inf" : plusSign ? "+inf" : "inf";
    return text.padStart(padLeft + padRight + 1);
  };
}

/** C++ `ostream << float` (printf `%g`: 6 significant digits, ties to even): how ml_dtypes' scalars print. */
function cppFloat(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x < 0 ? "-inf" : "inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const { digits, exp } = roundDigits(x, 6);
  const trimmed = digits.replace(/0+$/, "");
  if (exp < -4 || exp >= 6) {
    return `${sign}${trimmed[0]}${trimmed.length > 1 ? `.${trimmed.slice(1)}` : ""}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${trimmed}`;
  const int = trimmed.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = trimmed.slice(exp + 1);
  return `${sign}${int}${frac === "" ? "" : `.${frac}`}`;
}

/** The element formatter numpy builds for `t` from the values it will show. */
function elementFormat(t: ElementType, shown: readonly Scalar[], rank: number): (v: Scalar) => string {
  if (ML_DTYPES_NAMES[t] !== undefined) return (v) => (typeof v === "number" && ELEMENT_TYPES[t].kind === "float" ? cppFloat(v) : String(v));
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "pred") return (v) => (v === true ? (rank === 0 ? "True" : " True") : "False");
  if (kind === "signed" || kind === "unsigned") {
    const width = maxOf(shown.map((v) => String(v).length));
    return (v) => String(v).padStart(width);
  }
  if (kind === "complex") {
    const comp = ELEMENT_TYPES[t].componentType!;
    const pairs = shown as readonly { re: number; im: number }[];
    const re = floatFormat(pairs.map((p) => p.re), comp);
    const im = floatFormat(pairs.map((p) => p.im), comp, true);
    return (v) => {
      const c = v as { re: number; im: number };
      const i = im(c.im);
      const end = i.trimEnd().length;
      return `${re(c.re)}${i.slice(0, end)}j${i.slice(end)}`;
    };
  }
  const f = floatFormat(shown as readonly number[], t);
  return (v) => f(v as number);
}

/** numpy's `repr` of an array literal. */
export function numpyRepr(lit: Literal): string {
  const t = lit.elementType;
  const dims = lit.dimensions;
  // Only the elements shown are read: a summarised array of any size prints without a JS array of all its values.
  const values = lit.toDefaultLayout();
  const size = elementCount(dims);
  const summarize = size > THRESHOLD;
  const prefix = "array(";
  const extras: string[] = [];
  const shapeText = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(", ")})`;
  if ((size === 0 && !(dims.length === 1 && dims[0] === 0)) || summarize) extras.push(`shape=${shapeText}`);
  if (!(t === "f64" || t === "s64" || t === "index" || t === "pred" || t === "c128") || size === 0) extras.push(`dtype=${numpyDtypeName(t)}`);
  let body: string;
  if (size === 0) body = "[]";
  else {
    const strides = rowMajorStrides(dims);
    // Which indices of each axis are shown: all, or the edge items around "...".
    const shownIndices = (d: number): (number | "...")[] => {
      const n = dims[d]!;
      if (!summarize || n <= 2 * EDGE_ITEMS) return range(n);
      return [0, 1, 2, "...", n - 3, n - 2, n - 1];
    };
    const shown: Scalar[] = [];
    const collect = (d: number, offset: number): void => {
      if (d === dims.length) {
        shown.push(values.readLinear(offset));
        return;
      }
      for (const i of shownIndices(d)) if (i !== "...") collect(d + 1, offset + i * strides[d]!);
    };
    collect(0, 0);
    const format = elementFormat(t, shown, dims.length);
    body = formatArray(dims, strides, (k) => format(values.readLinear(k)), shownIndices, " ".repeat(prefix.length + 1), LINE_WIDTH - 1);
  }
  if (extras.length === 0) return `${prefix}${body})`;
  const head = `${prefix}${body},`;
  const extra = `${extras.join(", ")})`;
  const lastLine = head.length - (head.lastIndexOf("\n") + 1);
  return head + (lastLine + extra.length + 1 > LINE_WIDTH ? `\n${" ".repeat(prefix.length)}` : " ") + extra;
}

/** numpy's _formatArray: nested brackets, rows wrapped at the line width, blank lines between blocks. */
function formatArray(
  dims: readonly number[], strides: readonly number[], element: (k: number) => string,
  shownIndices: (d: number) => (number | "...")[], nextLinePrefix: string, lineWidth: number,
): string {
  const separator = ", ";
  const recurse = (d: number, offset: number, hangingIndent: string, width: number): string => {
    if (d === dims.length) return element(offset);
    const nextIndent = hangingIndent + " ";
    const nextWidth = width - 1;
    const items = shownIndices(d);
    let s = "";
    if (d === dims.length - 1) {
      const elemWidth = width - 1;
      let line = hangingIndent;
      items.forEach((i, n) => {
        const word = i === "..." ? "..." : recurse(d + 1, offset + i * strides[d]!, nextIndent, nextWidth);
        if (line.length + word.length > elemWidth && line.length > hangingIndent.length) {
          s += `${line.trimEnd()}\n`;
          line = hangingIndent;
        }
        line += word;
        if (n < items.length - 1) line += separator;
      });
      s += line;
    } else {
      const lineSep = `,${"\n".repeat(dims.length - d - 1)}`;
      s = items.map((i) => hangingIndent + (i === "..." ? "..." : recurse(d + 1, offset + i * strides[d]!, nextIndent, nextWidth))).join(lineSep);
    }
    return `[${s.slice(hangingIndent.length)}]`;
  };
  return recurse(0, 0, nextLinePrefix, lineWidth);
}
