// Random fused computations (chains of exact elementwise ops over random index ops,
// shapes and types) compiled to wasm, bit-exact against the interpreter. A failing
// seed is replayable: the test name carries it.
import { test } from "node:test";
import {
  abs, add, and, arrayShape, broadcastInDim, ceil, clamp, clz, concatInDim, constantR0, convertElementType, div, eq, floor,
  iota, lt, max, min, mul, ne, neg, not, or, pad, parameter, populationCount, rem, reshape, rev, select, shiftLeft,
  shiftRightArithmetic, shiftRightLogical, slice, sqrt, sub, transpose, tuple, reduce, xor, XlaBuilder, type ElementType, type Literal, type XlaOp,
} from "../../../src/index.js";
import { rng } from "../../support/prng.js";
import { checkFusion, randomLiteral, SCALAR_TARGET, TARGET } from "./harness.js";
import { elementCount } from "../../../src/types/shape.js";

const FLOATS: ElementType[] = ["f32", "f64", "bf16", "f16"];
const INTS: ElementType[] = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "s4", "u2"];
const TYPES: ElementType[] = [...FLOATS, ...INTS, "pred"];

class Gen {
  readonly b: XlaBuilder;
  readonly params: { type: ElementType; dims: number[] }[] = [];
  private readonly ps: XlaOp[] = [];

  constructor(readonly r: () => number, name: string) {
    this.b = new XlaBuilder(name);
  }

  int(n: number): number {
    return Math.floor(this.r() * n);
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  param(type: ElementType, dims: number[]): XlaOp {
    const p = parameter(this.b, this.ps.length, arrayShape(type, dims));
    this.ps.push(p);
    this.params.push({ type, dims });
    return p;
  }

  /** A value of `type` and `dims` read through a random index op. */
  leaf(type: ElementType, dims: number[]): XlaOp {
    const rank = dims.length;
    switch (this.int(rank === 0 ? 2 : 9)) {
      case 0: return this.param(type, dims);
      case 1: return broadcastInDim(this.param(type, []), dims, []);
      case 2: { // broadcast of a subset of dimensions (some kept as size 1)
        const keep = dims.map((_, i) => i).filter(() => this.r() < 0.5);
        const src = keep.map((d) => (this.r() < 0.2 ? 1 : dims[d]!));
        return broadcastInDim(this.param(type, src), dims, keep);
      }
      case 3: { // transpose
        const perm = dims.map((_, i) => i).sort(() => this.r() - 0.5);
        const src = new Array<number>(rank);
        perm.forEach((p, i) => { src[p] = dims[i]!; });
        return transpose(this.param(type, src), perm);
      }
      case 4: { // reshape from a differently factored shape
        const n = elementCount(dims);
        const src = n % 2 === 0 && this.r() < 0.5 ? [2, n / 2] : [n];
        return reshape(this.param(type, src), dims);
      }
      case 5: { // strided slice
        const strides = dims.map(() => 1 + this.int(3));
        const starts = dims.map(() => this.int(3));
        const src = dims.map((d, i) => starts[i]! + (d - 1) * strides[i]! + 1 + this.int(2));
        return slice(this.param(type, src), starts, starts.map((s, i) => s + (dims[i]! - 1) * strides[i]! + 1), strides);
      }
      case 6: return rev(this.param(type, dims), dims.map((_, i) => i).filter(() => this.r() < 0.5));
      case 7: { // pad (interior and negative edges)
        const cfg = dims.map((d) => {
          const interior = d > 2 ? this.int(2) : 0;
          const src = Math.max(1, Math.floor((d + 1) / (interior + 1)));
          const core = src + (src - 1) * interior;
          const low = this.int(d - core + 3) - 1;
          return { src, cfg: { edgePaddingLow: low, edgePaddingHigh: d - core - low, interiorPadding: interior } };
        });
        const value = type === "pred" ? constantR0(this.b, type, true) : constantR0(this.b, type, 3);
        return pad(this.param(type, cfg.map((c) => c.src)), value, cfg.map((c) => c.cfg));
      }
      default: { // concatenate along a random dimension, or an iota
        if (type !== "pred" && this.r() < 0.3) return iota(this.b, arrayShape(type, dims), this.int(rank));
        const d = this.int(rank);
        if (dims[d]! < 2) return this.param(type, dims);
        const cut = 1 + this.int(dims[d]! - 1);
        const a = dims.map((x, i) => (i === d ? cut : x));
        const b = dims.map((x, i) => (i === d ? x - cut : x));
        return concatInDim(this.b, [this.expr(type, a, 0), this.expr(type, b, 0)], d);
      }
    }
  }

  expr(type: ElementType, dims: number[], depth: number): XlaOp {
    if (depth <= 0 || this.r() < 0.2) return this.leaf(type, dims);
    const sub1 = (): XlaOp => this.expr(type, dims, depth - 1);
    if (type === "pred") {
      switch (this.int(5)) {
        case 0: return and(sub1(), sub1());
        case 1: return or(sub1(), not(sub1()));
        case 2: return xor(sub1(), sub1());
        default: {
          const t = this.pick([...FLOATS, ...INTS]);
          const cmp = this.pick([lt, eq, ne]);
          return cmp(this.expr(t, dims, depth - 1), this.expr(t, dims, depth - 1));
        }
      }
    }
    const choice = this.int(10);
    if (choice === 0) {
      let from = this.pick(TYPES);
      if ((type === "bf16" || type === "f16") && !["pred", "s8", "u8", "s16", "u16", "bf16", "f16", "f32", "s4", "u2"].includes(from)) from = "f32";
      return convertElementType(this.expr(from, dims, depth - 1), type);
    }
    if (choice === 1) return select(this.expr("pred", dims, depth - 1), sub1(), sub1());
    if (choice === 2) return clamp(sub1(), sub1(), sub1());
    if (FLOATS.includes(type)) {
      const ops = [add, sub, mul, div, max, min];
      if (this.r() < 0.3) return this.pick([neg, abs, floor, ceil, sqrt])(sub1());
      return this.pick(ops)(sub1(), sub1());
    }
    const signed = type.startsWith("s");
    if (this.r() < 0.25) return this.pick(signed ? [not, neg, abs, clz, populationCount] : [not, clz, populationCount])(sub1());
    return this.pick([add, sub, mul, div, rem, max, min, and, or, xor, shiftLeft, shiftRightArithmetic, shiftRightLogical])(sub1(), sub1());
  }
}

export function randomCase(seed: number): { c: ReturnType<XlaBuilder["build"]>; args: Literal[] } {
  const r = rng(seed);
  const g = new Gen(r, `random_${seed}`);
  const rank = Math.floor(r() * 4);
  const dims = Array.from({ length: rank }, () => 1 + Math.floor(r() * 9));
  const type = g.pick(TYPES);
  const c = g.b.build(g.expr(type, dims, 1 + Math.floor(r() * 4)));
  return { c, args: g.params.map((p, i) => randomLiteral(p.type, p.dims, seed * 31 + i)) };
}

/**
 * A random input fusion: reduce(s) of random expressions over random dimensions, the
 * results optionally combined elementwise with another reduction and a parameter.
 */
export function randomReduceCase(seed: number): { c: ReturnType<XlaBuilder["build"]>; args: Literal[]; float: boolean } {
  const r = rng(seed);
  const g = new Gen(r, `random_reduce_${seed}`);
  const rank = 1 + Math.floor(r() * 3);
  const dims = Array.from({ length: rank }, () => 1 + Math.floor(r() * 12));
  const rdims = dims.map((_, i) => i).filter(() => r() < 0.5);
  if (rdims.length === 0) rdims.push(Math.floor(r() * rank));
  const outDims = dims.filter((_, i) => !rdims.includes(i));
  const type = g.pick(["f32", "f64", "s32", "u8", "s64", "pred", "s16"] as ElementType[]);
  const kinds: [string, (a: XlaOp, b: XlaOp) => XlaOp][] = type === "pred" ? [["or", or], ["and", and]]
    : FLOATS.includes(type) ? [["add", add], ["max", max], ["min", min]] : [["add", add], ["mul", mul], ["max", max], ["min", min], ["and", and], ["or", or], ["xor", xor]];
  const one = (): XlaOp => {
    const [, op] = g.pick(kinds); // xor is not a recognized reducer: it runs as a generic one
    const sb = g.b.createSubBuilder("r");
    const body = sb.build(op(parameter(sb, 0, arrayShape(type, [])), parameter(sb, 1, arrayShape(type, []))));
    const init = type === "pred" ? constantR0(g.b, type, r() < 0.5) : constantR0(g.b, type, g.int(3));
    return reduce(g.expr(type, dims, 1 + g.int(2)), init, body, rdims);
  };
  const a = one();
  const root = r() < 0.4 || type === "pred" ? a : r() < 0.5 ? tuple(g.b, [a, one()]) : max(add(a, one()), g.param(type, outDims));
  const c = g.b.build(root);
  return { c, args: g.params.map((p, i) => randomLiteral(p.type, p.dims, seed * 37 + i)), float: FLOATS.includes(type) };
}

for (let seed = 1; seed <= (process.env.RANDOM_ONLY ? 0 : 60); seed++) {
  test(`random input fusion (reduce), seed ${seed}`, () => {
    const { c, args, float } = randomReduceCase(seed);
    const tol = float ? { rel: 1e-5, absFloor: 1e-3 } : {};
    checkFusion(c, args, tol, TARGET);
    checkFusion(c, args, tol, SCALAR_TARGET);
  });
}

for (let seed = 1; seed <= (process.env.RANDOM_ONLY ? 0 : 120); seed++) {
  test(`random fused computation, seed ${seed}`, () => {
    const { c, args } = randomCase(seed);
    checkFusion(c, args, {}, TARGET);
    checkFusion(c, args, {}, SCALAR_TARGET);
  });
}
