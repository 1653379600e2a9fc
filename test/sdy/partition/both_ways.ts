// A program run both ways: partitioned on a client's devices, and unsharded on the
// interpreter (which ignores shardings), for tests that compare the two.

import { after, before } from "node:test";
import { evaluate, Literal, parseStableHlo, partition, runPartitioned } from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import { meshTable } from "../../../src/sharding/mesh.js";

/** The program's results on the interpreter, shardings ignored. */
export function unsharded(text: string, args: readonly Literal[]): Literal[] {
  const m = parseStableHlo(text, "test.mlir");
  const r = evaluate(m.entry, args, { meshes: meshTable(m) });
  return r.shape.kind === "tuple" ? [...r.elements] : [r];
}

/**
 * Runs partitioned programs on a client of `deviceCount` devices, made before the
 * file's tests and closed after them (`client()`: that client, for tests of their own).
 */
export function shardedRunner(deviceCount: number): ((text: string, args: readonly Literal[]) => Promise<Literal[]>) & { client(): Client } {
  let client: Client;
  before(async () => {
    client = await createClient({ deviceCount, collectiveTimeoutMs: 10_000 });
  });
  after(async () => {
    await client.close();
  });
  const run = async (text: string, args: readonly Literal[]): Promise<Literal[]> => runPartitioned(client, partition(parseStableHlo(text, "test.mlir")), args);
  return Object.assign(run, { client: () => client });
}
