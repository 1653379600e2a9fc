// Fuzzing past the parsers: random programs built through the builder API, valid and
// not (operands of clashing shapes and types, dimensions out of range, sizes that do
// not divide), then verified, printed, read back and run on the interpreter. Every
// failure must be one of xlats' typed errors; anything else is a finding. Programs are
// small (at most 4 elements a dimension, 3 dimensions), so every run is quick; a
// deadline on each run turns a slow one into a DeadlineError, which counts as typed.

import {
  XlaBuilder, XlaError, Literal, abs, add, and, arrayShape, broadcast, broadcastInDim, clamp, concatInDim, constantR0,
  convertElementType, dot, eq, evaluate, exp, iota, lt, max, mul, neg, pad, parameter, parseHlo, printHlo, reduce, reshape, rev,
  scalarShape, select, slice, sub, tanh, transpose, tuple, verifyModule, type ArrayShape, type ElementType, type XlaOp,
} from "../../src/index.js";
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

const TYPES: readonly ElementType[] = ["f32", "s32", "pred", "f64", "u8"];

/** A few random ops on random operands: each op picks its arguments, sometimes ones its rules refuse. */
class ProgramMaker {
  private readonly ops: XlaOp[] = [];
  private params = 0;
  readonly args: Literal[] = [];

  constructor(readonly rng: Random, readonly b: XlaBuilder) {}

  private dims(): number[] {
    return Array.from({ length: this.rng.int(4) }, () => 1 + this.rng.int(4));
  }

  /** A dimension list that is sometimes wrong: out of range, repeated, or negative. */
  private dimsOf(rank: number, count: number): number[] {
    const out = Array.from({ length: count }, () => this.rng.int(Math.max(1, rank)));
    if (this.rng.next() < 0.15) out.push(this.rng.pick([-1, rank, rank + 3, 0]));
    return out;
  }

  private operand(): XlaOp {
    if (this.ops.length === 0 || this.rng.next() < 0.2) {
      const t = this.rng.pick(TYPES);
      const shape = arrayShape(t, this.dims());
      const n = shape.dimensions.reduce((a, c) => a * c, 1);
      const values = Array.from({ length: n }, (_, i) => (t === "pred" ? i % 2 === 0 : i % 7 - 3 + (t === "u8" ? 3 : 0)));
      this.args.push(Literal.fromValues(t, shape.dimensions, values));
      const p = parameter(this.b, this.params++, shape, `p${this.params}`);
      this.ops.push(p);
      return p;
    }
    return this.rng.pick(this.ops);
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
      return r.next() < 0.1 ? [...p, 0] : p;
    };
    const makers: (() => XlaOp)[] = [
      () => add(x, this.operand()),
      () => sub(x, r.pick([1, 2.5, -3])),
      () => mul(x, this.operand(), r.next() < 0.5 ? this.dimsOf(rank, r.int(3)) : undefined),
      () => max(x, this.operand()),
      () => and(x, this.operand()),
      () => eq(x, this.operand()),
      () => lt(x, this.operand()),
      () => select(this.operand(), x, r.next() < 0.5 ? this.operand() : constantR0(this.b, s.elementType, 0)),
      () => clamp(this.operand(), x, this.operand()),
      () => neg(x),
      () => abs(x),
      () => exp(x),
      () => tanh(x),
      () => convertElementType(x, r.pick(TYPES)),
      () => broadcast(x, this.dims()),
      () => broadcastInDim(x, this.dims(), this.dimsOf(rank, rank)),
      () => reshape(x, r.next() < 0.5 ? [s.dimensions.reduce((a, c) => a * c, 1)] : this.dims()),
      () => transpose(x, perm()),
      () => rev(x, this.dimsOf(rank, r.int(rank + 1))),
      () => slice(x, s.dimensions.map(() => r.int(2)), s.dimensions.map((d) => d - r.int(2) + (r.next() < 0.1 ? 2 : 0)), s.dimensions.map(() => 1 + r.int(2))),
      () => pad(x, constantR0(this.b, s.elementType, 0), s.dimensions.map(() => ({ edgePaddingLow: r.int(3) - 1, edgePaddingHigh: r.int(3) - 1, interiorPadding: r.int(2) }))),
      () => concatInDim(this.b, [x, this.operand()], r.int(Math.max(1, rank + 1))),
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
        const adder = this.b.createSubBuilder(`sum${this.ops.length}`);
        const t = r.next() < 0.9 ? s.elementType : r.pick(TYPES);
        const body = adder.build(add(parameter(adder, 0, scalarShape(t)), parameter(adder, 1, scalarShape(t))));
        return reduce(x, constantR0(this.b, t, t === "pred" ? false : 0), body, this.dimsOf(rank, r.int(rank + 1)));
      },
    ];
    const op = r.pick(makers)();
    this.ops.push(op);
    return op;
  }

  root(): XlaOp {
    const last = this.ops[this.ops.length - 1]!;
    return this.rng.next() < 0.1 && this.ops.length > 1 ? tuple(this.b, [last, this.ops[0]!]) : last;
  }
}

/** Runs `count` random programs from `seed`; program i is the same for the same seed. */
export function fuzzBuilder(seed: number, count: number, timeoutMs = 5_000): BuilderFuzzReport {
  const typed = new Map<string, number>();
  const findings: { program: number; step: string; error: string }[] = [];
  let ran = 0;
  for (let i = 0; i < count; i++) {
    const rng = new Random(Math.imul(seed, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b));
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
