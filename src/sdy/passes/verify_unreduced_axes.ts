// -sdy-verify-unreduced-axes (Shardy's VerifyUnreducedAxesPass): an unreduced axis holds a
// partial result (a sum, max or min still to be taken across the axis), so it may only
// disappear through an op that takes that reduction: an explicit reshard
// (`sdy.reshard`, `sdy.sharding_constraint`), a reduce or all-reduce whose body is that
// reduction. Every other op must pass its operands' unreduced axes to its results, may
// add new ones only where it makes partial sums itself (any op may start a `sum`; a
// dot's contraction and a reduce's body decide theirs), and keeps each axis's reduction.
// Calls and returns must agree exactly with the function they enter or leave.
//
// The export pipeline runs this before inserting explicit reshards, so that a program
// that silently drops a partial sum is refused rather than partitioned into wrong numbers.
//
// Ops are visited as MLIR walks a function (an op after the ops of its regions) and the
// first error of each function is reported; tuples, which StableHLO programs do not
// have (they carry several values in the IR), are looked through.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { returnLocation, sourceLocation, type SourceLocation } from "../../ir/locations.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { ReductionOp, TensorSharding } from "../../sharding/model.js";
import { SdyVerifyError, type SdyDiagnostic } from "../../text/mlir/diagnostics.js";
import { printAxisRef } from "../../text/mlir/sdy_attr_text.js";
import {
  eraseManualAxes, mlirResultCount, opMessage, regionsOf, resultSharding, shardingBypassingBarriers, verifierView, verifyOneOp,
  type OpSite, type VerifyContext,
} from "../verify.js";
import { verifyUnreducedTransition, violation, type Violation } from "../verify_sharding.js";
import { bodyReduction } from "../body_reduction.js";

/** A problem found: its message and where the op (or return) it concerns was read from. */
interface Found {
  readonly message: string;
  readonly at: SourceLocation | undefined;
}

/** The values an instruction stands for in StableHLO: a tuple's elements (recursively), an element read from a tuple as that element. */
function mlirValues(v: Instruction): Instruction[] {
  if (v.opcode === "tuple") return v.operands.flatMap(mlirValues);
  if (v.opcode === "getTupleElement" && v.operands[0]!.opcode === "tuple") {
    return mlirValues(v.operands[0]!.operands[(v as Instruction<"getTupleElement">).attrs.index]!);
  }
  return [v];
}

const mlirOperands = (inst: Instruction): Instruction[] => inst.operands.flatMap(mlirValues);

const withoutBarriers = (v: Instruction): Instruction => {
  let x = v;
  while (x.opcode === "sdyPropagationBarrier") x = x.operands[0]!;
  return x;
};

/** `sdy.reshard` and `sdy.sharding_constraint`: the ops that may reduce unreduced axes explicitly. */
const isExplicitReshard = (v: Instruction): boolean => v.opcode === "sdyReshard" || v.opcode === "sdyShardingConstraint";

/** `'func.call' op has unreduced axes mismatch for 'y' at call argument 0.` when the two sets differ. */
function sameUnreducedAxes(a: TensorSharding | undefined, b: TensorSharding | undefined, where: string): Violation | undefined {
  const key = (s: TensorSharding | undefined): string[] => [...new Set((s?.unreducedAxes ?? []).map(printAxisRef))].sort();
  const x = key(a);
  const y = key(b);
  if (x.length === y.length && x.every((k, i) => k === y[i])) return undefined;
  const names = [...new Set([...(a?.unreducedAxes ?? []).filter((p) => !y.includes(printAxisRef(p))), ...(b?.unreducedAxes ?? []).filter((p) => !x.includes(printAxisRef(p)))].map((p) => p.name))].sort();
  return violation(`has unreduced axes mismatch for '${names.join(", ")}'${where}`);
}

const RETURN_SUFFIX = " without a blessed operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced.";

class UnreducedAxesChecker {
  constructor(private readonly ctx: VerifyContext) {}

  private sharding(v: Instruction, site: OpSite): TensorSharding | undefined {
    return shardingBypassingBarriers(v, site, this.ctx);
  }

  /** An operand's sharding, none when an explicit reshard made it (that reshard has already reduced what it drops). */
  private operandSharding(v: Instruction, site: OpSite): TensorSharding | undefined {
    return isExplicitReshard(withoutBarriers(v)) ? undefined : this.sharding(v, site);
  }

  private results(inst: Instruction): (TensorSharding | undefined)[] {
    return Array.from({ length: mlirResultCount(inst) }, (_, i) => resultSharding(inst, i));
  }

  private transition(site: OpSite, operands: readonly Instruction[], introduced: ReductionOp | undefined, removed: ReductionOp | undefined): Violation | undefined {
    return verifyUnreducedTransition(operands.map((o) => this.operandSharding(o, site)), this.results(site.inst), this.ctx.meshOf, introduced, removed);
  }

  /** The first problem of one op. */
  private op(site: OpSite): Found | undefined {
    const { inst } = site;
    const found = (message: string): Found => ({ message, at: sourceLocation(inst) });
    const at = (v: Violation | undefined): Found | undefined => (v === undefined ? undefined : found(opMessage(inst, v.message)));
    switch (inst.opcode) {
      case "sdyReshard": case "sdyShardingConstraint": {
        const v = verifyOneOp(site, this.ctx);
        return v === undefined ? undefined : found(v.message);
      }
      case "sdyAllReduce": case "sdyReduceScatter": {
        if (this.sharding(inst.operands[0]!, site) === undefined) return at(violation("operand must be sharded."));
        const v = verifyOneOp(site, this.ctx);
        return v === undefined ? undefined : found(v.message);
      }
      case "reduce": {
        const inputs = inst.operands.slice(0, inst.operands.length / 2);
        return at(this.transition(site, inputs, bodyReduction((inst as Instruction<"reduce">).attrs.toApply), undefined));
      }
      case "dot":
        return at(this.transition(site, mlirOperands(inst), "sum", undefined));
      case "allReduce": case "reduceScatter": {
        const operand = this.sharding(inst.operands[0]!, site);
        const result = resultSharding(inst, 0);
        if (operand === undefined && result === undefined) return undefined;
        const body = (inst as Instruction<"allReduce">).attrs.toApply;
        return at(verifyUnreducedTransition([operand], [result], this.ctx.meshOf, undefined, bodyReduction(body)));
      }
      case "call": return at(this.call(inst as Instruction<"call">, site));
      default:
        return at(this.transition(site, mlirOperands(inst), "sum", undefined));
    }
  }

  private call(call: Instruction<"call">, site: OpSite): Violation | undefined {
    const callee = call.attrs.toApply;
    const operands = mlirOperands(call);
    for (let i = 0; i < operands.length; i++) {
      if (isExplicitReshard(withoutBarriers(operands[i]!))) continue;
      const param = callee.parameters[i];
      const v = sameUnreducedAxes(this.sharding(operands[i]!, site), param === undefined ? undefined : callee.argShardings?.[i], ` at call argument ${i}.`);
      if (v !== undefined) return v;
    }
    for (let i = 0; i < mlirResultCount(call); i++) {
      const v = sameUnreducedAxes(callee.resultShardings?.[i], resultSharding(call, i), ` at call result ${i}.`);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  /** A return: each value against the sharding of the result it becomes (the function's, or the op's whose body this is). */
  private ret(body: Computation, targets: readonly (TensorSharding | undefined)[], site: OpSite, name: string): Found | undefined {
    const values = mlirValues(body.root);
    for (let i = 0; i < values.length && i < targets.length; i++) {
      const target = targets[i];
      if (target === undefined || isExplicitReshard(withoutBarriers(values[i]!))) continue;
      const v = sameUnreducedAxes(this.sharding(values[i]!, site), target, ` at return value ${i}${RETURN_SUFFIX}`);
      if (v !== undefined) return { message: `'${name}' op ${v.message}`, at: returnLocation(body) };
    }
    return undefined;
  }

  /** The first problem in a function, walking as MLIR does: an op after the ops of its regions, a region's return last in it. */
  func(f: Computation): Found | undefined {
    const visit = (c: Computation, enclosing: ReadonlySet<Computation>): Found | undefined => {
      if (enclosing.has(c)) return undefined;
      const inner = new Set(enclosing).add(c);
      for (const inst of c.instructions) {
        if (inst.opcode === "parameter" || inst.opcode === "tuple" || inst.opcode === "getTupleElement") continue;
        const site: OpSite = { inst, computation: c, func: f, bound: new Map() };
        for (const region of regionsOf(inst)) {
          const found = visit(region, inner);
          if (found !== undefined) return found;
          const terminator = this.regionReturn(inst, region, site);
          if (terminator !== undefined) return terminator;
        }
        const found = this.op(site);
        if (found !== undefined) return found;
      }
      return undefined;
    };
    const found = visit(f, new Set());
    if (found !== undefined) return found;
    return this.ret(f, f.resultShardings ?? [], { inst: f.root, computation: f, func: f, bound: new Map() }, "func.return");
  }

  /** `sdy.return` of a manual or named computation against the op's results (manual axes erased, as the body sees them). */
  private regionReturn(inst: Instruction, region: Computation, site: OpSite): Found | undefined {
    const bodySite = { ...site, computation: region };
    if (inst.opcode === "sdyManualComputation") {
      const a = (inst as Instruction<"sdyManualComputation">).attrs;
      return this.ret(region, a.outShardings.map((s) => eraseManualAxes(s, a.manualAxes)), bodySite, "sdy.return");
    }
    if (inst.opcode === "sdyNamedComputation") return this.ret(region, this.results(inst), bodySite, "sdy.return");
    return undefined;
  }

}

/** The errors -sdy-verify-unreduced-axes reports for `module`: the first of each function; empty when it verifies. */
export function unreducedAxesDiagnostics(module: HloModule): SdyDiagnostic[] {
  const { functions, ctx } = verifierView(module);
  const checker = new UnreducedAxesChecker(ctx);
  return functions.flatMap((f): SdyDiagnostic[] => {
    const found = checker.func(f);
    return found === undefined ? [] : [{ severity: "error", message: found.message, ...found.at }];
  });
}

/** Throws the pass's errors (an SdyVerifyError); the module is returned unchanged. */
export function verifyUnreducedAxes(module: HloModule): HloModule {
  const diagnostics = unreducedAxesDiagnostics(module);
  if (diagnostics.length > 0) throw new SdyVerifyError(diagnostics);
  return module;
}

export const VERIFY_UNREDUCED_AXES_REGISTRATION: PassRegistration = {
  name: "sdy-verify-unreduced-axes",
  description: "refuses ops that drop unreduced axes without reducing them, add ones they cannot make, or change their reduction",
  options: [],
  create: () => ({ name: "sdy-verify-unreduced-axes", run: verifyUnreducedAxes }),
};
