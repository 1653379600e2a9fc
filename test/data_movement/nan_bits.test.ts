// Data movement keeps every bit pattern: a signalling NaN (quiet bit clear) and NaN
// payloads come out of transpose, slice, dynamic slices, concatenate, pad, reverse,
// broadcast, select and gather as they went in, as XLA copies them. A Float32Array
// element read into a JS number is widened to f64, which quiets a signalling NaN on
// x86, so a kernel that moves f32 values through numbers fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, arrayShape, bitcastConvertLiteral, broadcast, concatInDim, constantLiteral, constantR0, dynamicSlice,
  dynamicUpdateSlice, gather, pad, parameter, reshape, rev, select, slice, transpose, type ElementType, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

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
      const bits = bitcastConvertLiteral(out, arrayShape(bitsType, out.dimensions)).values().map((v) => BigInt(v as number | bigint));
      // Every element is an input pattern or the padding zero, bit for bit.
      for (const v of bits) {
        assert.ok(inBits.includes(v) || v === 0n, `${name} on ${type}: 0x${v.toString(16)} is none of the input's bit patterns`);
      }
      // Each case keeps at least one of the signalling NaNs (patterns 0, 1, 2 and 5).
      assert.ok(bits.some((v) => [0, 1, 2, 5].some((k) => v === inBits[k])), `${name} on ${type}: no signalling NaN came through`);
    }
  });
}

test("bitcastConvertLiteral: a type name where the result shape belongs is a ShapeError naming the argument", () => {
  const lit = Literal.from("u32", [1, 2]);
  assert.throws(() => bitcastConvertLiteral(lit, "f32" as unknown as ReturnType<typeof arrayShape>),
    (e: Error) => e.name === "ShapeError" && /resultShape must be an array shape/.test(e.message) && /"f32"/.test(e.message));
});
