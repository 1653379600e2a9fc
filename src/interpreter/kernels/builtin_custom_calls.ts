// Custom-call targets every evaluation knows without registering them: the LAPACK FFI
// targets jaxlib exports for `jnp.linalg` on CPU (src/interpreter/lapack/), and the
// sharding and memory-placement markers XLA's SPMD partitioner and host offloading read,
// which on one device leave the value as it is, and XLA's ApproxTopK (approx_top_k.ts). Targets passed in
// EvaluateOptions.customCalls take precedence over these.

import { ExecutionError } from "../../types/errors.js";
import type { Literal } from "../../types/literal.js";
import { shapesEqual, shapeToString, type Shape } from "../../types/shape.js";
import type { CustomCallTarget } from "../context.js";
import { parseAttributeDictionary } from "../attribute_dictionary.js";
import { LAPACK_TARGETS } from "../lapack/targets.js";
import { approxTopK } from "./approx_top_k.js";

/** The FFI attribute dictionary's text: the typed-FFI backend config, or one given as `{...}` (an empty config has none). */
const ffiAttributeText = (backendConfig: string): string => (backendConfig.trim().startsWith("{") ? backendConfig : "");

/**
 * A marker that passes its one operand through on a single device. The result must have
 * the operand's type: a shard shape that differs from the full shape means the program
 * was meant to be partitioned first.
 */
function identityMarker(name: string): CustomCallTarget {
  return (operands: readonly Literal[], resultShape: Shape) => {
    if (operands.length !== 1) throw new ExecutionError(`custom call ${name}: expects 1 operand, got ${operands.length}`);
    const value = operands[0]!;
    if (!shapesEqual(value.shape, resultShape)) {
      throw new ExecutionError(`custom call ${name}: on one device the result must have the operand's type ${shapeToString(value.shape)}, ` +
        `the op declares ${shapeToString(resultShape)} (partition the program first, e.g. xlats partition)`);
    }
    return value;
  };
}

const MARKERS = ["Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement", "MoveToHost", "MoveToDevice"];

export const BUILTIN_CUSTOM_CALLS: ReadonlyMap<string, CustomCallTarget> = new Map<string, CustomCallTarget>([
  ...MARKERS.map((name) => [name, identityMarker(name)] as const),
  ["ApproxTopK", approxTopK],
  ...[...LAPACK_TARGETS].map(([name, target]) => [name, ((operands, resultShape, backendConfig) =>
    target.run(operands, resultShape, parseAttributeDictionary(ffiAttributeText(backendConfig), name))) as CustomCallTarget] as const),
]);
