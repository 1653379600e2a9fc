// Data movement keeps every bit pattern: a signalling NaN (quiet bit clear) and NaN
// payloads come out of transpose, slice, dynamic slices, concatenate, pad, reverse,
// broadcast, select and gather as they went in, as XLA copies them; so does real of a
// real operand, which is the operand. A Float32Array element read into a JS number is
// widened to f64, which quiets a signalling NaN on x86, so a kernel that moves f32
// values through numbers fails here. The narrow floats
// (f16, bf16, the f8 types) keep theirs too: a compiled kernel that selects them as
// values decoded to f32 and encodes the result gives the type's quiet NaN instead.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, bitcastConvertLiteral, bitcastConvertType, broadcast, concatInDim, constantLiteral, constantR0, dynamicSlice,
  dynamicUpdateSlice, gather, pad, parameter, real, reshape, rev, select, slice, transpose, type ElementType, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

/** The bit patterns of a literal, as the unsigned integers of its width. */
function bitsOf(out: Literal, bitsType: ElementType): bigint[] {
  return bitcastConvertLiteral(out, arrayShape(bitsType, out.dimensions)).values().map((v) => BigInt(v as number | bigint));
}

// f32: signalling NaNs (both signs, payloads low and high), a quiet NaN with a payload, 1.0.
const F32 = [0x7f800001, 0xff800003, 0x7fa00000, 0x7fc12345, 0x3f800000, 0xffbfffff];
const F64 = [0x7ff0000000000001n, 0xfff0000000000003n, 0x7ff4000000000000n, 0x7ff8000012345678n, 0x3ff0000000000000n, 0xfff7ffffffffffffn];

const CASES: Record<string, (x: XlaOp, b: XlaBuilder, t: ElementType) => XlaOp> = {
  transpose: (x) => transpose(reshape(x, [2, 3]), [1, 0]),
  slice: (x) => slice(x, [1], [6], [2]),
  dynamicSlice: (x, b) => dynamicSlice(x, [constantR0(b, "s32", 2)], [3]),
  dynamicUpdateSlice: (x, b) => dynamicUpdateSlice(rev(x, [0]), slice(x, [0], [3], [1]), [constantR0(b, "s32", 1)]),
  concatenate: (x, b) => concatInDim(b, [x, rev(x, [0])], 0),
  pad: (x, b, t) => pad(x, constantR0(b, t, 0), [{ edgePaddingLow: 1, edgePaddingHigh: 2, interiorPadding: 1 }]),
  reverse: (x) => rev(x, [0]),
  broadcast: (x) => broadcast(x, [2]),
  select: (x) => select(broadcast(constantR0(x.builder, "pred", true), [6]), x, rev(x, [0])),
  // real of a real operand is the operand (StableHLO), not a value computed from it.
  real: (x) => real(x),
  gather: (x, b) => gather(x, constantLiteral(b, Literal.from("s32", [[4], [0], [5], [1]])), {
    offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 1,
  }, [1]),
};

for (const [type, bitsType, patterns] of [["f32", "u32", F32], ["f64", "u64", F64]] as const) {
  test(`data movement keeps ${type} NaN bit patterns (signalling NaNs and payloads)`, () => {
    const input = bitcastConvertLiteral(Literal.from(bitsType, [...patterns]), arrayShape(type, [6]));
    const inBits = (patterns as readonly (number | bigint)[]).map((p) => BigInt(p));
    for (const [name, make] of Object.entries(CASES)) {
      const b = new XlaBuilder(`${name}_${type}`);
      const root = make(parameter(b, 0, arrayShape(type, [6]), "x"), b, type);
      const out = evaluate(b.build(root), [input]);
      const bits = bitsOf(out, bitsType);
      // Every element is an input pattern or the padding zero, bit for bit.
      for (const v of bits) {
        assert.ok(inBits.includes(v) || v === 0n, `${name} on ${type}: 0x${v.toString(16)} is none of the input's bit patterns`);
      }
      // Each case keeps at least one of the signalling NaNs (patterns 0, 1, 2 and 5).
      assert.ok(bits.some((v) => [0, 1, 2, 5].some((k) => v === inBits[k])), `${name} on ${type}: no signalling NaN came through`);
    }
  });
}

// Narrow floats: six patterns each, with the indices of those a decode to f32 and encode
// back would change (signalling NaNs, payloads; for formats with one NaN a sign: none).
// -0 is among them where the type has it.
const NARROW: readonly { type: ElementType; bitsType: ElementType; patterns: readonly number[]; kept: readonly number[] }[] = [
  { type: "f16", bitsType: "u16", patterns: [0x7c01, 0xfc03, 0x7d00, 0x7e15, 0x8000, 0xfdff], kept: [0, 1, 2, 3, 5] },
  { type: "bf16", bitsType: "u16", patterns: [0x7f81, 0xff83, 0x7fa0, 0x7fc5, 0x8000, 0xffbf], kept: [0, 1, 2, 3, 5] },
  { type: "f8e5m2", bitsType: "u8", patterns: [0x7d, 0xfd, 0x7f, 0xff, 0x80, 0x3c], kept: [0, 1, 2, 3] },
  { type: "f8e4m3", bitsType: "u8", patterns: [0x79, 0xfa, 0x7b, 0x7d, 0x80, 0xfb], kept: [0, 1, 2, 3, 5] },
  { type: "f8e3m4", bitsType: "u8", patterns: [0x71, 0xf3, 0x75, 0x7a, 0x80, 0xf7], kept: [0, 1, 2, 3, 5] },
  { type: "f8e4m3fn", bitsType: "u8", patterns: [0x7f, 0xff, 0x01, 0x38, 0x80, 0xfe], kept: [] },
  { type: "f8e5m2fnuz", bitsType: "u8", patterns: [0x80, 0x01, 0x7f, 0xff, 0x00, 0x81], kept: [] },
  { type: "f8e8m0fnu", bitsType: "u8", patterns: [0xff, 0x00, 0x7f, 0xfe, 0x01, 0x80], kept: [] },
];

for (const { type, bitsType, patterns, kept } of NARROW) {
  const input = bitcastConvertLiteral(Literal.from(bitsType, [...patterns]), arrayShape(type, [6]));
  const inBits = patterns.map((p) => BigInt(p));
  const zeroBits = bitsOf(Literal.from(type, [0]), bitsType)[0]!;

  test(`data movement and select keep ${type} bit patterns (NaN payloads, signalling NaNs, -0)`, () => {
    // The cases a compiled kernel computes with selects (pad and concatenate pick elements
    // so), and transpose as a plain copy: few, so the webgpu run compiles few kernels.
    for (const name of ["select", "pad", "concatenate", "dynamicUpdateSlice", "transpose", "real"] as const) {
      const make = CASES[name]!;
      const b = new XlaBuilder(`${name}_${type}`);
      const bits = bitsOf(evaluate(b.build(make(parameter(b, 0, arrayShape(type, [6]), "x"), b, type)), [input]), bitsType);
      for (const v of bits) {
        assert.ok(inBits.includes(v) || v === zeroBits, `${name} on ${type}: 0x${v.toString(16)} is none of the input's bit patterns`);
      }
      assert.ok(kept.length === 0 || bits.some((v) => kept.some((k) => v === inBits[k])), `${name} on ${type}: no NaN payload came through`);
    }
  });

  // A select inside a fused kernel: one operand a parameter, the other an arithmetic
  // result (2y, finite: its encoding is exact), the result read as bits in the same
  // fusion. Where the predicate picks x, x's bits come out exactly.
  test(`a fused select of ${type} between arithmetic and a bitcast copies the chosen operand's bits`, () => {
    const y = [1, 2, 0.5, 4, 1, 2];
    const picks = [true, false, true, true, false, true];
    const b = new XlaBuilder(`fused_select_${type}`);
    const p = parameter(b, 0, arrayShape("pred", [6]), "p");
    const x = parameter(b, 1, arrayShape(type, [6]), "x");
    const yOp = parameter(b, 2, arrayShape(type, [6]), "y");
    const root = bitcastConvertType(select(p, x, add(yOp, yOp)), bitsType);
    const out = evaluate(b.build(root), [Literal.from("pred", picks), input, Literal.from(type, y)]);
    const doubled = bitsOf(Literal.from(type, y.map((v) => 2 * v)), bitsType);
    const expected = picks.map((pick, i) => (pick ? inBits[i]! : doubled[i]!));
    assert.deepEqual(out.values().map((v) => BigInt(v as number | bigint)), expected);
  });
}

test("bitcastConvertLiteral: a type name where the result shape belongs is a ShapeError naming the argument", () => {
  const lit = Literal.from("u32", [1, 2]);
  assert.throws(() => bitcastConvertLiteral(lit, "f32" as unknown as ReturnType<typeof arrayShape>),
    (e: Error) => e.name === "ShapeError" && /resultShape must be an array shape/.test(e.message) && /"f32"/.test(e.message));
});
