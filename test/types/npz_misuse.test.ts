// writeNpz's misuses are NpyErrors naming the argument (they were untyped TypeErrors),
// and an object of literals by name is taken as np.savez's keywords are.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, NpyError, readNpz, writeNpz } from "../../src/index.js";

const a = Literal.fromValues("s32", [2], [1, 2]);

test("writeNpz takes an object of literals by name, as np.savez takes keywords", () => {
  const read = readNpz(writeNpz({ x: a, y: Literal.scalar("f32", 0.5) }));
  assert.deepEqual([...read.keys()], ["x", "y"]);
  assert.deepEqual([...read.get("x")!.data], [1, 2]);
  assert.equal(read.get("y")!.data[0], 0.5);
  // A Map too.
  assert.deepEqual([...readNpz(writeNpz(new Map([["m", a]]))).keys()], ["m"]);
});

test("bad arguments, names and values are NpyErrors that say what is wrong", () => {
  const cases: [unknown, RegExp][] = [
    [undefined, /^writeNpz: arrays must be \[name, Literal\] pairs .* got undefined/],
    [a, /^writeNpz: array 0 must be a \[name, Literal\] pair, got a array literal|^writeNpz: /],
    [[a], /^writeNpz: array 0 must be a \[name, Literal\] pair, got a array literal/],
    [[["x", a, a]], /^writeNpz: array 0 must be a \[name, Literal\] pair, got an array of 3/],
    [[[1, a]], /^writeNpz: the name of array 0 must be a string, got number/],
    [[["", a]], /^writeNpz: the name of array 0 "" is not a file name/],
    [[["..", a]], /^writeNpz: the name of array 0 "\.\." is not a file name/],
    [[["dir/x", a]], /^writeNpz: the name of array 0 "dir\/x" contains a path separator/],
    [[["x\ny", a]], /^writeNpz: the name of array 0 "x\\ny" contains a control character/],
    [[["x", [1, 2]]], /^writeNpz: x must be an array Literal, got an array of 2/],
    [{ x: 5 }, /^writeNpz: x must be an array Literal, got number/],
    [[["t", Literal.tuple([a])]], /^writeNpz: t must be an array Literal, got a tuple literal/],
    [[["x", a], ["x", a]], /^writeNpz: two arrays are named x/],
  ];
  for (const [arg, pattern] of cases) {
    assert.throws(() => writeNpz(arg as never), (e: unknown) => e instanceof NpyError && pattern.test(e.message), String(pattern));
  }
});
