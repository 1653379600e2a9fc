// The inner pieces of the GEMM kernel (gemm.ts): packing B into panels, the
// register-blocked SIMD microkernel, and the copies for tiles on the matrix edges.
//
// A panel of B holds nr columns for kLen values of k, k-major, so the microkernel
// reads nr contiguous elements per k; panels are zero-padded past the last column, so
// the microkernel always computes full-width tiles. A is read in place (as XNNPACK
// does): row r of a tile at a constant offset r * aRowStride from the tile's pointer,
// which steps aKStep bytes per k, so both A layouts ([m][k] and [k][m]) need no copy.
//
// Why no k unrolling: TurboFan schedules the loads of a loop body first (they are
// ordered by the effect chain) and sinks the pure multiply-adds to the end, so every
// loaded value of an unrolled body is live at once and spills past the 15 xmm
// registers V8 allocates (two k steps an iteration, fused too: 17-18 against 34-37
// GFLOP/s on 2026-11-30). One k step per iteration with a 4 x 8 tile keeps 8
// accumulators + 2 B vectors + 4 A splats + 1 product in registers (5 x 8 or 3 x 12
// spill, measured at less than half the speed; fused, without the product's register,
// 5 x 8, 6 x 8 and 4 x 12 still spill: 17-19 against 38 GFLOP/s on 2026-11-30).

import type { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { forRange } from "./loops.js";
import { gemmElementBytes, vectorLanes, type GemmElement, type GemmTarget, type GemmTiling } from "../kernel/gemm_plan.js";
import type { WasmTarget } from "./kernel.js";

/**
 * The WebAssembly GEMM kernels as the schedule sees them (kernel/gemm_plan.ts): v128
 * registers, a 4 x 2-vector tile (see above), blocked by row panels.
 */
export const WASM_GEMM_TARGET: GemmTarget = { vectorBytes: 16, tileRows: 4, tileVectors: 2, blocking: "row-panels" };

/**
 * Whether a GEMM or convolution kernel multiply-adds with relaxed_madd: wherever the
 * engine has relaxed SIMD, unless the tiling asks for mul + add (fma: false). On the
 * AMD EPYC (Zen 3) of 2026-11-30, V8 11.3 (Node 20 with --experimental-wasm-relaxed-simd,
 * which lowers relaxed_madd to vfmadd), a loop of independent f32x4 multiply-adds ran at
 * 47 GFLOP/s fused and 28-32 as mul + add, the 4 x 8 GEMM at 38-40 against 27-28
 * (128x768x3072, B pre-packed, per CPU second, bench/gemm_probe.ts): 1.4x; the Zen 5
 * the tiling was first tuned on measured mul + add 2-4% faster. An engine that lowers
 * relaxed_madd unfused rounds as mul + add does.
 */
export const gemmFuses = (target: WasmTarget, tiling: GemmTiling): boolean => target.relaxedSimd && tiling.fma !== false;

export interface ElementInfo {
  readonly bytes: number;
  readonly lanes: number;
}

export function elementInfo(type: GemmElement): ElementInfo {
  return { bytes: gemmElementBytes(type), lanes: vectorLanes(WASM_GEMM_TARGET, type) };
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
 * Emits pack(src, kLen, kcPad, count, dst) for panels `width` lines wide (B: nr columns).
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

/** Where the microkernel finds A: row r of the tile at pa + r*rowStride, stepping kStep bytes per k. */
export interface ALayout {
  readonly rowStride: number;
  readonly kStep: number;
}

/** A tile of C in registers, for an epilogue to finish before it is stored. */
export interface TileRegisters {
  readonly rows: number;
  readonly vectors: number;
  /** acc[r * vectors + v]: the v128 locals holding the tile; the epilogue leaves its results there. */
  readonly acc: readonly number[];
  /** Locals holding the tile's first row and column in the whole product. */
  readonly row: number;
  readonly col: number;
  /** The local holding kernel operand i. */
  readonly operand: (i: number) => number;
}

/** An elementwise epilogue a microkernel applies to its tile in registers (epilogue.ts). */
export interface TileEpilogue {
  /** The kernel operands it reads (the microkernel's last parameters). */
  readonly operands: number;
  readonly emit: (f: FunctionBuilder, tile: TileRegisters) => void;
}

/**
 * Emits micro(pa, pb, c, kLen, accumulate): the rows x nr tile of C at c (row stride
 * ldc bytes) becomes (accumulate ? C : 0) + sum over kLen steps of A times packed B,
 * with the accumulators in locals (registers). `fused` uses relaxed_madd.
 * Accumulation is in the element type, in order of k. With an epilogue,
 * micro(pa, pb, c, kLen, accumulate, row, col, operand0, ..., operandN-1) finishes the
 * tile (rows from `row`, columns from `col` of the product) in registers and stores
 * the results instead.
 */
export function emitMicrokernel(
  m: ModuleBuilder, type: GemmElement, rows: number, nrVectors: number, a: ALayout, ldc: number, fused: boolean, epilogue?: TileEpilogue,
): number {
  const { bytes: es, lanes } = elementInfo(type);
  const nr = nrVectors * lanes;
  const params = new Array<"i32">(epilogue === undefined ? 5 : epilogue.operands + 7).fill("i32");
  return m.addFunction(undefined, params, [], (f) => {
    const [pa, pb, c, kLen, accumulate] = [0, 1, 2, 3, 4];
    const acc: number[] = [];
    for (let i = 0; i < rows * nrVectors; i++) acc.push(f.local("v128"));
    const bv: number[] = [];
    for (let v = 0; v < nrVectors; v++) bv.push(f.local("v128"));
    const av = f.local("v128");
    const pbEnd = f.local("i32");
    f.localGet(pb).localGet(kLen).i32Const(nr * es).i32Mul().i32Add().localSet(pbEnd);
    f.loop();
    for (let v = 0; v < nrVectors; v++) f.localGet(pb).v128Load(v * 16).localSet(bv[v]!);
    for (let r = 0; r < rows; r++) {
      f.localGet(pa);
      if (type === "f32") f.v128Load32Splat(r * a.rowStride);
      else f.v128Load64Splat(r * a.rowStride);
      f.localSet(av);
      for (let v = 0; v < nrVectors; v++) {
        const x = acc[r * nrVectors + v]!;
        if (fused) {
          f.localGet(av).localGet(bv[v]!).localGet(x);
          if (type === "f32") f.f32x4RelaxedMadd();
          else f.f64x2RelaxedMadd();
        } else {
          f.localGet(x).localGet(av).localGet(bv[v]!);
          if (type === "f32") f.f32x4Mul().f32x4Add();
          else f.f64x2Mul().f64x2Add();
        }
        f.localSet(x);
      }
    }
    f.localGet(pa).i32Const(a.kStep).i32Add().localSet(pa);
    f.localGet(pb).i32Const(nr * es).i32Add().localTee(pb);
    f.localGet(pbEnd).i32Ne().brIf(0);
    f.end();
    f.localGet(accumulate).if();
    for (let r = 0; r < rows; r++) {
      for (let v = 0; v < nrVectors; v++) {
        const x = acc[r * nrVectors + v]!;
        f.localGet(x).localGet(c).v128Load(r * ldc + v * 16);
        if (type === "f32") f.f32x4Add();
        else f.f64x2Add();
        f.localSet(x);
      }
    }
    f.end();
    epilogue?.emit(f, { rows, vectors: nrVectors, acc, row: 5, col: 6, operand: (i) => 7 + i });
    for (let r = 0; r < rows; r++) {
      for (let v = 0; v < nrVectors; v++) f.localGet(c).localGet(acc[r * nrVectors + v]!).v128Store(r * ldc + v * 16);
    }
  });
}

/**
 * Emits packRows(src, kLen, count, dst) for B stored [k][n] (row stride rowBytes): the
 * full panels of nr columns (count / nr of them) with v128 copies, k-major per panel
 * (panel p at dst + p*kLen*nr*es). The caller packs a last partial panel with the
 * generic pack.
 *
 * It walks the panels a cache line of a row of B at a time (two f32 panels of 8, or f64
 * panels of 4), each down all kLen rows: the reads are whole lines at one stride, the
 * writes a few sequential streams. Row by row across all panels instead, every write
 * lands kLen*nr*es bytes (a multiple of 4 KiB when kLen is a multiple of 128) from the
 * last, all in the same L1 set, so each line of the packed block was evicted between
 * its two halves' writes; on the MLP's 784x512 B that pack took 18% of the GEMM.
 */
export function emitPackRowsB(m: ModuleBuilder, type: GemmElement, nrVectors: number, rowBytes: number): number {
  const { bytes: es, lanes } = elementInfo(type);
  const nr = nrVectors * lanes;
  const panelRowBytes = nr * es;
  // Panels whose row segments share one 64-byte line of B.
  const perLine = Math.max(1, Math.floor(64 / panelRowBytes));
  return m.addFunction(undefined, ["i32", "i32", "i32", "i32"], [], (f) => {
    const [src, kLen, count, dst] = [0, 1, 2, 3];
    const [kk, p, s, d, panels, panelBytes] = Array.from({ length: 6 }, () => f.local("i32"));
    f.localGet(count).i32Const(nr).i32DivU().localSet(panels);
    f.localGet(kLen).i32Const(panelRowBytes).i32Mul().localSet(panelBytes);
    // Copies `group` adjacent panels from panel p on, down all kLen rows.
    const copyPanels = (group: number): void => {
      f.localGet(src).localGet(p).i32Const(panelRowBytes).i32Mul().i32Add().localSet(s);
      f.localGet(dst).localGet(p).localGet(panelBytes).i32Mul().i32Add().localSet(d);
      forRange(f, kk, 0, { local: kLen }, 1, () => {
        for (let g = 0; g < group; g++) {
          for (let v = 0; v < nrVectors; v++) {
            f.localGet(d);
            if (g > 0) f.localGet(panelBytes).i32Const(g).i32Mul().i32Add();
            f.localGet(s).v128Load(g * panelRowBytes + v * 16).v128Store(v * 16);
          }
        }
        f.localGet(s).i32Const(rowBytes).i32Add().localSet(s);
        f.localGet(d).i32Const(panelRowBytes).i32Add().localSet(d);
      });
    };
    // Whole lines of panels, then the panels left over one at a time.
    f.i32Const(0).localSet(p);
    f.block().loop();
    f.localGet(p).i32Const(perLine).i32Add().localGet(panels).i32GtU().brIf(1);
    copyPanels(perLine);
    f.localGet(p).i32Const(perLine).i32Add().localSet(p);
    f.br(0).end().end();
    if (perLine > 1) {
      forRange(f, p, { local: p }, { local: panels }, 1, () => copyPanels(1));
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
