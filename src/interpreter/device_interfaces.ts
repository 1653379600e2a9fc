// What a device offers the programs it runs, whatever the backend: the collective
// rendezvous (CollectiveBackend) and the host side of Infeed/Outfeed and host Send/Recv
// (HostTransfers). The runtime owns these interfaces: the interpreter and compiled
// backends both program against them. Browser-safe (no Node imports): the core
// (tsconfig.core.json) reaches this file through the interpreter.
//
// singleDeviceCollectives and HostQueues, the one-device defaults, live here too: any
// backend's in-process path (one device, no workers) needs them, not only the
// interpreter's.

import { ExecutionError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { shapesEqual, shapeToString, type Shape } from "../types/shape.js";

/** Elementwise reductions a collective backend may run directly on typed arrays. */
export type FastReduction = "add" | "multiply" | "maximum" | "minimum";

/**
 * Where collectives meet. Participants are named by logical id (replicaId *
 * partitionCount + partitionId). `key` identifies one execution of one collective
 * (op name, channel and a per-device sequence number): every participant passes the
 * same key. Implementations block until the participants they need have arrived, and
 * throw an ExecutionError (never hang) when one does not arrive in time, or when
 * participants disagree on the group or on shapes.
 */
export interface CollectiveBackend {
  /**
   * Each member of `group` (logical ids, in group order) contributes a literal; every
   * caller gets all contributions in group order.
   */
  exchange(key: string, group: readonly number[], contribution: Literal): Literal[];
  /**
   * Point to point: sends `contribution` to each of `targets` and returns what `source`
   * sent to this device (undefined when `source` is undefined).
   */
  permute(key: string, contribution: Literal, targets: readonly number[], source: number | undefined): Literal | undefined;
  /**
   * Optional fast path for all-reduce of one array with a recognized reduction: the
   * result must equal folding the contributions in group order,
   * ((c0 op c1) op c2) ..., rounded to the element type after every step.
   */
  reduce?(key: string, group: readonly number[], contribution: Literal, reduction: FastReduction): Literal;
  /** Device-to-device Send: pairs with the Recv of the same channel on another device (FIFO per channel). */
  send(channelId: number, value: Literal): void;
  /** Device-to-device Recv of a value of `shape` sent on `channelId`. */
  recv(channelId: number, shape: Shape): Literal;
}
/** Host side of Infeed/Outfeed and host Send/Recv. */
export interface HostTransfers {
  /** Next value queued for Infeed (its shape must be `shape`). */
  takeInfeed(shape: Shape): Literal;
  putOutfeed(value: Literal): void;
  /** Host Send (is_host_transfer): the device hands `value` to the host on `channel`. */
  sendToHost?(channel: number, value: Literal): void;
  /** Host Recv (is_host_transfer): the next value the host provided on `channel` (its shape must be `shape`). */
  recvFromHost?(channel: number, shape: Shape): Literal;
}


/**
 * The one-device collective backend: every group must be this device alone, and a
 * Recv takes what an earlier Send on the same channel queued on this device.
 */
export function singleDeviceCollectives(deviceId: number): CollectiveBackend {
  const channels = new Map<number, Literal[]>();
  const checkAlone = (key: string, group: readonly number[]): void => {
    if (group.length !== 1 || group[0] !== deviceId) {
      throw new ExecutionError(
        `${key}: group [${group.join(", ")}] needs several devices; run it with the multi-device runtime`,
      );
    }
  };
  return {
    exchange(key, group, contribution) {
      checkAlone(key, group);
      return [contribution];
    },
    permute(key, contribution, targets, source) {
      for (const t of [...targets, ...(source === undefined ? [] : [source])]) checkAlone(key, [t]);
      return source === undefined ? undefined : contribution;
    },
    reduce(key, group, contribution) {
      checkAlone(key, group);
      return contribution;
    },
    send(channelId, value) {
      const queue = channels.get(channelId) ?? [];
      queue.push(value);
      channels.set(channelId, queue);
    },
    recv(channelId, shape) {
      const next = channels.get(channelId)?.shift();
      if (next === undefined) {
        throw new ExecutionError(`recv: channel ${channelId} has no value sent on this device; run it with the multi-device runtime`);
      }
      if (!shapesEqual(next.shape, shape)) {
        throw new ExecutionError(`recv: channel ${channelId} carries ${shapeToString(next.shape)}, expected ${shapeToString(shape)}`);
      }
      return next;
    },
  };
}

/**
 * Infeed, outfeed and host Send/Recv queues held in memory (what a host program fills
 * and drains). `toHost` holds what host Sends delivered, per channel; `fromHost` what
 * host Recvs will take, per channel.
 */
export class HostQueues implements HostTransfers {
  readonly infeed: Literal[] = [];
  readonly outfeed: Literal[] = [];
  readonly toHost = new Map<number, Literal[]>();
  readonly fromHost = new Map<number, Literal[]>();

  takeInfeed(shape: Shape): Literal {
    const next = this.infeed.shift();
    if (next === undefined) throw new ExecutionError("infeed: the host infeed queue is empty");
    if (!shapesEqual(next.shape, shape)) {
      throw new ExecutionError(`infeed: the host queued a value of shape ${shapeToString(next.shape)}, the program reads ${shapeToString(shape)}`);
    }
    return next;
  }

  putOutfeed(value: Literal): void {
    this.outfeed.push(value);
  }

  sendToHost(channel: number, value: Literal): void {
    const queue = this.toHost.get(channel) ?? [];
    queue.push(value);
    this.toHost.set(channel, queue);
  }

  recvFromHost(channel: number, shape: Shape): Literal {
    const next = this.fromHost.get(channel)?.shift();
    if (next === undefined) throw new ExecutionError(`recv: the host has no value queued on channel ${channel}`);
    if (!shapesEqual(next.shape, shape)) {
      throw new ExecutionError(
        `recv: the host queued a value of shape ${shapeToString(next.shape)} on channel ${channel}, the program receives ${shapeToString(shape)}`);
    }
    return next;
  }
}
