// Custom-call targets every evaluation knows without registering them: the LAPACK FFI
// targets jaxlib exports for `jnp.linalg` on CPU and GPU, with XLA's Qr and
// ProductOfElementaryHouseholderReflectors (src/interpreter/lapack/), and the
// sharding and memory-placement markers XLA's SPMD partitioner and host offloading read,
// which on one device leave the value as it is, XLA's ApproxTopK (approx_top_k.ts), XLA's
// 64-bit split and combine (x64_split.ts), and
// jaxlib's GPU Threefry kernel. Kernels
// compiled for one accelerator (Pallas, Triton) are known by name only, to say why they
// cannot run. Targets passed in EvaluateOptions.customCalls take precedence over these.

import { ExecutionError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { shapesEqual, shapeToString, type Shape } from "../../types/shape.js";
import type { CustomCallTarget } from "../context.js";
import { parseAttributeDictionary } from "../attribute_dictionary.js";
import { FfiCall } from "../lapack/ffi.js";
import { LAPACK_TARGETS } from "../lapack/targets.js";
import { approxTopK } from "./approx_top_k.js";
import { threefry2x32 } from "./prng.js";
import { X64_CUSTOM_CALLS } from "./x64_split.js";

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

/** Kernel targets whose backend config is machine code (or its IR) for one accelerator, and what wrote them. */
const ACCELERATOR_KERNELS: Readonly<Record<string, string>> = {
  tpu_custom_call: "a Pallas kernel compiled by Mosaic for TPUs",
  mosaic_gpu: "a Pallas kernel compiled by Mosaic GPU",
  mosaic_gpu_v2: "a Pallas kernel compiled by Mosaic GPU",
  "__gpu$xla.gpu.triton": "a Triton kernel (Pallas on GPUs, or jax-triton)",
  triton_kernel_call: "a Triton kernel (jax-triton)",
  triton_kernel_call_ffi: "a Triton kernel (Pallas on GPUs)",
};

function acceleratorKernel(name: string, what: string): CustomCallTarget {
  return () => {
    throw new ExecutionError(`custom call ${name}: ${what}; its body is code for that accelerator, which no xlats backend runs ` +
      "(export the function with the kernel in interpret mode, e.g. pallas_call(..., interpret=True), to get plain StableHLO)");
  };
}

/**
 * jaxlib's GPU kernel for jax.random's threefry2x32 (cu_/hip_threefry2x32_ffi, used with
 * jax_threefry_gpu_kernel_lowering): operands (k1, k2, x1, x2), u32 of one shape (JAX
 * broadcasts them first); results (y1, y2) = Threefry-2x32 of the counter (x1, x2) under
 * the key (k1, k2), element by element.
 */
function threefryKernel(name: string): CustomCallTarget {
  return (operands, resultShape) => {
    const call = new FfiCall(name, undefined, operands, resultShape, new Map(), "gpu");
    call.expectCounts(4, 2);
    const [k1, k2, x1, x2] = [0, 1, 2, 3].map((i) => call.operand(i, "u32", 0));
    for (const i of [1, 2, 3]) call.sameBatch(`operand ${i}`, k1!.batch, [k1, k2, x1, x2][i]!.batch);
    const shapes = [0, 1].map((i) => call.result(i, "u32", k1!.batch, []));
    const [a, b, c, d] = [k1, k2, x1, x2].map((o) => o!.lit.data as Uint32Array);
    const y1 = new Uint32Array(a!.length), y2 = new Uint32Array(a!.length);
    for (let i = 0; i < a!.length; i++) [y1[i], y2[i]] = threefry2x32(c![i]!, d![i]!, a![i]!, b![i]!);
    return Literal.tuple([Literal.fromStorage(shapes[0]!, y1), Literal.fromStorage(shapes[1]!, y2)]);
  };
}

const MARKERS = ["Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement", "MoveToHost", "MoveToDevice"];

export const BUILTIN_CUSTOM_CALLS: ReadonlyMap<string, CustomCallTarget> = new Map<string, CustomCallTarget>([
  ...MARKERS.map((name) => [name, identityMarker(name)] as const),
  ["ApproxTopK", approxTopK],
  ...X64_CUSTOM_CALLS,
  ...["cu", "hip"].map((prefix) => [`${prefix}_threefry2x32_ffi`, threefryKernel(`${prefix}_threefry2x32_ffi`)] as const),
  ...Object.entries(ACCELERATOR_KERNELS).map(([name, what]) => [name, acceleratorKernel(name, what)] as const),
  ...[...LAPACK_TARGETS].map(([name, target]) => [name, ((operands, resultShape, backendConfig) =>
    target.run(operands, resultShape, parseAttributeDictionary(ffiAttributeText(backendConfig), name))) as CustomCallTarget] as const),
]);
