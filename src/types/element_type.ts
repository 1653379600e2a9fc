// Element types: every primitive type of XLA and StableHLO, named as HLO text names
// them (`f32`, `bf16`, `f8e4m3fn`, ...). One table describes each type; everything
// that depends on a type's properties (storage, conversion, printing, parsing) reads
// this table instead of switching on names.

export const ELEMENT_TYPE_NAMES = [
  "pred",
  "s2", "s4", "s8", "s16", "s32", "s64",
  "u2", "u4", "u8", "u16", "u32", "u64",
  "f16", "bf16", "f32", "f64",
  "c64", "c128",
  "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e3m4", "f8e4m3", "f8e8m0fnu",
  "f6e2m3fn", "f6e3m2fn", "f4e2m1fn",
  "index",
] as const;

/** An array element type. TOKEN and tuples are shapes, not element types (see shape.ts). */
export type ElementType = (typeof ELEMENT_TYPE_NAMES)[number];

export type ElementKind = "pred" | "signed" | "unsigned" | "float" | "complex";

/**
 * How a binary floating-point format encodes its special values.
 * - `ieee`: exponent all-ones is inf (mantissa 0) or NaN (mantissa != 0); has -0.
 * - `fn`:   no infinities; only exponent and mantissa all-ones is NaN; has -0.
 * - `fnuz`: no infinities, no -0; the bit pattern of -0 (sign bit alone) is the only NaN.
 * - `finite`: no infinities and no NaN at all (the f6 and f4 formats).
 * - `e8m0`: no sign, no zero, no infinities; exponent all-ones is NaN (f8e8m0fnu).
 */
export type FloatEncoding = "ieee" | "fn" | "fnuz" | "finite" | "e8m0";

export interface FloatFormat {
  readonly exponentBits: number;
  readonly mantissaBits: number;
  readonly exponentBias: number;
  readonly encoding: FloatEncoding;
}

export interface ElementTypeInfo {
  readonly name: ElementType;
  readonly kind: ElementKind;
  /** Bits per element as XLA counts them (PRED is 8 in storage, 1 logically; see `bitWidth`). */
  readonly bitWidth: number;
  /** Bytes each element occupies in a literal's storage. */
  readonly storageBytes: number;
  /** Present for real floating-point types. */
  readonly float?: FloatFormat;
  /** For complex types: the real type of each component. */
  readonly componentType?: ElementType;
}

const ieee = (e: number, m: number): FloatFormat => ({
  exponentBits: e, mantissaBits: m, exponentBias: (1 << (e - 1)) - 1, encoding: "ieee",
});
const fmt = (e: number, m: number, bias: number, encoding: FloatEncoding): FloatFormat => ({
  exponentBits: e, mantissaBits: m, exponentBias: bias, encoding,
});

function info(
  name: ElementType, kind: ElementKind, bitWidth: number, storageBytes: number,
  extra: { float?: FloatFormat; componentType?: ElementType } = {},
): ElementTypeInfo {
  return { name, kind, bitWidth, storageBytes, ...extra };
}

export const ELEMENT_TYPES: Readonly<Record<ElementType, ElementTypeInfo>> = {
  pred: info("pred", "pred", 1, 1),
  s2: info("s2", "signed", 2, 1),
  s4: info("s4", "signed", 4, 1),
  s8: info("s8", "signed", 8, 1),
  s16: info("s16", "signed", 16, 2),
  s32: info("s32", "signed", 32, 4),
  s64: info("s64", "signed", 64, 8),
  u2: info("u2", "unsigned", 2, 1),
  u4: info("u4", "unsigned", 4, 1),
  u8: info("u8", "unsigned", 8, 1),
  u16: info("u16", "unsigned", 16, 2),
  u32: info("u32", "unsigned", 32, 4),
  u64: info("u64", "unsigned", 64, 8),
  f16: info("f16", "float", 16, 2, { float: ieee(5, 10) }),
  bf16: info("bf16", "float", 16, 2, { float: ieee(8, 7) }),
  f32: info("f32", "float", 32, 4, { float: ieee(8, 23) }),
  f64: info("f64", "float", 64, 8, { float: ieee(11, 52) }),
  c64: info("c64", "complex", 64, 8, { componentType: "f32" }),
  c128: info("c128", "complex", 128, 16, { componentType: "f64" }),
  f8e4m3fn: info("f8e4m3fn", "float", 8, 1, { float: fmt(4, 3, 7, "fn") }),
  f8e5m2: info("f8e5m2", "float", 8, 1, { float: ieee(5, 2) }),
  f8e4m3fnuz: info("f8e4m3fnuz", "float", 8, 1, { float: fmt(4, 3, 8, "fnuz") }),
  f8e5m2fnuz: info("f8e5m2fnuz", "float", 8, 1, { float: fmt(5, 2, 16, "fnuz") }),
  f8e4m3b11fnuz: info("f8e4m3b11fnuz", "float", 8, 1, { float: fmt(4, 3, 11, "fnuz") }),
  f8e3m4: info("f8e3m4", "float", 8, 1, { float: ieee(3, 4) }),
  f8e4m3: info("f8e4m3", "float", 8, 1, { float: ieee(4, 3) }),
  f8e8m0fnu: info("f8e8m0fnu", "float", 8, 1, { float: fmt(8, 0, 127, "e8m0") }),
  f6e2m3fn: info("f6e2m3fn", "float", 6, 1, { float: fmt(2, 3, 1, "finite") }),
  f6e3m2fn: info("f6e3m2fn", "float", 6, 1, { float: fmt(3, 2, 3, "finite") }),
  f4e2m1fn: info("f4e2m1fn", "float", 4, 1, { float: fmt(2, 1, 1, "finite") }),
  // MLIR's `index`: a signed integer as wide as the target's addresses, 64 bits on every
  // target XLA compiles for; HLO text, which has no such type, writes it as s64.
  index: info("index", "signed", 64, 8),
};

export function isElementType(name: string): name is ElementType {
  return Object.prototype.hasOwnProperty.call(ELEMENT_TYPES, name);
}

export const isFloat = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "float";
export const isComplex = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "complex";
export const isPred = (t: ElementType): boolean => t === "pred";
export const isSignedInt = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "signed";
export const isUnsignedInt = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "unsigned";
export const isInteger = (t: ElementType): boolean => isSignedInt(t) || isUnsignedInt(t);
/** Floating point or complex: the types on which transcendental ops are defined. */
export const isFloatOrComplex = (t: ElementType): boolean => isFloat(t) || isComplex(t);
/** 64-bit integers: held as bigint so they stay exact. */
export const isWideInt = (t: ElementType): boolean => isInteger(t) && ELEMENT_TYPES[t].bitWidth === 64;
export const bitWidth = (t: ElementType): number => ELEMENT_TYPES[t].bitWidth;
export const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/** The real type of a complex type's components (`c64` → `f32`); the type itself otherwise. */
export function realComponentType(t: ElementType): ElementType {
  return ELEMENT_TYPES[t].componentType ?? t;
}

/** The complex type whose components have real type `t`, if there is one. */
export function complexTypeOf(t: ElementType): ElementType | undefined {
  if (t === "f32") return "c64";
  if (t === "f64") return "c128";
  return undefined;
}

/** Inclusive range of an integer type, as bigints (exact for 64-bit types). */
export function integerRange(t: ElementType): { min: bigint; max: bigint } {
  const bits = BigInt(ELEMENT_TYPES[t].bitWidth);
  if (isSignedInt(t)) return { min: -(1n << (bits - 1n)), max: (1n << (bits - 1n)) - 1n };
  if (isUnsignedInt(t)) return { min: 0n, max: (1n << bits) - 1n };
  throw new TypeError(`integerRange: ${t} is not an integer type`);
}
