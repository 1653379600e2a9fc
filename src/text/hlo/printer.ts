// IR → HLO text, in XLA's canonical form: a `HloModule` header with the entry layout,
// computations callees first (the entry last, marked ENTRY), one instruction per line
// with its shape (layout included), its operands with their shapes, then its
// attributes, then sharding, frontend attributes and metadata. Printing what the parser
// read gives the same text again: print(parse(print(m))) == print(m).

import { asModule, type Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { OP_TABLE, type OpAttributes, type Opcode } from "../../ir/opcodes.js";
import { type Shape } from "../../types/shape.js";
import { printFrontendAttributes, printMetadata } from "./attr_syntax.js";
import { printLiteral } from "./literal_text.js";
import { OP_TEXT, type EncodeContext, type OpText } from "./op_attrs.js";
import { printShape } from "./shape_text.js";
import { printMeshes, SDY_MESHES_KEY, sdyShardingEntries } from "./sdy_text.js";
import { printBufferDonors, printInputOutputAlias } from "./module_aliasing.js";
import { appendAll } from "../../types/arrays.js";

const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_.\-]*$/;

/** Assigns every computation and instruction a unique, valid HLO name (kept when it already is one). */
class Names {
  private readonly used = new Set<string>();
  private readonly computations = new Map<Computation, string>();
  private readonly instructions = new Map<Instruction, string>();
  /** The name of the start op printed for a send/recv (`<name>.start`). */
  private readonly starts = new Map<Instruction, string>();

  constructor(module: HloModule) {
    // Names that are valid and seen first are kept; the rest get fresh ones. Doing the
    // keeping first makes the result independent of the order fresh names are made in.
    const keep = (name: string): boolean => VALID_NAME.test(name) && !this.used.has(name) && (this.used.add(name), true);
    const renameLater: [Computation | Instruction, string][] = [];
    for (const comp of module.computations) {
      if (keep(comp.name)) this.computations.set(comp, comp.name);
      else renameLater.push([comp, "computation"]);
      for (const inst of comp.instructions) {
        if (keep(inst.name)) this.instructions.set(inst, inst.name);
        else renameLater.push([inst, `${OP_TABLE[inst.opcode].hlo}.${inst.id}`]);
      }
    }
    for (const [thing, base] of renameLater) {
      const name = this.fresh(base);
      if ("opcode" in thing) this.instructions.set(thing, name);
      else this.computations.set(thing, name);
    }
    for (const comp of module.computations) {
      for (const inst of comp.instructions) {
        if (inst.opcode === "send" || inst.opcode === "recv") this.starts.set(inst, this.fresh(`${this.of(inst)}.start`));
      }
    }
  }

  private fresh(base: string): string {
    const clean = VALID_NAME.test(base) ? base : `x${base.replace(/[^A-Za-z0-9_.\-]/g, "_")}`;
    let name = clean;
    // Suffixes below the last one given for this base are all taken: start past it
    // (thousands of computations renamed from one base stay linear).
    let k = this.nextSuffix.get(clean) ?? 1;
    for (; this.used.has(name); k++) name = `${clean}.${k}`;
    this.nextSuffix.set(clean, k);
    this.used.add(name);
    return name;
  }
  private readonly nextSuffix = new Map<string, number>();

  of(inst: Instruction): string {
    return this.instructions.get(inst) ?? inst.name;
  }

  startOf(inst: Instruction): string {
    return this.starts.get(inst)!;
  }

  computation(c: Computation): string {
    return this.computations.get(c) ?? c.name;
  }
}

/** The module (or a built computation and its callees) as HLO text. */
export function printHlo(program: HloModule | Computation): string {
  const module = asModule(program, "printHlo");
  const names = new Names(module);
  const entry = module.entry;
  const layout = `{(${entry.parameters.map((p) => printShape(p.shape)).join(", ")})->${printShape(entry.root.shape)}}`;
  const moduleName = VALID_NAME.test(module.name) ? module.name : `m${module.name.replace(/[^A-Za-z0-9_.\-]/g, "_")}`;
  const grid = [
    ...(module.config.replicaCount !== 1 ? [`replica_count=${module.config.replicaCount}`] : []),
    ...(module.config.partitionCount !== 1 ? [`num_partitions=${module.config.partitionCount}`] : []),
    ...(module.config.inputOutputAlias?.length ? [printInputOutputAlias(module.config.inputOutputAlias)] : []),
    ...(module.config.bufferDonors?.length ? [printBufferDonors(module.config.bufferDonors)] : []),
  ];
  const meshes = module.meshes !== undefined && module.meshes.length > 0
    ? [`frontend_attributes=${printFrontendAttributes({ [SDY_MESHES_KEY]: printMeshes(module.meshes) })}`] : [];
  const parts = [`HloModule ${[`${moduleName}`, `entry_computation_layout=${layout}`, ...grid, ...meshes].join(", ")}\n`];
  for (const comp of module.computations) parts.push(printComputation(comp, comp === entry, names));
  return parts.join("\n");
}

/** The HloSharding text of a StableHLO function argument's or result's `mhlo.sharding = "..."`. */
function xlaShardingOf(attrs: Readonly<Record<string, string>> | undefined): string | undefined {
  const text = attrs?.["mhlo.sharding"];
  return text !== undefined && /^"[^"\\]*"$/.test(text) ? text.slice(1, -1) : undefined;
}

/**
 * The sharding XLA gives `inst` in HLO text: its own, else for a parameter its
 * argument's `mhlo.sharding`, for the root its results' (a tuple sharding for several).
 */
function hloShardingOf(inst: Instruction, comp: Computation): string | undefined {
  if (inst.sharding !== undefined) return inst.sharding;
  if (inst.opcode === "parameter") return xlaShardingOf(comp.argAttributes?.[(inst.attrs as OpAttributes["parameter"]).number]);
  if (inst !== comp.root || comp.resultAttributes === undefined) return undefined;
  const results = comp.resultAttributes.map(xlaShardingOf);
  if (results.some((r) => r === undefined)) return undefined;
  return results.length === 1 ? results[0]! : `{${results.join(", ")}}`;
}

function printComputation(comp: Computation, isEntry: boolean, names: Names): string {
  const params = comp.parameters.map((p) => `${names.of(p)}: ${printShape(p.shape, false)}`).join(", ");
  const lines = [`${isEntry ? "ENTRY " : ""}%${names.computation(comp)} (${params}) -> ${printShape(comp.root.shape, false)} {`];
  for (const inst of comp.instructions) appendAll(lines, printInstruction(inst, inst === comp.root, names, sdyShardingEntries(inst, comp), hloShardingOf(inst, comp)));
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

function operandList(operands: readonly Instruction[], names: Names): string {
  return operands.map((o) => `${printShape(o.shape)} %${names.of(o)}`).join(", ");
}

/** sharding, frontend attributes and metadata, which any instruction may carry. */
function generalAttributes(inst: Instruction, frontend: Readonly<Record<string, string>>, sharding = inst.sharding): string[] {
  const out: string[] = [];
  if (sharding !== undefined) out.push(`sharding=${sharding}`);
  if (Object.keys(frontend).length > 0) out.push(`frontend_attributes=${printFrontendAttributes(frontend)}`);
  if (inst.metadata !== undefined && Object.keys(inst.metadata).length > 0) out.push(`metadata=${printMetadata(inst.metadata)}`);
  return out;
}

function line(isRoot: boolean, name: string, shape: Shape, op: string, args: string, attrs: string[]): string {
  return `  ${isRoot ? "ROOT " : ""}%${name} = ${printShape(shape)} ${op}(${args})${attrs.map((a) => `, ${a}`).join("")}`;
}

function printInstruction(inst: Instruction, isRoot: boolean, names: Names, sdy: Readonly<Record<string, string>>, sharding = inst.sharding): string[] {
  const name = names.of(inst);
  const frontend: Record<string, string> = { ...inst.frontendAttributes, ...sdy };
  if (inst.opcode === "parameter") {
    const attrs = inst.attrs as OpAttributes["parameter"];
    return [line(isRoot, name, inst.shape, "parameter", String(attrs.number), generalAttributes(inst, frontend, sharding))];
  }
  if (inst.opcode === "constant") {
    const attrs = inst.attrs as OpAttributes["constant"];
    return [line(isRoot, name, inst.shape, "constant", printLiteral(attrs.literal), generalAttributes(inst, frontend, sharding))];
  }
  if (inst.opcode === "send" || inst.opcode === "recv") return printTransfer(inst, isRoot, names, frontend);
  const encoder: EncodeContext = { computationName: (c) => `%${names.computation(c)}`, frontend };
  const own = (OP_TEXT[inst.opcode] as OpText<Opcode>).encode(inst, encoder);
  return [line(isRoot, name, inst.shape, OP_TABLE[inst.opcode].hlo, operandList(inst.operands, names), [...own, ...generalAttributes(inst, frontend, sharding)])];
}

/** One IR send/recv is XLA's pair: a start op (data, u32[] context, token[]) and its -done. */
function printTransfer(inst: Instruction, isRoot: boolean, names: Names, frontend: Record<string, string>): string[] {
  const a = inst.attrs as OpAttributes["send"] | OpAttributes["recv"];
  const kind = inst.opcode === "send" ? "send" : "recv";
  const data = kind === "send" ? inst.operands[0]!.shape : (a as OpAttributes["recv"]).shape;
  const startShape: Shape = { kind: "tuple", elements: [data, { kind: "array", elementType: "u32", dimensions: [], dynamicDimensions: [], layout: { minorToMajor: [] } }, { kind: "token" }] };
  const channel = [`channel_id=${a.channel.handle}`, ...(a.isHostTransfer ? ["is_host_transfer=true"] : [])];
  const general = generalAttributes(inst, frontend);
  const start = names.startOf(inst);
  return [
    line(false, start, startShape, kind, operandList(inst.operands, names), [...channel, ...general]),
    line(isRoot, names.of(inst), inst.shape, `${kind}-done`, `${printShape(startShape)} %${start}`, [...channel, ...general]),
  ];
}
