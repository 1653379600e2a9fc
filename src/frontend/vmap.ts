// jax.vmap: maps a function over an axis of its arguments by tracing it once with
// batched values (each with the dimension its batch axis is at, or none) and applying
// each primitive's batching rule from the primitive table.

import { ArrayBase, Trace, Tracer, asArrayValue, bind, concreteOf, withTrace, type ArrayLike, type Aval } from "./core.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { PRIMITIVES, moveBatchToFront, type PrimitiveName, type PrimitiveParams } from "./primitives.js";
import { treeFlatten, treeUnflatten } from "./tree.js";

export class BatchTracer extends Tracer {
  readonly aval: Aval;

  constructor(readonly trace: BatchTrace, readonly value: ArrayBase, readonly batchDim: number | null) {
    super();
    const shape = value.shape;
    if (batchDim !== null) shape.splice(batchDim, 1);
    this.aval = { ...value.aval, shape };
  }

  override concrete(): ReturnType<Tracer["concrete"]> {
    const inner = concreteOf(this.value);
    return inner === undefined ? undefined : { value: inner.value, batched: inner.batched || this.batchDim !== null };
  }
}

export class BatchTrace extends Trace<BatchTracer> {
  readonly kind = "vmap";

  constructor(level: number, readonly axisSize: number) {
    super(level);
  }

  pure(x: ArrayBase): BatchTracer {
    return new BatchTracer(this, x, null);
  }

  lift(x: Tracer): BatchTracer {
    return this.pure(x);
  }

  process<N extends PrimitiveName>(name: N, args: readonly BatchTracer[], params: PrimitiveParams[N]): ArrayBase[] {
    const values = args.map((a) => a.value);
    const dims = args.map((a) => a.batchDim);
    if (dims.every((d) => d === null)) return bind(name, values, params).map((v) => new BatchTracer(this, v, null));
    const r = PRIMITIVES[name].batch(values, dims, params as never, this.axisSize);
    return r.values.map((v, i) => new BatchTracer(this, v, r.dims[i]!));
  }
}

/** An axis spec: one for every argument, or one per positional argument (null: not mapped). */
export type Axes = number | null | readonly (number | null)[];

export interface VmapOptions {
  /** The mapped axis of each argument (default 0 for all); null leaves an argument unmapped. */
  readonly inAxes?: Axes;
  /** Where the mapped axis goes in each result (default 0). */
  readonly outAxes?: Axes;
  /** The mapped size, needed when no argument is mapped. */
  readonly axisSize?: number;
}

const axisOf = (axes: Axes, i: number, count: number, what: string): number | null => {
  if (axes === null || typeof axes === "number") return axes;
  if (axes.length !== count) throw new FrontendError(`vmap: ${what} has ${axes.length} entries for ${count} value(s)`, "vmap", what);
  return axes[i]!;
};

const normalize = (axis: number, rank: number, what: string): number => {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new FrontendError(`vmap: ${what} ${axis} is out of range for rank ${rank}`, "vmap", what);
  return a;
};

/** jax.vmap. */
export function vmap<F extends (...args: never[]) => unknown>(f: F, options: VmapOptions = {}): (...args: Parameters<F>) => ReturnType<F> {
  const inAxes = options.inAxes ?? 0;
  const outAxes = options.outAxes ?? 0;
  return ((...args: unknown[]) => {
    // Each argument's leaves with their mapped axis.
    const mapped = args.map((a, i) => {
      const axis = axisOf(inAxes, i, args.length, "inAxes");
      const [leaves, def] = treeFlatten(a);
      const values = leaves.map((l) => asArrayValue(l as ArrayLike, undefined, "vmap"));
      return { def, values, axes: values.map((v) => (axis === null ? null : normalize(axis, v.ndim, "inAxes"))) };
    });
    const sizes = new Set(mapped.flatMap((m) => m.values.flatMap((v, k) => (m.axes[k] === null ? [] : [v.shape[m.axes[k]!]!]))));
    if (options.axisSize !== undefined) sizes.add(options.axisSize);
    if (sizes.size === 0) throw new FrontendError("vmap: no argument is mapped (give axisSize)", "vmap", "inAxes");
    if (sizes.size > 1) throw new FrontendError(`vmap: the mapped axes have different sizes: ${[...sizes].join(", ")}`, "vmap", "inAxes");
    const size = [...sizes][0]!;
    return withTrace((level) => new BatchTrace(level, size), (trace) => {
      const tracedArgs = mapped.map((m) => treeUnflatten(m.def, m.values.map((v, k) => new BatchTracer(trace, v, m.axes[k]!))));
      const [outs, outDef] = treeFlatten((f as unknown as (...a: unknown[]) => unknown)(...tracedArgs));
      const results = outs.map((o, i) => {
        const v = asArrayValue(o as ArrayLike, undefined, "vmap result");
        const [value, dim] = v instanceof BatchTracer && v.trace === trace ? [v.value, v.batchDim] : [v, null];
        const axis = axisOf(outAxes, i, outs.length, "outAxes");
        if (axis === null) {
          if (dim !== null) throw new FrontendError(`vmap: result ${i} is mapped but its outAxes is null`, "vmap", "outAxes");
          return value;
        }
        const front = moveBatchToFront(value, dim, size);
        const target = normalize(axis, front.ndim, "outAxes");
        const perm = Array.from({ length: front.ndim - 1 }, (_, k) => k + 1);
        perm.splice(target, 0, 0);
        return lax.transpose(front, perm);
      });
      return treeUnflatten(outDef, results);
    });
  }) as (...args: Parameters<F>) => ReturnType<F>;
}
