// jax.numpy as users see it: the core (numpy.ts) with the rest of numpy's math
// (numpy_math.ts) and array building (numpy_arrays.ts), which compose the core.

export * from "./numpy.js";
export * from "./numpy_math.js";
export * from "./numpy_arrays.js";
