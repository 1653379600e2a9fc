// The one-dimensional transforms of the compiled FFT (fft.ts): for each length and
// direction, a WebAssembly function that runs the interpreter's plan
// (src/interpreter/kernels/fft_plan.ts) operation for operation, in doubles, on two lines
// at once (lane 0 and lane 1 of every f64x2), so each lane gets the interpreter's bits.
// Mixed radix: the same Stockham passes (radix 4, 2, 3, 5, generic odd) with the same
// twiddles; Bluestein: the same chirps and precomputed kernel around power-of-two plans.
//
// A line buffer holds n complex elements of ELEMENT bytes: the real parts of both lanes
// (an f64x2), then their imaginary parts. A plan function is
//   transform(a, b, scratch) -> address of the result (a or b)
// with the input in a and b a second buffer of n elements; its constant tables (from
// fft_plan.ts's exported tables) and temporaries lie in the kernel's scratch, at the
// offsets of FftLayout.

import { bluesteinLength, bluesteinTables, stockhamFactors, twiddleTable, unitRoot } from "../../../interpreter/kernels/fft_plan.js";
import type { FunctionBuilder, ModuleBuilder } from "../encoder.js";
import { forRange } from "../loops.js";

/** Bytes of one complex element of a line buffer: re (2 lanes), im (2 lanes). */
export const ELEMENT = 32;

/** What the plans of some lengths need in scratch besides the line buffers. */
export interface PlanNeeds {
  /** Largest Bluestein convolution length (0: none). */
  readonly bluesteinLength: number;
  /** Largest generic odd radix (0: none). */
  readonly oddRadix: number;
}

export function planNeeds(lengths: readonly number[]): PlanNeeds {
  let m = 0, p = 0;
  const radices = (n: number): void => {
    for (const r of stockhamFactors(n) ?? []) if (r > 5) p = Math.max(p, r);
  };
  for (const n of lengths) {
    if (n <= 1) continue;
    if (stockhamFactors(n) === undefined) {
      const bm = bluesteinLength(n);
      m = Math.max(m, bm);
      radices(bm);
    } else {
      radices(n);
    }
  }
  return { bluesteinLength: m, oddRadix: p };
}

/** Scratch offsets (bytes from the scratch argument) the plan functions use. */
export interface FftLayout {
  /** Bluestein's two work buffers of bluesteinLength elements each. */
  readonly bluestein: readonly [number, number];
  /** The generic odd radix's inputs times twiddles (p elements), pair sums and differences ((p+1)/2 each). */
  readonly oddX: number;
  readonly oddSums: number;
  readonly oddDifferences: number;
  /** Where the constant tables start. */
  readonly tables: number;
}

/** Doubles the plans read, laid out once per key and copied into scratch as one block. */
export class FftTables {
  private readonly parts: Float64Array[] = [];
  private doubles = 0;
  private readonly offsets = new Map<string, number>();

  /** Byte offset (from the start of the tables) of the concatenation of make()'s arrays, added once per key. */
  add(key: string, make: () => readonly Float64Array[]): number {
    let at = this.offsets.get(key);
    if (at === undefined) {
      at = this.doubles * 8;
      for (const p of make()) {
        this.parts.push(p);
        this.doubles += p.length;
      }
      this.offsets.set(key, at);
    }
    return at;
  }

  get byteLength(): number {
    return this.doubles * 8;
  }

  /** The tables' bytes (little-endian doubles, as wasm reads them). */
  bytes(): Uint8Array {
    const all = new Float64Array(this.doubles);
    let at = 0;
    for (const p of this.parts) {
      all.set(p, at);
      at += p.length;
    }
    return new Uint8Array(all.buffer);
  }
}

/** f64x2 values, one local each; a pool reused by every butterfly (reset when its values are dead). */
class Lanes {
  private readonly pool: number[] = [];
  private used = 0;

  constructor(readonly f: FunctionBuilder) {}

  reset(): void {
    this.used = 0;
  }

  private set(): number {
    if (this.used === this.pool.length) this.pool.push(this.f.local("v128"));
    const l = this.pool[this.used++]!;
    this.f.localSet(l);
    return l;
  }

  load(addr: number, offset: number): number {
    this.f.localGet(addr).v128Load(offset, 16);
    return this.set();
  }

  /** One double of a table, in both lanes. */
  splat(addr: number, offset: number): number {
    this.f.localGet(addr).v128Load64Splat(offset, 8);
    return this.set();
  }

  constant(c: number): number {
    this.f.f64x2Const(c, c);
    return this.set();
  }

  add(x: number, y: number): number { this.f.localGet(x).localGet(y).f64x2Add(); return this.set(); }
  sub(x: number, y: number): number { this.f.localGet(x).localGet(y).f64x2Sub(); return this.set(); }
  mul(x: number, y: number): number { this.f.localGet(x).localGet(y).f64x2Mul(); return this.set(); }
  neg(x: number): number { this.f.localGet(x).f64x2Neg(); return this.set(); }

  store(addr: number, offset: number, x: number): void {
    this.f.localGet(addr).localGet(x).v128Store(offset, 16);
  }

  loadComplex(addr: number, offset: number): Complex {
    return [this.load(addr, offset), this.load(addr, offset + 16)];
  }

  storeComplex(addr: number, offset: number, [re, im]: Complex): void {
    this.store(addr, offset, re);
    this.store(addr, offset + 16, im);
  }

  /** y·w as the interpreter writes it: (yr·wr - yi·wi, yr·wi + yi·wr). */
  mulComplex([yr, yi]: Complex, [wr, wi]: Complex): Complex {
    return [this.sub(this.mul(yr, wr), this.mul(yi, wi)), this.add(this.mul(yr, wi), this.mul(yi, wr))];
  }
}

/** A complex value of two lanes: the locals of its real and imaginary parts. */
type Complex = readonly [number, number];

/**
 * The butterfly of a radix 2 to 5 pass: x[0] and the twiddled x[q] (q >= 1) → the r
 * outputs; c holds the locals of the pass's constants (both lanes).
 */
type Butterfly = (v: Lanes, x: readonly Complex[], c: readonly number[], inverse: boolean) => Complex[];

const BUTTERFLIES: Readonly<Record<2 | 3 | 4 | 5, { constants: (inverse: boolean) => number[]; butterfly: Butterfly }>> = {
  2: {
    constants: () => [],
    butterfly: (v, [x0, x1]) => [[v.add(x0![0], x1![0]), v.add(x0![1], x1![1])], [v.sub(x0![0], x1![0]), v.sub(x0![1], x1![1])]],
  },
  3: {
    // cos 2π/3 = -1/2, sin = ∓√3/2, and -sin.
    constants: (inverse) => {
      const sinThird = (inverse ? 1 : -1) * (Math.sqrt(3) / 2);
      return [-0.5, sinThird, -sinThird];
    },
    butterfly: (v, [x0, x1, x2], [cosThird, sinThird, negSin]) => {
      const [x0r, x0i] = x0!, [x1r, x1i] = x1!, [x2r, x2i] = x2!;
      const sr = v.add(x1r, x2r), si = v.add(x1i, x2i), dr = v.sub(x1r, x2r), di = v.sub(x1i, x2i);
      const mr = v.add(x0r, v.mul(cosThird!, sr)), mi = v.add(x0i, v.mul(cosThird!, si));
      const tr = v.mul(negSin!, di), ti = v.mul(sinThird!, dr);
      return [[v.add(x0r, sr), v.add(x0i, si)], [v.add(mr, tr), v.add(mi, ti)], [v.sub(mr, tr), v.sub(mi, ti)]];
    },
  },
  4: {
    constants: () => [],
    butterfly: (v, [x0, x1, x2, x3], _, inverse) => {
      const [x0r, x0i] = x0!, [x1r, x1i] = x1!, [x2r, x2i] = x2!, [x3r, x3i] = x3!;
      const ar = v.add(x0r, x2r), ai = v.add(x0i, x2i), br = v.sub(x0r, x2r), bi = v.sub(x0i, x2i);
      const cr = v.add(x1r, x3r), ci = v.add(x1i, x3i);
      let dr = v.sub(x1i, x3i), di = v.sub(x3r, x1r);
      // (x1 - x3) times ∓i; the inverse negates d.
      if (inverse) { dr = v.neg(dr); di = v.neg(di); }
      return [[v.add(ar, cr), v.add(ai, ci)], [v.add(br, dr), v.add(bi, di)], [v.sub(ar, cr), v.sub(ai, ci)], [v.sub(br, dr), v.sub(bi, di)]];
    },
  },
  5: {
    // cos and ∓sin of 2π/5 and 4π/5, from unitRoot as the interpreter takes them.
    constants: (inverse) => {
      const sign = inverse ? 1 : -1;
      const [ca, sa] = unitRoot(1, 5), [cb, sb] = unitRoot(2, 5);
      return [ca, cb, sign * sa, sign * sb];
    },
    butterfly: (v, [x0, x1, x2, x3, x4], [ca, cb, sa, sb]) => {
      const [x0r, x0i] = x0!, [x1r, x1i] = x1!, [x2r, x2i] = x2!, [x3r, x3i] = x3!, [x4r, x4i] = x4!;
      const s14r = v.add(x1r, x4r), s14i = v.add(x1i, x4i), d14r = v.sub(x1r, x4r), d14i = v.sub(x1i, x4i);
      const s23r = v.add(x2r, x3r), s23i = v.add(x2i, x3i), d23r = v.sub(x2r, x3r), d23i = v.sub(x2i, x3i);
      const m1r = v.add(v.add(x0r, v.mul(ca!, s14r)), v.mul(cb!, s23r)), m1i = v.add(v.add(x0i, v.mul(ca!, s14i)), v.mul(cb!, s23i));
      const m2r = v.add(v.add(x0r, v.mul(cb!, s14r)), v.mul(ca!, s23r)), m2i = v.add(v.add(x0i, v.mul(cb!, s14i)), v.mul(ca!, s23i));
      const n1r = v.add(v.mul(sa!, d14r), v.mul(sb!, d23r)), n1i = v.add(v.mul(sa!, d14i), v.mul(sb!, d23i));
      const n2r = v.sub(v.mul(sb!, d14r), v.mul(sa!, d23r)), n2i = v.sub(v.mul(sb!, d14i), v.mul(sa!, d23i));
      return [
        [v.add(v.add(x0r, s14r), s23r), v.add(v.add(x0i, s14i), s23i)],
        [v.sub(m1r, n1i), v.add(m1i, n1r)],
        [v.sub(m2r, n2i), v.add(m2i, n2r)],
        [v.add(m2r, n2i), v.sub(m2i, n2r)],
        [v.add(m1r, n1i), v.sub(m1i, n1r)],
      ];
    },
  },
};

/** Emits the plan functions of a module, one per (length, direction), on demand. */
export class FftPlanEmitter {
  private readonly functions = new Map<string, number>();

  constructor(private readonly module: ModuleBuilder, private readonly tables: FftTables, private readonly layout: FftLayout) {}

  /** The function index of the transform of length n (n >= 2) in one direction. */
  plan(n: number, inverse: boolean): number {
    const key = `${n}:${inverse ? "i" : "f"}`;
    let index = this.functions.get(key);
    if (index === undefined) {
      const factors = stockhamFactors(n);
      index = factors === undefined ? this.bluestein(n, inverse) : this.stockham(n, inverse, factors);
      this.functions.set(key, index);
    }
    return index;
  }

  private twiddles(n: number, inverse: boolean): number {
    return this.layout.tables + this.tables.add(`twiddles ${n}:${inverse}`, () => {
      const { cos, sin } = twiddleTable(n, inverse);
      return [cos, sin];
    });
  }

  private stockham(n: number, inverse: boolean, factors: readonly number[]): number {
    const twiddles = this.twiddles(n, inverse);
    const roots = new Map(factors.filter((p) => p > 5).map((p) => [p, this.twiddles(p, inverse)]));
    return this.module.addFunction(undefined, ["i32", "i32", "i32"], ["i32"], (f) => {
      let [src, dst] = [0, 1];
      const scratch = 2;
      const [k, pj, pin, pout, inAt, outAt] = Array.from({ length: 6 }, () => f.local("i32"));
      const tw = Array.from({ length: 5 }, () => f.local("i32"));
      const outer = new Lanes(f);
      const body = new Lanes(f);
      let l = 1;
      for (const r of factors) {
        const s1 = n / (l * r);
        // for k < l: twiddles e^{∓2πi q·k·s1/n}; for j < s1: the butterfly of inputs s1 apart, outputs l·s1 apart.
        f.localGet(src).localSet(pin);
        f.localGet(dst).localSet(pout);
        outer.reset();
        if (r <= 5) {
          const { constants, butterfly } = BUTTERFLIES[r as 2 | 3 | 4 | 5];
          const c = constants(inverse).map((x) => outer.constant(x));
          for (let q = 1; q < r; q++) f.localGet(scratch).i32Const(twiddles).i32Add().localSet(tw[q]!);
          forRange(f, k, 0, l, 1, () => {
            // w[q - 1]: the twiddle of input q (cos, then the sin table n doubles on)
            const w = Array.from({ length: r - 1 }, (_, i): Complex => [outer.splat(tw[i + 1]!, 0), outer.splat(tw[i + 1]!, 8 * n)]);
            forRange(f, pj, 0, s1 * ELEMENT, ELEMENT, () => {
              body.reset();
              f.localGet(pin).localGet(pj).i32Add().localSet(inAt);
              f.localGet(pout).localGet(pj).i32Add().localSet(outAt);
              const x = Array.from({ length: r }, (_, q) => {
                const y = body.loadComplex(inAt, q * s1 * ELEMENT);
                return q === 0 ? y : body.mulComplex(y, w[q - 1]!);
              });
              butterfly(body, x, c, inverse).forEach((out, q) => body.storeComplex(outAt, q * l * s1 * ELEMENT, out));
            });
            for (let q = 1; q < r; q++) f.localGet(tw[q]!).i32Const(q * s1 * 8).i32Add().localSet(tw[q]!);
            f.localGet(pin).i32Const(r * s1 * ELEMENT).i32Add().localSet(pin);
            f.localGet(pout).i32Const(s1 * ELEMENT).i32Add().localSet(pout);
          });
        } else {
          this.oddPass(f, r, l, s1, n, twiddles, roots.get(r)!, { k, pj, pin, pout, inAt, outAt, scratch }, body);
        }
        [src, dst] = [dst, src];
        l *= r;
      }
      f.localGet(src);
    });
  }

  /** A pass of odd radix p > 5: the p-point DFT by pairs (q, p - q), loops over q and the bins. */
  private oddPass(
    f: FunctionBuilder, p: number, l: number, s1: number, n: number, twiddles: number, roots: number,
    at: { k: number; pj: number; pin: number; pout: number; inAt: number; outAt: number; scratch: number }, v: Lanes,
  ): void {
    const { k, pj, pin, pout, inAt, outAt, scratch } = at;
    const half = (p - 1) / 2;
    const [q, m, t, tw, xq, xr, sums, difs, ptr] = Array.from({ length: 9 }, () => f.local("i32"));
    const [dcR, dcI, cR, cI, sR, sI] = Array.from({ length: 6 }, () => f.local("v128"));
    const accumulate = (acc: number, a: number, b: number): void => {
      f.localGet(acc).localGet(a).localGet(b).f64x2Mul().f64x2Add().localSet(acc);
    };
    f.localGet(scratch).i32Const(this.layout.oddX).i32Add().localSet(xr);
    f.localGet(scratch).i32Const(this.layout.oddSums).i32Add().localSet(sums);
    f.localGet(scratch).i32Const(this.layout.oddDifferences).i32Add().localSet(difs);
    f.i32Const(0).localSet(tw);
    forRange(f, k, 0, l, 1, () => {
      forRange(f, pj, 0, s1 * ELEMENT, ELEMENT, () => {
        f.localGet(pin).localGet(pj).i32Add().localSet(inAt);
        f.localGet(pout).localGet(pj).i32Add().localSet(outAt);
        // X[0] = y[0]; X[q] = y[q] · e^{∓2πi q·k·s1/n}
        v.reset();
        v.storeComplex(xr, 0, v.loadComplex(inAt, 0));
        forRange(f, q, 1, p, 1, () => {
          v.reset();
          f.localGet(scratch).localGet(q).localGet(tw).i32Mul().i32Add().i32Const(twiddles).i32Add().localSet(ptr);
          const w: Complex = [v.splat(ptr, 0), v.splat(ptr, 8 * n)];
          f.localGet(inAt).localGet(q).i32Const(s1 * ELEMENT).i32Mul().i32Add().localSet(ptr);
          const y = v.loadComplex(ptr, 0);
          f.localGet(xr).localGet(q).i32Const(ELEMENT).i32Mul().i32Add().localSet(xq);
          v.storeComplex(xq, 0, v.mulComplex(y, w));
        });
        // Pair sums and differences; the DC bin sums the sums in order.
        f.localGet(xr).v128Load(0, 16).localSet(dcR);
        f.localGet(xr).v128Load(16, 16).localSet(dcI);
        forRange(f, q, 1, half + 1, 1, () => {
          v.reset();
          f.localGet(xr).localGet(q).i32Const(ELEMENT).i32Mul().i32Add().localSet(xq);
          const a = v.loadComplex(xq, 0);
          f.localGet(xr).i32Const(p).localGet(q).i32Sub().i32Const(ELEMENT).i32Mul().i32Add().localSet(ptr);
          const b = v.loadComplex(ptr, 0);
          const s: Complex = [v.add(a[0], b[0]), v.add(a[1], b[1])];
          f.localGet(q).i32Const(ELEMENT).i32Mul().localSet(ptr);
          f.localGet(ptr).localGet(sums).i32Add().localSet(xq);
          v.storeComplex(xq, 0, s);
          f.localGet(ptr).localGet(difs).i32Add().localSet(xq);
          v.storeComplex(xq, 0, [v.sub(a[0], b[0]), v.sub(a[1], b[1])]);
          f.localGet(dcR).localGet(s[0]).f64x2Add().localSet(dcR);
          f.localGet(dcI).localGet(s[1]).f64x2Add().localSet(dcI);
        });
        v.reset();
        v.storeComplex(outAt, 0, [dcR, dcI]);
        // Bin m: c + i·s, bin p - m: c - i·s, with c = X[0] + Σ cos·sums, s = 0 + Σ sin·differences.
        forRange(f, m, 1, half + 1, 1, () => {
          f.localGet(xr).v128Load(0, 16).localSet(cR);
          f.localGet(xr).v128Load(16, 16).localSet(cI);
          f.f64x2Const(0, 0).localSet(sR);
          f.f64x2Const(0, 0).localSet(sI);
          f.i32Const(0).localSet(t);
          forRange(f, q, 1, half + 1, 1, () => {
            v.reset();
            // t = q·m mod p
            f.localGet(t).localGet(m).i32Add().localTee(t).i32Const(p).i32GeU().if();
            f.localGet(t).i32Const(p).i32Sub().localSet(t);
            f.end();
            f.localGet(scratch).localGet(t).i32Const(8).i32Mul().i32Add().i32Const(roots).i32Add().localSet(ptr);
            const rc = v.splat(ptr, 0), rs = v.splat(ptr, 8 * p);
            f.localGet(q).i32Const(ELEMENT).i32Mul().localSet(ptr);
            f.localGet(ptr).localGet(sums).i32Add().localSet(xq);
            const s = v.loadComplex(xq, 0);
            f.localGet(ptr).localGet(difs).i32Add().localSet(xq);
            const d = v.loadComplex(xq, 0);
            accumulate(cR, rc, s[0]);
            accumulate(cI, rc, s[1]);
            accumulate(sR, rs, d[0]);
            accumulate(sI, rs, d[1]);
          });
          v.reset();
          f.localGet(outAt).localGet(m).i32Const(l * s1 * ELEMENT).i32Mul().i32Add().localSet(ptr);
          v.storeComplex(ptr, 0, [v.sub(cR, sI), v.add(cI, sR)]);
          f.localGet(outAt).i32Const(p).localGet(m).i32Sub().i32Const(l * s1 * ELEMENT).i32Mul().i32Add().localSet(ptr);
          v.storeComplex(ptr, 0, [v.add(cR, sI), v.sub(cI, sR)]);
        });
      });
      f.localGet(tw).i32Const(s1 * 8).i32Add().localSet(tw);
      f.localGet(pin).i32Const(p * s1 * ELEMENT).i32Add().localSet(pin);
      f.localGet(pout).i32Const(s1 * ELEMENT).i32Add().localSet(pout);
    });
  }

  /** Bluestein: chirp, forward FFT of length m, times the kernel, inverse FFT, chirp; in place in a. */
  private bluestein(n: number, inverse: boolean): number {
    const m = bluesteinLength(n);
    const forward = this.plan(m, false);
    const backward = this.plan(m, true);
    const table = this.layout.tables + this.tables.add(`bluestein ${n}:${inverse}`, () => {
      const t = bluesteinTables(n, inverse);
      return [t.chirpRe, t.chirpIm, t.kernelRe, t.kernelIm];
    });
    const chirp = table, kernel = table + 16 * n;
    const [w1, w2] = this.layout.bluestein;
    return this.module.addFunction(undefined, ["i32", "i32", "i32"], ["i32"], (f) => {
      const [a, scratch] = [0, 2];
      const [i, pa, pw, pc, work, other] = Array.from({ length: 6 }, () => f.local("i32"));
      const v = new Lanes(f);
      /** for i < count: the element at pw = the element at pa times table entry i (re at pc, im count doubles on). */
      const multiply = (count: number, tableAt: number, from: number, to: number): void => {
        f.localGet(scratch).i32Const(tableAt).i32Add().localSet(pc);
        f.localGet(from).localSet(pa);
        f.localGet(to).localSet(pw);
        forRange(f, i, 0, count, 1, () => {
          v.reset();
          const c: Complex = [v.splat(pc, 0), v.splat(pc, 8 * count)];
          v.storeComplex(pw, 0, v.mulComplex(v.loadComplex(pa, 0), c));
          f.localGet(pa).i32Const(ELEMENT).i32Add().localSet(pa);
          f.localGet(pw).i32Const(ELEMENT).i32Add().localSet(pw);
          f.localGet(pc).i32Const(8).i32Add().localSet(pc);
        });
      };
      f.localGet(scratch).i32Const(w1).i32Add().localSet(work);
      multiply(n, chirp, a, work);
      f.localGet(work).i32Const(n * ELEMENT).i32Add().i32Const(0).i32Const((m - n) * ELEMENT).memoryFill();
      f.localGet(work).localGet(scratch).i32Const(w2).i32Add().localGet(scratch).call(forward).localSet(work);
      multiply(m, kernel, work, work);
      // The buffer that does not hold the spectrum.
      f.localGet(scratch).i32Const(w2).i32Add().localGet(scratch).i32Const(w1).i32Add();
      f.localGet(work).localGet(scratch).i32Const(w1).i32Add().i32Eq().select().localSet(other);
      f.localGet(work).localGet(other).localGet(scratch).call(backward).localSet(work);
      multiply(n, chirp, work, a);
      f.localGet(a);
    });
  }
}
