// What the GPU benches (bench/webgpu_node.ts in Node on Dawn, bench/browser/run.ts --webgpu
// in Chromium) say about their adapter and their runners, in the same words. No Node
// imports: the browser's page (page.ts) uses it too.

/** GPUAdapterInfo's fields, as far as an adapter has them. */
export interface AdapterInfoFields {
  readonly vendor?: string;
  readonly architecture?: string;
  readonly device?: string;
  readonly description?: string;
}

/** The adapter in words: vendor, architecture, device and driver description, those it has. */
export function adapterText(info: AdapterInfoFields | undefined): string {
  const fields = [info?.vendor, info?.architecture, info?.device, info?.description].filter((s) => s !== undefined && s !== "");
  return fields.join(" ") || "unnamed adapter";
}

/** Whether an adapter's words name a software rasterizer (SwiftShader, llvmpipe/lavapipe, WARP). */
export function looksSoftware(adapter: string): boolean {
  return /swiftshader|llvmpipe|lavapipe|microsoft basic render|\bwarp\b/i.test(adapter);
}

/** Said after a software adapter's name wherever figures are printed. */
export const SOFTWARE_CAVEAT = "software: the figures show that everything runs and is correct, not a GPU's speed";

/** The table's note on how the GPU runners run; `each` is what each runner gets ("page", "process"). */
export function gpuRunnersNote(each: string): string {
  return `GPU runners: one ${each} each, one GPU queue (no thread counts); inputs on the device before timing; a run ` +
    "ends when the GPU has finished it (xlats-webgpu, tfjs-webgpu and ort-webgpu wait on the queue's onSubmittedWorkDone, " +
    "jax-webgpu on blockUntilReady); ort-webgpu's feeds are GPU buffers (Tensor.fromGpuBuffer), its outputs stay on the GPU; " +
    "ort and jax-js take conv in NCHW/OIHW (converted before timing).";
}
