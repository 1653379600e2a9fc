// The reference interpreter: evaluates a computation instruction by instruction with
// the kernel table. It is the executable specification every faster back end is
// checked against, so it favours obviousness over speed.

import type { Computation, Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import { DeadlineError, ExecutionError, ResourceError } from "../types/errors.js";
import { checkFitsBudget, LITERAL_VALUES, MAX_CALL_DEPTH } from "../types/resource.js";
import type { Literal } from "../types/literal.js";
import { shapesEqual, shapeToString } from "../types/shape.js";
import { HostQueues, singleDeviceCollectives } from "./device_interfaces.js";
import type { Accumulation, CustomCallTarget, EvalContext, Kernel } from "./context.js";
import type { Mesh } from "../sharding/model.js";
import { KERNELS } from "./kernels/index.js";

export interface EvaluateOptions {
  replicaId?: number;
  partitionId?: number;
  replicaCount?: number;
  partitionCount?: number;
  deviceId?: number;
  collectives?: EvalContext["collectives"];
  host?: EvalContext["host"];
  /** CustomCall targets by name (e.g. a CustomCallRegistry). */
  customCalls?: ReadonlyMap<string, CustomCallTarget>;
  /** Device-to-device Send/Recv; by default a Send and a Recv of one channel pair up within this evaluation. */
  rngSeed?: bigint;
  /** Shardy meshes by name (`meshTable(module)`), for sdy.manual_computation bodies run device by device. */
  meshes?: ReadonlyMap<string, Mesh>;
  /**
   * When to give up, in `Date.now()` milliseconds: past it the evaluation stops with a
   * DeadlineError (a `while` whose condition never turns false is a valid program).
   */
  deadline?: number;
  /** How dot-like ops sum their products (default "xla-cpu"). */
  accumulation?: Accumulation;
}

/** Runs `computation` on `args` and returns its result (a tuple literal for tuple results). */
export function evaluate(computation: Computation, args: readonly Literal[], options: EvaluateOptions = {}): Literal {
  const ctx = createEvalContext(options);
  return ctx.call(computation, args);
}

/**
 * The context kernels run in, for a caller that runs kernels one by one (the compiled
 * backend's fallback steps): one context per execution, so stateful ops (`rng`) and
 * Send/Recv pairs see the whole execution.
 */
export function createEvalContext(options: EvaluateOptions = {}): EvalContext {
  const replicaId = options.replicaId ?? 0;
  const partitionId = options.partitionId ?? 0;
  const partitionCount = options.partitionCount ?? 1;
  const deviceId = options.deviceId ?? replicaId * partitionCount + partitionId;
  const ctx: EvalContext = {
    replicaId,
    partitionId,
    replicaCount: options.replicaCount ?? 1,
    partitionCount,
    deviceId,
    collectives: options.collectives ?? singleDeviceCollectives(deviceId),
    host: options.host ?? new HostQueues(),
    customCalls: options.customCalls ?? new Map(),
    rngSeed: options.rngSeed ?? 0n,
    accumulation: options.accumulation ?? "xla-cpu",
    ...(options.meshes !== undefined ? { meshes: options.meshes } : {}),
    call: (c, a) => {
      // Every loop iteration and region runs through here, so a runaway program is caught here.
      if (deadline !== undefined && Date.now() > deadline) throw new DeadlineError(`${c.name}: evaluation passed its deadline`);
      // Each nested call costs JavaScript stack: past the limit, a typed error instead of a RangeError.
      if (depth >= MAX_CALL_DEPTH) {
        throw new ExecutionError(`${c.name}: computations nest more than ${MAX_CALL_DEPTH} calls deep (call, while, conditional and reducer bodies count)`);
      }
      depth++;
      try {
        return run(c, a, ctx);
      } finally {
        depth--;
      }
    },
  };
  let depth = 0;
  const deadline = options.deadline;
  return ctx;
}

function run(computation: Computation, args: readonly Literal[], ctx: EvalContext): Literal {
  const params = computation.parameters;
  if (args.length !== params.length) {
    throw new ExecutionError(`${computation.name}: expects ${params.length} argument(s), got ${args.length}`);
  }
  params.forEach((p, i) => {
    if (!shapesEqual(p.shape, args[i]!.shape)) {
      throw new ExecutionError(
        `${computation.name}: argument ${i} has shape ${shapeToString(args[i]!.shape)}, expected ${shapeToString(p.shape)}`,
      );
    }
  });
  const values = new Map<Instruction, Literal>();
  for (const inst of computation.instructions) {
    if (inst.opcode === "parameter") {
      values.set(inst, args[(inst as Instruction<"parameter">).attrs.number]!.toDefaultLayout());
      continue;
    }
    const operands = inst.operands.map((o) => values.get(o)!);
    const kernel = KERNELS[inst.opcode] as Kernel<Opcode>;
    // The result must fit the memory budget before the kernel allocates it; so must the
    // JS arrays a kernel holds values in (Literal.values), named here by the instruction.
    checkFitsBudget(inst.shape, inst.name, `${computation.name}, instruction ${inst.name}`);
    try {
      values.set(inst, kernel(inst, operands, ctx));
    } catch (e) {
      if (e instanceof ResourceError && e.instruction === LITERAL_VALUES) throw new ResourceError(`${computation.name}, instruction ${inst.name}: ${e.message}`, inst.name, e.bytes);
      throw e;
    }
  }
  return values.get(computation.root)!;
}
