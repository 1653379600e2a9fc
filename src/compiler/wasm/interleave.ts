// Several vectors of one transcendental, side by side. An exp is a chain of about
// twenty dependent vector instructions (some sixty cycles); emitted one vector after
// the other, an unrolled loop keeps more instructions in flight than the CPU's window
// holds, and the chain's latency shows (measured: 3.3 ms for 4M exps where 4 vectors
// side by side take 2.7). V8 keeps the order of the wasm code, so the interleaving is
// done here: the routine is recorded once against FloatOps, cut into statements (each
// ends where a value is stored to a local and nothing is left on the stack), and each
// statement is emitted for every vector before the next statement.

import type { FloatOps } from "../kernel/approximations.js";

type LocalKind = "float" | "int" | "mask";

interface Token {
  /** Stack effect: values popped, values pushed. */
  readonly pops: number;
  readonly pushes: number;
  /** Emits the operation on `o`, with recorded locals mapped by `local`. */
  readonly emit: (o: FloatOps, local: (recorded: number) => number) => void;
}

/** A FloatOps that records what the routine does instead of emitting it. */
class Recorder implements FloatOps {
  readonly tokens: Token[] = [];
  readonly kinds: LocalKind[] = [];
  /** Present where the ops recorded for have it, so the routine records what they emit. */
  readonly madd?: () => void;
  constructor(fused: boolean) {
    if (fused) this.madd = () => this.tokens.push({ pops: 3, pushes: 1, emit: (o) => o.madd!() });
  }
  private op(pops: number, emit: (o: FloatOps) => void): void {
    this.tokens.push({ pops, pushes: 1, emit });
  }
  fconst(x: number): void { this.op(0, (o) => o.fconst(x)); }
  iconst(x: number): void { this.op(0, (o) => o.iconst(x)); }
  add(): void { this.op(2, (o) => o.add()); }
  sub(): void { this.op(2, (o) => o.sub()); }
  mul(): void { this.op(2, (o) => o.mul()); }
  div(): void { this.op(2, (o) => o.div()); }
  min(): void { this.op(2, (o) => o.min()); }
  max(): void { this.op(2, (o) => o.max()); }
  abs(): void { this.op(1, (o) => o.abs()); }
  neg(): void { this.op(1, (o) => o.neg()); }
  nearest(): void { this.op(1, (o) => o.nearest()); }
  sqrt(): void { this.op(1, (o) => o.sqrt()); }
  pmax(): void { this.op(2, (o) => o.pmax()); }
  pmin(): void { this.op(2, (o) => o.pmin()); }
  lt(): void { this.op(2, (o) => o.lt()); }
  gt(): void { this.op(2, (o) => o.gt()); }
  eq(): void { this.op(2, (o) => o.eq()); }
  ne(): void { this.op(2, (o) => o.ne()); }
  igt(): void { this.op(2, (o) => o.igt()); }
  ieq(): void { this.op(2, (o) => o.ieq()); }
  select(): void { this.op(3, (o) => o.select()); }
  bits(): void { this.op(1, (o) => o.bits()); }
  fromBits(): void { this.op(1, (o) => o.fromBits()); }
  iadd(): void { this.op(2, (o) => o.iadd()); }
  isub(): void { this.op(2, (o) => o.isub()); }
  iand(): void { this.op(2, (o) => o.iand()); }
  ior(): void { this.op(2, (o) => o.ior()); }
  ixor(): void { this.op(2, (o) => o.ixor()); }
  ishl(k: number): void { this.op(1, (o) => o.ishl(k)); }
  ishrS(k: number): void { this.op(1, (o) => o.ishrS(k)); }
  ishrU(k: number): void { this.op(1, (o) => o.ishrU(k)); }
  itof(): void { this.op(1, (o) => o.itof()); }
  ftoi(): void { this.op(1, (o) => o.ftoi()); }
  mor(): void { this.op(2, (o) => o.mor()); }
  mand(): void { this.op(2, (o) => o.mand()); }
  copysign(): void { this.op(2, (o) => o.copysign()); }
  local(kind: LocalKind): number {
    this.kinds.push(kind);
    return this.kinds.length - 1;
  }
  get(l: number): void { this.tokens.push({ pops: 0, pushes: 1, emit: (o, local) => o.get(local(l)) }); }
  set(l: number): void { this.tokens.push({ pops: 1, pushes: 0, emit: (o, local) => o.set(local(l)) }); }
  tee(l: number): void { this.tokens.push({ pops: 1, pushes: 1, emit: (o, local) => o.tee(local(l)) }); }
}

/**
 * Emits `routine` (which reads its argument from a local and leaves its result on the
 * stack, as the approximations (kernel/approximations.ts) do) for each local of `inputs`, statement by statement across
 * them; returns the locals of the results, in order.
 */
export function emitInterleaved(o: FloatOps, routine: (o: FloatOps, x: number) => void, inputs: readonly number[]): number[] {
  const rec = new Recorder(o.madd !== undefined);
  const argument = rec.local("float");
  routine(rec, argument);
  const statements: Token[][] = [[]];
  let depth = 0;
  for (const t of rec.tokens) {
    statements[statements.length - 1]!.push(t);
    depth += t.pushes - t.pops;
    if (depth === 0) statements.push([]);
  }
  if (depth !== 1) throw new Error("emitInterleaved: the routine must leave exactly its result on the stack");
  const maps = inputs.map((x) => new Map([[argument, x]]));
  const localOf = maps.map((m) => (recorded: number): number => {
    let l = m.get(recorded);
    if (l === undefined) m.set(recorded, l = o.local(rec.kinds[recorded]!));
    return l;
  });
  const results = inputs.map(() => o.local("float"));
  for (const [s, statement] of statements.entries()) {
    inputs.forEach((_, c) => {
      for (const t of statement) t.emit(o, localOf[c]!);
      // The last statement leaves the result.
      if (s === statements.length - 1) o.set(results[c]!);
    });
  }
  return results;
}
