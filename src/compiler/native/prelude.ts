// The C prelude every native module starts with: fixed-width types, the f16/bf16 codecs
// (bit for bit those of src/types/float_codec.ts: decode exactly, encode rounding to
// nearest even with the ieee format's overflow to infinity, a NaN as the quiet NaN of
// the sign asked for), float min/max that propagate NaN as the interpreter's Math.max
// and Math.min do, and the f32 transcendentals shared with the WebAssembly backend (c_math.ts:
// exp, log, log1p, expm1, tanh, logistic, cbrt, erf with kernel/approximations.ts's ULP bounds),
// written without branches or calls so that the C compiler vectorizes the loops they
// are in (libm's are calls, which it does not). Everything else runs through libm in
// double and rounds once (≤ 1 ulp).

import { cMathSource } from "./c_math.js";

/**
 * The C library functions the generated C may call (c_values.ts's LIBM_UNARY with its f32
 * forms, the f64 transcendentals and the functions of halves through double, and the
 * prelude's own; memcpy, memmove and memset), declared here instead of including
 * <math.h> and <string.h>: glibc's math.h declares every function for seven float types
 * and took about a fifth of the C compiler's time on a typical module (docs/backends.md,
 * "Build time"). The prototypes are the C standard's, so they agree with the system's
 * headers where a kernel includes one (a test compiles the prelude after <math.h> and
 * <string.h>); a function called but not declared here stops the build
 * (-Werror=implicit-function-declaration in toolchain.ts) rather than returning an int.
 */
const DOUBLE_UNARY = ["fabs", "ceil", "floor", "rint", "round", "sqrt", "exp", "log", "tanh", "expm1", "log1p", "erf", "cbrt", "sin", "cos", "tan"];
const FLOAT_UNARY = ["fabsf", "ceilf", "floorf", "rintf", "roundf", "sqrtf"];
const DOUBLE_BINARY = ["pow", "atan2", "fmod"];
const FLOAT_BINARY = ["fmodf", "copysignf"];

/** The C library functions the prelude declares: a program module binds them to the process's C library when it loads (toolchain.ts's probe calls each). */
export const LIBRARY_FUNCTIONS = [...DOUBLE_UNARY, ...FLOAT_UNARY, ...DOUBLE_BINARY, ...FLOAT_BINARY, "ldexp", "frexp", "memcpy", "memmove", "memset"];

const LIBRARY_DECLARATIONS = [
  ...DOUBLE_UNARY.map((f) => `double ${f}(double);`),
  ...FLOAT_UNARY.map((f) => `float ${f}(float);`),
  ...DOUBLE_BINARY.map((f) => `double ${f}(double, double);`),
  ...FLOAT_BINARY.map((f) => `float ${f}(float, float);`),
  "double ldexp(double, int);",
  "double frexp(double, int *);",
  "void *memcpy(void *, const void *, size_t);",
  "void *memmove(void *, const void *, size_t);",
  "void *memset(void *, int, size_t);",
  // math.h's macros, as GCC's and Clang's builtins (what glibc's math.h defines them as under GCC).
  "#ifndef INFINITY\n#define INFINITY (__builtin_inff())\n#endif",
  "#ifndef NAN\n#define NAN (__builtin_nanf(\"\"))\n#endif",
  "#ifndef signbit\n#define signbit(x) __builtin_signbit(x)\n#endif",
  "#ifndef isfinite\n#define isfinite(x) __builtin_isfinite(x)\n#endif",
].join("\n");

const BASE = String.raw`
#include <stdint.h>
#include <stddef.h>
${LIBRARY_DECLARATIONS}

typedef uint8_t xk_u8;

static inline uint32_t xk_f32_bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float xk_bits_f32(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static inline uint64_t xk_f64_bits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static inline double xk_bits_f64(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* NaN-propagating max and min; -0 < +0 (JavaScript's Math.max and Math.min). */
static inline float xk_maxf(float a, float b) {
  float m = a > b ? a : b;
  m = (a == b) ? (signbit(a) ? b : a) : m;
  return (a != a || b != b) ? a + b : m;
}
static inline float xk_minf(float a, float b) {
  float m = a < b ? a : b;
  m = (a == b) ? (signbit(a) ? a : b) : m;
  return (a != a || b != b) ? a + b : m;
}
static inline double xk_max(double a, double b) {
  double m = a > b ? a : b;
  m = (a == b) ? (signbit(a) ? b : a) : m;
  return (a != a || b != b) ? a + b : m;
}
static inline double xk_min(double a, double b) {
  double m = a < b ? a : b;
  m = (a == b) ? (signbit(a) ? a : b) : m;
  return (a != a || b != b) ? a + b : m;
}

/* A lane of a float max or min accumulated by pmax/pmin, made exact (emit_c_reduce.ts laneStep):
   a zero takes the sign bit its zeros agree on; a lane that read a NaN is NaN. */
static inline float xk_repair_f32(float a, uint32_t sign, uint32_t nan) {
  return xk_bits_f32((a == 0 ? (sign & 0x80000000u) : xk_f32_bits(a)) | nan);
}
static inline double xk_repair_f64(double a, uint64_t sign, uint64_t nan) {
  return xk_bits_f64((a == 0 ? (sign & 0x8000000000000000ull) : xk_f64_bits(a)) | nan);
}

/* ieee half formats: exponent bits E, mantissa bits M (f16: 5, 10; bf16: 8, 7). */
static inline double xk_decode_half(uint32_t bits, int E, int M) {
  int bias = (1 << (E - 1)) - 1;
  uint32_t exp_mask = (1u << E) - 1, man_mask = (1u << M) - 1;
  int sign = (bits >> (E + M)) & 1;
  uint32_t e = (bits >> M) & exp_mask, m = bits & man_mask;
  double v;
  if (e == exp_mask) v = m == 0 ? INFINITY : NAN;
  else if (e == 0) v = ldexp((double)m, 1 - bias - M);
  else v = ldexp((double)(m + (1u << M)), (int)e - bias - M);
  return sign ? -v : v;
}
static inline float xk_bf16_to_f32(uint16_t bits) { return xk_bits_f32((uint32_t)bits << 16); }

/* The pattern nearest to v, ties to even; a NaN is the quiet NaN with sign neg_nan. */
static inline uint32_t xk_encode_half(double v, int neg_nan, int E, int M) {
  int bias = (1 << (E - 1)) - 1;
  uint32_t exp_mask = (1u << E) - 1, man_mask = (1u << M) - 1;
  uint32_t sign_bit = 1u << (E + M);
  if (v != v) return (neg_nan ? sign_bit : 0) | (exp_mask << M) | (1u << (M - 1));
  uint32_t s = signbit(v) ? sign_bit : 0;
  double a = fabs(v);
  if (a == INFINITY) return s | (exp_mask << M);
  if (a == 0) return s;
  int min_normal_exp = 1 - bias;
  double scaled, base;
  if (a < ldexp(1.0, min_normal_exp)) {
    scaled = ldexp(a, M - min_normal_exp);
    base = floor(scaled);
  } else {
    int e;
    frexp(a, &e);
    e -= 1; /* a in [2^e, 2^(e+1)) */
    scaled = ldexp(a, M - e);
    base = (double)(e + bias) * (double)(1u << M) + (floor(scaled) - (double)(1u << M));
  }
  double frac = scaled - floor(scaled);
  int up = frac > 0.5 || (frac == 0.5 && fmod(base, 2.0) == 1.0);
  double magnitude = base + up;
  double max_finite = (double)(((exp_mask - 1) << M) | man_mask);
  if (magnitude > max_finite) return s | (exp_mask << M);
  return s | (uint32_t)magnitude;
}
#define xk_dec_f16(b) xk_decode_half((b), 5, 10)
#define xk_enc_f16(v, n) ((uint16_t)xk_encode_half((v), (n), 5, 10))
#define xk_dec_bf16(b) ((double)xk_bf16_to_f32(b))
#define xk_enc_bf16(v, n) ((uint16_t)xk_encode_half((v), (n), 8, 7))

/* A 64-bit integer as a double rounded to odd (exact below 2^53), so that rounding it
   again to a narrower float gives the correctly rounded result (types/convert.ts). */
static inline double xk_i64_to_double_odd(int64_t x) {
  uint64_t m = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  int drop = 0;
  while ((m >> drop) >= (1ull << 53)) drop++;
  uint64_t kept = m >> drop;
  if (drop > 0 && (m & ((1ull << drop) - 1)) != 0) kept |= 1;
  double v = ldexp((double)kept, drop);
  return x < 0 ? -v : v;
}
static inline double xk_u64_to_double_odd(uint64_t m) {
  int drop = 0;
  while ((m >> drop) >= (1ull << 53)) drop++;
  uint64_t kept = m >> drop;
  if (drop > 0 && (m & ((1ull << drop) - 1)) != 0) kept |= 1;
  return ldexp((double)kept, drop);
}

/* Round half away from zero, keeping -0 (float_math.ts's roundHalfAwayFromZero). */
static inline double xk_round_afz(double x) { return round(x); }

/* Float to integer: truncate, saturate at the type's range, NaN to 0 (types/convert.ts). */
#define XK_F2I(x, T, lo, hi) ((x) != (x) ? (T)0 : (double)(x) >= (double)(hi) ? (T)(hi) : (double)(x) <= (double)(lo) ? (T)(lo) : (T)(x))


`;

export const PRELUDE = `${BASE}\n${cMathSource()}\n`;
