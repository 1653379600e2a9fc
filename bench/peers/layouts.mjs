// Layout helpers for the peers whose convolution is NCHW / OIHW only (onnxruntime, jax-js):
// they get their inputs in their native layout, converted before timing, and their output
// converted back to NHWC for the check, after timing.

export function nhwcToNchw(x, n, h, w, c) {
  const y = new Float32Array(x.length);
  for (let b = 0; b < n; b++) for (let i = 0; i < h; i++) for (let j = 0; j < w; j++) for (let k = 0; k < c; k++) {
    y[((b * c + k) * h + i) * w + j] = x[((b * h + i) * w + j) * c + k];
  }
  return y;
}

export function nchwToNhwc(x, n, c, h, w) {
  const y = new Float32Array(x.length);
  for (let b = 0; b < n; b++) for (let k = 0; k < c; k++) for (let i = 0; i < h; i++) for (let j = 0; j < w; j++) {
    y[((b * h + i) * w + j) * c + k] = x[((b * c + k) * h + i) * w + j];
  }
  return y;
}

export function hwioToOihw(k, kh, kw, ci, co) {
  const y = new Float32Array(k.length);
  for (let i = 0; i < kh; i++) for (let j = 0; j < kw; j++) for (let c = 0; c < ci; c++) for (let o = 0; o < co; o++) {
    y[((o * ci + c) * kh + i) * kw + j] = k[((i * kw + j) * ci + c) * co + o];
  }
  return y;
}

/** The conv inputs of a workload in NCHW / OIHW, and a function taking an NCHW output back to NHWC. */
export function convToChannelsFirst(w, inputs) {
  const { batch: n, height: h, width: wd, inChannels: ci, outChannels: co, kernel: k } = w;
  return {
    x: nhwcToNchw(inputs[0], n, h, wd, ci),
    kernel: hwioToOihw(inputs[1], k, k, ci, co),
    xDims: [n, ci, h, wd],
    kernelDims: [co, ci, k, k],
    outDims: [n, co, h, wd],
    back: (y) => nchwToNhwc(y, n, co, h, wd),
  };
}
