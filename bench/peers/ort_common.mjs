// onnxruntime (web: the wasm build; node: the native CPU build) running the models of
// onnx_models.mjs. Inputs are ort.Tensors made once, before timing; the wasm build still
// copies every feed into its heap and every output out of it on each run() (it has no
// wasm-resident tensors), and that copy is part of its time.

import { buildOnnxModel } from "./onnx_models.mjs";
import { convToChannelsFirst } from "./layouts.mjs";

/** The feeds in the layout the ONNX models take (conv in NCHW/OIHW), and the way back for the outputs. */
function dimsOfShapes(w, inputs, shapes) {
  if (w.kind !== "conv") return { feeds: inputs, dims: shapes, back: (outs) => outs };
  const c = convToChannelsFirst(w, inputs);
  return { feeds: [c.x, c.kernel], dims: [c.xDims, c.kernelDims], back: (outs) => [c.back(outs[0])] };
}

/**
 * The workload's ONNX model (weights as initializers) in a session of `ort` with
 * `options`, and its feeds in the model's layout; or why the session failed.
 */
export async function createSession(ort, w, inputs, shapes, firstWeight, options) {
  const { feeds, dims, back } = dimsOfShapes(w, inputs, shapes);
  const model = buildOnnxModel(w, dims, feeds, firstWeight);
  try {
    const session = await ort.InferenceSession.create(model.bytes, { graphOptimizationLevel: "all", ...options });
    return { session, model, feeds, dims, back };
  } catch (e) {
    return `session failed: ${String(e.message ?? e).split("\n")[0]}`;
  }
}

/**
 * A runner over an onnxruntime module `ort` (loaded by `load()`); `sessionOptions(threads)`
 * gives the per-session options of the flavor.
 */
export function createOrtRunner({ name, threads, load, sessionOptions }) {
  let ort;
  return {
    name,
    threads,
    async init() {
      const r = await load(threads);
      if (typeof r === "string") return r;
      ort = r;
      return undefined;
    },
    async setup(w, inputs, shapes, firstWeight) {
      const made = await createSession(ort, w, inputs, shapes, firstWeight, sessionOptions(threads));
      if (typeof made === "string") return made;
      const { session, model, feeds, dims, back } = made;
      const tensors = Object.fromEntries(feeds.slice(0, firstWeight).map((data, i) => [`in${i}`, new ort.Tensor("float32", data, dims[i])]));
      const dispose = (results) => { for (const t of Object.values(results)) t.dispose?.(); };
      return {
        run: async () => dispose(await session.run(tensors)),
        result: async () => {
          const results = await session.run(tensors);
          return back(model.outputs.map((n) => Float32Array.from(results[n].data)));
        },
        dispose: () => session.release(),
      };
    },
  };
}
