// Fuzzing past the parsers: random programs built through the builder API, valid and
// not (operands of clashing shapes and types, dimensions out of range, sizes that do
// not divide), then verified, printed, read back and run on the interpreter. Every
// failure must be one of xlats' typed errors; anything else is a finding. Programs are
// small (at most 4 elements a dimension, 3 dimensions), so every run is quick; a
// deadline on each run turns a slow one into a DeadlineError, which counts as typed.

import {
  ELEMENT_TYPES, XlaBuilder, XlaError, Literal, arrayShape, binaryOp, broadcast, broadcastInDim, clamp, concatInDim, constantR0,
  convertElementType, dot, eq, evaluate, iota, lt, mul, pad, parameter, parseHlo, printHlo, reduce, reshape, rev, scalarShape,
  select, shapesEqual, slice, sub, transpose, tuple, unaryOp, verifyModule, type ArrayShape, type ElementType, type TensorSharding,
  type XlaOp, type Scalar,
} from "../../src/index.js";
import { BINARY_OPCODES, UNARY_OPCODES, type BinaryOpcode } from "../../src/ir/opcodes.js";
import type { ReducerKind } from "../../src/compiler/kernel/lower_fusion.js";
import { identity } from "../../src/compiler/kernel/schedule_reduce.js";
import { Random } from "./mutate.js";

export interface BuilderFuzzReport {
  readonly programs: number;
  /** Programs that built, verified, printed, read back and ran. */
  readonly ran: number;
  /** Typed errors by class name and the step that raised them (`build ShapeError`). */
  readonly typed: ReadonlyMap<string, number>;
  /** Untyped errors: what they were, and the program's seed to replay it. */
  readonly findings: readonly { readonly program: number; readonly step: string; readonly error: string }[];
}

const TYPES: readonly ElementType[] = ["f32", "s32", "pred", "f64", "u8", "f16", "bf16", "s64"];

/** The reducers drawn, by the names the compiler's identities know them (lower_fusion.ts ReducerKind). */
const REDUCERS: readonly (readonly [BinaryOpcode, ReducerKind])[] = [
  ["add", "add"], ["multiply", "mul"], ["maximum", "max"], ["minimum", "min"], ["and", "and"], ["or", "or"],
];

/**
 * The reducer's identity in type `t`: XLA asks that a reduction's init value be one
 * (backends may apply it once per partial result: a sharded reduce once per device),
 * so a random init would make results that legitimately differ.
 */
function initValue(kind: ReducerKind, t: ElementType): Scalar {
  // A complex reduce starts at 0 (or 1 for a product); its other reducers are the rules' to refuse.
  if (ELEMENT_TYPES[t].kind === "complex") return { re: kind === "mul" ? 1 : 0, im: 0 };
  // Every bit set is the identity of `and`: -1 for signed types, the largest value for unsigned ones.
  const v = identity(kind === "and" && ELEMENT_TYPES[t].kind === "unsigned" ? "min" : kind, t);
  return t === "pred" ? v !== 0 : v;
}

/** The most elements of a new parameter or iota. */
const MAX_ELEMENTS = 2048;

/** Float arguments cycle through these: the values where backends are most likely to disagree. */
const FLOAT_VALUES = [0.5, -2.25, 3, 1, -0, 7.75, -1, 0, 100, 1e-3, Number.NaN, -100, 2.5, Number.POSITIVE_INFINITY, -0.375, Number.NEGATIVE_INFINITY, 1e-40];

/**
 * The value of argument `salt` (its order among its program's parameters) for `shape`:
 * a function of the two alone, so that a program rebuilt alone, or read back from its
 * saved text, runs on the same values as in a batch.
 */
export function argumentFor(shape: ArrayShape, salt: number): Literal {
  const t = shape.elementType;
  const n = shape.dimensions.reduce((a, c) => a * c, 1);
  const info = ELEMENT_TYPES[t];
  const values = Array.from({ length: n }, (_, i): number | boolean => {
    const k = i * 5 + salt * 3;
    if (t === "pred") return k % 3 === 0;
    if (info.kind === "float") return FLOAT_VALUES[k % FLOAT_VALUES.length]!;
    const v = (k % 13) - 6;
    return info.kind === "unsigned" ? v + 6 : v;
  });
  return Literal.fromValues(t, shape.dimensions, values);
}

/** A few random ops on random operands: each op picks its arguments, sometimes ones its rules refuse. */
export class ProgramMaker {
  private readonly ops: XlaOp[] = [];
  private readonly firstParameter: number;

  /**
   * `args` are the builder's arguments so far: this program's parameters are numbered
   * after them. `shardingOf` gives each new parameter its sharding (sharded programs).
   */
  constructor(
    readonly rng: Random, readonly b: XlaBuilder, readonly args: Literal[] = [],
    private readonly shardingOf?: (shape: ArrayShape) => TensorSharding | undefined,
    /** The largest dimension of a new parameter or iota: past 4, compiled loops run their vector bodies and tails. */
    private readonly maxDim = 4,
  ) {
    this.firstParameter = args.length;
  }

  /** Up to 3 dimensions of 1 to `maxDim` each, at most MAX_ELEMENTS in all (later ones cut to 1). */
  private dims(maxDim = this.maxDim): number[] {
    let room = MAX_ELEMENTS;
    return Array.from({ length: this.rng.int(4) }, () => {
      const d = Math.min(1 + this.rng.int(maxDim), room);
      room = Math.floor(room / d);
      return d;
    });
  }

  /** A dimension list that is sometimes wrong: out of range, repeated, or negative. */
  private dimsOf(rank: number, count: number): number[] {
    const out = Array.from({ length: count }, () => this.rng.int(Math.max(1, rank)));
    if (this.rng.next() < 0.15) out.push(this.rng.pick([-1, rank, rank + 3, 0]));
    return out;
  }

  private parameterOf(shape: ArrayShape): XlaOp {
    const number = this.args.length;
    const sharding = this.shardingOf?.(shape);
    const p = parameter(this.b, number, shape, sharding === undefined ? `p${number}` : { name: `p${number}`, sharding });
    this.args.push(argumentFor(shape, number - this.firstParameter));
    this.ops.push(p);
    return p;
  }

  private operand(): XlaOp {
    if (this.ops.length === 0 || this.rng.next() < 0.2) return this.parameterOf(arrayShape(this.rng.pick(TYPES), this.dims()));
    return this.rng.pick(this.ops);
  }

  /** Mostly an operand of the same shape as `x` (so that elementwise ops build), sometimes any. */
  private like(x: XlaOp): XlaOp {
    if (this.rng.next() < 0.3 || x.shape.kind !== "array") return this.operand();
    const same = this.ops.filter((o) => o !== x && shapesEqual(o.shape, x.shape));
    return same.length > 0 && this.rng.next() < 0.6 ? this.rng.pick(same) : this.parameterOf(x.shape);
  }

  private shapeOf(op: XlaOp): ArrayShape {
    return op.shape.kind === "array" ? op.shape : arrayShape("f32", []);
  }

  /** One random op, pushed and returned. */
  step(): XlaOp {
    const r = this.rng;
    const x = this.operand();
    const s = this.shapeOf(x);
    const rank = s.dimensions.length;
    const perm = (): number[] => {
      const p = s.dimensions.map((_, i) => i);
      for (let i = p.length - 1; i > 0; i--) {
        const j = r.int(i + 1);
        [p[i], p[j]] = [p[j]!, p[i]!];
      }
      if (r.next() < 0.1) p.push(0);
      return p;
    };
    const makers: (() => XlaOp)[] = [
      () => binaryOp(r.pick(BINARY_OPCODES), x, this.like(x)),
      () => binaryOp(r.pick(BINARY_OPCODES), x, this.like(x)),
      () => sub(x, r.pick([1, 2.5, -3])),
      () => mul(x, this.operand(), r.next() < 0.5 ? this.dimsOf(rank, r.int(3)) : undefined),
      () => eq(x, this.like(x)),
      () => lt(x, this.like(x)),
      () => select(this.operand(), x, r.next() < 0.5 ? this.like(x) : constantR0(this.b, s.elementType, 0)),
      () => clamp(this.operand(), x, this.like(x)),
      () => unaryOp(r.pick(UNARY_OPCODES), x),
      () => unaryOp(r.pick(UNARY_OPCODES), x),
      () => convertElementType(x, r.pick(TYPES)),
      // New dimensions stay small: the operand may already hold MAX_ELEMENTS.
      () => broadcast(x, this.dims(4)),
      () => broadcastInDim(x, this.dims(4), this.dimsOf(rank, rank)),
      () => reshape(x, r.next() < 0.5 ? [s.dimensions.reduce((a, c) => a * c, 1)] : this.dims()),
      () => transpose(x, perm()),
      () => rev(x, this.dimsOf(rank, r.int(rank + 1))),
      () => slice(x, s.dimensions.map(() => r.int(2)), s.dimensions.map((d) => d - r.int(2) + (r.next() < 0.1 ? 2 : 0)), s.dimensions.map(() => 1 + r.int(2))),
      () => pad(x, constantR0(this.b, s.elementType, 0), s.dimensions.map(() => ({ edgePaddingLow: r.int(3) - 1, edgePaddingHigh: r.int(3) - 1, interiorPadding: r.int(2) }))),
      () => concatInDim(this.b, [x, this.like(x)], r.int(Math.max(1, rank + 1))),
      () => dot(x, this.operand()),
      () => iota(this.b, arrayShape(r.pick(TYPES), this.dims()), r.int(3)),
      // Misuses from untyped code: sizes and dimensions that are not whole numbers, unknown types.
      () => reshape(x, [r.pick([1.5, -1, Number.NaN, 2 ** 40])]),
      () => broadcast(x, [r.pick([-2, 0.5, Number.POSITIVE_INFINITY])]),
      () => transpose(x, s.dimensions.map((_, i) => (i === 0 ? r.pick([Number.NaN, 0.5, -1]) : i))),
      () => slice(x, s.dimensions.map(() => 0), s.dimensions, s.dimensions.map(() => r.pick([0, -1, 1]))),
      () => convertElementType(x, r.pick(["f31", "", "float32"]) as ElementType),
      () => iota(this.b, arrayShape("s32", [3]), r.pick([-1, 1, 7])),
      () => {
        const reducer = this.b.createSubBuilder(`reducer${this.ops.length}`);
        const t = r.next() < 0.9 ? s.elementType : r.pick(TYPES);
        const [opcode, kind] = r.pick(REDUCERS);
        const body = reducer.build(binaryOp(opcode, parameter(reducer, 0, scalarShape(t)), parameter(reducer, 1, scalarShape(t))));
        return reduce(x, constantR0(this.b, t, initValue(kind, t)), body, this.dimsOf(rank, r.int(rank + 1)));
      },
    ];
    const op = r.pick(makers)();
    this.ops.push(op);
    return op;
  }

  /** `count` steps, each one its rules refuse skipped (its typed error dropped): a valid program of the steps that built. */
  validSteps(count: number): void {
    for (let n = count; n > 0; n--) {
      try {
        this.step();
      } catch (e) {
        if (!(e instanceof XlaError)) throw e;
      }
    }
  }

  /** The program's outputs: its last op, sometimes another one too (array-shaped only). */
  outputs(): XlaOp[] {
    const arrays = this.ops.filter((o) => o.shape.kind === "array");
    const out = arrays.slice(-1);
    if (arrays.length > 1 && this.rng.next() < 0.3) out.push(this.rng.pick(arrays.slice(0, -1)));
    return out;
  }

  root(): XlaOp {
    const last = this.ops[this.ops.length - 1]!;
    return this.rng.next() < 0.1 && this.ops.length > 1 ? tuple(this.b, [last, this.ops[0]!]) : last;
  }
}

/** The random source of program `index` of the run with `seed`. */
export function programRandom(seed: number, index: number): Random {
  return new Random(Math.imul(seed, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b));
}

/** Runs `count` random programs from `seed`; program i is the same for the same seed. */
export function fuzzBuilder(seed: number, count: number, timeoutMs = 5_000): BuilderFuzzReport {
  const typed = new Map<string, number>();
  const findings: { program: number; step: string; error: string }[] = [];
  let ran = 0;
  for (let i = 0; i < count; i++) {
    const rng = programRandom(seed, i);
    const b = new XlaBuilder(`fuzz_${i}`);
    const maker = new ProgramMaker(rng, b);
    let step = "build";
    try {
      for (let n = 1 + rng.int(6); n > 0; n--) maker.step();
      const module = b.buildModule(maker.root());
      step = "verify";
      verifyModule(module);
      step = "print and parse";
      const reread = parseHlo(printHlo(module));
      step = "evaluate";
      evaluate(reread.entry, maker.args, { deadline: Date.now() + timeoutMs });
      ran++;
    } catch (e) {
      if (e instanceof XlaError) {
        const key = `${step} ${e.name}`;
        typed.set(key, (typed.get(key) ?? 0) + 1);
      } else {
        findings.push({ program: i, step, error: e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e) });
      }
    }
  }
  return { programs: count, ran, typed, findings };
}
