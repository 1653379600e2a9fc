// Run by cpu_caches.test.ts in a fresh process (the cache sizes are detected once a
// process, $XLATS_NATIVE_CPU_CACHES among their sources): compiles products on the native
// backend at two threads, runs them on fixed operands and prints, as JSON, the sizes the
// toolchain found and where from, a hash of each result's bytes (for the parent to
// compare between processes) and its largest error against the interpreter; or why the
// backend is not available.

import { createHash } from "node:crypto";
import { compileSync } from "../../../src/compiler/index.js";
import { nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseHlo } from "../../../src/text/hlo/index.js";
import { Literal } from "../../../src/types/literal.js";
import { rng } from "../../support/prng.js";

const t = nativeToolchain();
if (typeof t === "string") {
  process.stdout.write(JSON.stringify({ unavailable: t }));
} else {
  const random = rng(47);
  // 100 rows (three blocks of A at a 256 KiB L2), k 600 (three blocks of 256, four of 160), n 300 (three chunks at 256 KiB).
  const products = (["f32", "f64"] as const).map((type) => {
    const module = parseHlo(`HloModule caches_${type}
ENTRY e {
  a = ${type}[100,600] parameter(0)
  b = ${type}[600,300] parameter(1)
  ROOT r = ${type}[100,300] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`);
    const args = [[100, 600], [600, 300]].map((dims) => Literal.fromValues(type, dims, Array.from({ length: dims[0]! * dims[1]! }, () => random() * 2 - 1)));
    const want = evaluate(module.entry, args);
    const exe = compileSync(module, { backend: "native", threads: 2 });
    try {
      const got = exe.run(args);
      const [w, g] = [want.toNumbers(), got.toNumbers()];
      const error = Math.max(...w.map((x, i) => Math.abs(x - g[i]!)));
      const bytes = new Uint8Array(got.data.buffer as ArrayBuffer, got.data.byteOffset, got.data.byteLength);
      return { type, error, sha: createHash("sha256").update(bytes).digest("hex") };
    } finally {
      exe.delete();
    }
  });
  process.stdout.write(JSON.stringify({ caches: t.cpu.caches, from: t.cachesFrom, products }));
}
