// Compiled sort: N operands sorted together along one dimension by a comparator that
// is one LT or GT compare of one operand's two parameters (the key); the other
// operands ride along (JAX's argsort sorts (x, iota) this way). FLOAT compares use
// wasm's IEEE compares; TOTALORDER maps float bits to signed integers first (-NaN <
// -inf < ... < -0 < +0 < ... < +NaN).
//
// Each lane (one position of every other dimension) is sorted by a bottom-up stable
// merge sort of (key, position) pairs in the call's scratch, then every operand is
// permuted into its result. The interpreter sorts with a stable sort too, so results
// are identical whenever the comparator is a strict weak order (always, except FLOAT
// compares on lanes holding NaN, where any two sorts may disagree). Keys: f32, f64, bf16
// (widened exactly to f32), and integers of 8 to 64 bits and pred.
// Work: lanes, split across threads.

import type { Instruction } from "../../../ir/computation.js";
import type { ElementType } from "../../../types/element_type.js";
import { type ArrayShape, elementCount } from "../../../types/shape.js";
import { ModuleBuilder, type FunctionBuilder } from "../encoder.js";
import type { WasmKernel, WasmTarget } from "../kernel.js";
import type { Declined } from "../../kernel/declined.js";
import { emitCopyElement, loadScalar, storageBytes } from "./common.js";
import { rowMajorStrides } from "../../../types/index_util.js";

/** Integer key types (held as i32 or i64, normalized as loadScalar leaves them). */
const KEY_INTEGERS: ReadonlySet<ElementType> = new Set<ElementType>(["pred", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]);

/** Every key type this kernel compares (the CPU backends' sort; kernel/capabilities.ts sortKeyTypes): the floats it reads as f32 or f64, and the integers. */
export const SORT_KEY_TYPES: ReadonlySet<ElementType> = new Set<ElementType>(["f32", "f64", "bf16", ...KEY_INTEGERS]);

interface SortKey {
  readonly operand: number;
  readonly descending: boolean;
  readonly totalOrder: boolean;
}

/** The key a sort comparator orders by, when it is compare(p[2k], p[2k+1]) (or swapped) with LT or GT. */
function sortKeyOf(inst: Instruction<"sort">, types: readonly ElementType[]): SortKey | Declined {
  const c = inst.attrs.comparator;
  const root = c.root as Instruction<"compare">;
  if (root.opcode !== "compare") return { declined: "sort: the comparator is not one compare" };
  const [a, b] = root.operands;
  const ia = c.parameters.indexOf(a as Instruction<"parameter">);
  const ib = c.parameters.indexOf(b as Instruction<"parameter">);
  if (ia < 0 || ib < 0 || (ia >> 1) !== (ib >> 1) || ia === ib) return { declined: "sort: the comparator does not compare one operand's two elements" };
  const { direction, compareType } = root.attrs;
  if (direction !== "LT" && direction !== "GT") return { declined: `sort: comparator direction ${direction}` };
  const operand = ia >> 1;
  const t = types[operand]!;
  if (!SORT_KEY_TYPES.has(t)) return { declined: `sort: key type ${t}` };
  const isFloat = !KEY_INTEGERS.has(t);
  const expected = isFloat ? "FLOAT" : t.startsWith("s") ? "SIGNED" : "UNSIGNED";
  if (compareType !== undefined && compareType !== expected && !(isFloat && compareType === "TOTALORDER")) {
    return { declined: `sort: compare type ${compareType} on ${t}` };
  }
  // Element i goes first when key_i < key_j (LT on (i, j)) or key_j < key_i (LT on (j, i)), ...
  const swapped = ia % 2 === 1;
  return { operand, descending: (direction === "GT") !== swapped, totalOrder: compareType === "TOTALORDER" };
}

export function emitSortKernel(inst: Instruction<"sort">, target: WasmTarget): WasmKernel | Declined {
  const shapes = inst.operands.map((o) => o.shape);
  if (shapes.some((s) => s.kind !== "array")) return { declined: "sort: operands are not arrays" };
  const arrays = shapes as ArrayShape[];
  const types = arrays.map((s) => s.elementType);
  const sizes = types.map(storageBytes);
  if (sizes.some((s) => ![1, 2, 4, 8].includes(s))) return { declined: "sort: element types" };
  const key = sortKeyOf(inst, types);
  if ("declined" in key) return key;
  const dims = arrays[0]!.dimensions;
  const dim = inst.attrs.dimension;
  const n = dims[dim]!;
  if (elementCount(dims) * 8 >= 2 ** 31) return { declined: "sort: too large for 32-bit offsets" };
  const kt = types[key.operand]!;
  const wide = storageBytes(kt) === 8;
  // f32 compares read the stored bits as f32 (bf16 keys were widened to f32 bits).
  const kb = wide ? 8 : 4;
  const count = arrays.length;
  const outer = dims.filter((_, d) => d !== dim);
  const strides = rowMajorStrides(dims);
  const outerStrides = strides.filter((_, d) => d !== dim);
  const laneStride = strides[dim]!;
  const lanes = elementCount(outer);
  // Scratch: keys A and B, positions A and B.
  const keyBytes = Math.ceil((n * kb) / 64) * 64;
  const posBytes = Math.ceil((n * 4) / 64) * 64;
  const scratchBytes = Math.max(64, 2 * keyBytes + 2 * posBytes);
  const isFloat = kt === "f32" || kt === "f64" || kt === "bf16";
  const signed = kt.startsWith("s") || (isFloat && key.totalOrder);
  const ct = wide ? "i64" : "i32";

  const module = new ModuleBuilder().importMemory(target);
  // before(x, y): key x goes before key y (strictly), keys as stored in scratch.
  const loadKey = (f: FunctionBuilder): void => {
    if (isFloat && !key.totalOrder) {
      if (wide) f.f64Load(); else f.f32Load();
    } else if (wide) f.i64Load(); else f.i32Load();
  };
  const less = (f: FunctionBuilder): void => {
    if (isFloat && !key.totalOrder) {
      if (wide) f.f64Lt(); else f.f32Lt();
    } else if (wide) {
      if (signed) f.i64LtS(); else f.i64LtU();
    } else if (signed) f.i32LtS(); else f.i32LtU();
  };
  const params = Array.from({ length: 2 * count + 3 }, () => "i32" as const);
  module.addFunction("run", params, [], (f) => {
    const scratch = 2 * count;
    const [begin, end] = [scratch + 1, scratch + 2];
    const [lane, rest, base, j, k, i, mid, hi, lo, width, keysA, keysB, posA, posB, tmp] = Array.from({ length: 15 }, () => f.local("i32"));
    const kv = f.local(ct);
    const loop = (counter: number, limit: number | { local: number }, body: () => void, step = 1): void => {
      f.block().loop();
      f.localGet(counter);
      if (typeof limit === "number") f.i32Const(limit); else f.localGet(limit.local);
      f.i32GeU().brIf(1);
      body();
      f.localGet(counter).i32Const(step).i32Add().localSet(counter);
      f.br(0).end().end();
    };
    f.localGet(begin).localSet(lane);
    loop(lane, { local: end }, () => {
      // base = element offset of the lane's first element
      f.i32Const(0).localSet(base);
      f.localGet(lane).localSet(rest);
      for (let d = outer.length - 1; d >= 0; d--) {
        f.localGet(base).localGet(rest).i32Const(outer[d]!).i32RemU().i32Const(outerStrides[d]!).i32Mul().i32Add().localSet(base);
        f.localGet(rest).i32Const(outer[d]!).i32DivU().localSet(rest);
      }
      f.localGet(scratch).localSet(keysA);
      f.localGet(scratch).i32Const(keyBytes).i32Add().localSet(keysB);
      f.localGet(scratch).i32Const(2 * keyBytes).i32Add().localSet(posA);
      f.localGet(scratch).i32Const(2 * keyBytes + posBytes).i32Add().localSet(posB);
      // Keys and positions of the lane.
      f.i32Const(0).localSet(j);
      loop(j, n, () => {
        f.localGet(keysA).localGet(j).i32Const(kb).i32Mul().i32Add();
        f.localGet(key.operand).localGet(base).localGet(j).i32Const(laneStride).i32Mul().i32Add().i32Const(sizes[key.operand]!).i32Mul().i32Add();
        // The key as stored in scratch: float bits (bf16 widened to f32 exactly), or the integer normalized to i32 / i64.
        if (wide) f.i64Load();
        else if (kt === "bf16") f.i32Load16U().i32Const(16).i32Shl();
        else if (kt === "f32") f.i32Load();
        else loadScalar(f, kt);
        if (isFloat && key.totalOrder) {
          // bits ^ ((bits >> (w-1)) >>> 1): negative floats reverse their order below the positives
          if (wide) f.localTee(kv).localGet(kv).i64Const(63).i64ShrS().i64Const(1).i64ShrU().i64Xor();
          else f.localTee(kv).localGet(kv).i32Const(31).i32ShrS().i32Const(1).i32ShrU().i32Xor();
        }
        if (wide) f.i64Store(); else f.i32Store();
        f.localGet(posA).localGet(j).i32Const(4).i32Mul().i32Add().localGet(j).i32Store();
      });
      // Bottom-up merge passes, A -> B, then swap.
      f.i32Const(1).localSet(width);
      loop(width, n, () => {
        f.i32Const(0).localSet(lo);
        f.block().loop();
        f.localGet(lo).i32Const(n).i32GeU().brIf(1);
        f.localGet(lo).localGet(width).i32Add().localTee(mid).i32Const(n).localGet(mid).i32Const(n).i32LtU().select().localSet(mid);
        f.localGet(mid).localGet(width).i32Add().localTee(hi).i32Const(n).localGet(hi).i32Const(n).i32LtU().select().localSet(hi);
        f.localGet(lo).localSet(i);
        f.localGet(mid).localSet(j);
        f.localGet(lo).localSet(k);
        loop(k, { local: hi }, () => {
          // take the left element unless the right one goes strictly before it
          f.localGet(i).localGet(mid).i32LtU().if("i32");
          {
            f.localGet(j).localGet(hi).i32GeU().if("i32");
            f.i32Const(1);
            f.else();
            // right before left?
            if (key.descending) {
              f.localGet(keysA).localGet(i).i32Const(kb).i32Mul().i32Add();
              loadKey(f);
              f.localGet(keysA).localGet(j).i32Const(kb).i32Mul().i32Add();
              loadKey(f);
            } else {
              f.localGet(keysA).localGet(j).i32Const(kb).i32Mul().i32Add();
              loadKey(f);
              f.localGet(keysA).localGet(i).i32Const(kb).i32Mul().i32Add();
              loadKey(f);
            }
            less(f);
            f.i32Eqz();
            f.end();
          }
          f.else().i32Const(0).end();
          f.localSet(tmp);
          // from = tmp ? i++ : j++
          f.localGet(i).localGet(j).localGet(tmp).select().localSet(rest);
          f.localGet(i).localGet(tmp).i32Add().localSet(i);
          f.localGet(j).i32Const(1).localGet(tmp).i32Sub().i32Add().localSet(j);
          f.localGet(keysB).localGet(k).i32Const(kb).i32Mul().i32Add();
          f.localGet(keysA).localGet(rest).i32Const(kb).i32Mul().i32Add();
          emitCopyElement(f, kb);
          f.localGet(posB).localGet(k).i32Const(4).i32Mul().i32Add();
          f.localGet(posA).localGet(rest).i32Const(4).i32Mul().i32Add();
          emitCopyElement(f, 4);
        });
        f.localGet(lo).localGet(width).i32Const(2).i32Mul().i32Add().localSet(lo);
        f.br(0).end().end();
        for (const [x, y] of [[keysA, keysB], [posA, posB]] as const) {
          f.localGet(x).localGet(y).localSet(x).localSet(y);
        }
        f.localGet(width).localGet(width).i32Add().localSet(width);
      }, 0);
      // Permute every operand into its result.
      f.i32Const(0).localSet(j);
      loop(j, n, () => {
        f.localGet(posA).localGet(j).i32Const(4).i32Mul().i32Add().i32Load().localSet(rest);
        for (let o = 0; o < count; o++) {
          const es = sizes[o]!;
          f.localGet(count + o).localGet(base).localGet(j).i32Const(laneStride).i32Mul().i32Add().i32Const(es).i32Mul().i32Add();
          f.localGet(o).localGet(base).localGet(rest).i32Const(laneStride).i32Mul().i32Add().i32Const(es).i32Mul().i32Add();
          emitCopyElement(f, es);
        }
      });
    });
  });
  return {
    name: `sort ${key.descending ? "descending" : "ascending"} ${types.join(",")} ${dims.join("x")} along ${dim}`,
    bytes: module.finish(),
    operandCount: count,
    resultCount: count,
    scratchBytes,
    parallelExtent: lanes,
    costPerUnit: n * Math.max(1, Math.ceil(Math.log2(Math.max(n, 2)))) * (kb + 8) + n * count * 8,
  };
}
