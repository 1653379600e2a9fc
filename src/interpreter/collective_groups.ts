// How a collective's participants are formed from its replica groups (StableHLO spec,
// "collective ops"; XLA's CollectiveOpGroupMode). Every device of a program is a
// process (replica, partition); its logical id is replica * partitionCount + partition.
// Groups are returned as lists of logical ids, in group order: the order in which
// contributions are concatenated (all-gather), reduced (all-reduce) or scattered.

import type { ReplicaGroups } from "../ir/attributes.js";
import { range } from "../types/arrays.js";
import { ExecutionError } from "../types/errors.js";

/**
 * The four ways XLA turns replica groups into process groups:
 * - crossReplica: ids are replica ids; one set of groups per partition.
 * - crossPartition: ids are partition ids; one set of groups per replica.
 * - crossReplicaAndPartition: ids are replica ids; each group spans those replicas in
 *   every partition (partition-major order).
 * - flattenedIds: ids are logical device ids (replica * partitionCount + partition).
 */
export type CollectiveGroupMode = "crossReplica" | "crossPartition" | "crossReplicaAndPartition" | "flattenedIds";

/**
 * The mode an op uses. Ops with a use_global_device_ids flag (all-gather, all-reduce,
 * reduce-scatter, ragged-all-to-all) follow XLA's three cases; ops without one
 * (all-to-all, collective-permute, collective-broadcast) are cross-partition whenever a
 * channel is given. A channel id <= 0 counts as absent, as in StableHLO.
 */
export function collectiveGroupMode(
  opName: string, channelId: number | undefined, useGlobalDeviceIds: boolean | undefined, hasGlobalIdsFlag: boolean,
): CollectiveGroupMode {
  const hasChannel = channelId !== undefined && channelId > 0;
  if (!hasChannel) {
    if (useGlobalDeviceIds === true) {
      throw new ExecutionError(`${opName}: use_global_device_ids needs a channel_id > 0`);
    }
    return "crossReplica";
  }
  if (!hasGlobalIdsFlag) return "crossPartition";
  return useGlobalDeviceIds === true ? "flattenedIds" : "crossReplicaAndPartition";
}

export interface ProcessGrid {
  readonly replicaCount: number;
  readonly partitionCount: number;
}

/** Drops the -1 padding a dense replica_groups tensor uses for ragged groups. */
function cleanGroups(groups: ReplicaGroups): number[][] {
  return groups.map((g) => g.filter((id) => id !== -1));
}

/**
 * Every process group of a collective, each a list of logical ids in group order.
 * Checks that ids are in range and that no process is in two groups.
 */
export function formProcessGroups(
  opName: string, mode: CollectiveGroupMode, replicaGroups: ReplicaGroups, grid: ProcessGrid,
): number[][] {
  const { replicaCount: R, partitionCount: P } = grid;
  const logical = (r: number, p: number): number => r * P + p;
  const groups = cleanGroups(replicaGroups);
  const idLimit = mode === "crossPartition" ? P : mode === "flattenedIds" ? R * P : R;
  const idKind = mode === "crossPartition" ? "partition" : mode === "flattenedIds" ? "device" : "replica";
  for (const g of groups) {
    for (const id of g) {
      if (!Number.isInteger(id) || id < 0 || id >= idLimit) {
        throw new ExecutionError(`${opName}: replica_groups: ${idKind} id ${id} is out of range [0, ${idLimit})`);
      }
    }
  }
  const seen = new Set<number>();
  for (const g of groups) {
    for (const id of g) {
      if (seen.has(id)) throw new ExecutionError(`${opName}: replica_groups: ${idKind} id ${id} appears in more than one group`);
      seen.add(id);
    }
  }
  const effective = groups.length === 0 ? [range(idLimit)] : groups;
  const out: number[][] = [];
  switch (mode) {
    case "crossReplica":
      for (let p = 0; p < P; p++) for (const g of effective) out.push(g.map((r) => logical(r, p)));
      break;
    case "crossPartition":
      for (let r = 0; r < R; r++) for (const g of effective) out.push(g.map((p) => logical(r, p)));
      break;
    case "crossReplicaAndPartition":
      for (const g of effective) {
        const group: number[] = [];
        for (let p = 0; p < P; p++) for (const r of g) group.push(logical(r, p));
        out.push(group);
      }
      break;
    case "flattenedIds":
      for (const g of effective) out.push([...g]);
      break;
  }
  return out;
}

/** The process group holding logical id `self`, or undefined when it is in none. */
export function groupOf(groups: readonly (readonly number[])[], self: number): readonly number[] | undefined {
  return groups.find((g) => g.includes(self));
}

/**
 * Collective-permute's (source, target) pairs as logical ids: with no channel the ids
 * are replicas within this process's partition, with a channel they are partitions
 * within its replica. Returns the pairs, and the domain (every process they range over).
 */
export function permutePairs(
  opName: string, pairs: readonly (readonly [number, number])[], channelId: number | undefined,
  grid: ProcessGrid, self: { readonly replicaId: number; readonly partitionId: number },
): { pairs: [number, number][]; domain: number[] } {
  const crossPartition = channelId !== undefined && channelId > 0;
  const { replicaCount: R, partitionCount: P } = grid;
  const limit = crossPartition ? P : R;
  const toLogical = (id: number): number => (crossPartition ? self.replicaId * P + id : id * P + self.partitionId);
  const sources = new Set<number>();
  const targets = new Set<number>();
  for (const [s, t] of pairs) {
    for (const id of [s, t]) {
      if (!Number.isInteger(id) || id < 0 || id >= limit) {
        throw new ExecutionError(
          `${opName}: source_target_pairs: ${crossPartition ? "partition" : "replica"} id ${id} is out of range [0, ${limit})`,
        );
      }
    }
    if (sources.has(s)) throw new ExecutionError(`${opName}: source_target_pairs: source ${s} appears twice`);
    if (targets.has(t)) throw new ExecutionError(`${opName}: source_target_pairs: target ${t} appears twice`);
    sources.add(s);
    targets.add(t);
  }
  return {
    pairs: pairs.map(([s, t]) => [toLogical(s), toLogical(t)]),
    domain: range(limit).map(toLogical),
  };
}
