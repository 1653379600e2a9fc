// What the WebAssembly generators lower (kernel/capabilities.ts): asked of the loop
// kernel generator itself, one op at a time, once per target and op signature.

import { probedCapabilities, type LoweringCapabilities } from "../kernel/capabilities.js";
import { emitFusionKernel } from "./emit_loop.js";
import type { CpuTarget } from "../backend_contract.js";
import { isDeclined } from "../kernel/declined.js";

/** By the target's features (devices of one kind each hold a target of their own). */
const byTarget = new Map<string, LoweringCapabilities>();

/** What the WebAssembly generators lower for the engine features `target.wasm` (the rest of the target is not theirs). */
export function wasmCapabilities({ wasm: target }: CpuTarget): LoweringCapabilities {
  const key = JSON.stringify(target);
  let capabilities = byTarget.get(key);
  if (capabilities === undefined) {
    capabilities = probedCapabilities((fused) => {
      try {
        const kernel = emitFusionKernel(fused, target);
        return isDeclined(kernel) ? kernel : true;
      } catch {
        // A generator that throws is a bug the real fusion's compile reports (routines.ts's
        // GENERATOR_FAILED, which tests look for): fusion does not hide it.
        return true;
      }
    });
    byTarget.set(key, capabilities);
  }
  return capabilities;
}
