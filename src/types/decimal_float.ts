// Decimal text to f32 rounded once. `Math.fround(Number(text))` rounds twice (to f64,
// then to f32) and is wrong when the f64 lands exactly halfway between two f32 values
// although the decimal itself is not halfway (e.g. 1.00000005960464477539062500001 is
// just above the midpoint 1 + 2^-24, so f32 rounds it up, but its f64 is the midpoint and
// the tie goes to even, down). MLIR (APFloat) rounds the decimal once; so does this.

/** The f32 nearest to the decimal `text` (a JS number literal), ties to even; `double` is Number(text). */
export function decimalToF32(text: string, double = Number(text)): number {
  const f = Math.fround(double);
  if (f === double || !Number.isFinite(double) || !isF32Midpoint(double, f)) return f;
  // The double is a midpoint: the decimal's side of it decides (exactly on it: ties to even, as fround did).
  const side = compareDecimalToDouble(text, double);
  if (side === 0) return f;
  const other = f32Neighbor(f, Math.abs(double) > Math.abs(f) ? 1 : -1);
  return side > 0 ? Math.max(f, other) : Math.min(f, other);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The f32 one step from `f` in magnitude (+1 larger, -1 smaller), keeping the sign. */
function f32Neighbor(f: number, step: 1 | -1): number {
  f32[0] = f;
  u32[0] = u32[0]! + step;
  return f32[0];
}

/** Whether `d` lies exactly halfway between f32 `f` (its nearest) and f's neighbor on d's side. */
function isF32Midpoint(d: number, f: number): boolean {
  const other = f32Neighbor(f, Math.abs(d) > Math.abs(f) ? 1 : -1);
  return (f + other) / 2 === d; // exact: both are f32 values, their sum has at most 25 significant bits
}

/** Sign of (decimal `text` − `d`), exactly, with bigints: text is [-+]digits[.digits][e[-+]digits]. */
function compareDecimalToDouble(text: string, d: number): number {
  const m = /^([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/.exec(text);
  if (m === null) return 0;
  const negative = m[1] === "-";
  const digits = (m[2] ?? "") + (m[3] ?? "");
  const dec = BigInt(digits === "" ? "0" : digits);
  const e10 = Number(m[4] ?? "0") - (m[3] ?? "").length;
  // d = mant · 2^e2 exactly.
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, Math.abs(d));
  const hi = dv.getUint32(0);
  const biased = hi >>> 20;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(dv.getUint32(4));
  if (biased !== 0) mant |= 1n << 52n;
  const e2 = (biased === 0 ? 1 : biased) - 1075;
  // Compare dec·10^e10 with mant·2^e2 as integers: move negative exponents across.
  let lhs = dec;
  let rhs = mant;
  if (e10 >= 0) lhs *= 10n ** BigInt(e10);
  else rhs *= 10n ** BigInt(-e10);
  if (e2 >= 0) rhs <<= BigInt(e2);
  else lhs <<= BigInt(-e2);
  const c = lhs > rhs ? 1 : lhs < rhs ? -1 : 0;
  return negative ? -c : c;
}
