// Running a partitioned program: the global arguments split into each device's piece,
// the per-device program run on one partition per device of a runtime client, the
// global results assembled from the devices' results.

import type { Client, LoadedExecutable } from "../../runtime/client.js";
import { DeadlineError } from "../../types/errors.js";
import type { Literal } from "../../types/literal.js";
import { ShardingError } from "../../sharding/axis.js";
import { assembleResults, splitArguments, type PartitionedProgram } from "./partition.js";

export interface RunPartitionedOptions {
  /**
   * Wall-clock time (Date.now() milliseconds) after which the run fails with a
   * DeadlineError. The devices may still be running then (an endless loop in a worker
   * cannot be interrupted from here): close the client to stop them.
   */
  readonly deadline?: number;
  /**
   * `p` compiled for the client once (compilePartitioned): the run executes it, and the
   * devices keep the program they loaded for its first run. Without it each run
   * compiles the program afresh and loads it on every device again (a webgpu device
   * plans it and looks up its pipelines again).
   */
  readonly executable?: LoadedExecutable;
}

/** `p`'s per-device program compiled for `client`, one partition a mesh device, for runPartitioned to run as often as wanted (delete it after). */
export function compilePartitioned(client: Client, p: PartitionedProgram): Promise<LoadedExecutable> {
  checkDevices(client, p);
  return client.compile(p.entry, { partitions: p.deviceCount });
}

function checkDevices(client: Client, p: PartitionedProgram): void {
  if (client.devices.length < p.deviceCount) {
    throw new ShardingError(`partition: the program runs on ${p.deviceCount} devices; the client has ${client.devices.length}`);
  }
}

export async function runPartitioned(client: Client, p: PartitionedProgram, args: readonly Literal[], options: RunPartitionedOptions = {}): Promise<Literal[]> {
  checkDevices(client, p);
  const exe = options.executable;
  if (exe !== undefined && (exe.computations[0] !== p.entry || exe.replicas !== 1 || exe.partitions !== p.deviceCount)) {
    throw new ShardingError(`partition: the executable given to runPartitioned was not compiled from ${p.entry.name} by compilePartitioned`);
  }
  const perDevice = splitArguments(p, args);
  const run = exe === undefined ? client.run(p.entry, perDevice, { partitions: p.deviceCount }) : client.executeToLiterals(exe, perDevice);
  const results = options.deadline === undefined ? await run : await beforeDeadline(run, options.deadline, `${p.entry.name} on ${p.deviceCount} devices`);
  return assembleResults(p, results);
}

/** `work`'s value, or a DeadlineError once `deadline` passes first. */
async function beforeDeadline<T>(work: Promise<T>, deadline: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what}: the sharded run passed its deadline`)), Math.max(0, deadline - Date.now()));
  });
  // The run's own failure after the deadline has nobody waiting for it.
  work.catch(() => {});
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
