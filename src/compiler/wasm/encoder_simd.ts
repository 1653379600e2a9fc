// The SIMD128 and relaxed-SIMD instructions of FunctionBuilder (0xFD prefix), named as
// in encoder.ts: `f32x4.extract_lane 2` is `f32x4ExtractLane(2)`, `v128.load32_lane
// offset align 1` is `v128Load32Lane(1, offset, align)`.

import { InstructionWriter } from "./encoder_bytes.js";

export class SimdOps extends InstructionWriter {
  /** A SIMD opcode without immediates. */
  simd(opcode: number): this {
    return this.prefixed(0xfd, opcode);
  }

  private simdMem(opcode: number, offset: number, align: number): this {
    return this.simd(opcode).memArg(offset, align);
  }

  private simdLane(opcode: number, lane: number, lanes: number): this {
    if (!Number.isInteger(lane) || lane < 0 || lane >= lanes) throw new RangeError(`lane ${lane} of ${lanes}`);
    this.simd(opcode).code.byte(lane);
    return this;
  }

  private simdMemLane(opcode: number, lane: number, lanes: number, offset: number, align: number): this {
    return this.simdMem(opcode, offset, align).simdLaneByte(lane, lanes);
  }

  private simdLaneByte(lane: number, lanes: number): this {
    if (!Number.isInteger(lane) || lane < 0 || lane >= lanes) throw new RangeError(`lane ${lane} of ${lanes}`);
    this.code.byte(lane);
    return this;
  }

  // --- memory ---
  v128Load(offset = 0, align = 16): this { return this.simdMem(0x00, offset, align); }
  v128Load8x8S(offset = 0, align = 8): this { return this.simdMem(0x01, offset, align); }
  v128Load8x8U(offset = 0, align = 8): this { return this.simdMem(0x02, offset, align); }
  v128Load16x4S(offset = 0, align = 8): this { return this.simdMem(0x03, offset, align); }
  v128Load16x4U(offset = 0, align = 8): this { return this.simdMem(0x04, offset, align); }
  v128Load32x2S(offset = 0, align = 8): this { return this.simdMem(0x05, offset, align); }
  v128Load32x2U(offset = 0, align = 8): this { return this.simdMem(0x06, offset, align); }
  v128Load8Splat(offset = 0, align = 1): this { return this.simdMem(0x07, offset, align); }
  v128Load16Splat(offset = 0, align = 2): this { return this.simdMem(0x08, offset, align); }
  v128Load32Splat(offset = 0, align = 4): this { return this.simdMem(0x09, offset, align); }
  v128Load64Splat(offset = 0, align = 8): this { return this.simdMem(0x0a, offset, align); }
  v128Store(offset = 0, align = 16): this { return this.simdMem(0x0b, offset, align); }
  v128Load32Zero(offset = 0, align = 4): this { return this.simdMem(0x5c, offset, align); }
  v128Load64Zero(offset = 0, align = 8): this { return this.simdMem(0x5d, offset, align); }
  v128Load8Lane(lane: number, offset = 0, align = 1): this { return this.simdMemLane(0x54, lane, 16, offset, align); }
  v128Load16Lane(lane: number, offset = 0, align = 2): this { return this.simdMemLane(0x55, lane, 8, offset, align); }
  v128Load32Lane(lane: number, offset = 0, align = 4): this { return this.simdMemLane(0x56, lane, 4, offset, align); }
  v128Load64Lane(lane: number, offset = 0, align = 8): this { return this.simdMemLane(0x57, lane, 2, offset, align); }
  v128Store8Lane(lane: number, offset = 0, align = 1): this { return this.simdMemLane(0x58, lane, 16, offset, align); }
  v128Store16Lane(lane: number, offset = 0, align = 2): this { return this.simdMemLane(0x59, lane, 8, offset, align); }
  v128Store32Lane(lane: number, offset = 0, align = 4): this { return this.simdMemLane(0x5a, lane, 4, offset, align); }
  v128Store64Lane(lane: number, offset = 0, align = 8): this { return this.simdMemLane(0x5b, lane, 2, offset, align); }

  // --- constants and shuffles ---
  /** v128.const from its 16 bytes (little-endian lane order). */
  v128Const(bytes: ArrayLike<number>): this {
    if (bytes.length !== 16) throw new RangeError(`v128.const takes 16 bytes, not ${bytes.length}`);
    this.simd(0x0c).code.bytes(bytes);
    return this;
  }
  f32x4Const(a: number, b: number, c: number, d: number): this { return this.v128Const(new Uint8Array(new Float32Array([a, b, c, d]).buffer)); }
  f64x2Const(a: number, b: number): this { return this.v128Const(new Uint8Array(new Float64Array([a, b]).buffer)); }
  i32x4Const(a: number, b: number, c: number, d: number): this { return this.v128Const(new Uint8Array(new Int32Array([a, b, c, d]).buffer)); }
  /** i8x16.shuffle: byte i of the result is byte lanes[i] of (first ++ second), lanes in [0, 32). */
  i8x16Shuffle(lanes: ArrayLike<number>): this {
    if (lanes.length !== 16) throw new RangeError(`i8x16.shuffle takes 16 lane indices, not ${lanes.length}`);
    this.simd(0x0d);
    for (let i = 0; i < 16; i++) this.simdLaneByte(lanes[i]!, 32);
    return this;
  }

  // --- lanes ---
  i8x16ExtractLaneS(lane: number): this { return this.simdLane(0x15, lane, 16); }
  i8x16ExtractLaneU(lane: number): this { return this.simdLane(0x16, lane, 16); }
  i8x16ReplaceLane(lane: number): this { return this.simdLane(0x17, lane, 16); }
  i16x8ExtractLaneS(lane: number): this { return this.simdLane(0x18, lane, 8); }
  i16x8ExtractLaneU(lane: number): this { return this.simdLane(0x19, lane, 8); }
  i16x8ReplaceLane(lane: number): this { return this.simdLane(0x1a, lane, 8); }
  i32x4ExtractLane(lane: number): this { return this.simdLane(0x1b, lane, 4); }
  i32x4ReplaceLane(lane: number): this { return this.simdLane(0x1c, lane, 4); }
  i64x2ExtractLane(lane: number): this { return this.simdLane(0x1d, lane, 2); }
  i64x2ReplaceLane(lane: number): this { return this.simdLane(0x1e, lane, 2); }
  f32x4ExtractLane(lane: number): this { return this.simdLane(0x1f, lane, 4); }
  f32x4ReplaceLane(lane: number): this { return this.simdLane(0x20, lane, 4); }
  f64x2ExtractLane(lane: number): this { return this.simdLane(0x21, lane, 2); }
  f64x2ReplaceLane(lane: number): this { return this.simdLane(0x22, lane, 2); }

  // --- arithmetic, comparisons, conversions (no immediates) ---
  i8x16Swizzle(): this { return this.simd(0x0e); }
  i8x16Splat(): this { return this.simd(0x0f); }
  i16x8Splat(): this { return this.simd(0x10); }
  i32x4Splat(): this { return this.simd(0x11); }
  i64x2Splat(): this { return this.simd(0x12); }
  f32x4Splat(): this { return this.simd(0x13); }
  f64x2Splat(): this { return this.simd(0x14); }
  i8x16Eq(): this { return this.simd(0x23); }
  i8x16Ne(): this { return this.simd(0x24); }
  i8x16LtS(): this { return this.simd(0x25); }
  i8x16LtU(): this { return this.simd(0x26); }
  i8x16GtS(): this { return this.simd(0x27); }
  i8x16GtU(): this { return this.simd(0x28); }
  i8x16LeS(): this { return this.simd(0x29); }
  i8x16LeU(): this { return this.simd(0x2a); }
  i8x16GeS(): this { return this.simd(0x2b); }
  i8x16GeU(): this { return this.simd(0x2c); }
  i16x8Eq(): this { return this.simd(0x2d); }
  i16x8Ne(): this { return this.simd(0x2e); }
  i16x8LtS(): this { return this.simd(0x2f); }
  i16x8LtU(): this { return this.simd(0x30); }
  i16x8GtS(): this { return this.simd(0x31); }
  i16x8GtU(): this { return this.simd(0x32); }
  i16x8LeS(): this { return this.simd(0x33); }
  i16x8LeU(): this { return this.simd(0x34); }
  i16x8GeS(): this { return this.simd(0x35); }
  i16x8GeU(): this { return this.simd(0x36); }
  i32x4Eq(): this { return this.simd(0x37); }
  i32x4Ne(): this { return this.simd(0x38); }
  i32x4LtS(): this { return this.simd(0x39); }
  i32x4LtU(): this { return this.simd(0x3a); }
  i32x4GtS(): this { return this.simd(0x3b); }
  i32x4GtU(): this { return this.simd(0x3c); }
  i32x4LeS(): this { return this.simd(0x3d); }
  i32x4LeU(): this { return this.simd(0x3e); }
  i32x4GeS(): this { return this.simd(0x3f); }
  i32x4GeU(): this { return this.simd(0x40); }
  f32x4Eq(): this { return this.simd(0x41); }
  f32x4Ne(): this { return this.simd(0x42); }
  f32x4Lt(): this { return this.simd(0x43); }
  f32x4Gt(): this { return this.simd(0x44); }
  f32x4Le(): this { return this.simd(0x45); }
  f32x4Ge(): this { return this.simd(0x46); }
  f64x2Eq(): this { return this.simd(0x47); }
  f64x2Ne(): this { return this.simd(0x48); }
  f64x2Lt(): this { return this.simd(0x49); }
  f64x2Gt(): this { return this.simd(0x4a); }
  f64x2Le(): this { return this.simd(0x4b); }
  f64x2Ge(): this { return this.simd(0x4c); }
  v128Not(): this { return this.simd(0x4d); }
  v128And(): this { return this.simd(0x4e); }
  v128Andnot(): this { return this.simd(0x4f); }
  v128Or(): this { return this.simd(0x50); }
  v128Xor(): this { return this.simd(0x51); }
  v128Bitselect(): this { return this.simd(0x52); }
  v128AnyTrue(): this { return this.simd(0x53); }
  f32x4DemoteF64x2Zero(): this { return this.simd(0x5e); }
  f64x2PromoteLowF32x4(): this { return this.simd(0x5f); }
  i8x16Abs(): this { return this.simd(0x60); }
  i8x16Neg(): this { return this.simd(0x61); }
  i8x16Popcnt(): this { return this.simd(0x62); }
  i8x16AllTrue(): this { return this.simd(0x63); }
  i8x16Bitmask(): this { return this.simd(0x64); }
  i8x16NarrowI16x8S(): this { return this.simd(0x65); }
  i8x16NarrowI16x8U(): this { return this.simd(0x66); }
  f32x4Ceil(): this { return this.simd(0x67); }
  f32x4Floor(): this { return this.simd(0x68); }
  f32x4Trunc(): this { return this.simd(0x69); }
  f32x4Nearest(): this { return this.simd(0x6a); }
  i8x16Shl(): this { return this.simd(0x6b); }
  i8x16ShrS(): this { return this.simd(0x6c); }
  i8x16ShrU(): this { return this.simd(0x6d); }
  i8x16Add(): this { return this.simd(0x6e); }
  i8x16AddSatS(): this { return this.simd(0x6f); }
  i8x16AddSatU(): this { return this.simd(0x70); }
  i8x16Sub(): this { return this.simd(0x71); }
  i8x16SubSatS(): this { return this.simd(0x72); }
  i8x16SubSatU(): this { return this.simd(0x73); }
  f64x2Ceil(): this { return this.simd(0x74); }
  f64x2Floor(): this { return this.simd(0x75); }
  i8x16MinS(): this { return this.simd(0x76); }
  i8x16MinU(): this { return this.simd(0x77); }
  i8x16MaxS(): this { return this.simd(0x78); }
  i8x16MaxU(): this { return this.simd(0x79); }
  f64x2Trunc(): this { return this.simd(0x7a); }
  i8x16AvgrU(): this { return this.simd(0x7b); }
  i16x8ExtaddPairwiseI8x16S(): this { return this.simd(0x7c); }
  i16x8ExtaddPairwiseI8x16U(): this { return this.simd(0x7d); }
  i32x4ExtaddPairwiseI16x8S(): this { return this.simd(0x7e); }
  i32x4ExtaddPairwiseI16x8U(): this { return this.simd(0x7f); }
  i16x8Abs(): this { return this.simd(0x80); }
  i16x8Neg(): this { return this.simd(0x81); }
  i16x8Q15mulrSatS(): this { return this.simd(0x82); }
  i16x8AllTrue(): this { return this.simd(0x83); }
  i16x8Bitmask(): this { return this.simd(0x84); }
  i16x8NarrowI32x4S(): this { return this.simd(0x85); }
  i16x8NarrowI32x4U(): this { return this.simd(0x86); }
  i16x8ExtendLowI8x16S(): this { return this.simd(0x87); }
  i16x8ExtendHighI8x16S(): this { return this.simd(0x88); }
  i16x8ExtendLowI8x16U(): this { return this.simd(0x89); }
  i16x8ExtendHighI8x16U(): this { return this.simd(0x8a); }
  i16x8Shl(): this { return this.simd(0x8b); }
  i16x8ShrS(): this { return this.simd(0x8c); }
  i16x8ShrU(): this { return this.simd(0x8d); }
  i16x8Add(): this { return this.simd(0x8e); }
  i16x8AddSatS(): this { return this.simd(0x8f); }
  i16x8AddSatU(): this { return this.simd(0x90); }
  i16x8Sub(): this { return this.simd(0x91); }
  i16x8SubSatS(): this { return this.simd(0x92); }
  i16x8SubSatU(): this { return this.simd(0x93); }
  f64x2Nearest(): this { return this.simd(0x94); }
  i16x8Mul(): this { return this.simd(0x95); }
  i16x8MinS(): this { return this.simd(0x96); }
  i16x8MinU(): this { return this.simd(0x97); }
  i16x8MaxS(): this { return this.simd(0x98); }
  i16x8MaxU(): this { return this.simd(0x99); }
  i16x8AvgrU(): this { return this.simd(0x9b); }
  i16x8ExtmulLowI8x16S(): this { return this.simd(0x9c); }
  i16x8ExtmulHighI8x16S(): this { return this.simd(0x9d); }
  i16x8ExtmulLowI8x16U(): this { return this.simd(0x9e); }
  i16x8ExtmulHighI8x16U(): this { return this.simd(0x9f); }
  i32x4Abs(): this { return this.simd(0xa0); }
  i32x4Neg(): this { return this.simd(0xa1); }
  i32x4AllTrue(): this { return this.simd(0xa3); }
  i32x4Bitmask(): this { return this.simd(0xa4); }
  i32x4ExtendLowI16x8S(): this { return this.simd(0xa7); }
  i32x4ExtendHighI16x8S(): this { return this.simd(0xa8); }
  i32x4ExtendLowI16x8U(): this { return this.simd(0xa9); }
  i32x4ExtendHighI16x8U(): this { return this.simd(0xaa); }
  i32x4Shl(): this { return this.simd(0xab); }
  i32x4ShrS(): this { return this.simd(0xac); }
  i32x4ShrU(): this { return this.simd(0xad); }
  i32x4Add(): this { return this.simd(0xae); }
  i32x4Sub(): this { return this.simd(0xb1); }
  i32x4Mul(): this { return this.simd(0xb5); }
  i32x4MinS(): this { return this.simd(0xb6); }
  i32x4MinU(): this { return this.simd(0xb7); }
  i32x4MaxS(): this { return this.simd(0xb8); }
  i32x4MaxU(): this { return this.simd(0xb9); }
  i32x4DotI16x8S(): this { return this.simd(0xba); }
  i32x4ExtmulLowI16x8S(): this { return this.simd(0xbc); }
  i32x4ExtmulHighI16x8S(): this { return this.simd(0xbd); }
  i32x4ExtmulLowI16x8U(): this { return this.simd(0xbe); }
  i32x4ExtmulHighI16x8U(): this { return this.simd(0xbf); }
  i64x2Abs(): this { return this.simd(0xc0); }
  i64x2Neg(): this { return this.simd(0xc1); }
  i64x2AllTrue(): this { return this.simd(0xc3); }
  i64x2Bitmask(): this { return this.simd(0xc4); }
  i64x2ExtendLowI32x4S(): this { return this.simd(0xc7); }
  i64x2ExtendHighI32x4S(): this { return this.simd(0xc8); }
  i64x2ExtendLowI32x4U(): this { return this.simd(0xc9); }
  i64x2ExtendHighI32x4U(): this { return this.simd(0xca); }
  i64x2Shl(): this { return this.simd(0xcb); }
  i64x2ShrS(): this { return this.simd(0xcc); }
  i64x2ShrU(): this { return this.simd(0xcd); }
  i64x2Add(): this { return this.simd(0xce); }
  i64x2Sub(): this { return this.simd(0xd1); }
  i64x2Mul(): this { return this.simd(0xd5); }
  i64x2Eq(): this { return this.simd(0xd6); }
  i64x2Ne(): this { return this.simd(0xd7); }
  i64x2LtS(): this { return this.simd(0xd8); }
  i64x2GtS(): this { return this.simd(0xd9); }
  i64x2LeS(): this { return this.simd(0xda); }
  i64x2GeS(): this { return this.simd(0xdb); }
  i64x2ExtmulLowI32x4S(): this { return this.simd(0xdc); }
  i64x2ExtmulHighI32x4S(): this { return this.simd(0xdd); }
  i64x2ExtmulLowI32x4U(): this { return this.simd(0xde); }
  i64x2ExtmulHighI32x4U(): this { return this.simd(0xdf); }
  f32x4Abs(): this { return this.simd(0xe0); }
  f32x4Neg(): this { return this.simd(0xe1); }
  f32x4Sqrt(): this { return this.simd(0xe3); }
  f32x4Add(): this { return this.simd(0xe4); }
  f32x4Sub(): this { return this.simd(0xe5); }
  f32x4Mul(): this { return this.simd(0xe6); }
  f32x4Div(): this { return this.simd(0xe7); }
  f32x4Min(): this { return this.simd(0xe8); }
  f32x4Max(): this { return this.simd(0xe9); }
  f32x4Pmin(): this { return this.simd(0xea); }
  f32x4Pmax(): this { return this.simd(0xeb); }
  f64x2Abs(): this { return this.simd(0xec); }
  f64x2Neg(): this { return this.simd(0xed); }
  f64x2Sqrt(): this { return this.simd(0xef); }
  f64x2Add(): this { return this.simd(0xf0); }
  f64x2Sub(): this { return this.simd(0xf1); }
  f64x2Mul(): this { return this.simd(0xf2); }
  f64x2Div(): this { return this.simd(0xf3); }
  f64x2Min(): this { return this.simd(0xf4); }
  f64x2Max(): this { return this.simd(0xf5); }
  f64x2Pmin(): this { return this.simd(0xf6); }
  f64x2Pmax(): this { return this.simd(0xf7); }
  i32x4TruncSatF32x4S(): this { return this.simd(0xf8); }
  i32x4TruncSatF32x4U(): this { return this.simd(0xf9); }
  f32x4ConvertI32x4S(): this { return this.simd(0xfa); }
  f32x4ConvertI32x4U(): this { return this.simd(0xfb); }
  i32x4TruncSatF64x2SZero(): this { return this.simd(0xfc); }
  i32x4TruncSatF64x2UZero(): this { return this.simd(0xfd); }
  f64x2ConvertLowI32x4S(): this { return this.simd(0xfe); }
  f64x2ConvertLowI32x4U(): this { return this.simd(0xff); }

  // --- relaxed SIMD (results may differ between engines where the proposal allows) ---
  i8x16RelaxedSwizzle(): this { return this.simd(0x100); }
  i32x4RelaxedTruncF32x4S(): this { return this.simd(0x101); }
  i32x4RelaxedTruncF32x4U(): this { return this.simd(0x102); }
  i32x4RelaxedTruncF64x2SZero(): this { return this.simd(0x103); }
  i32x4RelaxedTruncF64x2UZero(): this { return this.simd(0x104); }
  f32x4RelaxedMadd(): this { return this.simd(0x105); }
  f32x4RelaxedNmadd(): this { return this.simd(0x106); }
  f64x2RelaxedMadd(): this { return this.simd(0x107); }
  f64x2RelaxedNmadd(): this { return this.simd(0x108); }
  i8x16RelaxedLaneselect(): this { return this.simd(0x109); }
  i16x8RelaxedLaneselect(): this { return this.simd(0x10a); }
  i32x4RelaxedLaneselect(): this { return this.simd(0x10b); }
  i64x2RelaxedLaneselect(): this { return this.simd(0x10c); }
  f32x4RelaxedMin(): this { return this.simd(0x10d); }
  f32x4RelaxedMax(): this { return this.simd(0x10e); }
  f64x2RelaxedMin(): this { return this.simd(0x10f); }
  f64x2RelaxedMax(): this { return this.simd(0x110); }
  i16x8RelaxedQ15mulrS(): this { return this.simd(0x111); }
  i16x8RelaxedDotI8x16I7x16S(): this { return this.simd(0x112); }
  i32x4RelaxedDotI8x16I7x16AddS(): this { return this.simd(0x113); }
}
