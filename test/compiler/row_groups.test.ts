// Row groups: chains of kernels over the same rows that run block by block
// (src/compiler/row_groups.ts). Each program is checked three ways: the dump shows the
// group (or its absence), the result equals the interpreter's (within the kernels'
// ulps), and it equals bit for bit the same kernels each run over all the rows before
// the next, so the interleaving itself changes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, broadcastInDim, constantR0, div, dot, evaluate, exp, max, mul, parameter, reduce,
  byteSize, parseHlo, rev, rsqrt, scalarShape, sub, type Computation, type ElementType, type XlaOp,
} from "../../src/index.js";
import { compile, WasmDevice, type Executable } from "../../src/compiler/index.js";
import { separateFusionsPipeline } from "../support/pipelines.js";
import { detectWasmTarget } from "../../src/compiler/wasm/features.js";
import { planProgram } from "../../src/compiler/program.js";
import { loadProgramSync } from "../../src/compiler/executable.js";
import type { CompiledProgram, Step } from "../../src/compiler/program.js";

const TARGET = detectWasmTarget();
import { rng } from "../support/prng.js";
import { elementCount } from "../../src/types/shape.js";

function reducer(b: XlaBuilder, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const s = b.createSubBuilder("r");
  return s.build(op(parameter(s, 0, scalarShape(t)), parameter(s, 1, scalarShape(t))));
}

function randomLiteral(seed: number, dims: number[]): Literal {
  const next = rng(seed);
  return Literal.fromValues("f32", dims, Array.from({ length: elementCount(dims) }, () => next() * 8 - 4));
}

function softmax(rows: number, cols: number): Computation {
  const b = new XlaBuilder("softmax");
  const x = parameter(b, 0, arrayShape("f32", [rows, cols]), "x");
  const m = reduce(x, constantR0(b, "f32", -Infinity), reducer(b, "f32", max), [1]);
  const e = exp(sub(x, m, [0]));
  return b.build(div(e, reduce(e, constantR0(b, "f32", 0), reducer(b, "f32", add), [1]), [0]));
}

function layerNorm(rows: number, cols: number): Computation {
  const b = new XlaBuilder("layer_norm");
  const x = parameter(b, 0, arrayShape("f32", [rows, cols]), "x");
  const gamma = parameter(b, 1, arrayShape("f32", [cols]), "gamma");
  const beta = parameter(b, 2, arrayShape("f32", [cols]), "beta");
  const n = constantR0(b, "f32", cols);
  const sum = (v: XlaOp): XlaOp => reduce(v, constantR0(b, "f32", 0), reducer(b, "f32", add), [1]);
  const centered = sub(x, div(sum(x), n), [0]);
  const scale = rsqrt(add(div(sum(mul(centered, centered)), n), constantR0(b, "f32", 1e-5)));
  return b.build(add(mul(mul(centered, scale, [0]), gamma, [1]), beta, [1]));
}

/**
 * The program with each row group run as one block: every kernel over all the rows
 * before the next, with block buffers of all the rows.
 */
function sequential(program: CompiledProgram): CompiledProgram {
  const steps = program.steps.map((s): Step => {
    if (s.kind !== "group") return s;
    let scratchBytes = 0;
    const blockBuffers = s.blockBuffers.map((b) => {
      const offset = scratchBytes;
      scratchBytes += Math.ceil((s.rows * b.rowBytes) / 64) * 64;
      return { ...b, offset };
    });
    return { ...s, block: s.rows, blockBuffers, scratchBytes };
  });
  return { ...program, steps };
}

function assertClose(actual: Literal, expected: Literal, relTol: number, what: string): void {
  const a = actual.toNumbers();
  const e = expected.toNumbers();
  assert.equal(a.length, e.length);
  for (let i = 0; i < a.length; i++) {
    assert.ok(Math.abs(a[i]! - e[i]!) <= relTol * Math.max(1, Math.abs(e[i]!)), `${what} element ${i}: ${a[i]} vs ${e[i]}`);
  }
}

/** Softmax and layer norm as the separate fusions that row groups run (not one row pipeline). */
const SEPARATE_FUSIONS = separateFusionsPipeline();

/**
 * Compiles `c` on a device of `threads` threads and checks its result against the
 * interpreter's `expected` (computed once by the caller for every thread count: the
 * interpreter is the slow part here) and against the program run in one block.
 */
async function check(c: Computation, args: readonly Literal[], expected: Literal, threads: number, relTol: number): Promise<Executable> {
  const device = await WasmDevice.create({ threads });
  const exe = await compile(c, { device, passes: SEPARATE_FUSIONS });
  const got = exe.run(args);
  assertClose(got, expected, relTol, `${c.name} (${threads} thread(s))`);
  const oneBlock = loadProgramSync(sequential(exe.program), device, []);
  assert.deepEqual(got.toNumbers(), oneBlock.run(args).toNumbers(), `${c.name}: runs in blocks and in one block differ`);
  oneBlock.delete();
  return exe;
}

const groupsOf = (exe: Executable): number[] => exe.program.steps.flatMap((s) => (s.kind === "group" ? [s.steps.length] : []));

test("softmax runs as one row group of its three kernels, in blocks of rows, equal to the kernels run one by one", async () => {
  // 300 rows of 1024: several blocks (and a partial last one), split across threads.
  for (const [rows, cols] of [[300, 1024], [7, 33]] as const) {
    const [c, args] = [softmax(rows, cols), [randomLiteral(rows, [rows, cols])]];
    const expected = evaluate(c, args);
    for (const threads of [1, 2]) {
      const exe = await check(c, args, expected, threads, 4e-7);
      assert.deepEqual(groupsOf(exe), [3]);
      const group = exe.program.steps[0];
      assert.ok(group?.kind === "group" && group.rows === rows && group.block >= 1 && group.block <= rows);
      if (rows === 300) assert.ok(group.block < rows, "several blocks");
      // The row maxima, exp(x - max) and the row sums live in block buffers: only the rows of one block.
      assert.deepEqual(group.blockBuffers.map((b) => b.rowBytes).sort((a, b) => a - b), [4, 4, 4 * cols]);
      assert.match(exe.dump(), new RegExp(`row group of 3 kernels over ${rows} rows, ${group.block} row\\(s\\) a block; 3 block buffer\\(s\\), ${group.scratchBytes} bytes of scratch a thread:\\n//     kernel [^\\n]*-> temp\\d+@scratch\\+0\\n`));
      exe.delete();
    }
  }
});

// Fused by hand (planProgram directly, no passes): p, a GEMM's result (no rows), is
// read by the row sums s, its last use; then q = x - s row by row, with rows twice as
// long as p's (a temporary: the transpose reads it). Planned step by step, q would take
// p's bytes, and its first block would cover rows of p that later blocks of s read.
const GROUP_ARENA = `
HloModule group_arena

add_r {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
f_sum {
  p = f32[300,512] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[300] reduce(p, z), dimensions={1}, to_apply=add_r
}
f_shift {
  x = f32[300,1024] parameter(0)
  s = f32[300] parameter(1)
  sb = f32[300,1024] broadcast(s), dimensions={0}
  ROOT q = f32[300,1024] subtract(x, sb)
}
ENTRY main {
  u = f32[300,8] parameter(0)
  w = f32[8,512] parameter(1)
  x = f32[300,1024] parameter(2)
  p = f32[300,512] dot(u, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[300] fusion(p), kind=kInput, calls=f_sum
  q = f32[300,1024] fusion(x, s), kind=kLoop, calls=f_shift
  ROOT t = f32[1024,300] transpose(q), dimensions={1,0}
}
`;

test("the arena temporaries of a group never share bytes, even when one dies inside the group", async () => {
  const module = parseHlo(GROUP_ARENA);
  const program = planProgram(module, { wasm: TARGET });
  const group = program.steps[1];
  assert.ok(group?.kind === "group" && group.steps.length === 2 && group.block < group.rows);
  // s lives in block buffers; p and q in the arena.
  assert.deepEqual(group.blockBuffers.map((b) => b.temp), [1]);
  const [p, q] = [program.temps[0]!, program.temps[2]!];
  assert.ok(p.offset + byteSize(p.shape!) <= q.offset || q.offset + byteSize(q.shape!) <= p.offset, `p at ${p.offset} and q at ${q.offset} overlap`);
  const args = [randomLiteral(10, [300, 8]), randomLiteral(11, [8, 512]), randomLiteral(12, [300, 1024])];
  const exe = loadProgramSync(program, new WasmDevice(), []);
  assertClose(exe.run(args), evaluate(module.entry, args), 1e-4, "group_arena");
  exe.delete();
});

test("layer norm's moments and normalization run as one row group", async () => {
  const [rows, cols] = [200, 768];
  const [c, args] = [layerNorm(rows, cols), [randomLiteral(1, [rows, cols]), randomLiteral(2, [cols]), randomLiteral(3, [cols])]];
  const expected = evaluate(c, args);
  for (const threads of [1, 2]) {
    const exe = await check(c, args, expected, threads, 2e-5);
    assert.deepEqual(groupsOf(exe), [exe.program.kernels.length], exe.dump());
    exe.delete();
  }
});

test("a kernel that reads an earlier kernel's result at other rows does not join its group", async () => {
  // x - max over rows, broadcast along columns: row i reads the maxima of every row.
  const b = new XlaBuilder("column_shift");
  const x = parameter(b, 0, arrayShape("f32", [64, 64]), "x");
  const c = b.build(sub(x, broadcastInDim(reduce(x, constantR0(b, "f32", -Infinity), reducer(b, "f32", max), [1]), [64, 64], [1])));
  const args = [randomLiteral(4, [64, 64])];
  const exe = await check(c, args, evaluate(c, args), 1, 0);
  assert.deepEqual(groupsOf(exe), []);
  assert.equal(exe.program.kernels.length, 2);
  assert.doesNotMatch(exe.dump(), /row group/);
  exe.delete();
});

test("a group's kernel does not write in place over an operand that another kernel of the group reads at other rows", async () => {
  // t (a GEMM: no rows) is read reversed by the row sums, then scaled row by row by the
  // group's last kernel, where t dies: written in place, later blocks of the sums would
  // read rows already overwritten. (The scaled rows go on to another GEMM, so that they
  // are a temporary and not the program's output, which is never written in place.)
  const [rows, cols] = [64, 1024];
  const b = new XlaBuilder("reversed_sums");
  const t = dot(parameter(b, 0, arrayShape("f32", [rows, 8]), "a"), parameter(b, 1, arrayShape("f32", [8, cols]), "w"));
  const sums = reduce(add(t, rev(t, [0])), constantR0(b, "f32", 0), reducer(b, "f32", add), [1]);
  const c = b.build(dot(mul(t, sums, [0]), parameter(b, 2, arrayShape("f32", [cols, 4]), "v")));
  const args = [randomLiteral(5, [rows, 8]), randomLiteral(6, [8, cols]), randomLiteral(7, [cols, 4])];
  const expected = evaluate(c, args);
  for (const threads of [1, 2]) {
    const exe = await check(c, args, expected, threads, 1e-3);
    assert.deepEqual(groupsOf(exe), [2], exe.dump());
    exe.delete();
  }
});

// Softmax in a loop body: the body's own step list forms its row group (and the entry's none).
const SOFTMAX_LOOP = `
HloModule softmax_loop

max_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add_r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[300,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[300,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[300,256] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ninf = f32[] constant(-inf)
  m = f32[300] reduce(x, ninf), dimensions={1}, to_apply=max_r
  mb = f32[300,256] broadcast(m), dimensions={0}
  d = f32[300,256] subtract(x, mb)
  e = f32[300,256] exponential(d)
  zero = f32[] constant(0)
  s = f32[300] reduce(e, zero), dimensions={1}, to_apply=add_r
  sb = f32[300,256] broadcast(s), dimensions={0}
  k = f32[] constant(300)
  kb = f32[300,256] broadcast(k), dimensions={}
  q = f32[300,256] divide(e, sb)
  x1 = f32[300,256] multiply(q, kb)
  ROOT t = (s32[], f32[300,256]) tuple(i1, x1)
}

ENTRY main {
  x = f32[300,256] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[300,256]) tuple(z, x)
  w = (s32[], f32[300,256]) while(t), condition=cond, body=body
  ROOT r = f32[300,256] get-tuple-element(w), index=1
}
`;

// Tolerance: softmax within 4e-7 absolute (as above), times 300, three times over.
test("a loop body's softmax runs as a row group of its own step list", async () => {
  const module = parseHlo(SOFTMAX_LOOP);
  const args = [randomLiteral(8, [300, 256])];
  const expected = evaluate(module.entry, args);
  for (const threads of [1, 2]) {
    const exe = await compile(module, { device: await WasmDevice.create({ threads }), passes: SEPARATE_FUSIONS });
    const loop = exe.program.steps.find((s) => s.kind === "while");
    assert.ok(loop?.kind === "while", exe.dump());
    const groups = loop.body.steps.filter((s) => s.kind === "group");
    assert.equal(groups.length, 1, exe.dump());
    assert.ok(groups[0]!.kind === "group" && groups[0]!.block < 300 && groups[0]!.blockBuffers.length > 0, exe.dump());
    assert.match(exe.dump(), /\n\/\/ {7}row group of \d kernels over 300 rows/);
    assertClose(exe.run(args), expected, 2e-4, `softmax loop (${threads} thread(s))`);
    exe.delete();
  }
});
