// Running a partitioned program: the global arguments split into each device's piece,
// the per-device program run on one partition per device of a runtime client, the
// global results assembled from the devices' results.

import type { Client } from "../../runtime/client.js";
import type { Literal } from "../../types/literal.js";
import { ShardingError } from "../axis.js";
import { assembleResults, splitArguments, type PartitionedProgram } from "./partition.js";

export async function runPartitioned(client: Client, p: PartitionedProgram, args: readonly Literal[]): Promise<Literal[]> {
  if (client.devices.length < p.deviceCount) {
    throw new ShardingError(`partition: the program runs on ${p.deviceCount} devices; the client has ${client.devices.length}`);
  }
  const perDevice = splitArguments(p, args);
  const results = await client.run(p.entry, perDevice, { partitions: p.deviceCount });
  return assembleResults(p, results);
}
