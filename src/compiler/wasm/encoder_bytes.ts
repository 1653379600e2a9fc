// The byte-level layer of the encoder: LEB128 and IEEE-754 writers, value types, and the
// opcode / memory-argument writers that the instruction methods (encoder.ts,
// encoder_simd.ts) build on.

export type ValType = "i32" | "i64" | "f32" | "f64" | "v128";
/** A block's result: none, or one value. */
export type BlockType = ValType | undefined;

export const VAL_TYPE_CODE: Record<ValType, number> = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c, v128: 0x7b };
export const EMPTY_BLOCK = 0x40;

/** Growable byte buffer with the LEB128 and IEEE-754 writers the binary format uses. */
export class ByteWriter {
  private data = new Uint8Array(256);
  private size = 0;

  get length(): number {
    return this.size;
  }

  byte(b: number): this {
    if (this.size === this.data.length) {
      const grown = new Uint8Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.size++] = b & 0xff;
    return this;
  }

  bytes(bs: ArrayLike<number>): this {
    for (let i = 0; i < bs.length; i++) this.byte(bs[i]!);
    return this;
  }

  /** Unsigned LEB128 of a non-negative integer below 2^53. */
  u32(value: number): this {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`unsigned LEB128 of ${value}`);
    let v = value;
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v !== 0) b |= 0x80;
      this.byte(b);
    } while (v !== 0);
    return this;
  }

  /** Signed LEB128 (i32.const, i64.const, block types). */
  sleb(value: number | bigint): this {
    let v = BigInt(value);
    for (;;) {
      const b = Number(v & 0x7fn);
      v >>= 7n;
      const done = (v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0);
      this.byte(done ? b : b | 0x80);
      if (done) return this;
    }
  }

  f32(value: number): this {
    const view = new DataView(new ArrayBuffer(4));
    view.setFloat32(0, value, true);
    return this.bytes(new Uint8Array(view.buffer));
  }

  f64(value: number): this {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, value, true);
    return this.bytes(new Uint8Array(view.buffer));
  }

  /** A name or other string: length-prefixed UTF-8. */
  string(s: string): this {
    const utf8 = new TextEncoder().encode(s);
    return this.u32(utf8.length).bytes(utf8);
  }

  /** A length-prefixed copy of another writer's bytes (sections, function bodies). */
  sized(inner: ByteWriter): this {
    return this.u32(inner.length).bytes(inner.toBytes());
  }

  toBytes(): Uint8Array {
    return this.data.slice(0, this.size);
  }
}

function log2Align(alignBytes: number): number {
  const log = Math.log2(alignBytes);
  if (!Number.isInteger(log) || log < 0) throw new RangeError(`alignment ${alignBytes} is not a power of two`);
  return log;
}

/**
 * The instruction writers shared by the scalar and SIMD parts of FunctionBuilder: an
 * opcode, a prefixed opcode, a memory argument.
 */
export class InstructionWriter {
  readonly code = new ByteWriter();

  /** A one-byte opcode. */
  op(opcode: number): this {
    this.code.byte(opcode);
    return this;
  }

  /** A prefixed opcode (0xFC misc, 0xFD SIMD, 0xFE threads) with its LEB128 sub-opcode. */
  prefixed(prefix: number, opcode: number): this {
    this.code.byte(prefix).u32(opcode);
    return this;
  }

  memArg(offset: number, alignBytes: number): this {
    this.code.u32(log2Align(alignBytes)).u32(offset);
    return this;
  }

  protected mem(opcode: number, offset: number, align: number): this {
    return this.op(opcode).memArg(offset, align);
  }

  protected blockType(type: BlockType): void {
    this.code.byte(type === undefined ? EMPTY_BLOCK : VAL_TYPE_CODE[type]);
  }
}

