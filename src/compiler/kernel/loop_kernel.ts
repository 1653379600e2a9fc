// Loop fusions and epilogues as statements (kernel_ir.ts), from their schedules
// (loop_schedule.ts, epilogue_plan.ts). A row of elements [i, stop) of a loop over
// `inner` (rowStatements):
//
//   the per-row nodes;  p_n = load n's row (loads affine in the inner loop)
//   vector:  splats;  [if the outputs are aligned: the loops with streaming stores, else:]
//            while i + lanes · copies ≤ stop: the vector body, copies side by side; stores
//            (then one copy at a time, when unrolled)
//   while i < stop: the scalar body; stores
//
// A loop fusion's work unit u is (row, chunk) (loopKernel):
//
//   row = u / chunks;  outer variables = row in the mixed radix of the outer sizes
//   i = (u mod chunks) · block;  i1 = min(i + block, inner);  out_k = result k's row
//   the row's elements [i, i1)
//
// and after the units, a fence when streaming stores were used. An epilogue
// (epilogueKernel) runs the rows [rowBegin, rowEnd), columns [colBegin, colEnd) of its
// result.

import type { ElementType } from "../../types/element_type.js";
import type { KernelGraph } from "./graph.js";
import type { EpiloguePlan } from "./epilogue_plan.js";
import type { FusedKernelIR } from "./lower_fusion.js";
import { binary, constant, index, type IndexExpr, type InlineKernel, type Kernel, type RowLoad, type Stmt } from "./kernel_ir.js";
import { scheduleBody, scheduleLoop, type BodySchedule, type VectorTarget } from "./loop_schedule.js";
import { appendAll } from "../../types/arrays.js";

/** One output of a row: node `root` stored through `pointer` at the row's index. */
interface RowOutput {
  readonly root: number;
  readonly type: ElementType;
  readonly pointer: string;
  readonly streaming: boolean;
}

/**
 * What a row computes before its elements: the per-row nodes, then the pointer `p`id to
 * the row of each load affine in the inner loop, which its loads read through (but the
 * load `skip`, whose values the caller supplies).
 */
function rowSetup(g: KernelGraph, body: BodySchedule, skip?: number): { stmts: Stmt[]; rowLoads: Map<number, RowLoad> } {
  const stmts: Stmt[] = [{ s: "values", ids: body.invariant.filter((id) => g.node(id).op !== "var") }];
  const rowLoads = new Map<number, RowLoad>();
  for (const [id, aff] of body.affine) {
    const n = g.node(id);
    if (n.op !== "load" || id === skip) continue;
    const pointer = `p${id}`;
    rowLoads.set(id, { pointer, stride: aff.stride });
    stmts.push({ s: "pointer", name: pointer, buffer: n.attr as number, type: n.type as ElementType, offset: { op: "node", id: aff.base }, output: false });
  }
  return { stmts, rowLoads };
}

/** The statements of one row (above) at index `i` up to `stop`, and the loads they read through row pointers. */
function rowStatements(
  g: KernelGraph, body: BodySchedule, innerVar: number, loop: { readonly i: string; readonly stop: string }, outputs: readonly RowOutput[], alignBytes: number,
): { stmts: Stmt[]; rowLoads: Map<number, RowLoad> } {
  const { stmts, rowLoads } = rowSetup(g, body);
  const stores = (streaming: boolean): Stmt[] => outputs.map((o) => ({ s: "store", pointer: o.pointer, node: o.root, type: o.type, streaming }));
  if (body.vectorBody !== undefined) {
    const vectorBody = body.vectorBody;
    // Unrolled copies side by side first, then one vector at a time up to the tail.
    const loops = (streaming: boolean): Stmt[] => (body.unroll > 1 ? [body.unroll, 1] : [1]).map((copies) => ({
      s: "loop", index: loop.i, stop: loop.stop, lanes: body.lanes, copies, body: [{ s: "vectorValues", ids: vectorBody }, ...stores(streaming)],
    }));
    const streaming = outputs.some((o) => o.streaming);
    stmts.push({
      s: "vector",
      body: [
        { s: "splat", ids: body.splats },
        // Streaming stores need aligned addresses: every output's first vector on one (then all are).
        ...(streaming
          ? [{ s: "ifAligned", pointers: outputs.map((o) => o.pointer), index: loop.i, bytes: alignBytes, then: loops(true), otherwise: loops(false) } as const]
          : loops(false)),
      ],
    });
  }
  stmts.push({
    s: "loop", index: loop.i, stop: loop.stop, lanes: 1, copies: 1,
    body: [{ s: "bind", node: innerVar, name: loop.i }, { s: "values", ids: body.scalarBody }, ...stores(false)],
  });
  return { stmts, rowLoads };
}

/** A loop fusion's kernel: buffers (operands, results), then the range of work units [begin, end). */
export function loopKernel(ir: FusedKernelIR, target: VectorTarget): { kernel: Kernel; schedule: ReturnType<typeof scheduleLoop> } {
  const sched = scheduleLoop(ir, target);
  const { graph: g, outer, chunks, block, inner, body } = sched;
  const nIn = ir.inputs.length;
  const unit: Stmt[] = [];
  const def = (name: string, value: IndexExpr, mutable = false): void => { unit.push({ s: "index", name, value, mutable }); };

  def("row", chunks === 1 ? index("u") : binary("div", index("u"), constant(chunks)));
  let rest = index("row");
  for (let d = outer.length - 1; d >= 0; d--) {
    def(`o${d}`, d === 0 ? rest : binary("rem", rest, constant(outer[d]!)));
    if (d > 0) {
      def(`r${d}`, binary("div", rest, constant(outer[d]!)));
      rest = index(`r${d}`);
    }
    unit.push({ s: "bind", node: sched.outerVars[d]!, name: `o${d}` });
  }
  def("i", chunks === 1 ? constant(0) : binary("mul", binary("rem", index("u"), constant(chunks)), constant(block)), true);
  def("i1", binary("min", binary("add", index("i"), constant(block)), constant(inner)));
  const outputs = sched.outputs.map((o, k) => ({ ...o, pointer: `out${k}` }));
  for (const [k, o] of outputs.entries()) {
    unit.push({ s: "pointer", name: o.pointer, buffer: nIn + k, type: o.type, offset: binary("mul", index("row"), constant(inner)), output: true });
  }
  const row = rowStatements(g, body, sched.innerVar, { i: "i", stop: "i1" }, outputs, target.vectorBytes);
  appendAll(unit, row.stmts);
  const kernel: Kernel = {
    graph: g,
    buffers: nIn + outputs.length,
    params: ["begin", "end"],
    units: { index: "u", from: "begin", to: "end" },
    declared: ["u", "row", "i", "i1", ...outputs.map((o) => o.pointer)],
    unit,
    inner: "i",
    rowLoads: row.rowLoads,
    affine: body.affine,
    lanes: body.lanes,
    fence: outputs.some((o) => o.streaming),
  };
  return { kernel, schedule: sched };
}

/**
 * An epilogue's kernel: buffers (the fusion's operands, the product, the result c), then
 * rowBegin, rowEnd, colBegin, colEnd; its rows are the units. `resultBuffer`: the buffer
 * c is; the product's (operandCount) when the result is written where the product is
 * read, which saves a C caller from building a buffer list per call.
 */
export function epilogueKernel(e: EpiloguePlan, target: VectorTarget, resultBuffer = e.operandCount + 1): Kernel {
  const g = e.graph;
  const body = scheduleBody(g, [e.root], e.colVar, target);
  const row = rowStatements(g, body, e.colVar, { i: "j", stop: "colEnd" }, [{ root: e.root, type: e.type, pointer: "c", streaming: false }], target.vectorBytes);
  return {
    graph: g,
    buffers: e.operandCount + 2,
    params: ["rowBegin", "rowEnd", "colBegin", "colEnd"],
    units: { index: "row", from: "rowBegin", to: "rowEnd" },
    declared: ["row", "j", "c"],
    unit: [
      { s: "bind", node: e.rowVar, name: "row" },
      { s: "index", name: "j", value: index("colBegin"), mutable: true },
      { s: "pointer", name: "c", buffer: resultBuffer, type: e.type, offset: binary("mul", index("row"), constant(e.cols)), output: true },
      ...row.stmts,
    ],
    inner: "j",
    rowLoads: row.rowLoads,
    affine: body.affine,
    lanes: body.lanes,
    fence: false,
  };
}

/**
 * An epilogue over a tile of its product that a GEMM microkernel holds in registers:
 * `rows` rows from index parameter tileRow, each of `vectors` vectors of the body's lanes
 * from parameter tileCol; register r · vectors + v holds vector v of row r, and takes its
 * result. Each row is a scope: its per-row nodes, the row pointers of the other loads and
 * its splats, then per vector the product's leaf bound to the register and the vector
 * body at that column. Its buffers are the fusion's operands (the product is read from
 * the registers only); undefined where the body has no vector form of `lanes` lanes.
 */
export function tileEpilogueKernel(e: EpiloguePlan, target: VectorTarget, rows: number, vectors: number, lanes: number): InlineKernel | undefined {
  const g = e.graph;
  const body = scheduleBody(g, [e.root], e.colVar, target);
  if (body.vectorBody === undefined || body.lanes !== lanes) return undefined;
  const product = body.vectorBody.find((id) => g.node(id).op === "load" && g.node(id).attr === e.operandCount);
  const vectorIds = body.vectorBody.filter((id) => id !== product);
  const setup = rowSetup(g, body, product);
  const tileRows = Array.from({ length: rows }, (_, r): Stmt => {
    const columns = Array.from({ length: vectors }, (_, v): Stmt[] => [
      { s: "index", name: "col", value: binary("add", index("tileCol"), constant(v * lanes)), mutable: false },
      {
        s: "at", index: "col", lanes, body: [
          { s: "bind", node: e.colVar, name: "col" },
          ...(product === undefined ? [] : [{ s: "fromRegister", node: product, register: r * vectors + v } as const]),
          { s: "vectorValues", ids: vectorIds },
          { s: "toRegister", register: r * vectors + v, node: e.root },
        ],
      },
    ]);
    return {
      s: "scope", body: [
        { s: "index", name: "row", value: binary("add", index("tileRow"), constant(r)), mutable: false },
        { s: "bind", node: e.rowVar, name: "row" },
        ...setup.stmts,
        { s: "splat", ids: body.splats },
        ...columns.flat(),
      ],
    };
  });
  return {
    graph: g,
    buffers: e.operandCount,
    params: ["tileRow", "tileCol"],
    declared: ["row", "col"],
    // One vector section, whose empty splat comes before every row's.
    unit: [{ s: "vector", body: [{ s: "splat", ids: [] }, ...tileRows] }],
    inner: "col",
    rowLoads: setup.rowLoads,
    affine: body.affine,
    lanes,
    fence: false,
  };
}
