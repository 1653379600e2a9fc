// lax control flow: whileLoop, foriLoop, cond, switch, scan and map.
//
// Inside jit they lower to XLA's while (on one tuple of the loop state) and conditional
// (with a predicate, or a branch index for switch); scan is a while loop over the
// leading axis of its inputs, reading with dynamic_slice and writing its stacked
// outputs with dynamic_update_slice. The loop body, loop condition and branches are
// traced into sub-computations of the enclosing jit's builder; arrays they close over
// become constants, and traced values of the enclosing program they close over are
// captured: passed in as extra loop values (unchanged by the body) or extra branch
// operands. Outside jit, a control-flow call is itself jitted (compiled once per
// signature).
//
// Under jvp, vjp (grad) and vmap the functions are called on the transformation's
// values instead, so the transformation sees their primitives, as a Python loop would
// run under JAX's transformations:
//   - cond and switch run the chosen branch when the predicate (index) is concrete and
//     not batched; otherwise (a batched predicate under vmap, or a traced one inside
//     jit) every branch runs and the results are selected, as JAX's batching rule for a
//     batched predicate does.
//   - scan, and foriLoop with concrete bounds (a static trip count), unroll: one call of
//     the body per step.
//   - whileLoop runs while its predicate's concrete value holds (under vmap: while it
//     holds for some batch element, the others keeping their state, as JAX's batching
//     rule does). A predicate traced inside jit under jvp or vmap (nested too) stages one
//     XLA while: over the primals and tangents (jvpWhile), over the batched state
//     (batchWhile); under vjp inside jit it is a FrontendError.

import type { Computation } from "../ir/computation.js";
import { XlaBuilder, parameter, type XlaOp } from "../builder/xla_builder.js";
import { conditional, conditionalIndexed, getTupleElement, tuple, whileLoop as whileOp } from "../builder/control.js";
import { tupleShape } from "../types/shape.js";
import { ArrayBase, Trace, Tracer, activeTraces, asArrayValue, avalString, concreteOf, innermostTrace, shapeOfAval, withTrace, type ArrayLike, type Aval } from "./core.js";
import { JvpTrace, JvpTracer } from "./autodiff.js";
import { BatchTrace, BatchTracer } from "./vmap.js";
import { moveBatchToFront } from "./primitives.js";
import { isInexact, isIntegral } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { jit, JitTrace, JitTracer } from "./jit.js";
import * as lax from "./lax.js";
import { treeDefString, treeFlatten, treeMap, treeUnflatten, type TreeDef } from "./tree.js";

/**
 * Outside jit, a control-flow call runs as a jitted program, cached per user functions
 * and static options (so a loop called again with the same functions and signature
 * compiles nothing). The cache is a trie over the key's parts; functions are held
 * weakly.
 */
interface EagerNode {
  readonly weak: WeakMap<object, EagerNode>;
  readonly strong: Map<unknown, EagerNode>;
  program?: (...args: never[]) => unknown;
}
const newNode = (): EagerNode => ({ weak: new WeakMap(), strong: new Map() });
const eagerPrograms = newNode();
function eagerKeyed<F extends (...args: never[]) => unknown>(key: readonly unknown[], run: F): F {
  let node = eagerPrograms;
  for (const part of key) {
    const isObject = (typeof part === "object" && part !== null) || typeof part === "function";
    let next = isObject ? node.weak.get(part as object) : node.strong.get(part);
    if (next === undefined) {
      next = newNode();
      if (isObject) node.weak.set(part as object, next);
      else node.strong.set(part, next);
    }
    node = next;
  }
  return (node.program ??= jit(run)) as F;
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

/** Where a control-flow call runs: eagerly (outside every transformation), staged into a jit trace, or under jvp, vjp or vmap. */
function placement(): "eager" | "transformed" | JitTrace {
  const trace = innermostTrace();
  if (trace === undefined) return "eager";
  return trace instanceof JitTrace ? trace : "transformed";
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

/** `v` as a value of the jit trace `parent`. */
const lifted = (parent: JitTrace, v: ArrayBase): JitTracer =>
  v instanceof JitTracer && v.trace === parent ? v : v instanceof Tracer ? parent.lift(v) : parent.pure(v as never);

/** A scalar's concrete elements, or a FrontendError naming what control flow needs it for. */
function concreteElements(x: ArrayBase, where: string, what: string): { values: boolean[]; batched: boolean } {
  const c = concreteOf(x);
  if (c === undefined) {
    throw new FrontendError(`${where}: the ${what} is traced inside jit under ${innermostTrace()?.kind ?? "a transformation"}; ` +
      "this is not supported yet (use foriLoop with static bounds, or scan)", where, what);
  }
  return { values: [...(c.value.dataSync() as Iterable<unknown>)].map((v) => v !== 0 && v !== false && v !== 0n), batched: c.batched };
}

/** Each leaf of `onTrue` where the scalar predicate holds, of `onFalse` elsewhere (the trees have one structure and leaf types). */
function selectTrees(where: string, pred: ArrayBase, onFalse: unknown, onTrue: unknown): unknown {
  const [fl, fdef] = treeFlatten(onFalse);
  const [tl, tdef] = treeFlatten(onTrue);
  const fa = fl.map((l) => asArrayValue(l as ArrayLike, undefined, where));
  const ta = tl.map((l) => asArrayValue(l as ArrayLike, undefined, where));
  if (treeDefString(fdef) !== treeDefString(tdef) || !sameAvals(fa.map((a) => a.aval), ta.map((a) => a.aval))) {
    throw new FrontendError(`${where}: the branches return different types: ${ta.map((a) => avalString(a.aval)).join(", ")} and ${fa.map((a) => avalString(a.aval)).join(", ")}`, where);
  }
  return treeUnflatten(fdef, fa.map((f, i) => lax.selectN(lax.broadcastInDim(pred, f.shape, []), f, ta[i]!)));
}

/** jax.lax.while_loop: `val = initVal; while (condFun(val)) val = bodyFun(val); return val`. */
export function whileLoop<T>(condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  const where = placement();
  if (where === "eager") return eagerKeyed(["while", condFun, bodyFun], (v: T) => whileLoop(condFun, bodyFun, v))(initVal) as T;
  if (where === "transformed") return transformedWhile(condFun, bodyFun, initVal);
  return stagedWhile(where, condFun, bodyFun, initVal);
}

/** whileLoop staged into the jit trace `parent` as XLA's while. */
function stagedWhile<T>(parent: JitTrace, condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  const [leaves, def] = treeFlatten(initVal);
  const init = leaves.map((l) => lifted(parent, asArrayValue(l as ArrayLike, undefined, "whileLoop")));
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
  checkPredicate(c.outAvals, "whileLoop", "condFun");
  if (!sameAvals(bd.outAvals, avals)) {
    throw new FrontendError(`whileLoop: bodyFun must return values of its input's types: got ${bd.outAvals.map(avalString).join(", ")}, expected ${avals.map(avalString).join(", ")}`, "whileLoop", "bodyFun");
  }
  // XLA's While on one tuple of the state (the printer gives it StableHLO's variadic form, captures as values from outside).
  const loop = whileOp(c.computation!, bd.computation!, tuple(parent.builder, [...init, ...captures].map((v) => v.op)));
  const outs = avals.map((a, i) => new JitTracer(parent, getTupleElement(loop, i), a));
  return treeUnflatten(def, outs) as T;
}

function checkPredicate(avals: readonly Aval[], where: string, what: string): void {
  if (avals.length !== 1 || avals[0]!.dtype !== "bool" || avals[0]!.shape.length !== 0) {
    throw new FrontendError(`${where}: ${what} must return a boolean scalar, got ${avals.map(avalString).join(", ")}`, where, what);
  }
}

/**
 * whileLoop under jvp, vjp or vmap: a JS loop on the predicate's concrete value (see the
 * header); a predicate traced inside jit under jvp (forward mode) is jvpWhile's.
 */
function transformedWhile<T>(condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  let val = initVal;
  for (;;) {
    const pred = asArrayValue(condFun(val), undefined, "whileLoop");
    checkPredicate([pred.aval], "whileLoop", "condFun");
    // The steps so far ran on concrete predicates; the rest of the loop is staged from the current state.
    const top = innermostTrace();
    if (concreteOf(pred) === undefined && (top instanceof JvpTrace || top instanceof BatchTrace)) return whileUnder(top, condFun, bodyFun, val);
    const { values } = concreteElements(pred, "whileLoop", "predicate");
    if (!values.includes(true)) return val;
    const next = bodyFun(val);
    val = values.every((v) => v) ? next : selectTrees("whileLoop", pred, val, next) as T;
  }
}

/**
 * whileLoop under the jvp trace `trace` when its predicate is traced (inside jit): JAX's
 * JVP of a while loop, one loop (at the level below) over the primals and the tangents
 * of the float values, the predicate reading the primals only. The body runs the user's
 * bodyFun on values of `trace` made of the loop's primal and tangent values, so the
 * primitives it applies get their JVP rules as anywhere else, and values it closes over
 * (with their tangents) reach the loop as captures. The loop below is staged into the
 * jit trace, or is itself a jvpWhile for a jvp nested under this one.
 */
function jvpWhile<T>(trace: JvpTrace, condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  const [leaves, def] = treeFlatten(initVal);
  const state = leaves.map((l) => {
    const v = asArrayValue(l as ArrayLike, undefined, "whileLoop");
    return v instanceof JvpTracer && v.trace === trace ? v : new JvpTracer(trace, v, null);
  });
  // The float values carry tangents (zeros where none came in); the others only primals.
  const withTangent = state.map((v) => isInexact(v.dtype));
  const tangentOf = (v: JvpTracer): ArrayBase => v.tangent ?? lax.full(v.shape, 0, v.dtype);
  const pack = (vs: readonly JvpTracer[]): ArrayBase[] => [...vs.map((v) => v.primal), ...vs.filter((_, i) => withTangent[i]).map(tangentOf)];
  const unpack = (flat: readonly ArrayBase[]): JvpTracer[] => {
    let next = state.length;
    return state.map((_, i) => new JvpTracer(trace, flat[i]!, withTangent[i] ? flat[next++]! : null));
  };
  const asTracer = (o: unknown): JvpTracer => {
    const v = asArrayValue(o as ArrayLike, undefined, "whileLoop");
    return v instanceof JvpTracer && v.trace === trace ? v : new JvpTracer(trace, v, null);
  };
  const lowerCond = (flat: ArrayBase[]): ArrayLike => {
    const pred = asTracer(condFun(treeUnflatten(def, unpack(flat)) as T));
    return pred.primal;
  };
  const lowerBody = (flat: ArrayBase[]): ArrayBase[] => {
    const [outs, outDef] = treeFlatten(bodyFun(treeUnflatten(def, unpack(flat)) as T));
    if (treeDefString(outDef) !== treeDefString(def)) throw new FrontendError("whileLoop: bodyFun must return a value of its input's structure", "whileLoop", "bodyFun");
    return pack(outs.map(asTracer));
  };
  return treeUnflatten(def, unpack(whileBelow(trace, lowerCond, lowerBody, pack(state)))) as T;
}

/**
 * whileLoop under the vmap trace `trace` when its predicate is traced (inside jit), as
 * JAX's batching rule: one loop (at the level below) over the state with the batch
 * dimension in front of every value. With a predicate that is not batched the body is
 * the user's on the batched values; with a batched one the loop runs while the
 * predicate holds for some element, and the body keeps the old state of the others.
 */
function batchWhile<T>(trace: BatchTrace, condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  const size = trace.axisSize;
  const [leaves, def] = treeFlatten(initVal);
  const asTracer = (o: unknown): BatchTracer => {
    const v = asArrayValue(o as ArrayLike, undefined, "whileLoop");
    return v instanceof BatchTracer && v.trace === trace ? v : new BatchTracer(trace, v, null);
  };
  const front = (v: BatchTracer): ArrayBase => moveBatchToFront(v.value, v.batchDim, size);
  const wrap = (flat: readonly ArrayBase[]): T => treeUnflatten(def, flat.map((v) => new BatchTracer(trace, v, 0))) as T;
  // The predicate of each element ([size] bools), or a scalar where it is one for all.
  const predicateOf = (val: T): ArrayBase => {
    const p = asTracer(condFun(val));
    return p.batchDim === null ? p.value : front(p);
  };
  const lowerCond = (flat: ArrayBase[]): ArrayLike => {
    const p = predicateOf(wrap(flat));
    return p.ndim === 0 ? p : lax.reduceOr(p, [0]);
  };
  const lowerBody = (flat: ArrayBase[]): ArrayBase[] => {
    const val = wrap(flat);
    const [outs, outDef] = treeFlatten(bodyFun(val));
    if (treeDefString(outDef) !== treeDefString(def)) throw new FrontendError("whileLoop: bodyFun must return a value of its input's structure", "whileLoop", "bodyFun");
    const next = outs.map((o) => front(asTracer(o)));
    const p = predicateOf(val);
    if (p.ndim === 0) return next;
    return next.map((n, i) => lax.selectN(lax.broadcastInDim(p, n.shape, [0]), flat[i]!, n));
  };
  const state = leaves.map((l) => front(asTracer(l)));
  return wrap(whileBelow(trace, lowerCond, lowerBody, state));
}

/** The loop one level below `trace` (jvpWhile's and batchWhile's): staged into jit, or transformed again by the trace below. */
function whileBelow(trace: Trace, condFun: (val: ArrayBase[]) => ArrayLike, bodyFun: (val: ArrayBase[]) => ArrayBase[], state: ArrayBase[]): ArrayBase[] {
  const below = traceBelow(trace);
  if (below instanceof JitTrace) return stagedWhile(below, condFun, bodyFun, state);
  if (below instanceof JvpTrace || below instanceof BatchTrace) return whileUnder(below, condFun, bodyFun, state);
  throw new FrontendError(`whileLoop: a predicate traced inside jit under ${trace.kind} and ${below?.kind ?? "no other transformation"} is not supported ` +
    "(forward mode and vmap are; use foriLoop with static bounds, or scan)", "whileLoop", "predicate");
}

/** whileLoop under a jvp or vmap trace with a traced predicate. */
function whileUnder<T>(trace: JvpTrace | BatchTrace, condFun: (val: T) => ArrayLike, bodyFun: (val: T) => T, initVal: T): T {
  return trace instanceof JvpTrace ? jvpWhile(trace, condFun, bodyFun, initVal) : batchWhile(trace, condFun, bodyFun, initVal);
}

/** The transformation just below `trace` on the stack (the one its values' primals belong to, or an outer one). */
function traceBelow(trace: Trace): Trace | undefined {
  const stack = activeTraces();
  const i = stack.indexOf(trace);
  return i > 0 ? stack[i - 1] : undefined;
}

/** A concrete JS integer of a bound, or undefined where it is traced. */
function staticBound(x: ArrayLike): number | undefined {
  if (typeof x === "number") return x;
  const a = asArrayValue(x, undefined, "foriLoop");
  const c = concreteOf(a);
  return c === undefined || c.batched || a.ndim !== 0 ? undefined : Number(c.value.item());
}

/** jax.lax.fori_loop: `val = bodyFun(i, val)` for i from lower to upper - 1. */
export function foriLoop<T>(lower: ArrayLike, upper: ArrayLike, bodyFun: (i: ArrayBase, val: T) => T, initVal: T): T {
  const [lo, hi] = [staticBound(lower), staticBound(upper)];
  if (placement() === "transformed" && lo !== undefined && hi !== undefined) {
    // A static trip count: unrolled, as JAX turns it into a scan.
    let val = initVal;
    for (let i = lo; i < hi; i++) val = bodyFun(asArrayValue(i, "int32", "foriLoop"), val);
    return val;
  }
  const start = asArrayValue(lower, "int32", "foriLoop");
  const stop = asArrayValue(upper, "int32", "foriLoop");
  const [, out] = whileLoop<[ArrayBase, T]>(
    ([i]) => lax.lt(i, stop),
    ([i, val]) => [lax.add(i, 1), bodyFun(i, val)],
    [start, initVal],
  );
  return out;
}

type Branch = (...operands: never[]) => unknown;

/** jax.lax.cond: `pred ? trueFun(...operands) : falseFun(...operands)`, only the chosen branch running. */
export function cond(pred: ArrayLike, trueFun: Branch, falseFun: Branch, ...operands: unknown[]): unknown {
  const where = placement();
  if (where === "eager") return eagerKeyed(["cond", trueFun, falseFun], (p: ArrayLike, ops: unknown[]) => cond(p, trueFun, falseFun, ...ops))(pred, operands);
  const p = asArrayValue(pred, undefined, "cond");
  if (p.dtype !== "bool" || p.ndim !== 0) throw new FrontendError(`cond: pred must be a boolean scalar, got ${avalString(p.aval)}`, "cond", "pred");
  return branches("cond", where, p, [falseFun, trueFun], operands);
}

/** jax.lax.switch: `branches[index](...operands)`, the index clamped to the branches (as JAX's). */
function switchBranches(index: ArrayLike, branchFuns: readonly Branch[], ...operands: unknown[]): unknown {
  if (branchFuns.length === 0) throw new FrontendError("switch: needs at least one branch", "switch", "branches");
  const where = placement();
  if (where === "eager") {
    return eagerKeyed(["switch", ...branchFuns], (i: ArrayLike, ops: unknown[]) => switchBranches(i, branchFuns, ...ops))(index, operands);
  }
  const i = asArrayValue(index, undefined, "switch");
  if (!isIntegral(i.dtype) || i.ndim !== 0) throw new FrontendError(`switch: index must be an integer scalar, got ${avalString(i.aval)}`, "switch", "index");
  const clamped = lax.max(lax.min(lax.convertElementType(i, "int32"), branchFuns.length - 1), 0);
  return branches("switch", where, clamped, branchFuns, operands);
}
export { switchBranches as switch };

/** The branch `selector` picks (a bool for cond, an in-range int32 for switch), run as the placement allows. */
function branches(name: string, where: "transformed" | JitTrace, selector: ArrayBase, fns: readonly Branch[], operands: unknown[]): unknown {
  const call = (k: number): unknown => fns[k]!(...(operands as never[]));
  if (fns.length === 1) return call(0);
  if (where === "transformed") {
    const c = concreteOf(selector);
    if (c !== undefined && !c.batched) return call(Number(c.value.item()));
    const index = selector.dtype === "bool" ? lax.convertElementType(selector, "int32") : selector;
    let out = call(0);
    for (let k = 1; k < fns.length; k++) out = selectTrees(name, lax.eq(index, k), out, call(k));
    return out;
  }
  const parent = where;
  const [leaves, def] = treeFlatten(operands);
  const ins = leaves.map((l) => lifted(parent, asArrayValue(l as ArrayLike, undefined, name)));
  const avals = ins.map((v) => v.aval);
  const names = selector.dtype === "bool" ? ["false", "true"] : fns.map((_, k) => `branch${k}`);
  const wrapped = fns.map((f) => (t: unknown): unknown => f(...(t as never[])));
  const traced = wrapped.map((f, k) => {
    const caps = traceSub(parent, names[k]!, avals, def, f).captures.map((v) => v.aval);
    return traceSub(parent, names[k]!, avals, def, f, { before: [], own: caps, after: [], tupleParameter: true, passThrough: false });
  });
  const first = traced[0]!;
  for (const t of traced) {
    if (!sameAvals(t.outAvals, first.outAvals) || treeDefString(t.outDef) !== treeDefString(first.outDef)) {
      throw new FrontendError(`${name}: the branches return different types: ${first.outAvals.map(avalString).join(", ")} and ${t.outAvals.map(avalString).join(", ")}`, name);
    }
  }
  // Each branch gets its own operand: the operands and what that branch closes over.
  const operand = (caps: readonly JitTracer[]): XlaOp => tuple(parent.builder, [...ins, ...caps].map((v) => v.op));
  const sel = lifted(parent, selector).op;
  const result = selector.dtype === "bool"
    ? conditional(sel, operand(traced[1]!.captures), traced[1]!.computation!, operand(first.captures), first.computation!)
    : conditionalIndexed(sel, traced.map((t) => t.computation!), traced.map((t) => operand(t.captures)));
  const outs = first.outAvals.length === 1 ? [new JitTracer(parent, result, first.outAvals[0]!)]
    : first.outAvals.map((a, i) => new JitTracer(parent, getTupleElement(result, i), a));
  return treeUnflatten(first.outDef, outs);
}

export interface ScanOptions {
  /** The number of steps (needed when xs is null; otherwise it must equal the leading size of xs's arrays). */
  readonly length?: number;
  /** Run from the last element of xs to the first (the stacked ys keep xs's order). */
  readonly reverse?: boolean;
  /**
   * Steps per iteration of the loop inside jit (default 1), as JAX's: k runs k steps per
   * iteration of XLA's while (the steps left over by length % k after it, unrolled);
   * true unrolls the whole scan, false is 1. Under grad, jvp and vmap every scan is
   * unrolled already, so there it changes nothing.
   */
  readonly unroll?: number | boolean;
}

/**
 * jax.lax.scan: `carry = init; for each x of xs (along the leading axis): [carry, y] =
 * f(carry, x)`; returns `[carry, ys]`, the ys stacked along a new leading axis.
 */
export function scan<C, X, Y>(f: (carry: C, x: X) => readonly [C, Y], init: C, xs: X | null = null, options: ScanOptions = {}): [C, Y] {
  const [xLeaves, xDef] = treeFlatten(xs);
  const xArrays = xLeaves.map((l) => asArrayValue(l as ArrayLike, undefined, "scan"));
  const lengths = new Set(xArrays.map((a) => (a.ndim === 0 ? -1 : a.shape[0]!)));
  if (lengths.has(-1)) throw new FrontendError("scan: every array of xs needs a leading axis to scan over (got a scalar)", "scan", "xs");
  if (options.length !== undefined) lengths.add(options.length);
  if (lengths.size !== 1) {
    throw new FrontendError(lengths.size === 0 ? "scan: xs is null; give the number of steps as { length }" : `scan: the leading sizes of xs (and length) differ: ${[...lengths].join(", ")}`, "scan", "xs");
  }
  const length = [...lengths][0]!;
  if (!Number.isInteger(length) || length < 0) throw new FrontendError(`scan: length ${length} is not a non-negative integer`, "scan", "length");
  const reverse = options.reverse ?? false;
  const unrollOption = options.unroll ?? 1;
  if (typeof unrollOption !== "boolean" && (!Number.isInteger(unrollOption) || unrollOption < 1)) {
    throw new FrontendError(`scan: unroll must be a positive integer or a boolean, got ${String(unrollOption)}`, "scan", "unroll");
  }
  const unroll = unrollOption === true ? Math.max(length, 1) : unrollOption === false ? 1 : unrollOption;
  const where = placement();
  if (where === "eager") {
    return eagerKeyed(["scan", f, length, reverse, unroll], (c: C, x: X) => scan(f, c, x, { length, reverse, unroll }))(init, xs as X) as [C, Y];
  }
  const step = (carry: C, k: ArrayBase | number): readonly [C, Y] => {
    const x = treeUnflatten(xDef, xArrays.map((a) => (typeof k === "number" ? a.index(k) : lax.reshape(lax.dynamicSlice(a, [k, ...a.shape.slice(1).map(() => 0)], [1, ...a.shape.slice(1)]), a.shape.slice(1)))));
    const out = f(carry, x as X);
    if (!globalThis.Array.isArray(out) || out.length !== 2) throw new FrontendError("scan: f must return [carry, y]", "scan", "f");
    return out;
  };
  const order = Array.from({ length }, (_, i) => (reverse ? length - 1 - i : i));
  if (where === "transformed" || length === 0 || unroll >= length) {
    // Unrolled (under jvp, vjp and vmap; when unroll covers every step; and with no steps, where f runs once for the shapes of ys).
    let carry = init;
    const ys: unknown[] = [];
    for (const k of order) [carry, ys[k]] = step(carry, k);
    if (length === 0) return [init, treeMap((y) => lax.full([0, ...asArrayValue(y as ArrayLike).shape], 0, asArrayValue(y as ArrayLike).dtype), scanProbe(f, init, xDef, xArrays)) as Y];
    const stack = (...leaves: unknown[]): ArrayBase => lax.concatenate(leaves.map((l) => {
      const a = asArrayValue(l as ArrayLike, undefined, "scan");
      return lax.reshape(a, [1, ...a.shape]);
    }), 0);
    return [carry, treeMap(stack, ys[0], ...ys.slice(1)) as Y];
  }
  // Inside jit: a while loop over blocks of `unroll` steps; the ys are written into buffers of their stacked shape.
  const probe = scanProbe(f, init, xDef, xArrays);
  const [yLeaves, yDef] = treeFlatten(probe);
  const buffers = yLeaves.map((y) => lax.full([length, ...asArrayValue(y as ArrayLike).shape], 0, asArrayValue(y as ArrayLike).dtype));
  /** Step number `p` (traced or static) on the carry, its y written into the buffers at its element of xs. */
  const stepAt = (p: ArrayBase | number, c: C, bufs: ArrayBase[]): [C, ArrayBase[]] => {
    const k = typeof p === "number" ? (reverse ? length - 1 - p : p) : reverse ? lax.sub(length - 1, p) : p;
    const [next, y] = step(c, k);
    const [leaves] = treeFlatten(y);
    const written = bufs.map((b, j) => {
      const leaf = asArrayValue(leaves[j] as ArrayLike, b.dtype, "scan");
      return lax.dynamicUpdateSlice(b, lax.reshape(leaf, [1, ...leaf.shape]), [k, ...leaf.shape.map(() => 0)]);
    });
    return [next, written];
  };
  const blocks = Math.floor(length / unroll);
  const [, looped, loopedBuffers] = whileLoop<[ArrayBase, C, ArrayBase[]]>(
    ([i]) => lax.lt(i, blocks),
    ([i, c, bufs]) => {
      let state: [C, ArrayBase[]] = [c, bufs];
      for (let j = 0; j < unroll; j++) state = stepAt(unroll === 1 ? i : lax.add(lax.mul(i, unroll), j), state[0], state[1]);
      return [lax.add(i, 1), state[0], state[1]];
    },
    [asArrayValue(0, "int32"), init, buffers],
  );
  let state: [C, ArrayBase[]] = [looped, loopedBuffers];
  for (let p = blocks * unroll; p < length; p++) state = stepAt(p, state[0], state[1]);
  return [state[0], treeUnflatten(yDef, state[1]) as Y];
}

/** The ys of f at zeros of the shape of one element of xs (only their shapes and dtypes are used). */
function scanProbe<C, X, Y>(f: (carry: C, x: X) => readonly [C, Y], init: C, xDef: TreeDef, xArrays: readonly ArrayBase[]): Y {
  return f(init, treeUnflatten(xDef, xArrays.map((a) => lax.full(a.shape.slice(1), 0, a.dtype))) as X)[1];
}

/** jax.lax.map: `f` applied to each element of xs along the leading axis, the results stacked. */
export function map<X, Y>(f: (x: X) => Y, xs: X): Y {
  // Eagerly keyed by f itself (the scan's step function below is new on every call).
  if (placement() === "eager") return eagerKeyed(["map", f], (v: X) => map(f, v))(xs) as Y;
  return scan((_c: null, x: X) => [null, f(x)] as const, null, xs)[1];
}
