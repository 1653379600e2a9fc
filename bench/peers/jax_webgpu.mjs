// @jax-js/jax on its "webgpu" device, in a browser: jax.mjs's programs under jit, the
// arrays on the GPU (made before timing); a run waits for its outputs (blockUntilReady).

import { createRunner as createJaxRunner } from "./jax.mjs";

export function createRunner({ threads }) {
  return createJaxRunner({ threads, device: "webgpu" });
}
