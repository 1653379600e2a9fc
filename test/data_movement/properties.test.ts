// Property tests on random valid attributes: the interpreter's result shape equals
// the inferred shape; gather of one full index vector equals slice; transposing back
// is the identity; reverse twice is the identity; sort returns a sorted permutation.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, arrayShape, concatInDim, constantR0, constantR1, dynamicSlice, gather, pad, parameter, rev,
  shapesEqual, shapeToString, slice, sort, transpose, type Computation, type Shape, type XlaOp,
} from "../../src/index.js";
import { evaluate, evaluateBatched } from "../support/backend.js";
import { keyComparator, randInt, rng } from "./helpers.js";
import { elementCount } from "../../src/types/shape.js";
import { rowMajorStrides } from "../../src/types/index_util.js";

function randomDims(r: () => number, maxRank = 4, maxSize = 4): number[] {
  return Array.from({ length: randInt(r, 0, maxRank) }, () => randInt(r, 0, maxSize));
}

function iotaLiteral(dims: number[]): Literal {
  const n = elementCount(dims);
  return Literal.fromValues("s32", dims, Array.from({ length: n }, (_, i) => i));
}

/** The program `make(param0)` over an input of `shape`, and its root (whose inferred shape the result must have). */
interface Program { readonly computation: Computation; readonly root: XlaOp }

function program(shape: Shape, make: (x: XlaOp) => XlaOp): Program {
  const bb = new XlaBuilder("prop");
  const root = make(parameter(bb, 0, shape));
  return { computation: bb.build(root), root };
}

/**
 * Checks cases whose programs are built first (evaluateBatched: compiled together);
 * `check` evaluates program i of its case on one input with `run(i, input)`, which also
 * checks the result's shape against the inferred one.
 */
function checkCases<C extends { readonly programs: readonly Program[] }>(cases: readonly C[], check: (c: C, run: (i: number, input: Literal) => Literal) => void): void {
  evaluateBatched(cases, (c) => c.programs.map((p) => p.computation), (c, evaluate) => check(c, (i, input) => {
    const out = evaluate(i, [input]);
    const root = c.programs[i]!.root;
    assert.ok(shapesEqual(out.shape, root.shape), `result ${shapeToString(out.shape)} != inferred ${shapeToString(root.shape)}`);
    return out;
  }));
}

test("property: slice, pad, transpose, reverse, concatenate results have the inferred shape", () => {
  const r = rng(1);
  // Programs in order: slice, pad, transpose, its inverse, reverse, reverse again, and a concatenation where the rank allows.
  const cases: { input: Literal; programs: Program[] }[] = [];
  for (let iter = 0; iter < 200; iter++) {
    const dims = randomDims(r);
    const input = iotaLiteral(dims);
    const start = dims.map((d) => randInt(r, 0, d));
    const limit = dims.map((d, i) => randInt(r, start[i]!, d));
    const strides = dims.map(() => randInt(r, 1, 3));
    const programs = [program(input.shape, (x) => slice(x, start, limit, strides))];
    const config = dims.map((d) => {
      const interiorPadding = randInt(r, 0, 2);
      const full = d + Math.max(d - 1, 0) * interiorPadding;
      const edgePaddingLow = randInt(r, -full, 2);
      return { edgePaddingLow, edgePaddingHigh: randInt(r, -(full + edgePaddingLow), 2), interiorPadding };
    });
    programs.push(program(input.shape, (x) => pad(x, constantR0(x.builder, "s32", -1), config)));
    const perm = dims.map((_, i) => i).sort(() => r() - 0.5);
    const transposed = program(input.shape, (x) => transpose(x, perm));
    const inverse = perm.map((_, i) => perm.indexOf(i));
    programs.push(transposed, program(transposed.root.shape, (x) => transpose(x, inverse)));
    const revDims = dims.map((_, i) => i).filter(() => r() < 0.5);
    const reversed = program(input.shape, (x) => rev(x, revDims));
    programs.push(reversed, program(reversed.root.shape, (x) => rev(x, revDims)));
    if (dims.length > 0) {
      const dim = randInt(r, 0, dims.length - 1);
      programs.push(program(input.shape, (x) => concatInDim(x.builder, [x, slice(x, start, limit, dims.map(() => 1)), x].filter((o) => {
        const s = o.arrayShape.dimensions;
        return s.every((v, i) => i === dim || v === dims[i]);
      }), dim)));
    }
    cases.push({ input, programs });
  }
  checkCases(cases, ({ input, programs }, run) => {
    run(0, input);
    run(1, input);
    assert.deepEqual(run(3, run(2, input)).toNumbers(), input.toNumbers());
    assert.deepEqual(run(5, run(4, input)).toNumbers(), input.toNumbers());
    if (programs.length > 6) run(6, input);
  });
});

test("property: gather of one full start vector equals slice and dynamicSlice", () => {
  const r = rng(2);
  // Programs in order: slice, gather, dynamic slice.
  const cases: { input: Literal; programs: Program[] }[] = [];
  for (let iter = 0; iter < 150; iter++) {
    const dims = randomDims(r, 3, 5).map((d) => Math.max(d, 1));
    const input = iotaLiteral(dims);
    const sizes = dims.map((d) => randInt(r, 0, d));
    const starts = dims.map((d, i) => randInt(r, 0, d - sizes[i]!));
    cases.push({ input, programs: [
      program(input.shape, (x) => slice(x, starts, starts.map((s, i) => s + sizes[i]!), dims.map(() => 1))),
      program(input.shape, (x) => gather(
        x, constantR1(x.builder, "s32", starts),
        { offsetDims: dims.map((_, i) => i), collapsedSliceDims: [], startIndexMap: dims.map((_, i) => i), indexVectorDim: 0 },
        sizes)),
      program(input.shape, (x) => dynamicSlice(x, starts.map((s) => constantR0(x.builder, "s64", BigInt(s))), sizes)),
    ] });
  }
  checkCases(cases, ({ input }, run) => {
    const viaSlice = run(0, input);
    const viaGather = run(1, input);
    assert.deepEqual(viaGather.toNumbers(), viaSlice.toNumbers());
    assert.deepEqual(viaGather.dimensions, viaSlice.dimensions);
    assert.deepEqual(run(2, input).toNumbers(), viaSlice.toNumbers());
  });
});

test("property: sort along a random dimension returns, per lane, a sorted permutation of the lane", () => {
  const r = rng(3);
  for (let iter = 0; iter < 60; iter++) {
    const dims = randomDims(r, 3, 5);
    if (dims.length === 0) continue;
    const dim = randInt(r, 0, dims.length - 1);
    const n = elementCount(dims);
    const input = Literal.fromValues("f32", dims, Array.from({ length: n }, () => randInt(r, -5, 5) / 2));
    const bb = new XlaBuilder("prop");
    const lt = keyComparator(bb, ["f32"], "LT");
    const root = sort(parameter(bb, 0, arrayShape("f32", dims)), lt, dim);
    const out = evaluate(bb.build(root), [input]);
    assert.ok(shapesEqual(out.shape, root.shape));
    // Compare lane by lane: the output lane is the input lane sorted.
    const strides = rowMajorStrides(dims);
    const inVals = input.toNumbers();
    const outVals = out.toNumbers();
    for (let base = 0; base < n; base++) {
      if (Math.floor(base / strides[dim]!) % dims[dim]! !== 0) continue;
      const lane = (vals: number[]) => Array.from({ length: dims[dim]! }, (_, j) => vals[base + j * strides[dim]!]!);
      assert.deepEqual(lane(outVals), [...lane(inVals)].sort((a, c) => a - c));
    }
  }
});
