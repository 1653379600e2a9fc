// jax.lax as users see it: the primitives' functions (lax.ts) and control flow (control.ts),
// sharding constraints and shardMap's collectives (sharding.ts).

export * from "./lax.js";
export { cond, foriLoop, whileLoop, switch, scan, map, type ScanOptions } from "./control.js";
export { topK } from "./sorting.js";
export { withShardingConstraint, psum, pmean, pmax, pmin } from "./sharding.js";
