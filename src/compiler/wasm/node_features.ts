// The Node adapter of features.ts, imported only under Node (runtime/host_environment.ts).

import { availableParallelism } from "node:os";

export function nodeCpuThreads(): number {
  return Math.max(1, availableParallelism());
}
