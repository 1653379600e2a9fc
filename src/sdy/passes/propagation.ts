// Shardy's propagation passes: -sdy-basic-propagate, -sdy-aggressive-propagate,
// -sdy-op-priority-propagate and -sdy-user-priority-propagate, with Shardy's options.
// Each reads the module as propagation's value graph (propagation/ir_graph.ts), runs
// propagation/propagate.ts on it, and writes the shardings back.

import type { Pass } from "../../compiler/pass.js";
import type { PassOptionSpec, PassOptions, PassRegistration } from "../../compiler/pass_options.js";
import type { HloModule } from "../../ir/computation.js";
import { metadataLocation } from "../../ir/attributes.js";
import { atLocation } from "../../types/errors.js";
import { ShardingError } from "../axis.js";
import { IrGraph } from "../propagation/ir_graph.js";
import { runPropagationPass, type PropagationPassKind } from "../propagation/propagate.js";
import type { FactorStrategy } from "../propagation/strategies.js";

export interface PropagationPassOptions {
  readonly keepShardingRules?: boolean;
  readonly conservativePropagation?: boolean;
  readonly strategy?: FactorStrategy;
  readonly runOpPriorityPropagation?: boolean;
}

/** Runs one propagation pass of `kind` on a module. */
export function propagateModule(module: HloModule, kind: PropagationPassKind, options: PropagationPassOptions = {}): { module: HloModule; warnings: string[] } {
  const ir = new IrGraph(module);
  const bad = ir.unsupported[0];
  if (bad !== undefined) throw atLocation(new ShardingError(`${bad.reason}: ${bad.inst.name}`), metadataLocation(bad.inst.metadata));
  const report = runPropagationPass(ir.graph, {
    kind, meshes: ir.meshes, ruleFor: ir.ruleFor,
    ...(options.strategy !== undefined ? { strategy: options.strategy } : {}),
    ...(options.runOpPriorityPropagation !== undefined ? { runOpPriorityPropagation: options.runOpPriorityPropagation } : {}),
    ...(options.conservativePropagation !== undefined ? { conservativePropagation: options.conservativePropagation } : {}),
    ...(options.keepShardingRules !== undefined ? { keepShardingRules: options.keepShardingRules } : {}),
    newShardingConstraint: () => {
      throw new ShardingError("sharding groups whose members disagree need sdy.sharding_constraint ops, which this IR cannot make yet");
    },
  });
  return { module: ir.writeBack(), warnings: [...ir.warnings.map((w) => w.message), ...report.warnings.map((w) => w.message)] };
}

const COMMON_OPTIONS: readonly PassOptionSpec[] = [
  { name: "keep-sharding-rules", type: "bool", description: "whether to keep existing and created op sharding rules", default: false },
  { name: "module-dump-directory", type: "string", description: "where to dump any rewritten modules for debugging (not written by xlats)", default: "" },
  { name: "conservative-propagation", type: "bool", description: "whether to disallow split axes and non-divisible sharding axes during propagation", default: false },
  { name: "debug-sharding-origins", type: "bool", description: "whether to save the origin of each sharding axis on the module (sdy.sharding_origins)", default: false },
  { name: "debug-propagation-edge-sharding", type: "bool", description: "whether to save from which operand/result each axis was propagated (sdy.propagation_edges)", default: false },
];

const STRATEGY_OPTION: PassOptionSpec = {
  name: "propagation-strategy", type: "string", description: "which factor propagation strategy to use", default: "aggressive",
  values: ["basic", "aggressive", "basic-then-aggressive"],
};

const OP_PRIORITY_OPTION: PassOptionSpec = {
  name: "run-op-priority-propagation", type: "bool", description: "whether to run (or skip) op-priority propagation", default: true,
};

function optionsOf(o: PassOptions, withStrategy: boolean, withOpPriority: boolean): PropagationPassOptions {
  for (const debug of ["debug-sharding-origins", "debug-propagation-edge-sharding"]) {
    if (o.bool(debug)) throw new ShardingError(`-${o.passName}: option '${debug}' is not supported yet (its attributes have no place in the IR)`);
  }
  return {
    keepShardingRules: o.bool("keep-sharding-rules"),
    conservativePropagation: o.bool("conservative-propagation"),
    ...(withStrategy ? { strategy: o.string("propagation-strategy") as FactorStrategy } : {}),
    ...(withOpPriority ? { runOpPriorityPropagation: o.bool("run-op-priority-propagation") } : {}),
  };
}

function registration(name: string, kind: PropagationPassKind, description: string, withStrategy: boolean, withOpPriority: boolean): PassRegistration {
  return {
    name, description,
    options: [...COMMON_OPTIONS, ...(withStrategy ? [STRATEGY_OPTION] : []), ...(withOpPriority ? [OP_PRIORITY_OPTION] : [])],
    create(o): Pass {
      const options = optionsOf(o, withStrategy, withOpPriority);
      return {
        name,
        run(module, ctx) {
          const { module: out, warnings } = propagateModule(module, kind, options);
          for (const w of warnings) ctx.log(name, `warning: ${w}`);
          return out;
        },
      };
    },
  };
}

export const PROPAGATION_PASSES: readonly PassRegistration[] = [
  registration("sdy-basic-propagate", "basic", "propagates shardings along the axes all operands and results agree on (no conflict resolution)", false, false),
  registration("sdy-aggressive-propagate", "aggressive", "propagates shardings resolving conflicts (the larger tensor's sharding wins)", true, false),
  registration("sdy-op-priority-propagate", "op-priority", "aggressive propagation in rounds that let more kinds of ops pass shardings through", true, true),
  registration("sdy-user-priority-propagate", "user-priority", "op-priority propagation once per user priority (p0 first)", true, true),
];
