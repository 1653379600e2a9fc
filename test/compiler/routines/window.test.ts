// Compiled reduce-window and select-and-scatter against the interpreter, bit for bit,
// on random shapes, windows, strides, paddings and dilations.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  XlaBuilder, add, arrayShape, ge, gt, le, lt, max, min, mul, parameter, reduceWindowWithGeneralPadding, scalarShape,
  selectAndScatterWithGeneralPadding, type ElementType, type Literal, type XlaOp,
} from "../../../src/index.js";
import { windowOutputSize } from "../../../src/ir/shape/window.js";
import { binaryComputation, checkCompiled, checkRoutine, randomLiteral, rng } from "./harness.js";

const OPS = { add, max, min, mul } as const;

interface WindowCase {
  dims: number[]; sizes: number[]; strides: number[]; pads: [number, number][]; baseDil: number[]; winDil: number[];
}

function randomWindow(next: () => number, rank: number, dilate: boolean): WindowCase {
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  for (;;) {
    const dims = Array.from({ length: rank }, () => int(1, 7));
    const sizes = dims.map(() => int(1, 3));
    const strides = dims.map(() => int(1, 3));
    const pads = dims.map((): [number, number] => [int(dilate ? -1 : 0, 2), int(dilate ? -1 : 0, 2)]);
    const baseDil = dims.map(() => (dilate ? int(1, 2) : 1));
    const winDil = dims.map(() => (dilate ? int(1, 2) : 1));
    const ok = dims.every((d, i) => windowOutputSize(d, {
      size: sizes[i]!, stride: strides[i]!, paddingLow: pads[i]![0], paddingHigh: pads[i]![1], baseDilation: baseDil[i]!, windowDilation: winDil[i]!, windowReversal: false,
    }) > 0);
    if (ok) return { dims, sizes, strides, pads, baseDil, winDil };
  }
}

test("reduce-window: random windows, reducers and element types match the interpreter bit for bit", async () => {
  const next = rng(7);
  const types: ElementType[] = ["f32", "f64", "s32", "u32", "s64"];
  let n = 0;
  for (const t of types) {
    for (const opName of Object.keys(OPS) as (keyof typeof OPS)[]) {
      for (let trial = 0; trial < 3; trial++) {
        const w = randomWindow(next, 1 + (n % 4), trial > 0);
        n++;
        const b = new XlaBuilder("rw");
        const x = parameter(b, 0, arrayShape(t, w.dims), "x");
        const init = parameter(b, 1, scalarShape(t), "init");
        const c = b.build(reduceWindowWithGeneralPadding(x, init, binaryComputation(b, opName, t, OPS[opName]), w.sizes, w.strides, w.baseDil, w.winDil, w.pads));
        const range = opName === "mul" ? 3 : 100;
        const args: Literal[] = [randomLiteral(next, t, w.dims, range), randomLiteral(next, t, [], range)];
        checkRoutine(c, args, `${t} ${opName} ${JSON.stringify(w)}`);
      }
    }
  }
});

test("reduce-window: trivial last window dimension (the SIMD path over channels), all types and reducers, bit for bit", async () => {
  const next = rng(8);
  let n = 0;
  for (const t of ["f32", "f64", "s32", "u32", "s64"] as ElementType[]) {
    for (const opName of Object.keys(OPS) as (keyof typeof OPS)[]) {
      for (let trial = 0; trial < 2; trial++) {
        const w = randomWindow(next, 2 + (n % 3), trial > 0);
        n++;
        const last = w.dims.length - 1;
        w.dims[last] = 2 + Math.floor(next() * 10);
        w.sizes[last] = 1; w.strides[last] = 1; w.pads[last] = [0, 0]; w.baseDil[last] = 1; w.winDil[last] = 1;
        const b = new XlaBuilder("rw");
        const x = parameter(b, 0, arrayShape(t, w.dims), "x");
        const init = parameter(b, 1, scalarShape(t), "init");
        const c = b.build(reduceWindowWithGeneralPadding(x, init, binaryComputation(b, opName, t, OPS[opName]), w.sizes, w.strides, w.baseDil, w.winDil, w.pads));
        const range = opName === "mul" ? 3 : 100;
        checkRoutine(c, [randomLiteral(next, t, w.dims, range), randomLiteral(next, t, [], range)], `${t} ${opName} ${JSON.stringify(w)}`);
      }
    }
  }
});

test("reduce-window: max pool 3x3 stride 2 SAME (NHWC) compiles and matches", async () => {
  const b = new XlaBuilder("maxpool");
  const x = parameter(b, 0, arrayShape("f32", [2, 9, 10, 5]), "x");
  const init = parameter(b, 1, scalarShape("f32"), "init");
  const c = b.build(reduceWindowWithGeneralPadding(x, init, binaryComputation(b, "max", "f32", max), [1, 3, 3, 1], [1, 2, 2, 1], [], [], [[0, 0], [1, 1], [0, 1], [0, 0]]));
  const next = rng(3);
  const args = [randomLiteral(next, "f32", [2, 9, 10, 5]), randomLiteral(next, "f32", [])];
  const extent = checkRoutine(c, args, "maxpool");
  assert.equal(extent, 2 * 5 * 5);
  await checkCompiled(c, args, "maxpool");
});

/** Select-and-scatter (an add scatter) over window `w` (no dilations) with a random operand, source and init, checked against the interpreter. */
function checkSelectAndScatter(next: () => number, t: ElementType, selName: string, sel: (x: XlaOp, y: XlaOp) => XlaOp, w: WindowCase): void {
  const outDims = w.dims.map((d, i) => windowOutputSize(d, {
    size: w.sizes[i]!, stride: w.strides[i]!, paddingLow: w.pads[i]![0], paddingHigh: w.pads[i]![1], baseDilation: 1, windowDilation: 1, windowReversal: false,
  }));
  const b = new XlaBuilder("sas");
  const x = parameter(b, 0, arrayShape(t, w.dims), "x");
  const s = parameter(b, 1, arrayShape(t, outDims), "s");
  const init = parameter(b, 2, scalarShape(t), "init");
  const c = b.build(selectAndScatterWithGeneralPadding(x, binaryComputation(b, selName, t, sel), w.sizes, w.strides, w.pads, s, init, binaryComputation(b, "add", t, add)));
  // Few distinct operand values so that ties exercise the select's order.
  checkRoutine(c, [randomLiteral(next, t, w.dims, 3), randomLiteral(next, t, outDims), randomLiteral(next, t, [])], `${t} ${selName} ${JSON.stringify(w)}`);
}

test("select-and-scatter: random windows (GE and GT selects, add scatter) match the interpreter bit for bit", async () => {
  const next = rng(11);
  let n = 0;
  for (const t of ["f32", "f64", "s32"] as ElementType[]) {
    for (const [selName, sel] of [["ge", ge], ["gt", gt]] as const) {
      for (let trial = 0; trial < 5; trial++) {
        const w = randomWindow(next, 1 + (n % 4), false);
        n++;
        // Leading trivial dimensions sometimes, as NHWC pooling has.
        if (trial % 2 === 0) { w.sizes[0] = 1; w.strides[0] = 1; w.pads[0] = [0, 0]; }
        checkSelectAndScatter(next, t, selName, sel, w);
      }
    }
  }
});

test("select-and-scatter: trivial last window dimension (SIMD selects over channels), GE/GT/LE/LT, bit for bit", async () => {
  const next = rng(12);
  const dirs = [["ge", ge], ["gt", gt], ["le", le], ["lt", lt]] as const;
  let n = 0;
  for (const t of ["f32", "s32", "u32"] as ElementType[]) {
    for (const [selName, sel] of dirs) {
      for (let trial = 0; trial < 3; trial++) {
        const w = randomWindow(next, 2 + (n % 3), false);
        n++;
        const last = w.dims.length - 1;
        w.dims[last] = 4 + Math.floor(next() * 8);
        w.sizes[last] = 1; w.strides[last] = 1; w.pads[last] = [0, 0];
        if (trial === 0) { w.sizes[0] = 1; w.strides[0] = 1; w.pads[0] = [0, 0]; }
        checkSelectAndScatter(next, t, selName, sel, w);
      }
    }
  }
});

test("select-and-scatter: max-pool gradient compiles and matches", async () => {
  const b = new XlaBuilder("maxpoolgrad");
  const x = parameter(b, 0, arrayShape("f32", [2, 8, 8, 3]), "x");
  const s = parameter(b, 1, arrayShape("f32", [2, 4, 4, 3]), "s");
  const init = parameter(b, 2, scalarShape("f32"), "init");
  const c = b.build(selectAndScatterWithGeneralPadding(x, binaryComputation(b, "ge", "f32", ge), [1, 3, 3, 1], [1, 2, 2, 1], [[0, 0], [0, 1], [0, 1], [0, 0]], s, init, binaryComputation(b, "add", "f32", add)));
  const next = rng(5);
  const args = [randomLiteral(next, "f32", [2, 8, 8, 3], 4), randomLiteral(next, "f32", [2, 4, 4, 3]), randomLiteral(next, "f32", [])];
  assert.equal(checkRoutine(c, args, "maxpool grad"), 2);
  await checkCompiled(c, args, "maxpool grad");
});
