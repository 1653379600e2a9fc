// A WebGPU device for the GEMM and convolution kernel tests: Dawn through the `webgpu`
// npm package as the backend sets it up (node_gpu.ts), on SwiftShader here
// (VK_ICD_FILENAMES points at Chromium's ICD unless set). Runs one GpuKernel on host
// arrays and reads its output back; times it.
// acquireDevice returns a reason string instead of a device when the package, an ICD or
// an adapter is missing, for the tests to skip with.

import type { GpuKernel, GpuLimits } from "../../../src/compiler/webgpu/gemm_tiles_wgsl.js";
import { nodeGpu } from "../../../src/compiler/webgpu/node_gpu.js";
// The package's declarations of WebGPU's types (GPUDevice, GPUBufferUsage...), which this file uses as globals.
import type {} from "webgpu";

export interface TestDevice {
  /** Dawn's instance: held for the device's lifetime (Dawn crashes when it is collected while the device works). */
  readonly gpu: GPU;
  readonly device: GPUDevice;
  readonly limits: GpuLimits;
  readonly adapter: string;
  readonly features: ReadonlySet<string>;
  /** Pipelines by WGSL source, so that a test compiling a kernel twice pays once. */
  readonly pipelines: Map<string, GPUComputePipeline>;
}

export async function acquireDevice(): Promise<TestDevice | string> {
  // The backend's own Dawn set-up (its environment and device toggles: node_gpu.ts).
  const made = await nodeGpu();
  if (typeof made === "string") return made;
  const gpu = made as unknown as GPU;
  const adapter = await gpu.requestAdapter();
  if (adapter === null) return "the webgpu package found no adapter (is libvulkan1 installed? without a GPU, SwiftShader's ICD too)";
  const l = adapter.limits;
  const device = await adapter.requestDevice({
    requiredLimits: {
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    },
  });
  const d = device.limits;
  const info = adapter.info;
  return {
    gpu,
    device,
    limits: {
      maxComputeWorkgroupStorageSize: d.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: d.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: d.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupSizeY: d.maxComputeWorkgroupSizeY,
      maxComputeWorkgroupsPerDimension: d.maxComputeWorkgroupsPerDimension,
      maxStorageBufferBindingSize: d.maxStorageBufferBindingSize,
    },
    adapter: [info.vendor, info.architecture, info.device, info.description].filter((s) => s !== undefined && s !== "").join(" ") || "unnamed adapter",
    features: new Set(device.features),
    pipelines: new Map(),
  };
}

async function pipeline(dev: TestDevice, kernel: GpuKernel): Promise<GPUComputePipeline> {
  const cached = dev.pipelines.get(kernel.code);
  if (cached !== undefined) return cached;
  const module = dev.device.createShaderModule({ code: kernel.code });
  const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === "error");
  if (errors.length > 0) throw new Error(`WGSL rejected: ${errors.map((e) => `${e.lineNum}:${e.linePos} ${e.message}`).join("; ")}\n${kernel.code}`);
  const made = await dev.device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: kernel.entryPoint } });
  dev.pipelines.set(kernel.code, made);
  return made;
}

/** A prepared run: buffers bound, ready to dispatch and read back. */
export interface PreparedRun {
  dispatch(times?: number): void;
  read(binding: number): Promise<Uint8Array>;
  destroy(): void;
}

/**
 * Buffers for every binding (inputs[binding] copied in, zero-padded to the binding's
 * size; other bindings zeroed), bound to the kernel's pipeline.
 */
export async function prepare(dev: TestDevice, kernel: GpuKernel, inputs: ReadonlyMap<number, ArrayBufferView>): Promise<PreparedRun> {
  const { device } = dev;
  const made = await pipeline(dev, kernel);
  const buffers = new Map<number, GPUBuffer>();
  for (const b of kernel.bindings) {
    const buffer = device.createBuffer({ size: b.byteSize, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const data = inputs.get(b.binding);
    if (data !== undefined) {
      const bytes = new Uint8Array(b.byteSize);
      bytes.set(new Uint8Array(data.buffer, data.byteOffset, Math.min(data.byteLength, b.byteSize)));
      device.queue.writeBuffer(buffer, 0, bytes);
    }
    buffers.set(b.binding, buffer);
  }
  const group = device.createBindGroup({
    layout: made.getBindGroupLayout(0),
    entries: kernel.bindings.map((b) => ({ binding: b.binding, resource: { buffer: buffers.get(b.binding)! } })),
  });
  return {
    dispatch(times = 1) {
      const encoder = device.createCommandEncoder();
      for (let t = 0; t < times; t++) {
        const pass = encoder.beginComputePass();
        pass.setPipeline(made);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(kernel.dispatch[0], kernel.dispatch[1], kernel.dispatch[2]);
        pass.end();
      }
      device.queue.submit([encoder.finish()]);
    },
    async read(binding) {
      const source = buffers.get(binding)!;
      const staging = device.createBuffer({ size: source.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source, 0, staging, 0, source.size);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const bytes = new Uint8Array(staging.getMappedRange().slice(0));
      staging.unmap();
      staging.destroy();
      return bytes;
    },
    destroy() {
      for (const b of buffers.values()) b.destroy();
    },
  };
}

/** Runs the kernel once on `inputs` and returns the output binding's bytes. */
export async function runOnce(dev: TestDevice, kernel: GpuKernel, inputs: ReadonlyMap<number, ArrayBufferView>): Promise<Uint8Array> {
  const run = await prepare(dev, kernel, inputs);
  try {
    if (kernel.dispatch[0] > 0) run.dispatch();
    const out = kernel.bindings.find((b) => b.role === "output")!;
    return await run.read(out.binding);
  } finally {
    run.destroy();
  }
}

/** Seconds per dispatch: `repeats` dispatches in one submission after a warm-up, waited on. */
export async function timeKernel(dev: TestDevice, kernel: GpuKernel, repeats: number): Promise<number> {
  const run = await prepare(dev, kernel, new Map());
  try {
    run.dispatch();
    await dev.device.queue.onSubmittedWorkDone();
    const start = performance.now();
    run.dispatch(repeats);
    await dev.device.queue.onSubmittedWorkDone();
    return (performance.now() - start) / 1000 / repeats;
  } finally {
    run.destroy();
  }
}
