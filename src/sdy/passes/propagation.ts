// Shardy's propagation passes: -sdy-basic-propagate, -sdy-aggressive-propagate,
// -sdy-op-priority-propagate and -sdy-user-priority-propagate, with Shardy's options.
// Each reads the module as propagation's value graph (propagation/ir_graph.ts), runs
// propagation/propagate.ts on it, and writes the shardings back.

import type { Pass } from "../../passes/pass.js";
import type { PassOptionSpec, PassOptions, PassRegistration } from "../../passes/pass_options.js";
import type { HloModule, Instruction } from "../../ir/computation.js";
import { metadataLocation } from "../../ir/attributes.js";
import { atLocation } from "../../types/errors.js";
import { ShardingError } from "../../sharding/axis.js";
import { IrGraph } from "../propagation/ir_graph.js";
import { writeBack } from "../propagation/ir_writeback.js";
import { PropagationDebugRecorder } from "../propagation/debug.js";
import { addFuncDataFlowEdges, sinkFuncDataFlowEdges } from "../propagation/func_edges.js";
import { ExplainRecorder, observers, type ExplainNaming } from "../propagation/explain.js";
import type { POp, PValue } from "../propagation/graph.js";
import { debugAttributes } from "../propagation/debug_writeback.js";
import { runPropagationPass, type PropagationPassKind } from "../propagation/propagate.js";
import type { FactorStrategy } from "../propagation/strategies.js";

export interface PropagationPassOptions {
  readonly keepShardingRules?: boolean;
  /** Save each axis's origin (`sdy.sharding_origins`). */
  readonly debugShardingOrigins?: boolean;
  /** Save the edges each axis took (`sdy.propagation_edges`). */
  readonly debugPropagationEdgeSharding?: boolean;
  readonly conservativePropagation?: boolean;
  readonly strategy?: FactorStrategy;
  readonly runOpPriorityPropagation?: boolean;
  /** Receives the explanation of the propagation (`xlats opt --explain`). */
  readonly explain?: (lines: string[]) => void;
  /** Propagate through calls along function data-flow edges (calls not flattened). */
  readonly funcDataFlowEdges?: boolean;
}

/** Runs one propagation pass of `kind` on a module. */
/** A warning about an op (the instruction it is at, when known). */
export interface PropagationWarning {
  readonly message: string;
  readonly inst: Instruction | undefined;
}

export function propagateModule(module: HloModule, kind: PropagationPassKind, options: PropagationPassOptions = {}): { module: HloModule; warnings: PropagationWarning[] } {
  const ir = new IrGraph(module);
  const bad = ir.unsupported[0];
  if (bad !== undefined) throw atLocation(new ShardingError(`${bad.reason}: ${bad.inst.name}`), metadataLocation(bad.inst.metadata));
  const recorder = debugRecorder(ir, options);
  const funcEdges = options.funcDataFlowEdges === true ? addFuncDataFlowEdges(ir.graph) : [];
  const explainer = options.explain === undefined ? undefined
    : new ExplainRecorder(ir.graph, explainNaming(ir), kind === "basic" || options.strategy === "basic" ? "basic" : "aggressive");
  const observer = observers(recorder, explainer);
  const report = runPropagationPass(ir.graph, {
    kind, meshes: ir.meshes, ruleFor: ir.ruleFor,
    ...(observer !== undefined ? { observer } : {}),
    ...(options.strategy !== undefined ? { strategy: options.strategy } : {}),
    ...(options.runOpPriorityPropagation !== undefined ? { runOpPriorityPropagation: options.runOpPriorityPropagation } : {}),
    ...(options.conservativePropagation !== undefined ? { conservativePropagation: options.conservativePropagation } : {}),
    ...(options.keepShardingRules !== undefined ? { keepShardingRules: options.keepShardingRules } : {}),
  });
  if (explainer !== undefined) options.explain!(explainer.report());
  sinkFuncDataFlowEdges(ir.graph, funcEdges);
  const debug = recorder === undefined ? undefined : debugAttributes(recorder, options.debugPropagationEdgeSharding ?? false, options.debugShardingOrigins ?? false);
  const groupWarnings = report.warnings.map((w): PropagationWarning => ({ message: w.message, inst: ir.instOfValue.get(w.value) }));
  return { module: writeBack(ir, debug), warnings: [...ir.warnings, ...groupWarnings] };
}

/**
 * Values and ops named by what the IR knows: function arguments by index, ops by name
 * and source position, or, for IR built in memory (XlaBuilder), by the instruction's name.
 */
function explainNaming(ir: IrGraph): ExplainNaming {
  const where = (inst: Instruction | undefined): string => {
    const at = metadataLocation(inst?.metadata);
    if (at !== undefined) return ` at ${at.line}:${at.column}`;
    return inst === undefined ? "" : ` ${JSON.stringify(inst.name)}`;
  };
  const op = (o: POp): string => (o.kind === "func" ? `@${o.funcName ?? "?"}` : `${o.name}${where(ir.instOf(o))}`);
  return {
    op,
    value: (v: PValue): string => {
      if (v.def.kind === "arg") {
        return v.def.op.kind === "func" ? `argument ${v.def.index} of @${v.def.op.funcName ?? "?"}` : `argument ${v.def.index} of the body of ${op(v.def.op)}`;
      }
      return v.def.op.results.length === 1 ? op(v.def.op) : `result ${v.def.index} of ${op(v.def.op)}`;
    },
  };
}

/** The debug recorder the options ask for; its steps continue after those the module already records. */
export function debugRecorder(ir: IrGraph, options: Pick<PropagationPassOptions, "debugShardingOrigins" | "debugPropagationEdgeSharding">): PropagationDebugRecorder | undefined {
  const origins = options.debugShardingOrigins ?? false;
  const edges = options.debugPropagationEdgeSharding ?? false;
  if (!origins && !edges) return undefined;
  let maxStep = -1;
  for (const c of ir.module.computations) for (const inst of c.instructions) for (const step of inst.sdyPropagationEdges ?? []) maxStep = Math.max(maxStep, step.stepIndex);
  return new PropagationDebugRecorder(ir.graph, { shardingOrigins: origins, propagationEdges: edges, firstStep: maxStep + 1 });
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
  return {
    debugShardingOrigins: o.bool("debug-sharding-origins"),
    debugPropagationEdgeSharding: o.bool("debug-propagation-edge-sharding"),
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
          const explain = ctx.explain === undefined ? undefined : (lines: string[]): void => ctx.explain!(name, lines);
          const { module: out, warnings } = propagateModule(module, kind, { ...options, ...(explain !== undefined ? { explain } : {}) });
          for (const w of warnings) {
            ctx.log(name, `warning: ${w.message}`);
            ctx.warn?.(name, w.message, w.inst === undefined ? undefined : metadataLocation(w.inst.metadata));
          }
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
