// The export passes that finish propagation (Shardy's export pipeline before its
// partitioner): sharding groups removed, sharding constraints turned into reshards,
// function results given their returned values' shardings, input/output shardings made
// to divide their dimensions and stripped of sub-axes, every sharding closed, sharding
// rules dropped.

import type { PassRegistration } from "../../passes/pass_options.js";
import type { HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { axisSize, gcd, subAxis } from "../../sharding/axis.js";
import type { AxisRef, Mesh, TensorSharding } from "../../sharding/model.js";
import { eraseTriviallyDeadOps, mainFunc } from "../propagation/driver.js";
import { getSharding, setSharding, terminatorOf, type PGraph, type POp } from "../propagation/graph.js";
import { IrGraph } from "../propagation/ir_graph.js";
import { writeBack } from "../propagation/ir_writeback.js";
import { transformShardings } from "../propagation/sharding_walker.js";
import { resolveMesh } from "../../sharding/sharding.js";

/** Runs `fn` on the module's value graph and writes its shardings back. */
function onGraph(module: HloModule, fn: (ir: IrGraph) => void): HloModule {
  const ir = new IrGraph(module);
  fn(ir);
  return writeBack(ir);
}

/** Every dimension closed; replicated axes dropped (Shardy's getClosedLike). */
export function closedLike(s: TensorSharding): TensorSharding {
  return { ...s, dimShardings: s.dimShardings.map((d) => ({ ...d, isClosed: true })), replicatedAxes: [] };
}

/** Ops without side effects that nothing uses are erased (as MLIR's canonicalizer does). */
/** The attributes propagation's debug options write (Shardy's remove-propagation-debug-info). */
const DEBUG_ATTRIBUTES = new Set([
  "sdy.propagation_edges", "sdy.block_arg_propagation_edges", "sdy.result_propagation_edges",
  "sdy.sharding_origins", "sdy.block_arg_sharding_origins", "sdy.result_sharding_origins", "sdy.sharding_origin_name",
]);

function withoutDebug(attrs: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  if (attrs === undefined || !Object.keys(attrs).some((k) => DEBUG_ATTRIBUTES.has(k))) return undefined;
  return Object.fromEntries(Object.entries(attrs).filter(([k]) => !DEBUG_ATTRIBUTES.has(k)));
}

export function removePropagationDebugInfo(module: HloModule): HloModule {
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    for (const inst of c.instructions) {
      const frontendAttributes = withoutDebug(inst.frontendAttributes);
      if (frontendAttributes !== undefined) edit.annotate(inst, { frontendAttributes });
      if (inst.sdyPropagationEdges !== undefined) edit.annotate(inst, { sdyPropagationEdges: undefined });
    }
    const strip = (list: readonly Readonly<Record<string, string>>[] | undefined) =>
      (list?.some((a) => withoutDebug(a) !== undefined) ? list.map((a) => withoutDebug(a) ?? a) : undefined);
    const argAttributes = strip(c.argAttributes);
    const resultAttributes = strip(c.resultAttributes);
    if (argAttributes !== undefined || resultAttributes !== undefined) {
      edit.fields = { ...(argAttributes !== undefined && { argAttributes }), ...(resultAttributes !== undefined && { resultAttributes }) };
    }
    return edit;
  });
}

export function eraseDeadOps(module: HloModule): HloModule {
  return onGraph(module, (ir) => eraseTriviallyDeadOps(ir.graph));
}

export function closeShardings(module: HloModule): HloModule {
  return onGraph(module, (ir) => transformShardings(ir.graph, closedLike));
}

export function removeShardingGroups(module: HloModule): HloModule {
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    for (const inst of c.instructions) if (inst.opcode === "sdyShardingGroup") edit.remove(inst);
    return edit;
  });
}

export function shardingConstraintsToReshards(module: HloModule): HloModule {
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    for (const inst of c.instructions) {
      if (inst.opcode !== "sdyShardingConstraint") continue;
      // The same operand, sharding and name: only the op changes.
      edit.substitute(inst, { ...(inst as Instruction<"sdyShardingConstraint">), opcode: "sdyReshard" } as Instruction<"sdyReshard">);
    }
    return edit;
  });
}

/** Functions other than main take their results' shardings from the values they return (or none). */
export function propagateToFuncResults(module: HloModule): HloModule {
  return onGraph(module, (ir) => {
    const main = mainFunc(ir.graph);
    for (const f of ir.graph.funcs) {
      if (f === main) continue;
      const ret = terminatorOf(f);
      if (ret.kind !== "funcReturn") continue;
      ir.graph.funcResultShardings.set(f, ret.operands.map((v) => getSharding(ir.graph, v)));
    }
  });
}

/** The main function's argument and result shardings, rewritten by `fn` with each value's dimensions. */
function mapMainFuncShardings(graph: PGraph, fn: (s: TensorSharding, dims: readonly number[]) => TensorSharding): void {
  const main = mainFunc(graph);
  if (main === undefined) return;
  for (const arg of main.regions[0]!.args) {
    const s = getSharding(graph, arg);
    if (s !== undefined && arg.dims !== undefined) setSharding(graph, arg, fn(s, arg.dims));
  }
  const results = graph.funcResultShardings.get(main) ?? [];
  terminatorOf(main).operands.forEach((v, i) => {
    const s = results[i];
    if (s !== undefined && v.dims !== undefined) results[i] = fn(s, v.dims);
  });
}

/** Open dimensions keep only the full axes before their first sub-axis. */
export function removeSubAxesInInputOutputShardings(module: HloModule): HloModule {
  return onGraph(module, (ir) => mapMainFuncShardings(ir.graph, (s) => ({
    ...s,
    dimShardings: s.dimShardings.map((d) => {
      if (d.isClosed) return d;
      const k = d.axes.findIndex((a) => a.subAxis !== undefined);
      return k < 0 ? d : { ...d, axes: d.axes.slice(0, k) };
    }),
  })));
}

/** The largest prefix of each dimension's axes whose size divides the dimension (a sub-axis of the first axis that does not). */
export function evenlySharded(s: TensorSharding, dims: readonly number[], mesh: Mesh): TensorSharding {
  return {
    ...s,
    dimShardings: s.dimShardings.map((d, i) => {
      const dimSize = dims[i]!;
      const total = d.axes.reduce((n, a) => n * axisSize(a, mesh), 1);
      if (dimSize % total === 0) return d;
      let remaining = dimSize;
      const axes: AxisRef[] = [];
      for (const a of d.axes) {
        const size = axisSize(a, mesh);
        const common = gcd(size, remaining);
        if (common === 1) break;
        if (common === size) {
          axes.push(a);
          remaining /= common;
          continue;
        }
        axes.push(subAxis(a.name, a.subAxis?.preSize ?? 1, common));
        break;
      }
      return { axes, isClosed: d.isClosed };
    }),
  };
}

/** Function argument and result shardings, call results' shardings and manual computations' operand and result shardings made to divide their dimensions. */
export function updateNonDivisibleInputOutputShardings(module: HloModule): HloModule {
  return onGraph(module, (ir) => {
    const even = (s: TensorSharding, dims: readonly number[]): TensorSharding => evenlySharded(s, dims, resolveMesh(s.meshOrRef, ir.meshes));
    for (const f of ir.graph.funcs) {
      for (const arg of f.regions[0]!.args) {
        const s = getSharding(ir.graph, arg);
        if (s !== undefined && arg.dims !== undefined) setSharding(ir.graph, arg, even(s, arg.dims));
      }
      const results = ir.graph.funcResultShardings.get(f) ?? [];
      terminatorOf(f).operands.forEach((v, i) => {
        const s = results[i];
        if (s !== undefined && v.dims !== undefined) results[i] = even(s, v.dims);
      });
    }
    const visit = (op: POp): void => {
      for (const r of op.regions) for (const inner of r.ops) visit(inner);
      // A call's results are its callee's results seen from the caller: they follow them.
      if (op.kind === "call") {
        for (const r of op.results) {
          const s = ir.graph.shardings.get(r);
          if (s !== undefined && r.dims !== undefined) ir.graph.shardings.set(r, even(s, r.dims));
        }
        return;
      }
      if (op.kind !== "manualComputation") return;
      // Manual computations keep their operand and result shardings divisible.
      for (const v of [...op.regions[0]!.args.map((a, i) => ({ holder: a, dims: op.operands[i]!.dims })), ...op.results.map((r) => ({ holder: r, dims: r.dims }))]) {
        const s = ir.graph.shardings.get(v.holder);
        if (s !== undefined && v.dims !== undefined) ir.graph.shardings.set(v.holder, even(s, v.dims));
      }
    };
    for (const f of ir.graph.funcs) visit(f);
  });
}

export const plain = (name: string, description: string, run: (m: HloModule) => HloModule): PassRegistration => ({
  name, description, options: [], create: () => ({ name, run: (m) => run(m) }),
});

export const EXPORT_PASSES: readonly PassRegistration[] = [
  plain("sdy-close-shardings", "closes every dimension sharding and drops replicated axes", closeShardings),
  plain("sdy-remove-sharding-groups", "removes the sdy.sharding_group ops", removeShardingGroups),
  plain("sdy-sharding-constraint-to-reshard", "turns sharding constraints into reshards", shardingConstraintsToReshards),
  plain("sdy-propagate-to-func-results", "functions other than main take their results' shardings from the values they return", propagateToFuncResults),
  plain("sdy-remove-sub-axes-in-input-output-shardings", "open dimensions of main's argument and result shardings drop their sub-axes", removeSubAxesInInputOutputShardings),
  plain("sdy-remove-propagation-debug-info", "removes the sharding origins and propagation edges the debug options wrote", removePropagationDebugInfo),
  plain("sdy-update-non-divisible-input-output-shardings", "input/output shardings keep the axes that divide their dimensions", updateNonDivisibleInputOutputShardings),
];
