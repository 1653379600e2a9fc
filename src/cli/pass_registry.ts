// Passes by name, as `xlats opt` runs them (`-pass-name`, `-pass-name=opt1=val1 opt2=val2`):
// the compiler's own passes, registered here, then the Shardy passes of
// src/sdy/passes/index.ts. Registrations and option parsing: pass_options.ts.

import { SDY_CANONICALIZATION_PATTERNS } from "../sdy/canonicalization.js";
import { SDY_PASSES } from "../sdy/passes/index.js";
import type { Pass } from "../passes/pass.js";
import { describePassList, passFromFlagIn, PassOptionError, type PassRegistration } from "../passes/pass_options.js";
import { canonicalize } from "../passes/canonicalize.js";
import { constantFold } from "../compiler/passes/constant_fold.js";
import { cse } from "../compiler/passes/cse.js";
import { dce } from "../compiler/passes/dce.js";
import { decompose } from "../compiler/passes/decompose.js";
import { dotDecomposer } from "../compiler/passes/dot_decomposer.js";
import { stepFusion } from "../compiler/passes/step_fusion.js";
import { convCanonicalization } from "../compiler/passes/conv_canonicalization.js";
import { defaultSimplificationPipeline } from "../compiler/passes/index.js";
import { layoutAssignment } from "../compiler/passes/layout_assignment.js";
import { simplify } from "../compiler/passes/simplify/index.js";
import { refineShapes } from "../passes/refine_shapes.js";

/** A pass that takes no options. */
function plain(name: string, description: string, pass: Pass): PassRegistration {
  return { name, description, options: [], create: () => pass };
}

/** The compiler's passes (src/compiler/passes), by the names their Pass objects carry. */
const COMPILER_PASSES: readonly PassRegistration[] = [
  plain("canonicalize", "MLIR's canonicalizer: constants uniqued and hoisted, the ops' canonicalization patterns (Shardy's) to a fixpoint, trivially dead ops removed",
    canonicalize(SDY_CANONICALIZATION_PATTERNS)),
  plain("cse", "common subexpression elimination (equal instructions and equal computations merged)", cse),
  plain("dce", "dead code elimination (unused side-effect-free instructions, unreachable computations)", dce),
  plain("constant-fold", "evaluates instructions whose operands are all constants (small results only)", constantFold),
  plain("simplify", "one sweep of the algebraic simplifier's rewrite rules", simplify()),
  {
    name: "simplification",
    description: "simplify, constant-fold, cse and dce repeated until none changes the module",
    options: [{ name: "max-iterations", type: "int", description: "rounds before giving up on a fixpoint", default: 16 }],
    create: (o) => {
      const n = o.int("max-iterations");
      if (n < 1) throw new PassOptionError(`-simplification: option 'max-iterations' must be at least 1, got ${n}`);
      return defaultSimplificationPipeline(n);
    },
  },
  plain("decompose", "rewrites ops into the ones kernels are made of; inlines calls", decompose),
  plain("dot-decomposer", "brings every dot into the [batch, m, k] x [batch, k, n] form the GEMM kernels take", dotDecomposer),
  plain("conv-canonicalization", "puts every convolution in the NHWC / HWIO / NHWC form the conv kernels take", convCanonicalization),
  plain("layout-assignment", "gives every value the default (major-to-minor) layout", layoutAssignment),
  plain("fusion", "fuses the entry computation and those its control flow runs, as compile does", stepFusion),
  plain("stablehlo-refine-shapes", "StableHLO's shape refinement: static shapes propagated from the entry's argument types, shape computations folded, dynamic ops made static, called functions specialized",
    { name: "stablehlo-refine-shapes", run: (module) => refineShapes(module) }),
];

/** Every registered pass: the compiler's, then Shardy's. Names are unique (checked on first use). */
export function registeredPasses(): readonly PassRegistration[] {
  const all = [...COMPILER_PASSES, ...SDY_PASSES];
  const seen = new Set<string>();
  for (const p of all) {
    if (seen.has(p.name)) throw new PassOptionError(`pass '${p.name}' is registered twice`);
    seen.add(p.name);
  }
  return all;
}

export function findPass(name: string): PassRegistration | undefined {
  return registeredPasses().find((p) => p.name === name);
}

/** A pass from its command-line flag (`-name`, `--name`, `-name=options`); undefined when no pass has that name. */
export function passFromFlag(flag: string): Pass | undefined {
  return passFromFlagIn(registeredPasses(), flag);
}

/** The pass a flag names (`-sdy-propagation-pipeline`, `-name=options`); a PassOptionError listing the passes when none has that name. */
export function passNamed(flag: string): Pass {
  const pass = passFromFlag(flag);
  if (pass === undefined) throw new PassOptionError(`unknown pass '${flag}'; known passes:\n${describePasses()}`);
  return pass;
}

/** `name  description` lines for help and errors, with each pass's options indented under it. */
export function describePasses(): string {
  return describePassList(registeredPasses());
}

export { parsePassOptions, PassOptionError, PassOptions, type PassOptionSpec, type PassOptionValue, type PassRegistration } from "../passes/pass_options.js";
