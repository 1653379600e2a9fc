// Compiled gather and scatter against the interpreter, bit for bit, on random general
// dimension numbers (batching dims, index vector dim anywhere, collapsed / inserted
// dims) with start indices that run out of bounds (clamped by gather, skipped by scatter).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  XlaBuilder, add, arrayShape, gather, max, parameter, scalarShape, scatter, type ElementType, type Literal, type XlaOp,
} from "../../../src/index.js";
import { Literal as L } from "../../../src/types/literal.js";
import { binaryComputation, checkCompiled, checkRoutine, randomLiteral, rng } from "./harness.js";
import { elementCount } from "../../../src/types/shape.js";

interface IndexingCase {
  opDims: number[];
  idxDims: number[];
  ivd: number;
  startIndexMap: number[];
  collapsed: number[];
  operandBatching: number[];
  indicesBatching: number[];
  offsetDims: number[];
  sliceSizes: number[];
}

function shuffle<T>(next: () => number, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

function randomCase(next: () => number): IndexingCase {
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  const r = int(1, 4);
  const opDims = Array.from({ length: r }, () => int(1, 6));
  const dims = shuffle(next, opDims.map((_, d) => d));
  const operandBatching = r > 1 && next() < 0.3 ? [dims.pop()!] : [];
  const free = [...dims];
  const m = int(1, free.length);
  const startIndexMap = shuffle(next, [...free]).slice(0, m);
  const collapsed = free.filter(() => next() < 0.4).sort((a, b) => a - b);
  const sliceSizes = opDims.map((d, i) => (operandBatching.includes(i) || collapsed.includes(i) ? 1 : int(0, d)));
  // Indices: batch dims (some pairing with the operand batching dims) and the index vector dim.
  const nb = int(0, 2) + operandBatching.length;
  const batchSizes = Array.from({ length: nb }, () => int(1, 4));
  const pairing = shuffle(next, batchSizes.map((_, i) => i)).slice(0, operandBatching.length);
  pairing.forEach((bi, i) => { batchSizes[bi] = opDims[operandBatching[i]!]!; });
  const ivd = int(0, nb);
  const idxDims = [...batchSizes.slice(0, ivd), m, ...batchSizes.slice(ivd)];
  const indicesBatching = pairing.map((bi) => (bi < ivd ? bi : bi + 1));
  const offsetCount = r - collapsed.length - operandBatching.length;
  const outRank = nb + offsetCount;
  const offsetDims = shuffle(next, Array.from({ length: outRank }, (_, i) => i)).slice(0, offsetCount).sort((a, b) => a - b);
  return { opDims, idxDims, ivd, startIndexMap, collapsed, operandBatching, indicesBatching, offsetDims, sliceSizes };
}

function randomIndices(next: () => number, t: ElementType, c: IndexingCase): Literal {
  const n = elementCount(c.idxDims);
  const hi = Math.max(...c.opDims) + 3;
  const values = Array.from({ length: n }, () => {
    const v = Math.floor(next() * (hi + 4)) - 3;
    return t === "s64" ? BigInt(v) : v;
  });
  return L.fromValues(t, c.idxDims, values);
}

function gatherOf(b: XlaBuilder, x: XlaOp, i: XlaOp, c: IndexingCase): XlaOp {
  return gather(x, i, {
    offsetDims: c.offsetDims, collapsedSliceDims: c.collapsed, startIndexMap: c.startIndexMap, indexVectorDim: c.ivd,
    operandBatchingDims: c.operandBatching, startIndicesBatchingDims: c.indicesBatching,
  }, c.sliceSizes);
}

test("gather: random dimension numbers and clamped indices match the interpreter bit for bit", async () => {
  const next = rng(21);
  let checked = 0;
  for (let trial = 0; trial < 120; trial++) {
    const c = randomCase(next);
    const t: ElementType = (["f32", "s32", "f64", "u8"] as const)[trial % 4];
    const it: ElementType = trial % 3 === 0 ? "s64" : "s32";
    const b = new XlaBuilder("g");
    const x = parameter(b, 0, arrayShape(t, c.opDims), "x");
    const i = parameter(b, 1, arrayShape(it, c.idxDims), "i");
    let comp;
    try {
      comp = b.build(gatherOf(b, x, i, c));
    } catch (e) {
      assert.fail(`invalid case ${JSON.stringify(c)}: ${String(e)}`);
    }
    checkRoutine(comp, [randomLiteral(next, t, c.opDims), randomIndices(next, it, c)], `${t}/${it} ${JSON.stringify(c)}`);
    checked++;
  }
  assert.equal(checked, 120);
});

test("scatter: random dimension numbers, add / max / replace, out-of-bounds windows skipped, bit for bit, whole and split by input rows", async () => {
  const next = rng(22);
  for (let trial = 0; trial < 120; trial++) {
    const c = randomCase(next);
    const t: ElementType = (["f32", "s32", "f64"] as const)[trial % 3];
    const it: ElementType = trial % 4 === 0 ? "s64" : "s32";
    const combiner = (["add", "max", "replace"] as const)[trial % 3];
    // The updates have the shape the matching gather's result has.
    const gb = new XlaBuilder("shape");
    const updDims = gatherOf(gb, parameter(gb, 0, arrayShape(t, c.opDims)), parameter(gb, 1, arrayShape(it, c.idxDims)), c).arrayShape.dimensions;
    const b = new XlaBuilder("s");
    const x = parameter(b, 0, arrayShape(t, c.opDims), "x");
    const i = parameter(b, 1, arrayShape(it, c.idxDims), "i");
    const u = parameter(b, 2, arrayShape(t, updDims), "u");
    const sb = b.createSubBuilder("replace");
    parameter(sb, 0, scalarShape(t));
    const replace = sb.build(parameter(sb, 1, scalarShape(t)));
    const fn = combiner === "add" ? binaryComputation(b, "add", t, add) : combiner === "max" ? binaryComputation(b, "max", t, max) : replace;
    const comp = b.build(scatter(x, i, u, fn, {
      updateWindowDims: c.offsetDims, insertedWindowDims: c.collapsed, scatterDimsToOperandDims: c.startIndexMap, indexVectorDim: c.ivd,
      inputBatchingDims: c.operandBatching, scatterIndicesBatchingDims: c.indicesBatching,
    }));
    const extent = checkRoutine(comp, [randomLiteral(next, t, c.opDims), randomIndices(next, it, c), randomLiteral(next, t, updDims)], `${combiner} ${t}/${it} ${JSON.stringify(c)}`);
    assert.equal(extent, c.opDims[0], "scatter splits the input's rows along dimension 0");
  }
});

test("gather (embedding lookup) and scatter-add (its gradient) compile and match", async () => {
  const next = rng(23);
  const b = new XlaBuilder("embed");
  const table = parameter(b, 0, arrayShape("f32", [50, 16]), "table");
  const ids = parameter(b, 1, arrayShape("s32", [4, 7]), "ids");
  const g = gather(table, ids, { offsetDims: [2], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 2 }, [1, 16]);
  const c = b.build(g);
  const args = [randomLiteral(next, "f32", [50, 16]), randomIndices(next, "s32", { opDims: [50], idxDims: [4, 7] } as IndexingCase)];
  await checkCompiled(c, args, "embedding gather");

  const sb = new XlaBuilder("embed_grad");
  const zeros = parameter(sb, 0, arrayShape("f32", [50, 16]), "zeros");
  const sids = parameter(sb, 1, arrayShape("s32", [4, 7]), "ids");
  const grads = parameter(sb, 2, arrayShape("f32", [4, 7, 16]), "grads");
  const sc = sb.build(scatter(zeros, sids, grads, binaryComputation(sb, "add", "f32", add), {
    updateWindowDims: [2], insertedWindowDims: [0], scatterDimsToOperandDims: [0], indexVectorDim: 2,
  }));
  await checkCompiled(sc, [randomLiteral(next, "f32", [50, 16]), args[1]!, randomLiteral(next, "f32", [4, 7, 16])], "embedding scatter-add");
});
