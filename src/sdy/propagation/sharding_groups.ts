// Sharding groups (`sdy.sharding_group`): values that must end with the same sharding.
// Propagation gives every member the sharding any member gets; before it starts, the
// members take the one sharding they agree on, and members that disagree are each put
// behind an open sharding constraint, so that propagation settles them (Shardy's
// ShardingGroupMap).

import type { TensorSharding } from "../../sharding/model.js";
import { fullyReplicatedSharding, isFullyReplicatedAndOpen, shardingEquals } from "../../sharding/sharding.js";
import { getSharding, insertShardingConstraint, replaceAllUsesExcept, setSharding, type PGraph, type POp, type PValue } from "./graph.js";

export interface GroupWarning {
  readonly groupId: number;
  readonly value: PValue;
  readonly message: string;
}

export class ShardingGroups {
  private readonly groupOf = new Map<PValue, number>();
  private readonly members: PValue[][] = [];

  constructor(ops: Iterable<POp>) {
    for (const op of ops) {
      if (op.kind !== "shardingGroup" || op.erased || op.groupId === undefined) continue;
      const value = op.operands[0]!;
      const existing = this.groupOf.get(value);
      if (existing !== undefined && existing !== op.groupId) {
        throw new Error(`a value is in sharding groups ${existing} and ${op.groupId}; sharding group import merges them first`);
      }
      if (existing === undefined) this.groupOf.set(value, op.groupId);
      while (this.members.length <= op.groupId) this.members.push([]);
      this.members[op.groupId]!.push(value);
    }
  }

  /** The members of the group `v` is in (empty when none). */
  membersOf(v: PValue): readonly PValue[] {
    const g = this.groupOf.get(v);
    return g === undefined ? [] : this.members[g]!;
  }

  /**
   * Gives every member of each group the sharding its members agree on. When two members
   * have different shardings (not counting fully open ones), each member is put behind a
   * new open sharding constraint instead; returns a warning per such group.
   */
  syncMemberShardings(graph: PGraph): GroupWarning[] {
    const warnings: GroupWarning[] = [];
    this.members.forEach((group, groupId) => {
      if (group.length === 0) return;
      const { sharding, conflict } = commonSharding(graph, group);
      if (sharding === undefined) return;
      if (!conflict) {
        for (const member of group) setSharding(graph, member, sharding);
        return;
      }
      warnings.push({
        groupId, value: group[0]!,
        message: `The initial operand shardings on the sharding groups of groupID: ${groupId} do not match. Inserting an open sharding constraint to all constrained values. This can be caused when shardings from different values are grouped (e.g. from jax.shard_alike) but have separate inconsistent sharding constraints on them.`,
      });
      group.forEach((member, i) => {
        const open = fullyReplicatedSharding(sharding.meshOrRef, sharding.dimShardings.length, false);
        const constraint = insertShardingConstraint(graph, member, open);
        replaceAllUsesExcept(member, constraint.results[0]!, constraint);
        this.groupOf.delete(member);
        this.groupOf.set(constraint.results[0]!, groupId);
        group[i] = constraint.results[0]!;
      });
    });
    return warnings;
  }
}

function commonSharding(graph: PGraph, group: readonly PValue[]): { sharding: TensorSharding | undefined; conflict: boolean } {
  if (group.length === 1) return { sharding: getSharding(graph, group[0]!), conflict: false };
  let sharding: TensorSharding | undefined;
  for (const member of group) {
    const candidate = getSharding(graph, member);
    if (candidate === undefined || isFullyReplicatedAndOpen(candidate)) continue;
    if (sharding === undefined) sharding = candidate;
    else if (!shardingEquals(candidate, sharding)) return { sharding, conflict: true };
  }
  return { sharding, conflict: false };
}
