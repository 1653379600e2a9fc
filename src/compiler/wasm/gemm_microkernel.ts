// The inner pieces of the GEMM kernel (gemm.ts): packing A and B into panels, the
// register-blocked SIMD microkernel, and the copies for tiles on the matrix edges.
//
// Packed layouts (as in GotoBLAS/BLIS and XNNPACK): a panel of B holds NR columns for
// kcPad values of k, k-major, so the microkernel reads NR contiguous elements per k; a
// panel of A holds MR rows, k-major, so it reads MR contiguous elements per k. Panels
// are zero-padded past the matrix edges and past kLen (up to kcPad, a multiple of the
// k unroll), so the microkernel always computes a full MR x NR tile over kcPad steps.

import type { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { forRange } from "./loops.js";

export type GemmElement = "f32" | "f64";

/** Tile shape and cache blocking of one GEMM kernel (all sizes in elements). */
export interface GemmTiling {
  /** Rows of C per microkernel tile. */
  readonly mr: number;
  /** v128 vectors per tile row: the tile has nr = nrVectors * lanes columns. */
  readonly nrVectors: number;
  /** k steps per iteration of the microkernel loop (kc is padded to a multiple). */
  readonly kUnroll: number;
  /** Depth of one packed block of k. */
  readonly kc: number;
  /** Rows of A packed at a time (a multiple of mr). */
  readonly mc: number;
  /** Columns of B packed at a time (a multiple of nr). */
  readonly nc: number;
}

export interface ElementInfo {
  readonly bytes: number;
  readonly lanes: number;
}

export function elementInfo(type: GemmElement): ElementInfo {
  return type === "f32" ? { bytes: 4, lanes: 4 } : { bytes: 8, lanes: 2 };
}

function copyElement(f: FunctionBuilder, type: GemmElement, load: boolean): void {
  // Bit copies (no float canonicalization, no conversions).
  if (type === "f32") {
    if (load) f.i32Load();
    else f.i32Store();
  } else if (load) f.i64Load();
  else f.i64Store();
}

function pushZero(f: FunctionBuilder, type: GemmElement): void {
  if (type === "f32") f.i32Const(0);
  else f.i64Const(0);
}

/**
 * Emits pack(src, kLen, kcPad, count, dst) for a panel width `width` (mr for A, nr for B).
 * Element (line j, step k) of the source is at src + j*lineStride + k*kStride bytes;
 * lines j >= count and steps k >= kLen are zero. The result is ceil(count/width)
 * panels of kcPad*width elements, panel q holding lines q*width.. at
 * dst + (q*kcPad*width + k*width + (j - q*width)) * bytes.
 */
export function emitPack(m: ModuleBuilder, type: GemmElement, width: number, lineStride: number, kStride: number): number {
  const es = elementInfo(type).bytes;
  return m.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [src, kLen, kcPad, count, dst] = [0, 1, 2, 3, 4];
    const j = f.local("i32");
    const k = f.local("i32");
    const s = f.local("i32");
    const d = f.local("i32");
    const lines = f.local("i32");
    // lines = roundUp(count, width)
    f.localGet(count).i32Const(width - 1).i32Add().i32Const(width).i32DivU().i32Const(width).i32Mul().localSet(lines);
    forRange(f, j, 0, { local: lines }, 1, () => {
      // d = dst + ((j / width) * kcPad * width + j % width) * es
      f.localGet(dst);
      f.localGet(j).i32Const(width).i32DivU().localGet(kcPad).i32Mul().i32Const(width).i32Mul();
      f.localGet(j).i32Const(width).i32RemU().i32Add().i32Const(es).i32Mul().i32Add().localSet(d);
      f.localGet(j).localGet(count).i32LtU().if();
      {
        f.localGet(src).localGet(j).i32Const(lineStride).i32Mul().i32Add().localSet(s);
        forRange(f, k, 0, { local: kLen }, 1, () => {
          f.localGet(d).localGet(s);
          copyElement(f, type, true);
          copyElement(f, type, false);
          f.localGet(s).i32Const(kStride).i32Add().localSet(s);
          f.localGet(d).i32Const(width * es).i32Add().localSet(d);
        });
        forRange(f, k, { local: kLen }, { local: kcPad }, 1, () => {
          f.localGet(d);
          pushZero(f, type);
          copyElement(f, type, false);
          f.localGet(d).i32Const(width * es).i32Add().localSet(d);
        });
      }
      f.else();
      forRange(f, k, 0, { local: kcPad }, 1, () => {
        f.localGet(d);
        pushZero(f, type);
        copyElement(f, type, false);
        f.localGet(d).i32Const(width * es).i32Add().localSet(d);
      });
      f.end();
    });
  });
}

/**
 * Emits micro(pa, pb, c, kcPad, accumulate): the mr x nr tile of C at c (row stride
 * ldc bytes) becomes (accumulate ? C : 0) + sum over kcPad steps of packed A times
 * packed B, with the accumulators in locals (registers). `fused` uses relaxed_madd.
 * Accumulation is in the element type, in order of k.
 */
export function emitMicrokernel(m: ModuleBuilder, type: GemmElement, tiling: GemmTiling, ldc: number, fused: boolean): number {
  const { bytes: es, lanes } = elementInfo(type);
  const { mr, nrVectors, kUnroll } = tiling;
  const nr = nrVectors * lanes;
  return m.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [pa, pb, c, kcPad, accumulate] = [0, 1, 2, 3, 4];
    const acc: number[] = [];
    for (let i = 0; i < mr * nrVectors; i++) acc.push(f.local("v128"));
    const bv: number[] = [];
    for (let v = 0; v < nrVectors; v++) bv.push(f.local("v128"));
    const av = f.local("v128");
    const paEnd = f.local("i32");
    const splat = (offset: number): void => {
      if (type === "f32") f.v128Load32Splat(offset);
      else f.v128Load64Splat(offset);
    };
    const madd = (): void => {
      if (type === "f32") {
        if (fused) f.f32x4RelaxedMadd();
        else f.f32x4Mul().f32x4Add();
      } else if (fused) f.f64x2RelaxedMadd();
      else f.f64x2Mul().f64x2Add();
    };
    f.localGet(pa).localGet(kcPad).i32Const(mr * es).i32Mul().i32Add().localSet(paEnd);
    f.loop();
    for (let u = 0; u < kUnroll; u++) {
      for (let v = 0; v < nrVectors; v++) f.localGet(pb).v128Load((u * nr + v * lanes) * es, 1).localSet(bv[v]!);
      for (let r = 0; r < mr; r++) {
        f.localGet(pa);
        splat((u * mr + r) * es);
        f.localSet(av);
        for (let v = 0; v < nrVectors; v++) {
          const a = acc[r * nrVectors + v]!;
          // fused: relaxed_madd(a, b, acc) = a*b + acc; unfused: acc + a*b.
          if (fused) f.localGet(av).localGet(bv[v]!).localGet(a);
          else f.localGet(a).localGet(av).localGet(bv[v]!);
          madd();
          f.localSet(a);
        }
      }
    }
    f.localGet(pa).i32Const(kUnroll * mr * es).i32Add().localTee(pa);
    f.localGet(pb).i32Const(kUnroll * nr * es).i32Add().localSet(pb);
    f.localGet(paEnd).i32Ne().brIf(0);
    f.end();
    const add = (): void => {
      if (type === "f32") f.f32x4Add();
      else f.f64x2Add();
    };
    f.localGet(accumulate).if();
    for (let r = 0; r < mr; r++) {
      for (let v = 0; v < nrVectors; v++) {
        const a = acc[r * nrVectors + v]!;
        f.localGet(a).localGet(c).v128Load(r * ldc + v * 16, 1);
        add();
        f.localSet(a);
      }
    }
    f.end();
    for (let r = 0; r < mr; r++) {
      for (let v = 0; v < nrVectors; v++) f.localGet(c).localGet(acc[r * nrVectors + v]!).v128Store(r * ldc + v * 16, 1);
    }
  });
}

/**
 * Emits copyTile(from, fromStride, to, toStride, rows, cols): copies a rows x cols
 * block of elements between two row-major places (edge tiles of C to and from the
 * tile buffer).
 */
export function emitCopyTile(m: ModuleBuilder, type: GemmElement): number {
  const es = elementInfo(type).bytes;
  return m.addFunction(undefined, ["i32", "i32", "i32", "i32", "i32", "i32"], [], (f) => {
    const [from, fromStride, to, toStride, rows, cols] = [0, 1, 2, 3, 4, 5];
    const r = f.local("i32");
    const j = f.local("i32");
    forRange(f, r, 0, { local: rows }, 1, () => {
      forRange(f, j, 0, { local: cols }, 1, () => {
        f.localGet(to).localGet(j).i32Const(es).i32Mul().i32Add();
        f.localGet(from).localGet(j).i32Const(es).i32Mul().i32Add();
        copyElement(f, type, true);
        copyElement(f, type, false);
      });
      f.localGet(from).localGet(fromStride).i32Add().localSet(from);
      f.localGet(to).localGet(toStride).i32Add().localSet(to);
    });
  });
}
