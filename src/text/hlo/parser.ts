// HLO text → IR. Reads `HloModule name, entry_computation_layout={...}`, then
// computations (callees before callers, one marked ENTRY), each a list of
// `[ROOT] %name = shape opcode(operands), attr=value, ...` lines. Every instruction is
// checked with the one shape inference (`inferShape`): the declared shape (layouts
// kept) must match the inferred one. Any problem is a ParseError with line, column
// and a caret.
//
// XLA splits Send and Recv into a start op returning (data, context, token) and a
// `send-done`/`recv-done` op; the IR has one `send` and one `recv`. A send/send-done
// pair becomes one IR `send` named as the send-done, placed where the send-done is;
// the printer writes the pair back (the start op named `<name>.start`).

import { Computation, DEFAULT_MODULE_CONFIG, HloModule, type Instruction, type ModuleConfig } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import type { ChannelHandle, OpMetadata } from "../../ir/attributes.js";
import { OP_TABLE, OPCODES, type OpAttributes, type Opcode } from "../../ir/opcodes.js";
import { inferShape } from "../../ir/shape/index.js";
import { XlaError } from "../../types/errors.js";
import { shapesEqual, shapeToString, TOKEN_SHAPE, type Shape } from "../../types/shape.js";
import { parseBool, parseFrontendAttributes, parseMetadata, rawBraces } from "./attr_syntax.js";
import { Cursor, SourceText } from "./cursor.js";
import { parseLiteral } from "./literal_text.js";
import { OP_TEXT, type DecodeInput } from "./op_attrs.js";
import { looksLikeShape, parseShape } from "./shape_text.js";
import { parseMeshes, SDY_MESHES_KEY, sdyOpcodeForTarget, takeSdyShardings } from "./sdy_text.js";
import { importFuncResultShardings } from "../func_result_shardings.js";
import type { NamedMesh, OpShardingRule, TensorSharding, TensorShardingPerValue } from "../../sharding/model.js";
import { parseBufferDonors, parseInputOutputAlias } from "./module_aliasing.js";
import { donatedLeaves } from "../../ir/aliasing.js";

/**
 * HLO opcode name → IR opcode. `call` maps to `call`; a call with is_composite=true
 * becomes `composite`; a custom call with an "xla.sdy.*" target becomes that sdy op.
 */
const OPCODE_BY_HLO_NAME: ReadonlyMap<string, Opcode> = new Map(
  OPCODES.filter((o) => o !== "composite" && OP_TABLE[o].family !== "sdy").map((o) => [OP_TABLE[o].hlo, o] as const),
);

interface RawAttr {
  readonly keyAt: number;
  readonly start: number;
  readonly end: number;
}

/** A send or recv start op waiting for its -done. */
interface PendingTransfer {
  readonly kind: "send" | "recv";
  readonly name: string;
  readonly at: number;
  readonly operands: readonly Instruction[];
  readonly shape: Shape;
  readonly channelId: number | undefined;
  readonly isHostTransfer: boolean;
  readonly extras: InstructionExtras;
}

interface InstructionExtras {
  metadata?: OpMetadata;
  frontendAttributes?: Record<string, string>;
  sharding?: string;
  sdySharding?: TensorShardingPerValue;
  sdyShardingRule?: OpShardingRule;
}

/** Parses HLO text into a module. Throws ParseError (with position) on any problem. */
export function parseHlo(text: string, fileName = "<input>"): HloModule {
  const source = new SourceText(text, fileName);
  const c = new Cursor(source);
  try {
    return new ModuleParser(c).parse();
  } catch (e) {
    if (e instanceof XlaError) throw e;
    // Anything else (a stack overflow on absurd nesting, a bug) still reports a position.
    const reason = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw source.errorAt(c.pos, `cannot parse: ${reason}`);
  }
}

class ModuleParser {
  private readonly computations = new Map<string, Computation>();
  private entry: Computation | undefined;
  private entryLayout: { at: number; parameters: Shape[]; result: Shape } | undefined;
  private config: ModuleConfig = DEFAULT_MODULE_CONFIG;
  private meshes: NamedMesh[] | undefined;
  /** Where input_output_alias / buffer_donor were written, to point at them when they do not fit the entry. */
  private aliasingAt: number | undefined;

  constructor(private readonly c: Cursor) {}

  parse(): HloModule {
    const c = this.c;
    c.skipSpace();
    const headerAt = c.pos;
    if (c.tryIdent() !== "HloModule") throw c.error("expected the 'HloModule name' header", headerAt);
    const name = c.name("the module name");
    this.parseHeaderAttributes();
    c.skipSpace();
    if (c.atEnd()) throw c.error("the module has no computations");
    let last: Computation | undefined;
    while (!c.atEnd()) {
      last = this.parseComputation();
      c.skipSpace();
    }
    const entry = this.entry ?? last!;
    this.checkEntryLayout(entry);
    const donated = donatedLeaves(entry, this.config);
    if (typeof donated === "string") throw c.error(donated, this.aliasingAt);
    const module = new HloModule(name, entry, [...this.computations.values()].filter((x) => x !== entry));
    module.config = this.config;
    if (this.meshes !== undefined) module.meshes = this.meshes;
    return importFuncResultShardings(module);
  }

  private parseHeaderAttributes(): void {
    const c = this.c;
    while (c.accept(",")) {
      c.skipSpace();
      const at = c.pos;
      const key = c.ident("a module attribute");
      c.expect("=");
      if (key === "entry_computation_layout") {
        c.expect("{");
        const params = parseShape(c);
        if (params.kind !== "tuple") throw c.error("entry_computation_layout must be {(parameters)->result}", at);
        c.expect("->");
        const result = parseShape(c);
        c.expect("}");
        this.entryLayout = { at, parameters: [...params.elements], result };
      } else if (key === "frontend_attributes") {
        // XLA keeps the module's Shardy meshes here; no other module-level attribute is read.
        const attrs = parseFrontendAttributes(c);
        for (const k of Object.keys(attrs)) if (k !== SDY_MESHES_KEY) throw c.error(`module frontend attribute '${k}' is not supported`, at);
        const meshes = attrs[SDY_MESHES_KEY];
        if (meshes !== undefined) this.meshes = parseMeshes(meshes, (r) => c.error(r, at));
      } else if (key === "is_scheduled") {
        parseBool(c); // the schedule is the instruction order, which the IR keeps
      } else if (key === "input_output_alias") {
        this.aliasingAt ??= at;
        this.config = { ...this.config, inputOutputAlias: parseInputOutputAlias(c) };
      } else if (key === "buffer_donor") {
        this.aliasingAt ??= at;
        this.config = { ...this.config, bufferDonors: parseBufferDonors(c) };
      } else if (key === "replica_count" || key === "num_partitions") {
        const n = c.count();
        if (n < 1) throw c.error(`${key} must be at least 1`, at);
        this.config = key === "replica_count" ? { ...this.config, replicaCount: n } : { ...this.config, partitionCount: n };
      } else {
        throw c.error(`module attribute '${key}' is not supported`, at);
      }
    }
  }

  private checkEntryLayout(entry: Computation): void {
    const layout = this.entryLayout;
    if (layout === undefined) return;
    const shape = entry.programShape;
    const fail = (what: string): never => {
      throw this.c.error(`entry_computation_layout ${what} does not match ENTRY computation ${entry.name}`, layout.at);
    };
    if (layout.parameters.length !== shape.parameters.length) fail(`has ${layout.parameters.length} parameter(s) and`);
    layout.parameters.forEach((p, i) => {
      if (!shapesEqual(p, shape.parameters[i]!)) fail(`parameter ${i} ${shapeToString(p)}`);
    });
    if (!shapesEqual(layout.result, shape.result)) fail(`result ${shapeToString(layout.result)}`);
  }

  private parseComputation(): Computation {
    const c = this.c;
    const startAt = c.pos;
    const isEntry = c.accept("ENTRY") && /[\s%]/.test(c.peek());
    if (!isEntry) c.pos = startAt;
    c.skipSpace();
    const nameAt = c.pos;
    const name = c.name("a computation name");
    if (this.computations.has(name)) throw c.error(`computation ${name} is defined twice`, nameAt);
    let signature: { at: number; parameters: Shape[]; result: Shape } | undefined;
    if (c.accept("(")) {
      const at = c.pos;
      const parameters: Shape[] = [];
      if (!c.accept(")")) {
        do {
          c.name("a parameter name");
          c.expect(":");
          parameters.push(parseShape(c));
        } while (c.accept(","));
        c.expect(")", "',' or ')' in the computation's parameters");
      }
      c.expect("->", "'->' before the result shape");
      signature = { at, parameters, result: parseShape(c) };
    }
    c.expect("{", `'{' starting computation ${name}`);
    const computation = new ComputationParser(c, name, this.computations).parse(nameAt);
    if (signature !== undefined) {
      const shape = computation.programShape;
      const ok = signature.parameters.length === shape.parameters.length &&
        signature.parameters.every((p, i) => shapesEqual(p, shape.parameters[i]!)) && shapesEqual(signature.result, shape.result);
      if (!ok) {
        throw c.error(`the signature of ${name} does not match its body: body is ${computation.toString()}`, signature.at);
      }
    }
    if (isEntry) {
      if (this.entry !== undefined) throw c.error(`two ENTRY computations (${this.entry.name} and ${name})`, startAt);
      this.entry = computation;
    }
    this.computations.set(name, computation);
    return computation;
  }
}

class ComputationParser {
  private readonly instructions: Instruction[] = [];
  private readonly factory = new InstructionFactory("hlo");
  private readonly byName = new Map<string, Instruction>();
  private readonly pending = new Map<string, PendingTransfer>();
  private readonly parameters = new Map<number, Instruction<"parameter">>();
  private root: Instruction | undefined;
  /** Shardy shardings read from parameters (by number) and from the root. */
  private readonly argShardings = new Map<number, TensorSharding>();
  private resultShardings: { at: number; byIndex: ReadonlyMap<number, TensorSharding> } | undefined;

  constructor(
    private readonly c: Cursor,
    private readonly name: string,
    private readonly computations: ReadonlyMap<string, Computation>,
  ) {}

  parse(nameAt: number): Computation {
    const c = this.c;
    while (!c.accept("}")) {
      if (c.atEnd()) throw c.error(`computation ${this.name} is not closed with '}'`);
      this.parseInstruction();
    }
    for (const p of this.pending.values()) {
      throw c.error(`${p.kind} %${p.name} has no ${p.kind}-done`, p.at);
    }
    if (this.instructions.length === 0) throw c.error(`computation ${this.name} has no instructions`, nameAt);
    const params: Instruction<"parameter">[] = [];
    for (let i = 0; i < this.parameters.size; i++) {
      const p = this.parameters.get(i);
      if (p === undefined) throw c.error(`computation ${this.name}: parameter numbers must be 0..${this.parameters.size - 1}; ${i} is missing`, nameAt);
      params.push(p);
    }
    const computation = new Computation(this.name, params, this.instructions, this.root ?? this.instructions.at(-1)!);
    if (this.argShardings.size > 0) computation.argShardings = params.map((_, i) => this.argShardings.get(i));
    if (this.resultShardings !== undefined) {
      const root = computation.root;
      const count = root.opcode === "tuple" ? root.operands.length : 1;
      const { at, byIndex } = this.resultShardings;
      for (const i of byIndex.keys()) if (i < 0 || i >= count) throw c.error(`xla.sdy.result_shardings: ${this.name} has no result ${i}`, at);
      computation.resultShardings = Array.from({ length: count }, (_, i) => byIndex.get(i));
    }
    return computation;
  }

  private parseInstruction(): void {
    const c = this.c;
    c.skipSpace();
    const lineAt = c.pos;
    const isRoot = c.accept("ROOT") && /[\s%]/.test(c.peek());
    if (!isRoot) c.pos = lineAt;
    c.skipSpace();
    const nameAt = c.pos;
    const name = c.name("an instruction name");
    if (this.byName.has(name) || this.pending.has(name)) throw c.error(`instruction name ${name} is used twice in ${this.name}`, nameAt);
    c.expect("=", "'=' after the instruction name");
    c.skipSpace();
    const shapeAt = c.pos;
    const shape = parseShape(c);
    c.skipSpace();
    const opAt = c.pos;
    const opName = c.ident("an opcode");
    c.expect("(", `'(' after ${opName}`);

    let inst: Instruction | undefined;
    if (opName === "parameter") {
      const numberAt = c.pos;
      const number = c.count("a parameter number");
      c.expect(")");
      if (this.parameters.has(number)) throw c.error(`parameter ${number} is defined twice in ${this.name}`, numberAt);
      const extras = this.parseGeneralAttributes(this.parseAttributeList(), opName, false, number);
      this.checkShape("parameter", opName, opAt, shape, shapeAt, [], { number, shape });
      inst = this.make(name, "parameter", [], shape, { number, shape }, extras);
      this.parameters.set(number, inst as Instruction<"parameter">);
    } else if (opName === "constant") {
      const literal = parseLiteral(c, shape);
      c.expect(")", "')' closing the constant");
      const extras = this.parseGeneralAttributes(this.parseAttributeList(), opName);
      this.checkShape("constant", opName, opAt, shape, shapeAt, [], { literal });
      inst = this.make(name, "constant", [], shape, { literal }, extras);
    } else {
      const operands = this.parseOperands(opName);
      const attrs = this.parseAttributeList();
      inst = this.buildOp(name, nameAt, opName, opAt, shape, shapeAt, operands, attrs);
    }
    this.endOfLine();
    if (inst === undefined) return; // a send/recv start op, waiting for its -done
    if (isRoot) {
      if (this.root !== undefined) throw c.error(`${this.name} has two ROOT instructions`, lineAt);
      this.root = inst;
    }
    if (this.lastResultShardings !== undefined) {
      if (!isRoot) throw c.error("xla.sdy.result_shardings belongs on the ROOT instruction", lineAt);
      this.resultShardings = { at: lineAt, byIndex: this.lastResultShardings };
      this.lastResultShardings = undefined;
    }
    this.instructions.push(inst);
    this.byName.set(name, inst);
  }

  private endOfLine(): void {
    const c = this.c;
    c.skipSpace(true);
    const next = c.peek();
    if (next !== "" && next !== "\n" && next !== "}") throw c.error(`expected ',' or the end of the line${c.describeNext()}`);
  }

  private parseOperands(opName: string): { inst: Instruction | PendingTransfer; at: number }[] {
    const c = this.c;
    const out: { inst: Instruction | PendingTransfer; at: number }[] = [];
    if (c.accept(")")) return out;
    do {
      c.skipSpace();
      const at = c.pos;
      let declared: Shape | undefined;
      if (looksLikeShape(c)) declared = parseShape(c);
      c.skipSpace();
      const nameAt = c.pos;
      const name = c.name("an operand name");
      const inst = this.byName.get(name) ?? this.pending.get(name);
      if (inst === undefined) throw c.error(`unknown operand %${name} (operands must be defined before use in ${this.name})`, nameAt);
      if ("kind" in inst && inst.kind !== undefined && !opName.endsWith("-done")) {
        throw c.error(`the result of ${inst.kind} %${name} can only be used by ${inst.kind}-done`, nameAt);
      }
      if (declared !== undefined && !shapesEqual(declared, inst.shape)) {
        throw c.error(`operand %${name} has shape ${shapeToString(inst.shape)}, not ${shapeToString(declared)}`, at);
      }
      out.push({ inst, at });
    } while (c.accept(","));
    c.expect(")", `',' or ')' after the operands of ${opName}`);
    return out;
  }

  private parseAttributeList(): Map<string, RawAttr> {
    const c = this.c;
    const attrs = new Map<string, RawAttr>();
    for (;;) {
      c.skipSpace(true);
      if (c.peek() !== ",") return attrs;
      c.pos++;
      c.skipSpace(true);
      const keyAt = c.pos;
      const key = c.ident("an attribute name");
      c.skipSpace(true);
      if (c.peek() !== "=") throw c.error(`expected '=' after attribute ${key}${c.describeNext()}`);
      c.pos++;
      if (attrs.has(key)) throw c.error(`attribute ${key} is given twice`, keyAt);
      const { start, end } = c.rawValue();
      attrs.set(key, { keyAt, start, end });
    }
  }

  /** The root's result shardings, read with its attributes and claimed once the line is known to be the ROOT. */
  private lastResultShardings: ReadonlyMap<number, TensorSharding> | undefined;

  /**
   * Attributes every instruction may carry: sharding, metadata, frontend_attributes (with
   * Shardy's shardings in them: a parameter's is its computation's argument sharding).
   */
  private parseGeneralAttributes(attrs: Map<string, RawAttr>, opName: string, keepRest = false, parameterNumber?: number): InstructionExtras {
    const extras: InstructionExtras = {};
    const sharding = this.takeAttr(attrs, "sharding", (v) => rawBraces(v).replace(/\s+/g, " "));
    const metadata = this.takeAttr(attrs, "metadata", parseMetadata);
    const frontendAt = attrs.get("frontend_attributes")?.keyAt;
    const frontend = this.takeAttr(attrs, "frontend_attributes", parseFrontendAttributes);
    if (sharding !== undefined) extras.sharding = sharding;
    if (metadata !== undefined) extras.metadata = metadata;
    if (frontend !== undefined) {
      const sdy = takeSdyShardings(frontend, parameterNumber !== undefined, (r) => this.c.error(r, frontendAt));
      if (sdy.sdySharding !== undefined) extras.sdySharding = sdy.sdySharding;
      if (sdy.sdyShardingRule !== undefined) extras.sdyShardingRule = sdy.sdyShardingRule;
      if (sdy.argSharding !== undefined) this.argShardings.set(parameterNumber!, sdy.argSharding);
      this.lastResultShardings = sdy.resultShardings;
      if (Object.keys(frontend).length > 0) extras.frontendAttributes = frontend;
    }
    if (!keepRest) this.rejectLeftovers(attrs, opName);
    return extras;
  }

  private rejectLeftovers(attrs: Map<string, RawAttr>, opName: string): void {
    for (const [key, raw] of attrs) throw this.c.error(`unknown attribute '${key}' for ${opName}`, raw.keyAt);
  }

  private takeAttr<T>(attrs: Map<string, RawAttr>, key: string, parse: (c: Cursor) => T): T | undefined {
    const raw = attrs.get(key);
    if (raw === undefined) return undefined;
    attrs.delete(key);
    const sub = this.c.sub(raw.start, raw.end);
    const value = parse(sub);
    sub.expectEnd(`attribute ${key}`);
    return value;
  }

  private buildOp(
    name: string, nameAt: number, opName: string, opAt: number, shape: Shape, shapeAt: number,
    operands: { inst: Instruction | PendingTransfer; at: number }[], attrs: Map<string, RawAttr>,
  ): Instruction | undefined {
    const c = this.c;
    if (opName === "send" || opName === "recv") {
      const channelId = this.takeAttr(attrs, "channel_id", (v) => v.int());
      const isHostTransfer = this.takeAttr(attrs, "is_host_transfer", parseBool) ?? false;
      const extras = this.parseGeneralAttributes(attrs, opName);
      const insts = operands.map((o) => o.inst as Instruction);
      const expectedOperands = opName === "send" ? 2 : 1;
      if (insts.length !== expectedOperands) throw c.error(`${opName} takes ${expectedOperands} operand(s), got ${insts.length}`, opAt);
      this.pending.set(name, { kind: opName, name, at: nameAt, operands: insts, shape, channelId, isHostTransfer, extras });
      return undefined;
    }
    if (opName === "send-done" || opName === "recv-done") return this.buildTransferDone(name, opName, opAt, shape, shapeAt, operands, attrs);
    for (const o of operands) {
      if ("kind" in o.inst) throw c.error(`${opName} cannot use the result of ${o.inst.kind} %${o.inst.name}`, o.at);
    }
    const operandInsts = operands.map((o) => o.inst as Instruction);
    let opcode = OPCODE_BY_HLO_NAME.get(opName);
    if (opcode === undefined) throw c.error(`unknown opcode '${opName}'`, opAt);
    if (opcode === "call" && attrs.has("is_composite")) opcode = "composite";
    const target = attrs.get("custom_call_target");
    if (opcode === "customCall" && target !== undefined) opcode = sdyOpcodeForTarget(this.c.sub(target.start, target.end).string()) ?? opcode;
    const extras = this.parseGeneralAttributes(attrs, opName, true);
    const frontend: Record<string, string> = { ...extras.frontendAttributes };
    const input: DecodeInput = {
      take: (key, parse) => this.takeAttr(attrs, key, parse),
      need: (key, parse) => {
        const v = this.takeAttr(attrs, key, parse);
        if (v === undefined) throw c.error(`${opName} needs attribute ${key}=`, opAt);
        return v;
      },
      frontend,
      shape,
      operands: operandInsts.map((o) => o.shape),
      computation: (sub) => this.computationRef(sub),
      computations: (sub) => {
        sub.expect("{", "'{' starting a list of computations");
        const out: Computation[] = [];
        if (sub.accept("}")) return out;
        do out.push(this.computationRef(sub));
        while (sub.accept(","));
        sub.expect("}", "',' or '}' in the list of computations");
        return out;
      },
      error: (reason) => c.error(reason, opAt),
      arrayShape: () => {
        if (shape.kind !== "array") throw c.error(`${opName} must have an array shape, not ${shapeToString(shape)}`, shapeAt);
        return shape;
      },
      tupleElement: (i) => {
        const e = shape.kind === "tuple" ? shape.elements[i] : undefined;
        if (e === undefined) throw c.error(`${opName} must have a tuple shape with at least ${i + 1} element(s), not ${shapeToString(shape)}`, shapeAt);
        return e;
      },
    };
    const opAttrs = (OP_TEXT[opcode] as { decode(d: DecodeInput): OpAttributes[Opcode] }).decode(input);
    this.rejectLeftovers(attrs, opName);
    if (Object.keys(frontend).length > 0) extras.frontendAttributes = frontend;
    else delete extras.frontendAttributes;
    this.checkShape(opcode, opName, opAt, shape, shapeAt, operandInsts, opAttrs);
    return this.make(name, opcode, operandInsts, shape, opAttrs, extras);
  }

  private buildTransferDone(
    name: string, opName: string, opAt: number, shape: Shape, shapeAt: number,
    operands: { inst: Instruction | PendingTransfer; at: number }[], attrs: Map<string, RawAttr>,
  ): Instruction {
    const c = this.c;
    const kind = opName === "send-done" ? "send" : "recv";
    const start = operands[0]?.inst;
    if (operands.length !== 1 || start === undefined || !("kind" in start) || start.kind !== kind) {
      throw c.error(`${opName} takes exactly one operand, the result of a ${kind}`, opAt);
    }
    const channelId = this.takeAttr(attrs, "channel_id", (v) => v.int());
    const isHost = this.takeAttr(attrs, "is_host_transfer", parseBool) ?? start.isHostTransfer;
    const doneExtras = this.parseGeneralAttributes(attrs, opName);
    if (channelId !== undefined && start.channelId !== undefined && channelId !== start.channelId) {
      throw c.error(`${opName} channel_id=${channelId} differs from its ${kind}'s channel_id=${start.channelId}`, opAt);
    }
    if (isHost !== start.isHostTransfer) throw c.error(`${opName} is_host_transfer differs from its ${kind}'s`, opAt);
    const channel: ChannelHandle = {
      handle: start.channelId ?? channelId ?? 0,
      type: !start.isHostTransfer ? "DEVICE_TO_DEVICE" : kind === "send" ? "DEVICE_TO_HOST" : "HOST_TO_DEVICE",
    };
    // The start op's shape is (data, u32[] context, token[]).
    const startShape = start.shape;
    const data = startShape.kind === "tuple" && startShape.elements.length === 3 ? startShape.elements[0]! : undefined;
    if (data === undefined) throw c.error(`${kind} %${start.name} must have shape (data, u32[], token[])`, start.at);
    this.pending.delete(start.name);
    const extras = { ...start.extras, ...doneExtras };
    let attrsOut: OpAttributes["send"] | OpAttributes["recv"];
    const opcode: "send" | "recv" = kind;
    if (kind === "send") {
      attrsOut = { channel, isHostTransfer: start.isHostTransfer };
      if (!shapesEqual(shape, TOKEN_SHAPE)) throw c.error(`send-done must have shape token[], not ${shapeToString(shape)}`, shapeAt);
      const dataOperand = start.operands[0]!;
      if (!shapesEqual(dataOperand.shape, data)) {
        throw c.error(`send %${start.name} declares data ${shapeToString(data)} but sends ${shapeToString(dataOperand.shape)}`, start.at);
      }
    } else {
      attrsOut = { channel, shape: data, isHostTransfer: start.isHostTransfer };
    }
    this.checkShape(opcode, opName, opAt, shape, shapeAt, start.operands, attrsOut);
    return this.make(name, opcode, start.operands, shape, attrsOut, extras);
  }

  private computationRef(c: Cursor): Computation {
    c.skipSpace();
    const at = c.pos;
    const name = c.name("a computation name");
    const comp = this.computations.get(name);
    if (comp === undefined) throw c.error(`unknown computation %${name} (computations must be defined before they are called)`, at);
    return comp;
  }

  /** The declared shape must be the one shape inference gives (layouts aside). */
  private checkShape(
    opcode: Opcode, opName: string, opAt: number, shape: Shape, shapeAt: number,
    operands: readonly Instruction[], attrs: OpAttributes[Opcode],
  ): void {
    let inferred: Shape;
    try {
      inferred = inferShape(opcode, operands.map((o) => o.shape), attrs);
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      throw this.c.error(reason.startsWith(opName) ? reason : `${opName}: ${reason}`, opAt);
    }
    if (!shapesEqual(shape, inferred)) {
      throw this.c.error(`${opName}: declared shape ${shapeToString(shape)} does not match the inferred shape ${shapeToString(inferred)}`, shapeAt);
    }
  }

  private make<O extends Opcode>(
    name: string, opcode: O, operands: readonly Instruction[], shape: Shape, attrs: OpAttributes[O], extras: InstructionExtras,
  ): Instruction<O> {
    // The shape was checked against inference where the text can be pointed at; names are unique (checked on reading).
    return this.factory.placeUnchecked(opcode, operands, attrs, shape, { name, ...extras });
  }
}
