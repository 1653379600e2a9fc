// lax control flow: whileLoop, foriLoop and cond, lowered to XLA's while (on one tuple
// of the loop state) and conditional. The loop body, loop condition and branches are
// traced into sub-computations of the enclosing jit's builder; arrays they close over
// become constants, and traced values of the enclosing program they close over are
// captured: passed in as extra loop values (unchanged by the body) or extra branch
// operands.
// Outside jit, a control-flow call is itself jitted (compiled once per signature).
// Differentiating or batching through control flow is not supported yet (a
// FrontendError says so).

import type { Computation } from "../ir/computation.js";
import { XlaBuilder, parameter, type XlaOp } from "../builder/xla_builder.js";
import { conditional, getTupleElement, tuple, whileLoop as whileOp } from "../builder/control.js";
import { tupleShape } from "../types/shape.js";
import { ArrayBase, Tracer, asArrayValue, avalString, innermostTrace, shapeOfAval, withTrace, type ArrayLike, type Aval } from "./core.js";
import { FrontendError } from "./errors.js";
import { jit, JitTrace, JitTracer } from "./jit.js";
import * as lax from "./lax.js";
import { treeFlatten, treeUnflatten, type TreeDef } from "./tree.js";

/**
 * Outside jit, a control-flow call runs as a jitted program, cached per user functions
 * (so a loop called again with the same functions and signature compiles nothing).
 */
const eagerPrograms = new WeakMap<object, WeakMap<object, (...args: never[]) => unknown>>();
function eager<F extends (...args: never[]) => unknown>(fns: readonly [object, object], run: F): F {
  let inner = eagerPrograms.get(fns[0]);
  if (inner === undefined) eagerPrograms.set(fns[0], inner = new WeakMap());
  let program = inner.get(fns[1]);
  if (program === undefined) inner.set(fns[1], program = jit(run));
  return program as F;
}

/** A jit trace of a sub-computation: values of the enclosing trace it meets become captures. */
class SubTrace extends JitTrace {
  /** The enclosing trace's values captured so far, each with its tracer here. */
  readonly captures = new Map<JitTracer, JitTracer>();

  constructor(level: number, builder: XlaBuilder, readonly parent: JitTrace, private readonly captureOp: (aval: Aval, index: number) => XlaOp) {
    super(level, builder);
  }

  override lift(x: Tracer): JitTracer {
    // A value of a trace further out is first captured by the enclosing one.
    const outer = x.trace === this.parent ? (x as JitTracer) : this.parent.lift(x);
    let t = this.captures.get(outer);
    if (t === undefined) {
      t = new JitTracer(this, this.captureOp(outer.aval, this.captures.size), outer.aval);
      this.captures.set(outer, t);
    }
    return t;
  }
}

/** The enclosing jit trace; outside every transformation, undefined; inside another transformation, a FrontendError. */
function enclosingJit(where: string): JitTrace | undefined {
  const trace = innermostTrace();
  if (trace === undefined) return undefined;
  if (trace instanceof JitTrace) return trace;
  throw new FrontendError(`${where}: control flow inside ${trace.kind} is not supported by the front end yet (only inside jit, or eagerly)`, where);
}

interface Traced {
  /** The computation (absent from a discovery pass). */
  readonly computation?: Computation;
  readonly outAvals: readonly Aval[];
  readonly outDef: TreeDef;
  /** The enclosing program's values the function closed over, in the order it met them. */
  readonly captures: readonly JitTracer[];
}

/** Where a sub-computation's parameters are: its inputs, then placeholders, its own captures, placeholders. */
interface Layout {
  readonly before: readonly Aval[];
  readonly own: readonly Aval[];
  readonly after: readonly Aval[];
  /** One tuple parameter rather than one parameter per value. */
  readonly tupleParameter: boolean;
  /** The root passes the parameters after the inputs on (a loop body's state) and is a tuple. */
  readonly passThrough: boolean;
}

/**
 * Traces `fn` on values of `inAvals` into a sub-computation of `parent`'s builder. A
 * discovery pass (no layout) only finds what `fn` closes over; the building pass, with
 * the layout of the whole state, matches the captures by order (a function meets its
 * captures in the same order each time it is traced).
 */
function traceSub(parent: JitTrace, name: string, inAvals: readonly Aval[], inDef: TreeDef, fn: (tree: unknown) => unknown, layout?: Layout): Traced {
  const b = parent.builder.createSubBuilder(name);
  const all = layout === undefined ? [...inAvals] : [...inAvals, ...layout.before, ...layout.own, ...layout.after];
  const tupleParam = layout?.tupleParameter === true ? parameter(b, 0, tupleShape(all.map(shapeOfAval))) : undefined;
  const params = tupleParam !== undefined ? all.map((_, i) => getTupleElement(tupleParam, i)) : all.map((a, i) => parameter(b, i, shapeOfAval(a)));
  const ownStart = inAvals.length + (layout?.before.length ?? 0);
  return withTrace((level) => new SubTrace(level, b, parent, (aval, k) => {
    if (layout === undefined) return parameter(b, inAvals.length + k, shapeOfAval(aval));
    const expected = layout.own[k];
    if (expected === undefined || !sameAvals([expected], [aval])) {
      throw new FrontendError(`${name}: the function closed over different values when traced again (is it deterministic?)`, name);
    }
    return params[ownStart + k]!;
  }), (trace) => {
    const ins = inAvals.map((a, i) => new JitTracer(trace, params[i]!, a));
    const [outLeaves, outDef] = treeFlatten(fn(treeUnflatten(inDef, ins)));
    const outs = outLeaves.map((o) => {
      const v = asArrayValue(o as ArrayLike, undefined, name);
      if (v instanceof JitTracer && v.trace === trace) return v;
      if (v instanceof Tracer) return trace.lift(v);
      return trace.pure(v as never);
    });
    const captures = [...trace.captures.keys()];
    const outAvals = outs.map((o) => o.aval);
    if (layout === undefined) return { outAvals, outDef, captures };
    const rootOps = [...outs.map((o) => o.op), ...(layout.passThrough ? params.slice(inAvals.length) : [])];
    const root = layout.passThrough || rootOps.length !== 1 ? tuple(b, rootOps) : rootOps[0]!;
    return { computation: b.build(root), outAvals, outDef, captures };
  });
}

const sameAvals = (a: readonly Aval[], b: readonly Aval[]): boolean =>
  a.length === b.length && a.every((x, i) => x.dtype === b[i]!.dtype && x.shape.join(",") === b[i]!.shape.join(","));

/** jax.lax.while_loop: `val = initVal; while (condFun(val)) val = bodyFun(val); return val`. */
export function whileLoop<T>(condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  const parent = enclosingJit("whileLoop");
  const [leaves, def] = treeFlatten(initVal);
  if (parent === undefined) return eager([condFun, bodyFun], (v: T) => whileLoop(condFun, bodyFun, v))(initVal) as T;
  const init = leaves.map((l) => {
    const v = asArrayValue(l as ArrayLike, undefined, "whileLoop");
    return v instanceof JitTracer && v.trace === parent ? v : v instanceof Tracer ? parent.lift(v) : parent.pure(v as never);
  });
  const avals = init.map((v) => v.aval);
  const condFn = (t: unknown): unknown => condFun(t as T);
  const bodyFn = (t: unknown): unknown => bodyFun(t as T);
  // The discovery passes find what each function closes over; the loop state is the
  // carried values, cond's captures, body's captures (each function ignores the other's).
  const condCaps = traceSub(parent, "cond", avals, def, condFn).captures.map((v) => v.aval);
  const bodyCaps = traceSub(parent, "body", avals, def, bodyFn).captures.map((v) => v.aval);
  const c = traceSub(parent, "cond", avals, def, condFn, { before: [], own: condCaps, after: bodyCaps, tupleParameter: true, passThrough: false });
  const bd = traceSub(parent, "body", avals, def, bodyFn, { before: condCaps, own: bodyCaps, after: [], tupleParameter: true, passThrough: true });
  const captures = [...c.captures, ...bd.captures];
  if (c.outAvals.length !== 1 || c.outAvals[0]!.dtype !== "bool" || c.outAvals[0]!.shape.length !== 0) {
    throw new FrontendError(`whileLoop: condFun must return a boolean scalar, got ${c.outAvals.map(avalString).join(", ")}`, "whileLoop", "condFun");
  }
  if (!sameAvals(bd.outAvals, avals)) {
    throw new FrontendError(`whileLoop: bodyFun must return values of its input's types: got ${bd.outAvals.map(avalString).join(", ")}, expected ${avals.map(avalString).join(", ")}`, "whileLoop", "bodyFun");
  }
  // XLA's While on one tuple of the state (the printer gives it StableHLO's variadic form, captures as values from outside).
  const loop = whileOp(c.computation!, bd.computation!, tuple(parent.builder, [...init, ...captures].map((v) => v.op)));
  const outs = avals.map((a, i) => new JitTracer(parent, getTupleElement(loop, i), a));
  return treeUnflatten(def, outs) as T;
}

/** jax.lax.fori_loop: `val = bodyFun(i, val)` for i from lower to upper - 1. */
export function foriLoop<T>(lower: ArrayLike, upper: ArrayLike, bodyFun: (i: ArrayBase, val: T) => T, initVal: T): T {
  const lo = asArrayValue(lower, "int32", "foriLoop");
  const hi = asArrayValue(upper, "int32", "foriLoop");
  const [, out] = whileLoop<[ArrayBase, T]>(
    ([i]) => lax.lt(i, hi),
    ([i, val]) => [lax.add(i, 1), bodyFun(i, val)],
    [lo, initVal],
  );
  return out;
}


/** jax.lax.cond: `pred ? trueFun(...operands) : falseFun(...operands)`, only the chosen branch running. */
export function cond(pred: ArrayLike, trueFun: (...operands: never[]) => unknown, falseFun: (...operands: never[]) => unknown, ...operands: unknown[]): unknown {
  const parent = enclosingJit("cond");
  const [leaves, def] = treeFlatten(operands);
  if (parent === undefined) return eager([trueFun, falseFun], (p: ArrayLike, ops: unknown[]) => cond(p, trueFun, falseFun, ...ops))(pred, operands);
  const p = asArrayValue(pred, undefined, "cond");
  if (p.dtype !== "bool" || p.ndim !== 0) throw new FrontendError(`cond: pred must be a boolean scalar, got ${avalString(p.aval)}`, "cond", "pred");
  const lifted = (v: ArrayBase): JitTracer => (v instanceof JitTracer && v.trace === parent ? v : v instanceof Tracer ? parent.lift(v) : parent.pure(v as never));
  const ins = leaves.map((l) => lifted(asArrayValue(l as ArrayLike, undefined, "cond")));
  const avals = ins.map((v) => v.aval);
  const trueFn = (t: unknown): unknown => trueFun(...(t as never[]));
  const falseFn = (t: unknown): unknown => falseFun(...(t as never[]));
  const trueCaps = traceSub(parent, "true", avals, def, trueFn).captures.map((v) => v.aval);
  const falseCaps = traceSub(parent, "false", avals, def, falseFn).captures.map((v) => v.aval);
  const t = traceSub(parent, "true", avals, def, trueFn, { before: [], own: trueCaps, after: [], tupleParameter: true, passThrough: false });
  const f = traceSub(parent, "false", avals, def, falseFn, { before: [], own: falseCaps, after: [], tupleParameter: true, passThrough: false });
  if (!sameAvals(t.outAvals, f.outAvals)) {
    throw new FrontendError(`cond: the branches return different types: ${t.outAvals.map(avalString).join(", ")} and ${f.outAvals.map(avalString).join(", ")}`, "cond");
  }
  // Each branch gets its own operand: the operands and what that branch closes over.
  const operand = (caps: readonly JitTracer[]): XlaOp => tuple(parent.builder, [...ins, ...caps].map((v) => v.op));
  const result = conditional(lifted(p).op, operand(t.captures), t.computation!, operand(f.captures), f.computation!);
  const outs = t.outAvals.length === 1 ? [new JitTracer(parent, result, t.outAvals[0]!)]
    : t.outAvals.map((a, i) => new JitTracer(parent, getTupleElement(result, i), a));
  return treeUnflatten(t.outDef, outs);
}
