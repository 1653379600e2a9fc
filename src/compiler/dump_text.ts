// The text a dump shows of a module: HLO text, as XLA's dumps are; StableHLO (MLIR)
// for a program with quantized types, which HLO text cannot write.

import type { HloModule } from "../ir/computation.js";
import { printHlo } from "../text/hlo/index.js";
import { printStableHlo } from "../text/mlir/index.js";
import { hasQuantization } from "../types/shape.js";

export function moduleHasQuantization(module: HloModule): boolean {
  return module.computations.some((c) => c.instructions.some((inst) => hasQuantization(inst.shape)));
}

export function dumpText(module: HloModule): string {
  return moduleHasQuantization(module) ? printStableHlo(module) : printHlo(module);
}
