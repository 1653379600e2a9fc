// The f32 transcendentals of the native backend: the shared approximations
// (kernel/approximations.ts, which WebAssembly renders too: the same reductions, polynomials, constants and so the
// same stated ULP bounds), written out as C by running their emitters against a FloatOps
// whose "instructions" build C expressions instead of WebAssembly bytes. Each becomes a
// `static inline float xk_<name>_f32(float x)` of straight-line code (no branch, no
// call), which the C compiler inlines into the kernels' loops and vectorizes, and a
// `static inline xk_vf xk_v_<name>_f32(xk_vf x)` doing the same operations on sixteen
// lanes at once (for the kernels written in vectors: emit_c_vector.ts), lane for lane
// the scalar function's results. Scalar values are held as the scalar
// WebAssembly code holds them: floats as float, integers as uint32_t (wrapping; signed
// where an op says so), masks as int (0 or 1, or an integer's bits where the code
// selects on a sign mask: any nonzero value is true, as for wasm's select); vectors hold
// the same per lane, masks as all-ones or zero lanes. A multiply-add is XK_MADD: fused
// where the target has FMA, else a multiply and an add, which the emitters' bounds
// allow either way (approximations.ts).

import { APPROXIMATIONS, type ApproximationName, type FloatOps } from "../kernel/approximations.js";
import { ExpressionFloatOps, type ExpressionSyntax, type ValueKind as Kind } from "../kernel/expression_float_ops.js";

/** How a function's values are written: one lane per value, or sixteen (the xk_v helpers of VECTOR_HELPERS). */
interface Flavor {
  readonly types: Record<Kind, string>;
  readonly fconst: (c: string) => string;
  readonly iconst: (hex: string) => string;
  readonly min: (a: string, b: string) => string;
  readonly max: (a: string, b: string) => string;
  readonly abs: (a: string) => string;
  readonly nearest: (a: string) => string;
  readonly sqrt: (a: string) => string;
  /** a < b ? b : a and b < a ? b : a. */
  readonly pmax: (a: string, b: string) => string;
  readonly pmin: (a: string, b: string) => string;
  /** A compare of floats (op: < > == !=), or of integers read as signed. */
  readonly compare: (op: string, a: string, b: string) => string;
  readonly signedGreater: (a: string, b: string) => string;
  readonly select: (kind: Kind, mask: string, a: string, b: string) => string;
  readonly bits: (a: string) => string;
  readonly fromBits: (a: string) => string;
  readonly shiftRightSigned: (a: string, k: number) => string;
  readonly itof: (a: string) => string;
  readonly ftoi: (a: string) => string;
  readonly copysign: (a: string, b: string) => string;
  readonly madd: (a: string, b: string, c: string) => string;
  /** p·2^n rounded once (FloatOps.ldexp), where the flavor has it. */
  readonly ldexp?: (p: string, n: string) => string;
}

const SCALAR: Flavor = {
  types: { float: "float", int: "uint32_t", mask: "int" },
  fconst: (c) => c,
  iconst: (hex) => hex,
  min: (a, b) => `xk_minf(${a}, ${b})`,
  max: (a, b) => `xk_maxf(${a}, ${b})`,
  abs: (a) => `fabsf(${a})`,
  nearest: (a) => `rintf(${a})`,
  sqrt: (a) => `sqrtf(${a})`,
  // One vector instruction each once vectorized (the operand written twice is a name: see CFloatOps.named).
  pmax: (a, b) => `(${a} < ${b} ? ${b} : ${a})`,
  pmin: (a, b) => `(${b} < ${a} ? ${b} : ${a})`,
  compare: (op, a, b) => `(${a} ${op} ${b})`,
  signedGreater: (a, b) => `((int32_t)${a} > (int32_t)${b})`,
  select: (_kind, m, a, b) => `(${m} ? ${a} : ${b})`,
  bits: (a) => `xk_f32_bits(${a})`,
  fromBits: (a) => `xk_bits_f32(${a})`,
  shiftRightSigned: (a, k) => `(uint32_t)((int32_t)${a} >> ${k})`,
  itof: (a) => `(float)(int32_t)${a}`,
  // Saturating, as i32.trunc_sat_f32_s (the emitters only convert values in range).
  ftoi: (a) => `(uint32_t)XK_F2I(${a}, int32_t, -2147483648ll, 2147483647ll)`,
  copysign: (a, b) => `copysignf(${a}, ${b})`,
  madd: (a, b, c) => `XK_MADD(${a}, ${b}, ${c})`,
};

/** Sixteen lanes: the helpers of VECTOR_HELPERS, each lane computing what SCALAR computes. */
const VECTOR: Flavor = {
  types: { float: "xk_vf", int: "xk_vu", mask: "xk_vi" },
  fconst: (c) => `xk_vsplat(${c})`,
  iconst: (hex) => `xk_vsplatu(${hex})`,
  min: (a, b) => `xk_vminf(${a}, ${b})`,
  max: (a, b) => `xk_vmaxf(${a}, ${b})`,
  abs: (a) => `xk_vabs(${a})`,
  nearest: (a) => `xk_vrint(${a})`,
  sqrt: (a) => `xk_vsqrt(${a})`,
  pmax: (a, b) => `xk_vpmax(${a}, ${b})`,
  pmin: (a, b) => `xk_vpmin(${a}, ${b})`,
  compare: (op, a, b) => `(${a} ${op} ${b})`,
  signedGreater: (a, b) => `((xk_vi)${a} > (xk_vi)${b})`,
  select: (kind, m, a, b) => (kind === "float" ? `xk_vsel((xk_vi)${m}, ${a}, ${b})`
    : kind === "int" ? `xk_vseli((xk_vi)${m}, ${a}, ${b})` : `((xk_vi)xk_vseli((xk_vi)${m}, (xk_vu)${a}, (xk_vu)${b}))`),
  bits: (a) => `((xk_vu)${a})`,
  fromBits: (a) => `((xk_vf)${a})`,
  shiftRightSigned: (a, k) => `((xk_vu)((xk_vi)${a} >> ${k}))`,
  itof: (a) => `__builtin_convertvector((xk_vi)${a}, xk_vf)`,
  ftoi: (a) => `((xk_vu)__builtin_convertvector(${a}, xk_vi))`,
  copysign: (a, b) => `xk_vcopysign(${a}, ${b})`,
  madd: (a, b, c) => `xk_vmadd(${a}, ${b}, ${c})`,
  ldexp: (p, n) => `xk_vldexp(${p}, ${n})`,
};

const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

/** A C float constant holding exactly x rounded to f32 (as f32.const does). */
export function cFloat(x: number): string {
  F32[0] = x;
  const v = F32[0]!;
  if (Number.isNaN(v)) return "xk_bits_f32(0x7fc00000u)";
  if (!Number.isFinite(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 24) return `${v}.0f`;
  return `xk_bits_f32(0x${F32_BITS[0]!.toString(16)}u) /* ${v} */`;
}

/** How C declares a function's variables. */
const C_SYNTAX = (f: Flavor): ExpressionSyntax => ({
  types: f.types,
  declare: (type, name) => `${type} ${name};`,
  temporary: (type, name, expr) => `const ${type} ${name} = ${expr};`,
});

/** One function's body as C, in a flavor's types and helpers. */
class CFloatOps extends ExpressionFloatOps implements FloatOps {
  readonly ldexp?: () => void;

  constructor(private readonly f: Flavor) {
    super(C_SYNTAX(f));
    const ldexp = f.ldexp;
    if (ldexp !== undefined) this.ldexp = (): void => this.op2("float", ldexp);
  }

  fconst(x: number): void { this.push(this.f.fconst(cFloat(x)), "float"); }
  iconst(x: number): void { this.push(this.f.iconst(`0x${(x >>> 0).toString(16)}u`), "int"); }
  add(): void { this.op2("float", (a, b) => `(${a} + ${b})`); }
  sub(): void { this.op2("float", (a, b) => `(${a} - ${b})`); }
  mul(): void { this.op2("float", (a, b) => `(${a} * ${b})`); }
  div(): void { this.op2("float", (a, b) => `(${a} / ${b})`); }
  // wasm's f32.min and max: NaN-propagating, -0 < +0.
  min(): void { this.op2("float", this.f.min); }
  max(): void { this.op2("float", this.f.max); }
  abs(): void { this.op1("float", this.f.abs); }
  neg(): void { this.op1("float", (a) => `(-${a})`); }
  nearest(): void { this.op1("float", this.f.nearest); }
  sqrt(): void { this.op1("float", this.f.sqrt); }
  pmax(): void { this.op2("float", (a, b) => this.f.pmax(this.named(a), b)); }
  pmin(): void { this.op2("float", (a, b) => this.f.pmin(this.named(a), b)); }
  lt(): void { this.op2("mask", (a, b) => this.f.compare("<", a, b)); }
  gt(): void { this.op2("mask", (a, b) => this.f.compare(">", a, b)); }
  eq(): void { this.op2("mask", (a, b) => this.f.compare("==", a, b)); }
  ne(): void { this.op2("mask", (a, b) => this.f.compare("!=", a, b)); }
  igt(): void { this.op2("mask", this.f.signedGreater); }
  ieq(): void { this.op2("mask", (a, b) => this.f.compare("==", a, b)); }
  select(): void {
    const m = this.pop();
    const [a, b] = this.pop2();
    this.push(this.f.select(a.kind, m.expr, a.expr, b.expr), a.kind);
  }
  bits(): void { this.op1("int", this.f.bits); }
  fromBits(): void { this.op1("float", this.f.fromBits); }
  iadd(): void { this.op2("int", (a, b) => `(${a} + ${b})`); }
  isub(): void { this.op2("int", (a, b) => `(${a} - ${b})`); }
  iand(): void { this.op2("int", (a, b) => `(${a} & ${b})`); }
  ior(): void { this.op2("int", (a, b) => `(${a} | ${b})`); }
  ixor(): void { this.op2("int", (a, b) => `(${a} ^ ${b})`); }
  ishl(k: number): void { this.op1("int", (a) => `(${a} << ${k})`); }
  ishrS(k: number): void { this.op1("int", (a) => this.f.shiftRightSigned(a, k)); }
  ishrU(k: number): void { this.op1("int", (a) => `(${a} >> ${k})`); }
  itof(): void { this.op1("float", this.f.itof); }
  ftoi(): void { this.op1("int", this.f.ftoi); }
  mor(): void { this.op2("mask", (a, b) => `(${a} | ${b})`); }
  mand(): void { this.op2("mask", (a, b) => `(${a} & ${b})`); }
  copysign(): void { this.op2("float", this.f.copysign); }
  readonly madd = (): void => {
    const c = this.pop();
    const [a, b] = this.pop2();
    this.push(this.f.madd(a.expr, b.expr, c.expr), "float");
  };
}

/** The C function computing an approximation in f32 (`vector`: on xk_vf). */
export function cMathFunction(name: ApproximationName, vector = false): string {
  return `xk_${vector ? "v_" : ""}${name}_f32`;
}

function functionSource(op: ApproximationName, emit: (o: FloatOps, x: number) => void, vector: boolean): string {
  const f = vector ? VECTOR : SCALAR;
  const o = new CFloatOps(f);
  emit(o, 0);
  const result = o.result();
  const body = [...o.declarations(), ...o.statements, `return ${result};`];
  return `static inline ${f.types.float} ${cMathFunction(op, vector)}(${f.types.float} x) {\n${body.map((s) => `  ${s}`).join("\n")}\n}`;
}

/**
 * The vector helpers: sixteen f32 lanes as one value, loads and stores at any
 * alignment, splats, and per-lane versions of the scalar helpers, each lane's result
 * that of the scalar helper on it. On AVX-512 (VECTOR_CONDITION) one zmm register a
 * value; on AVX2 with FMA (LOOP_VECTOR_CONDITION, loop kernels only) two ymm halves,
 * which the helpers reach through a union (GCC 12 moves a 64-byte vector's halves
 * through the stack when they are taken apart by shuffles).
 */
const VECTOR_HELPERS = String.raw`#include <immintrin.h>
typedef float xk_vf __attribute__((vector_size(64)));
typedef uint32_t xk_vu __attribute__((vector_size(64)));
typedef int32_t xk_vi __attribute__((vector_size(64)));
#if defined(__AVX512F__)
static inline xk_vf xk_vload(const float *p) { return (xk_vf)_mm512_loadu_ps(p); }
static inline void xk_vstore(float *p, xk_vf v) { _mm512_storeu_ps(p, (__m512)v); }
static inline void xk_vstoreu(uint32_t *p, xk_vu v) { _mm512_storeu_si512(p, (__m512i)v); }
static inline xk_vf xk_vsplat(float s) { return (xk_vf)_mm512_set1_ps(s); }
static inline xk_vu xk_vsplatu(uint32_t s) { return (xk_vu)_mm512_set1_epi32((int)s); }
static inline xk_vf xk_vmadd(xk_vf a, xk_vf b, xk_vf c) {
#if defined(XK_NO_FMA)
  return a * b + c;
#else
  return (xk_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#endif
}
/* pmax(a, b) = a < b ? b : a and pmin(a, b) = b < a ? b : a: maxps and minps, b first. */
static inline xk_vf xk_vpmax(xk_vf a, xk_vf b) { return (xk_vf)_mm512_max_ps((__m512)b, (__m512)a); }
static inline xk_vf xk_vpmin(xk_vf a, xk_vf b) { return (xk_vf)_mm512_min_ps((__m512)b, (__m512)a); }
/* xk_maxf and xk_minf: NaN-propagating, -0 < +0. */
static inline xk_vf xk_vextremum(xk_vf a, xk_vf b, int max) {
  __m512 x = (__m512)a, y = (__m512)b;
  __mmask16 negative = _mm512_cmplt_epi32_mask((__m512i)a, _mm512_setzero_si512());
  __m512 tie = max ? _mm512_mask_blend_ps(negative, x, y) : _mm512_mask_blend_ps(negative, y, x);
  __m512 m = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_EQ_OQ), max ? _mm512_max_ps(x, y) : _mm512_min_ps(x, y), tie);
  return (xk_vf)_mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, y, _CMP_UNORD_Q), m, _mm512_add_ps(x, y));
}
static inline xk_vf xk_vrint(xk_vf a) { return (xk_vf)_mm512_roundscale_ps((__m512)a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline xk_vf xk_vsqrt(xk_vf a) { return (xk_vf)_mm512_sqrt_ps((__m512)a); }
/* p·2^n for integral n, rounded once (the scalar code's p·2^(n+64)·2^-64). */
static inline xk_vf xk_vldexp(xk_vf p, xk_vf n) { return (xk_vf)_mm512_scalef_ps((__m512)p, (__m512)n); }
/* m ? a : b, a lane true where m's is nonzero. */
static inline xk_vf xk_vsel(xk_vi m, xk_vf a, xk_vf b) {
  return (xk_vf)_mm512_mask_blend_ps(_mm512_test_epi32_mask((__m512i)m, (__m512i)m), (__m512)b, (__m512)a);
}
/* Sixteen pred bytes (0 or 1) as xk_vsel's lanes. */
static inline xk_vi xk_vloadpred(const uint8_t *p) { return (xk_vi)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)); }
static inline xk_vu xk_vseli(xk_vi m, xk_vu a, xk_vu b) {
  return (xk_vu)_mm512_mask_blend_epi32(_mm512_test_epi32_mask((__m512i)m, (__m512i)m), (__m512i)b, (__m512i)a);
}
/* A store past the caches (to a 64-byte aligned address), for large outputs nothing reads
   soon; xk_stream_fence orders such stores before the kernel returns. */
static inline void xk_vstream(float *p, xk_vf v) { _mm512_stream_ps(p, (__m512)v); }
#else
/* AVX2: the same operations on each ymm half (xk_vh), lane for lane. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef union { xk_vf f; xk_vu u; xk_vi i; __m256 h[2]; __m256i n[2]; } xk_vh;
static inline xk_vf xk_vload(const float *p) { xk_vh r; r.h[0] = _mm256_loadu_ps(p); r.h[1] = _mm256_loadu_ps(p + 8); return r.f; }
static inline void xk_vstore(float *p, xk_vf v) { xk_vh x = { .f = v }; _mm256_storeu_ps(p, x.h[0]); _mm256_storeu_ps(p + 8, x.h[1]); }
static inline void xk_vstoreu(uint32_t *p, xk_vu v) { xk_vh x = { .u = v }; _mm256_storeu_si256((__m256i *)p, x.n[0]); _mm256_storeu_si256((__m256i *)(p + 8), x.n[1]); }
static inline xk_vf xk_vsplat(float s) { xk_vh r; r.h[0] = r.h[1] = _mm256_set1_ps(s); return r.f; }
static inline xk_vu xk_vsplatu(uint32_t s) { xk_vh r; r.n[0] = r.n[1] = _mm256_set1_epi32((int)s); return r.u; }
static inline xk_vf xk_vmadd(xk_vf a, xk_vf b, xk_vf c) {
#if defined(XK_NO_FMA)
  return a * b + c;
#else
  xk_vh x = { .f = a }, y = { .f = b }, z = { .f = c }, r;
  for (int k = 0; k < 2; k++) r.h[k] = _mm256_fmadd_ps(x.h[k], y.h[k], z.h[k]);
  return r.f;
#endif
}
static inline xk_vf xk_vpmax(xk_vf a, xk_vf b) { xk_vh x = { .f = a }, y = { .f = b }, r; for (int k = 0; k < 2; k++) r.h[k] = _mm256_max_ps(y.h[k], x.h[k]); return r.f; }
static inline xk_vf xk_vpmin(xk_vf a, xk_vf b) { xk_vh x = { .f = a }, y = { .f = b }, r; for (int k = 0; k < 2; k++) r.h[k] = _mm256_min_ps(y.h[k], x.h[k]); return r.f; }
/* blendv(a, b, m) = m ? b : a, by m's sign bits (all ones or zero here). */
static inline xk_vf xk_vextremum(xk_vf a, xk_vf b, int max) {
  xk_vh x = { .f = a }, y = { .f = b }, r;
  for (int k = 0; k < 2; k++) {
    __m256 negative = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_setzero_si256(), x.n[k]));
    __m256 tie = max ? _mm256_blendv_ps(x.h[k], y.h[k], negative) : _mm256_blendv_ps(y.h[k], x.h[k], negative);
    __m256 m = _mm256_blendv_ps(max ? _mm256_max_ps(x.h[k], y.h[k]) : _mm256_min_ps(x.h[k], y.h[k]), tie, _mm256_cmp_ps(x.h[k], y.h[k], _CMP_EQ_OQ));
    r.h[k] = _mm256_blendv_ps(m, _mm256_add_ps(x.h[k], y.h[k]), _mm256_cmp_ps(x.h[k], y.h[k], _CMP_UNORD_Q));
  }
  return r.f;
}
static inline xk_vf xk_vrint(xk_vf a) { xk_vh x = { .f = a }, r; for (int k = 0; k < 2; k++) r.h[k] = _mm256_round_ps(x.h[k], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); return r.f; }
static inline xk_vf xk_vsqrt(xk_vf a) { xk_vh x = { .f = a }, r; for (int k = 0; k < 2; k++) r.h[k] = _mm256_sqrt_ps(x.h[k]); return r.f; }
/* The scalar code's p·2^(n+64)·2^-64 itself (n integral in [-150, 0]: 2^(n+64) a normal f32; a NaN n
   comes with a NaN p, which both products keep). */
static inline xk_vf xk_vldexp(xk_vf p, xk_vf n) {
  xk_vh x = { .f = p }, e = { .f = n }, r;
  for (int k = 0; k < 2; k++) {
    __m256 s = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(e.h[k]), _mm256_set1_epi32(191)), 23));
    r.h[k] = _mm256_mul_ps(_mm256_mul_ps(x.h[k], s), _mm256_set1_ps(0x1p-64f));
  }
  return r.f;
}
static inline xk_vf xk_vsel(xk_vi m, xk_vf a, xk_vf b) {
  xk_vh c = { .i = m }, x = { .f = a }, y = { .f = b }, r;
  for (int k = 0; k < 2; k++) r.h[k] = _mm256_blendv_ps(x.h[k], y.h[k], _mm256_castsi256_ps(_mm256_cmpeq_epi32(c.n[k], _mm256_setzero_si256())));
  return r.f;
}
static inline xk_vu xk_vseli(xk_vi m, xk_vu a, xk_vu b) { return (xk_vu)xk_vsel(m, (xk_vf)a, (xk_vf)b); }
static inline xk_vi xk_vloadpred(const uint8_t *p) {
  xk_vh r;
  for (int k = 0; k < 2; k++) r.n[k] = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 8 * k)));
  return r.i;
}
static inline void xk_vstream(float *p, xk_vf v) { xk_vh x = { .f = v }; _mm256_stream_ps(p, x.h[0]); _mm256_stream_ps(p + 8, x.h[1]); }
#endif
static inline xk_vf xk_vmaxf(xk_vf a, xk_vf b) { return xk_vextremum(a, b, 1); }
static inline xk_vf xk_vminf(xk_vf a, xk_vf b) { return xk_vextremum(a, b, 0); }
static inline xk_vf xk_vabs(xk_vf a) { return (xk_vf)((xk_vu)a & 0x7fffffffu); }
static inline xk_vf xk_vcopysign(xk_vf a, xk_vf b) { return (xk_vf)(((xk_vu)a & 0x7fffffffu) | ((xk_vu)b & 0x80000000u)); }
static inline void xk_stream_fence(void) { _mm_sfence(); }`;

/** Where kernels with accumulators (row reductions and pipelines) and GEMM epilogues take their vector form: AVX-512, with GCC or Clang (the helpers are its intrinsics). */
export const VECTOR_CONDITION = "defined(__AVX512F__) && defined(__GNUC__)";
/**
 * Where loop kernels (no accumulators) take it: AVX-512, or AVX2 with FMA (the scalar
 * form's XK_MADD is then fused too). On a Zen 3 the GELU over 128x3072 ran 1.19x as fast
 * in its written form on AVX2 as in GCC's vectorization of the scalar loop, with the same
 * bits; the encoder's softmax (a row pipeline) ran 3.3x slower (159 against 48 µs: GCC 12
 * keeps 64-byte vector accumulators in memory without AVX-512), so row pipelines keep
 * VECTOR_CONDITION (2026-12-01).
 */
export const LOOP_VECTOR_CONDITION = "defined(__GNUC__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))";

/** The vector helpers' definitions, guarded so that a module defines them once (emit_c_vector.ts). */
export function cVectorHelpers(): string {
  return `#ifndef XK_HAVE_VECTOR_HELPERS\n#define XK_HAVE_VECTOR_HELPERS\n${VECTOR_HELPERS}\n#endif`;
}

/** The vector form of an approximation: emitted only into the kernels that call it (emit_c_vector.ts). */
export function cVectorMathSource(op: ApproximationName): string {
  return functionSource(op, APPROXIMATIONS[op], true);
}

/** The prelude's part: every approximation as a scalar function (none call each other). */
export function cMathSource(): string {
  return [
    "/* a·b + c: fused where the target has FMA (approximations.ts's bounds hold either way; XK_NO_FMA: never, for tests). */",
    "#if (defined(__FMA__) || defined(__aarch64__)) && !defined(XK_NO_FMA)",
    "#define XK_MADD(a, b, c) __builtin_fmaf((a), (b), (c))",
    "#else",
    "#define XK_MADD(a, b, c) ((a) * (b) + (c))",
    "#endif",
    ...Object.entries(APPROXIMATIONS).map(([op, emit]) => functionSource(op as ApproximationName, emit, false)),
  ].join("\n");
}
