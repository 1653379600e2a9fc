// The adapter's f32 arithmetic ceiling, measured: a WGSL kernel of independent FMA chains
// (no memory traffic beyond one store an invocation), timed on the device the bench's
// xlats-webgpu runner uses. Issue 23 asks for the 4096 matmul at "at least 50% of the
// adapter's f32 peak"; a datasheet's figure assumes clocks and a driver that the machine
// may not have, so the ceiling is read in the same sitting, as harness/peak.ts does for
// the CPU's FMA units.

import { BUFFER_USAGE, type GpuComputePipeline, type GpuDevice } from "../../src/compiler/webgpu/gpu_types.js";

/** Invocations a dispatch: 4096 workgroups of 256, several waves of any GPU's resident threads. */
const WORKGROUP = 256;
const WORKGROUPS = 4096;
/** Independent vec4 accumulators an invocation: enough chains to cover an FMA unit's latency. */
const CHAINS = 8;
/** Their FMAs written out this many times in one trip of the loop, so the loop's own instructions are few beside them. */
const UNROLL = 4;
const FLOPS_PER_TRIP = CHAINS * UNROLL * 4 * 2;

/**
 * The kernel: `trips` comes from a buffer (the compiler cannot fold the loop), and the sum
 * of the accumulators is stored (it cannot drop it). Each accumulator starts from the
 * invocation's index, so no two chains are the same.
 */
function peakKernel(): string {
  const chains = Array.from({ length: CHAINS }, (_, i) => i);
  const step = chains.map((i) => `a${i} = fma(a${i}, b, c);`).join(" ");
  return `struct Params { trips: u32, b: f32, c: f32, unused: f32 }
@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read_write> sink: array<f32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let b = vec4<f32>(params.b);
  let c = vec4<f32>(params.c);
  let seed = f32(id.x) * 1e-7;
${chains.map((i) => `  var a${i} = vec4<f32>(seed + ${i}.0, seed + ${i}.25, seed + ${i}.5, seed + ${i}.75);`).join("\n")}
  for (var t = 0u; t < params.trips; t = t + 1u) {
${Array.from({ length: UNROLL }, () => `    ${step}`).join("\n")}
  }
  let s = ${chains.map((i) => `a${i}`).join(" + ")};
  sink[id.x] = s.x + s.y + s.z + s.w;
}
`;
}

export interface GpuPeak {
  /** The best rate of the timed dispatches, GFLOP/s (an FMA is two FLOPs). */
  readonly gflops: number;
  /** How it was measured, for the report. */
  readonly how: string;
}

/**
 * The f32 FMA rate of `device`: the loop's trip count doubled until one dispatch takes at
 * least `minSeconds` (from submit to onSubmittedWorkDone), then the best of `repeats` such
 * dispatches. Or why it could not be measured.
 */
export async function measureGpuPeak(device: GpuDevice, minSeconds = 0.2, repeats = 3): Promise<GpuPeak | string> {
  const invocations = WORKGROUP * WORKGROUPS;
  let pipeline: GpuComputePipeline;
  try {
    const module = device.createShaderModule({ code: peakKernel(), label: "fma-peak" });
    pipeline = await device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" }, label: "fma-peak" });
  } catch (e) {
    return `the FMA kernel did not build: ${String((e as Error).message ?? e).split("\n")[0]}`;
  }
  const params = device.createBuffer({ size: 16, usage: BUFFER_USAGE.STORAGE | BUFFER_USAGE.COPY_DST });
  const sink = device.createBuffer({ size: invocations * 4, usage: BUFFER_USAGE.STORAGE });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: params } }, { binding: 1, resource: { buffer: sink } }] });
  const dispatch = async (trips: number): Promise<number> => {
    // b just under 1 and a small c: the chains stay finite and normal for any trip count.
    const data = new ArrayBuffer(16);
    new Uint32Array(data, 0, 1)[0] = trips;
    new Float32Array(data, 4, 2).set([0.9999999, 1e-7]);
    device.queue.writeBuffer(params, 0, new Uint8Array(data));
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(WORKGROUPS);
    pass.end();
    const t0 = performance.now();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    return (performance.now() - t0) / 1000;
  };
  try {
    await dispatch(1); // the pipeline's first run (its upload, any lazy compile): not timed
    let trips = 1;
    let seconds = await dispatch(trips);
    while (seconds < minSeconds && trips < 1 << 20) {
      trips *= seconds < minSeconds / 16 ? 8 : 2;
      seconds = await dispatch(trips);
    }
    let best = seconds;
    for (let r = 1; r < repeats; r++) best = Math.min(best, await dispatch(trips));
    const gflops = (invocations * trips * FLOPS_PER_TRIP) / best / 1e9;
    return {
      gflops,
      how: `WGSL, ${invocations} invocations (${WORKGROUPS} workgroups of ${WORKGROUP}) x ${trips} trips x ${CHAINS * UNROLL} vec4 FMAs, ` +
        `the fastest of ${repeats} dispatches (${(best * 1000).toFixed(1)} ms, submit to onSubmittedWorkDone)`,
    };
  } finally {
    params.destroy();
    sink.destroy();
  }
}
