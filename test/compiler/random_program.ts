// Random programs for differential testing of the compiler: a seeded generator of
// valid XlaBuilder computations and matching random arguments. Every pass (and every
// back end) is checked by running the interpreter on a program before and after and
// comparing, so the generator favours variety over realism: mixed element types, shape
// ops with odd parameters, reductions with non-identity init values, special float
// values in the arguments (±0, ±inf, NaN), and deliberately "simplifiable" patterns
// (x+0, x*1, neg(neg x), reshape of reshape, duplicate subexpressions, dead code, ...)
// so that passes have something to rewrite.
//
// `randomProgram(seed, options)` is deterministic in its seed: a failure is replayed
// by its seed alone.

import { rng } from "../support/prng.js";
import { XlaBuilder, parameter, type XlaOp } from "../../src/builder/xla_builder.js";
import type { Computation, Instruction } from "../../src/ir/computation.js";
import type { ComparisonDirection } from "../../src/ir/attributes.js";
import type { Opcode, OpAttributes } from "../../src/ir/opcodes.js";
import { BINARY_OPERAND_KINDS, UNARY_OPERAND_KINDS } from "../../src/ir/shape/elementwise.js";
import { ELEMENT_TYPES, type ElementType } from "../../src/types/element_type.js";
import { Literal, type Scalar } from "../../src/types/literal.js";
import { arrayShape, scalarShape, type ArrayShape, type Layout, elementCount } from "../../src/types/shape.js";

export { firstDifference, literalsClose, literalsIdentical } from "./literal_compare.js";

export const DEFAULT_ELEMENT_TYPES: readonly ElementType[] = ["pred", "s8", "s32", "u32", "s64", "f16", "bf16", "f32", "f64"];

/** Op families the generator draws from. */
export type RandomOpFamily =
  | "elementwise" // unary and binary arithmetic, logic, shifts
  | "broadcast"   // broadcastInDim of lower-rank values and scalars
  | "shape"       // reshape, transpose, slice, pad, concatenate, reverse
  | "iota"
  | "convert"
  | "compare"     // compare, select, clamp
  | "reduce"      // add/max/min (and/or for pred) reducers over random dims
  | "dot"         // dot_general with batch and contracting dims
  | "constant"    // scalar and small array constants, ops on constants only
  | "simplifiable" // x+0, x*1, neg(neg x), reshape(reshape x), duplicates, ...
  | "call"        // a call of a small elementwise computation (opt-in)
  | "batchNorm"   // batch-norm training / inference / grad on f32 and f64 (opt-in)
  | "dynamic";    // dynamic-slice and dynamic-update-slice, constant or parameter start indices (opt-in)

/** The default families. */
export const ALL_FAMILIES: readonly RandomOpFamily[] = [
  "elementwise", "broadcast", "shape", "iota", "convert", "compare", "reduce", "dot", "constant", "simplifiable",
];

/** Families a program gets only when asked: not every back end runs them. */
export const EXTRA_FAMILIES: readonly RandomOpFamily[] = ["call", "batchNorm", "dynamic"];

export interface RandomProgramOptions {
  /** Number of ops drawn (each may add a few instructions); default 14. */
  size?: number;
  elementTypes?: readonly ElementType[];
  families?: readonly RandomOpFamily[];
  /** Largest element count of any array value; default 48. */
  maxElements?: number;
  /** Largest rank; default 3. */
  maxRank?: number;
  /** Probability that a drawn dimension is 0 (empty arrays); default 0.02. */
  zeroSizeProbability?: number;
  /** Probability that a float argument is a special value (±0, ±inf, NaN); default 0.15. */
  specialValueProbability?: number;
  /**
   * Probability that a parameter gets a random (non-default) layout; default 0. Layouts
   * are drawn from a separate stream, so the program is otherwise the one the same seed
   * gives without layouts (a reference the interpreter runs right: its clamp and select
   * kernels mishandle operands in non-default layouts). Constants keep the default layout.
   */
  layoutProbability?: number;
}

export interface RandomProgram {
  readonly computation: Computation;
  readonly args: readonly Literal[];
}

type Kind = "pred" | "signed" | "unsigned" | "float";

const kindOf = (t: ElementType): Kind => ELEMENT_TYPES[t].kind as Kind;

const UNARY: readonly (keyof typeof UNARY_OPERAND_KINDS)[] = [
  "abs", "negate", "not", "sign", "floor", "ceil", "roundNearestEven", "roundNearestAfz", "sqrt", "rsqrt", "cbrt",
  "exp", "expm1", "log", "log1p", "logistic", "tanh", "sin", "cos", "erf", "isFinite", "clz", "popcnt",
];
const BINARY: readonly (keyof typeof BINARY_OPERAND_KINDS)[] = [
  "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "and", "or", "xor",
  "shiftLeft", "shiftRightArithmetic", "shiftRightLogical", "atan2",
];
const DIRECTIONS: readonly ComparisonDirection[] = ["EQ", "NE", "GE", "GT", "LE", "LT"];

class Generator {
  readonly next: () => number;
  readonly b: XlaBuilder;
  readonly pool: XlaOp[] = [];
  readonly paramShapes: ArrayShape[] = [];
  private readonly ops = new Map<Instruction, XlaOp>();
  readonly types: readonly ElementType[];
  readonly families: readonly RandomOpFamily[];
  readonly maxElements: number;
  readonly maxRank: number;
  readonly zeroSize: number;
  readonly special: number;
  readonly layouts: number;
  /** Layout draws have their own stream: a program with layouts is the same program as without. */
  private readonly layoutNext: () => number;
  private subCount = 0;

  constructor(seed: number, options: RandomProgramOptions) {
    this.next = rng(seed);
    this.b = new XlaBuilder(`random_${seed}`);
    this.types = options.elementTypes ?? DEFAULT_ELEMENT_TYPES;
    this.families = options.families ?? ALL_FAMILIES;
    this.maxElements = options.maxElements ?? 48;
    this.maxRank = options.maxRank ?? 3;
    this.zeroSize = options.zeroSizeProbability ?? 0.02;
    this.special = options.specialValueProbability ?? 0.15;
    this.layouts = options.layoutProbability ?? 0;
    this.layoutNext = rng(seed ^ 0x5bd1e995);
  }

  // ---- random primitives

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
  subset(n: number): number[] {
    return Array.from({ length: n }, (_, i) => i).filter(() => this.chance(0.5));
  }

  dims(rank = this.int(0, this.maxRank)): number[] {
    for (;;) {
      const d = Array.from({ length: rank }, () => (this.chance(this.zeroSize) ? 0 : this.int(1, 4)));
      if (elementCount(d) <= this.maxElements) return d;
    }
  }

  scalar(t: ElementType, special = this.special): Scalar {
    switch (kindOf(t)) {
      case "pred": return this.chance(0.5);
      case "float":
        if (this.chance(special)) return this.pick([0, -0, Infinity, -Infinity, NaN, 1, -1, 65504, 1e-8]);
        return Math.round((this.next() * 8 - 4) * 64) / 64;
      default: {
        const { min, max } = integerBounds(t);
        const v = this.chance(special / 2) ? this.pick([min, max, 0n, -1n].filter((x) => x >= min))
          : BigInt(this.int(kindOf(t) === "signed" ? -6 : 0, 6));
        return ELEMENT_TYPES[t].bitWidth === 64 ? v : Number(v);
      }
    }
  }

  literal(t: ElementType, dims: readonly number[], special = this.special, layout?: Layout): Literal {
    return Literal.fromValues(t, dims, Array.from({ length: elementCount(dims) }, () => this.scalar(t, special)), layout);
  }

  /** A random minor-to-major order, sometimes. */
  layout(rank: number): Layout | undefined {
    if (rank < 2 || this.layoutNext() >= this.layouts) return undefined;
    const order = Array.from({ length: rank }, (_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(this.layoutNext() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return { minorToMajor: order };
  }

  // ---- emitting

  add<O extends Opcode>(opcode: O, operands: readonly XlaOp[], attrs: OpAttributes[O], keep = true): XlaOp {
    const op = this.b.addInstruction(opcode, operands, attrs);
    this.ops.set(op.instruction, op);
    if (keep) this.pool.push(op);
    return op;
  }

  param(t: ElementType, dims: readonly number[]): XlaOp {
    const layout = this.layout(dims.length);
    const shape = arrayShape(t, dims, layout !== undefined ? { layout } : {});
    const op = parameter(this.b, this.paramShapes.length, shape);
    this.ops.set(op.instruction, op);
    this.paramShapes.push(shape);
    this.pool.push(op);
    return op;
  }

  constant(lit: Literal, keep = true): XlaOp {
    return this.add("constant", [], { literal: lit }, keep);
  }

  splat(t: ElementType, dims: readonly number[], value: Scalar): XlaOp {
    const c = this.constant(Literal.scalar(t, value), false);
    return dims.length === 0 ? c : this.add("broadcastInDim", [c], { dimensions: [...dims], broadcastDimensions: [] }, false);
  }

  opOf(inst: Instruction): XlaOp {
    return this.ops.get(inst)!;
  }

  /** A value of exactly this type and these dimensions: found in the pool or made. */
  need(t: ElementType, dims: readonly number[]): XlaOp {
    const matches = this.pool.filter((v) => sameArray(v.arrayShape, t, dims));
    if (matches.length > 0 && this.chance(0.75)) return this.pick(matches);
    const sameDims = this.pool.filter((v) => sameDimsOf(v.arrayShape, dims));
    const r = this.next();
    if (r < 0.3 || !this.families.includes("constant") && r < 0.6) return this.param(t, dims);
    if (r < 0.45 && sameDims.length > 0 && this.families.includes("convert")) {
      return this.add("convert", [this.pick(sameDims)], { elementType: t });
    }
    if (r < 0.6 && dims.length > 0 && t !== "pred" && this.families.includes("iota")) {
      return this.add("iota", [], { shape: arrayShape(t, dims), iotaDimension: this.int(0, dims.length - 1) });
    }
    if (r < 0.75) return this.splat(t, dims, this.scalar(t, Math.min(0.3, 2 * this.special)));
    return this.constant(this.literal(t, dims, Math.min(0.3, 2 * this.special)));
  }

  /** A random pool value (made if the pool is empty), optionally restricted to some kinds. */
  any(kinds?: readonly Kind[]): XlaOp {
    const ok = this.pool.filter((v) => kinds === undefined || kinds.includes(kindOf(v.arrayShape.elementType)));
    if (ok.length > 0 && this.chance(0.9)) {
      // Prefer recent values, so programs grow deep rather than wide.
      const i = Math.max(0, ok.length - 1 - Math.floor(-Math.log(1 - this.next() * 0.999) * 3));
      return ok[i]!;
    }
    const types = this.types.filter((t) => kinds === undefined || kinds.includes(kindOf(t)));
    return this.param(this.pick(types.length > 0 ? types : this.types), this.dims());
  }

  reducer(t: ElementType, opcode: "add" | "maximum" | "minimum" | "and" | "or"): Computation {
    const sub = this.b.createSubBuilder(`${opcode}_${t}_${++this.subCount}`);
    const x = parameter(sub, 0, scalarShape(t));
    const y = parameter(sub, 1, scalarShape(t));
    return sub.build(sub.addInstruction(opcode, [x, y], {}));
  }

  // ---- op families

  elementwise(): void {
    const x = this.any();
    const s = x.arrayShape;
    const kind = kindOf(s.elementType);
    if (this.chance(0.4)) {
      const ops = UNARY.filter((o) => UNARY_OPERAND_KINDS[o].includes(kind));
      if (ops.length > 0) {
        this.add(this.pick(ops), [x], {});
        return;
      }
    }
    const ops = BINARY.filter((o) => BINARY_OPERAND_KINDS[o].includes(kind));
    const y = this.need(s.elementType, s.dimensions);
    const [l, r] = this.chance(0.5) ? [x, y] : [y, x];
    this.add(this.pick(ops), [l, r], {});
  }

  broadcast(): void {
    const x = this.any();
    const s = x.arrayShape;
    if (s.dimensions.length >= this.maxRank && !s.dimensions.includes(1)) return;
    for (let attempt = 0; attempt < 5; attempt++) {
      const outRank = this.int(s.dimensions.length, this.maxRank);
      const positions = this.shuffle(Array.from({ length: outRank }, (_, i) => i)).slice(0, s.dimensions.length).sort((a, b) => a - b);
      const out = this.dims(outRank);
      positions.forEach((p, i) => {
        const d = s.dimensions[i]!;
        out[p] = d === 1 && this.chance(0.5) ? out[p]! : d;
      });
      if (elementCount(out) > this.maxElements) continue;
      this.add("broadcastInDim", [x], { dimensions: out, broadcastDimensions: positions });
      return;
    }
  }

  shapeOp(): void {
    const x = this.any();
    const d = x.arrayShape.dimensions;
    const t = x.arrayShape.elementType;
    const rank = d.length;
    switch (this.int(0, 5)) {
      case 0:
        this.add("reshape", [x], { dimensions: this.factorize(elementCount(d)) });
        return;
      case 1:
        this.add("transpose", [x], { permutation: this.shuffle(Array.from({ length: rank }, (_, i) => i)) });
        return;
      case 2:
        this.add("slice", [x], this.randomSlice(d));
        return;
      case 3: {
        const lo = d.map((n) => this.int(n > 0 ? -Math.min(n, 2) : 0, 2));
        const hi = d.map((n, i) => this.int(Math.max(-2, -(n + lo[i]!)), 2));
        const interior = d.map(() => this.int(0, this.chance(0.3) ? 1 : 0));
        const out = d.map((n, i) => n + lo[i]! + hi[i]! + Math.max(0, n - 1) * interior[i]!);
        if (out.some((n) => n < 0) || elementCount(out) > this.maxElements) return;
        const value = this.chance(0.5) ? this.need(t, []) : this.splat(t, [], this.scalar(t));
        this.add("pad", [x, value], { edgePaddingLow: lo, edgePaddingHigh: hi, interiorPadding: interior });
        return;
      }
      case 4: {
        if (rank === 0) return;
        const dim = this.int(0, rank - 1);
        const parts = [x];
        for (let k = this.int(1, 2); k > 0; k--) {
          const other = [...d];
          other[dim] = this.int(0, 3);
          parts.push(this.need(t, other));
        }
        const total = parts.reduce((acc, p) => acc + p.arrayShape.dimensions[dim]!, 0);
        if (elementCount(d) / Math.max(1, d[dim]!) * total > this.maxElements) return;
        this.add("concatenate", this.shuffle(parts), { dimension: dim });
        return;
      }
      default:
        this.add("reverse", [x], { dimensions: this.subset(rank) });
    }
  }

  iota(): void {
    const t = this.pick(this.types.filter((x) => x !== "pred"));
    if (t === undefined) return;
    const d = this.dims(this.int(1, this.maxRank));
    this.add("iota", [], { shape: arrayShape(t, d), iotaDimension: this.int(0, d.length - 1) });
  }

  convert(): void {
    this.add("convert", [this.any()], { elementType: this.pick(this.types) });
  }

  compare(): void {
    const x = this.any();
    const s = x.arrayShape;
    const r = this.next();
    if (r < 0.4) {
      const kind = kindOf(s.elementType);
      const total = kind === "float" && this.chance(0.3);
      this.add("compare", [x, this.need(s.elementType, s.dimensions)], {
        direction: this.pick(DIRECTIONS), ...(total ? { compareType: "TOTALORDER" as const } : {}),
      });
    } else if (r < 0.75) {
      const p = this.chance(0.3) ? this.need("pred", []) : this.need("pred", s.dimensions);
      this.add("select", [p, x, this.need(s.elementType, s.dimensions)], {});
    } else {
      if (s.elementType === "pred") return;
      const bound = (): XlaOp => (this.chance(0.5) ? this.need(s.elementType, []) : this.need(s.elementType, s.dimensions));
      this.add("clamp", [bound(), x, bound()], {});
    }
  }

  reduce(): void {
    const x = this.any();
    const s = x.arrayShape;
    const t = s.elementType;
    const op = kindOf(t) === "pred" ? this.pick(["and", "or"] as const) : this.pick(["add", "maximum", "minimum"] as const);
    const init = this.chance(0.6) ? this.splat(t, [], this.identity(t, op)) : this.need(t, []);
    this.add("reduce", [x, init], { dimensions: this.subset(s.dimensions.length), toApply: this.reducer(t, op) });
  }

  dot(): void {
    const types = this.types.filter((t) => t !== "pred");
    if (types.length === 0) return;
    const t = this.pick(types);
    const size = (): number => (this.chance(this.zeroSize) ? 0 : this.int(1, 3));
    const batch = Array.from({ length: this.int(0, 1) }, size);
    const contract = Array.from({ length: this.int(0, 2) }, size);
    const lhsFree = Array.from({ length: this.int(0, 1) }, size);
    const rhsFree = Array.from({ length: this.int(0, 1) }, size);
    const order = (groups: number[][]): { dims: number[]; where: number[][] } => {
      const tagged = groups.flatMap((g, gi) => g.map((n, i) => ({ n, gi, i })));
      const perm = this.shuffle(tagged.map((_, i) => i));
      const where = groups.map((g) => g.map(() => 0));
      perm.forEach((src, pos) => (where[tagged[src]!.gi]![tagged[src]!.i] = pos));
      return { dims: perm.map((src) => tagged[src]!.n), where };
    };
    const lhs = order([batch, contract, lhsFree]);
    const rhs = order([batch, contract, rhsFree]);
    if (elementCount([batch, lhsFree, rhsFree].flat()) > this.maxElements) return;
    if (elementCount(lhs.dims) > this.maxElements || elementCount(rhs.dims) > this.maxElements) return;
    this.add("dot", [this.need(t, lhs.dims), this.need(t, rhs.dims)], {
      dimensionNumbers: {
        lhsBatchDimensions: lhs.where[0]!, rhsBatchDimensions: rhs.where[0]!,
        lhsContractingDimensions: lhs.where[1]!, rhsContractingDimensions: rhs.where[1]!,
      },
      precisionConfig: [],
    });
  }

  constantOp(): void {
    const t = this.pick(this.types);
    const d = this.dims(this.int(0, 2));
    const c = this.constant(this.literal(t, d));
    if (!this.chance(0.5)) return;
    // An op whose operands are all constants: work for constant folding.
    const kind = kindOf(t);
    const ops = BINARY.filter((o) => BINARY_OPERAND_KINDS[o].includes(kind));
    this.add(this.pick(ops), [c, this.constant(this.literal(t, d))], {});
  }

  simplifiable(): void {
    const x = this.any();
    const s = x.arrayShape;
    const t = s.elementType;
    const d = s.dimensions;
    const kind = kindOf(t);
    const swap = (a: XlaOp, c: XlaOp): [XlaOp, XlaOp] => (this.chance(0.5) ? [a, c] : [c, a]);
    if (this.chance(0.3)) {
      this.nearIdentity(x);
      return;
    }
    switch (this.int(0, 17)) {
      case 0: if (kind !== "pred") this.add("add", swap(x, this.splat(t, d, kind === "float" && this.chance(0.5) ? -0 : 0)), {}); return;
      case 1: { // x * 1, and the near misses x * 0, x * -0 that are not identities for floats
        const v = kind === "float" ? this.pick([1, 1, 0, -0]) : kind === "pred" ? this.chance(0.5) : this.pick([1, 0]);
        this.add("multiply", swap(x, this.splat(t, d, ELEMENT_TYPES[t].bitWidth === 64 && kind !== "float" ? BigInt(v) : v)), {});
        return;
      }
      case 2: {
        if (kind === "pred") return;
        const v = this.pick(kind === "float" ? [0, 1, -0] : [0, 1]);
        this.add(this.pick(["subtract", "divide"] as const), [x, this.splat(t, d, ELEMENT_TYPES[t].bitWidth === 64 && kind !== "float" ? BigInt(v) : v)], {});
        return;
      }
      case 3: {
        const op = kind === "pred" || kind === "unsigned" ? "not" : this.pick(["negate", "abs"] as const);
        this.add(op, [this.add(op, [x], {}, false)], {});
        return;
      }
      case 4: this.add("reshape", [this.add("reshape", [x], { dimensions: this.factorize(elementCount(d)) }, false)], { dimensions: this.factorize(elementCount(d)) }); return;
      case 5: this.add("reshape", [x], { dimensions: [...d] }); return;
      case 6: {
        const perm = (): number[] => this.shuffle(d.map((_, i) => i));
        this.add("transpose", [this.add("transpose", [x], { permutation: perm() }, false)], { permutation: this.chance(0.5) ? perm() : d.map((_, i) => i) });
        return;
      }
      case 7: {
        const inner = this.add("slice", [x], this.randomSlice(d), false);
        this.add("slice", [inner], this.chance(0.3) ? fullSlice(inner.arrayShape.dimensions) : this.randomSlice(inner.arrayShape.dimensions));
        return;
      }
      case 8: this.add("convert", [x], { elementType: t }); return;
      case 9: {
        const made = this.pool.filter((v) => v.instruction.opcode !== "parameter");
        if (made.length === 0) return;
        const inst = this.pick(made).instruction;
        this.add(inst.opcode, inst.operands.map((o) => this.opOf(o)), inst.attrs);
        return;
      }
      case 10: {
        if (d.length === 0) { this.add("concatenate", [this.add("reshape", [x], { dimensions: [1] }, false)], { dimension: 0 }); return; }
        const dim = this.int(0, d.length - 1);
        const n = d[dim]!;
        const cut = this.int(0, n);
        const part = (lo: number, hi: number): XlaOp => {
          const a = fullSlice(d);
          a.startIndices[dim] = lo;
          a.limitIndices[dim] = hi;
          return this.add("slice", [x], a, false);
        };
        this.add("concatenate", this.chance(0.2) ? [x] : [part(0, cut), part(cut, n)], { dimension: dim });
        return;
      }
      case 11: {
        const zeros = d.map(() => 0);
        this.add("pad", [x, this.splat(t, [], this.scalar(t))], { edgePaddingLow: zeros, edgePaddingHigh: zeros, interiorPadding: zeros });
        return;
      }
      case 12: {
        const op = kind === "pred" ? "or" : "add";
        this.add("reduce", [x, this.splat(t, [], this.identity(t, op))], { dimensions: [], toApply: this.reducer(t, op) });
        return;
      }
      case 13: {
        if (kind === "pred") return;
        const m = this.int(1, 3), n = this.int(1, 3);
        const l = this.need(t, [m, 1]);
        const r = this.need(t, [1, n]);
        this.add("dot", [l, r], {
          dimensionNumbers: { lhsBatchDimensions: [], rhsBatchDimensions: [], lhsContractingDimensions: [1], rhsContractingDimensions: [0] },
          precisionConfig: [],
        });
        return;
      }
      case 14: this.add("select", [this.splat("pred", d, this.chance(0.5)), x, this.need(t, d)], {}); return;
      case 15:
        if (this.chance(0.5)) this.add("compare", [x, x], { direction: this.pick(DIRECTIONS) });
        else this.add("reverse", [this.add("reverse", [x], { dimensions: this.subset(d.length) }, false)], { dimensions: this.subset(d.length) });
        return;
      case 16: {
        if (elementCount(d) * 4 > this.maxElements || d.length + 2 > this.maxRank) return;
        const inner = this.add("broadcastInDim", [x], { dimensions: [...d, 2], broadcastDimensions: d.map((_, i) => i) }, false);
        this.add("broadcastInDim", [inner], { dimensions: [2, ...d, 2], broadcastDimensions: [...d.map((_, i) => i + 1), d.length + 1] });
        return;
      }
      default: {
        const ops: ("maximum" | "minimum" | "and" | "or" | "subtract" | "divide" | "xor")[] = ["maximum", "minimum"];
        if (kind !== "float") ops.push("and", "or", "xor");
        if (kind !== "pred") ops.push("subtract", "divide");
        const op = this.pick(ops);
        this.add(op, [x, x], {});
      }
    }
  }

  call(): void {
    const x = this.any();
    const s = x.arrayShape;
    const kind = kindOf(s.elementType);
    const sub = this.b.createSubBuilder(`callee_${++this.subCount}`);
    const p0 = parameter(sub, 0, s);
    const p1 = parameter(sub, 1, s);
    const ops = BINARY.filter((o) => BINARY_OPERAND_KINDS[o].includes(kind));
    const inner = sub.addInstruction(this.pick(ops), [p0, p1], {});
    const callee = sub.build(this.chance(0.5) ? inner : sub.addInstruction(this.pick(ops), [inner, p0], {}));
    this.add("call", [x, this.need(s.elementType, s.dimensions)], { toApply: callee });
    // A map of a scalar computation with a constant in it.
    const scalar = this.b.createSubBuilder(`mapped_${++this.subCount}`);
    const [q0, q1] = [parameter(scalar, 0, scalarShape(s.elementType)), parameter(scalar, 1, scalarShape(s.elementType))];
    const c = scalar.addInstruction("constant", [], { literal: Literal.scalar(s.elementType, this.scalar(s.elementType)) });
    const body = scalar.build(scalar.addInstruction(this.pick(ops), [scalar.addInstruction(this.pick(ops), [q0, c], {}), q1], {}));
    const dims = s.dimensions.map((_, i) => i);
    this.add("map", [this.need(s.elementType, s.dimensions), x], { dimensions: dims, toApply: body });
  }

  batchNorm(): void {
    const t = this.pick(["f32", "f64"] as const);
    const d = this.dims(this.int(1, this.maxRank));
    const fi = this.int(0, d.length - 1);
    const x = this.need(t, d);
    const vec = (): XlaOp => this.need(t, [d[fi]!]);
    // Variances must not be negative (the kernel takes a square root).
    const variance = (): XlaOp => this.add("abs", [vec()], {}, false);
    const attrs = { epsilon: this.pick([1e-3, 1e-5, 0.5]), featureIndex: fi };
    const which = this.int(0, 2);
    if (which === 1) {
      this.add("batchNormInference", [x, vec(), vec(), vec(), variance()], attrs);
      return;
    }
    const r = which === 0 ? this.add("batchNormTraining", [x, vec(), vec()], attrs, false)
      : this.add("batchNormGrad", [x, vec(), vec(), variance(), this.need(t, d)], attrs, false);
    for (let i = 0; i < 3; i++) if (this.chance(0.7) || i === 0) this.add("getTupleElement", [r], { index: i });
  }

  dynamic(): void {
    const x = this.any();
    const d = x.arrayShape.dimensions;
    const it = this.pick(["s32", "s64", "u32"] as const);
    const starts = d.map(() => (this.chance(0.5) ? this.need(it, []) : this.splat(it, [], this.scalar(it, 0.3))));
    const sizes = d.map((n) => this.int(0, n));
    if (this.chance(0.5)) {
      this.add("dynamicSlice", [x, ...starts], { sliceSizes: this.chance(0.2) ? [...d] : sizes });
      return;
    }
    const update = this.need(x.arrayShape.elementType, this.chance(0.2) ? d : sizes);
    this.add("dynamicUpdateSlice", [x, update, ...starts], {});
  }

  /** Patterns one algebraic step from simpler: x - neg(y), x * -1, max(x, lowest), and(x, ~0), select(not p, a, b), ... */
  nearIdentity(x: XlaOp): void {
    const s = x.arrayShape;
    const t = s.elementType;
    const d = s.dimensions;
    const kind = kindOf(t);
    const wide = ELEMENT_TYPES[t].bitWidth === 64 && kind !== "float";
    const v = (n: number | bigint): Scalar => (wide ? BigInt(n) : typeof n === "bigint" ? Number(n) : n);
    switch (this.int(0, 6)) {
      case 0:
        if (kind === "pred") return;
        this.add(this.pick(["add", "subtract"] as const), [x, this.add("negate", [this.need(t, d)], {}, false)], {});
        return;
      case 1:
        if (kind === "pred") return;
        this.add(this.pick(["multiply", "divide"] as const), [x, this.splat(t, d, v(-1))], {});
        return;
      case 2: if (kind === "signed" || kind === "float") this.add("abs", [this.add("negate", [x], {}, false)], {}); return;
      case 3: {
        const { min, max } = kind === "float" ? { min: -Infinity, max: Infinity } : kind === "pred" ? { min: false, max: true } : integerBounds(t);
        const low = this.chance(0.5);
        const bound = kind === "float" || kind === "pred" ? (low ? min : max) : v((low ? min : max) as bigint);
        this.add(this.chance(0.8) === low ? "maximum" : "minimum", [x, this.splat(t, d, bound as Scalar)], {});
        return;
      }
      case 4: {
        if (kind === "float") return;
        const op = this.pick(["and", "or", "xor", ...(kind === "pred" ? [] : ["shiftLeft", "shiftRightLogical"] as const)] as const);
        const c = op === "and" ? (kind === "pred" ? true : kind === "signed" ? v(-1) : v(integerBounds(t).max)) : kind === "pred" ? false : v(0);
        const [l, r] = op.startsWith("shift") || this.chance(0.5) ? [x, this.splat(t, d, c)] : [this.splat(t, d, c), x];
        this.add(op, [l, r], {});
        return;
      }
      default: {
        const p = this.need("pred", d);
        this.add("select", [this.add("not", [p], {}, false), x, this.need(t, d)], {});
      }
    }
  }

  // ---- helpers

  identity(t: ElementType, op: "add" | "maximum" | "minimum" | "and" | "or"): Scalar {
    const wide = ELEMENT_TYPES[t].bitWidth === 64;
    switch (op) {
      case "and": return true;
      case "or": return false;
      case "add": return wide ? 0n : 0;
      default: {
        if (kindOf(t) === "float") return op === "maximum" ? -Infinity : Infinity;
        const { min, max } = integerBounds(t);
        const v = op === "maximum" ? min : max;
        return wide ? v : Number(v);
      }
    }
  }

  factorize(n: number): number[] {
    const rank = this.int(n === 1 ? 0 : 1, this.maxRank);
    if (rank === 0) return [];
    const out = Array.from({ length: rank }, () => 1);
    if (n === 0) {
      out[this.int(0, rank - 1)] = 0;
      return out.map((v) => (v === 0 ? 0 : this.int(1, 3)));
    }
    let m = n;
    for (let p = 2; m > 1; p++) {
      while (m % p === 0) {
        out[this.int(0, rank - 1)]! *= p;
        m /= p;
      }
    }
    return out;
  }

  randomSlice(d: readonly number[]): { startIndices: number[]; limitIndices: number[]; strides: number[] } {
    const startIndices = d.map((n) => this.int(0, n));
    const limitIndices = d.map((n, i) => this.int(startIndices[i]!, n));
    const strides = d.map(() => this.int(1, 3));
    return { startIndices, limitIndices, strides };
  }

  step(): void {
    switch (this.pick(this.families)) {
      case "elementwise": this.elementwise(); return;
      case "broadcast": this.broadcast(); return;
      case "shape": this.shapeOp(); return;
      case "iota": this.iota(); return;
      case "convert": this.convert(); return;
      case "compare": this.compare(); return;
      case "reduce": this.reduce(); return;
      case "dot": this.dot(); return;
      case "constant": this.constantOp(); return;
      case "simplifiable": this.simplifiable(); return;
      case "call": this.call(); return;
      case "batchNorm": this.batchNorm(); return;
      case "dynamic": this.dynamic(); return;
    }
  }
}

function sameDimsOf(s: ArrayShape, dims: readonly number[]): boolean {
  return s.dimensions.length === dims.length && s.dimensions.every((n, i) => n === dims[i]);
}

function sameArray(s: ArrayShape, t: ElementType, dims: readonly number[]): boolean {
  return s.elementType === t && sameDimsOf(s, dims);
}

function fullSlice(d: readonly number[]): { startIndices: number[]; limitIndices: number[]; strides: number[] } {
  return { startIndices: d.map(() => 0), limitIndices: [...d], strides: d.map(() => 1) };
}

function integerBounds(t: ElementType): { min: bigint; max: bigint } {
  const bits = BigInt(ELEMENT_TYPES[t].bitWidth);
  return kindOf(t) === "signed" ? { min: -(1n << (bits - 1n)), max: (1n << (bits - 1n)) - 1n } : { min: 0n, max: (1n << bits) - 1n };
}

/** A random valid computation and random arguments for it, deterministic in `seed`. */
export function randomProgram(seed: number, options: RandomProgramOptions = {}): RandomProgram {
  const g = new Generator(seed, options);
  const size = options.size ?? 14;
  for (let i = 0; i < size; i++) g.step();
  if (g.pool.length === 0) g.any();
  // The root: a tuple of most of the "sinks" (values nothing uses yet, leaves excepted),
  // so most of the program is live; the sinks left out are dead code.
  const used = new Set<Instruction>(g.pool.flatMap((v) => v.instruction.operands));
  const sinks = g.pool.filter((v) => !used.has(v.instruction) && v.instruction.opcode !== "parameter" && v.instruction.opcode !== "constant");
  let picked = [...new Set(sinks.filter(() => g.chance(0.8)).slice(-4))];
  if (picked.length === 0) picked = [g.pool.at(-1)!];
  const root = picked.length === 1 ? picked[0]! : g.b.addInstruction("tuple", picked, {});
  const computation = g.b.build(root);
  const args = g.paramShapes.map((s) => g.literal(s.elementType, s.dimensions, g.special, s.layout));
  return { computation, args };
}
