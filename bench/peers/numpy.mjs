// numpy on its BLAS (OpenBLAS in the wheels), where `python3 -c "import numpy"` works:
// a Python process per runner (bench/peers/numpy_runner.py) that times its own runs, so
// the figures carry no inter-process latency. Threads: OPENBLAS_NUM_THREADS (and the
// OpenMP/MKL equivalents) for the BLAS calls; numpy's elementwise work is one thread.
// OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from its environment: set (as on
// some machines here), they force an old OpenBLAS kernel that halves its matmul.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

/** The environment numpy runs in: this one without the variables that pin OpenBLAS to an old kernel. */
function numpyEnvironment(env) {
  const { OPENBLAS_CORETYPE: _coretype, OPENBLAS_L2_SIZE: _l2, ...rest } = env;
  return rest;
}

const PYTHON = process.env.PYTHON ?? "python3";

export function createRunner({ threads }) {
  let child;
  let lines;
  let dir;
  let info = "";
  const ask = async (cmd) => {
    child.stdin.write(`${JSON.stringify(cmd)}\n`);
    const { value, done } = await lines.next();
    if (done) throw new Error("the numpy process ended");
    return JSON.parse(value);
  };
  return {
    name: "numpy",
    threads,
    init: async () => {
      const probe = spawnSync(PYTHON, ["-c", "import numpy"], { encoding: "utf8" });
      if (probe.status !== 0) return `no numpy here (${PYTHON} -c "import numpy" failed${probe.error ? `: ${probe.error.message}` : ""})`;
      const n = String(threads);
      child = spawn(PYTHON, [fileURLToPath(new URL("./numpy_runner.py", import.meta.url))], {
        stdio: ["pipe", "pipe", "inherit"],
        env: { ...numpyEnvironment(process.env), OPENBLAS_NUM_THREADS: n, OMP_NUM_THREADS: n, MKL_NUM_THREADS: n },
      });
      lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      dir = mkdtempSync(join(tmpdir(), "xlats-bench-numpy-"));
      const r = await ask({ op: "info" });
      info = r.ok ? `numpy ${r.numpy}, ${r.blas}` : "";
      return undefined;
    },
    setup: async (w, inputs, shapes) => {
      const files = inputs.map((a, i) => {
        const f = join(dir, `in${i}.f32`);
        writeFileSync(f, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
        return f;
      });
      const r = await ask({ op: "setup", workload: w, files, shapes });
      if (!r.ok) return r.reason ?? "setup failed";
      return {
        run: () => { throw new Error("numpy times its own runs (timeRuns)"); },
        timeRuns: async (policy) => {
          const t = await ask({ op: "time", ...policy });
          if (!t.ok) throw new Error(t.reason);
          return t.times;
        },
        result: async () => {
          const out = [0, 1, 2, 3, 4, 5].map((i) => join(dir, `out${i}.f32`));
          const res = await ask({ op: "result", files: out });
          if (!res.ok) throw new Error(res.reason);
          return res.shapes.map((_, i) => {
            const b = readFileSync(out[i]);
            return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
          });
        },
        detail: info || undefined,
      };
    },
    close: async () => {
      child?.stdin.end();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
