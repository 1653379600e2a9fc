// A small WebAssembly binary module builder: the code generators emit bytes directly,
// so no toolchain runs when xlats compiles a program.
//
// ModuleBuilder assembles the sections (types deduplicated, the device memory
// imported, functions, exports); FunctionBuilder appends one function body, with one
// method per instruction, named after the text format with the dots and underscores
// dropped and each following word capitalized: `i32.load8_s` is `i32Load8S`,
// `f32x4.relaxed_madd` is `f32x4RelaxedMadd`, `local.get` is `localGet`, `br_if` is
// `brIf`. Memory instructions take (offset = 0, align = natural alignment in bytes);
// lane instructions take the lane first. Every method returns the builder, so short
// sequences chain: `f.localGet(a).localGet(b).i32Add()`.
//
// Opcode numbers: WebAssembly core 2.0 (with sign extension, saturating truncation and
// bulk memory), the SIMD128 proposal (0xFD prefix), relaxed SIMD (0xFD 0x100..) and
// threads (0xFE prefix).
//
// The builder checks nothing about stack types: tests validate what they emit with
// WebAssembly.validate, which names the offending function and byte offset.

import { MEMORY_MAX_PAGES, type WasmTarget } from "./kernel.js";
import { SimdOps } from "./encoder_simd.js";
import { ByteWriter, VAL_TYPE_CODE, type BlockType, type ValType } from "./encoder_bytes.js";

export { ByteWriter, InstructionWriter, type BlockType, type ValType } from "./encoder_bytes.js";

/** Appends one function's body; obtain one from ModuleBuilder.addFunction. */
export class FunctionBuilder extends SimdOps {
  private readonly localTypes: ValType[] = [];

  constructor(
    /** This function's index in the module (for recursive calls). */
    readonly index: number,
    readonly params: readonly ValType[],
    readonly results: readonly ValType[],
  ) {
    super();
  }

  /** The local index of parameter i. */
  param(i: number): number {
    if (i < 0 || i >= this.params.length) throw new RangeError(`parameter ${i} of ${this.params.length}`);
    return i;
  }

  /** Declares a new local and returns its index. */
  local(type: ValType): number {
    this.localTypes.push(type);
    return this.params.length + this.localTypes.length - 1;
  }

  // --- control ---
  unreachable(): this { return this.op(0x00); }
  nop(): this { return this.op(0x01); }
  block(type?: BlockType): this { this.op(0x02); this.blockType(type); return this; }
  loop(type?: BlockType): this { this.op(0x03); this.blockType(type); return this; }
  if(type?: BlockType): this { this.op(0x04); this.blockType(type); return this; }
  else(): this { return this.op(0x05); }
  end(): this { return this.op(0x0b); }
  br(depth: number): this { this.op(0x0c).code.u32(depth); return this; }
  brIf(depth: number): this { this.op(0x0d).code.u32(depth); return this; }
  brTable(depths: readonly number[], defaultDepth: number): this {
    this.op(0x0e).code.u32(depths.length);
    for (const d of depths) this.code.u32(d);
    this.code.u32(defaultDepth);
    return this;
  }
  return(): this { return this.op(0x0f); }
  call(functionIndex: number): this { this.op(0x10).code.u32(functionIndex); return this; }
  drop(): this { return this.op(0x1a); }
  select(): this { return this.op(0x1b); }
  /** select with an explicit type (required for v128 operands by some engines' validators). */
  selectTyped(type: ValType): this { this.op(0x1c).code.u32(1).byte(VAL_TYPE_CODE[type]); return this; }

  // --- variables ---
  localGet(i: number): this { this.op(0x20).code.u32(i); return this; }
  localSet(i: number): this { this.op(0x21).code.u32(i); return this; }
  localTee(i: number): this { this.op(0x22).code.u32(i); return this; }

  // --- memory ---
  i32Load(offset = 0, align = 4): this { return this.mem(0x28, offset, align); }
  i64Load(offset = 0, align = 8): this { return this.mem(0x29, offset, align); }
  f32Load(offset = 0, align = 4): this { return this.mem(0x2a, offset, align); }
  f64Load(offset = 0, align = 8): this { return this.mem(0x2b, offset, align); }
  i32Load8S(offset = 0, align = 1): this { return this.mem(0x2c, offset, align); }
  i32Load8U(offset = 0, align = 1): this { return this.mem(0x2d, offset, align); }
  i32Load16S(offset = 0, align = 2): this { return this.mem(0x2e, offset, align); }
  i32Load16U(offset = 0, align = 2): this { return this.mem(0x2f, offset, align); }
  i64Load8S(offset = 0, align = 1): this { return this.mem(0x30, offset, align); }
  i64Load8U(offset = 0, align = 1): this { return this.mem(0x31, offset, align); }
  i64Load16S(offset = 0, align = 2): this { return this.mem(0x32, offset, align); }
  i64Load16U(offset = 0, align = 2): this { return this.mem(0x33, offset, align); }
  i64Load32S(offset = 0, align = 4): this { return this.mem(0x34, offset, align); }
  i64Load32U(offset = 0, align = 4): this { return this.mem(0x35, offset, align); }
  i32Store(offset = 0, align = 4): this { return this.mem(0x36, offset, align); }
  i64Store(offset = 0, align = 8): this { return this.mem(0x37, offset, align); }
  f32Store(offset = 0, align = 4): this { return this.mem(0x38, offset, align); }
  f64Store(offset = 0, align = 8): this { return this.mem(0x39, offset, align); }
  i32Store8(offset = 0, align = 1): this { return this.mem(0x3a, offset, align); }
  i32Store16(offset = 0, align = 2): this { return this.mem(0x3b, offset, align); }
  i64Store8(offset = 0, align = 1): this { return this.mem(0x3c, offset, align); }
  i64Store16(offset = 0, align = 2): this { return this.mem(0x3d, offset, align); }
  i64Store32(offset = 0, align = 4): this { return this.mem(0x3e, offset, align); }
  memorySize(): this { this.op(0x3f).code.byte(0); return this; }
  memoryGrow(): this { this.op(0x40).code.byte(0); return this; }
  /** memory.copy (dest, src, n) within the one memory. */
  memoryCopy(): this { this.prefixed(0xfc, 10).code.byte(0).byte(0); return this; }
  /** memory.fill (dest, byte value, n). */
  memoryFill(): this { this.prefixed(0xfc, 11).code.byte(0); return this; }
  /** memory.init (dest, offset in the segment, n) from a passive data segment (ModuleBuilder.addPassiveData). */
  memoryInit(segment: number): this { this.prefixed(0xfc, 8).code.u32(segment).byte(0); return this; }

  // --- constants ---
  i32Const(value: number): this { this.op(0x41).code.sleb(value | 0); return this; }
  i64Const(value: number | bigint): this { this.op(0x42).code.sleb(BigInt.asIntN(64, BigInt(value))); return this; }
  f32Const(value: number): this { this.op(0x43).code.f32(value); return this; }
  f64Const(value: number): this { this.op(0x44).code.f64(value); return this; }

  // --- i32 ---
  i32Eqz(): this { return this.op(0x45); }
  i32Eq(): this { return this.op(0x46); }
  i32Ne(): this { return this.op(0x47); }
  i32LtS(): this { return this.op(0x48); }
  i32LtU(): this { return this.op(0x49); }
  i32GtS(): this { return this.op(0x4a); }
  i32GtU(): this { return this.op(0x4b); }
  i32LeS(): this { return this.op(0x4c); }
  i32LeU(): this { return this.op(0x4d); }
  i32GeS(): this { return this.op(0x4e); }
  i32GeU(): this { return this.op(0x4f); }
  i32Clz(): this { return this.op(0x67); }
  i32Ctz(): this { return this.op(0x68); }
  i32Popcnt(): this { return this.op(0x69); }
  i32Add(): this { return this.op(0x6a); }
  i32Sub(): this { return this.op(0x6b); }
  i32Mul(): this { return this.op(0x6c); }
  i32DivS(): this { return this.op(0x6d); }
  i32DivU(): this { return this.op(0x6e); }
  i32RemS(): this { return this.op(0x6f); }
  i32RemU(): this { return this.op(0x70); }
  i32And(): this { return this.op(0x71); }
  i32Or(): this { return this.op(0x72); }
  i32Xor(): this { return this.op(0x73); }
  i32Shl(): this { return this.op(0x74); }
  i32ShrS(): this { return this.op(0x75); }
  i32ShrU(): this { return this.op(0x76); }
  i32Rotl(): this { return this.op(0x77); }
  i32Rotr(): this { return this.op(0x78); }

  // --- i64 ---
  i64Eqz(): this { return this.op(0x50); }
  i64Eq(): this { return this.op(0x51); }
  i64Ne(): this { return this.op(0x52); }
  i64LtS(): this { return this.op(0x53); }
  i64LtU(): this { return this.op(0x54); }
  i64GtS(): this { return this.op(0x55); }
  i64GtU(): this { return this.op(0x56); }
  i64LeS(): this { return this.op(0x57); }
  i64LeU(): this { return this.op(0x58); }
  i64GeS(): this { return this.op(0x59); }
  i64GeU(): this { return this.op(0x5a); }
  i64Clz(): this { return this.op(0x79); }
  i64Ctz(): this { return this.op(0x7a); }
  i64Popcnt(): this { return this.op(0x7b); }
  i64Add(): this { return this.op(0x7c); }
  i64Sub(): this { return this.op(0x7d); }
  i64Mul(): this { return this.op(0x7e); }
  i64DivS(): this { return this.op(0x7f); }
  i64DivU(): this { return this.op(0x80); }
  i64RemS(): this { return this.op(0x81); }
  i64RemU(): this { return this.op(0x82); }
  i64And(): this { return this.op(0x83); }
  i64Or(): this { return this.op(0x84); }
  i64Xor(): this { return this.op(0x85); }
  i64Shl(): this { return this.op(0x86); }
  i64ShrS(): this { return this.op(0x87); }
  i64ShrU(): this { return this.op(0x88); }
  i64Rotl(): this { return this.op(0x89); }
  i64Rotr(): this { return this.op(0x8a); }

  // --- f32 ---
  f32Eq(): this { return this.op(0x5b); }
  f32Ne(): this { return this.op(0x5c); }
  f32Lt(): this { return this.op(0x5d); }
  f32Gt(): this { return this.op(0x5e); }
  f32Le(): this { return this.op(0x5f); }
  f32Ge(): this { return this.op(0x60); }
  f32Abs(): this { return this.op(0x8b); }
  f32Neg(): this { return this.op(0x8c); }
  f32Ceil(): this { return this.op(0x8d); }
  f32Floor(): this { return this.op(0x8e); }
  f32Trunc(): this { return this.op(0x8f); }
  f32Nearest(): this { return this.op(0x90); }
  f32Sqrt(): this { return this.op(0x91); }
  f32Add(): this { return this.op(0x92); }
  f32Sub(): this { return this.op(0x93); }
  f32Mul(): this { return this.op(0x94); }
  f32Div(): this { return this.op(0x95); }
  f32Min(): this { return this.op(0x96); }
  f32Max(): this { return this.op(0x97); }
  f32Copysign(): this { return this.op(0x98); }

  // --- f64 ---
  f64Eq(): this { return this.op(0x61); }
  f64Ne(): this { return this.op(0x62); }
  f64Lt(): this { return this.op(0x63); }
  f64Gt(): this { return this.op(0x64); }
  f64Le(): this { return this.op(0x65); }
  f64Ge(): this { return this.op(0x66); }
  f64Abs(): this { return this.op(0x99); }
  f64Neg(): this { return this.op(0x9a); }
  f64Ceil(): this { return this.op(0x9b); }
  f64Floor(): this { return this.op(0x9c); }
  f64Trunc(): this { return this.op(0x9d); }
  f64Nearest(): this { return this.op(0x9e); }
  f64Sqrt(): this { return this.op(0x9f); }
  f64Add(): this { return this.op(0xa0); }
  f64Sub(): this { return this.op(0xa1); }
  f64Mul(): this { return this.op(0xa2); }
  f64Div(): this { return this.op(0xa3); }
  f64Min(): this { return this.op(0xa4); }
  f64Max(): this { return this.op(0xa5); }
  f64Copysign(): this { return this.op(0xa6); }

  // --- conversions ---
  i32WrapI64(): this { return this.op(0xa7); }
  i32TruncF32S(): this { return this.op(0xa8); }
  i32TruncF32U(): this { return this.op(0xa9); }
  i32TruncF64S(): this { return this.op(0xaa); }
  i32TruncF64U(): this { return this.op(0xab); }
  i64ExtendI32S(): this { return this.op(0xac); }
  i64ExtendI32U(): this { return this.op(0xad); }
  i64TruncF32S(): this { return this.op(0xae); }
  i64TruncF32U(): this { return this.op(0xaf); }
  i64TruncF64S(): this { return this.op(0xb0); }
  i64TruncF64U(): this { return this.op(0xb1); }
  f32ConvertI32S(): this { return this.op(0xb2); }
  f32ConvertI32U(): this { return this.op(0xb3); }
  f32ConvertI64S(): this { return this.op(0xb4); }
  f32ConvertI64U(): this { return this.op(0xb5); }
  f32DemoteF64(): this { return this.op(0xb6); }
  f64ConvertI32S(): this { return this.op(0xb7); }
  f64ConvertI32U(): this { return this.op(0xb8); }
  f64ConvertI64S(): this { return this.op(0xb9); }
  f64ConvertI64U(): this { return this.op(0xba); }
  f64PromoteF32(): this { return this.op(0xbb); }
  i32ReinterpretF32(): this { return this.op(0xbc); }
  i64ReinterpretF64(): this { return this.op(0xbd); }
  f32ReinterpretI32(): this { return this.op(0xbe); }
  f64ReinterpretI64(): this { return this.op(0xbf); }
  i32Extend8S(): this { return this.op(0xc0); }
  i32Extend16S(): this { return this.op(0xc1); }
  i64Extend8S(): this { return this.op(0xc2); }
  i64Extend16S(): this { return this.op(0xc3); }
  i64Extend32S(): this { return this.op(0xc4); }
  i32TruncSatF32S(): this { return this.prefixed(0xfc, 0); }
  i32TruncSatF32U(): this { return this.prefixed(0xfc, 1); }
  i32TruncSatF64S(): this { return this.prefixed(0xfc, 2); }
  i32TruncSatF64U(): this { return this.prefixed(0xfc, 3); }
  i64TruncSatF32S(): this { return this.prefixed(0xfc, 4); }
  i64TruncSatF32U(): this { return this.prefixed(0xfc, 5); }
  i64TruncSatF64S(): this { return this.prefixed(0xfc, 6); }
  i64TruncSatF64U(): this { return this.prefixed(0xfc, 7); }

  // --- threads (shared memory only) ---
  memoryAtomicNotify(offset = 0): this { return this.prefixed(0xfe, 0x00).memArg(offset, 4); }
  memoryAtomicWait32(offset = 0): this { return this.prefixed(0xfe, 0x01).memArg(offset, 4); }
  atomicFence(): this { this.prefixed(0xfe, 0x03).code.byte(0); return this; }
  i32AtomicLoad(offset = 0): this { return this.prefixed(0xfe, 0x10).memArg(offset, 4); }
  i32AtomicStore(offset = 0): this { return this.prefixed(0xfe, 0x17).memArg(offset, 4); }
  i32AtomicRmwAdd(offset = 0): this { return this.prefixed(0xfe, 0x1e).memArg(offset, 4); }
  i32AtomicRmwCmpxchg(offset = 0): this { return this.prefixed(0xfe, 0x48).memArg(offset, 4); }

  /** The body's bytes: local declarations (runs of one type), code, final `end`. */
  encodeBody(): Uint8Array {
    const runs: [ValType, number][] = [];
    for (const t of this.localTypes) {
      const last = runs[runs.length - 1];
      if (last !== undefined && last[0] === t) last[1]++;
      else runs.push([t, 1]);
    }
    const body = new ByteWriter().u32(runs.length);
    for (const [t, n] of runs) body.u32(n).byte(VAL_TYPE_CODE[t]);
    body.bytes(this.code.toBytes()).byte(0x0b);
    return body.toBytes();
  }
}

interface FunctionEntry {
  readonly typeIndex: number;
  readonly body: Uint8Array;
}

/** Builds one module: types, an imported memory, functions, exports. */
export class ModuleBuilder {
  private readonly types: string[] = [];
  private readonly typeBytes: Uint8Array[] = [];
  private readonly functions: FunctionEntry[] = [];
  private readonly exports: { name: string; kind: number; index: number }[] = [];
  private memoryImport: { shared: boolean; minPages: number; maxPages: number } | undefined;
  private readonly passiveData: Uint8Array[] = [];

  /** Imports `env.memory` as the device memory is declared (shared when the target's is). */
  importMemory(target: Pick<WasmTarget, "sharedMemory">, minPages = 1, maxPages = MEMORY_MAX_PAGES): this {
    this.memoryImport = { shared: target.sharedMemory, minPages, maxPages };
    return this;
  }

  typeIndex(params: readonly ValType[], results: readonly ValType[]): number {
    const w = new ByteWriter().byte(0x60).u32(params.length);
    for (const p of params) w.byte(VAL_TYPE_CODE[p]);
    w.u32(results.length);
    for (const r of results) w.byte(VAL_TYPE_CODE[r]);
    const bytes = w.toBytes();
    const key = bytes.join(",");
    let index = this.types.indexOf(key);
    if (index < 0) {
      index = this.types.length;
      this.types.push(key);
      this.typeBytes.push(bytes);
    }
    return index;
  }

  /**
   * Adds a function whose body `body` writes (the final `end` is added); exports it
   * under `name` when given. Returns its function index.
   */
  addFunction(
    name: string | undefined,
    params: readonly ValType[],
    results: readonly ValType[],
    body: (f: FunctionBuilder) => void,
  ): number {
    const index = this.functions.length;
    const f = new FunctionBuilder(index, params, results);
    body(f);
    this.functions.push({ typeIndex: this.typeIndex(params, results), body: f.encodeBody() });
    if (name !== undefined) this.exportFunction(name, index);
    return index;
  }

  /**
   * Adds a passive data segment (constant tables a kernel copies into its scratch with
   * memory.init: kernels import the device memory, so no segment may be active).
   * Returns its index.
   */
  addPassiveData(bytes: Uint8Array): number {
    this.passiveData.push(bytes);
    return this.passiveData.length - 1;
  }

  exportFunction(name: string, index: number): this {
    this.exports.push({ name, kind: 0x00, index });
    return this;
  }

  finish(): Uint8Array {
    const out = new ByteWriter().bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    const section = (id: number, fill: (w: ByteWriter) => void): void => {
      const w = new ByteWriter();
      fill(w);
      out.byte(id).sized(w);
    };
    section(1, (w) => {
      w.u32(this.typeBytes.length);
      for (const t of this.typeBytes) w.bytes(t);
    });
    const memory = this.memoryImport;
    if (memory !== undefined) {
      section(2, (w) => {
        w.u32(1).string("env").string("memory").byte(0x02);
        w.byte(memory.shared ? 0x03 : 0x01).u32(memory.minPages).u32(memory.maxPages);
      });
    }
    section(3, (w) => {
      w.u32(this.functions.length);
      for (const f of this.functions) w.u32(f.typeIndex);
    });
    section(7, (w) => {
      w.u32(this.exports.length);
      for (const e of this.exports) w.string(e.name).byte(e.kind).u32(e.index);
    });
    // memory.init needs the data count section, which precedes the code section.
    if (this.passiveData.length > 0) section(12, (w) => w.u32(this.passiveData.length));
    section(10, (w) => {
      w.u32(this.functions.length);
      for (const f of this.functions) w.u32(f.body.length).bytes(f.body);
    });
    if (this.passiveData.length > 0) {
      section(11, (w) => {
        w.u32(this.passiveData.length);
        for (const d of this.passiveData) w.byte(0x01).u32(d.length).bytes(d);
      });
    }
    return out.toBytes();
  }
}
