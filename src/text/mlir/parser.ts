// Text -> AST. Recursive descent over MLIR syntax: modules, func.func, generic ops
// ("stablehlo.gather"(%a, %b) {...} : (...) -> ...), and the pretty syntaxes of the
// stablehlo, chlo, check, interpreter and sdy ops, all parsed into the generic OpNode.

import { ELEMENT_TYPES } from "../../types/element_type.js";
import { arrayShape, type Shape } from "../../types/shape.js";
import type { Attr, AttrDict, Block, BlockArg, OpNode, Region, ResultGroup, ValueUse } from "./ast.js";
import { MAX_RESULT_COUNT, type Cursor } from "./cursor.js";
import { denseToLiteral, parseDenseBody } from "./literal.js";
import { parseElementType, parseType, parseTypeList, shapeToMlir } from "./types.js";
import { parseSdyOp } from "./sdy_parse.js";
import { atSdyAttribute, parseSdyAttribute } from "./sdy_attr_text.js";
import { parseStablehloStruct, STABLEHLO_STRUCT_ATTRS } from "./stablehlo_attrs.js";
import { parseConvDims } from "./attr_read.js";

const RETURN_OPS = new Set(["func.return", "return", "stablehlo.return", "sdy.return"]);

/** Largest constant the parser materializes (a splat can name any size; memory cannot hold it). */
const MAX_DENSE_BYTES = 2 ** 30;

export class Parser {
  constructor(readonly c: Cursor) {}

  /** Top level: a `module { ... }` or bare ops (functions, sdy.mesh) that form an implicit module. */
  parseTopLevel(): OpNode[] {
    const ops: OpNode[] = [];
    while (!this.c.atEnd()) {
      if (this.skipLocationAlias()) continue;
      ops.push(this.parseOp());
    }
    return ops;
  }

  /** `#loc = loc(...)` lines carry locations only; they are skipped. */
  private skipLocationAlias(): boolean {
    const c = this.c;
    if (!c.lookingAt("#loc")) return false;
    const save = c.pos;
    c.pos++;
    c.identifier();
    if (!c.accept("=")) {
      c.pos = save;
      return false;
    }
    this.skipLoc();
    return true;
  }

  private skipLoc(): void {
    const c = this.c;
    if (!c.accept("loc")) return;
    c.expect("(");
    let depth = 1;
    while (depth > 0 && c.pos < c.text.length) {
      const ch = c.text[c.pos]!;
      if (ch === '"') {
        c.stringLiteral();
        continue;
      }
      if (ch === "(") depth++;
      if (ch === ")") depth--;
      c.pos++;
    }
  }

  parseOp(): OpNode {
    return this.c.nested(() => {
      const c = this.c;
      c.skipWs();
      const offset = c.pos;
      const results = this.parseResultGroups();
      c.skipWs();
      let op: OpNode;
      if (c.peek() === '"') op = this.parseGenericOp(results, offset);
      else {
        const name = c.expectIdentifier("an operation name");
        op = this.parsePrettyOp(name, results, offset);
      }
      this.skipLoc();
      return op;
    });
  }

  private parseResultGroups(): ResultGroup[] {
    const c = this.c;
    if (c.peek() !== "%") return [];
    const groups: ResultGroup[] = [];
    do {
      const v = c.valueRef();
      if (v === undefined) throw c.error("expected a result name");
      const countAt = c.pos;
      const count = c.accept(":") ? c.integer("a result count") : 1;
      if (count < 1 || count > MAX_RESULT_COUNT) throw c.error(`a result count must be between 1 and ${MAX_RESULT_COUNT}, got ${count}`, countAt + 1);
      groups.push({ name: v.name, count });
    } while (c.accept(","));
    c.expect("=", "after the result names");
    return groups;
  }

  /** True when the text ahead defines results (`%a, %b:2 =`): the start of the next op. */
  private atResultDefinition(): boolean {
    const rest = this.c.text.slice(this.c.pos, this.c.pos + 400);
    return /^%[A-Za-z0-9_$.-]+(:[0-9]+)?(\s*,\s*%[A-Za-z0-9_$.-]+(:[0-9]+)?)*\s*=(?!=)/.test(rest);
  }

  private operandList(close: string): ValueUse[] {
    const c = this.c;
    const out: ValueUse[] = [];
    if (c.accept(close)) return out;
    do out.push(this.valueUse()); while (c.accept(","));
    c.expect(close);
    return out;
  }

  private valueUse(): ValueUse {
    const v = this.c.valueRef();
    if (v === undefined) throw this.c.error(`expected a value (%name), found ${this.c.describeNext()}`);
    return v;
  }

  parseFunctionType(): { inputs: Shape[]; results: Shape[] } {
    const c = this.c;
    if (c.peek() !== "(") throw c.error(`expected a function type '(...) -> ...', found ${c.describeNext()}`);
    const inputs = parseTypeList(c);
    c.expect("->");
    const results = c.peek() === "(" ? parseTypeList(c) : [parseType(c)];
    return { inputs, results };
  }

  private parseGenericOp(results: ResultGroup[], offset: number): OpNode {
    const c = this.c;
    const name = c.stringLiteral()!;
    c.expect("(");
    const operands = this.operandList(")");
    const attrs: AttrDict = new Map();
    if (c.lookingAt("<{")) {
      c.expect("<");
      for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
      c.expect(">");
    }
    const regions: Region[] = [];
    if (c.peek() === "(") {
      c.expect("(");
      do regions.push(this.parseRegion()); while (c.accept(","));
      c.expect(")");
    }
    if (c.peek() === "{") for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
    c.expect(":", "before the operation's type");
    const fn = this.parseFunctionType();
    return { name, results, operands, attrs, regions, operandTypes: fn.inputs, resultTypes: fn.results, offset };
  }

  // ---------------------------------------------------------------- regions

  /** `{ ^bb0(%a: t, ...): ops }`; `args` supplies block arguments for syntaxes without a header. */
  parseRegion(args: readonly BlockArg[] = []): Region {
    return this.c.nested(() => {
      const c = this.c;
      c.skipWs();
      const offset = c.pos;
      c.expect("{", "to open a region");
      let blockArgs = args;
      if (c.peek() === "^") {
        c.pos++;
        c.expectIdentifier("a block label");
        blockArgs = c.accept("(") ? this.blockArgList() : [];
        c.expect(":");
      }
      const ops: OpNode[] = [];
      while (!c.accept("}")) {
        if (c.atEnd()) throw c.error("region is not closed with '}'", offset);
        if (c.peek() === "^") throw c.error("regions with several blocks are not supported");
        ops.push(this.parseOp());
      }
      const block: Block = { args: blockArgs, ops };
      return { block, offset };
    });
  }

  /**
   * A type of a function's signature. MLIR takes an unranked `tensor<*xT>` there, and
   * reports what is wrong with it only later (a mismatching return, an op's own
   * check): the error that xlats' IR has no unranked tensors waits until the text is
   * parsed, and the placeholder it leaves (a `T` scalar) is never imported.
   */
  private signatureType(): Shape {
    const c = this.c;
    c.skipWs();
    const at = c.pos;
    if (!c.lookingAt("tensor<*")) return parseType(c);
    // `*x` then the element type, with no token boundary between them.
    c.pos += "tensor<*".length;
    if (c.text[c.pos] !== "x") throw c.error(`expected 'x' after '*', found ${c.describeNext()}`);
    c.pos++;
    const elementType = parseElementType(c);
    c.expect(">", "to close tensor<");
    c.defer(c.error("unranked tensor types (tensor<*x...>) are not supported; give the tensor's rank", at));
    return arrayShape(elementType, []);
  }

  /** `%a: t {attrs}, ...)` (the opening parenthesis already read); `signature`: a function's arguments. */
  blockArgList(signature = false): BlockArg[] {
    const c = this.c;
    const args: BlockArg[] = [];
    if (c.accept(")")) return args;
    do {
      const v = this.valueUse();
      c.expect(":");
      const shape = signature ? this.signatureType() : parseType(c);
      const attrs = c.peek() === "{" ? this.parseAttrDict() : undefined;
      this.skipLoc();
      args.push(attrs ? { name: v.name, shape, attrs } : { name: v.name, shape });
    } while (c.accept(","));
    c.expect(")");
    return args;
  }

  // ---------------------------------------------------------------- attributes

  parseAttrDict(): AttrDict {
    const c = this.c;
    const out: AttrDict = new Map();
    c.expect("{");
    if (c.accept("}")) return out;
    do {
      c.skipWs();
      const key = c.peek() === '"' ? c.stringLiteral()! : c.expectIdentifier("an attribute name");
      out.set(key, c.accept("=") ? this.parseAttr() : { kind: "unit" });
    } while (c.accept(","));
    c.expect("}", "to close the attribute dictionary");
    return out;
  }

  parseAttr(): Attr {
    return this.c.nested(() => this.parseAttrInner());
  }

  private parseAttrInner(): Attr {
    const c = this.c;
    c.skipWs();
    const at = c.pos;
    const ch = c.peek();
    if (ch === '"') return { kind: "string", value: c.stringLiteral()! };
    if (ch === "@") {
      let name = c.symbol()!;
      while (c.lookingAt("::@")) {
        c.pos += 2;
        name += `::${c.symbol()!}`;
      }
      return { kind: "symbol", name };
    }
    if (ch === "{") return { kind: "dict", entries: this.parseAttrDict() };
    if (ch === "<") return { kind: "opaque", text: `<${c.balancedAngle()}>` };
    if (ch === "[") {
      c.pos++;
      const items: Attr[] = [];
      if (!c.accept("]")) {
        do items.push(this.parseAttr()); while (c.accept(","));
        c.expect("]");
      }
      const list: Attr = { kind: "list", items };
      if (/^\s*x\s*\[/.test(c.text.slice(c.pos, c.pos + 40))) {
        c.expect("x");
        return { kind: "pair", lhs: list, rhs: this.parseAttr() };
      }
      return list;
    }
    if (ch === "#") return atSdyAttribute(c) ? { kind: "sdy", value: parseSdyAttribute(c) } : this.parseDialectAttr();
    if (ch === "-" || ch === "+" || /[0-9]/.test(ch)) {
      const text = c.numberText()!;
      const isInt = /^[-+]?(0x[0-9a-fA-F]+|[0-9]+)$/.test(text);
      const type = this.scalarTypeSuffix();
      if (isInt && (type === undefined || !/^(f|bf)[0-9]/.test(type))) {
        const neg = text.startsWith("-");
        const mag = BigInt(text.replace(/^[-+]/, ""));
        return type === undefined ? { kind: "int", value: neg ? -mag : mag } : { kind: "int", value: neg ? -mag : mag, type };
      }
      const value = Number(text);
      return type === undefined ? { kind: "float", value, text } : { kind: "float", value, text, type };
    }
    const id = c.identifier();
    if (id === undefined) throw c.error(`expected an attribute value, found ${c.describeNext()}`, at);
    switch (id) {
      case "true": case "false": {
        this.scalarTypeSuffix();
        return { kind: "bool", value: id === "true" };
      }
      case "unit": return { kind: "unit" };
      case "dense": {
        const body = parseDenseBody(c);
        c.expect(":", "and a type after dense<...>");
        const tAt = c.pos;
        const shape = parseType(c);
        if (shape.kind !== "array") throw c.error("dense<...> needs a tensor type", tAt);
        if (shape.dynamicDimensions.some((d) => d)) throw c.error("elements literal type must have static shape", tAt);
        const bytes = shape.dimensions.reduce((n, d) => n * d, ELEMENT_TYPES[shape.elementType].storageBytes); // as held in memory: an i1 takes a byte
        if (bytes > MAX_DENSE_BYTES) {
          throw c.error(`dense<...> of type ${shapeToMlir(shape)} would take ${bytes} bytes; the limit is ${MAX_DENSE_BYTES}`, tAt);
        }
        return { kind: "dense", literal: denseToLiteral(c, body, shape) };
      }
      case "array": {
        c.expect("<");
        const elementType = c.expectIdentifier("an element type");
        const values: bigint[] = [];
        if (c.accept(":")) {
          do {
            if (c.accept("true")) values.push(1n);
            else if (c.accept("false")) values.push(0n);
            else values.push(BigInt(c.integer("an array element")));
          } while (c.accept(","));
        }
        c.expect(">");
        return { kind: "denseArray", elementType, values };
      }
      case "tensor": case "tuple": {
        c.pos = at;
        return { kind: "type", shape: parseType(c) };
      }
      default:
        return { kind: "enum", value: id };
    }
  }

  /** `: i64` after a number (a scalar type; `: tensor<...>` belongs to the op, not the number). */
  private scalarTypeSuffix(): string | undefined {
    const c = this.c;
    const m = /^\s*:\s*((si|ui|i|f|bf)[0-9]+|index|f8E[0-9A-Z]+)\b/.exec(c.text.slice(c.pos, c.pos + 40));
    if (!m) return undefined;
    c.pos += m[0].length;
    return m[1];
  }

  private parseDialectAttr(): Attr {
    const c = this.c;
    const start = c.pos;
    c.expect("#");
    const name = c.expectIdentifier("an attribute name");
    if (c.text[c.pos] !== "<") {
      return { kind: "opaque", text: c.text.slice(start, c.pos) };
    }
    if (!name.includes(".")) {
      // `#stablehlo<comparison_direction LT>`: an enum of one word after its category.
      const body = c.balancedAngle().trim();
      const m = /^[A-Za-z_]+\s+([A-Za-z0-9_]+)$/.exec(body);
      return m ? { kind: "enum", value: m[1]! } : { kind: "opaque", text: c.text.slice(start, c.pos) };
    }
    const spec = STABLEHLO_STRUCT_ATTRS.get(name);
    if (name === "stablehlo.conv" && !/^<\s*raw\b/.test(c.text.slice(c.pos, c.pos + 16))) {
      // The compact `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, kept as text; read now so a bad one is reported here.
      const body = c.balancedAngle();
      parseConvDims(body, (m) => {
        throw c.error(`#stablehlo.conv: ${m}`, start);
      });
      return { kind: "opaque", text: c.text.slice(start, c.pos) };
    }
    if (spec !== undefined) {
      c.expect("<");
      if (name === "stablehlo.conv") c.expect("raw");
      return { kind: "struct", name, fields: parseStablehloStruct(c, name, spec, () => this.parseAttr()) };
    }
    if (name === "stablehlo.result_accuracy_mode") {
      // An enum written with its value in angle brackets: `#stablehlo.result_accuracy_mode<HIGHEST>`.
      c.expect("<");
      const value = c.expectIdentifier("a result accuracy mode (DEFAULT, HIGHEST or TOLERANCE)");
      c.expect(">", "to close #stablehlo.result_accuracy_mode");
      return { kind: "enum", value };
    }
    if (name.endsWith("_mode")) {
      c.balancedAngle();
      return { kind: "opaque", text: c.text.slice(start, c.pos) };
    }
    // Another dialect's `#name<key = value, ...>`: a struct of named fields; anything else stays verbatim.
    const save = c.pos;
    try {
      c.expect("<");
      const fields: AttrDict = new Map();
      if (!c.accept(">")) {
        do {
          const key = c.expectIdentifier("a field name");
          c.expect("=");
          fields.set(key, this.parseAttr());
        } while (c.accept(","));
        c.expect(">");
      }
      return { kind: "struct", name, fields };
    } catch {
      c.pos = save;
      c.balancedAngle();
      return { kind: "opaque", text: c.text.slice(start, c.pos) };
    }
  }

  // ---------------------------------------------------------------- pretty syntaxes

  private parsePrettyOp(name: string, results: ResultGroup[], offset: number): OpNode {
    const c = this.c;
    const node = (
      fields: Partial<OpNode> & Pick<OpNode, "name">,
    ): OpNode => ({
      results, operands: [], attrs: new Map(), regions: [], operandTypes: undefined, resultTypes: [], offset, ...fields,
    });
    if (name === "module" || name === "builtin.module") {
      const attrs: AttrDict = new Map();
      const sym = c.symbol();
      if (sym !== undefined) attrs.set("sym_name", { kind: "string", value: sym });
      if (c.accept("attributes")) for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
      return node({ name: "builtin.module", attrs, regions: [this.parseRegion()] });
    }
    if (name === "func.func") return this.parseFunc(offset);
    if (name.startsWith("sdy.")) {
      const sdyOp = parseSdyOp(this, name, node);
      if (sdyOp !== undefined) return sdyOp;
    }
    if (RETURN_OPS.has(name)) {
      // `return {attrs} %a : t`: func.return's attribute dictionary comes first.
      const attrs: AttrDict = c.peek() === "{" ? this.parseAttrDict() : new Map();
      const operands: ValueUse[] = [];
      if (c.peek() === "%") do operands.push(this.valueUse()); while (c.accept(","));
      const operandTypes = operands.length > 0 ? (c.expect(":"), parseTypeList(c)) : [];
      return node({ name: name === "return" ? "func.return" : name, operands, operandTypes, attrs });
    }
    if (name === "func.call" || name === "call") {
      const callee = c.symbol();
      if (callee === undefined) throw c.error("expected @callee");
      c.expect("(");
      const operands = this.operandList(")");
      const attrs: AttrDict = c.peek() === "{" ? this.parseAttrDict() : new Map();
      attrs.set("callee", { kind: "symbol", name: callee });
      c.expect(":");
      const fn = this.parseFunctionType();
      return node({ name: "func.call", operands, attrs, operandTypes: fn.inputs, resultTypes: fn.results });
    }
    if (name === "stablehlo.while") return this.parseWhile(node);
    if (name === "stablehlo.reduce" && c.peek() === "(") return this.parsePrettyReduce(node);
    if (name === "chlo.scan") return this.parseScan(node);
    return this.parseGeneralPretty(name, node);
  }

  private parseFunc(offset: number): OpNode {
    const c = this.c;
    const attrs: AttrDict = new Map();
    const vis = c.accept("public") ? "public" : c.accept("private") ? "private" : c.accept("nested") ? "nested" : undefined;
    if (vis !== undefined) attrs.set("sym_visibility", { kind: "string", value: vis });
    const sym = c.symbol();
    if (sym === undefined) throw c.error("expected the function name @name");
    attrs.set("sym_name", { kind: "string", value: sym });
    c.expect("(");
    const args = this.blockArgList(true);
    const resultTypes: Shape[] = [];
    const resAttrs: (AttrDict | undefined)[] = [];
    if (c.accept("->")) {
      const one = (withAttrs: boolean): void => {
        resultTypes.push(this.signatureType());
        resAttrs.push(withAttrs && c.peek() === "{" ? this.parseAttrDict() : undefined);
      };
      if (c.accept("(")) {
        if (!c.accept(")")) {
          do one(true); while (c.accept(","));
          c.expect(")");
        }
      } else one(false);
    }
    if (c.accept("attributes")) for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
    const regions = c.peek() === "{" ? [this.parseRegion(args)] : [];
    const argAttrs = args.map((a) => a.attrs);
    if (argAttrs.some((a) => a !== undefined)) {
      attrs.set("arg_attrs", { kind: "list", items: argAttrs.map((a) => ({ kind: "dict", entries: a ?? new Map() }) as Attr) });
    }
    if (resAttrs.some((a) => a !== undefined)) {
      attrs.set("res_attrs", { kind: "list", items: resAttrs.map((a) => ({ kind: "dict", entries: a ?? new Map() }) as Attr) });
    }
    return {
      name: "func.func", results: [], operands: [], attrs, regions, offset,
      operandTypes: args.map((a) => a.shape), resultTypes,
    };
  }

  /** `stablehlo.while(%a = %x, ...) : types attributes {...} cond { ... } do { ... }`. */
  private parseWhile(node: (f: Partial<OpNode> & Pick<OpNode, "name">) => OpNode): OpNode {
    const c = this.c;
    c.expect("(");
    const names: string[] = [];
    const operands: ValueUse[] = [];
    if (!c.accept(")")) {
      do {
        names.push(this.valueUse().name);
        c.expect("=");
        operands.push(this.valueUse());
      } while (c.accept(","));
      c.expect(")");
    }
    const types = operands.length > 0 ? (c.expect(":"), parseTypeList(c)) : [];
    if (types.length !== operands.length) throw c.error(`while has ${operands.length} operands but ${types.length} types`);
    const attrs: AttrDict = c.accept("attributes") ? this.parseAttrDict() : new Map();
    const args: BlockArg[] = names.map((n, i) => ({ name: n, shape: types[i]! }));
    c.expect("cond");
    const cond = this.parseRegion(args);
    c.expect("do");
    const body = this.parseRegion(args);
    return node({ name: "stablehlo.while", operands, attrs, regions: [cond, body], operandTypes: types, resultTypes: types });
  }

  /** `stablehlo.reduce(%x init: %i), ... applies stablehlo.add across dimensions = [1] : fn` or `... reducer(...) {...}`. */
  private parsePrettyReduce(node: (f: Partial<OpNode> & Pick<OpNode, "name">) => OpNode): OpNode {
    const c = this.c;
    const inputs: ValueUse[] = [];
    const inits: ValueUse[] = [];
    do {
      c.expect("(");
      inputs.push(this.valueUse());
      c.expect("init");
      c.expect(":");
      inits.push(this.valueUse());
      c.expect(")");
    } while (c.accept(","));
    let applies: string | undefined;
    if (c.accept("applies")) applies = c.expectIdentifier("the reducing op");
    c.expect("across");
    c.expect("dimensions");
    c.expect("=");
    const dims = this.parseAttr();
    const attrs: AttrDict = new Map([["dimensions", dims]]);
    if (c.peek() === "{") for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
    c.expect(":");
    const fn = this.parseFunctionType();
    const n = inputs.length;
    let region: Region;
    if (applies !== undefined) {
      const argShape = (i: number): Shape => {
        const t = fn.inputs[n + i];
        if (t === undefined || t.kind !== "array") throw c.error("reduce: init values need tensor types");
        // A quantized init value makes the reducer's scalars quantized (the add dequantizes).
        return arrayShape(t.elementType, [], t.quantization !== undefined ? { quantization: t.quantization } : {});
      };
      const args: BlockArg[] = [];
      // The region is synthesized: its names cannot clash with the text's, and HLO prints them.
      for (let i = 0; i < n; i++) args.push({ name: `lhs${i}`, shape: argShape(i) });
      for (let i = 0; i < n; i++) args.push({ name: `rhs${i}`, shape: argShape(i) });
      const offset = c.pos;
      const body: OpNode = {
        name: applies, results: [{ name: "result", count: 1 }], attrs: new Map(), regions: [], offset,
        operands: [{ name: "lhs0", index: 0, offset }, { name: "rhs0", index: 0, offset }],
        operandTypes: undefined, resultTypes: [argShape(0)],
      };
      const ret: OpNode = {
        name: "stablehlo.return", results: [], operands: [{ name: "result", index: 0, offset }], attrs: new Map(),
        regions: [], operandTypes: undefined, resultTypes: [], offset,
      };
      if (n !== 1) throw c.error("'applies' form of reduce needs exactly one input");
      region = { block: { args, ops: [body, ret] }, offset };
    } else {
      c.expect("reducer");
      const lhs: BlockArg[] = [];
      const rhs: BlockArg[] = [];
      for (let i = 0; i < n; i++) {
        c.expect("(");
        const pair = this.blockArgList();
        if (pair.length !== 2) throw c.error("each reducer group has two arguments");
        lhs.push(pair[0]!);
        rhs.push(pair[1]!);
      }
      region = this.parseRegion([...lhs, ...rhs]);
    }
    return node({
      name: "stablehlo.reduce", operands: [...inputs, ...inits], attrs, regions: [region],
      operandTypes: fn.inputs, resultTypes: fn.results,
    });
  }

  /** `chlo.scan(%x, ...) inits(%c, ...) dimension=0 attributes {...} { region } : fn`. */
  private parseScan(node: (f: Partial<OpNode> & Pick<OpNode, "name">) => OpNode): OpNode {
    const c = this.c;
    c.expect("(");
    const inputs = this.operandList(")");
    c.expect("inits");
    c.expect("(");
    const inits = this.operandList(")");
    const attrs: AttrDict = new Map();
    c.expect("dimension");
    c.expect("=");
    attrs.set("dimension", this.parseAttr());
    attrs.set("num_inputs", { kind: "int", value: BigInt(inputs.length) });
    if (c.accept("attributes")) for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
    const region = this.parseRegion();
    c.expect(":");
    const fn = this.parseFunctionType();
    return node({
      name: "chlo.scan", operands: [...inputs, ...inits], attrs, regions: [region], operandTypes: fn.inputs,
      resultTypes: fn.results,
    });
  }

  private skipBalanced(open: string, close: string): void {
    const c = this.c;
    const start = c.pos;
    let depth = 0;
    while (c.pos < c.text.length) {
      const ch = c.text[c.pos]!;
      if (ch === '"') {
        c.stringLiteral();
        continue;
      }
      if (ch === "[" || ch === "{" || ch === "(" || (ch === "<")) depth++;
      else if (ch === "]" || ch === "}" || ch === ")" || (ch === ">" && c.text[c.pos - 1] !== "-")) depth--;
      c.pos++;
      if (depth === 0) return;
    }
    void open;
    void close;
    throw c.error("unbalanced brackets", start);
  }

  /**
   * The common shape of pretty syntaxes: operands, keywords (`LT`), `key = value`
   * pairs, positional attributes (`dense<...>`, `"name"`, `@target`), index or slice
   * suffixes (`%t[0]`, `%x [0:2:1]`), an attribute dictionary, then `: types`.
   */
  private parseGeneralPretty(name: string, node: (f: Partial<OpNode> & Pick<OpNode, "name">) => OpNode): OpNode {
    const c = this.c;
    const operands: ValueUse[] = [];
    const attrs: AttrDict = new Map();
    const positional: Attr[] = [];
    let first = true;
    let afterComma = false;
    let lastWasOperand = false;
    for (;;) {
      const itemEnd = c.pos;
      c.skipWs();
      const ch = c.text[c.pos] ?? "";
      const sameLine = !c.text.slice(itemEnd, c.pos).includes("\n");
      const startsItem = (): boolean => {
        if (ch === "" || ch === ":" || ch === "}" || ch === ")") return false;
        if (ch === "%") return !this.atResultDefinition();
        if (first || afterComma) return true;
        if (sameLine && (ch === "{" || ch === "[" || ch === "<" || ch === '"' || ch === "@" || ch === "(")) return true;
        // An attribute dictionary may continue the op on the next lines (`{\n  sdy.sharding = ...\n}`).
        if (ch === "{" && this.atAttrDict()) return true;
        // The value after a leading attribute dictionary (`stablehlo.constant {foo} dense<1> : ...`).
        if (/^(dense|array|sparse)</.test(c.text.slice(c.pos, c.pos + 8))) return true;
        // A juxtaposed keyword only when it is `key = value` (`allowed_direction=BACKWARD`).
        return /^[A-Za-z_][A-Za-z0-9_.]*\s*=(?!=)/.test(c.text.slice(c.pos, c.pos + 100));
      };
      if (!startsItem()) break;
      if (ch === "%") {
        if (lastWasOperand && !afterComma) throw c.error(`expected ',' between the operands of ${name}`);
        operands.push(this.valueUse());
        if (c.text[c.pos] === "[" || /^ \[[0-9]/.test(c.text.slice(c.pos, c.pos + 3))) this.parseIndexSuffix(attrs);
      } else if (ch === "(") {
        // `(%a, %b)`, also with `key = value` items: `chlo.top_k(%x, k = 8)`.
        c.pos++;
        if (!c.accept(")")) {
          do {
            c.skipWs();
            const keyed = /^([A-Za-z_][A-Za-z0-9_.]*)\s*=(?!=)/.exec(c.text.slice(c.pos, c.pos + 100));
            if (keyed) {
              c.pos += keyed[0].length;
              attrs.set(keyed[1]!, this.parseAttr());
            } else operands.push(this.valueUse());
          } while (c.accept(","));
          c.expect(")");
        }
      } else if (ch === "{") {
        for (const [k, v] of this.parseAttrDict()) attrs.set(k, v);
      } else if (ch === "[" || ch === "<") {
        positional.push(this.parseAttr());
      } else if (ch === '"' || ch === "@") {
        positional.push(this.parseAttr());
      } else {
        const keyed = /^([A-Za-z_][A-Za-z0-9_.]*)\s*=(?!=)/.exec(c.text.slice(c.pos, c.pos + 100));
        if (keyed) {
          c.pos += keyed[0].length;
          attrs.set(keyed[1]!, keyed[1] === "dim_numbers" ? this.rawConvDims() : this.parseAttr());
        } else positional.push(this.parseAttr());
      }
      first = false;
      lastWasOperand = ch === "%";
      const end = c.pos;
      afterComma = c.accept(",");
      if (!afterComma) c.pos = end; // keep the line break visible to the same-line rule
    }
    if (positional.length > 0) attrs.set("__positional", { kind: "list", items: positional });
    const dense = positional.find((p) => p.kind === "dense");
    let operandTypes: Shape[] | undefined;
    let resultTypes: Shape[] = [];
    const nResults = results(node);
    if (c.accept(":")) {
      if (c.peek() === "(" && this.looksLikeFunctionType()) {
        const fn = this.parseFunctionType();
        operandTypes = fn.inputs;
        resultTypes = fn.results;
      } else {
        const types = parseTypeList(c);
        if (c.accept("->")) {
          // `: tensor<f32> -> tensor<f32>` (CHLO's unary ops, chlo.top_k): operand types, then result types.
          operandTypes = types;
          resultTypes = c.peek() === "(" ? parseTypeList(c) : [parseType(c)];
        } else {
          resultTypes = this.resultTypesFromList(name, types, nResults, operands.length);
          if (types.length === operands.length && nResults === 0) operandTypes = types;
        }
      }
    }
    // `stablehlo.constant dense<1> : tensor<i32>`: the value's type is the result type.
    if (resultTypes.length === 0 && nResults === 1 && dense?.kind === "dense") resultTypes = [dense.literal.shape];
    return node({ name, operands, attrs, operandTypes, resultTypes });
  }

  /** Whether the `{` ahead opens an attribute dictionary (`{}`, `{name = ...`, `{unit_attr, ...`), not a region. */
  private atAttrDict(): boolean {
    return /^\{\s*(\}|([A-Za-z_][A-Za-z0-9_$.]*|"[^"\n]*")\s*(=|,|\}))/.test(this.c.text.slice(this.c.pos, this.c.pos + 300));
  }

  private looksLikeFunctionType(): boolean {
    // `(t, t) -> t`: find the matching ')' and check for '->'.
    const c = this.c;
    let depth = 0;
    for (let i = c.pos; i < c.text.length; i++) {
      const ch = c.text[i];
      if (ch === "(" || ch === "<") depth++;
      else if (ch === ")" || (ch === ">" && c.text[i - 1] !== "-")) {
        depth--;
        if (depth === 0) return /^\s*->/.test(c.text.slice(i + 1, i + 20));
      }
    }
    return false;
  }

  /** Types after `:` in the short form: one type for all, or one per result (select: pred type, result type). */
  private resultTypesFromList(name: string, types: Shape[], nResults: number, nOperands: number): Shape[] {
    if (nResults === 0) return [];
    if (name === "stablehlo.select" && types.length === 2) return [types[1]!];
    if (types.length === nResults) return types;
    if (types.length === 1) return new Array<Shape>(nResults).fill(types[0]!);
    if (types.length === nOperands + nResults) return types.slice(nOperands);
    throw this.c.error(`${name}: ${types.length} types for ${nResults} results`);
  }

  /** `%t[0]` (tuple index) or `%x [1:3, 0:4:2]` (slice ranges). */
  private parseIndexSuffix(attrs: AttrDict): void {
    const c = this.c;
    c.expect("[");
    const starts: bigint[] = [];
    const limits: bigint[] = [];
    const strides: bigint[] = [];
    let isSlice = false;
    if (!c.accept("]")) {
      do {
        const a = c.integer();
        if (c.accept(":")) {
          isSlice = true;
          const b = c.integer();
          const s = c.accept(":") ? c.integer() : 1;
          starts.push(BigInt(a));
          limits.push(BigInt(b));
          strides.push(BigInt(s));
        } else starts.push(BigInt(a));
      } while (c.accept(","));
      c.expect("]");
    }
    if (isSlice || starts.length === 0) {
      const arr = (values: bigint[]): Attr => ({ kind: "denseArray", elementType: "i64", values });
      attrs.set("start_indices", arr(starts));
      attrs.set("limit_indices", arr(limits));
      attrs.set("strides", arr(strides));
    } else attrs.set("index", { kind: "int", value: starts[0]!, type: "i32" });
  }

  /** `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` kept as text (import reads it again), checked here for the error's position. */
  private rawConvDims(): Attr {
    const c = this.c;
    c.skipWs();
    const start = c.pos;
    this.skipBalanced("[", "]");
    c.expect("x");
    c.skipWs();
    this.skipBalanced("[", "]");
    c.expect("->");
    c.skipWs();
    this.skipBalanced("[", "]");
    const text = c.text.slice(start, c.pos);
    parseConvDims(text, (m) => {
      throw c.error(m, start);
    });
    return { kind: "opaque", text };
  }
}

function results(node: (f: Partial<OpNode> & Pick<OpNode, "name">) => OpNode): number {
  return node({ name: "" }).results.reduce((n, r) => n + r.count, 0);
}
