// `xlats partition`: print the per-device program Shardy's partitioner makes of a
// program with a mesh and shardings, or (--report) what it costs; and the sharded path
// of `xlats run`: partition, run one partition per device of the mesh, assemble the
// global results.

import type { HloModule } from "../ir/computation.js";
import type { BackendEntry } from "../runtime/backend_registry.js";
import { createClient } from "../runtime/client.js";
import { formatReport, partition, partitionReport, runPartitioned, type PartitionedProgram, type RunPartitionedOptions } from "../sdy/partition/index.js";
import type { Literal } from "../types/literal.js";
import { parseModule, printModule } from "./formats.js";
import type { CliIo } from "./io.js";

export interface PartitionOptions {
  readonly file: string;
  readonly entry?: string;
  readonly report: boolean;
}

function meshText(p: PartitionedProgram): string {
  const axes = p.mesh.axes.map((a) => `"${a.name}"=${a.size}`).join(", ");
  return `${p.meshName !== undefined ? `@${p.meshName} ` : ""}<[${axes}]>`;
}

export function partitionCommand(options: PartitionOptions, io: CliIo): number {
  const module = parseModule(io.readFile(options.file), options.file);
  const p = partition(module, options.entry !== undefined ? { entry: options.entry } : {});
  if (p.skipped.length > 0) io.err(`partition: this build has no ${p.skipped.map((s) => `-${s}`).join(", ")} (the program needs none of them)`);
  if (!options.report) {
    io.out(printModule(p.module, "mlir").replace(/\n$/, ""));
    return 0;
  }
  const unsharded = options.entry === undefined ? module.entry : module.getComputation(options.entry) ?? module.entry;
  io.out(`partitioned on mesh ${meshText(p)}`);
  for (const line of formatReport(partitionReport(p, unsharded))) io.out(line);
  return 0;
}

/**
 * `xlats run` on a module with a mesh and shardings: partitions it, runs the per-device
 * program on a client of `backend` with one device per mesh device, and returns the
 * global results; says on stderr that it did. `options.deadline`: --timeout.
 */
export async function runSharded(
  module: HloModule, entry: string | undefined, args: readonly Literal[], backend: BackendEntry, io: CliIo, options: RunPartitionedOptions = {},
): Promise<Literal[]> {
  const p = partition(module, entry !== undefined ? { entry } : {});
  const client = await createClient({ backend: backend.host, deviceCount: p.deviceCount });
  try {
    // Past the deadline, closing the client (below) stops devices still running.
    const results = await runPartitioned(client, p, args, options);
    io.err(`xlats: ran sharded on ${p.deviceCount} devices (mesh ${meshText(p)}); results assembled from the shards`);
    return results;
  } finally {
    await client.close();
  }
}
