// Kernel-graph nodes as C on sixteen f32 lanes at once (xk_vf: c_math.ts's vector
// helpers, AVX-512; for loop kernels AVX2 with FMA too, on two ymm halves), for the
// element loops of loops, row reductions and pipelines (emit_c_reduce.ts), which emit
// this form beside their scalar one and let the preprocessor choose (VECTOR_CONDITION,
// LOOP_VECTOR_CONDITION). The scalar form leaves the C compiler to
// vectorize sixty-four lanes of plain C; it keeps some accumulators in memory and
// computes exp's final scaling in three instructions. In a C harness around the
// generated 4096×1024 softmax (one process, interleaved runs) the scalar form ran at
// 31–33 GB/s and this one at 47–48, with its output written by streaming stores.
// Every lane computes what the scalar code computes, operation for operation (the
// vector transcendentals are the scalar ones' emitters run on vectors, exp's scaling
// one vscalefps that rounds as the scalar code's two multiplies do), so the two forms
// give the same bits.
//
// Only what keeps that promise cheaply is written here: f32 values, loads contiguous
// along the row, + - * / min max abs neg sqrt rsqrt, the transcendentals of
// VECTOR_MATH, and selects by a pred loaded along the row (a masked softmax's mask: in
// the scalar form GCC vectorized its exp with two multiplies that underflow on every
// masked element, an assist each on Zen 5; vscalefps takes none). Anything else raises
// DeclinedError, and the kernel keeps its scalar form only.

import type { KernelGraph, Node } from "../kernel/graph.js";
import { approximationName, type ApproximationName } from "../kernel/approximations.js";
import { cMathFunction, cVectorHelpers, cVectorMathSource } from "./c_math.js";
import { decline } from "../kernel/declined.js";

/**
 * The transcendentals with a vector form here: all of c_math.ts but log1p, whose vector
 * form gives a NaN of the other sign for -inf and NaN inputs, and erf, on which GCC 12
 * stops with an internal compiler error.
 */
const VECTOR_MATH = new Set<ApproximationName | undefined>(["exp", "expNonPositive", "log", "expm1", "tanh", "logistic", "cbrt"]);

/** The other ops with a vector form here (VectorValues.expr). */
const VECTOR_OPS = new Set(["load", "add", "sub", "mul", "div", "max", "min", "neg", "abs", "sqrt", "rsqrt"]);

/**
 * Whether VectorValues writes node n on sixteen lanes (a load only where it is
 * contiguous, which its caller checks): f32 values, pred loads, and f32 selects by a pred
 * load.
 */
export function hasVectorForm(g: KernelGraph, n: Node): boolean {
  if (n.type === "pred") return n.op === "load";
  if (n.type !== "f32") return false;
  if (n.op === "select") return isPredLoad(g.node(n.args[0]!));
  return VECTOR_OPS.has(n.op) || VECTOR_MATH.has(approximationName(n));
}

const isPredLoad = (n: Node): boolean => n.op === "load" && n.type === "pred";

/** Outputs at least this large are written by streaming stores where a kernel has its vector form (they would only evict its inputs from the caches). */
export const STREAM_MIN_BYTES = 8 << 20;
/**
 * Kernels over fewer elements keep their scalar form only: the vector helpers' header
 * (immintrin.h) costs the C compiler about 0.2 s per module, more than such a kernel runs.
 */
export const VECTOR_MIN_ELEMENTS = 16384;

/** The vector C of a pass's varying nodes (`names`), reading the scalar values it does not compute as splats. */
export class VectorValues {
  readonly names = new Map<number, string>();
  /** The vector transcendentals the emitted code calls (their definitions: vectorMathDefinitions). */
  readonly math = new Set<ApproximationName>();

  /**
   * `scalar`: the C names of the nodes computed once per row (as scalars); `load`: the
   * vector load of a load node at the pass's index, or undefined where it is not contiguous.
   */
  constructor(
    private readonly g: KernelGraph,
    private readonly scalar: ReadonlyMap<number, string>,
    private readonly load: (n: Node) => string | undefined,
    private readonly prefix: string,
  ) {}

  /** Statements computing the varying nodes `ids` (operands first); index nodes are left to the loads that use them. */
  emit(ids: readonly number[], out: string[]): void {
    for (const id of ids) {
      const n = this.g.node(id);
      if (n.type === "idx" || n.type === "cond") continue;
      const name = `${this.prefix}${id}`;
      if (isPredLoad(n)) {
        // A mask for xk_vsel: each lane nonzero where the byte is.
        out.push(`const xk_vi ${name} = ${this.load(n) ?? decline("a pred load that is not contiguous along the row")};`);
        this.names.set(id, name);
        continue;
      }
      if (n.type !== "f32") decline(`${n.op} of ${n.type} along the row has no vector form`);
      out.push(`const xk_vf ${name} = ${this.expr(n)};`);
      this.names.set(id, name);
    }
  }

  /** Node id's value on sixteen lanes: computed here, or a scalar splat. */
  operand(id: number): string {
    const v = this.names.get(id);
    if (v !== undefined) return v;
    const s = this.scalar.get(id);
    if (s === undefined || this.g.node(id).type !== "f32") return decline(`node ${id} (${this.g.node(id).op}) has no vector value`);
    return `xk_vsplat(${s})`;
  }

  private expr(n: Node): string {
    const [a, b] = n.args;
    const x = (): string => this.operand(a!);
    const y = (): string => this.operand(b!);
    switch (n.op) {
      case "load": return this.load(n) ?? decline("a load that is not contiguous along the row");
      case "add": return `(${x()} + ${y()})`;
      case "sub": return `(${x()} - ${y()})`;
      case "mul": return `(${x()} * ${y()})`;
      case "div": return `(${x()} / ${y()})`;
      case "max": return `xk_vmaxf(${x()}, ${y()})`;
      case "min": return `xk_vminf(${x()}, ${y()})`;
      case "neg": return `(-${x()})`;
      case "abs": return `xk_vabs(${x()})`;
      case "sqrt": return `xk_vsqrt(${x()})`;
      case "rsqrt": return `(xk_vsplat(1.0f) / xk_vsqrt(${x()}))`;
      case "select": {
        // The mask must vary along the row (a loaded pred); a row's one pred stays scalar.
        const mask = isPredLoad(this.g.node(a!)) ? this.names.get(a!) : undefined;
        if (mask === undefined) return decline("a select by a pred that is not loaded along the row");
        return `xk_vsel(${mask}, ${y()}, ${this.operand(n.args[2]!)})`;
      }
      default: break;
    }
    const op = approximationName(n);
    if (op === undefined || !VECTOR_MATH.has(op)) return decline(`${n.op} has no vector form`);
    this.math.add(op);
    return `${cMathFunction(op, true)}(${x()})`;
  }
}

/** What a vector kernel needs before it: the helpers and the vector transcendentals `ops`, each guarded so that a module defines it once. */
export function vectorDefinitions(ops: Iterable<ApproximationName>): string[] {
  return [cVectorHelpers(), ...[...ops].sort().map((op) => {
    const guard = `XK_HAVE_V_${op.toUpperCase()}`;
    return `#ifndef ${guard}\n#define ${guard}\n${cVectorMathSource(op)}\n#endif`;
  })];
}
