// Compiled rng-bit-generator: Philox4x32-10 and Threefry2x32-20 bit for bit as the
// interpreter (src/interpreter/kernels/prng.ts, which documents XLA's layout of the
// bits) computes them. Work units are counter blocks: each block's words go to
// elements no other block writes, so blocks split across threads; the call whose range
// holds block 0 writes the new state.

import type { Instruction } from "../../../ir/computation.js";
import { ELEMENT_TYPES } from "../../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";

import { rowMajorStrides } from "../../../types/index_util.js";

const PHILOX_M0 = 0xd2511f53;
const PHILOX_M1 = 0xcd9e8d57;
const PHILOX_W0 = 0x9e3779b9;
const PHILOX_W1 = 0xbb67ae85;
const THREEFRY_ROTATIONS = [13, 15, 26, 6, 17, 29, 16, 24];

/** Philox4x32-10 on the i32 locals x[0..3] in place, key in k0, k1 (clobbered). */
function emitPhilox(f: FunctionBuilder, x: readonly number[], k0: number, k1: number, p: number): void {
  const [x0, x1, x2, x3] = x as [number, number, number, number];
  const hiA = f.local("i32");
  const loA = f.local("i32");
  for (let round = 0; round < 10; round++) {
    // A = M0 * x0, B = M1 * x2 as 64-bit products
    f.i64Const(PHILOX_M0).localGet(x0).i64ExtendI32U().i64Mul().localTee(p).i32WrapI64().localSet(loA);
    f.localGet(p).i64Const(32).i64ShrU().i32WrapI64().localSet(hiA);
    f.i64Const(PHILOX_M1).localGet(x2).i64ExtendI32U().i64Mul().localSet(p);
    // x0 = hiB ^ x1 ^ k0; x1 = loB; x2 = hiA ^ x3 ^ k1; x3 = loA
    f.localGet(p).i64Const(32).i64ShrU().i32WrapI64().localGet(x1).i32Xor().localGet(k0).i32Xor().localSet(x0);
    f.localGet(p).i32WrapI64().localSet(x1);
    f.localGet(hiA).localGet(x3).i32Xor().localGet(k1).i32Xor().localSet(x2);
    f.localGet(loA).localSet(x3);
    f.localGet(k0).i32Const(PHILOX_W0).i32Add().localSet(k0);
    f.localGet(k1).i32Const(PHILOX_W1).i32Add().localSet(k1);
  }
}

/** Threefry2x32-20 on the i32 locals x0, x1 in place, key schedule ks[0..2]. */
function emitThreefry(f: FunctionBuilder, x0: number, x1: number, ks: readonly number[]): void {
  f.localGet(x0).localGet(ks[0]!).i32Add().localSet(x0);
  f.localGet(x1).localGet(ks[1]!).i32Add().localSet(x1);
  for (let g = 0; g < 5; g++) {
    for (let r = 0; r < 4; r++) {
      f.localGet(x0).localGet(x1).i32Add().localSet(x0);
      f.localGet(x1).i32Const(THREEFRY_ROTATIONS[(g % 2) * 4 + r]!).i32Rotl().localGet(x0).i32Xor().localSet(x1);
    }
    f.localGet(x0).localGet(ks[(g + 1) % 3]!).i32Add().localSet(x0);
    f.localGet(x1).localGet(ks[(g + 2) % 3]!).i32Add().i32Const(g + 1).i32Add().localSet(x1);
  }
}

/** Stores the i32 word on the stack (address below it) as an element of `bytes` bytes (its low bits). */
function storeWord(f: FunctionBuilder, bytes: number): void {
  if (bytes === 4) f.i32Store();
  else if (bytes === 2) f.i32Store16();
  else f.i32Store8();
}

export function emitRngBitGeneratorKernel(inst: Instruction<"rngBitGenerator">, target: WasmTarget): WasmKernel | Declined {
  const stateInst = inst.operands[0];
  if (stateInst === undefined || stateInst.shape.kind !== "array" || inst.shape.kind !== "tuple") return { declined: "rngBitGenerator: operands" };
  const stateWords = stateInst.shape.dimensions[0] ?? 0;
  const shape = inst.shape.elements[1] as ArrayShape;
  const { algorithm } = inst.attrs;
  const threeFry = algorithm === "THREE_FRY";
  if (stateInst.shape.elementType !== "u64" || stateInst.shape.dimensions.length !== 1 || (threeFry ? stateWords !== 2 : stateWords !== 2 && stateWords !== 3)) {
    return { declined: `rngBitGenerator: state ${stateInst.shape.elementType}[${stateWords}] for ${algorithm}` };
  }
  const width = ELEMENT_TYPES[shape.elementType].bitWidth;
  if (![8, 16, 32, 64].includes(width) || ELEMENT_TYPES[shape.elementType].storageBytes * 8 !== width) {
    return { declined: `rngBitGenerator: element type ${shape.elementType}` };
  }
  const bytes = width / 8;
  const wide = width === 64;
  const dims = shape.dimensions;
  const count = elementCount(dims);
  if (count * bytes >= 2 ** 31) return { declined: "rngBitGenerator: too large for 32-bit offsets" };
  // Blocks and where their words go.
  let blocks: number;
  let split = -1;
  let halfDims: number[] = [];
  if (!threeFry) {
    blocks = Math.ceil(count / (wide ? 2 : 4));
  } else if (wide || dims.length === 0) {
    blocks = wide ? count : 1;
  } else {
    split = dims.findIndex((d) => d % 2 === 0);
    if (split < 0) split = dims.reduce((best, d, i) => (d > dims[best]! ? i : best), 0);
    halfDims = dims.map((d, i) => (i === split ? Math.ceil(d / 2) : d));
    blocks = elementCount(halfDims);
  }
  const strides = rowMajorStrides(dims).map((s) => s * bytes);

  const module = new ModuleBuilder().importMemory(target);
  module.addFunction("run", ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [state, newState, out, begin, end] = [0, 1, 2, 3, 4];
    const [key, low, high, c, p] = [f.local("i64"), f.local("i64"), f.local("i64"), f.local("i64"), f.local("i64")];
    const [k0, k1, j, e, rest, addr] = Array.from({ length: 6 }, () => f.local("i32"));
    const x = Array.from({ length: 4 }, () => f.local("i32"));
    const ks = Array.from({ length: 3 }, () => f.local("i32"));
    const kk = [f.local("i32"), f.local("i32")];
    f.localGet(state).i64Load().localSet(key);
    f.localGet(state).i64Load(8).localSet(low);
    if (stateWords === 3) f.localGet(state).i64Load(16).localSet(high);
    else f.localGet(key).localSet(high);
    f.localGet(key).i32WrapI64().localSet(k0);
    f.localGet(key).i64Const(32).i64ShrU().i32WrapI64().localSet(k1);
    // The new state: counter + blocks (128-bit for Philox, 64-bit for Threefry).
    f.localGet(begin).i32Eqz().localGet(end).i32Const(0).i32GtU().i32And().if();
    f.localGet(newState).localGet(key).i64Store();
    f.localGet(low).i64Const(blocks).i64Add().localSet(c);
    f.localGet(newState).localGet(c).i64Store(8);
    if (stateWords === 3) {
      f.localGet(newState).localGet(high).localGet(c).localGet(low).i64LtU().i64ExtendI32U().i64Add().i64Store(16);
    }
    f.end();
    if (threeFry) {
      f.localGet(k0).localSet(ks[0]!);
      f.localGet(k1).localSet(ks[1]!);
      f.i32Const(0x1bd11bda).localGet(k0).i32Xor().localGet(k1).i32Xor().localSet(ks[2]!);
    }
    if (blocks === 0) return; // no bits (a zero-sized result): only the state
    f.localGet(begin).localSet(j);
    f.block().loop();
    f.localGet(j).localGet(end).i32GeU().brIf(1);
    // counter + j
    f.localGet(low).localGet(j).i64ExtendI32U().i64Add().localSet(c);
    if (!threeFry) {
      f.localGet(c).i32WrapI64().localSet(x[0]!);
      f.localGet(c).i64Const(32).i64ShrU().i32WrapI64().localSet(x[1]!);
      f.localGet(high).localGet(c).localGet(low).i64LtU().i64ExtendI32U().i64Add().localSet(p);
      f.localGet(p).i32WrapI64().localSet(x[2]!);
      f.localGet(p).i64Const(32).i64ShrU().i32WrapI64().localSet(x[3]!);
      f.localGet(k0).localSet(kk[0]!);
      f.localGet(k1).localSet(kk[1]!);
      emitPhilox(f, x, kk[0]!, kk[1]!, p);
      const perBlock = wide ? 2 : 4;
      for (let k = 0; k < perBlock; k++) {
        // element perBlock*j + k, when it exists
        f.localGet(j).i32Const(perBlock).i32Mul().i32Const(k).i32Add().localTee(e).i32Const(count).i32LtU().if();
        f.localGet(out).localGet(e).i32Const(bytes).i32Mul().i32Add();
        if (wide) {
          f.localGet(x[2 * k]!).i64ExtendI32U().localGet(x[2 * k + 1]!).i64ExtendI32U().i64Const(32).i64Shl().i64Or().i64Store();
        } else {
          f.localGet(x[k]!);
          storeWord(f, bytes);
        }
        f.end();
      }
    } else {
      f.localGet(c).i32WrapI64().localSet(x[0]!);
      f.localGet(c).i64Const(32).i64ShrU().i32WrapI64().localSet(x[1]!);
      emitThreefry(f, x[0]!, x[1]!, ks);
      if (wide) {
        f.localGet(out).localGet(j).i32Const(8).i32Mul().i32Add();
        f.localGet(x[0]!).i64ExtendI32U().localGet(x[1]!).i64ExtendI32U().i64Const(32).i64Shl().i64Or().i64Store();
      } else if (dims.length === 0) {
        f.localGet(out).localGet(x[0]!);
        storeWord(f, bytes);
      } else {
        // Block j is the row-major index in halfDims: element (h..., 2h_split) gets x0, (..., 2h_split + 1) x1.
        f.i32Const(0).localSet(addr);
        f.localGet(j).localSet(rest);
        for (let d = dims.length - 1; d >= 0; d--) {
          f.localGet(rest).i32Const(halfDims[d]!).i32RemU().localSet(e);
          f.localGet(rest).i32Const(halfDims[d]!).i32DivU().localSet(rest);
          if (d === split) f.localGet(e).i32Const(2).i32Mul().localSet(e);
          f.localGet(addr).localGet(e).i32Const(strides[d]!).i32Mul().i32Add().localSet(addr);
          if (d === split) f.localGet(e).i32Const(1).i32Add().localSet(kk[0]!);
        }
        f.localGet(out).localGet(addr).i32Add().localGet(x[0]!);
        storeWord(f, bytes);
        f.localGet(kk[0]!).i32Const(dims[split]!).i32LtU().if();
        f.localGet(out).localGet(addr).i32Add().i32Const(strides[split]!).i32Add().localGet(x[1]!);
        storeWord(f, bytes);
        f.end();
      }
    }
    f.localGet(j).i32Const(1).i32Add().localSet(j);
    f.br(0).end().end();
  });
  return {
    name: `rng-bit-generator ${threeFry ? "THREE_FRY" : "PHILOX"} ${shape.elementType}[${dims.join(",")}]`,
    bytes: module.finish(),
    operandCount: 1,
    resultCount: 2,
    scratchBytes: 0,
    parallelExtent: Math.max(blocks, 1),
    costPerUnit: threeFry ? 120 : 160,
  };
}
