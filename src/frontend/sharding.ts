// Sharding from the front end, as JAX's: a `Mesh` of a runtime client's devices with
// named axes, `PartitionSpec` (`P`), `NamedSharding(mesh, spec)`, `jit(f, {
// inShardings, outShardings })`, `lax.withShardingConstraint`, `devicePut` and
// `shardMap` (with `lax.psum` and its kin inside).
//
// A jit with shardings traces `f` as jit does into one module that declares the mesh
// (`sdy.mesh @mesh`) and carries the shardings as Shardy attributes (`sdy.sharding` on
// arguments and results, `sdy.sharding_constraint` ops, `sdy.manual_computation` for
// shardMap), which is what JAX lowers to with Shardy. The module is partitioned by
// Shardy's passes (src/sdy/partition: propagation, reshards, collectives, global to
// local) into the program each device runs, compiled once per input signature on the
// mesh's client, and run on its device workers. The runtime's client is asynchronous,
// so a sharded call resolves to its results (`await f(x)`).
//
// Where the values are: a front-end array lives whole in the default device's memory;
// its `sharding` says how a sharded jit splits it. Each sharded call cuts the arguments
// into the devices' pieces and assembles the results from the devices' pieces into
// arrays of the default device again (which carry the sharding the program gave them),
// so the results work with every other part of the front end. The data is copied to
// and from the workers on every call: the devices do not keep the shards between calls.

import { manualComputation } from "../builder/sdy.js";
import { sharding as tensorSharding } from "../builder/sharding_spec.js";
import { allReduce, scalarReducer } from "../builder/collective.js";
import type { XlaBuilder } from "../builder/xla_builder.js";
import { defaultDevice } from "../compiler/backend.js";
import type { Client, Device, LoadedExecutable } from "../runtime/client.js";
import { assembleResults, partition, splitArguments, type PartitionedProgram } from "../sdy/partition/partition.js";
import type { TensorSharding } from "../sharding/model.js";
import { printStableHlo } from "../text/mlir/index.js";
import type { HloModule } from "../ir/computation.js";
import { Array, ArrayBase, Tracer, asArrayValue, avalString, bind1, innermostTrace, transformationActive, withTrace, type ArrayLike, type Aval } from "./core.js";
import { dtypeOf } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { JitTrace, JitTracer, argnumList, flattenArgs, traceToModule, type Lowered, type ShardedJitOptions, type ShardingPlan } from "./jit.js";
import { MESH_NAME, declareMesh, type MeshAxes } from "./sharding_rules.js";
import * as lax from "./lax.js";
import { treeFlatten, treeUnflatten, type TreeDef } from "./tree.js";
import { elementCount } from "../types/shape.js";

/** A mesh, partition spec or sharding that breaks a rule (an unknown or repeated axis, a rank or size that does not fit). */
export class ShardingSpecError extends FrontendError {
  override name = "ShardingSpecError";
}

// ---- meshes, partition specs, named shardings

/** Mesh axes in order: a record (`{ data: 2, model: 2 }`) or pairs (`[["data", 2], ["model", 2]]`). */
export type MeshAxesInput = Readonly<Record<string, number>> | readonly (readonly [string, number])[];

let nextMeshId = 1;

/**
 * jax.sharding.Mesh: devices of a runtime client (`createClient({ deviceCount })`)
 * arranged in a grid with named axes. The mesh's devices are the client's first ones in
 * order unless `devices` lists them (mesh position i, row-major, runs on devices[i]).
 */
export class Mesh {
  readonly axisNames: readonly string[];
  readonly axisSizes: readonly number[];
  readonly devices: readonly Device[];
  /** @internal tells meshes with equal axes apart in compile caches */
  readonly id = nextMeshId++;

  constructor(readonly client: Client, axes: MeshAxesInput, options: { readonly devices?: readonly Device[] } = {}) {
    const pairs = globalThis.Array.isArray(axes) ? (axes as readonly (readonly [string, number])[]) : Object.entries(axes);
    this.axisNames = pairs.map(([n]) => n);
    this.axisSizes = pairs.map(([, s]) => s);
    const fail = (rule: string): never => {
      throw new ShardingSpecError(`Mesh: ${rule}`, "Mesh");
    };
    for (const [name, size] of pairs) {
      if (typeof name !== "string" || name === "") fail(`an axis name must be a non-empty string, got ${JSON.stringify(name)}`);
      if (!Number.isSafeInteger(size) || size < 1) fail(`the size of axis '${name}' must be a positive integer, got ${size}`);
    }
    const repeated = this.axisNames.find((n, i) => this.axisNames.indexOf(n) !== i);
    if (repeated !== undefined) fail(`the axis name '${repeated}' is used twice`);
    const size = this.size;
    const devices = options.devices ?? client.devices.slice(0, size);
    if (devices.length !== size) {
      fail(options.devices === undefined
        ? `the axes (${this.describeAxes()}) need ${size} devices; the client has ${client.devices.length}`
        : `the axes (${this.describeAxes()}) need ${size} devices; ${devices.length} were given`);
    }
    for (const [i, d] of devices.entries()) {
      if (!client.devices.includes(d)) fail(`device ${String(d)} is not a device of the client`);
      if (devices.indexOf(d) !== i) fail(`device ${String(d)} is listed twice`);
    }
    this.devices = [...devices];
  }

  /** The axis sizes by name (JAX's `mesh.shape`). */
  get shape(): Record<string, number> {
    return Object.fromEntries(this.axisNames.map((n, i) => [n, this.axisSizes[i]!]));
  }

  /** The number of devices. */
  get size(): number {
    return elementCount(this.axisSizes);
  }

  /** @internal the axes as primitive params */
  get axes(): MeshAxes {
    return this.axisNames.map((n, i) => [n, this.axisSizes[i]!] as const);
  }

  private describeAxes(): string {
    return this.axisNames.map((n, i) => `'${n}': ${this.axisSizes[i]}`).join(", ");
  }

  toString(): string {
    return `Mesh(${this.describeAxes()})`;
  }
}

/** jax.make_mesh: a mesh of `axisShapes` named `axisNames`, on the client's devices (or `devices`). */
export function makeMesh(
  axisShapes: readonly number[], axisNames: readonly string[], options: { readonly client: Client; readonly devices?: readonly Device[] },
): Mesh {
  if (axisShapes.length !== axisNames.length) {
    throw new ShardingSpecError(`makeMesh: ${axisShapes.length} axis sizes for ${axisNames.length} axis names`, "makeMesh");
  }
  return new Mesh(options.client, axisNames.map((n, i) => [n, axisShapes[i]!] as const), options);
}

/** One dimension of a PartitionSpec: a mesh axis, several (major to minor), or null (not sharded). */
export type PartitionDim = string | readonly string[] | null;

/**
 * jax.sharding.PartitionSpec: for each leading dimension of an array, the mesh axes it
 * is split along; dimensions past the spec's length are not sharded.
 */
export class PartitionSpec {
  /** Each dimension's axes ([] where not sharded). */
  readonly dims: readonly (readonly string[])[];

  constructor(...dims: PartitionDim[]) {
    this.dims = dims.map((d, i) => {
      const axes = d === null ? [] : typeof d === "string" ? [d] : [...d];
      for (const a of axes) {
        if (typeof a !== "string" || a === "") throw new ShardingSpecError(`PartitionSpec: dimension ${i}: ${JSON.stringify(a)} is not a mesh axis name`, "PartitionSpec");
      }
      return axes;
    });
    const all = this.dims.flat();
    const repeated = all.find((a, i) => all.indexOf(a) !== i);
    if (repeated !== undefined) {
      throw new ShardingSpecError(`PartitionSpec ${this}: the mesh axis '${repeated}' is used twice (an axis splits at most one dimension, once)`, "PartitionSpec");
    }
  }

  toString(): string {
    const dim = (axes: readonly string[]): string => (axes.length === 0 ? "None" : axes.length === 1 ? `'${axes[0]}'` : `(${axes.map((a) => `'${a}'`).join(", ")})`);
    return `P(${this.dims.map(dim).join(", ")})`;
  }
}

/** `P("data", null)`: a PartitionSpec, as JAX's `P` is. */
export const P = (...dims: PartitionDim[]): PartitionSpec => new PartitionSpec(...dims);

/** jax.sharding.NamedSharding: a PartitionSpec on a mesh. */
export class NamedSharding {
  constructor(readonly mesh: Mesh, readonly spec: PartitionSpec) {
    const unknown = spec.dims.flat().find((a) => !mesh.axisNames.includes(a));
    if (unknown !== undefined) {
      throw new ShardingSpecError(`NamedSharding: the axis '${unknown}' of ${spec} is not an axis of ${mesh} (its axes: ${mesh.axisNames.join(", ")})`, "NamedSharding");
    }
  }

  /** How many pieces dimension `d` is cut into. */
  private shards(d: number): number {
    return (this.spec.dims[d] ?? []).reduce((n, a) => n * this.mesh.axisSizes[this.mesh.axisNames.indexOf(a)]!, 1);
  }

  /** The shape of each device's piece of an array of shape `shape` (JAX's `shard_shape`); a ShardingSpecError where the spec does not fit it. */
  shardShape(shape: readonly number[], where = "shardShape"): number[] {
    this.check(shape, where);
    return shape.map((n, d) => n / this.shards(d));
  }

  /**
   * @internal Checks the spec against an array of `shape`: its rank, and unless
   * `divisible` is false, every sharded dimension divisible by its axes' devices (as JAX
   * asks of jit's and shardMap's arguments and results; a constraint inside a program may
   * leave padding to the partitioner).
   */
  check(shape: readonly number[], where: string, divisible = true): void {
    if (this.spec.dims.length > shape.length) {
      throw new ShardingSpecError(`${where}: ${this} needs an array of rank at least ${this.spec.dims.length}; the array's shape is [${shape.join(", ")}]`, where);
    }
    if (divisible) shape.forEach((n, d) => {
      const k = this.shards(d);
      if (n % k !== 0) {
        throw new ShardingSpecError(`${where}: ${this} splits dimension ${d} over ${k} devices, which does not divide its size ${n} (shape [${shape.join(", ")}])`, where);
      }
    });
  }

  /** @internal Each of `rank` dimensions' axes (the spec, padded with unsharded dimensions). */
  dimAxes(rank: number): string[][] {
    return globalThis.Array.from({ length: rank }, (_, d) => [...(this.spec.dims[d] ?? [])]);
  }

  /** @internal The Shardy sharding of a rank-`rank` value (closed dimensions, as JAX writes them). */
  tensorSharding(rank: number): TensorSharding {
    return tensorSharding(MESH_NAME, this.dimAxes(rank));
  }

  toString(): string {
    return `NamedSharding(mesh=${this.mesh}, spec=${this.spec})`;
  }
}

/** The NamedSharding a Shardy sharding on `mesh` stands for (a dimension split along sub-axes, which propagation may choose, is shown unsharded). */
function namedShardingOf(s: TensorSharding | undefined, mesh: Mesh): NamedSharding {
  const dims = (s?.dimShardings ?? []).map((d) => (d.axes.some((a) => a.subAxis !== undefined) ? [] : d.axes.map((a) => a.name)));
  while (dims.length > 0 && dims.at(-1)!.length === 0) dims.pop();
  return new NamedSharding(mesh, new PartitionSpec(...dims));
}

// ---- shardings over pytrees

/** A sharding for every leaf (one value), or a tree of them matching a prefix of the pytree's structure (null: none given). */
export type ShardingsOption = NamedSharding | null | readonly ShardingsOption[] | { readonly [key: string]: ShardingsOption };
/** The same for PartitionSpecs (shardMap's inSpecs and outSpecs). */
export type SpecsOption = PartitionSpec | readonly SpecsOption[] | { readonly [key: string]: SpecsOption };

const leafCount = (def: TreeDef): number =>
  def.kind === "leaf" ? 1 : def.kind === "none" ? 0 : def.children.reduce((n, c) => n + leafCount(c), 0);

/** The value `prefix` gives each leaf of the tree `def` (JAX's prefix broadcasting: a single value stands for a whole subtree). */
function perLeaf<T>(prefix: unknown, def: TreeDef, isValue: (x: unknown) => x is T, where: string, path = ""): (T | undefined)[] {
  if (prefix === null || prefix === undefined) return new globalThis.Array<T | undefined>(leafCount(def)).fill(undefined);
  if (isValue(prefix)) return new globalThis.Array<T>(leafCount(def)).fill(prefix);
  const at = path === "" ? "" : ` at ${path}`;
  if (globalThis.Array.isArray(prefix)) {
    if (def.kind !== "list" || def.children.length !== prefix.length) {
      throw new ShardingSpecError(`${where}: a list of ${prefix.length}${at} does not match the values there (${def.kind === "list" ? `a list of ${def.children.length}` : def.kind})`, where);
    }
    return def.children.flatMap((c, i) => perLeaf(prefix[i], c, isValue, where, `${path}[${i}]`));
  }
  if (typeof prefix === "object") {
    const keys = Object.keys(prefix).sort();
    if (def.kind !== "dict" || keys.join(",") !== def.keys.join(",")) {
      throw new ShardingSpecError(`${where}: an object with keys ${keys.join(", ")}${at} does not match the values there`, where);
    }
    return def.children.flatMap((c, i) => perLeaf((prefix as Record<string, unknown>)[keys[i]!], c, isValue, where, `${path}.${keys[i]}`));
  }
  throw new ShardingSpecError(`${where}: ${String(prefix)}${at} is not a sharding`, where);
}

const isNamedSharding = (x: unknown): x is NamedSharding => x instanceof NamedSharding;
const isPartitionSpec = (x: unknown): x is PartitionSpec => x instanceof PartitionSpec;
const namedShardingsIn = (tree: unknown): NamedSharding[] => treeFlatten(tree, isNamedSharding)[0].filter(isNamedSharding);

// ---- device_put and with_sharding_constraint

/** jax.device_put(x, sharding): `x` as an array carrying `sharding` (a copy: arrays are values). */
export function devicePut(x: ArrayLike, sharding: NamedSharding): Array {
  const v = asArrayValue(x, undefined, "devicePut");
  if (!(v instanceof Array)) throw new FrontendError("devicePut: the array is traced; use lax.withShardingConstraint inside a transformation", "devicePut");
  sharding.check(v.shape, "devicePut");
  return new Array(v.aval, defaultDevice().bufferFromLiteral(v.toLiteral()), sharding);
}

/**
 * jax.lax.with_sharding_constraint: inside jit, `sdy.sharding_constraint` (propagation
 * must shard the value so; it differs from the rest of the program where it must);
 * outside, devicePut. `x` may be a pytree, with one sharding or a tree of them.
 */
export function withShardingConstraint<T>(x: T, sharding: ShardingsOption): T {
  const [leaves, def] = treeFlatten(x);
  const shardings = perLeaf(sharding, def, isNamedSharding, "withShardingConstraint");
  return treeUnflatten(def, leaves.map((leaf, i) => {
    const v = asArrayValue(leaf as ArrayLike, undefined, "withShardingConstraint");
    const s = shardings[i];
    if (s === undefined) return v;
    if (v instanceof Array) return devicePut(v, s);
    s.check(v.shape, "withShardingConstraint", false);
    return bind1("shardingConstraint", [v], { mesh: s.mesh.axes, dims: s.dimAxes(v.ndim) });
  })) as T;
}

// ---- jit with shardings

/** The one mesh of a program's shardings (a ShardingSpecError for two). */
function commonMesh(shardings: readonly NamedSharding[], where: string): Mesh {
  const first = shardings[0];
  if (first === undefined) throw new ShardingSpecError(`${where}: no sharding names a mesh (give inShardings or outShardings a NamedSharding, or pass arrays that carry one)`, where);
  for (const s of shardings) {
    if (s.mesh !== first.mesh) throw new ShardingSpecError(`${where}: a program runs on one mesh; the shardings name ${first.mesh} and ${s.mesh} (two Mesh objects)`, where);
  }
  return first.mesh;
}

/** A jit with shardings: each call resolves to the results; `lower` gives the module (`asText()`: its StableHLO with the sdy attributes). */
export interface ShardedJitted<F extends (...args: never[]) => unknown> {
  (...args: Parameters<F>): Promise<ReturnType<F>>;
  lower(...args: Parameters<F>): ShardedLowered;
}

/** A traced sharded program. */
export class ShardedLowered {
  constructor(/** @internal */ readonly lowered: Lowered, readonly mesh: Mesh) {}

  get module(): HloModule {
    return this.lowered.module;
  }

  /** The program as StableHLO text, with Shardy's attributes as JAX writes them (before propagation). */
  asText(): string {
    return printStableHlo(this.lowered.module);
  }

  /** Partitions the program (Shardy's passes) and compiles the per-device program on the mesh's client. */
  async compile(): Promise<ShardedCompiled> {
    const partitioned = partition(this.lowered.module);
    const executable = await this.mesh.client.compile(partitioned.entry, {
      partitions: partitioned.deviceCount, deviceAssignment: [this.mesh.devices.map((d) => d.id)],
    });
    return new ShardedCompiled(this, partitioned, executable);
  }
}

/** A partitioned, compiled program: call it (asynchronously) with arguments of the signature it was traced for. */
export class ShardedCompiled {
  /** The sharding of each result leaf, after propagation. */
  readonly outShardings: readonly NamedSharding[];

  constructor(private readonly lowered: ShardedLowered, readonly partitioned: PartitionedProgram, readonly executable: LoadedExecutable) {
    this.outShardings = partitioned.outputs.map((o) => namedShardingOf(o.sharding, lowered.mesh));
  }

  async call(...args: unknown[]): Promise<unknown> {
    const { signature, module } = this.lowered.lowered;
    const { leaves, key } = flattenArgs(args, signature.staticArgnums);
    if (key !== signature.key) throw new FrontendError(`jit: called with the signature ${key}, but compiled for ${signature.key}`, "jit");
    const literals = leaves.map((l) => {
      if (!(l instanceof Array)) throw new FrontendError("jit: a sharded program's arguments must be concrete arrays, not values traced by a transformation", "jit");
      return l.toLiteral();
    });
    const client = this.lowered.mesh.client;
    const buffers = await client.execute(this.executable, splitArguments(this.partitioned, literals));
    const pieces = await Promise.all(buffers.map((b) => b.toLiteral()));
    for (const b of buffers) b.delete();
    const results = assembleResults(this.partitioned, pieces);
    if (results.length !== signature.outAvals.length) throw new FrontendError(`jit: ${module.entry.name} returned ${results.length} values, expected ${signature.outAvals.length}`, "jit");
    const device = defaultDevice();
    return treeUnflatten(signature.outDef, results.map((r, i) => new Array(signature.outAvals[i]!, device.bufferFromLiteral(r), this.outShardings[i])));
  }
}

/**
 * The programs a sharded jit traces, by their builders' list of meshes (which a builder
 * shares with its sub-builders): shardMap is staged only into those, since a plain jit
 * runs on one device.
 */
const shardedPrograms = new WeakSet<readonly unknown[]>();

/** The plan of a sharded trace: inShardings (else the arguments' own shardings), outShardings, on their one mesh. */
function planFor(options: ShardedJitOptions, leaves: readonly ArrayBase[], staticArgnums: readonly number[], args: readonly unknown[]): { plan: ShardingPlan; mesh: Mesh } {
  const [, def] = treeFlatten(args.map((a, i) => (staticArgnums.includes(i) ? null : a)));
  const given = perLeaf(options.inShardings, def, isNamedSharding, "jit: inShardings");
  const argShardings = given.map((s, i) => s ?? (leaves[i] instanceof Array ? leaves[i].sharding : undefined));
  const mesh = commonMesh([...argShardings.filter(isNamedSharding), ...namedShardingsIn(options.outShardings)], "jit");
  argShardings.forEach((s, i) => s?.check(leaves[i]!.shape, `jit: argument leaf ${i} (${avalString(leaves[i]!.aval)})`));
  const plan: ShardingPlan = {
    declareMesh: (b: XlaBuilder) => {
      declareMesh(b, mesh.axes, "jit");
      shardedPrograms.add(b.meshes);
    },
    argShardings: argShardings.map((s, i) => s?.tensorSharding(leaves[i]!.ndim)),
    resultShardings: (outDef, avals) => perLeaf(options.outShardings, outDef, isNamedSharding, "jit: outShardings").map((s, i) => {
      s?.check(avals[i]!.shape, `jit: result leaf ${i} (${avalString(avals[i]!)})`);
      return s?.tensorSharding(avals[i]!.shape.length);
    }),
  };
  return { plan, mesh };
}

/** @internal jit(f, { inShardings, outShardings }) (jit.ts hands such calls here). */
export function shardedJit<F extends (...args: never[]) => unknown>(f: F, options: ShardedJitOptions): ShardedJitted<F> {
  const staticArgnums = argnumList(options.staticArgnums);
  if (argnumList(options.donateArgnums).length > 0) {
    throw new FrontendError("jit: donateArgnums is not supported with shardings yet (the devices do not keep the arguments' pieces between calls)", "jit", "donateArgnums");
  }
  const lower = (...args: unknown[]): ShardedLowered => {
    const { leaves } = flattenArgs(args, staticArgnums);
    const { plan, mesh } = planFor(options, leaves, staticArgnums, args);
    return new ShardedLowered(traceToModule(f, args, staticArgnums, [], plan), mesh);
  };
  const cache = new Map<string, Promise<ShardedCompiled>>();
  const call = async (...args: unknown[]): Promise<unknown> => {
    const { leaves, key } = flattenArgs(args, staticArgnums);
    if (transformationActive() || leaves.some((l) => l instanceof Tracer)) {
      throw new FrontendError("jit: a jit with shardings is a program of its own, called asynchronously: call it outside other transformations " +
        "(inside them, use lax.withShardingConstraint)", "jit");
    }
    // The arguments' own shardings and their meshes are part of the signature.
    const shardingKey = leaves.map((l) => (l instanceof Array && l.sharding !== undefined ? `${l.sharding.mesh.id}:${l.sharding.spec}` : "-")).join(",");
    const fullKey = `${key}|${shardingKey}`;
    let compiled = cache.get(fullKey);
    if (compiled === undefined) {
      compiled = Promise.resolve().then(() => lower(...args).compile());
      cache.set(fullKey, compiled);
      compiled.catch(() => cache.delete(fullKey));
    }
    return (await compiled).call(...args);
  };
  return Object.assign(call, { lower }) as unknown as ShardedJitted<F>;
}

// ---- shard_map and collectives

export interface ShardMapOptions {
  readonly mesh: Mesh;
  /** Each argument's spec (one for all, or a list with one per argument, or trees of them): its pieces along the mesh axes. */
  readonly inSpecs: SpecsOption;
  /** Each result's spec: how the devices' results assemble into the global result. */
  readonly outSpecs: SpecsOption;
}

/** The shardMap bodies being traced, innermost last: their trace and mesh (for psum's groups). */
const shardMapScopes: { readonly trace: JitTrace; readonly mesh: Mesh }[] = [];

/**
 * jax.shard_map: `f` runs on each device's pieces of the arguments (split as `inSpecs`
 * say, over every mesh axis), and its results are the pieces of the global results
 * (`outSpecs`). Inside jit (a jit with shardings) it is an `sdy.manual_computation`;
 * called outside jit, it runs as a jit with shardings of its own (and resolves
 * asynchronously). Inside `f`, `lax.psum(x, axisName)` and its kin reduce across the
 * devices along mesh axes.
 */
export function shardMap<F extends (...args: never[]) => unknown>(f: F, options: ShardMapOptions): (...args: Parameters<F>) => ReturnType<F> | Promise<ReturnType<F>> {
  const { mesh, inSpecs, outSpecs } = options;
  if (!(mesh instanceof Mesh)) throw new ShardingSpecError("shardMap: options.mesh must be a Mesh", "shardMap", "mesh");
  const staged = (...args: unknown[]): unknown => {
    const parent = innermostTrace();
    if (!(parent instanceof JitTrace)) {
      throw new FrontendError(`shardMap: under ${parent?.kind ?? "no transformation"}; shardMap runs inside jit, or on its own (not under grad or vmap yet)`, "shardMap");
    }
    return stageShardMap(parent, f as unknown as (...a: unknown[]) => unknown, mesh, inSpecs, outSpecs, args);
  };
  let eager: ShardedJitted<(...a: unknown[]) => unknown> | undefined;
  return ((...args: unknown[]) => {
    if (transformationActive()) return staged(...args);
    // Outside jit: a program of its own, whose arguments carry the shardings inSpecs give them.
    const [leaves, def] = treeFlatten(args);
    const specs = perLeaf(inSpecs, def, isPartitionSpec, "shardMap: inSpecs");
    const placed = leaves.map((l, i) => (specs[i] === undefined ? l : devicePut(l as ArrayLike, new NamedSharding(mesh, specs[i]!))));
    eager ??= shardedJit((...a: unknown[]) => staged(...a), { inShardings: null });
    return eager(...(treeUnflatten(def, placed) as unknown[]));
  }) as (...args: Parameters<F>) => ReturnType<F> | Promise<ReturnType<F>>;
}

/** `v` as a value of the jit trace `parent`. */
function liftedTo(parent: JitTrace, v: ArrayBase): JitTracer {
  if (v instanceof JitTracer && v.trace === parent) return v;
  if (v instanceof Tracer) throw new FrontendError(`shardMap: an argument is a value of ${v.trace.kind} inside the jit that calls shardMap (not supported yet)`, "shardMap");
  return parent.pure(v as Array);
}

function stageShardMap(parent: JitTrace, f: (...a: unknown[]) => unknown, mesh: Mesh, inSpecs: SpecsOption, outSpecs: SpecsOption, args: readonly unknown[]): unknown {
  const b = parent.builder;
  if (!shardedPrograms.has(b.meshes)) {
    throw new FrontendError("shardMap: inside a jit without shardings, which runs on one device: give that jit inShardings or outShardings, or call the shardMap function outside jit", "shardMap");
  }
  declareMesh(b, mesh.axes, "shardMap");
  const [rawLeaves, inDef] = treeFlatten(args);
  const operands = rawLeaves.map((l) => liftedTo(parent, asArrayValue(l as ArrayLike, undefined, "shardMap")));
  const specs = perLeaf(inSpecs, inDef, isPartitionSpec, "shardMap: inSpecs").map((s, i) => {
    if (s === undefined) throw new ShardingSpecError(`shardMap: inSpecs gives argument leaf ${i} no PartitionSpec (use P() for a replicated one)`, "shardMap", "inSpecs");
    const named = new NamedSharding(mesh, s);
    named.check(operands[i]!.shape, `shardMap: argument leaf ${i} (${avalString(operands[i]!.aval)})`);
    return named;
  });
  let outDef: TreeDef | undefined;
  let outAvals: Aval[] = [];
  // The out shardings' ranks are the body's results': the body fills them in (manualComputation reads them after it).
  const outShardings: TensorSharding[] = [];
  const results = manualComputation(
    operands.map((o) => o.op), specs.map((s, i) => s.tensorSharding(operands[i]!.ndim)), outShardings, [...mesh.axisNames],
    (sub, ...locals) => withTrace((level) => bodyTrace(level, sub), (trace) => {
      shardMapScopes.push({ trace, mesh });
      try {
        const ins = locals.map((op, i) => new JitTracer(trace, op, { ...operands[i]!.aval, shape: [...op.arrayShape.dimensions] }));
        const [outLeaves, def] = treeFlatten(f(...(treeUnflatten(inDef, ins) as unknown[])));
        outDef = def;
        const outs = outLeaves.map((o) => {
          const v = asArrayValue(o as ArrayLike, undefined, "shardMap result");
          if (v instanceof JitTracer && v.trace === trace) return v;
          if (v instanceof Array) return trace.pure(v);
          throw new FrontendError(`shardMap: the function returned a value of ${(v as Tracer).trace.kind}`, "shardMap");
        });
        outAvals = outs.map((o) => o.aval);
        perLeaf(outSpecs, def, isPartitionSpec, "shardMap: outSpecs").forEach((spec, i) => {
          if (spec === undefined) throw new ShardingSpecError(`shardMap: outSpecs gives result leaf ${i} no PartitionSpec (use P() for a replicated one)`, "shardMap", "outSpecs");
          const named = new NamedSharding(mesh, spec);
          if (spec.dims.length > outAvals[i]!.shape.length) named.check(outAvals[i]!.shape, `shardMap: result leaf ${i}`);
          outShardings.push(named.tensorSharding(outAvals[i]!.shape.length));
        });
        return outs.map((o) => o.op);
      } finally {
        shardMapScopes.pop();
      }
    }),
  );
  return treeUnflatten(outDef!, results.map((op, i) => new JitTracer(parent, op, { ...outAvals[i]!, shape: [...op.arrayShape.dimensions] })));
}

/** The trace of a shardMap body: the enclosing program's traced values may not be closed over (pass them as arguments). */
function bodyTrace(level: number, b: XlaBuilder): JitTrace {
  const trace = new JitTrace(level, b);
  trace.lift = (x: Tracer): JitTracer => {
    throw new FrontendError(`shardMap: the function closes over a traced value of the enclosing ${x.trace.kind} (${avalString(x.aval)}); pass it as an argument with its spec`, "shardMap");
  };
  return trace;
}

let nextChannel = 1;

/** The device groups that differ only along `axes` of `mesh`: each a list of mesh positions (row-major), the groups of an all-reduce over those axes. */
export function axisGroups(mesh: Mesh, axes: readonly string[]): number[][] {
  const groups = new Map<string, number[]>();
  for (let position = 0; position < mesh.size; position++) {
    let rest = position;
    const key: number[] = [];
    for (let k = mesh.axisSizes.length - 1; k >= 0; k--) {
      const coordinate = rest % mesh.axisSizes[k]!;
      rest = Math.floor(rest / mesh.axisSizes[k]!);
      if (!axes.includes(mesh.axisNames[k]!)) key.push(coordinate);
    }
    const id = key.join(",");
    groups.set(id, [...(groups.get(id) ?? []), position]);
  }
  return [...groups.values()];
}

type Reduction = "add" | "maximum" | "minimum";

function collective(name: string, reduction: Reduction, x: ArrayLike, axisName: string | readonly string[]): ArrayBase {
  const scope = shardMapScopes.at(-1);
  if (scope === undefined) throw new FrontendError(`${name}: only inside a shardMap function (it reduces across the devices along mesh axes)`, name);
  const axes = typeof axisName === "string" ? [axisName] : [...axisName];
  const unknown = axes.find((a) => !scope.mesh.axisNames.includes(a));
  if (unknown !== undefined) throw new ShardingSpecError(`${name}: '${unknown}' is not an axis of ${scope.mesh} (its axes: ${scope.mesh.axisNames.join(", ")})`, name);
  const v = asArrayValue(x, undefined, name);
  if (v instanceof Tracer && !(v instanceof JitTracer && v.trace === scope.trace)) {
    throw new FrontendError(`${name}: the value is traced by ${v.trace.kind} inside shardMap (not supported yet)`, name);
  }
  const t = v instanceof JitTracer ? v : scope.trace.pure(v as Array);
  const b = scope.trace.builder;
  const op = allReduce(t.op, scalarReducer(b, reduction, t.op.arrayShape.elementType), {
    replicaGroups: axisGroups(scope.mesh, axes), channelId: nextChannel++, useGlobalDeviceIds: true,
  });
  return new JitTracer(scope.trace, op, { ...t.aval, dtype: dtypeOf(op.arrayShape.elementType) });
}

/** jax.lax.psum: the sum over the devices along `axisName` (one mesh axis or several), inside shardMap. */
export const psum = (x: ArrayLike, axisName: string | readonly string[]): ArrayBase => collective("psum", "add", x, axisName);
/** jax.lax.pmax. */
export const pmax = (x: ArrayLike, axisName: string | readonly string[]): ArrayBase => collective("pmax", "maximum", x, axisName);
/** jax.lax.pmin. */
export const pmin = (x: ArrayLike, axisName: string | readonly string[]): ArrayBase => collective("pmin", "minimum", x, axisName);
/** jax.lax.pmean: psum divided by the number of devices along the axes. */
export function pmean(x: ArrayLike, axisName: string | readonly string[]): ArrayBase {
  const scope = shardMapScopes.at(-1);
  const sum = psum(x, axisName);
  const axes = typeof axisName === "string" ? [axisName] : axisName;
  const count = axes.reduce((n, a) => n * scope!.mesh.axisSizes[scope!.mesh.axisNames.indexOf(a)]!, 1);
  return lax.div(sum, count);
}
