// Shardy in HLO text, the way XLA carries it between its Shardy passes: sdy ops are
// custom calls with targets "xla.sdy.<Op>" (XLA's own sharding group is
// "xla.sdy.ShardingGroup"), and every sdy attribute is a frontend attribute
// "xla.sdy.<name>" whose value is the attribute's MLIR text (an op's own `sharding`
// is "xla.sdy.op_sharding", apart from the instruction's per-value "xla.sdy.sharding"):
//
//   %r = f32[8,8] custom-call(f32[8,8] %x), custom_call_target="xla.sdy.Reshard",
//        frontend_attributes={xla.sdy.op_sharding="#sdy.sharding<@mesh, [{\"a\"}, {}]>"}
//
// An instruction's sdy.sharding is `xla.sdy.sharding` (a per-value sharding), its rule
// `xla.sdy.sharding_rule`, a
// parameter's is its argument sharding, and the module's meshes are the header's
// `frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[...]>, ...}"}`.

import type { Computation, Instruction } from "../../ir/computation.js";
import type { OpAttributes } from "../../ir/opcodes.js";
import {
  parseAllToAllParams, parseAxesPerDim, parseAxisRefList, parseManualAxes, parseMesh, parseSdyAttribute,
  parseStrippedShardingPerValue, printAllToAllParams, printAxesPerDim, printAxisRefList, printManualAxes,
  printMesh, printShardingPerValue, printStrippedShardingPerValue, printTensorSharding,
} from "../mlir/sdy_attr_text.js";
import type { NamedMesh, OpShardingRule, PropagationDirection, ReductionOp, TensorSharding, TensorShardingPerValue } from "../../sharding/model.js";
import { printOpShardingRule, readOpShardingRule } from "../mlir/sdy_rule_text.js";
import type { SdyOpcode } from "../../ir/shape/sdy.js";
import { ParseError } from "../../types/errors.js";
import { Cursor as MlirCursor } from "../mlir/cursor.js";
import { parseLiteral, printLiteral } from "./literal_text.js";
import { Cursor, SourceText } from "./cursor.js";
import type { DecodeInput, EncodeContext, OpText } from "./op_attrs.js";

/** The custom-call target of each sdy op. */
const TARGETS: { readonly [O in SdyOpcode]: string } = {
  sdyShardingConstraint: "xla.sdy.ShardingConstraint",
  sdyReshard: "xla.sdy.Reshard",
  sdyManualComputation: "xla.sdy.ManualComputation",
  sdyShardingGroup: "xla.sdy.ShardingGroup",
  sdyConstant: "xla.sdy.Constant",
  sdyDataFlowEdge: "xla.sdy.DataFlowEdge",
  sdyPropagationBarrier: "xla.sdy.PropagationBarrier",
  sdyNamedComputation: "xla.sdy.NamedComputation",
  sdyFuncDataFlowEdge: "xla.sdy.FuncDataFlowEdge",
  sdyAllGather: "xla.sdy.AllGather",
  sdyAllSlice: "xla.sdy.AllSlice",
  sdyAllReduce: "xla.sdy.AllReduce",
  sdyReduceScatter: "xla.sdy.ReduceScatter",
  sdyAllToAll: "xla.sdy.AllToAll",
  sdyCollectivePermute: "xla.sdy.CollectivePermute",
  sdyShardedToUnreduced: "xla.sdy.ShardedToUnreduced",
  sdyReplicatedToUnreduced: "xla.sdy.ReplicatedToUnreduced",
};

const BY_TARGET: ReadonlyMap<string, SdyOpcode> = new Map(Object.entries(TARGETS).map(([op, t]) => [t, op as SdyOpcode]));

/** The sdy opcode a custom call with this target stands for. */
export function sdyOpcodeForTarget(target: string | undefined): SdyOpcode | undefined {
  return target === undefined ? undefined : BY_TARGET.get(target);
}

const KEY = (name: string): string => `xla.sdy.${name}`;

/** Reads an MLIR-text value with one of attr_text's parsers; a mistake is an error at the instruction. */
function readMlir<T>(text: string, parse: (c: MlirCursor) => T, fail: (reason: string) => ParseError, what: string): T {
  const c = new MlirCursor(text, what);
  try {
    const value = parse(c);
    if (!c.atEnd()) throw c.error(`unexpected ${c.describeNext()}`);
    return value;
  } catch (e) {
    if (e instanceof ParseError) throw fail(`${what}: ${e.reason} (column ${e.column} of ${JSON.stringify(text)})`);
    throw e;
  }
}

/** Takes frontend attribute xla.sdy.<name> (the decoder consumes it), parsed. */
function take<T>(d: DecodeInput, name: string, parse: (c: MlirCursor) => T): T | undefined {
  const text = d.frontend[KEY(name)];
  if (text === undefined) return undefined;
  delete d.frontend[KEY(name)];
  return readMlir(text, parse, (r) => d.error(r), KEY(name));
}

function need<T>(d: DecodeInput, name: string, parse: (c: MlirCursor) => T): T {
  const v = take(d, name, parse);
  if (v === undefined) throw d.error(`custom-call ${KEY(name)} is missing its frontend attribute ${KEY(name)}`);
  return v;
}

const sharding = (c: MlirCursor): TensorSharding => {
  const a = parseSdyAttribute(c);
  if (a.kind !== "sharding") throw c.error("expected #sdy.sharding<...>");
  return a.value;
};
const enumWord = <T extends string>(choices: readonly T[]) => (c: MlirCursor): T => {
  const w = c.identifier();
  if (w === undefined || !(choices as readonly string[]).includes(w)) throw c.error(`expected one of ${choices.join(", ")}`);
  return w as T;
};
const integer = (c: MlirCursor): number => c.integer("an integer");
const stringValue = (c: MlirCursor): string => {
  const s = c.stringLiteral();
  if (s === undefined) throw c.error("expected a string");
  return s;
};

/** target=..., the op's own frontend attributes, and called computations. */
function encodeOp(inst: Instruction, e: EncodeContext, attrs: Readonly<Record<string, string>>, called: readonly string[] = []): string[] {
  for (const [k, v] of Object.entries(attrs)) e.frontend[KEY(k)] = v;
  return [
    `custom_call_target="${TARGETS[inst.opcode as SdyOpcode]}"`,
    ...(called.length > 0 ? [`called_computations={${called.join(", ")}}`] : []),
  ];
}

/** Decoders read the target the parser dispatched on. */
function takeTarget(d: DecodeInput): void {
  d.take("custom_call_target", (c) => c.string());
}

const withSharding = <O extends "sdyShardingConstraint" | "sdyReshard">(): OpText<O> => ({
  decode: (d) => {
    takeTarget(d);
    return { sharding: need(d, "op_sharding", sharding) } as OpAttributes[O];
  },
  encode: (inst, e) => encodeOp(inst, e, { op_sharding: printTensorSharding(inst.attrs.sharding) }),
});

/** A collective: its axes under `field` (written `xla.sdy.<key>`), and out_sharding. */
function collective<O extends SdyOpcode>(
  field: string, key: string, parse: (c: MlirCursor) => unknown, print: (v: never) => string,
): OpText<O> {
  return {
    decode: (d) => {
      takeTarget(d);
      const reductionOp = take(d, "reduction_op", enumWord<ReductionOp>(["sum", "max", "min"]));
      return {
        [field]: need(d, key, parse), outSharding: need(d, "out_sharding", sharding),
        ...(reductionOp !== undefined && reductionOp !== "sum" ? { reductionOp } : {}),
      } as unknown as OpAttributes[O];
    },
    encode: (inst, e) => {
      const a = inst.attrs as unknown as Record<string, unknown> & { outSharding: TensorSharding; reductionOp?: ReductionOp };
      return encodeOp(inst, e, {
        [key]: print(a[field] as never), out_sharding: printTensorSharding(a.outSharding),
        ...(a.reductionOp !== undefined ? { reduction_op: a.reductionOp } : {}),
      });
    },
  };
}

const identityEdge = <O extends "sdyFuncDataFlowEdge">(): OpText<O> => ({
  decode: (d) => {
    takeTarget(d);
    return {} as OpAttributes[O];
  },
  encode: (inst, e) => encodeOp(inst, e, {}),
});

const perValue = (c: MlirCursor): TensorShardingPerValue => parseStrippedShardingPerValue(c);

export const SDY_OP_TEXT: { readonly [O in SdyOpcode]: OpText<O> } = {
  sdyShardingConstraint: withSharding(),
  sdyReshard: withSharding(),
  sdyDataFlowEdge: {
    decode: (d) => {
      takeTarget(d);
      const s = take(d, "op_sharding", sharding);
      return s === undefined ? {} : { sharding: s };
    },
    encode: (inst, e) => encodeOp(inst, e, inst.attrs.sharding === undefined ? {} : { op_sharding: printTensorSharding(inst.attrs.sharding) }),
  },
  sdyFuncDataFlowEdge: identityEdge(),
  sdyPropagationBarrier: {
    decode: (d) => {
      takeTarget(d);
      return { allowedDirection: need(d, "allowed_direction", enumWord<PropagationDirection>(["NONE", "FORWARD", "BACKWARD", "BOTH"])) };
    },
    encode: (inst, e) => encodeOp(inst, e, { allowed_direction: inst.attrs.allowedDirection }),
  },
  sdyShardingGroup: {
    decode: (d) => {
      takeTarget(d);
      return { groupId: need(d, "sharding_group_id", integer) };
    },
    encode: (inst, e) => encodeOp(inst, e, { sharding_group_id: String(inst.attrs.groupId) }),
  },
  sdyConstant: {
    decode: (d) => {
      takeTarget(d);
      const text = d.frontend[KEY("value")];
      if (text === undefined) throw d.error("custom-call xla.sdy.Constant is missing its frontend attribute xla.sdy.value");
      delete d.frontend[KEY("value")];
      const c = new Cursor(new SourceText(text, KEY("value")));
      try {
        return { literal: parseLiteral(c, d.shape) };
      } catch (e) {
        if (e instanceof ParseError) throw d.error(`${KEY("value")}: ${e.reason}`);
        throw e;
      }
    },
    encode: (inst, e) => encodeOp(inst, e, { value: printLiteral(inst.attrs.literal) }),
  },
  sdyNamedComputation: {
    decode: (d) => {
      takeTarget(d);
      const [body, ...extra] = d.need("called_computations", (c) => d.computations(c));
      if (body === undefined || extra.length > 0) throw d.error("xla.sdy.NamedComputation calls exactly one computation, its body");
      const inShardings = take(d, "in_shardings", perValue);
      const outShardings = take(d, "out_shardings", perValue);
      return {
        name: need(d, "name", stringValue), body,
        ...(inShardings !== undefined ? { inShardings } : {}), ...(outShardings !== undefined ? { outShardings } : {}),
      };
    },
    encode: (inst, e) => encodeOp(inst, e, {
      name: JSON.stringify(inst.attrs.name),
      ...(inst.attrs.inShardings !== undefined ? { in_shardings: printStrippedShardingPerValue(inst.attrs.inShardings) } : {}),
      ...(inst.attrs.outShardings !== undefined ? { out_shardings: printStrippedShardingPerValue(inst.attrs.outShardings) } : {}),
    }, [e.computationName(inst.attrs.body)]),
  },
  sdyManualComputation: {
    decode: (d) => {
      takeTarget(d);
      const [body, ...extra] = d.need("called_computations", (c) => d.computations(c));
      if (body === undefined || extra.length > 0) throw d.error("xla.sdy.ManualComputation calls exactly one computation, its body");
      return {
        inShardings: need(d, "in_shardings", perValue), outShardings: need(d, "out_shardings", perValue),
        manualAxes: need(d, "manual_axes", parseManualAxes), body, resultShape: d.shape,
      };
    },
    encode: (inst, e) => encodeOp(inst, e, {
      in_shardings: printStrippedShardingPerValue(inst.attrs.inShardings),
      out_shardings: printStrippedShardingPerValue(inst.attrs.outShardings),
      manual_axes: printManualAxes(inst.attrs.manualAxes),
    }, [e.computationName(inst.attrs.body)]),
  },
  sdyAllGather: collective("gatheringAxes", "gathering_axes", parseAxesPerDim, printAxesPerDim),
  sdyAllSlice: collective("slicingAxes", "slicing_axes", parseAxesPerDim, printAxesPerDim),
  sdyAllReduce: collective("reductionAxes", "reduction_axes", parseAxisRefList, printAxisRefList),
  sdyReduceScatter: collective("reduceScatterAxes", "reduce_scatter_axes", parseAxesPerDim, printAxesPerDim),
  sdyAllToAll: collective("params", "params", parseAllToAllParams, printAllToAllParams),
  sdyCollectivePermute: {
    decode: (d) => {
      takeTarget(d);
      return { outSharding: need(d, "out_sharding", sharding) };
    },
    encode: (inst, e) => encodeOp(inst, e, { out_sharding: printTensorSharding(inst.attrs.outSharding) }),
  },
  sdyShardedToUnreduced: collective("axes", "axes", parseAxesPerDim, printAxesPerDim),
  sdyReplicatedToUnreduced: collective("axes", "axes", parseAxisRefList, printAxisRefList),
};

// ---------------------------------------------------------------- shardings of any instruction, meshes

/** What an instruction's frontend attributes said about its shardings, once taken out of them. */
export interface SdyShardingsRead {
  /** An instruction's `xla.sdy.sharding` (one sharding per result). */
  sdySharding?: TensorShardingPerValue;
  /** A parameter's `xla.sdy.sharding` (its argument sharding). */
  argSharding?: TensorSharding;
  /** A root's `xla.sdy.result_shardings`: the computation's result shardings by result index. */
  resultShardings?: ReadonlyMap<number, TensorSharding>;
  /** An instruction's `xla.sdy.sharding_rule`. */
  sdyShardingRule?: OpShardingRule;
}

/** Moves the typed sdy values out of a parsed instruction's frontend attributes. */
export function takeSdyShardings(frontend: Record<string, string>, isParameter: boolean, fail: (reason: string) => ParseError): SdyShardingsRead {
  const out: SdyShardingsRead = {};
  const text = frontend[KEY("sharding")];
  if (text !== undefined) {
    delete frontend[KEY("sharding")];
    const a = readMlir(text, parseSdyAttribute, fail, KEY("sharding"));
    if (isParameter && a.kind === "sharding") out.argSharding = a.value;
    else if (!isParameter && a.kind === "shardingPerValue") out.sdySharding = a.value;
    else throw fail(`${KEY("sharding")} of ${isParameter ? "a parameter must be #sdy.sharding" : "an instruction must be #sdy.sharding_per_value"}<...>`);
  }
  const rule = frontend[KEY("sharding_rule")];
  if (rule !== undefined) {
    delete frontend[KEY("sharding_rule")];
    out.sdyShardingRule = readMlir(rule, readOpShardingRule, fail, KEY("sharding_rule"));
  }
  const results = frontend[KEY("result_shardings")];
  if (results !== undefined) {
    delete frontend[KEY("result_shardings")];
    out.resultShardings = readMlir(results, (c) => {
      const byIndex = new Map<number, TensorSharding>();
      c.expect("{");
      if (!c.accept("}")) {
        do {
          const index = c.integer("a result index");
          c.expect("=");
          byIndex.set(index, sharding(c));
        } while (c.accept(","));
        c.expect("}");
      }
      return byIndex;
    }, fail, KEY("result_shardings"));
  }
  return out;
}

/** The frontend attributes that carry an instruction's typed sdy values in HLO text. */
export function sdyShardingEntries(inst: Instruction, computation: Computation): Record<string, string> {
  const out: Record<string, string> = {};
  if (inst.opcode === "parameter") {
    const arg = computation.argShardings?.[(inst as Instruction<"parameter">).attrs.number];
    if (arg !== undefined) out[KEY("sharding")] = printTensorSharding(arg);
  } else if (inst.sdySharding !== undefined) {
    out[KEY("sharding")] = printShardingPerValue(inst.sdySharding);
  }
  if (inst.sdyShardingRule !== undefined) out[KEY("sharding_rule")] = printOpShardingRule(inst.sdyShardingRule);
  const results = computation.resultShardings ?? [];
  if (inst === computation.root && results.some((r) => r !== undefined)) {
    const entries = results.flatMap((r, i) => (r === undefined ? [] : [`${i} = ${printTensorSharding(r)}`]));
    out[KEY("result_shardings")] = `{${entries.join(", ")}}`;
  }
  return out;
}

/** `{mesh = #sdy.mesh<[...]>, other = #sdy.mesh<[...]>}`: the module's meshes as XLA writes them. */
export function printMeshes(meshes: readonly NamedMesh[]): string {
  return `{${meshes.map((m) => `${m.name} = #sdy.mesh${printMesh(m.mesh)}`).join(", ")}}`;
}

export function parseMeshes(text: string, fail: (reason: string) => ParseError): NamedMesh[] {
  return readMlir(text, (c) => {
    const out: NamedMesh[] = [];
    c.expect("{");
    if (c.accept("}")) return out;
    do {
      const name = c.peek() === '"' ? c.stringLiteral()! : c.expectIdentifier("a mesh name");
      c.expect("=");
      if (!c.accept("#sdy.mesh")) throw c.error("expected #sdy.mesh<...>");
      out.push({ name, mesh: parseMesh(c) });
    } while (c.accept(","));
    c.expect("}");
    return out;
  }, fail, KEY("meshes"));
}

export const SDY_MESHES_KEY = KEY("meshes");
