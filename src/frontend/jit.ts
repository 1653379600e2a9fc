// jax.jit: traces a function of arrays (and pytrees of them) into one HloModule with the
// XlaBuilder, compiles it once per input signature (the arguments' structure, shapes,
// dtypes and weak types, and the static arguments' values) and runs the executable.
// Inside another transformation (grad, vmap, an enclosing jit) the function is traced
// inline into that transformation instead: the result is the same, and the enclosing
// jit compiles the whole program once.

import { XlaBuilder, constantLiteral, parameter, type XlaOp } from "../builder/xla_builder.js";
import { tuple } from "../builder/control.js";
import { compileSync } from "../compiler/index.js";
import type { Executable } from "../compiler/executable.js";
import type { HloModule } from "../ir/computation.js";
import { printStableHlo } from "../text/mlir/index.js";
import {
  Array, ArrayBase, Trace, Tracer, asArrayValue, avalKey, lowerPrimitive, shapeOfAval, transformationActive, withTrace,
  type ArrayLike, type Aval,
} from "./core.js";
import { FrontendError } from "./errors.js";
import { checkPlatform, defaultBackend, type Platform } from "./platform.js";
import type { PrimitiveName, PrimitiveParams } from "./primitives.js";
import { shardedJit, type ShardedJitted, type ShardingsOption } from "./sharding.js";
import type { TensorSharding } from "../sharding/model.js";
import { treeDefString, treeFlatten, treeUnflatten, type TreeDef } from "./tree.js";

/** @internal A value of a jit trace: an op of its builder. */
export class JitTracer extends Tracer {
  constructor(readonly trace: JitTrace, readonly op: XlaOp, readonly aval: Aval) {
    super();
  }
}

/** @internal Stages primitives into `builder` (control.ts traces loop bodies and branches with a subclass). */
export class JitTrace extends Trace<JitTracer> {
  readonly kind = "jit";
  private readonly constants = new Map<Array, JitTracer>();

  constructor(level: number, readonly builder: XlaBuilder) {
    super(level);
  }

  /** A concrete array the function closes over becomes a constant of the program. */
  pure(x: Array): JitTracer {
    let t = this.constants.get(x);
    if (t === undefined) {
      t = new JitTracer(this, constantLiteral(this.builder, x.toLiteral()), x.aval);
      this.constants.set(x, t);
    }
    return t;
  }

  lift(x: Tracer): JitTracer {
    // jit traces only outside every other transformation (inside one it runs inline).
    throw new FrontendError(`jit: a traced value of an enclosing ${x.trace.kind} reached the jit trace`);
  }

  process<N extends PrimitiveName>(name: N, args: readonly JitTracer[], params: PrimitiveParams[N]): ArrayBase[] {
    const { ops, avals } = lowerPrimitive(this.builder, name, args.map((a) => a.op), args.map((a) => a.aval), params);
    return ops.map((op, i) => new JitTracer(this, op, avals[i]!));
  }
}

export interface JitOptions {
  /** Positions of arguments that are static: part of the cache key (compared by JSON), passed to the function as they are. */
  readonly staticArgnums?: number | readonly number[];
  /** Positions of arguments whose buffers the executable may reuse (compile's `donate`): those arrays are invalid afterwards. */
  readonly donateArgnums?: number | readonly number[];
  /**
   * Positions of arguments that hold weights (compile's `weights`): a matrix product
   * whose right operand is one of their arrays reads it packed into its GEMM kernel's
   * layout, packed on the first call that passes that array and kept while later calls
   * pass the same one (arrays are immutable, so the copy is never stale; a new array
   * is packed again). A performance hint: results are the same without it. Ignored
   * with shardings.
   */
  readonly weightArgnums?: number | readonly number[];
  /**
   * The backend to compile for (JAX's `jit(f, backend=...)`): "wasm" or "native"
   * (platform.ts). Default: `defaultBackend()` at each call, so `config.update("jax_platforms", ...)`
   * applies to functions jitted before it. A sharded jit runs on its mesh's client instead.
   */
  readonly backend?: Platform;
}

/** jit's shardings (sharding.ts): given, the program is partitioned over their mesh and its calls are asynchronous. */
export interface ShardedJitOptions extends JitOptions {
  /** A NamedSharding for every argument, or a list with one per argument (each null, a NamedSharding, or a tree of them matching the argument). null: the argument's own `sharding`, else propagation's choice. */
  readonly inShardings?: ShardingsOption;
  /** The same for the results; null: propagation's choice. */
  readonly outShardings?: ShardingsOption;
}

/** @internal What a sharded jit adds to the traced module: the mesh, and the shardings of the arguments' and results' leaves. */
export interface ShardingPlan {
  declareMesh(b: XlaBuilder): void;
  readonly argShardings: readonly (TensorSharding | undefined)[];
  resultShardings(def: TreeDef, avals: readonly Aval[]): readonly (TensorSharding | undefined)[];
}

/** A traced program: its module, StableHLO text, and its compiled form. */
export class Lowered {
  constructor(
    readonly module: HloModule,
    /** @internal */ readonly signature: Signature,
    private readonly donate: readonly number[],
    private readonly weights: readonly number[] = [],
    /** The backend `compile` builds for: jit's `backend` option, else `defaultBackend()` when `compile` is called. */
    private readonly backend?: Platform,
  ) {}

  /** The program as StableHLO text (for `xlats run`, or JAX's `jax.jit(...).lower(...).as_text()` counterpart). */
  asText(): string {
    return printStableHlo(this.module);
  }

  /** Compiles the program for jit's backend, else the platform in use (defaultBackend). */
  compile(): Compiled {
    const backend = this.backend ?? defaultBackend();
    // Both platforms load on the shared default device, where the front end's arrays live.
    return new Compiled(compileSync(this.module, { backend, donate: this.donate, weights: this.weights }), this.signature, backend);
  }
}

/** A compiled program: call it with arguments of the signature it was traced for. */
export class Compiled {
  constructor(readonly executable: Executable, /** @internal */ readonly signature: Signature, /** The backend it was compiled for. */ readonly backend: Platform) {}

  call(...args: unknown[]): unknown {
    const { leaves, key } = flattenArgs(args, this.signature.staticArgnums);
    return this.run(leaves, key);
  }

  /** @internal `call` on arguments already flattened (jit's cache lookup did that once). */
  run(leaves: readonly ArrayBase[], key: string): unknown {
    if (key !== this.signature.key) throw new FrontendError(`jit: called with the signature ${key}, but compiled for ${this.signature.key}`, "jit");
    const results = this.executable.execute(leaves.map((l) => (l as Array).buffer));
    return treeUnflatten(this.signature.outDef, results.map((r, i) => new Array(this.signature.outAvals[i]!, r)));
  }
}

interface Signature {
  readonly key: string;
  readonly staticArgnums: readonly number[];
  readonly outDef: TreeDef;
  readonly outAvals: readonly Aval[];
}

/** @internal */
export const argnumList = (n: number | readonly number[] | undefined): number[] => (n === undefined ? [] : typeof n === "number" ? [n] : [...n]);

/** @internal The dynamic arguments' leaves (as arrays), with the signature's key. */
export function flattenArgs(args: readonly unknown[], staticArgnums: readonly number[]): { leaves: ArrayBase[]; key: string; dynamic: unknown[] } {
  const dynamic = args.map((a, i) => (staticArgnums.includes(i) ? null : a));
  const [raw, def] = treeFlatten(dynamic);
  const leaves = raw.map((l) => asArrayValue(l as ArrayLike, undefined, "jit"));
  const statics = staticArgnums.map((i) => JSON.stringify(args[i]) ?? "undefined");
  return { leaves, dynamic, key: `${treeDefString(def)}|${leaves.map((l) => avalKey(l.aval)).join(",")}|${statics.join(",")}` };
}

/**
 * @internal Traces `f` on arguments of the signature of `args` into a module (sharded as
 * `plan` says, if given); `donate` and `weights` are argument positions (jit's options).
 */
export function traceToModule(
  f: (...args: never[]) => unknown, args: readonly unknown[], staticArgnums: readonly number[], donate: readonly number[], plan?: ShardingPlan,
  weights: readonly number[] = [], backend?: Platform,
): Lowered {
  const { leaves, key } = flattenArgs(args, staticArgnums);
  const name = f.name === "" ? "jit_fn" : `jit_${f.name}`;
  const b = new XlaBuilder(name.replace(/[^A-Za-z0-9_]/g, "_"));
  plan?.declareMesh(b);
  return withTrace((level) => new JitTrace(level, b), (trace) => {
    const params = leaves.map((l, i) => {
      const sharding = plan?.argShardings[i];
      const op = parameter(b, i, shapeOfAval(l.aval), sharding === undefined ? `arg${i}` : { name: `arg${i}`, sharding });
      return new JitTracer(trace, op, l.aval);
    });
    const [, def] = treeFlatten(args.map((a, i) => (staticArgnums.includes(i) ? null : a)));
    const rebuilt = treeUnflatten(def, params) as unknown[];
    const callArgs = args.map((a, i) => (staticArgnums.includes(i) ? a : rebuilt[i]));
    const [outLeaves, outDef] = treeFlatten((f as unknown as (...a: unknown[]) => unknown)(...callArgs));
    const outs = outLeaves.map((o) => {
      const v = asArrayValue(o as ArrayLike, undefined, "jit result");
      if (v instanceof Array) return trace.pure(v);
      if (v instanceof JitTracer && v.trace === trace) return v;
      throw new FrontendError(`jit: the function returned a traced value of another transformation (${(v as Tracer).trace.kind})`, "jit");
    });
    if (outs.length === 0) throw new FrontendError("jit: the function returns no arrays", "jit");
    const root = outs.length === 1 ? outs[0]!.op : tuple(b, outs.map((o) => o.op));
    const leafDonations = argumentLeaves(args, staticArgnums, donate);
    const resultShardings = plan?.resultShardings(outDef, outs.map((o) => o.aval));
    const module = resultShardings === undefined ? b.buildModule(root) : b.buildModule(root, { resultShardings });
    return new Lowered(module, { key, staticArgnums, outDef, outAvals: outs.map((o) => o.aval) }, leafDonations, argumentLeaves(args, staticArgnums, weights), backend);
  });
}

/** The parameter numbers of the leaves of the arguments at `positions` (donated ones, weights). */
function argumentLeaves(args: readonly unknown[], staticArgnums: readonly number[], positions: readonly number[]): number[] {
  const out: number[] = [];
  if (positions.length === 0) return out;
  let leaf = 0;
  args.forEach((a, i) => {
    if (staticArgnums.includes(i)) return;
    const n = treeFlatten(a)[0].length;
    if (positions.includes(i)) for (let k = 0; k < n; k++) out.push(leaf + k);
    leaf += n;
  });
  return out;
}

export interface Jitted<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  /** Traces for these arguments' signature, without compiling. */
  lower(...args: Parameters<F>): Lowered;
}

/** jax.jit; with `inShardings` or `outShardings`, a program partitioned over their mesh, whose calls resolve asynchronously (sharding.ts). */
export function jit<F extends (...args: never[]) => unknown>(f: F, options: ShardedJitOptions & ({ inShardings: ShardingsOption } | { outShardings: ShardingsOption })): ShardedJitted<F>;
export function jit<F extends (...args: never[]) => unknown>(f: F, options?: JitOptions): Jitted<F>;
export function jit<F extends (...args: never[]) => unknown>(f: F, options: ShardedJitOptions = {}): Jitted<F> | ShardedJitted<F> {
  const sharded = "inShardings" in options || "outShardings" in options;
  if (sharded && options.backend !== undefined) {
    throw new FrontendError("jit: backend and shardings together: a sharded program runs on its mesh's client, whose backend createClient chose", "jit");
  }
  if (sharded) return shardedJit(f, options);
  const backend = options.backend === undefined ? undefined : checkPlatform(options.backend, "jit");
  const staticArgnums = argnumList(options.staticArgnums);
  const donate = argnumList(options.donateArgnums);
  const weights = argnumList(options.weightArgnums);
  // One cache per backend: without jit's option, the platform may change between calls.
  const caches = new Map<Platform, Map<string, Compiled>>();
  const lower = (args: readonly unknown[]): Lowered => traceToModule(f, args, staticArgnums, donate, undefined, weights, backend);
  const call = (...args: unknown[]): unknown => {
    const { leaves, key } = flattenArgs(args, staticArgnums);
    if (transformationActive() || leaves.some((l) => l instanceof Tracer)) return (f as unknown as (...a: unknown[]) => unknown)(...args);
    const target = backend ?? defaultBackend();
    let cache = caches.get(target);
    if (cache === undefined) caches.set(target, (cache = new Map()));
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = traceToModule(f, args, staticArgnums, donate, undefined, weights, target).compile();
      cache.set(key, compiled);
    }
    return compiled.run(leaves, key);
  };
  return Object.assign(call, { lower: (...args: Parameters<F>) => lower(args) }) as unknown as Jitted<F>;
}
