// What a kernel may use besides its operands: the device it runs on, the host queues,
// the registered custom-call targets, the collective rendezvous, and a way to call
// sub-computations.

import type { Computation, Instruction } from "../ir/computation.js";
import type { OpAttributes, Opcode } from "../ir/opcodes.js";
import type { Literal } from "../types/literal.js";
import type { Shape } from "../types/shape.js";
import type { Mesh } from "../sharding/model.js";

// The device interfaces are the runtime's (src/runtime/device_interfaces.ts), with their
// one-device defaults; re-exported here so kernels and older imports keep one place to
// look. The runtime file imports nothing from the interpreter, so there is no cycle.
export type { CollectiveBackend, FastReduction, HostTransfers } from "./device_interfaces.js";
export { HostQueues, singleDeviceCollectives } from "./device_interfaces.js";
import type { CollectiveBackend, HostTransfers } from "./device_interfaces.js";

/** What a custom-call target may use besides its operands: the op's called computations. */
export interface CustomCallContext {
  readonly calledComputations: readonly Computation[];
  /** Runs a computation (e.g. one of `calledComputations`) on the given arguments. */
  call(computation: Computation, args: readonly Literal[]): Literal;
}

/** A user-registered CustomCall target: gets the operands and the expected result shape. */
export type CustomCallTarget = (
  operands: readonly Literal[], resultShape: Shape, backendConfig: string, context: CustomCallContext,
) => Literal;

/**
 * How dot-like ops (dot, dot_general, convolution and their variants) sum products:
 * - "xla-cpu" (the default): as XLA's CPU backend, one fused multiply-add per step in
 *   f32/f64 (see kernels/arith.ts);
 * - "stablehlo-reference": as StableHLO's reference interpreter (`stablehlo-translate
 *   --interpret`), in the result element type, the product and the sum each rounded
 *   to it. Tests whose expected values come from that interpreter compare exactly
 *   against this (Shardy's executable tests check a sharded dot against the sequential
 *   one with expect_eq: with unfused steps a partial sum per device plus an all-reduce
 *   rounds as the sequential sum does, with FMA it does not).
 */
export type Accumulation = "xla-cpu" | "stablehlo-reference";

export const ACCUMULATIONS: readonly Accumulation[] = ["xla-cpu", "stablehlo-reference"];

export interface EvalContext {
  readonly replicaId: number;
  readonly partitionId: number;
  readonly replicaCount: number;
  readonly partitionCount: number;
  /** This device's global id (replicaId * partitionCount + partitionId unless the assignment says otherwise). */
  readonly deviceId: number;
  readonly collectives: CollectiveBackend;
  readonly host: HostTransfers;
  readonly customCalls: ReadonlyMap<string, CustomCallTarget>;
  /** Runs a sub-computation (reducer, body, branch, comparator) on the given arguments. */
  call(computation: Computation, args: readonly Literal[]): Literal;
  /** State of the stateful `rng` op: advanced by every RngUniform/RngNormal/RngBernoulli. */
  rngSeed: bigint;
  /** Shardy meshes by name (the module's `sdy.mesh` ops), for sdy.manual_computation run device by device. */
  readonly meshes?: ReadonlyMap<string, Mesh>;
  /** How dot-like ops sum their products. */
  readonly accumulation: Accumulation;
}

export type Kernel<O extends Opcode> = (inst: Instruction<O>, operands: readonly Literal[], ctx: EvalContext) => Literal;

export type KernelTable<O extends Opcode> = { readonly [K in O]: Kernel<K> };

export type AttrsOf<O extends Opcode> = OpAttributes[O];
