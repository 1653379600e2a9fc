// jax.numpy as users see it: the core (numpy.ts) with the rest of numpy's math
// (numpy_math.ts), array building (numpy_arrays.ts), einsum (einsum.ts) and pad
// (pad.ts), which compose the core.

export * from "./numpy.js";
export * from "./numpy_math.js";
export * from "./numpy_arrays.js";
/** np.delete (a reserved word in JavaScript, so exported by name). */
export { deleteAt as delete } from "./numpy_arrays.js";
export { einsum } from "./einsum.js";
export { pad, type PadMode, type PadOptions, type PerSide } from "./pad.js";
