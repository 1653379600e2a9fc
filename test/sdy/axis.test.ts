// Axis-ref relations (seed 002 AxisRefAttr); the expected values are Shardy's
// (dialect_test.cc), each a consequence of sub-axes covering [preSize, preSize*size).

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  axisCanCoexist, axisCanMerge, axisContains, axisGreatestCommonPrefix, axisMerge, axisOverlap, axisOverlaps, axisPrefixOf,
  axisPrefixWithoutOverlap, axisSuffixWithoutOverlap, axisListPrefixStatus, meshAxisComparator, sortAndMergeAxes,
} from "../../src/sharding/axis.js";
import type { AxisRef } from "../../src/sharding/model.js";
import { ax, mesh } from "./helpers.js";

const a = (text: string): AxisRef => ax(text)[0]!;

test("contains and prefixOf", () => {
  for (const [big, small] of [['"x"', '"x":(2)4'], ['"x":(1)4', '"x":(1)2'], ['"x":(2)4', '"x":(4)2'], ['"x":(1)8', '"x":(2)2']]) {
    assert.ok(axisContains(a(big!), a(small!)) && !axisContains(a(small!), a(big!)), `${big} contains ${small}`);
  }
  for (const [p, q] of [['"x":(1)4', '"x":(4)2'], ['"x":(1)4', '"x":(2)4'], ['"x"', '"y"']]) {
    assert.ok(!axisContains(a(p!), a(q!)) && !axisContains(a(q!), a(p!)));
  }
  for (const [small, big] of [['"x":(1)4', '"x"'], ['"x":(1)2', '"x":(1)4'], ['"x":(2)2', '"x":(2)8']]) {
    assert.ok(axisPrefixOf(a(small!), a(big!)) && !axisPrefixOf(a(big!), a(small!)));
  }
  assert.ok(!axisPrefixOf(a('"x":(1)4'), a('"x":(2)4')) && !axisPrefixOf(a('"x":(2)4'), a('"x":(1)4')));
});

test("overlaps and canCoexist", () => {
  const overlapping = [['"x"', '"x"'], ['"x":(1)4', '"x":(1)2'], ['"x"', '"x":(2)4'], ['"x":(1)4', '"x":(2)4'], ['"x":(2)8', '"x":(4)2']];
  for (const [p, q] of overlapping) assert.ok(axisOverlaps(a(p!), a(q!)) && axisOverlaps(a(q!), a(p!)), `${p} ${q}`);
  for (const [p, q] of [['"x"', '"y"'], ['"x":(1)4', '"x":(4)2'], ['"x":(1)2', '"x":(4)2']]) assert.ok(!axisOverlaps(a(p!), a(q!)));
  const coexist = [['"x":(1)2', '"x":(1)4'], ['"x":(1)2', '"x":(2)4'], ['"x":(1)2', '"x":(6)2'], ['"x":(1)4', '"x":(2)2'], ['"x":(1)4', '"x":(2)4']];
  for (const [p, q] of coexist) assert.ok(axisCanCoexist(a(p!), a(q!)) && axisCanCoexist(a(q!), a(p!)), `${p} ${q}`);
  for (const [p, q] of [['"x":(1)2', '"x":(1)3'], ['"x":(1)2', '"x":(3)2'], ['"x":(1)3', '"x":(2)3']]) {
    assert.ok(!axisCanCoexist(a(p!), a(q!)) && !axisCanCoexist(a(q!), a(p!)), `${p} ${q}`);
  }
});

test("overlap, prefix and suffix without overlap", () => {
  assert.deepEqual(axisOverlap(a('"x":(1)4'), a('"x":(2)4')), a('"x":(2)2'));
  assert.deepEqual(axisOverlap(a('"x"'), a('"x":(4)8')), a('"x":(4)8'));
  assert.equal(axisOverlap(a('"x":(1)2'), a('"x":(3)2')), undefined);
  assert.equal(axisPrefixWithoutOverlap(a('"x":(2)4'), a('"x"')), undefined);
  assert.deepEqual(axisPrefixWithoutOverlap(a('"x"'), a('"x":(2)4')), a('"x":(1)2'));
  assert.equal(axisPrefixWithoutOverlap(a('"x":(2)4'), a('"x":(1)4')), undefined);
  assert.deepEqual(axisPrefixWithoutOverlap(a('"x":(1)4'), a('"x":(2)4')), a('"x":(1)2'));
  assert.deepEqual(axisPrefixWithoutOverlap(a('"x":(2)8'), a('"x":(4)2')), a('"x":(2)2'));
  assert.deepEqual(axisPrefixWithoutOverlap(a('"x":(1)4'), a('"x":(4)2')), a('"x":(1)4'));
  assert.equal(axisPrefixWithoutOverlap(a('"x":(1)3'), a('"x":(2)3')), undefined);
  const m = mesh({ x: 16, y: 4 });
  assert.deepEqual(axisSuffixWithoutOverlap(a('"x"'), a('"x":(2)4'), m), a('"x":(8)2'));
  assert.deepEqual(axisSuffixWithoutOverlap(a('"x":(2)4'), a('"x":(1)4'), m), a('"x":(4)2'));
  assert.equal(axisSuffixWithoutOverlap(a('"x":(1)4'), a('"x":(2)4'), m), undefined);
  assert.deepEqual(axisSuffixWithoutOverlap(a('"x":(2)8'), a('"x":(4)2'), m), a('"x":(8)2'));
});

test("merge and greatest common prefix", () => {
  const m = mesh({ x: 16 });
  assert.ok(axisCanMerge(a('"x":(1)4'), a('"x":(4)2')) && !axisCanMerge(a('"x":(4)2'), a('"x":(1)4')));
  assert.ok(!axisCanMerge(a('"x"'), a('"x":(4)2')) && !axisCanMerge(a('"x":(1)2'), a('"x":(4)2')));
  assert.deepEqual(axisMerge(a('"x":(1)4'), a('"x":(4)2'), m), a('"x":(1)8'));
  assert.deepEqual(axisMerge(a('"x":(2)2'), a('"x":(4)4'), m), a('"x":(2)8'));
  assert.deepEqual(axisMerge(a('"x":(1)8'), a('"x":(8)2'), m), a('"x"'));
  assert.deepEqual(axisGreatestCommonPrefix(a('"x"'), a('"x":(1)4')), a('"x":(1)4'));
  assert.deepEqual(axisGreatestCommonPrefix(a('"x":(2)8'), a('"x":(2)4')), a('"x":(2)4'));
  assert.equal(axisGreatestCommonPrefix(a('"x":(1)2'), a('"x":(2)4')), undefined);
});

test("ordering: mesh axis order, then sub-axis position; sort-and-merge", () => {
  const m = mesh({ y: 4, x: 16 });
  const cmp = meshAxisComparator(m);
  assert.ok(cmp(a('"y"'), a('"x"')) < 0);
  for (const [lo, hi] of [['"x":(1)4', '"x":(2)4'], ['"x":(1)4', '"x":(1)8'], ['"x":(1)4', '"x"'], ['"x":(1)4', '"x":(2)2'], ['"x"', '"x":(2)2']]) {
    assert.ok(cmp(a(lo!), a(hi!)) < 0 && cmp(a(hi!), a(lo!)) > 0, `${lo} < ${hi}`);
  }
  assert.deepEqual(sortAndMergeAxes(ax('"x":(4)4, "y", "x":(1)4'), m), ax('"y", "x"'));
});

test("axis list prefix status", () => {
  assert.equal(axisListPrefixStatus(ax('"a"'), ax('"a", "b"')), "strictPrefix");
  assert.equal(axisListPrefixStatus(ax('"a", "b":(1)2'), ax('"a", "b"')), "strictPrefix");
  assert.equal(axisListPrefixStatus(ax('"a", "b"'), ax('"a", "b"')), "equal");
  assert.equal(axisListPrefixStatus([], []), "equal");
  assert.equal(axisListPrefixStatus(ax('"a", "c"'), ax('"a", "b"')), "notAPrefix");
  assert.equal(axisListPrefixStatus(ax('"a", "b"'), ax('"a"')), "notAPrefix");
});
