// `xlats print --lower-chlo`: the StableHLO decompositions of CHLO's elementary functions
// print without chlo ops (erf aside, an XLA op), read back, and compute the functions:
// against closed forms (acos(-1) = π, asin(-½) = -π/6, atan(1) = π/4, acosh(2) = log(2+√3),
// asinh(1) = log(1+√2), atanh(½) = ½ log 3, cosh/sinh from e, erfc(0) = 1) and the
// neighbours of next_after worked out by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { lowerChloModule } from "../../src/compiler/expansions/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { Literal } from "../../src/types/literal.js";
import { ulpDistance } from "../support/ulp.js";
import { tempFiles, xlats } from "../cli/helpers.js";

const FUNCTIONS = ["acos", "asin", "atan", "acosh", "asinh", "atanh", "cosh", "sinh", "erfc"];

function program(t: string): string {
  const type = `tensor<${t}>`;
  const body = FUNCTIONS.map((f, i) => `    %${i} = chlo.${f} %x : ${type} -> ${type}`).join("\n");
  return `func.func @main(%x: ${type}, %y: ${type}) -> (${FUNCTIONS.map(() => type).join(", ")}, ${type}) {
${body}
    %n = chlo.next_after %x, %y : ${type}, ${type} -> ${type}
    return ${FUNCTIONS.map((_, i) => `%${i}`).join(", ")}, %n : ${FUNCTIONS.map(() => type).join(", ")}, ${type}
  }`;
}

/** Runs `fn` on each x after lowering, printing and reading back. */
function lowered(t: "f32" | "f64", xs: readonly number[], ys: readonly number[]): number[][] {
  const printed = printStableHlo(lowerChloModule(parseStableHlo(program(`${xs.length}x${t}`))));
  assert.doesNotMatch(printed, /chlo\.(?!erf )/, "only chlo.erf remains");
  const r = evaluate(parseStableHlo(printed).entry, [Literal.from(t, [...xs]), Literal.from(t, [...ys])]);
  return r.elements.map((e) => e.toNumbers());
}

test("the decompositions compute the functions (f64 and f32)", () => {
  for (const t of ["f64", "f32"] as const) {
    const round = t === "f32" ? Math.fround : (v: number) => v;
    const tol = 4;
    const [acos, asin, atan, , , atanh, , , erfc] = lowered(t, [-1, -0.5, 1, 0.5, 0], [0, 0, 0, 0, 0]);
    const close = (got: number, want: number, what: string): void => {
      const d = ulpDistance(t, got, round(want));
      assert.ok(d <= tol, `${t} ${what}: ${got} vs ${want} (${d} ulp)`);
    };
    close(acos![0]!, Math.PI, "acos(-1)");
    close(asin![1]!, -Math.PI / 6, "asin(-1/2)");
    close(atan![2]!, Math.PI / 4, "atan(1)");
    close(atanh![3]!, Math.log(3) / 2, "atanh(1/2)");
    close(erfc![4]!, 1, "erfc(0)");
    const [, , , acosh, asinh, , cosh, sinh] = lowered(t, [2, 1, 1, 1e30, 1e-10], [0, 0, 0, 0, 0]);
    close(acosh![0]!, Math.log(2 + Math.sqrt(3)), "acosh(2)");
    close(asinh![1]!, Math.log(1 + Math.SQRT2), "asinh(1)");
    close(cosh![2]!, (Math.E + 1 / Math.E) / 2, "cosh(1)");
    close(sinh![2]!, (Math.E - 1 / Math.E) / 2, "sinh(1)");
    close(asinh![3]!, Math.log(2e30), "asinh(1e30)");
    close(sinh![4]!, 1e-10, "sinh(1e-10)");
  }
});

test("next_after's bit-pattern decomposition", () => {
  const n = lowered("f64", [1, 1, 0, -1, 2, NaN], [2, 0, -1, -2, 2, 1]).at(-1)!;
  assert.deepEqual(n.slice(0, 5), [1 + 2 ** -52, 1 - 2 ** -53, -(2 ** -1074), -1 - 2 ** -52, 2]);
  assert.ok(Number.isNaN(n[5]!));
  const f = lowered("f32", [1, 0], [2, 1]).at(-1)!;
  assert.deepEqual(f, [1 + 2 ** -23, 2 ** -149]);
});

test("xlats print --lower-chlo", () => {
  const dir = tempFiles({ "p.mlir": program("3xf32") });
  const plain = xlats("print", join(dir, "p.mlir"));
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /chlo\.acosh/);
  const low = xlats("print", "--lower-chlo", join(dir, "p.mlir"));
  assert.equal(low.code, 0, low.stderr);
  assert.doesNotMatch(low.stdout, /chlo\.acosh/);
  assert.match(low.stdout, /stablehlo\.atan2/);
});

test("cosh and sinh in f32 stay within 2 ulp up to overflow (no rounding of x + log ½, no early overflow)", () => {
  // x + log ½ rounds by half an ulp of x, e.g. 24 ulp of the result at x = 33.25; the
  // decomposition uses ½e^x ± ½e^-x, and e^(|x|/2)·½e^(|x|/2) within a factor e of overflow.
  const xs = [1.5, 10, 33.25, 60, 87, 87.5, 88.5, 88.72, 89.4, -33.25, -88.5, -89.4].map(Math.fround);
  const [, , , , , , cosh, sinh] = lowered("f32", xs, xs.map(() => 0));
  xs.forEach((x, i) => {
    for (const [name, got, want] of [["cosh", cosh![i]!, Math.cosh(x)], ["sinh", sinh![i]!, Math.sinh(x)]] as const) {
      const expected = Math.fround(want);
      assert.ok(Number.isFinite(expected), `${name}(${x}) overflows f32`);
      const d = ulpDistance("f32", got, expected);
      assert.ok(d <= 2, `f32 ${name}(${x}): ${got} vs ${expected} (${d} ulp)`);
    }
  });
});
