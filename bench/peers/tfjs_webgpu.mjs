// @tensorflow/tfjs-backend-webgpu through tfjs-core's ops, in a browser: the programs of
// tfjs_wasm.mjs on the GPU. The inputs are tensors made and uploaded, and the pipelines
// compiled, by one run in setup; a run is the ops, then tfjs' queue submitted and waited
// on (onSubmittedWorkDone), outputs left on the GPU and disposed.

import { program } from "./tfjs_wasm.mjs";

export function createRunner({ threads }) {
  let tf;
  let backend;
  return {
    name: "tfjs-webgpu",
    threads,
    async init() {
      if (threads !== 1) return "one GPU queue: thread counts do not apply";
      if (globalThis.navigator?.gpu === undefined) return "no navigator.gpu in this page";
      tf = await import("@tensorflow/tfjs-core");
      await import("@tensorflow/tfjs-backend-webgpu"); // registers the "webgpu" backend
      if (!(await tf.setBackend("webgpu"))) return "tfjs' webgpu backend failed to start";
      await tf.ready();
      backend = tf.backend();
      return undefined;
    },
    async setup(w, inputs, shapes, firstWeight) {
      const t = inputs.map((data, i) => tf.tensor(data, shapes[i], "float32"));
      const fn = program(tf, w, t, firstWeight);
      if (fn === undefined) return `no program for ${w.kind}`;
      // tfjs batches its dispatches in an open compute pass: end it and submit (its own
      // methods, as its readback path does) before waiting on the queue.
      const finished = async () => {
        backend.endComputePassEncoder();
        backend.ensureCommandEncoderReady();
        backend.submitQueue();
        await backend.device.queue.onSubmittedWorkDone();
      };
      const run = async () => {
        const outs = tf.tidy(fn);
        await finished();
        tf.dispose(outs);
      };
      await run(); // uploads the inputs and compiles the pipelines, before the harness times anything
      return {
        run,
        result: async () => {
          const outs = tf.tidy(fn);
          const values = await Promise.all(outs.map(async (o) => Float32Array.from(await o.data())));
          tf.dispose(outs);
          return values;
        },
        dispose: () => tf.dispose(t),
      };
    },
  };
}
