// Automatic differentiation: forward mode (jvp) with the primitive table's JVP rules,
// reverse mode (vjp) by recording the primitives applied to the inputs on a tape and
// running their VJP rules backwards, and grad, valueAndGrad, jacfwd, jacrev and hessian
// by composition. The rules bind primitives, so derivatives of derivatives, derivatives
// under jit and per-example gradients under vmap work by nesting the transformations.
//
// Only floating-point values carry derivatives: an integer or boolean result (a
// comparison, argmax, a cast to int) has a zero tangent and cotangent, as in JAX.

import { ArrayBase, Trace, Tracer, asArrayValue, bind, concreteOf, withTrace, type ArrayLike, type Aval } from "./core.js";
import { dtypeKind, isInexact } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { PRIMITIVES, type NoDerivative, type PrimitiveName, type PrimitiveParams } from "./primitives.js";
import { treeFlatten, treeUnflatten } from "./tree.js";
import { vmap } from "./vmap.js";

const zerosLike = (x: ArrayBase): ArrayBase => lax.full(x.shape, 0, x.dtype);

function unsupported(name: PrimitiveName, rule: NoDerivative, mode: string): FrontendError {
  const why = typeof rule === "object" ? rule.unsupported : "";
  return new FrontendError(`${mode} of ${name}: ${why}`, name);
}

// ---- forward mode

export class JvpTracer extends Tracer {
  constructor(readonly trace: JvpTrace, readonly primal: ArrayBase, readonly tangent: ArrayBase | null) {
    super();
  }

  get aval(): Aval {
    return this.primal.aval;
  }

  override concrete(): ReturnType<Tracer["concrete"]> {
    return concreteOf(this.primal);
  }
}

export class JvpTrace extends Trace<JvpTracer> {
  readonly kind = "jvp";

  pure(x: ArrayBase): JvpTracer {
    return new JvpTracer(this, x, null);
  }

  lift(x: Tracer): JvpTracer {
    return this.pure(x);
  }

  process<N extends PrimitiveName>(name: N, args: readonly JvpTracer[], params: PrimitiveParams[N]): ArrayBase[] {
    const primals = args.map((a) => a.primal);
    const out = bind(name, primals, params);
    const rule = PRIMITIVES[name].jvp;
    if (args.every((a) => a.tangent === null) || rule === "zero") return out.map((o) => new JvpTracer(this, o, null));
    if (typeof rule !== "function") throw unsupported(name, rule, "jvp");
    const tangents = rule(args.map((a) => a.tangent), primals, out, params as never);
    return out.map((o, i) => new JvpTracer(this, o, isInexact(o.dtype) ? tangents[i]! : null));
  }
}

/**
 * jax.jvp: `[primalsOut, tangentsOut]` of `f` at `primals` along `tangents` (lists
 * with one entry per argument of `f`; each a pytree). With `hasAux`, `f` returns
 * `[out, aux]` and the result is `[primalsOut, tangentsOut, aux]`.
 */
export function jvp(f: (...args: never[]) => unknown, primals: readonly unknown[], tangents: readonly unknown[], options: { hasAux?: boolean } = {}): unknown[] {
  const [pLeaves, pDef] = treeFlatten(primals);
  const [tLeaves] = treeFlatten(tangents);
  if (pLeaves.length !== tLeaves.length) throw new FrontendError(`jvp: ${pLeaves.length} primal leaves but ${tLeaves.length} tangent leaves`, "jvp", "tangents");
  return withTrace((level) => new JvpTrace(level), (trace) => {
    const inputs = pLeaves.map((p, i) => {
      const primal = asArrayValue(p as ArrayLike, undefined, "jvp");
      const tangent = asArrayValue(tLeaves[i] as ArrayLike, primal.dtype, "jvp");
      if (tangent.shape.join(",") !== primal.shape.join(",")) {
        throw new FrontendError(`jvp: tangent ${i} has shape [${tangent.shape}], its primal [${primal.shape}]`, "jvp", "tangents");
      }
      return new JvpTracer(trace, primal, tangent);
    });
    const result = (f as (...a: unknown[]) => unknown)(...(treeUnflatten(pDef, inputs) as unknown[]));
    const [out, aux] = splitAux(result, options.hasAux, "jvp");
    const [oLeaves, oDef] = treeFlatten(out);
    const pairs = oLeaves.map((o) => {
      const v = asArrayValue(o as ArrayLike, undefined, "jvp result");
      if (v instanceof JvpTracer && v.trace === trace) return [v.primal, v.tangent ?? zerosLike(v.primal)];
      return [v, zerosLike(v)];
    });
    const primalsOut = treeUnflatten(oDef, pairs.map((p) => p[0]));
    const tangentsOut = treeUnflatten(oDef, pairs.map((p) => p[1]));
    return options.hasAux === true ? [primalsOut, tangentsOut, stripTrace(aux, trace)] : [primalsOut, tangentsOut];
  });
}

// ---- reverse mode

/** One primitive application on the tape: its inputs (tracers that carry derivatives, or null) and results. */
interface TapeNode {
  readonly id: number;
  /** The primitive, or "custom" for a call with a rule of its own. */
  readonly name: PrimitiveName | "custom";
  /** A rule of its own (customVjp, customJvp, checkpoint), instead of the primitive table's. */
  readonly rule?: (cotangents: readonly ArrayBase[]) => (ArrayBase | null)[];
  readonly params: unknown;
  readonly inputs: readonly (VjpTracer | null)[];
  readonly primalsIn: readonly ArrayBase[];
  readonly primalsOut: readonly ArrayBase[];
  outputs: readonly VjpTracer[];
}

export class VjpTracer extends Tracer {
  /** `producer`: the node whose result this is; undefined for an input of the differentiated function; null for a constant. */
  constructor(readonly trace: VjpTrace, readonly primal: ArrayBase, readonly producer: TapeNode | null | undefined) {
    super();
  }

  get aval(): Aval {
    return this.primal.aval;
  }

  override concrete(): ReturnType<Tracer["concrete"]> {
    return concreteOf(this.primal);
  }

  /** Whether a derivative flows through this value: it is a float that depends on an input. */
  get carriesDerivative(): boolean {
    return this.producer !== null && isInexact(this.primal.dtype);
  }
}

export class VjpTrace extends Trace<VjpTracer> {
  readonly kind = "vjp";
  private nextId = 0;

  /**
   * @internal Records a call with its own backward rule: `outs` (computed by the caller on
   * the primals of `args`, below this trace) become this trace's values, and `rule`
   * gives the cotangents of `args` from those of `outs`.
   */
  recordCustom(args: readonly ArrayBase[], outs: readonly ArrayBase[], rule: (cotangents: readonly ArrayBase[]) => (ArrayBase | null)[]): VjpTracer[] {
    const inputs = args.map((a) => (a instanceof VjpTracer && a.trace === this && a.carriesDerivative ? a : null));
    if (inputs.every((i) => i === null)) return outs.map((o) => new VjpTracer(this, o, null));
    const node: TapeNode = { id: this.nextId++, name: "custom", rule, params: {}, inputs, primalsIn: [], primalsOut: outs, outputs: [] };
    node.outputs = outs.map((o) => new VjpTracer(this, o, node));
    return [...node.outputs];
  }

  pure(x: ArrayBase): VjpTracer {
    return new VjpTracer(this, x, null);
  }

  lift(x: Tracer): VjpTracer {
    return this.pure(x);
  }

  process<N extends PrimitiveName>(name: N, args: readonly VjpTracer[], params: PrimitiveParams[N]): ArrayBase[] {
    const primalsIn = args.map((a) => a.primal);
    const primalsOut = bind(name, primalsIn, params);
    if (!args.some((a) => a.carriesDerivative) || PRIMITIVES[name].vjp === "zero") return primalsOut.map((o) => new VjpTracer(this, o, null));
    const node: TapeNode = { id: this.nextId++, name, params, inputs: args.map((a) => (a.carriesDerivative ? a : null)), primalsIn, primalsOut, outputs: [] };
    node.outputs = primalsOut.map((o) => new VjpTracer(this, o, node));
    return [...node.outputs];
  }
}

function primitiveVjp(name: PrimitiveName, cotangents: readonly ArrayBase[], node: TapeNode): (ArrayBase | null)[] {
  const rule = PRIMITIVES[name].vjp;
  if (rule === "transpose") {
    // The JVP rule's tangent map is linear: its transpose is its VJP (at zero tangents), as JAX derives reverse mode.
    const jvpRule = PRIMITIVES[name].jvp;
    if (typeof jvpRule !== "function") throw unsupported(name, jvpRule, "vjp");
    const tangentMap = (...ts: ArrayBase[]): ArrayBase[] => jvpRule(ts, node.primalsIn, node.primalsOut, node.params as never);
    return vjpCore(tangentMap as (...args: never[]) => unknown, node.primalsIn.map(zerosLike), false).pullback(cotangents) as ArrayBase[];
  }
  if (typeof rule !== "function") throw unsupported(name, rule, "vjp");
  return rule(cotangents, node.primalsIn, node.primalsOut, node.params as never);
}

/** The cotangents of `inputs` given those of `outputs`: the tape's VJP rules run from the last node to the first. */
function backpropagate(outputs: readonly VjpTracer[], cotangents: readonly ArrayBase[], inputs: readonly VjpTracer[]): (ArrayBase | null)[] {
  const ct = new Map<VjpTracer, ArrayBase>();
  const accumulate = (t: VjpTracer, c: ArrayBase): void => {
    const prev = ct.get(t);
    ct.set(t, prev === undefined ? c : lax.add(prev, c));
  };
  outputs.forEach((o, i) => accumulate(o, cotangents[i]!));
  // The nodes the outputs depend on; ids grow in program order, so descending ids is a reverse topological order.
  const nodes = new Map<number, TapeNode>();
  const pending = outputs.map((o) => o.producer).filter((n): n is TapeNode => n instanceof Object);
  while (pending.length > 0) {
    const n = pending.pop()!;
    if (nodes.has(n.id)) continue;
    nodes.set(n.id, n);
    for (const i of n.inputs) if (i?.producer instanceof Object) pending.push(i.producer);
  }
  for (const node of [...nodes.values()].sort((a, b) => b.id - a.id)) {
    const cts = node.outputs.map((o) => ct.get(o));
    if (cts.every((c) => c === undefined)) continue;
    for (const o of node.outputs) ct.delete(o);
    const filled = cts.map((c, i) => c ?? zerosLike(node.primalsOut[i]!));
    const inCts = node.rule !== undefined ? node.rule(filled) : primitiveVjp(node.name as PrimitiveName, filled, node);
    node.inputs.forEach((input, i) => {
      const c = inCts[i];
      if (input !== null && c !== null && c !== undefined) accumulate(input, c);
    });
  }
  return inputs.map((t) => ct.get(t) ?? null);
}

function splitAux(result: unknown, hasAux: boolean | undefined, where: string): [unknown, unknown] {
  if (hasAux !== true) return [result, undefined];
  if (!Array.isArray(result) || result.length !== 2) throw new FrontendError(`${where}: with hasAux the function must return [output, aux]`, where, "hasAux");
  return [result[0], result[1]];
}

/** Replaces the tracers of `trace` in a pytree by their primal values (auxiliary data is not differentiated). */
function stripTrace(tree: unknown, trace: Trace): unknown {
  const [leaves, def] = treeFlatten(tree);
  return treeUnflatten(def, leaves.map((l) => (l instanceof JvpTracer || l instanceof VjpTracer) && l.trace === trace ? l.primal : l));
}

/** What `vjp` gives: the primal output, the pullback from output cotangents to input cotangents, and the aux data. */
interface VjpResult {
  readonly out: unknown;
  readonly pullback: (cotangent: unknown) => unknown[];
  readonly aux: unknown;
}

/** @internal */
export function vjpCore(f: (...args: never[]) => unknown, primals: readonly unknown[], hasAux: boolean | undefined): VjpResult {
  const [pLeaves, pDef] = treeFlatten(primals);
  return withTrace((level) => new VjpTrace(level), (trace) => {
    const inputs = pLeaves.map((p) => new VjpTracer(trace, asArrayValue(p as ArrayLike, undefined, "vjp"), undefined));
    const result = (f as (...a: unknown[]) => unknown)(...(treeUnflatten(pDef, inputs) as unknown[]));
    const [out, aux] = splitAux(result, hasAux, "vjp");
    const [oLeaves, oDef] = treeFlatten(out);
    const outs = oLeaves.map((o) => asArrayValue(o as ArrayLike, undefined, "vjp result"));
    const traced = outs.map((o) => (o instanceof VjpTracer && o.trace === trace ? o : undefined));
    const primalOut = treeUnflatten(oDef, outs.map((o, i) => traced[i]?.primal ?? o));
    const pullback = (cotangent: unknown): unknown[] => {
      const [cLeaves] = treeFlatten(cotangent);
      if (cLeaves.length !== outs.length) throw new FrontendError(`vjp: the cotangent has ${cLeaves.length} leaves, the output ${outs.length}`, "vjp", "cotangent");
      const cts = cLeaves.map((c, i) => asArrayValue(c as ArrayLike, outs[i]!.dtype, "vjp"));
      const pairs = traced.flatMap((t, i) => (t?.carriesDerivative === true ? [[t, cts[i]!] as const] : []));
      const inCts = backpropagate(pairs.map((p) => p[0]), pairs.map((p) => p[1]), inputs);
      return treeUnflatten(pDef, inCts.map((c, i) => c ?? zerosLike(inputs[i]!.primal))) as unknown[];
    };
    return { out: primalOut, pullback, aux: stripTrace(aux, trace) };
  });
}

const isOptions = (x: unknown): x is { hasAux?: boolean } =>
  typeof x === "object" && x !== null && Object.getPrototypeOf(x) === Object.prototype && Object.keys(x).length > 0 && Object.keys(x).every((k) => k === "hasAux");

/**
 * jax.vjp: `[out, pullback]` (with `{ hasAux: true }` as the last argument,
 * `[out, pullback, aux]`); `pullback(cotangent)` gives one cotangent per primal.
 */
export function vjp(f: (...args: never[]) => unknown, ...primalsAndOptions: unknown[]): unknown[] {
  const last = primalsAndOptions.at(-1);
  const options = isOptions(last) ? last : {};
  const primals = isOptions(last) ? primalsAndOptions.slice(0, -1) : primalsAndOptions;
  const r = vjpCore(f, primals, options.hasAux);
  return options.hasAux === true ? [r.out, r.pullback, r.aux] : [r.out, r.pullback];
}

export interface GradOptions {
  /** The argument(s) to differentiate with respect to (default 0); a list gives a list of gradients. */
  readonly argnums?: number | readonly number[];
  /** `f` returns `[output, aux]`; aux is returned beside the gradient, undifferentiated. */
  readonly hasAux?: boolean;
  /** `f` is a holomorphic function of complex arguments: its complex output is differentiated, giving f'(z). */
  readonly holomorphic?: boolean;
}

/** jax.value_and_grad: `(...args) => [value, grad]` (`[[value, aux], grad]` with hasAux). */
export function valueAndGrad(f: (...args: never[]) => unknown, options: GradOptions = {}): (...args: unknown[]) => [unknown, unknown] {
  const argnums = options.argnums ?? 0;
  const list = typeof argnums === "number" ? [argnums] : [...argnums];
  return (...args: unknown[]) => {
    for (const n of list) {
      if (n < 0 || n >= args.length) throw new FrontendError(`grad: argnums ${n} is out of range for ${args.length} argument(s)`, "grad", "argnums");
      // As JAX: an integer input has no tangent space, and a zero gradient for it would be silently wrong.
      for (const leaf of treeFlatten(args[n])[0]) {
        const { dtype } = asArrayValue(leaf as ArrayLike, undefined, "grad");
        if (!isInexact(dtype)) {
          throw new FrontendError(`grad: argument ${n} has dtype ${dtype}; grad differentiates float or complex inputs only (convert with np.astype(x, "float32"), or use vjp)`, "grad", "argnums");
        }
      }
    }
    const g = (...diff: unknown[]): unknown => {
      const full = [...args];
      list.forEach((n, i) => { full[n] = diff[i]; });
      return (f as (...a: unknown[]) => unknown)(...full);
    };
    const r = vjpCore(g, list.map((n) => args[n]), options.hasAux);
    const out = asArrayValue(r.out as ArrayLike, undefined, "grad");
    if (out.ndim !== 0 || !isInexact(out.dtype)) {
      throw new FrontendError(`grad: the function must return a float scalar, got ${out.dtype}[${out.shape}]`, "grad");
    }
    // As JAX: a complex output is differentiated only when the caller says f is holomorphic (then grad is f'(z)).
    if (dtypeKind(out.dtype) === "complex" && options.holomorphic !== true) {
      throw new FrontendError(`grad: the function returns ${out.dtype}; grad needs a real output, or { holomorphic: true } for a holomorphic function`, "grad", "holomorphic");
    }
    const grads = r.pullback(lax.full([], 1, out.dtype));
    const grad = typeof argnums === "number" ? grads[0] : grads;
    return [options.hasAux === true ? [out, r.aux] : out, grad];
  };
}

/** jax.grad: the gradient of a scalar function (with hasAux, `[grad, aux]`). */
export function grad(f: (...args: never[]) => unknown, options: GradOptions = {}): (...args: unknown[]) => unknown {
  const vg = valueAndGrad(f, options);
  return (...args: unknown[]) => {
    const [value, g] = vg(...args);
    return options.hasAux === true ? [g, (value as unknown[])[1]] : g;
  };
}

/** The identity matrix of `x`'s size, one basis vector per row, each shaped as `x`. */
function basis(x: ArrayBase): ArrayBase {
  const n = x.size;
  const eye = lax.convertElementType(lax.eq(lax.broadcastedIota("int32", [n, n], 0), lax.broadcastedIota("int32", [n, n], 1)), x.dtype);
  return lax.reshape(eye, [n, ...x.shape]);
}

/** jax.jacfwd of a function of one array (argument `argnums`, default 0) to one array: forward mode, one JVP per input element (batched). */
export function jacfwd(f: (...args: never[]) => unknown, options: { argnums?: number } = {}): (...args: unknown[]) => ArrayBase {
  const n = options.argnums ?? 0;
  return (...args: unknown[]) => {
    const x = asArrayValue(args[n] as ArrayLike, undefined, "jacfwd");
    const g = (...a: unknown[]): unknown => (f as (...a: unknown[]) => unknown)(...args.map((v, i) => (i === n ? a[0] : v)));
    const push = (t: ArrayBase): ArrayBase => jvp(g, [x], [t])[1] as ArrayBase;
    // One column per input element: [in.size, ...out.shape], made out.shape + in.shape.
    const columns = vmap(push)(basis(x)) as ArrayBase;
    const outRank = columns.ndim - 1;
    const toBack = lax.transpose(columns, [...Array.from({ length: outRank }, (_, i) => i + 1), 0]);
    return lax.reshape(toBack, [...columns.shape.slice(1), ...x.shape]);
  };
}

/** jax.jacrev of a function of one array to one array: reverse mode, one VJP per output element (batched). */
export function jacrev(f: (...args: never[]) => unknown, options: { argnums?: number } = {}): (...args: unknown[]) => ArrayBase {
  const n = options.argnums ?? 0;
  return (...args: unknown[]) => {
    const x = asArrayValue(args[n] as ArrayLike, undefined, "jacrev");
    const g = (...a: unknown[]): unknown => (f as (...a: unknown[]) => unknown)(...args.map((v, i) => (i === n ? a[0] : v)));
    const r = vjpCore(g, [x], false);
    const out = asArrayValue(r.out as ArrayLike, undefined, "jacrev");
    const rows = vmap((ct: ArrayBase) => r.pullback(ct)[0] as ArrayBase)(basis(out)) as ArrayBase;
    return lax.reshape(rows, [...out.shape, ...x.shape]);
  };
}

/** jax.hessian: jacfwd of jacrev. */
export function hessian(f: (...args: never[]) => unknown, options: { argnums?: number } = {}): (...args: unknown[]) => ArrayBase {
  return jacfwd(jacrev(f, options), options);
}

/** jax.lax.stop_gradient (also jax.lax's): the value, with a zero derivative. */
export const stopGradient = (x: ArrayLike): ArrayBase => lax.stopGradient(x);
