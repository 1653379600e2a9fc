// jax.lax as users see it: the primitives' functions (lax.ts) and control flow (control.ts),
// sharding constraints and shardMap's collectives (sharding.ts).

export * from "./lax.js";
export { cond, foriLoop, whileLoop, switch, scan, map, type ScanOptions } from "./control.js";
export { topK } from "./sorting.js";
export { conv, convGeneralDilated, convWithGeneralPadding, convTranspose, reduceWindow, type ConvDimensionNumbers, type ConvOptions, type ConvTransposeOptions, type Padding as ConvPadding } from "./convolution.js";
export { withShardingConstraint, psum, pmean, pmax, pmin } from "./sharding.js";
