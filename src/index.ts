// xlats: XLA for TypeScript. The public API.

export * from "./types/element_type.js";
export * from "./types/shape.js";
export * from "./types/errors.js";
export { DEFAULT_DEVICE_LIMIT, DEFAULT_MEMORY_BUDGET_BYTES, deviceLimit, memoryBudget, setDeviceLimit, setMemoryBudget } from "./types/resource.js";
export * from "./types/literal.js";
export * from "./types/index_util.js";
export * from "./types/float_codec.js";
export * from "./types/element_bits.js";
export * from "./types/convert.js";
export * from "./types/bitcast_convert.js";
export * from "./types/reduce_precision.js";
export * from "./types/quantization.js";
export * from "./ir/attributes.js";
export * from "./ir/opcodes.js";
export * from "./ir/computation.js";
export { inferShape, SHAPE_RULES } from "./ir/shape/index.js";
export { verifyComputation, verifyMemoryBudget, verifyModule } from "./ir/verify.js";
export * from "./builder/xla_builder.js";
export * from "./builder/conversion.js";
export * from "./builder/elementwise.js";
export * from "./builder/data_movement.js";
export * from "./builder/reduction.js";
export * from "./builder/linalg.js";
export * from "./builder/control.js";
export * from "./builder/random.js";
export * from "./builder/transfer.js";
export * from "./builder/collective.js";
export * from "./builder/sdy.js";
export { sharding, parseSharding, type AxisSpec, type DimSpec, type MeshAxesSpec, type ShardingOptions, type ShardingSpec } from "./builder/sharding_spec.js";
export * from "./interpreter/context.js";
export { evaluate, type EvaluateOptions } from "./interpreter/evaluate.js";
export { KERNELS } from "./interpreter/kernels/index.js";
export { CustomCallRegistry } from "./interpreter/kernels/custom_call_registry.js";
export * from "./runtime/index.js";
export { parseStableHlo, printStableHlo, parseMlirLiteral, printMlirLiteral } from "./text/mlir/index.js";
export { parseHlo, printHlo } from "./text/hlo/index.js";
export type * from "./sharding/model.js";
export * from "./text/mlir/sdy_attr_text.js";
export * from "./sharding/mesh.js";
export { diagnosticsOf, formatSdyDiagnostics, SdyParseError, SdyVerifyError, type SdyDiagnostic } from "./text/mlir/diagnostics.js";
export { verifySdy } from "./sdy/verify.js";
export { HloShardingError, parseHloSharding, printHloSharding, type HloSharding } from "./sharding/hlo_sharding.js";
export { hloShardingOnMesh, hloShardingToSdy, meshForHloShardings, sdyToHloSharding, type ShardingOnMesh } from "./sdy/hlo_sharding_convert.js";
export {
  replicaGroups, shardingLayout, unusedAxes, type DeviceBlock, type DimBlock, type ShardingLayout, type Tile as ShardingTile,
} from "./sdy/visualize/layout.js";
export { describeLayout, renderLayoutGrid, renderMeshLegend } from "./sdy/visualize/text.js";
export { renderShardingsHtml, type ShardingFigure } from "./sdy/visualize/html.js";
export * from "./sdy/partition/index.js";
export { runPass, runPasses, type Pass, type PassContext } from "./passes/pass.js";
export { PassOptionError } from "./passes/pass_options.js";
export { refineEntry, refineShapes, RefineError } from "./passes/refine_shapes.js";
export { ShardingError } from "./sharding/axis.js";
export { PeerFailureError } from "./runtime/shared_collectives.js";
export { passFromFlag, passNamed } from "./cli/pass_registry.js";
export { runCheckText, type CheckCaseResult } from "./check/runner.js";
export {
  compile, compileSync, defaultDevice, defaultPipeline, Executable, InterpretedExecutable, WasmDevice, DeviceArray,
  BACKEND_NAMES, BACKENDS, DEFAULT_BACKEND, type BackendName, type CompileOptions, type ExecutableOf, type ExecutableStats,
} from "./compiler/index.js";
// Importing the table registers the built-in backends for clients, the CLI and the check runner.
export { interpreterBackend, interpreterDeviceBackend, interpreterEntry } from "./compiler/interpreter/backend.js";
export { nativeBackend, nativeDeviceBackend, nativeEntry } from "./compiler/native/backend.js";
export { wasmBackend, wasmDeviceBackend, wasmEntry } from "./compiler/wasm/backend.js";
export type { BackendCapabilities, CompilerBackend } from "./compiler/backend_contract.js";
export { NpyError, numpyDescr, numpyDtypeName, type NpyReadOptions, type NpyWriteOptions } from "./types/npy.js";
export { readNpz, writeNpz, type NpzReadOptions } from "./types/npz.js";
export { ZipError } from "./types/zip.js";
export { InflateError } from "./types/inflate.js";
export { numpyRepr } from "./types/numpy_repr.js";
// The JAX-like front end: numpy, jit, grad, vmap, lax, nn (docs/frontend.md).
export * from "./frontend/index.js";
// `Mesh` at the root is the front end's (jax.sharding.Mesh); Shardy's mesh attribute type is `SdyMesh`.
export { Mesh } from "./frontend/index.js";
export type { Mesh as SdyMesh } from "./sharding/model.js";
// So is `defaultBackend` (jax.default_backend(): what jit compiles for); the runtime's, the
// backend clients and the CLI use when none is named, is `defaultClientBackend`.
export { defaultBackend } from "./frontend/index.js";
export { defaultBackend as defaultClientBackend } from "./runtime/index.js";
