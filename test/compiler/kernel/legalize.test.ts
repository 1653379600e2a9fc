// XLA's edge semantics as legalize.ts writes them (integer divide and remainder by zero
// and at INT_MIN / -1, shifts by the width and past it and by negative amounts, negate
// and abs of INT_MIN) and as the float maximum and minimum and the float to integer
// convert primitives keep them (NaN, signed zeros, out-of-range values): every pair of
// edge values through the WebAssembly and the C kernels, against the interpreter.

import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../../src/compiler/index.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { KernelGraph } from "../../../src/compiler/kernel/graph.js";
import { legalIndex, legalize } from "../../../src/compiler/kernel/legalize.js";
import { reachable } from "../../../src/compiler/kernel/kernel_plan.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { ELEMENT_TYPES, integerRange, type ElementType } from "../../../src/types/element_type.js";
import { Literal } from "../../../src/types/literal.js";
import { firstDifference } from "../literal_compare.js";

type Value = number | bigint;
const INTS: readonly ElementType[] = ["s4", "u4", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"];

function asType(t: ElementType, v: bigint): Value {
  return ELEMENT_TYPES[t].bitWidth === 64 ? v : Number(v);
}

/** Every pair (x, y) of xs × ys, as two columns. */
function pairs(xs: readonly Value[], ys: readonly Value[]): [Value[], Value[]] {
  const a: Value[] = [];
  const b: Value[] = [];
  for (const x of xs) for (const y of ys) { a.push(x); b.push(y); }
  return [a, b];
}

/**
 * Runs each of `ops` (an opcode, and its attributes after a "|") on (a, b) in one program (a tuple of their results) on backend
 * `backend` and on the interpreter; asserts a compiled kernel ran and the results are
 * identical (NaN equals NaN, -0 differs from +0).
 */
function check(t: TestContext, backend: "wasm" | "native", ops: readonly string[], type: ElementType, a: readonly Value[], b?: readonly Value[], resultType = type): void {
  if (backend === "native" && typeof nativeToolchain() === "string") {
    t.diagnostic(`native skipped: ${nativeToolchain() as string}`);
    return;
  }
  const n = a.length;
  const lines = ops.map((op, k) => {
    const [opcode, attrs] = op.split("|");
    return `  r${k} = ${resultType}[${n}] ${opcode}(a${b === undefined ? "" : ", b"})${attrs === undefined ? "" : `, ${attrs}`}`;
  });
  const text = `HloModule m\nENTRY e {\n  a = ${type}[${n}] parameter(0)\n${b === undefined ? "" : `  b = ${type}[${n}] parameter(1)\n`}${lines.join("\n")}\n`
    + `  ROOT r = (${ops.map(() => `${resultType}[${n}]`).join(", ")}) tuple(${ops.map((_, k) => `r${k}`).join(", ")})\n}\n`;
  const module = parseHlo(text);
  const args = [Literal.fromValues(type, [n], a as never), ...(b === undefined ? [] : [Literal.fromValues(type, [n], b as never)])];
  const want = evaluate(module.entry, args);
  const exe = compileSync(module, { backend });
  try {
    const kernels = exe.program.kernels;
    assert.ok(backend === "native" ? kernels.some(isProgramNativeKernel) : kernels.length > 0, `${ops} on ${type}: no ${backend} kernel in:\n${exe.dump()}`);
    const got = exe.run(args);
    const d = firstDifference(want, got, (x, y) => Object.is(x, y));
    assert.equal(d, undefined, `${ops} on ${type} (${backend}), result ${d}`);
  } finally {
    exe.delete();
  }
}

for (const backend of ["wasm", "native"] as const) {
  test(`integer divide and remainder by 0 and INT_MIN / -1 match the interpreter (${backend})`, (t) => {
    for (const type of INTS) {
      const { min, max } = integerRange(type);
      const edges = [min, min + 1n, -7n, -2n, -1n, 0n, 1n, 2n, 3n, 7n, max - 1n, max].filter((v) => v >= min && v <= max);
      const [a, b] = pairs(edges.map((v) => asType(type, v)), edges.map((v) => asType(type, v)));
      check(t, backend, ["divide", "remainder"], type, a, b);
    }
  });

  test(`shifts by 0 to width + 1, and by negative and huge amounts, match the interpreter (${backend})`, (t) => {
    for (const type of INTS) {
      const { min, max } = integerRange(type);
      const w = BigInt(ELEMENT_TYPES[type].bitWidth);
      const amounts = [...Array.from({ length: Number(w) + 2 }, (_, i) => BigInt(i)), -1n, -w, -w - 1n, min, max, max - 1n]
        .filter((v) => v >= min && v <= max);
      const values = [min, min + 1n, -1n, 0n, 1n, 5n, max - 2n, max].filter((v) => v >= min && v <= max);
      const [a, b] = pairs(values.map((v) => asType(type, v)), [...new Set(amounts)].map((v) => asType(type, v)));
      check(t, backend, ["shift-left", "shift-right-logical", "shift-right-arithmetic"], type, a, b);
    }
  });

  test(`integer negate and abs wrap at INT_MIN (${backend})`, (t) => {
    for (const type of INTS.filter((x) => ELEMENT_TYPES[x].kind === "signed")) {
      const { min, max } = integerRange(type);
      const values = [min, min + 1n, -2n, -1n, 0n, 1n, 2n, max - 1n, max].filter((v) => v >= min && v <= max).map((v) => asType(type, v));
      check(t, backend, ["negate", "abs"], type, values);
    }
    for (const type of INTS.filter((x) => ELEMENT_TYPES[x].kind === "unsigned")) {
      const { max } = integerRange(type);
      check(t, backend, ["negate"], type, [0n, 1n, 2n, max - 1n, max].map((v) => asType(type, v)));
    }
  });

  test(`sign of every integer and float type: -1, 0, 1, and NaN and ±0 as themselves (${backend})`, (t) => {
    for (const type of INTS.filter((x) => ELEMENT_TYPES[x].kind === "signed")) {
      const { min, max } = integerRange(type);
      const values = [min, min + 1n, -2n, -1n, 0n, 1n, 2n, max - 1n, max].filter((v) => v >= min && v <= max);
      check(t, backend, ["sign"], type, [...new Set(values)].map((v) => asType(type, v)));
    }
    const floats = [NaN, -NaN, -0, 0, 1e-40, -1e-40, 0.25, -0.25, 1, -1, 3.5, -3.5, 65504, -65504, 1e30, -1e30, Infinity, -Infinity];
    // Repeated past the size at which the loops take their vector forms (C's: 16384 elements).
    const many = Array.from({ length: Math.ceil(20000 / floats.length) }, () => floats).flat();
    for (const type of ["f32", "f64", "f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e8m0fnu", "f4e2m1fn"] as const) {
      // C compiles no 8-, 6- or 4-bit float (the WebAssembly kernel runs them).
      if (backend === "native" && ELEMENT_TYPES[type].bitWidth < 16) continue;
      check(t, backend, ["sign"], type, type === "f32" ? many : floats);
    }
  });

  test(`total-order compares of floats: -NaN < -inf < -0 < +0 < +inf < +NaN (${backend})`, (t) => {
    const edges = [NaN, -NaN, -Infinity, Infinity, -0, 0, 1e-40, -1e-40, 1, -1, 1.5, -1.5, 3e38, -3e38];
    const [a0, b0] = pairs(edges, edges);
    // Repeated past the size at which the loops take their vector forms (C's: 16384 elements).
    const reps = Math.ceil(20000 / a0.length);
    const a = Array.from({ length: reps }, () => a0).flat();
    const b = Array.from({ length: reps }, () => b0).flat();
    const ops = ["LT", "EQ", "GE", "NE"].map((d) => `compare|direction=${d}, type=TOTALORDER`);
    for (const type of ["f32", "f64", "f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e8m0fnu", "f6e2m3fn", "f4e2m1fn"] as const) {
      // C compiles no 8-, 6- or 4-bit float (the WebAssembly kernel runs them).
      if (backend === "native" && ELEMENT_TYPES[type].bitWidth < 16) continue;
      check(t, backend, ops, type, type === "f32" || type === "f64" ? a : a0, type === "f32" || type === "f64" ? b : b0, "pred");
    }
  });

  test(`isFinite of f32 and f64 (written as a test of the pattern's exponent field): false for NaN and ±inf only (${backend})`, (t) => {
    const values = [NaN, -NaN, Infinity, -Infinity, 0, -0, 1e-45, -1e-45, 5e-324, 1, -1, 3.4e38, -3.4e38, 1.7e308, -1.7e308];
    // Repeated past the size at which the loops take their vector forms (C's: 16384 elements).
    const many = Array.from({ length: Math.ceil(20000 / values.length) }, () => values).flat();
    for (const type of ["f32", "f64"] as const) check(t, backend, ["is-finite"], type, many, undefined, "pred");
  });

  test(`reduce-precision of f32, f64, f16 and bf16 (written as integer ops on the pattern): rounding ties, overflow, flushing, NaN (${backend})`, (t) => {
    // Ties and near-ties of each type's last bits, the range edges of the narrow formats, subnormals, ±0, ±inf, NaN.
    const values = [NaN, -NaN, Infinity, -Infinity, 0, -0, 1, -1, 1 + 2 ** -8, 1 + 3 * 2 ** -9, 1 + 2 ** -9, -(1 + 2 ** -9), 1.999, 65504, 65520, -65520,
      6.1e-5, 6e-5, -6e-5, 5.96e-8, 2 ** -14, 2 ** -15, 3e38, -3e38, 1e-40, -1e-40, 1e300, -1e300, 1e-310, 0.1, -0.1, 1 / 3, 448, 449, 57344, 61440];
    const formats = ["exponent_bits=5, mantissa_bits=10", "exponent_bits=8, mantissa_bits=7", "exponent_bits=4, mantissa_bits=3",
      "exponent_bits=2, mantissa_bits=0", "exponent_bits=11, mantissa_bits=52", "exponent_bits=3, mantissa_bits=1"];
    const ops = formats.map((f) => `reduce-precision|${f}`);
    // f32 repeated past the size at which the loops take their vector forms (C's: 16384 elements).
    const many = Array.from({ length: Math.ceil(20000 / values.length) }, () => values).flat();
    for (const type of ["f32", "f64", "f16", "bf16"] as const) check(t, backend, ops, type, type === "f32" ? many : values);
  });

  test(`float to integer convert truncates, saturates at the bounds and takes NaN to 0 (${backend})`, (t) => {
    for (const from of ["f32", "f64", "f16", "bf16"] as const) {
      for (const to of INTS) {
        const { min, max } = integerRange(to);
        // The bounds, just inside and outside them (as far as the source type tells them apart), ±0.5 and ±1.5 around them.
        const near = [min, max].flatMap((v) => [-1.5, -1, -0.5, 0, 0.5, 1, 1.5].map((d) => Number(v) + d));
        const values = [NaN, -NaN, Infinity, -Infinity, 0, -0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, -2.5, 1e30, -1e30, 3e9, -3e9, 2 ** 31, -(2 ** 31), 2 ** 63, -(2 ** 63), 2 ** 64, ...near];
        // Repeated past the size at which the loops take their vector forms (C's: 16384 elements).
        const reps = from === "f32" ? Math.ceil(20000 / values.length) : 1;
        check(t, backend, ["convert"], from, Array.from({ length: reps }, () => values).flat(), undefined, to);
      }
    }
  });

  test(`float maximum and minimum propagate NaN and order -0 below +0 (${backend})`, (t) => {
    const edges = [NaN, -0, 0, 1, -1, Infinity, -Infinity, 1.5, -2.5];
    const [a0, b0] = pairs(edges, edges);
    // Repeated past the size at which the loops take their vector forms (C's: 16384 elements).
    const reps = Math.ceil(20000 / a0.length);
    const a = Array.from({ length: reps }, () => a0).flat();
    const b = Array.from({ length: reps }, () => b0).flat();
    for (const type of ["f32", "f64", "bf16", "f16"] as const) {
      check(t, backend, ["maximum", "minimum"], type, type === "f32" ? a : a0, type === "f32" ? b : b0);
    }
  });
}

test("legalize leaves no integer negation or abs, and leaves float ones and converts alone", () => {
  for (const type of INTS) {
    const g = new KernelGraph();
    const x = g.load(0, type, g.variable(0, 8));
    for (const op of ["neg", "abs"] as const) {
      const ops = reachable(g, [legalize(g, g.op(op, type, [x]))]).map((id) => g.node(id).op);
      assert.ok(!ops.includes(op), `${op} on ${type} still has ${op}: ${ops.join(" ")}`);
    }
  }
  const g = new KernelGraph();
  const f = g.load(0, "f32", g.variable(0, 8));
  for (const op of ["neg", "abs"] as const) {
    const n = g.op(op, "f32", [f]);
    assert.equal(legalize(g, n), n);
  }
  const c = g.op("convert", "s32", [f]);
  assert.equal(legalize(g, c), c);
});

test("legalize leaves no sign for a renderer, on any integer or float type", () => {
  for (const type of [...INTS, "f32", "f64", "bf16", "f16", "f8e4m3fn"] as const) {
    const g = new KernelGraph();
    const x = g.load(0, type, g.variable(0, 8));
    const ops = reachable(g, [legalize(g, g.op("sign", type, [x]))]).map((id) => g.node(id).op);
    assert.ok(!ops.includes("sign"), `sign on ${type} still has sign: ${ops.join(" ")}`);
  }
});

test("legalize leaves no total-order compare for a renderer but f16's and bf16's, and leaves the others alone", () => {
  for (const type of ["f16", "bf16"] as const) {
    const g16 = new KernelGraph();
    const h = g16.load(0, type, g16.variable(0, 8));
    const kept = g16.op("compare", "pred", [h, h], "LT_TOTAL");
    assert.equal(legalize(g16, kept), kept);
  }
  for (const type of ["f32", "f64", "f8e4m3fn", "f8e8m0fnu", "f4e2m1fn"] as const) {
    const g = new KernelGraph();
    const x = g.load(0, type, g.variable(0, 8));
    const y = g.load(1, type, g.variable(0, 8));
    const ops = reachable(g, [legalize(g, g.op("compare", "pred", [x, y], "LT_TOTAL"))]).map((id) => g.node(id));
    assert.ok(!ops.some((n) => n.op === "compare" && String(n.attr).endsWith("_TOTAL")), `total compare on ${type} left: ${ops.map((n) => n.op).join(" ")}`);
    const plain = g.op("compare", "pred", [x, y], "LT");
    assert.equal(legalize(g, plain), plain);
  }
});

test("legalize leaves no isFinite of f32 or f64 for a renderer, and keeps the narrower floats (f16, bf16)", () => {
  for (const type of ["f32", "f64", "f16", "bf16"] as const) {
    const g = new KernelGraph();
    const x = g.load(0, type, g.variable(0, 8));
    const n = g.op("isFinite", "pred", [x]);
    const ops = reachable(g, [legalize(g, n)]).map((id) => g.node(id).op);
    assert.equal(ops.includes("isFinite"), type === "f16" || type === "bf16", `isFinite on ${type}: ${ops.join(" ")}`);
  }
});

test("legalize leaves no integer divide, remainder or shift for a renderer, and leaves floats and indices alone", () => {
  for (const type of INTS) {
    const g = new KernelGraph();
    const x = g.load(0, type, g.variable(0, 8));
    const y = g.load(1, type, g.variable(0, 8));
    for (const op of ["div", "rem", "shl", "shrL", "shrA"] as const) {
      const raw = g.op(op, type, [x, y]);
      const legal = legalize(g, raw);
      assert.notEqual(legal, raw, `${op} on ${type}`);
      const ops = reachable(g, [legal]).map((id) => g.node(id).op);
      for (const bad of ["div", "rem", "shl", "shrL", "shrA"]) assert.ok(!ops.includes(bad as never), `${op} on ${type} still has ${bad}: ${ops.join(" ")}`);
    }
  }
  const g = new KernelGraph();
  const x = g.load(0, "f32", g.variable(0, 8));
  for (const op of ["div", "rem", "max", "min"] as const) {
    const n = g.op(op, "f32", [x, x]);
    assert.equal(legalize(g, n), n);
  }
});

test("legalIndex hands toIdx only values within s32's range: 64-bit and u32 starts clamped, the narrower ones as they are", () => {
  for (const type of INTS) {
    const g = new KernelGraph();
    const idx = legalIndex(g, g.load(0, type, g.iconst(0)));
    const nodes = reachable(g, [idx]).map((id) => g.node(id));
    const arg = g.node(g.node(idx).args[0]!);
    const { min, max } = integerRange(arg.type as ElementType);
    assert.ok(min >= -(2n ** 31n) && max < 2n ** 31n, `toIdx of ${type} reads ${arg.type}`);
    const clamps = nodes.filter((n) => n.op === "min" || n.op === "max").length;
    assert.equal(clamps, type === "u32" || type === "u64" ? 1 : type === "s64" ? 2 : 0, `clamps of ${type}`);
  }
});

for (const backend of ["wasm", "native"] as const) {
  test(`dynamic-slice starts of every integer type at their edges match the interpreter (${backend})`, (t) => {
    if (backend === "native" && typeof nativeToolchain() === "string") return t.diagnostic(`native skipped: ${nativeToolchain() as string}`);
    // One fused slice per type (the slice's add makes it a loop kernel), every start an edge of its type.
    const lines = INTS.map((type, k) => `  i${k} = ${type}[] parameter(${1 + 2 * k})\n  j${k} = ${type}[] parameter(${2 + 2 * k})\n`
      + `  d${k} = f32[3,4] dynamic-slice(x, i${k}, j${k}), dynamic_slice_sizes={3,4}\n  r${k} = f32[3,4] add(d${k}, d${k})\n`);
    const module = parseHlo(`HloModule m\nENTRY e {\n  x = f32[10,8] parameter(0)\n${lines.join("")}`
      + `  ROOT r = (${INTS.map(() => "f32[3,4]").join(", ")}) tuple(${INTS.map((_, k) => `r${k}`).join(", ")})\n}\n`);
    const exe = compileSync(module, { backend });
    try {
      assert.ok(backend === "native" ? exe.program.kernels.some(isProgramNativeKernel) : exe.program.kernels.length > 0, exe.dump());
      const x = Literal.fromValues("f32", [10, 8], Array.from({ length: 80 }, (_, i) => i));
      // The bounds, a small start, and (64-bit) a start whose low 32 bits alone would read as 3.
      const wraps = (lo: bigint, hi: bigint): bigint => (lo < -(2n ** 32n) ? 3n - 2n ** 32n : hi > 2n ** 32n ? 2n ** 32n + 3n : 1n);
      const edges = [(lo: bigint) => lo, (_lo: bigint, hi: bigint) => hi, () => 2n, wraps];
      for (const pick of edges) {
        for (const other of edges) {
          const starts = INTS.flatMap((type) => {
            const { min, max } = integerRange(type);
            return [Literal.scalar(type, asType(type, pick(min, max)) as never), Literal.scalar(type, asType(type, other(min, max)) as never)];
          });
          const args = [x, ...starts];
          const d = firstDifference(evaluate(module.entry, args), exe.run(args), (p, q) => Object.is(p, q));
          assert.equal(d, undefined, `${backend}: ${d}`);
        }
      }
    } finally {
      exe.delete();
    }
  });
}
