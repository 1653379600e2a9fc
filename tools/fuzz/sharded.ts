// The sharded surface: the builder fuzzer's random programs (their refused steps
// skipped) on a random mesh of up to 8 devices, with random shardings of their
// arguments and results, partitioned (propagation, reshards, collectives, padding,
// global to local) and run on a client's devices (interpreter devices: what is under
// test is the partitioning and the runtime); each output compared with the
// unsharded program on the interpreter (float sums and dots within a rounding
// tolerance: their partial sums are combined in another order). A typed error of the
// partitioner (a sharding it refuses) counts as typed; a wrong answer, an untyped
// error, and a sharded run that does not finish while the interpreter's did are findings.

import { XlaBuilder, parameter, type XlaOp } from "../../src/builder/xla_builder.js";
import { unaryOp } from "../../src/builder/elementwise.js";
import { tuple } from "../../src/builder/control.js";
import { sharding } from "../../src/builder/sharding_spec.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import type { HloModule } from "../../src/ir/computation.js";
import { createClient, type Client } from "../../src/runtime/index.js";
import { partition } from "../../src/sdy/partition/index.js";
import { runPartitioned } from "../../src/sdy/partition/run.js";
import { meshTable } from "../../src/sharding/mesh.js";
import type { TensorSharding } from "../../src/sharding/model.js";
import { DeadlineError } from "../../src/types/errors.js";
import { Literal } from "../../src/types/literal.js";
import { arrayShape, type ArrayShape } from "../../src/types/shape.js";
import { ProgramMaker, programRandom } from "./builder.js";
import { failureOutcome, type Outcome, type SavedInput } from "./check_input.js";
import { compareLeaf, cones, elementTypeOf } from "./compare_compiled.js";
import { savedProgram } from "./compiled.js";
import type { Random } from "./mutate.js";

/** The most devices a random mesh has: the client of each worker has this many. */
export const SHARDED_DEVICES = 8;

/** Meshes to draw from: one and two axes, sizes that divide the small dimensions and sizes that do not. */
const MESHES: readonly (readonly [string, number][])[] = [
  [["x", 2]], [["x", 4]], [["x", 3]], [["x", 8]], [["x", 2], ["y", 2]], [["x", 2], ["y", 4]], [["x", 1], ["y", 2]], [["a", 4], ["b", 2]],
];

/** How long a sharded run of a program the interpreter ran may take before it counts as a hang. */
const RUN_DEADLINE_MS = 5_000;

/** A random sharding of `shape` on `mesh`: each axis on at most one dimension, or none; sometimes left unsharded. */
function randomSharding(rng: Random, mesh: string, axes: readonly (readonly [string, number])[], shape: ArrayShape): TensorSharding | undefined {
  if (rng.next() < 0.2) return undefined;
  const dims: string[][] = shape.dimensions.map(() => []);
  for (const [name] of axes) if (dims.length > 0 && rng.next() < 0.7) dims[rng.int(dims.length)]!.push(name);
  return sharding(mesh, dims);
}

/** One output as the root, several as a tuple (partition reads a root tuple of one array as one tuple result). */
const root = (b: XlaBuilder, outputs: readonly XlaOp[]): XlaOp => (outputs.length === 1 ? outputs[0]! : tuple(b, outputs));

/** Program `index` of the run with `seed` on its random mesh; refused steps and shardings skipped, so it is valid. */
export function shardedProgram(seed: number, index: number): { module: HloModule; args: Literal[] } {
  const rng = programRandom(seed, index);
  const b = new XlaBuilder(`fuzz_sharded_${index}`);
  const axes = rng.pick(MESHES);
  const size = axes.reduce((a, [, n]) => a * n, 1);
  const ids = rng.next() < 0.2 ? Array.from({ length: size }, (_, i) => size - 1 - i) : undefined;
  const mesh = b.mesh("mesh", axes, ids);
  const args: Literal[] = [];
  const maker = new ProgramMaker(rng, b, args, (shape) => randomSharding(rng, mesh, axes, shape));
  maker.validSteps(1 + rng.int(6));
  const outputs: XlaOp[] = maker.outputs();
  const resultShardings = outputs.map((o) => (o.shape.kind === "array" ? randomSharding(rng, mesh, axes, o.shape) : undefined));
  try {
    return { module: b.buildModule(root(b, outputs), { resultShardings }), args };
  } catch {
    // A result sharding the rules refuse: the same program without result shardings.
    return { module: b.buildModule(root(b, outputs)), args };
  }
}

export function shardedInput(seed: number, index: number): SavedInput {
  const { module, args } = shardedProgram(seed, index);
  return savedProgram(`sharded-${index}`, module, args);
}

/** Checks sharded programs on one client of SHARDED_DEVICES devices, made and warmed up before the first and after a hang. */
export class ShardedChecker {
  private client: Client | undefined;

  constructor(private readonly seed: number) {}

  /**
   * The client, its devices warmed up by a first run on all of them: a device's first
   * run loads the library in its worker (seconds on a loaded machine), which must not
   * count against a program's deadline.
   */
  async prepare(): Promise<Client> {
    if (this.client !== undefined) return this.client;
    const client = await createClient({ backend: "interpreter", deviceCount: SHARDED_DEVICES, collectiveTimeoutMs: RUN_DEADLINE_MS });
    const b = new XlaBuilder("warm_up");
    const mesh = b.mesh("mesh", { x: SHARDED_DEVICES });
    const x = parameter(b, 0, arrayShape("f32", [SHARDED_DEVICES]), { name: "x", sharding: sharding(mesh, [["x"]]) });
    await runPartitioned(client, partition(b.buildModule(unaryOp("negate", x))), [Literal.zeros(arrayShape("f32", [SHARDED_DEVICES]))]);
    this.client = client;
    return client;
  }

  async check(index: number): Promise<Outcome> {
    let phase = "build";
    try {
      const { module, args } = shardedProgram(this.seed, index);
      phase = "evaluate";
      const expected = evaluate(module.entry, args, { meshes: meshTable(module), deadline: Date.now() + RUN_DEADLINE_MS });
      phase = "partition";
      const program = partition(module);
      phase = "run";
      const client = await this.prepare();
      let actual: Literal[];
      try {
        actual = await runPartitioned(client, program, args, { deadline: Date.now() + RUN_DEADLINE_MS });
      } catch (e) {
        if (!(e instanceof DeadlineError)) throw e;
        void this.close();
        return { status: "mismatch", phase, message: `the sharded run did not finish in ${RUN_DEADLINE_MS} ms (the interpreter's did)`, input: shardedInput(this.seed, index) };
      }
      const top = module.entry.root;
      const leaves = top.opcode === "tuple" ? top.operands : [top];
      const wants = top.opcode === "tuple" ? expected.elements : [expected];
      const cone = cones(module.entry);
      for (let k = 0; k < leaves.length; k++) {
        const leaf = leaves[k]!;
        const t = elementTypeOf(leaf);
        const g = actual[k];
        const w = wants[k]!;
        if (t === undefined) continue;
        const diff = g === undefined || g.dimensions.join() !== w.dimensions.join() || g.shape.kind !== "array" || g.arrayShape.elementType !== t
          ? `result ${k} is ${g === undefined ? "missing" : JSON.stringify(g.shape)}`
          : compareLeaf(t, cone.get(leaf)!, w.values(), g.values(), { compared: 0, unbounded: 0 });
        if (diff !== undefined) return { status: "mismatch", phase, message: `result ${k}: ${diff}`, input: shardedInput(this.seed, index) };
      }
      return { status: "ok" };
    } catch (e) {
      return failureOutcome(e, phase);
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await client.close();
  }
}
