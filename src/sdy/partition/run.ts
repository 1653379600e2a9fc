// Running a partitioned program: the global arguments split into each device's piece,
// the per-device program run on one partition per device of a runtime client, the
// global results assembled from the devices' results.

import type { Client } from "../../runtime/client.js";
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
}

export async function runPartitioned(client: Client, p: PartitionedProgram, args: readonly Literal[], options: RunPartitionedOptions = {}): Promise<Literal[]> {
  if (client.devices.length < p.deviceCount) {
    throw new ShardingError(`partition: the program runs on ${p.deviceCount} devices; the client has ${client.devices.length}`);
  }
  const perDevice = splitArguments(p, args);
  const run = client.run(p.entry, perDevice, { partitions: p.deviceCount });
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
