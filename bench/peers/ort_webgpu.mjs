// onnxruntime-web's WebGPU execution provider (its JSEP build, ort.webgpu.min.mjs), in a
// browser. The feeds are GPU buffers on ORT's own device, written once before timing
// (Tensor.fromGpuBuffer), and the outputs stay there (preferredOutputLocation
// "gpu-buffer"): a run is session.run() and then waiting for ORT's GPU queue to finish,
// with nothing copied in or out. result() reads the outputs back (Tensor.getData()).

import { createSession } from "./ort_common.mjs";

export function createRunner({ threads }) {
  let ort;
  return {
    name: "ort-webgpu",
    threads,
    async init() {
      if (threads !== 1) return "one GPU queue: thread counts do not apply";
      if (globalThis.navigator?.gpu === undefined) return "no navigator.gpu in this page";
      ort = await import("onnxruntime-web/webgpu");
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.wasmPaths = new URL("../node_modules/onnxruntime-web/dist/", import.meta.url).href;
      return undefined;
    },
    async setup(w, inputs, shapes, firstWeight) {
      const made = await createSession(ort, w, inputs, shapes, firstWeight, { executionProviders: ["webgpu"], preferredOutputLocation: "gpu-buffer" });
      if (typeof made === "string") return made;
      const { session, model, feeds, dims, back } = made;
      const device = await ort.env.webgpu.device;
      const buffers = feeds.slice(0, firstWeight).map((data) => {
        // GPUBufferUsage.STORAGE | COPY_SRC | COPY_DST; sizes padded to 4 bytes as WebGPU requires.
        const buffer = device.createBuffer({ size: Math.ceil(data.byteLength / 4) * 4, usage: 0x80 | 0x04 | 0x08 });
        device.queue.writeBuffer(buffer, 0, data);
        return buffer;
      });
      const tensors = Object.fromEntries(buffers.map((buffer, i) =>
        [`in${i}`, ort.Tensor.fromGpuBuffer(buffer, { dataType: "float32", dims: dims[i] })]));
      const runOnce = async () => {
        const results = await session.run(tensors);
        await device.queue.onSubmittedWorkDone();
        return results;
      };
      const dispose = (results) => { for (const t of Object.values(results)) t.dispose(); };
      dispose(await runOnce()); // compiles ORT's pipelines before the harness times anything
      return {
        run: async () => dispose(await runOnce()),
        result: async () => {
          const results = await runOnce();
          const values = await Promise.all(model.outputs.map(async (n) => Float32Array.from(await results[n].getData())));
          dispose(results);
          return back(values);
        },
        dispose: async () => {
          await session.release();
          for (const b of buffers) b.destroy();
        },
      };
    },
  };
}
