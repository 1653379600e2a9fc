// The part of the WebGPU API the backend uses, declared here rather than taken from
// @webgpu/types: that package comes with the optional `webgpu` dependency, and the build
// must not depend on an optional package being installed. The names follow the WebGPU
// specification; only the members called are listed.

/** GPUBufferUsage's flags (numeric values of the specification). */
export const BUFFER_USAGE = { MAP_READ: 0x0001, COPY_SRC: 0x0004, COPY_DST: 0x0008, UNIFORM: 0x0040, STORAGE: 0x0080, INDIRECT: 0x0100 } as const;
/** GPUMapMode.READ. */
export const MAP_READ = 0x0001;

export interface GpuLimits {
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly maxComputeWorkgroupsPerDimension: number;
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupSizeX: number;
  readonly maxComputeWorkgroupSizeY: number;
  readonly maxComputeWorkgroupStorageSize: number;
  readonly maxStorageBuffersPerShaderStage: number;
  readonly minStorageBufferOffsetAlignment: number;
}

export interface GpuAdapter {
  readonly limits: GpuLimits;
  readonly features: ReadonlySet<string>;
  readonly info?: { readonly vendor?: string; readonly architecture?: string; readonly device?: string; readonly description?: string; readonly isFallbackAdapter?: boolean };
  /** Where GPUAdapterInfo does not have it yet (older browsers). */
  readonly isFallbackAdapter?: boolean;
  requestDevice(descriptor?: { requiredLimits?: Record<string, number>; requiredFeatures?: string[] }): Promise<GpuDevice>;
}

export interface Gpu {
  requestAdapter(options?: { powerPreference?: "low-power" | "high-performance" }): Promise<GpuAdapter | null>;
}

export interface GpuBuffer {
  readonly size: number;
  mapAsync(mode: number, offset?: number, size?: number): Promise<void>;
  getMappedRange(offset?: number, size?: number): ArrayBuffer;
  unmap(): void;
  destroy(): void;
}

export interface GpuShaderModule {
  getCompilationInfo(): Promise<{ readonly messages: readonly { readonly type: string; readonly message: string; readonly lineNum: number }[] }>;
}

export interface GpuBindGroupLayout { readonly label?: string }
export interface GpuPipelineLayout { readonly label?: string }

/** GPUShaderStage.COMPUTE. */
export const SHADER_STAGE_COMPUTE = 0x4;
export interface GpuBindGroup { readonly label?: string }

export interface GpuComputePipeline {
  getBindGroupLayout(index: number): GpuBindGroupLayout;
}

export interface GpuComputePass {
  setPipeline(pipeline: GpuComputePipeline): void;
  setBindGroup(index: number, group: GpuBindGroup, dynamicOffsets?: readonly number[]): void;
  dispatchWorkgroups(x: number, y?: number, z?: number): void;
  /** Workgroup counts x, y, z: three u32 at `offset` (a multiple of 4) in a buffer with INDIRECT usage. */
  dispatchWorkgroupsIndirect(buffer: GpuBuffer, offset: number): void;
  end(): void;
}

export interface GpuCommandBuffer { readonly label?: string }

export interface GpuCommandEncoder {
  beginComputePass(): GpuComputePass;
  copyBufferToBuffer(source: GpuBuffer, sourceOffset: number, destination: GpuBuffer, destinationOffset: number, size: number): void;
  finish(): GpuCommandBuffer;
}

export interface GpuQueue {
  submit(buffers: readonly GpuCommandBuffer[]): void;
  writeBuffer(buffer: GpuBuffer, offset: number, data: ArrayBufferView, dataOffset?: number, size?: number): void;
  onSubmittedWorkDone(): Promise<void>;
}

export interface GpuDevice {
  readonly limits: GpuLimits;
  readonly queue: GpuQueue;
  readonly lost: Promise<{ readonly reason: string; readonly message: string }>;
  createBuffer(descriptor: { size: number; usage: number; mappedAtCreation?: boolean; label?: string }): GpuBuffer;
  createShaderModule(descriptor: { code: string; label?: string }): GpuShaderModule;
  createBindGroupLayout(descriptor: {
    entries: readonly { binding: number; visibility: number; buffer: { type: "storage" | "read-only-storage"; hasDynamicOffset?: boolean } }[];
    label?: string;
  }): GpuBindGroupLayout;
  createPipelineLayout(descriptor: { bindGroupLayouts: readonly GpuBindGroupLayout[]; label?: string }): GpuPipelineLayout;
  createComputePipelineAsync(descriptor: { layout: "auto" | GpuPipelineLayout; compute: { module: GpuShaderModule; entryPoint: string }; label?: string }): Promise<GpuComputePipeline>;
  createBindGroup(descriptor: {
    layout: GpuBindGroupLayout;
    entries: readonly { binding: number; resource: { buffer: GpuBuffer; offset?: number; size?: number } }[];
  }): GpuBindGroup;
  createCommandEncoder(): GpuCommandEncoder;
  pushErrorScope(filter: "validation" | "out-of-memory" | "internal"): void;
  popErrorScope(): Promise<{ readonly message: string } | null>;
  destroy(): void;
}
