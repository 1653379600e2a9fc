// jax.custom_jvp, jax.custom_vjp and jax.checkpoint (remat): functions whose derivative
// the user gives, or whose forward pass is recomputed in the backward pass rather than
// kept.
//
// Each runs its function as it is outside differentiation (eagerly, under jit or vmap).
// Under jvp (the innermost transformation), customJvp runs its rule on the primals and
// tangents. Under vjp (grad), the call is one node of the tape with a backward rule of
// its own: customVjp's bwd on fwd's residuals; customJvp's rule transposed (its tangent
// output is linear in the tangents, so its transpose is the VJP of that linear map);
// checkpoint's function differentiated again from its inputs, recomputing its forward
// pass. A customVjp function under jvp is an error, as in JAX. So is any of them under
// vmap or jit inside a differentiation (the rule would be bypassed): apply the
// transformation outside, or differentiate inside.

import { ArrayBase, Tracer, activeTraces, asArrayValue, innermostTrace, type ArrayLike, type Trace } from "./core.js";
import { JvpTrace, JvpTracer, VjpTrace, vjpCore } from "./autodiff.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { treeFlatten, treeUnflatten } from "./tree.js";

type Fn = (...args: never[]) => unknown;
type AnyFn = (...args: unknown[]) => unknown;

/** Which differentiation handles a call: the innermost transformation's, or none. */
function differentiation(where: string): JvpTrace | VjpTrace | undefined {
  const top = innermostTrace();
  if (top instanceof JvpTrace || top instanceof VjpTrace) return top;
  const below = activeTraces().find((t) => t instanceof JvpTrace || t instanceof VjpTrace);
  if (below !== undefined) {
    throw new FrontendError(`${where}: called under ${top!.kind} inside ${below.kind}; its rule would be bypassed there (not supported yet: apply ${top!.kind} outside the differentiation, or differentiate inside it)`, where);
  }
  return undefined;
}

/**
 * The differentiation that handles a customJvp call: the innermost one its arguments are
 * traced by (JAX's custom_jvp binds at its arguments' top trace), or none when they are
 * constants to every differentiation. So a rule that calls its function again on its
 * primals (tracers of an outer differentiation, under jvp of jvp or hessian) has that call
 * differentiated by the rule again, at the outer level, not through the function's body.
 */
function argumentsDifferentiation(where: string, leaves: readonly ArrayBase[]): JvpTrace | VjpTrace | undefined {
  if (differentiation(where) === undefined) return undefined;
  let top: Trace | undefined;
  for (const l of leaves) if (l instanceof Tracer && (top === undefined || l.trace.level > top.level)) top = l.trace;
  return top instanceof JvpTrace || top instanceof VjpTrace ? top : undefined;
}

/** The arguments' leaves as arrays, and a function of leaves calling `f` with the arguments' structure. */
function flatArgs(args: readonly unknown[], where: string): { leaves: ArrayBase[]; rebuild: (leaves: readonly ArrayBase[]) => unknown[] } {
  const [leaves, def] = treeFlatten(args);
  return { leaves: leaves.map((l) => asArrayValue(l as ArrayLike, undefined, where)), rebuild: (ls) => treeUnflatten(def, ls) as unknown[] };
}

/** The value a tracer of `trace` stands for one level down (its primal); other values are already below. */
const primalOf = (trace: JvpTrace | VjpTrace, x: ArrayBase): ArrayBase =>
  (x as { trace?: unknown }).trace === trace ? (x as unknown as { primal: ArrayBase }).primal : x;

const zerosLike = (x: ArrayBase): ArrayBase => lax.full(x.shape, 0, x.dtype);

/** Records `outTree` (computed from the primals) on the vjp tape with `rule` (output cotangent leaves to input cotangent leaves). */
function onTape(trace: VjpTrace, leaves: readonly ArrayBase[], outTree: unknown, rule: (cts: readonly ArrayBase[]) => (ArrayBase | null)[], where: string): unknown {
  const [outLeaves, outDef] = treeFlatten(outTree);
  const outs = outLeaves.map((o) => asArrayValue(o as ArrayLike, undefined, where));
  return treeUnflatten(outDef, trace.recordCustom(leaves, outs, rule));
}

export interface CustomJvpFunction<F extends Fn> {
  (...args: Parameters<F>): ReturnType<F>;
  /** Sets the rule: `jvp(primals, tangents)` returns `[primalOut, tangentOut]` (lists with one entry per argument, as JAX's defjvp). */
  defjvp(jvp: (primals: unknown[], tangents: unknown[]) => readonly [unknown, unknown]): CustomJvpFunction<F>;
}

/** jax.custom_jvp: `const f = customJvp(fun); f.defjvp((primals, tangents) => [out, tangentOut])`. */
export function customJvp<F extends Fn>(fun: F): CustomJvpFunction<F> {
  let rule: ((primals: unknown[], tangents: unknown[]) => readonly [unknown, unknown]) | undefined;
  const call = (...args: unknown[]): unknown => {
    const { leaves, rebuild } = flatArgs(args, "customJvp");
    const trace = argumentsDifferentiation("customJvp", leaves);
    if (trace === undefined) return (fun as unknown as AnyFn)(...args);
    if (rule === undefined) throw new FrontendError("customJvp: differentiated before defjvp gave its rule", "customJvp", "defjvp");
    const jvpRule = rule;
    const primals = leaves.map((l) => primalOf(trace, l));
    if (trace instanceof JvpTrace) {
      const tangents = leaves.map((l, i) => (l instanceof JvpTracer && l.trace === trace ? l.tangent : null) ?? zerosLike(primals[i]!));
      const [out, tangentOut] = jvpRule(rebuild(primals), rebuild(tangents));
      const [outLeaves, outDef] = treeFlatten(out);
      const [tLeaves] = treeFlatten(tangentOut);
      if (tLeaves.length !== outLeaves.length) throw new FrontendError(`customJvp: the rule returned ${tLeaves.length} tangent leaves for ${outLeaves.length} output leaves`, "customJvp", "defjvp");
      return treeUnflatten(outDef, outLeaves.map((o, i) => new JvpTracer(trace, asArrayValue(o as ArrayLike), asArrayValue(tLeaves[i] as ArrayLike))));
    }
    // Reverse mode: the transpose of the rule's (linear) tangent map, as the VJP of that map at zero tangents.
    const out = (fun as unknown as AnyFn)(...rebuild(primals));
    return onTape(trace, leaves, out, (cts) => {
      const tangentMap = (...ts: ArrayBase[]): unknown => jvpRule(rebuild(primals), rebuild(ts))[1];
      return vjpCore(tangentMap as Fn, primals.map(zerosLike), false).pullback(cts) as ArrayBase[];
    }, "customJvp");
  };
  const f = call as unknown as CustomJvpFunction<F>;
  f.defjvp = (jvp) => {
    rule = jvp;
    return f;
  };
  return f;
}

export interface CustomVjpFunction<F extends Fn> {
  (...args: Parameters<F>): ReturnType<F>;
  /**
   * Sets the rule: `fwd(...args)` returns `[out, residuals]`, `bwd(residuals, outCotangent)`
   * returns one cotangent per argument (a list), as JAX's defvjp.
   */
  defvjp(fwd: (...args: never[]) => readonly [unknown, unknown], bwd: (residuals: never, cotangent: never) => readonly unknown[]): CustomVjpFunction<F>;
}

/** jax.custom_vjp: `const f = customVjp(fun); f.defvjp(fwd, bwd)`. */
export function customVjp<F extends Fn>(fun: F): CustomVjpFunction<F> {
  let rule: { fwd: (...args: unknown[]) => readonly [unknown, unknown]; bwd: (residuals: unknown, cotangent: unknown) => readonly unknown[] } | undefined;
  const call = (...args: unknown[]): unknown => {
    const trace = differentiation("customVjp");
    if (trace === undefined) return (fun as unknown as AnyFn)(...args);
    if (trace instanceof JvpTrace) throw new FrontendError("customVjp: a customVjp function cannot be differentiated in forward mode (jvp, jacfwd), as in JAX; give it a customJvp rule instead", "customVjp");
    if (rule === undefined) throw new FrontendError("customVjp: differentiated before defvjp gave its rule", "customVjp", "defvjp");
    const { fwd, bwd } = rule;
    const { leaves, rebuild } = flatArgs(args, "customVjp");
    const [out, residuals] = fwd(...rebuild(leaves.map((l) => primalOf(trace, l))));
    const [, outDef] = treeFlatten(out);
    return onTape(trace, leaves, out, (cts) => {
      const inCts = bwd(residuals, treeUnflatten(outDef, cts));
      if (!Array.isArray(inCts) || inCts.length !== args.length) throw new FrontendError(`customVjp: bwd must return a list of ${args.length} cotangent(s), one per argument`, "customVjp", "bwd");
      const [ctLeaves] = treeFlatten(inCts);
      if (ctLeaves.length !== leaves.length) throw new FrontendError(`customVjp: bwd returned ${ctLeaves.length} cotangent leaves for ${leaves.length} argument leaves`, "customVjp", "bwd");
      return ctLeaves.map((c) => (c === null || c === undefined ? null : asArrayValue(c as ArrayLike)));
    }, "customVjp");
  };
  const f = call as unknown as CustomVjpFunction<F>;
  f.defvjp = (fwd, bwd) => {
    rule = { fwd: fwd as (...args: unknown[]) => readonly [unknown, unknown], bwd: bwd as (r: unknown, c: unknown) => readonly unknown[] };
    return f;
  };
  return f;
}

/**
 * jax.checkpoint (jax.remat): `f` unchanged, except that under grad its intermediate
 * values are not kept for the backward pass but recomputed from its inputs there.
 */
export function checkpoint<F extends Fn>(f: F): F {
  return ((...args: unknown[]) => {
    const trace = differentiation("checkpoint");
    if (!(trace instanceof VjpTrace)) return (f as unknown as AnyFn)(...args);
    const { leaves, rebuild } = flatArgs(args, "checkpoint");
    const primals = leaves.map((l) => primalOf(trace, l));
    const run = (...ls: ArrayBase[]): unknown => (f as unknown as AnyFn)(...rebuild(ls));
    return onTape(trace, leaves, run(...primals), (cts) => vjpCore(run as Fn, primals, false).pullback(cts) as ArrayBase[], "checkpoint");
  }) as unknown as F;
}

export const remat = checkpoint;
