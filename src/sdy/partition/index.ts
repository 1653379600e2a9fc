// The partition step of the public API: partition a module with shardings into the
// per-device program (and how to split arguments and assemble results), run it on a
// client's devices, and report what it costs.

export { assembleResults, isShardedModule, partition, splitArguments, type PartitionedProgram, type PartitionOptions, type ValueLayout } from "./partition.js";
export { formatReport, partitionReport, peakMemory, type CollectiveCost, type PartitionReport } from "./report.js";
export { compilePartitioned, runPartitioned, type RunPartitionedOptions } from "./run.js";
