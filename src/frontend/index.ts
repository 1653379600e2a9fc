// The front end: JAX's API over xlats (numpy-style arrays, jit, autodiff, vmap).
// See docs/frontend.md.


export * as numpy from "./numpy_api.js";
// (After numpy: the primitive table's modules import one another and must load in this order.)
import { loadSafetensors, saveSafetensors } from "./io.js";
export * as lax from "./lax_api.js";
export * as nn from "./nn.js";
export * as random from "./random.js";
export * as optimizers from "./optimizers.js";
/** safetensors files: `safetensors.load(bytes)` (an object of arrays by name) and `safetensors.save(arrays)`. */
export const safetensors = { load: loadSafetensors, save: saveSafetensors };
export { config, defaultBackend, type Platform } from "./platform.js";
export { jit, Lowered, Compiled, type JitOptions, type Jitted, type ShardedJitOptions } from "./jit.js";
export {
  Mesh, makeMesh, PartitionSpec, P, NamedSharding, devicePut, shardMap, ShardingSpecError, ShardedLowered, ShardedCompiled,
  type MeshAxesInput, type PartitionDim, type ShardingsOption, type SpecsOption, type ShardedJitted, type ShardMapOptions,
} from "./sharding.js";
export { grad, valueAndGrad, vjp, jvp, jacfwd, jacrev, hessian, stopGradient, type GradOptions } from "./autodiff.js";
export { vmap, type VmapOptions } from "./vmap.js";
export { customJvp, customVjp, checkpoint, remat, type CustomJvpFunction, type CustomVjpFunction } from "./custom.js";
export { ArrayBase as FrontendArray, Array as ConcreteArray, Tracer, eagerCacheSize, setEagerCacheLimit, type ArrayLike, type Aval } from "./core.js";
export { DTYPES, resultType, type DType } from "./dtypes.js";
export { FrontendError, ConcretizationError } from "./errors.js";
export { PRIMITIVES, derivativeCoverage, type PrimitiveName, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";
export { treeFlatten, treeUnflatten, treeMap, type TreeDef } from "./tree.js";
