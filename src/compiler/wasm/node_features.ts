// The Node adapter of features.ts, loaded by dynamic import only under Node.

import { availableParallelism } from "node:os";

export function nodeCpuThreads(): number {
  return Math.max(1, availableParallelism());
}
