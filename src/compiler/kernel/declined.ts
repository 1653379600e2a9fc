// How a code generator (of any backend) declines: it says why, and the program runs that
// step on the interpreter's kernel instead (the executor lists the reason in `dump`).
// Planners return a Declined; a renderer deep inside an emission throws a DeclinedError,
// which the kernel's entry point turns into a Declined.

import type { Instruction } from "../../ir/computation.js";
import { hasQuantization } from "../../types/shape.js";

/** A code generator that cannot (or should not) compile something says why; the executor then runs the interpreter's kernel. */
export interface Declined {
  readonly declined: string;
}

export function isDeclined<K extends object>(x: K | Declined): x is Declined {
  return (x as Declined).declined !== undefined;
}

/** Thrown by a renderer for an op or type it has no code for; caught where the kernel is emitted and returned as a Declined. */
export class DeclinedError extends Error {}

/** Declines from inside an emission: throws the DeclinedError that the kernel's entry point returns as a Declined. */
export function decline(why: string): never {
  throw new DeclinedError(why);
}

/** `generate()`, or the Declined of the DeclinedError it throws (any other error goes on). */
export function orDeclined<R>(generate: () => R): R | Declined {
  try {
    return generate();
  } catch (e) {
    if (e instanceof DeclinedError) return { declined: e.message };
    throw e;
  }
}

/**
 * Every backend's generators decline an op that takes or gives a quantized type: they
 * work on the stored integers and know nothing of scales and zero points.
 */
export function quantizedDeclined(inst: Instruction): Declined | undefined {
  if (!hasQuantization(inst.shape) && !inst.operands.some((o) => hasQuantization(o.shape))) return undefined;
  return { declined: "quantized types run on the interpreter's kernels (dequantize, compute, quantize)" };
}
