// Streaming stores (native/stream.ts, the prelude's xk_stream): kernels that touch more
// than half the last-level cache gather each block of results in L1 and write it with
// non-temporal stores. Sized from this machine's cache so that they do stream here,
// the results must equal the interpreter's: loop kernels with a ragged
// last block (the out-of-line copy), and softmax's row pipeline on rows whose starts
// are 64-byte aligned (streamed) and rows whose starts are not (copied), on one thread
// and on two (each thread's stores fenced before the call returns).

import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { compileSync } from "../../../src/compiler/index.js";
import { nodeBuiltins, type NodeBuiltins } from "../../../src/compiler/native/node.js";
import { lastLevelCacheBytes, nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { isProgramNativeKernel } from "../../../src/compiler/routines.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { Literal } from "../../../src/types/literal.js";
import { firstDifference } from "../literal_compare.js";
import { rng } from "../../support/prng.js";
import { SOFTMAX } from "./native_support.js";

const toolchain = nativeToolchain();
const llc = typeof toolchain === "string" ? 0 : lastLevelCacheBytes(nodeBuiltins() as NodeBuiltins);

function needsStreaming(t: TestContext): boolean {
  if (typeof toolchain === "string") t.skip(`no C compiler: ${toolchain}`);
  else if (llc === 0) t.skip("the last-level cache's size is unknown here: no kernel streams");
  else if (llc > 256 * 2 ** 20) t.skip(`a ${llc >> 20} MiB last-level cache: the kernels that would stream are too large to check against the interpreter`);
  else return true;
  return false;
}

const random = rng(5);

/** The program on the native backend, on one thread and on two, against the interpreter. */
function compareWithInterpreter(text: string, args: readonly Literal[], close?: (a: unknown, b: unknown) => boolean): void {
  const module = parseHlo(text);
  const want = evaluate(module.entry, args);
  for (const threads of [1, 2]) {
    const exe = compileSync(module, { backend: "native", threads });
    try {
      for (const k of exe.program.kernels.filter(isProgramNativeKernel)) {
        const bytes = Number(/XK_STREAMS\((\d+)ull\)/.exec(k.c.source)?.[1] ?? 0);
        assert.ok(2 * bytes > llc, `${k.name} does not stream here (it touches ${bytes} bytes):\n${exe.dump()}`);
      }
      const d = firstDifference(want, exe.run(args), close);
      assert.equal(d, undefined, `${threads} thread(s): ${d}`);
    } finally {
      exe.delete();
    }
  }
}

test("loop kernels larger than half the last-level cache stream their outputs, ragged last block included", (t) => {
  if (!needsStreaming(t)) return;
  // Two kernels (y of three inputs, z of two): at least 12 bytes an element each, past half the cache; odd, so the last block is ragged.
  const n = Math.ceil(llc / 2 / 12) + 1001;
  const values = (): number[] => Array.from({ length: n }, () => (random() - 0.5) * 1000);
  const args = [values(), values(), values()].map((v) => Literal.fromValues("f32", [n], v));
  const text = `HloModule m
ENTRY e {
  a = f32[${n}] parameter(0)
  b = f32[${n}] parameter(1)
  c = f32[${n}] parameter(2)
  ab = f32[${n}] multiply(a, b)
  y = f32[${n}] add(ab, c)
  z = f32[${n}] subtract(a, c)
  ROOT t = (f32[${n}], f32[${n}]) tuple(y, z)
}
`;
  // Each op rounds to f32 in C as in the interpreter (no contraction): equal bit for bit.
  compareWithInterpreter(text, args);
});

test("softmax's row pipeline streams aligned rows and copies unaligned ones, equal to the interpreter", (t) => {
  if (!needsStreaming(t)) return;
  // 1024 columns: every row starts on a 64-byte line (streamed); 1000: most do not (copied).
  for (const cols of [1024, 1000]) {
    const rows = Math.ceil(llc / 2 / (8 * cols)) + 3;
    const x = Literal.fromValues("f32", [rows, cols], Array.from({ length: rows * cols }, () => (random() - 0.5) * 30));
    // exp within the backend's 3 ulp, the sum reassociated: relative closeness of the order of cols ulps.
    const close = (p: unknown, q: unknown): boolean => Math.abs((p as number) - (q as number)) <= 8 * cols * 2 ** -23 * Math.max(1e-6, Math.abs(p as number));
    compareWithInterpreter(SOFTMAX(rows, cols), [x], close);
  }
});
