// Where the WebGPU backend gets its GPU: `navigator.gpu` in a browser (or a worker), the
// `webgpu` npm package (Dawn's Node binding, an optional dependency) in Node, imported
// only when the backend is asked for, so the rest of the package never loads it. One
// device per process, made on first use and shared by every program compiled for it
// (the GEMM and convolution generators read the same adapter limits).
//
// Without a GPU, Dawn runs on SwiftShader, the software Vulkan driver Debian's chromium
// package installs: VK_ICD_FILENAMES points the Vulkan loader at it when the variable is
// unset and the driver's file exists (node_gpu.ts; the machines that test this backend
// have no GPU).

import { CompileError } from "../../types/errors.js";
import { backendNames } from "../../runtime/backend_registry.js";
import { importNodeAdapter, runningInNode } from "../../runtime/host_environment.js";
import type { Gpu, GpuAdapter, GpuDevice, GpuLimits } from "./gpu_types.js";

/** The process's GPU: its adapter's description and limits, and the device every program runs on. */
export interface GpuContext {
  /** The GPU entry point, kept alive with the device (Dawn's instance must outlive its devices: collected, it takes them down). */
  readonly gpu: Gpu;
  readonly device: GpuDevice;
  readonly adapter: GpuAdapter;
  readonly limits: GpuLimits;
  /** The adapter in words (vendor, architecture, device, the features the backend reads: featuresText), for dumps and benchmarks. */
  readonly description: string;
  /** Whether the device has WGSL's `subgroups` feature. */
  readonly subgroups: boolean;
  /** Whether the adapter runs on the CPU (a fallback adapter: SwiftShader), where starting a workgroup is costly (codegen.ts rowInvocationsFor, productStagingFor). */
  readonly software: boolean;
}

/**
 * The adapter's features the backend reads, in words: `subgroups` (requested and used
 * where present) and `shader-f16` (never requested: f16 is held as bits and computed in
 * f32 on every adapter, wgsl_values.ts HALF, so one path runs and is tested everywhere).
 */
function featuresText(features: ReadonlySet<string>): string {
  const has = (f: string): string => (features.has(f) ? f : `no ${f}`);
  return `${has("subgroups")}, ${has("shader-f16")}; f16 computed in f32 on its bits`;
}

const navigatorGpu = (): Gpu | undefined => (globalThis as { navigator?: { gpu?: Gpu } }).navigator?.gpu;

/** The backends left when this one has no GPU (for the error message). */
function remaining(): string {
  const names = backendNames().filter((n) => n !== "webgpu");
  return names.length === 0 ? "" : ` (the ${names.join(", ")} backends remain)`;
}

let pending: Promise<GpuContext> | undefined;

/**
 * The process's GPU device, acquired on first call: a CompileError saying what is
 * missing (no navigator.gpu, no webgpu package, no adapter) and which backends remain.
 */
export function gpuContext(): Promise<GpuContext> {
  pending ??= acquire().catch((e: unknown) => {
    pending = undefined;
    throw e;
  });
  return pending;
}

async function acquire(): Promise<GpuContext> {
  const inNode = runningInNode();
  let gpu: Gpu | string = navigatorGpu() ?? "this browser has no navigator.gpu (WebGPU is off, or the page is not a secure context)";
  if (navigatorGpu() === undefined && inNode) gpu = await (await importNodeAdapter<typeof import("./node_gpu.js")>(import.meta.url, "./node_gpu.js")).nodeGpu();
  if (typeof gpu === "string") throw new CompileError(`webgpu backend: ${gpu}${remaining()}`);
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (adapter === null) {
    const hint = inNode ? "; without a GPU, Dawn needs the Vulkan loader (apt's libvulkan1) and SwiftShader's driver (VK_ICD_FILENAMES)" : "";
    throw new CompileError(`webgpu backend: no WebGPU adapter${hint}${remaining()}`);
  }
  const a = adapter.limits;
  // The largest buffers the adapter allows (the backend keeps each device's memory in
  // one), and its largest workgroups and workgroup memory, which the kernels are sized by
  // (a device gets WebGPU's guaranteed limits unless it asks for more).
  const requiredLimits = {
    maxStorageBufferBindingSize: a.maxStorageBufferBindingSize,
    maxBufferSize: a.maxBufferSize,
    maxComputeInvocationsPerWorkgroup: a.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupSizeX: a.maxComputeWorkgroupSizeX,
    maxComputeWorkgroupSizeY: a.maxComputeWorkgroupSizeY,
    maxComputeWorkgroupStorageSize: a.maxComputeWorkgroupStorageSize,
  };
  const subgroups = adapter.features.has("subgroups");
  const device = await adapter.requestDevice({ requiredLimits, ...(subgroups ? { requiredFeatures: ["subgroups"] } : {}) });
  const info = adapter.info ?? {};
  const name = [info.vendor, info.architecture, info.device, info.description].filter((s) => s !== undefined && s !== "").join(" ") || "unnamed adapter";
  const description = `${name} (${featuresText(adapter.features)})`;
  const software = info.isFallbackAdapter === true || adapter.isFallbackAdapter === true;
  const context: GpuContext = { gpu, device, adapter, limits: device.limits, description: software ? `${description}, a software adapter` : description, subgroups, software };
  // A lost device is made again on the next gpuContext (unless a newer one has replaced it already).
  const mine = pending;
  void device.lost.then(() => {
    if (pending === mine) pending = undefined;
  });
  return context;
}

/** Destroys the process's device (the next gpuContext makes a new one); programs compiled for it can no longer run. */
export async function releaseGpu(): Promise<void> {
  const p = pending;
  pending = undefined;
  if (p === undefined) return;
  try {
    (await p).device.destroy();
  } catch {
    // It was never acquired: nothing to release.
  }
}

/**
 * Whether the backend may run here, decided without acquiring the device (which is
 * asynchronous): a browser's navigator.gpu, or Node (the package and the adapter are
 * checked when a program is compiled, with a CompileError saying which is missing).
 */
export function gpuAvailable(): true | string {
  if (navigatorGpu() !== undefined || runningInNode()) return true;
  return "no navigator.gpu in this environment";
}
