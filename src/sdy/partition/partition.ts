// The partition step: a module whose values carry shardings becomes the program each
// device of its mesh runs, with what it takes to split global arguments into per-device
// ones and assemble global results from the devices' results. The passes are Shardy's,
// taken from Shardy's passes (sdy/passes/index.ts) by name and run in the partitioner's order:
//
//   propagation → insert explicit reshards → resolve permutation factors → reshards
//   to collectives → pad for divisibility → global to local → drop shardings and meshes
//
// A step whose pass this build does not register is skipped and named in `skipped`;
// then the program must not need it (checked: a program that needs a reshard or an
// all_reduce is refused, naming the op, rather than partitioned into a wrong one).

import { checkDeviceCount } from "../../types/resource.js";
import type { Pass } from "../../passes/pass.js";
import { parsePassOptions } from "../../passes/pass_options.js";
import { SDY_PASSES } from "../passes/index.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import type { Literal } from "../../types/literal.js";
import { isArray, shapeToString, type ArrayShape } from "../../types/shape.js";
import { ShardingError } from "../../sharding/axis.js";
import { meshSize } from "../../sharding/mesh.js";
import type { Mesh, TensorSharding } from "../../sharding/model.js";
import { resolveMesh } from "../../sharding/sharding.js";
import { findNeededReshard } from "./reshard_check.js";
import { assemble, pieceOf } from "./shards.js";

/** One argument or result of the entry: its global and per-device shapes and its sharding. */
export interface ValueLayout {
  readonly global: ArrayShape;
  readonly local: ArrayShape;
  readonly sharding: TensorSharding | undefined;
}

export interface PartitionedProgram {
  /** The per-device program (local shapes, XLA collectives, no shardings). */
  readonly module: HloModule;
  readonly entry: Computation;
  /** The program after propagation, before it was made per-device (for reports). */
  readonly global: HloModule;
  readonly mesh: Mesh;
  readonly meshName: string | undefined;
  /** Devices the program runs on: one partition per device of the mesh. */
  readonly deviceCount: number;
  readonly inputs: readonly ValueLayout[];
  readonly outputs: readonly ValueLayout[];
  /** The passes run, in order. */
  readonly passes: readonly string[];
  /** Pipeline steps this build has no pass for (the program was checked not to need them). */
  readonly skipped: readonly string[];
}

export interface PartitionOptions {
  /** The entry function (default: the module's entry). */
  readonly entry?: string;
  /** Pads, slices, reverses and splitting reshapes along sharded dimensions exchange halos with neighbouring devices instead of being replicated (Shardy's enable-halo-exchange). */
  readonly enableHaloExchange?: boolean;
}

/** Whether `module` asks to be partitioned: it declares a mesh and some value of it carries a sharding. */
export function isShardedModule(module: HloModule): boolean {
  if ((module.meshes ?? []).length === 0) return false;
  return module.computations.some((c) => (c.argShardings ?? []).some((s) => s !== undefined)
    || (c.resultShardings ?? []).some((s) => s !== undefined)
    || c.instructions.some((i) => i.sdySharding !== undefined));
}

function passOf(name: string, options = ""): Pass | undefined {
  const registration = SDY_PASSES.find((p) => p.name === name);
  return registration?.create(parsePassOptions(registration, options));
}

function run(pass: Pass, module: HloModule, log: string[]): HloModule {
  log.push(pass.name);
  return pass.run(module, { verify: false, log: () => {} });
}

function entryOf(module: HloModule, name: string | undefined): Computation {
  const c = name === undefined ? module.entry : (module.functions ?? module.computations).find((f) => f.name === name);
  if (c === undefined) throw new ShardingError(`partition: the module has no function named '${name}'`);
  return c;
}

/** The mesh the entry's shardings are on (one mesh for all of them: the devices the program runs on). */
function entryMesh(module: HloModule, entry: Computation): { mesh: Mesh; name: string | undefined } {
  const meshes = module.meshes ?? [];
  const refs = [...(entry.argShardings ?? []), ...(entry.resultShardings ?? [])].filter((s): s is TensorSharding => s !== undefined);
  const first = refs[0]?.meshOrRef ?? meshes[0]?.name;
  if (first === undefined) throw new ShardingError("partition: the module declares no mesh");
  const mesh = resolveMesh(first, meshes);
  for (const s of refs) {
    const other = resolveMesh(s.meshOrRef, meshes);
    if (meshSize(other) !== meshSize(mesh)) throw new ShardingError(`partition: ${entry.name}'s arguments and results are on meshes of ${meshSize(mesh)} and ${meshSize(other)} devices`);
  }
  if (mesh.deviceIds !== undefined && [...mesh.deviceIds].sort((a, b) => a - b).some((d, i) => d !== i)) {
    throw new ShardingError(`partition: the mesh's device_ids [${mesh.deviceIds.join(", ")}] are not the devices 0..${meshSize(mesh) - 1}`);
  }
  return { mesh, name: typeof first === "string" ? first : undefined };
}

/**
 * The entry's results: its root, or the root tuple's operands (`count`: how many the
 * global entry returns; without result shardings to count, a root tuple's operands are
 * the results, as the StableHLO printer writes them).
 */
function resultValues(c: Computation, count = c.resultShardings?.length ?? (c.root.opcode === "tuple" ? c.root.operands.length : 1)): readonly Instruction[] {
  return count > 1 || (c.root.opcode === "tuple" && c.root.shape.kind === "tuple" && count !== 1) ? c.root.operands : [c.root];
}

function arrayOf(shape: Instruction["shape"], what: string): ArrayShape {
  if (!isArray(shape)) throw new ShardingError(`partition: ${what} is ${shapeToString(shape)}, not an array (tuples are not split across devices)`);
  return shape;
}

/** Partitions `module` into the program each device of its mesh runs. */
export function partition(module: HloModule, options: PartitionOptions = {}): PartitionedProgram {
  const log: string[] = [];
  const skipped: string[] = [];
  const step = (m: HloModule, name: string, opts = ""): HloModule => {
    const pass = passOf(name, opts);
    if (pass === undefined) {
      skipped.push(name);
      return m;
    }
    return run(pass, m, log);
  };
  let m = step(module, "sdy-propagation-pipeline");
  if (!SDY_PASSES.some((p) => p.name === "sdy-insert-explicit-reshards")) {
    skipped.push("sdy-insert-explicit-reshards");
    const entry = entryOf(m, options.entry);
    const needed = findNeededReshard(entry, m.meshes ?? []);
    if (needed !== undefined) throw new ShardingError(`partition: ${needed}; this build has no -sdy-insert-explicit-reshards pass to insert it`);
  } else {
    m = step(m, "sdy-insert-explicit-reshards", "enable-full-version=true");
  }
  m = step(m, "sdy-resolve-permutation-factors", options.enableHaloExchange === true ? "enable-halo-exchange=true" : "");
  if (skipped.includes("sdy-resolve-permutation-factors")) {
    const moved = findNeededReshard(entryOf(m, options.entry), m.meshes ?? [], { permutationsOnly: true });
    if (moved !== undefined) throw new ShardingError(`partition: ${moved}; this build has no -sdy-resolve-permutation-factors pass to resolve it`);
  }
  m = step(m, "sdy-reshard-to-collectives");
  if (skipped.includes("sdy-reshard-to-collectives") && m.computations.some((c) => c.instructions.some((i) => i.opcode === "sdyReshard"))) {
    throw new ShardingError("partition: the program needs reshards (sdy.reshard) and this build has no -sdy-reshard-to-collectives pass to turn them into collectives");
  }
  m = step(m, "sdy-pad-for-divisibility");
  const global = m;
  const globalEntry = entryOf(global, options.entry);
  const { mesh, name: meshName } = entryMesh(global, globalEntry);
  const deviceCount = meshSize(mesh);
  // Every device gets its own program, arguments and worker: refused before any is made.
  checkDeviceCount(deviceCount, `partition: mesh ${meshName === undefined ? "(inline)" : `@${meshName}`}`);
  m = step(m, "sdy-convert-global-to-local", `partition-count=${deviceCount}`);
  m = step(m, "sdy-drop-sharding-and-mesh");
  for (const required of ["sdy-convert-global-to-local", "sdy-drop-sharding-and-mesh"]) {
    if (skipped.includes(required)) throw new ShardingError(`partition: this build has no -${required} pass`);
  }
  const entry = entryOf(m, options.entry);
  const inputs = globalEntry.parameters.map((p, i): ValueLayout => ({
    global: arrayOf(p.shape, `argument ${i}`), local: arrayOf(entry.parameters[i]!.shape, `argument ${i}`), sharding: globalEntry.argShardings?.[i],
  }));
  const globalResults = resultValues(globalEntry);
  // The per-device entry has no result shardings left to count its results by.
  const localResults = resultValues(entry, globalResults.length);
  const outputs = globalResults.map((r, i): ValueLayout => ({
    global: arrayOf(r.shape, `result ${i}`), local: arrayOf(localResults[i]!.shape, `result ${i}`), sharding: globalEntry.resultShardings?.[i],
  }));
  return { module: m, entry, global, mesh, meshName, deviceCount, inputs, outputs, passes: log, skipped };
}

/** The arguments of each device (`[device][argument]`) from the global arguments. */
export function splitArguments(p: PartitionedProgram, args: readonly Literal[]): Literal[][] {
  if (args.length !== p.inputs.length) throw new ShardingError(`partition: ${p.entry.name} takes ${p.inputs.length} argument(s), got ${args.length}`);
  args.forEach((a, i) => {
    const want = p.inputs[i]!.global;
    if (!isArray(a.shape) || a.shape.elementType !== want.elementType || a.shape.dimensions.join() !== want.dimensions.join()) {
      throw new ShardingError(`partition: argument ${i} is ${shapeToString(a.shape)}, the program takes ${shapeToString(want)}`);
    }
  });
  return Array.from({ length: p.deviceCount }, (_, device) =>
    args.map((a, i) => pieceOf(a, p.inputs[i]!.sharding, p.mesh, device, p.inputs[i]!.local)));
}

/** The global results from each device's result (a tuple when the entry returns several values). */
export function assembleResults(p: PartitionedProgram, perDevice: readonly Literal[]): Literal[] {
  const pieces = perDevice.map((r) => (p.outputs.length === 1 && r.shape.kind !== "tuple" ? [r] : r.elements));
  return p.outputs.map((o, i) => assemble(pieces.map((list) => list[i]!), o.sharding, p.mesh, o.global, `result ${i}`));
}
