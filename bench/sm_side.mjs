// temp probe (not committed)
import { createRunner } from "./peers/tfjs_wasm.mjs";
import { createWasmRunner } from "../dist/bench/runners/xlats_wasm.js";
const kind = process.argv[2] ?? "softmax";
const w = kind === "softmax" ? { kind, rows: 4096, cols: 1024 } : kind === "add" ? { kind, n: 4 * 1024 * 1024 } : { kind, n: 16 * 1024 * 1024 };
const mk = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = Math.sin(i * 0.37) * 4; return a; };
const inputs = kind === "add" ? [mk(w.n), mk(w.n)] : kind === "softmax" ? [mk(w.rows * w.cols)] : [mk(w.n)];
const shapes = kind === "softmax" ? [[w.rows, w.cols]] : inputs.map(() => [w.n]);
const tf = createRunner({ threads: 1 }); await tf.init();
const xl = createWasmRunner(1); await xl.init();
const pt = await tf.setup(w, inputs, shapes), px = await xl.setup(w, inputs, shapes);
const best = { tf: 1e9, xl: 1e9 };
for (let i = 0; i < 40; i++) for (const [k, p] of [["tf", pt], ["xl", px]]) { const t0 = performance.now(); await p.run(); const t = performance.now() - t0; if (t < best[k]) best[k] = t; }
console.log(kind, "tfjs", best.tf.toFixed(3), "xlats", best.xl.toFixed(3), "ratio", (best.tf / best.xl).toFixed(2));
process.exit(0);
