// The pass framework: a pass maps a module to a module (the same object when it changed
// nothing), pipelines run passes in order, `fixpoint` repeats a pass until it stops
// changing the module. The context verifies the module after every pass that changed
// it (on request), dumps it (on request: `xlats compile --dump-after-each`), and keeps
// a log of what each pass did, so every decision can be shown to the user.

import type { HloModule } from "../ir/computation.js";
import { verifyModule } from "../ir/verify.js";
import { CompileError, type SourceLocation } from "../types/errors.js";

export interface PassContext {
  /** Verify the module after each pass that changed it. */
  readonly verify: boolean;
  /** Called with the module after each pass that changed it. */
  readonly dump?: (passName: string, module: HloModule) => void;
  /** Records one decision or statistic of a pass (`fusion: fused add.3 into multiply.4`). */
  log(passName: string, message: string): void;
  /**
   * Reports a warning about the program at `location` (the op's position in its source
   * text, when known): `xlats opt` prints `FILE:LINE:COL: warning: MESSAGE` as MLIR
   * does. Without it, warnings only go to the log.
   */
  readonly warn?: (passName: string, message: string, location: SourceLocation | undefined) => void;
  /**
   * Asks passes that can to explain their decisions (`xlats opt --explain`: sharding
   * propagation's provenance and conflicts); they hand the explanation here.
   */
  readonly explain?: (passName: string, lines: readonly string[]) => void;
}

export interface Pass {
  readonly name: string;
  run(module: HloModule, ctx: PassContext): HloModule;
}

export interface PassLogEntry {
  readonly pass: string;
  readonly message: string;
}

export interface RunPassesOptions {
  readonly verify?: boolean;
  readonly dump?: (passName: string, module: HloModule) => void;
}

/** Runs `pass` once, then verifies and dumps its result if it changed the module. */
export function runPass(pass: Pass, module: HloModule, ctx: PassContext): HloModule {
  const out = pass.run(module, ctx);
  if (out === module) return out;
  if (ctx.verify) {
    try {
      verifyModule(out);
    } catch (e) {
      throw new CompileError(`pass ${pass.name} produced an invalid module: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  ctx.dump?.(pass.name, out);
  return out;
}

/** The passes in order, as one pass. */
export function pipeline(name: string, passes: readonly Pass[]): Pass {
  return {
    name,
    run(module, ctx) {
      let current = module;
      for (const pass of passes) current = runPass(pass, current, ctx);
      return current;
    },
  };
}

/** `pass` repeated until it changes nothing (at most maxIterations times; more is a bug in a rule set that undoes itself). */
export function fixpoint(pass: Pass, maxIterations = 25): Pass {
  return {
    name: `fixpoint(${pass.name})`,
    run(module, ctx) {
      let current = module;
      for (let i = 0; i < maxIterations; i++) {
        const next = runPass(pass, current, ctx);
        if (next === current) return current;
        current = next;
      }
      ctx.log(pass.name, `still changing the module after ${maxIterations} iterations; stopped`);
      return current;
    },
  };
}

/** Runs passes over a module; returns the result and the log of what they did. */
export function runPasses(module: HloModule, passes: readonly Pass[], options: RunPassesOptions = {}): { module: HloModule; log: PassLogEntry[] } {
  const log: PassLogEntry[] = [];
  const ctx: PassContext = {
    verify: options.verify ?? false,
    ...(options.dump !== undefined ? { dump: options.dump } : {}),
    log: (pass, message) => log.push({ pass, message }),
  };
  let current = module;
  for (const pass of passes) current = runPass(pass, current, ctx);
  return { module: current, log };
}
