// The C prelude every native module starts with: fixed-width types, the f16/bf16 codecs
// (bit for bit those of src/types/float_codec.ts: decode exactly, encode rounding to
// nearest even with the ieee format's overflow to infinity, a NaN as the quiet NaN of
// the sign asked for), float min/max that propagate NaN as the interpreter's Math.max
// and Math.min do, and f32 exp/tanh written without branches or calls so that the C
// compiler vectorizes the loops they are in (libm's are calls, which it does not).
//
// Accuracy of the f32 helpers (in f32 ulps of the correctly rounded result; the wasm
// backend's bounds, src/compiler/wasm/math.ts, are exp ≤ 3, tanh ≤ 4):
//   xk_expf   ≤ 2 ulp: Cody–Waite reduction by ln2 (two-part constant), degree-7
//             Taylor polynomial in float, 2^n applied in two steps (subnormal results).
//   xk_tanhf  ≤ 3 ulp: an odd Taylor series to x^17 below 0.55 (the next term is below 0.1 ulp),
//             1 - 2 / (e^{2|x|} + 1) above it (the subtraction loses at most a bit).
// Everything else runs through libm in double and rounds once (≤ 1 ulp).

export const PRELUDE = String.raw`
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

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

/* Total order keys: the bit pattern read as sign and magnitude (-NaN < -inf < ... < -0 < +0 < ... < +NaN). */
static inline int64_t xk_total_key(uint64_t bits, int width) {
  uint64_t sign = (bits >> (width - 1)) & 1;
  int64_t magnitude = (int64_t)(bits & ((width == 64 ? ~0ull : (1ull << (width - 1)) - 1) >> (width == 64 ? 1 : 0)));
  return sign ? -1 - magnitude : magnitude;
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

/* reduce-precision (types/reduce_precision.ts) on the bits of an ieee value of width W,
   source exponent SE and mantissa SM bits, to E exponent and M mantissa bits. */
static inline uint64_t xk_reduce_precision(uint64_t x, int is_nan, int W, int SE, int SM, int E, int M) {
  uint64_t mask = W == 64 ? ~0ull : (1ull << W) - 1;
  if (is_nan) return M > 0 ? x : (((1ull << SE) - 1) << SM);
  if (M < SM) {
    int dropped = SM - M;
    uint64_t last_kept = (x >> dropped) & 1;
    uint64_t bias = (1ull << (dropped - 1)) - 1 + last_kept;
    x = ((x + bias) & mask) & ~((1ull << dropped) - 1);
  }
  if (E < SE) {
    uint64_t sign_bit = x & (1ull << (W - 1));
    int64_t field = (int64_t)((x >> SM) & ((1ull << SE) - 1));
    int64_t src_bias = (1ll << (SE - 1)) - 1, reduced_bias = (1ll << (E - 1)) - 1;
    if (field > src_bias + reduced_bias) x = sign_bit | (((1ull << SE) - 1) << SM);
    else if (field <= src_bias - reduced_bias) x = sign_bit;
  }
  return x;
}

/* e^x in f32 without branches (vectorizes): see the accuracy note above. */
static inline float xk_expf(float x) {
  float c = x > 88.75f ? 88.75f : x;
  c = c < -104.0f ? -104.0f : c;
  float n = rintf(c * 1.44269504088896341f);
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t ni = (int32_t)n;
  int32_t n1 = ni / 2, n2 = ni - n1;
  float s1 = xk_bits_f32((uint32_t)(n1 + 127) << 23), s2 = xk_bits_f32((uint32_t)(n2 + 127) << 23);
  float y = p * s1 * s2;
  return x != x ? x : y;
}

/* tanh x in f32 without branches (vectorizes): see the accuracy note above. */
static inline float xk_tanhf(float x) {
  float a = fabsf(x);
  float z = x * x;
  float s = -0.000590027440945585987659729384f;
  s = s * z + 0.00145583438705131826824948518070f;
  s = s * z - 0.00359212803657248101692546861052f;
  s = s * z + 0.00886323552990219656886326060177f;
  s = s * z - 0.0218694885361552028218694885362f;
  s = s * z + 0.0539682539682539682539682539683f;
  s = s * z - 0.133333333333333333333333333333f;
  s = s * z + 0.333333333333333333333333333333f;
  s = s * z;
  float small = x - x * s;
  float e = xk_expf(2.0f * (a > 9.0f ? 9.0f : a));
  float large = 1.0f - 2.0f / (e + 1.0f);
  large = a > 9.0f ? 1.0f : large;
  float r = a < 0.55f ? small : copysignf(large, x);
  return x != x ? x : r;
}
`;
