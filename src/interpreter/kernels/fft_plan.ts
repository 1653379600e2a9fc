// One-dimensional complex FFT plans in doubles, for every length n, in O(n log n):
// a mixed-radix Stockham FFT (radix 4, 2, 3, 5 and a generic odd radix) when every
// prime factor of n is small, else Bluestein's chirp-z algorithm through a power-of-two
// FFT. Plans (factorization, twiddles, chirps, scratch) are cached per (n, direction).
//
// Accuracy: every twiddle is e^{±2πi t/n} for an integer t, computed from an angle
// reduced to [0, π/4] by exact symmetries (so ±1, ±i and the other symmetric values
// come out exactly), and all arithmetic is in doubles. The inverse plan is unscaled: the
// caller divides by n.

/** An unscaled transform y[k] = Σ_j x[j] e^{∓2πi jk/n} (- forward, + inverse), in place. */
export interface FftPlan {
  readonly n: number;
  readonly inverse: boolean;
  /** Transforms re/im[offset .. offset + n) in place. */
  transform(re: Float64Array, im: Float64Array, offset?: number): void;
}

/** Above this prime factor, a length goes through Bluestein instead of a generic radix-p pass. */
const maxGenericRadix = 64;
/** The cache keeps plans holding up to this many doubles in all (128 MiB), dropping the oldest first. */
const cacheBudget = 1 << 24;

interface CachedPlan extends FftPlan {
  /** Doubles held by the plan's own tables and scratch. */
  readonly doubles: number;
}

const planCache = new Map<string, CachedPlan>();
let cachedDoubles = 0;

/** The cached plan for length n (n >= 1) in one direction. */
export function fftPlan(n: number, inverse: boolean): FftPlan {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`fft: length must be a positive integer, got ${n}`);
  const key = `${n}:${inverse ? "i" : "f"}`;
  let plan = planCache.get(key);
  if (plan === undefined) {
    const factors = stockhamFactors(n);
    plan = factors === undefined ? new BluesteinPlan(n, inverse) : new StockhamPlan(n, inverse, factors);
    for (const [oldKey, old] of planCache) {
      if (cachedDoubles + plan.doubles <= cacheBudget) break;
      planCache.delete(oldKey);
      cachedDoubles -= old.doubles;
    }
    planCache.set(key, plan);
    cachedDoubles += plan.doubles;
  }
  return plan;
}

/**
 * cos and sin of 2π t/n for integers t, n (n < 2^50). The angle is reduced exactly: with
 * 4t = q·n + r (0 <= r < n) the angle is q·π/2 + π r/(2n), and r > n/2 is mirrored to
 * π/2 - π(n-r)/(2n), so Math.cos/Math.sin only see angles in [0, π/4].
 */
export function unitRoot(t: number, n: number): [number, number] {
  let m = t % n;
  if (m < 0) m += n;
  const q = Math.floor((4 * m) / n);
  const r = 4 * m - q * n;
  const mirrored = 2 * r > n;
  const u = mirrored ? n - r : r;
  let c: number, s: number;
  // θ = π u/(2n) in [0, π/4]; π/4 and π/6 from correctly rounded square roots, so that
  // every multiple of 30° or 45° is exact to the last bit and symmetric.
  if (2 * u === n) c = s = Math.SQRT1_2;
  else if (3 * u === n) [c, s] = [Math.sqrt(3) / 2, 0.5];
  else {
    const theta = (Math.PI * u) / (2 * n);
    c = Math.cos(theta);
    s = Math.sin(theta);
  }
  if (mirrored) [c, s] = [s, c];
  // Rotate by q quarter turns: (c, s) → (-s, c) per turn.
  switch (q) {
    case 1: return [-s, c];
    case 2: return [-c, -s];
    case 3: return [s, -c];
    default: return [c, s];
  }
}

/**
 * The radices of n's mixed-radix (Stockham) plan, in the order of its passes, or
 * undefined when n has a prime factor above maxGenericRadix and goes through Bluestein.
 * The compiled FFT (src/compiler/wasm/routines/fft.ts) emits the same passes.
 */
export function stockhamFactors(n: number): readonly number[] | undefined {
  const factors = factorize(n);
  return factors.some((p) => p > maxGenericRadix) ? undefined : factors;
}

/** cos and sign·sin of 2π t/n for t < n (sign - forward, + inverse): the twiddles of a length-n plan, and the roots of a radix-n pass. */
export function twiddleTable(n: number, inverse: boolean): { readonly cos: Float64Array; readonly sin: Float64Array } {
  const sign = inverse ? 1 : -1;
  const cos = new Float64Array(n), sin = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const [c, s] = unitRoot(t, n);
    cos[t] = c;
    sin[t] = sign * s;
  }
  return { cos, sin };
}

/** Prime factors of n, radix 4 first (pairs of 2s), then 2, 3, 5, and larger primes ascending. */
function factorize(n: number): number[] {
  const out: number[] = [];
  let m = n;
  while (m % 4 === 0) { out.push(4); m /= 4; }
  if (m % 2 === 0) { out.push(2); m /= 2; }
  for (let p = 3; p * p <= m; p += 2) {
    while (m % p === 0) { out.push(p); m /= p; }
  }
  if (m > 1) out.push(m);
  return out;
}

/**
 * Stockham autosort FFT. Before a pass of radix r, buffer A holds, for every one of the
 * s = n/L interleaved subsequences x[j + s·t] (t < L), its length-L DFT Y_j at
 * A[k·s + j]. The pass combines r of them into length-rL DFTs (s' = s/r):
 *   Y'_j[k + L·k2] = Σ_q e^{∓2πi q·k2/r} · (e^{∓2πi q·k/(rL)} · Y_{j + s'q}[k]),
 * written to B[(k + L·k2)·s' + j]. Starting from L = 1 (A = x) no reordering is needed.
 */
class StockhamPlan implements CachedPlan {
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly bufRe: Float64Array[];
  private readonly bufIm: Float64Array[];
  /** Per generic radix p: cos/sin of 2π·m/p for m < p (sign applied to sin). */
  private readonly radixRoots = new Map<number, [Float64Array, Float64Array]>();
  readonly doubles: number;

  constructor(readonly n: number, readonly inverse: boolean, private readonly factors: readonly number[]) {
    ({ cos: this.cos, sin: this.sin } = twiddleTable(n, inverse));
    this.bufRe = [new Float64Array(n), new Float64Array(n)];
    this.bufIm = [new Float64Array(n), new Float64Array(n)];
    this.doubles = 6 * n;
    for (const p of factors) {
      if (p <= 5 || this.radixRoots.has(p)) continue;
      const roots = twiddleTable(p, inverse);
      this.radixRoots.set(p, [roots.cos, roots.sin]);
    }
  }

  transform(re: Float64Array, im: Float64Array, offset = 0): void {
    const n = this.n;
    if (n === 1) return;
    let aRe = this.bufRe[0]!, aIm = this.bufIm[0]!, bRe = this.bufRe[1]!, bIm = this.bufIm[1]!;
    for (let i = 0; i < n; i++) {
      aRe[i] = re[offset + i]!;
      aIm[i] = im[offset + i]!;
    }
    let l = 1;
    for (const r of this.factors) {
      const s1 = n / (l * r);
      switch (r) {
        case 2: this.pass2(l, s1, aRe, aIm, bRe, bIm); break;
        case 3: this.pass3(l, s1, aRe, aIm, bRe, bIm); break;
        case 4: this.pass4(l, s1, aRe, aIm, bRe, bIm); break;
        case 5: this.pass5(l, s1, aRe, aIm, bRe, bIm); break;
        default: this.passOdd(r, l, s1, aRe, aIm, bRe, bIm); break;
      }
      [aRe, bRe] = [bRe, aRe];
      [aIm, bIm] = [bIm, aIm];
      l *= r;
    }
    for (let i = 0; i < n; i++) {
      re[offset + i] = aRe[i]!;
      im[offset + i] = aIm[i]!;
    }
  }

  private pass2(l: number, s1: number, aRe: Float64Array, aIm: Float64Array, bRe: Float64Array, bIm: Float64Array): void {
    const s = 2 * s1;
    for (let k = 0; k < l; k++) {
      const wr = this.cos[k * s1]!, wi = this.sin[k * s1]!;
      const in0 = k * s, out0 = k * s1, out1 = (k + l) * s1;
      for (let j = 0; j < s1; j++) {
        const x0r = aRe[in0 + j]!, x0i = aIm[in0 + j]!;
        const yr = aRe[in0 + s1 + j]!, yi = aIm[in0 + s1 + j]!;
        const x1r = yr * wr - yi * wi, x1i = yr * wi + yi * wr;
        bRe[out0 + j] = x0r + x1r; bIm[out0 + j] = x0i + x1i;
        bRe[out1 + j] = x0r - x1r; bIm[out1 + j] = x0i - x1i;
      }
    }
  }

  private pass3(l: number, s1: number, aRe: Float64Array, aIm: Float64Array, bRe: Float64Array, bIm: Float64Array): void {
    const s = 3 * s1;
    // e^{∓2πi/3} = -1/2 ∓ i·√3/2.
    const cosThird = -0.5, sinThird = (this.inverse ? 1 : -1) * (Math.sqrt(3) / 2);
    for (let k = 0; k < l; k++) {
      const w1r = this.cos[k * s1]!, w1i = this.sin[k * s1]!;
      const w2r = this.cos[2 * k * s1]!, w2i = this.sin[2 * k * s1]!;
      const in0 = k * s;
      const o0 = k * s1, o1 = (k + l) * s1, o2 = (k + 2 * l) * s1;
      for (let j = 0; j < s1; j++) {
        const x0r = aRe[in0 + j]!, x0i = aIm[in0 + j]!;
        let yr = aRe[in0 + s1 + j]!, yi = aIm[in0 + s1 + j]!;
        const x1r = yr * w1r - yi * w1i, x1i = yr * w1i + yi * w1r;
        yr = aRe[in0 + 2 * s1 + j]!; yi = aIm[in0 + 2 * s1 + j]!;
        const x2r = yr * w2r - yi * w2i, x2i = yr * w2i + yi * w2r;
        const sr = x1r + x2r, si = x1i + x2i, dr = x1r - x2r, di = x1i - x2i;
        const mr = x0r + cosThird * sr, mi = x0i + cosThird * si;
        // i·sinThird·d, with i·(dr + i·di) = -di + i·dr.
        const tr = -sinThird * di, ti = sinThird * dr;
        bRe[o0 + j] = x0r + sr; bIm[o0 + j] = x0i + si;
        bRe[o1 + j] = mr + tr; bIm[o1 + j] = mi + ti;
        bRe[o2 + j] = mr - tr; bIm[o2 + j] = mi - ti;
      }
    }
  }

  private pass4(l: number, s1: number, aRe: Float64Array, aIm: Float64Array, bRe: Float64Array, bIm: Float64Array): void {
    const s = 4 * s1;
    const inv = this.inverse;
    for (let k = 0; k < l; k++) {
      const w1r = this.cos[k * s1]!, w1i = this.sin[k * s1]!;
      const w2r = this.cos[2 * k * s1]!, w2i = this.sin[2 * k * s1]!;
      const w3r = this.cos[3 * k * s1]!, w3i = this.sin[3 * k * s1]!;
      const in0 = k * s;
      const o0 = k * s1, o1 = (k + l) * s1, o2 = (k + 2 * l) * s1, o3 = (k + 3 * l) * s1;
      for (let j = 0; j < s1; j++) {
        const x0r = aRe[in0 + j]!, x0i = aIm[in0 + j]!;
        let yr = aRe[in0 + s1 + j]!, yi = aIm[in0 + s1 + j]!;
        const x1r = yr * w1r - yi * w1i, x1i = yr * w1i + yi * w1r;
        yr = aRe[in0 + 2 * s1 + j]!; yi = aIm[in0 + 2 * s1 + j]!;
        const x2r = yr * w2r - yi * w2i, x2i = yr * w2i + yi * w2r;
        yr = aRe[in0 + 3 * s1 + j]!; yi = aIm[in0 + 3 * s1 + j]!;
        const x3r = yr * w3r - yi * w3i, x3i = yr * w3i + yi * w3r;
        const ar = x0r + x2r, ai = x0i + x2i, br = x0r - x2r, bi = x0i - x2i;
        const cr = x1r + x3r, ci = x1i + x3i;
        // (x1 - x3) times e^{∓iπ/2} = ∓i.
        let dr = x1i - x3i, di = x3r - x1r;
        if (inv) { dr = -dr; di = -di; }
        bRe[o0 + j] = ar + cr; bIm[o0 + j] = ai + ci;
        bRe[o1 + j] = br + dr; bIm[o1 + j] = bi + di;
        bRe[o2 + j] = ar - cr; bIm[o2 + j] = ai - ci;
        bRe[o3 + j] = br - dr; bIm[o3 + j] = bi - di;
      }
    }
  }

  private pass5(l: number, s1: number, aRe: Float64Array, aIm: Float64Array, bRe: Float64Array, bIm: Float64Array): void {
    const s = 5 * s1;
    const sign = this.inverse ? 1 : -1;
    // cos and sin of 2π/5 and 4π/5, through the same reduction as the twiddles.
    const [ca, sa0] = unitRoot(1, 5), [cb, sb0] = unitRoot(2, 5);
    const sa = sign * sa0, sb = sign * sb0;
    for (let k = 0; k < l; k++) {
      const t = k * s1;
      const w1r = this.cos[t]!, w1i = this.sin[t]!;
      const w2r = this.cos[2 * t]!, w2i = this.sin[2 * t]!;
      const w3r = this.cos[3 * t]!, w3i = this.sin[3 * t]!;
      const w4r = this.cos[4 * t]!, w4i = this.sin[4 * t]!;
      const in0 = k * s;
      const o0 = k * s1, o1 = (k + l) * s1, o2 = (k + 2 * l) * s1, o3 = (k + 3 * l) * s1, o4 = (k + 4 * l) * s1;
      for (let j = 0; j < s1; j++) {
        const x0r = aRe[in0 + j]!, x0i = aIm[in0 + j]!;
        let yr = aRe[in0 + s1 + j]!, yi = aIm[in0 + s1 + j]!;
        const x1r = yr * w1r - yi * w1i, x1i = yr * w1i + yi * w1r;
        yr = aRe[in0 + 2 * s1 + j]!; yi = aIm[in0 + 2 * s1 + j]!;
        const x2r = yr * w2r - yi * w2i, x2i = yr * w2i + yi * w2r;
        yr = aRe[in0 + 3 * s1 + j]!; yi = aIm[in0 + 3 * s1 + j]!;
        const x3r = yr * w3r - yi * w3i, x3i = yr * w3i + yi * w3r;
        yr = aRe[in0 + 4 * s1 + j]!; yi = aIm[in0 + 4 * s1 + j]!;
        const x4r = yr * w4r - yi * w4i, x4i = yr * w4i + yi * w4r;
        // Pairs (1, 4) and (2, 3): sums carry the cosines, differences the sines.
        const s14r = x1r + x4r, s14i = x1i + x4i, d14r = x1r - x4r, d14i = x1i - x4i;
        const s23r = x2r + x3r, s23i = x2i + x3i, d23r = x2r - x3r, d23i = x2i - x3i;
        const m1r = x0r + ca * s14r + cb * s23r, m1i = x0i + ca * s14i + cb * s23i;
        const m2r = x0r + cb * s14r + ca * s23r, m2i = x0i + cb * s14i + ca * s23i;
        // i·(sa·d14 + sb·d23) for bin 1, i·(sb·d14 - sa·d23) for bin 2 (sin 8π/5 = -sin 2π/5).
        const n1r = sa * d14r + sb * d23r, n1i = sa * d14i + sb * d23i;
        const n2r = sb * d14r - sa * d23r, n2i = sb * d14i - sa * d23i;
        bRe[o0 + j] = x0r + s14r + s23r; bIm[o0 + j] = x0i + s14i + s23i;
        bRe[o1 + j] = m1r - n1i; bIm[o1 + j] = m1i + n1r;
        bRe[o4 + j] = m1r + n1i; bIm[o4 + j] = m1i - n1r;
        bRe[o2 + j] = m2r - n2i; bIm[o2 + j] = m2i + n2r;
        bRe[o3 + j] = m2r + n2i; bIm[o3 + j] = m2i - n2r;
      }
    }
  }

  /** A pass of odd radix p: the p-point DFT by pairs (q, p-q), as in radix 3 and 5. */
  private passOdd(p: number, l: number, s1: number, aRe: Float64Array, aIm: Float64Array, bRe: Float64Array, bIm: Float64Array): void {
    const s = p * s1;
    const [rc, rs] = this.radixRoots.get(p)!;
    const half = (p - 1) / 2;
    const xr = new Float64Array(p), xi = new Float64Array(p);
    const sumR = new Float64Array(half + 1), sumI = new Float64Array(half + 1);
    const difR = new Float64Array(half + 1), difI = new Float64Array(half + 1);
    for (let k = 0; k < l; k++) {
      const in0 = k * s;
      for (let j = 0; j < s1; j++) {
        xr[0] = aRe[in0 + j]!; xi[0] = aIm[in0 + j]!;
        for (let q = 1; q < p; q++) {
          const t = q * k * s1;
          const wr = this.cos[t]!, wi = this.sin[t]!;
          const yr = aRe[in0 + q * s1 + j]!, yi = aIm[in0 + q * s1 + j]!;
          xr[q] = yr * wr - yi * wi;
          xi[q] = yr * wi + yi * wr;
        }
        let dcR = xr[0]!, dcI = xi[0]!;
        for (let q = 1; q <= half; q++) {
          sumR[q] = xr[q]! + xr[p - q]!; sumI[q] = xi[q]! + xi[p - q]!;
          difR[q] = xr[q]! - xr[p - q]!; difI[q] = xi[q]! - xi[p - q]!;
          dcR += sumR[q]!; dcI += sumI[q]!;
        }
        bRe[k * s1 + j] = dcR; bIm[k * s1 + j] = dcI;
        for (let m = 1; m <= half; m++) {
          let cr = xr[0]!, ci = xi[0]!, sr = 0, si = 0;
          let t = 0;
          for (let q = 1; q <= half; q++) {
            t += m;
            if (t >= p) t -= p;
            cr += rc[t]! * sumR[q]!; ci += rc[t]! * sumI[q]!;
            sr += rs[t]! * difR[q]!; si += rs[t]! * difI[q]!;
          }
          // Bin m: c + i·s; bin p - m: c - i·s.
          bRe[(k + m * l) * s1 + j] = cr - si; bIm[(k + m * l) * s1 + j] = ci + sr;
          bRe[(k + (p - m) * l) * s1 + j] = cr + si; bIm[(k + (p - m) * l) * s1 + j] = ci - sr;
        }
      }
    }
  }
}

/** The constant tables of a Bluestein plan of length n (see BluesteinPlan). */
export interface BluesteinTables {
  /** The length of the power-of-two convolution, the smallest >= 2n - 1. */
  readonly m: number;
  /** c[j] = e^{∓πi j²/n}, j < n. */
  readonly chirpRe: Float64Array;
  readonly chirpIm: Float64Array;
  /** FFT of the zero-padded, wrapped conj(c), divided by m (the inverse's scale), length m. */
  readonly kernelRe: Float64Array;
  readonly kernelIm: Float64Array;
}

/** The power-of-two length of Bluestein's convolution for n: the smallest >= 2n - 1. */
export function bluesteinLength(n: number): number {
  let m = 1;
  while (m < 2 * n - 1) m *= 2;
  return m;
}

export function bluesteinTables(n: number, inverse: boolean): BluesteinTables {
  const m = bluesteinLength(n);
  const sign = inverse ? 1 : -1;
  const chirpRe = new Float64Array(n), chirpIm = new Float64Array(n);
  // j² mod 2n, kept exact by updating (j+1)² = j² + 2j + 1.
  for (let j = 0, sq = 0; j < n; j++) {
    const [c, s] = unitRoot(sq, 2 * n);
    chirpRe[j] = c;
    chirpIm[j] = sign * s;
    sq = (sq + 2 * j + 1) % (2 * n);
  }
  const kernelRe = new Float64Array(m), kernelIm = new Float64Array(m);
  for (let j = 0; j < n; j++) {
    kernelRe[j] = chirpRe[j]!;
    kernelIm[j] = -chirpIm[j]!;
    if (j > 0) {
      kernelRe[m - j] = chirpRe[j]!;
      kernelIm[m - j] = -chirpIm[j]!;
    }
  }
  fftPlan(m, false).transform(kernelRe, kernelIm);
  for (let i = 0; i < m; i++) {
    kernelRe[i] = kernelRe[i]! / m;
    kernelIm[i] = kernelIm[i]! / m;
  }
  return { m, chirpRe, chirpIm, kernelRe, kernelIm };
}

/**
 * Bluestein: with jk = (j² + k² - (k-j)²)/2, y[k] = c[k] · Σ_j (x[j] c[j]) · conj(c[k-j])
 * where c[j] = e^{∓πi j²/n}; the sum is a cyclic convolution of length m >= 2n-1 (a power
 * of two) done with two FFTs of length m, the transform of the chirp being precomputed.
 */
class BluesteinPlan implements CachedPlan {
  private readonly chirpRe: Float64Array;
  private readonly chirpIm: Float64Array;
  private readonly kernelRe: Float64Array;
  private readonly kernelIm: Float64Array;
  private readonly workRe: Float64Array;
  private readonly workIm: Float64Array;
  private readonly forward: FftPlan;
  private readonly backward: FftPlan;
  readonly doubles: number;

  constructor(readonly n: number, readonly inverse: boolean) {
    const t = bluesteinTables(n, inverse);
    ({ chirpRe: this.chirpRe, chirpIm: this.chirpIm, kernelRe: this.kernelRe, kernelIm: this.kernelIm } = t);
    this.forward = fftPlan(t.m, false);
    this.backward = fftPlan(t.m, true);
    this.workRe = new Float64Array(t.m);
    this.workIm = new Float64Array(t.m);
    this.doubles = 2 * n + 4 * t.m;
  }

  transform(re: Float64Array, im: Float64Array, offset = 0): void {
    const n = this.n, m = this.workRe.length;
    const wr = this.workRe, wi = this.workIm;
    for (let j = 0; j < n; j++) {
      const xr = re[offset + j]!, xi = im[offset + j]!, cr = this.chirpRe[j]!, ci = this.chirpIm[j]!;
      wr[j] = xr * cr - xi * ci;
      wi[j] = xr * ci + xi * cr;
    }
    wr.fill(0, n);
    wi.fill(0, n);
    this.forward.transform(wr, wi);
    for (let i = 0; i < m; i++) {
      const ar = wr[i]!, ai = wi[i]!, br = this.kernelRe[i]!, bi = this.kernelIm[i]!;
      wr[i] = ar * br - ai * bi;
      wi[i] = ar * bi + ai * br;
    }
    this.backward.transform(wr, wi);
    for (let k = 0; k < n; k++) {
      const yr = wr[k]!, yi = wi[k]!, cr = this.chirpRe[k]!, ci = this.chirpIm[k]!;
      re[offset + k] = yr * cr - yi * ci;
      im[offset + k] = yr * ci + yi * cr;
    }
  }
}
