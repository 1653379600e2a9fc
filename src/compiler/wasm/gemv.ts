// Products with a few rows of A (m <= GEMV_MAX_ROWS, B stored [k][n]): each row of C
// gets c += a[p] * B[p][..] row after row of B ("axpy" order), several rows of B per
// sweep over a chunk of the m rows of C that stays in L1: the schedule's sweepRowsWhole
// where a call's columns are whole rows of B (for one row of A, one row a sweep, a
// 64-byte line of it a step: B streams from memory as one run), its sweepRows where they
// are part of each row. B is read once, in order, so the kernel runs at memory bandwidth; the
// packed GEMM would copy B first (its panels would be used only once) and walk it
// column panel by column panel (a TLB miss per row when rows are 4 KiB or longer).
//
// Accumulation: in the element type, for each element of c sequentially over k.
// Work split: parallelExtent counts (batch, chunk of columns) pairs (the schedule's,
// kernel/gemm_plan.ts). A call sweeps consecutive chunks of one batch together, up to
// MERGED_C_BYTES of C: B is then read in runs as long as the call's share of each row
// (on one thread, the whole row where it fits), not a chunk's (64-256 columns), which
// the hardware prefetch followed poorly where B comes from memory.
// With an epilogue (output fusions), each merged block of C (m rows, its columns) is
// finished with it once the sweeps are done (the block was just written: it is in cache).
//
// One or two rows of A against a B that may be packed once (a constant or a weight) take
// emitGemvPanelKernel instead: B stored as panels of a 64-byte line by all of k, each
// panel's sums kept in registers over k, so that no row of C is loaded and stored per
// row of B (kernel/gemm_plan.ts, streamedPanelsOf).
//
// A few rows of A against B stored [n][k] (a linear layer's weight, attention's keys in
// q·Kᵀ) take emitRowDotKernel instead: each element of C is the dot product of two
// contiguous rows, a group of rows of B at a time, so B is read once, in order.

import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import { ROW_DOT_COLUMNS, type GemmSchedule } from "../kernel/gemm_plan.js";
import { elementInfo } from "./gemm_microkernel.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import { forRange, setMinU } from "./loops.js";
import type { KernelEpilogue } from "./gemm_rows.js";

/** The element type's vector multiply-add (acc, a, b on the stack), scalar load and scalar multiply-add. */
function elementOps(f32: boolean): {
  vMulAdd: (f: FunctionBuilder) => void; sLoad: (f: FunctionBuilder, offset: number) => void; sMulAdd: (f: FunctionBuilder) => void;
} {
  return {
    vMulAdd: (f) => (f32 ? f.f32x4Mul().f32x4Add() : f.f64x2Mul().f64x2Add()),
    sLoad: (f, offset) => (f32 ? f.f32Load(offset) : f.f64Load(offset)),
    sMulAdd: (f) => (f32 ? f.f32Mul().f32Add() : f.f64Mul().f64Add()),
  };
}

/** The kernels' WasmKernel: no scratch, the schedule's units of work, any split of them. */
function finishKernel(name: string, module: ModuleBuilder, operandCount: number, schedule: GemmSchedule): WasmKernel {
  return {
    name, bytes: module.finish(), operandCount, resultCount: 1, scratchBytes: 0,
    parallelExtent: schedule.parallelExtent, costPerUnit: schedule.costPerUnit,
  };
}

/** Bytes of each row of B a thread's part of a split one-row sweep reads at least (gemvMinPartUnits). */
const SPLIT_ROW_BYTES = 4096;

/**
 * Fewest units (chunks of columns) a thread's part of a split emitGemvKernel call may have
 * (the pool's minPartUnits; 1: any split). For one row of A, enough chunks for a 4 KiB page
 * of each row of B (SPLIT_ROW_BYTES), since a call over a shorter part of each row sweeps 8
 * streams of short runs, slower per byte than one thread's whole rows as one stream:
 * measured at two threads against one (2026-12-01, Zen 5 VM, B cold, the pool's threads
 * awake), a part of 1.5 KiB a row made GPT-2's 768 x 768 and 3072 x 768 products 20-30%
 * slower than no split, parts of 4.5 and 6 KiB (768 x 2304, 768 x 3072) 15-20% faster.
 * Several rows of A sweep several rows of B a step whatever the split: 1. The C kernels
 * sweep 8 streams whole or not (their split of 3072 x 768 pays, 1.3x), and the kernel over
 * B in panels (emitGemvPanelKernel) splits into whole panels, one run each: neither limits.
 */
export function gemvMinPartUnits(schedule: GemmSchedule): number {
  return schedule.spec.m === 1 ? Math.ceil(SPLIT_ROW_BYTES / (schedule.chunk * elementInfo(schedule.spec.elementType).bytes)) : 1;
}

/** Calls the epilogue on rows [bi·m, bi·m + m) and columns [c0, c1) of C (its operands the kernel's first nOps parameters; `tmp` a scratch i32 local). */
function callEpilogue(f: FunctionBuilder, epi: number, nOps: number, c: number, m: number, bi: number, c0: number, c1: number, tmp: number): void {
  for (let x = 0; x < nOps; x++) f.localGet(x);
  f.localGet(c).localGet(c);
  f.localGet(bi).i32Const(m).i32Mul().localTee(tmp).localGet(tmp).i32Const(m).i32Add();
  f.localGet(c0).localGet(c1).call(epi);
}

/** The most bytes of C one sweep over B's rows accumulates into (it stays in L1 beside the rows of B streaming by). */
const MERGED_C_BYTES = 16 * 1024;

/**
 * Column vectors one step of a sweep of a single row of B covers: a 64-byte line of B a
 * step, each vector its own accumulator. With several rows a sweep, one vector a step
 * (their broadcasts already fill the registers).
 */
const LINE_VECTORS = 4;
const stepVectorsOf = (rows: number): number => (rows === 1 ? LINE_VECTORS : 1);

/** run(a, b, c, begin, end); with an epilogue, run(operand0, ..., operandN-1, c, begin, end), a and b among the operands. */
export function emitGemvKernel(schedule: GemmSchedule, target: WasmTarget, name: string, epilogue?: KernelEpilogue): WasmKernel {
  const { spec, chunk, nChunks } = schedule;
  const type = spec.elementType;
  const { bytes: es, lanes } = elementInfo(type);
  const { m, n, k } = spec;
  // Rows of B a sweep: sweepRowsWhole where a call's columns are whole rows of B (B then
  // one contiguous run), sweepRows where they are part of each row. Live per step: m
  // splats a row of the sweep, its step's accumulators (and the B vector being multiplied).
  const { sweepRows, sweepRowsWhole } = schedule;
  const rowsPerSweep = Math.max(sweepRows, sweepRowsWhole);
  const maxStepVectors = Math.max(stepVectorsOf(sweepRows), stepVectorsOf(sweepRowsWhole));
  // A(i, p) at a + i*aRow + p*aK (bytes).
  const aRow = schedule.aRow * es;
  const aK = schedule.aK * es;
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const f32 = type === "f32";
  const splat = (f: FunctionBuilder, offset: number): void => {
    if (f32) f.v128Load32Splat(offset);
    else f.v128Load64Splat(offset);
  };
  const { vMulAdd, sLoad, sMulAdd } = elementOps(f32);

  module.addFunction("run", new Array<"i32">(nOps + 3).fill("i32"), [], (f) => {
    const [a, b] = [epilogue?.lhs ?? 0, epilogue?.rhs ?? 1];
    const [c, begin, end] = [nOps, nOps + 1, nOps + 2];
    const [u, bi, c0, c1, vEnd, stepEnd, pa, pb, pc, kb, j, q, rest, merged] = Array.from({ length: 14 }, () => f.local("i32"));
    const s = Array.from({ length: m * rowsPerSweep }, () => f.local("v128"));
    const acc = Array.from({ length: maxStepVectors }, () => f.local("v128"));
    // Columns [j, j + vectors·lanes) of each row of C plus `rows` rows of B from q; then q and j past them.
    const columnStep = (rows: number, vectors: number): void => {
      for (let i = 0; i < m; i++) {
        for (let v = 0; v < vectors; v++) f.localGet(j).v128Load(i * n * es + 16 * v).localSet(acc[v]!);
        // Each element's products are added in order of k, as the vector-at-a-time form does.
        for (let r = 0; r < rows; r++) {
          for (let v = 0; v < vectors; v++) {
            f.localGet(acc[v]!).localGet(s[i * rowsPerSweep + r]!).localGet(q).v128Load(r * n * es + 16 * v);
            vMulAdd(f);
            f.localSet(acc[v]!);
          }
        }
        for (let v = 0; v < vectors; v++) f.localGet(j).localGet(acc[v]!).v128Store(i * n * es + 16 * v);
      }
      f.localGet(q).i32Const(16 * vectors).i32Add().localSet(q);
      f.localGet(j).i32Const(16 * vectors).i32Add().localSet(j);
    };
    // One sweep over columns [c0, c1) adding `rows` rows of B from row kb, stepVectors at a time (stepEnd: where those steps end).
    const sweep = (rows: number, stepVectors: number): void => {
      for (let i = 0; i < m; i++) {
        for (let r = 0; r < rows; r++) {
          f.localGet(pa).localGet(kb).i32Const(aK).i32Mul().i32Add();
          splat(f, i * aRow + r * aK);
          f.localSet(s[i * rowsPerSweep + r]!);
        }
      }
      // pb = b(batch) + (kb*n + c0)*es, pc = c(batch) + c0*es
      f.localGet(pb).localGet(kb).i32Const(n * es).i32Mul().i32Add().localGet(c0).i32Const(es).i32Mul().i32Add().localSet(q);
      f.localGet(pc).localGet(c0).i32Const(es).i32Mul().i32Add().localSet(j);
      if (stepVectors > 1) forRange(f, rest, { local: c0 }, { local: stepEnd }, stepVectors * lanes, () => columnStep(rows, stepVectors));
      forRange(f, rest, { local: stepVectors > 1 ? stepEnd : c0 }, { local: vEnd }, lanes, () => columnStep(rows, 1));
      // Columns past the last whole vector, one by one.
      forRange(f, rest, { local: vEnd }, { local: c1 }, 1, () => {
        for (let i = 0; i < m; i++) {
          f.localGet(j);
          f.localGet(j);
          sLoad(f, i * n * es);
          for (let r = 0; r < rows; r++) {
            f.localGet(s[i * rowsPerSweep + r]!);
            if (f32) f.f32x4ExtractLane(0);
            else f.f64x2ExtractLane(0);
            f.localGet(q);
            sLoad(f, r * n * es);
            sMulAdd(f);
          }
          if (f32) f.f32Store(i * n * es);
          else f.f64Store(i * n * es);
        }
        f.localGet(q).i32Const(es).i32Add().localSet(q);
        f.localGet(j).i32Const(es).i32Add().localSet(j);
      });
    };
    // All of k in sweeps of `rows` rows (the last sweep shorter where rows does not divide k).
    const sweeps = (rows: number): void => {
      const stepVectors = stepVectorsOf(rows);
      const stepColumns = stepVectors * lanes;
      f.localGet(c1).localGet(c0).i32Sub().i32Const(stepColumns).i32DivU().i32Const(stepColumns).i32Mul().localGet(c0).i32Add().localSet(stepEnd);
      const full = k - (k % rows);
      forRange(f, kb, 0, full, rows, () => sweep(rows, stepVectors));
      if (k % rows !== 0) {
        f.i32Const(full).localSet(kb);
        sweep(k % rows, stepVectors);
      }
    };
    const mergeable = Math.max(1, Math.floor(MERGED_C_BYTES / (m * chunk * es)));
    forRange(f, u, { local: begin }, { local: end }, 1, () => {
      f.localGet(u).i32Const(nChunks).i32DivU().localSet(bi);
      // merged = min(end - u, chunks left in this batch, mergeable); columns [c0, c1) are theirs.
      f.localGet(u).i32Const(nChunks).i32RemU().localSet(c0);
      f.i32Const(nChunks).localGet(c0).i32Sub().localSet(rest);
      f.localGet(end).localGet(u).i32Sub().localSet(merged);
      setMinU(f, merged, { local: merged }, { local: rest });
      setMinU(f, merged, { local: merged }, mergeable);
      f.localGet(c0).i32Const(chunk).i32Mul().localSet(c0);
      f.i32Const(n).localGet(c0).i32Sub().localSet(rest);
      f.localGet(merged).i32Const(chunk).i32Mul().localSet(c1);
      setMinU(f, c1, { local: c1 }, { local: rest });
      f.localGet(c1).localGet(c0).i32Add().localSet(c1);
      f.localGet(c1).localGet(c0).i32Sub().i32Const(lanes).i32DivU().i32Const(lanes).i32Mul().localGet(c0).i32Add().localSet(vEnd);
      f.localGet(a).localGet(bi).i32Const(m * k * es).i32Mul().i32Add().localSet(pa);
      f.localGet(b).localGet(bi).i32Const(k * n * es).i32Mul().i32Add().localSet(pb);
      f.localGet(c).localGet(bi).i32Const(m * n * es).i32Mul().i32Add().localSet(pc);
      // C[i][c0, c1) = 0, then the sweeps.
      for (let i = 0; i < m; i++) {
        f.localGet(pc).localGet(c0).i32Const(es).i32Mul().i32Add().i32Const(i * n * es).i32Add();
        f.i32Const(0).localGet(c1).localGet(c0).i32Sub().i32Const(es).i32Mul().memoryFill();
      }
      if (sweepRowsWhole === sweepRows) sweeps(sweepRows);
      else {
        f.localGet(c1).localGet(c0).i32Sub().i32Const(n).i32Eq().if();
        sweeps(sweepRowsWhole);
        f.else();
        sweeps(sweepRows);
        f.end();
      }
      if (epi !== undefined) callEpilogue(f, epi, nOps, c, m, bi, c0, c1, rest);
      // Past the merged units (the loop adds the last one).
      f.localGet(u).localGet(merged).i32Add().i32Const(1).i32Sub().localSet(u);
    });
  });
  return { ...finishKernel(name, module, nOps, schedule), minPartUnits: gemvMinPartUnits(schedule) };
}

/**
 * Dot products of rows (a "rowDots" schedule: m <= GEMV_MAX_ROWS rows of A, each
 * contiguous in k, and B stored [n][k]): C[i][j] = A[i]·B[j]. Each unit is a chunk of
 * columns of one batch (a multiple of ROW_DOT_COLUMNS); a group of rows of B go together,
 * each of their vectors multiplied into the m rows of A, so every vector of B is loaded
 * once. Accumulation: one partial sum a lane, in order of k, the lanes added at the end,
 * then the steps of k past the last whole vector. run(a, b, c, begin, end); with an epilogue,
 * run(operand0, ..., operandN-1, c, begin, end), each unit's columns finished with it.
 */
export function emitRowDotKernel(schedule: GemmSchedule, target: WasmTarget, name: string, epilogue?: KernelEpilogue): WasmKernel {
  const { spec, chunk, nChunks } = schedule;
  const { m, n, k } = spec;
  const f32 = spec.elementType === "f32";
  const { bytes: es, lanes } = elementInfo(spec.elementType);
  const aRow = schedule.aRow * es;
  const bRow = k * es;
  const kVectors = k - (k % lanes);
  // Rows of B together: m·group accumulators, group vectors of B and one of A stay within
  // the 16 vector registers engines give WebAssembly on x86-64.
  const group = m <= 2 ? ROW_DOT_COLUMNS : ROW_DOT_COLUMNS / 2;
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const { vMulAdd, sLoad, sMulAdd } = elementOps(f32);

  module.addFunction("run", new Array<"i32">(nOps + 3).fill("i32"), [], (f) => {
    const [a, b] = [epilogue?.lhs ?? 0, epilogue?.rhs ?? 1];
    const [c, begin, end] = [nOps, nOps + 1, nOps + 2];
    const [u, bi, c0, c1, pa, pb, pc, j, p, groupEnd, rowsOfB, at] = Array.from({ length: 12 }, () => f.local("i32"));
    const acc = Array.from({ length: m * group }, () => f.local("v128"));
    const bVec = Array.from({ length: group }, () => f.local("v128"));
    const sum = f.local(f32 ? "f32" : "f64");
    // C[i][j .. j+cols) of this batch, from rows j .. j+cols of B.
    const columns = (cols: number): void => {
      for (const x of acc.slice(0, m * cols)) {
        if (f32) f.f32Const(0).f32x4Splat();
        else f.f64Const(0).f64x2Splat();
        f.localSet(x);
      }
      f.localGet(pb).localGet(j).i32Const(bRow).i32Mul().i32Add().localSet(rowsOfB);
      // p: byte offset along k, shared by the rows of A and of B.
      forRange(f, p, 0, kVectors * es, 16, () => {
        f.localGet(rowsOfB).localGet(p).i32Add().localSet(at);
        for (let t = 0; t < cols; t++) f.localGet(at).v128Load(t * bRow).localSet(bVec[t]!);
        f.localGet(pa).localGet(p).i32Add().localSet(at);
        for (let i = 0; i < m; i++) {
          for (let t = 0; t < cols; t++) {
            f.localGet(acc[i * cols + t]!).localGet(at).v128Load(i * aRow).localGet(bVec[t]!);
            vMulAdd(f);
            f.localSet(acc[i * cols + t]!);
          }
        }
      });
      for (let i = 0; i < m; i++) {
        for (let t = 0; t < cols; t++) {
          for (let lane = 0; lane < lanes; lane++) {
            f.localGet(acc[i * cols + t]!);
            if (f32) f.f32x4ExtractLane(lane);
            else f.f64x2ExtractLane(lane);
            if (lane > 0) {
              if (f32) f.f32Add();
              else f.f64Add();
            }
          }
          f.localSet(sum);
          for (let q = kVectors; q < k; q++) {
            f.localGet(sum).localGet(pa);
            sLoad(f, i * aRow + q * es);
            f.localGet(rowsOfB);
            sLoad(f, t * bRow + q * es);
            sMulAdd(f);
            f.localSet(sum);
          }
          f.localGet(pc).localGet(j).i32Const(es).i32Mul().i32Add().localGet(sum);
          if (f32) f.f32Store(i * n * es + t * es);
          else f.f64Store(i * n * es + t * es);
        }
      }
    };
    forRange(f, u, { local: begin }, { local: end }, 1, () => {
      f.localGet(u).i32Const(nChunks).i32DivU().localSet(bi);
      f.localGet(u).i32Const(nChunks).i32RemU().i32Const(chunk).i32Mul().localTee(c0).i32Const(chunk).i32Add().localSet(c1);
      setMinU(f, c1, { local: c1 }, n);
      f.localGet(a).localGet(bi).i32Const(m * k * es).i32Mul().i32Add().localSet(pa);
      f.localGet(b).localGet(bi).i32Const(n * k * es).i32Mul().i32Add().localSet(pb);
      f.localGet(c).localGet(bi).i32Const(m * n * es).i32Mul().i32Add().localSet(pc);
      // Whole groups of columns, then the rest one by one.
      f.localGet(c1).localGet(c0).i32Sub().i32Const(group).i32DivU().i32Const(group).i32Mul().localGet(c0).i32Add().localSet(groupEnd);
      forRange(f, j, { local: c0 }, { local: groupEnd }, group, () => columns(group));
      forRange(f, j, { local: groupEnd }, { local: c1 }, 1, () => columns(1));
      if (epi !== undefined) callEpilogue(f, epi, nOps, c, m, bi, c0, c1, p);
    });
  });
  return finishKernel(name, module, nOps, schedule);
}

/** Steps of k one iteration of the panel kernel's loop takes (two: the loop's own instructions paid once per two lines of B). */
const PANEL_K_UNROLL = 2;

/**
 * A few rows of A (m <= 2) against B packed once into panels (streamedPanelsOf: each
 * panel k x panelColumns, k-major, the panels in order of columns): each panel's m x
 * panelColumns sums stay in registers over all of k, a 64-byte line of B a step, so B
 * is read as one run and C is written once. Each element of C adds its products in order
 * of k (multiply, then add), from zero, as the interpreter does. Units as emitGemvKernel's
 * (chunks of columns, each a whole number of panels): consecutive units read consecutive
 * panels. run(a, b, c, begin, end); with an epilogue, run(operand0, ..., operandN-1, c,
 * begin, end), each unit's columns finished with it.
 */
export function emitGemvPanelKernel(schedule: GemmSchedule, target: WasmTarget, name: string, epilogue?: KernelEpilogue): WasmKernel {
  const { spec, chunk, nChunks, panelColumns } = schedule;
  const { m, n, k } = spec;
  const f32 = spec.elementType === "f32";
  const { bytes: es, lanes } = elementInfo(spec.elementType);
  const vectors = panelColumns / lanes;
  if (!Number.isInteger(vectors) || vectors < 1 || chunk % panelColumns !== 0) throw new Error(`emitGemvPanelKernel: panels of ${panelColumns} columns, chunks of ${chunk}`);
  const aRow = schedule.aRow * es;
  const aK = schedule.aK * es;
  const paddedN = Math.ceil(n / panelColumns) * panelColumns;
  // The last panel's columns past n (zeros in the packed B) are not stored.
  const lastPanel = n - (n % panelColumns);
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const { vMulAdd } = elementOps(f32);

  module.addFunction("run", new Array<"i32">(nOps + 3).fill("i32"), [], (f) => {
    const [a, b] = [epilogue?.lhs ?? 0, epilogue?.rhs ?? 1];
    const [c, begin, end] = [nOps, nOps + 1, nOps + 2];
    const [u, bi, c0, c1, pa, q, j, p, kEnd, tmp] = Array.from({ length: 10 }, () => f.local("i32"));
    const acc = Array.from({ length: m * vectors }, () => f.local("v128"));
    const splats = Array.from({ length: m }, () => f.local("v128"));
    const bVec = f.local("v128");
    // One step of k at byte offset `step` of A's column p and `step`·panelColumns of the panel at q.
    const kStep = (step: number): void => {
      for (let i = 0; i < m; i++) {
        f.localGet(p);
        if (f32) f.v128Load32Splat(i * aRow + step * aK);
        else f.v128Load64Splat(i * aRow + step * aK);
        f.localSet(splats[i]!);
      }
      for (let v = 0; v < vectors; v++) {
        f.localGet(q).v128Load(step * panelColumns * es + 16 * v).localSet(bVec);
        for (let i = 0; i < m; i++) {
          f.localGet(acc[i * vectors + v]!).localGet(splats[i]!).localGet(bVec);
          vMulAdd(f);
          f.localSet(acc[i * vectors + v]!);
        }
      }
    };
    // The panel's sums into C from column j (`columns` of them: a whole panel, or the last one's columns before n).
    const store = (columns: number): void => {
      for (let i = 0; i < m; i++) {
        for (let v = 0; v < vectors; v++) {
          const at = i * n * es + 16 * v;
          const left = columns - v * lanes;
          if (left >= lanes) f.localGet(j).localGet(acc[i * vectors + v]!).v128Store(at);
          for (let lane = 0; lane < Math.min(left, lanes) && left < lanes; lane++) {
            f.localGet(j).localGet(acc[i * vectors + v]!);
            if (f32) f.f32x4ExtractLane(lane).f32Store(at + lane * es);
            else f.f64x2ExtractLane(lane).f64Store(at + lane * es);
          }
        }
      }
    };
    forRange(f, u, { local: begin }, { local: end }, 1, () => {
      f.localGet(u).i32Const(nChunks).i32DivU().localSet(bi);
      f.localGet(u).i32Const(nChunks).i32RemU().i32Const(chunk).i32Mul().localTee(c0).i32Const(chunk).i32Add().localSet(c1);
      setMinU(f, c1, { local: c1 }, n);
      // The unit's first panel: q = b + (bi·k·paddedN + c0·k)·es; C's row 0 at column c0: j.
      f.localGet(b).localGet(bi).i32Const(k * paddedN * es).i32Mul().i32Add().localGet(c0).i32Const(k * es).i32Mul().i32Add().localSet(q);
      f.localGet(c).localGet(bi).i32Const(m * n * es).i32Mul().i32Add().localGet(c0).i32Const(es).i32Mul().i32Add().localSet(j);
      f.localGet(a).localGet(bi).i32Const(m * k * es).i32Mul().i32Add().localSet(pa);
      f.localGet(pa).i32Const(((k - (k % PANEL_K_UNROLL)) * aK)).i32Add().localSet(kEnd);
      // tmp: the panel's first column.
      forRange(f, tmp, { local: c0 }, { local: c1 }, panelColumns, () => {
        for (const x of acc) {
          if (f32) f.f32Const(0).f32x4Splat();
          else f.f64Const(0).f64x2Splat();
          f.localSet(x);
        }
        forRange(f, p, { local: pa }, { local: kEnd }, PANEL_K_UNROLL * aK, () => {
          for (let step = 0; step < PANEL_K_UNROLL; step++) kStep(step);
          f.localGet(q).i32Const(PANEL_K_UNROLL * panelColumns * es).i32Add().localSet(q);
        });
        for (let step = 0; step < k % PANEL_K_UNROLL; step++) {
          f.localGet(kEnd).localSet(p);
          kStep(step);
          f.localGet(q).i32Const(panelColumns * es).i32Add().localSet(q);
        }
        if (lastPanel === n) store(panelColumns);
        else {
          f.localGet(tmp).i32Const(lastPanel).i32Eq().if();
          store(n - lastPanel);
          f.else();
          store(panelColumns);
          f.end();
        }
        f.localGet(j).i32Const(panelColumns * es).i32Add().localSet(j);
      });
      if (epi !== undefined) callEpilogue(f, epi, nOps, c, m, bi, c0, c1, tmp);
    });
  });
  // Any split (no gemvMinPartUnits): a thread's part is whole panels, one run of B. Measured
  // 2026-12-01 (gemv_probe cold constant, two threads, load 1.5-3): 768 x 768 64-79 us split
  // against 106-111 whole, 3072 x 768 227-233 against 377-500.
  return finishKernel(name, module, nOps, schedule);
}
