// The page side of the browser benchmark (loaded by page.html, driven by run.ts): runs one
// runner at one thread count over some workloads with the Node bench's own harness
// (harness/measure.ts: makeInputs, setup, checkResult before timing, warm-up, median), and
// hands each cell to the driver as soon as it is known. Peers load from bench/peers/*.mjs
// through page.html's import map. Compiled with the rest of bench/ (no DOM lib: the few
// browser globals used are declared here).

import { measureRunner, type CellResult } from "../harness/measure.js";
import { planGpuWorkloads, planWorkloads } from "../harness/plan.js";
import { profileRunner, type WebGpuProfile } from "../harness/webgpu_profile.js";
import { gpuContext } from "../../src/compiler/webgpu/adapter.js";
import { describe } from "../workloads/specs.js";
import { adapterText, type AdapterInfoFields } from "../harness/gpu_sitting.js";

/** What run.ts asks for: one runner, one thread count, workloads as indices into the plan. */
export interface BenchRequest {
  readonly name: string;
  readonly threads: number;
  readonly quick: boolean;
  /** The indices are into the GPU benches' plan (planGpuWorkloads), not the CPU's. */
  readonly gpuPlan: boolean;
  readonly workloads: readonly number[];
}

export interface PageEnvironment {
  readonly userAgent: string;
  readonly crossOriginIsolated: boolean;
  readonly hardwareConcurrency: number;
  readonly sharedArrayBuffer: boolean;
  /** Whether this engine validates relaxed SIMD (xlats uses it where present). */
  readonly relaxedSimd: boolean;
  /** navigator.gpu's adapter (vendor, architecture, device, description), or why there is none. */
  readonly webgpuAdapter: string;
}

/** Facts about how a runner ran here (e.g. which tfjs-wasm build), for the table's notes. */
export interface RunInfo {
  readonly note?: string;
}

interface BrowserGlobals {
  readonly navigator: {
    readonly userAgent: string; readonly hardwareConcurrency: number;
    readonly gpu?: { requestAdapter(): Promise<{ readonly info: AdapterInfoFields } | null> };
  };
  readonly crossOriginIsolated?: boolean;
  /** Set by run.ts (page.exposeFunction): one cell as JSON. */
  readonly benchReport?: (json: string) => Promise<void>;
  /** Set by run.ts: the plan index about to run (its per-workload timeout starts). */
  readonly benchStart?: (index: number) => Promise<void>;
  xlatsBench?: unknown;
}

const page = globalThis as unknown as BrowserGlobals;

interface TfEnv { set(flag: string, value: boolean): void; getAsync(flag: string): Promise<boolean> }
interface TfCore { env(): TfEnv }

/** A module by bare name (resolved by the page's import map; never by tsc). */
async function importBare<T>(specifier: string): Promise<T> {
  return (await import(specifier)) as T;
}

/**
 * Before the harness creates the runner: tfjs-wasm at 1 thread gets its single-threaded SIMD
 * build (as in Node) rather than the threaded build at 1 thread; jax-js at 1 thread gets no
 * Worker pool (as in Node), at 2 threads its pool of navigator.hardwareConcurrency workers.
 * Returns why the runner cannot run here, or undefined.
 */
async function prepare(name: string, threads: number): Promise<string | undefined> {
  if (threads > 1 && page.crossOriginIsolated !== true) return "page not cross-origin isolated: no wasm threads";
  if (name === "tfjs-wasm") {
    const tf = await importBare<TfCore>("@tensorflow/tfjs-core");
    await importBare<unknown>("@tensorflow/tfjs-backend-wasm"); // registers the flag set below
    if (threads === 1) tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
    else if (!(await tf.env().getAsync("WASM_HAS_MULTITHREAD_SUPPORT"))) return "tfjs-wasm: no threaded build here";
  }
  if (name === "jax-js") {
    if (threads === 1) Object.defineProperty(globalThis, "Worker", { value: undefined, configurable: true });
    else if (page.navigator.hardwareConcurrency !== threads) {
      return `jax-js sizes its pool by navigator.hardwareConcurrency (${page.navigator.hardwareConcurrency}), not ${threads}`;
    }
  }
  if (name === "xlats-interp" || name === "ort-node") return `${name} is not a browser runner`;
  return undefined;
}

async function runInfo(name: string, threads: number): Promise<RunInfo> {
  if (name === "tfjs-wasm") {
    const tf = await importBare<TfCore>("@tensorflow/tfjs-core");
    const threaded = await tf.env().getAsync("WASM_HAS_MULTITHREAD_SUPPORT");
    return { note: `tfjs-wasm ${threads}t: ${threaded ? "threaded SIMD build, setThreadsCount(" + threads + ")" : "single-threaded SIMD build"}` };
  }
  return {};
}

async function runBench(request: BenchRequest): Promise<RunInfo> {
  const fullPlan = (request.gpuPlan ? planGpuWorkloads : planWorkloads)(request.quick);
  const plan = request.workloads.map((i) => fullPlan[i]!);
  const config = { name: request.name, threads: request.threads };
  // Bindings are sent at the call, in order, even while a long synchronous run follows:
  // not awaited, so the driver's timeout starts when the workload does.
  const report = (cell: CellResult): void => { void page.benchReport?.(JSON.stringify(cell)); };
  const reason = await prepare(request.name, request.threads).catch((e: unknown) => `prepare failed: ${String(e)}`);
  if (reason !== undefined) {
    for (const p of plan) {
      report({ runner: config, kind: p.kind, label: describe(p.full), outcome: { status: "na", reason } });
    }
    return {};
  }
  await measureRunner(config, plan, request.quick, report, (p) => { void page.benchStart?.(fullPlan.indexOf(p)); });
  return runInfo(request.name, request.threads);
}

/** True when a function using f32x4.relaxed_madd validates (and plain SIMD does, as a control). */
function validatesRelaxedSimd(): boolean {
  const zero = [0xfd, 0x0c, ...new Array<number>(16).fill(0)]; // v128.const 0
  const module = (operands: number, op: readonly number[]): Uint8Array => {
    const body = [0x00, ...new Array<number[]>(operands).fill(zero).flat(), ...op, 0x0b];
    return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,
      0x03, 0x02, 0x01, 0x00, 0x0a, body.length + 2, 0x01, body.length, ...body]);
  };
  const wasm = WebAssembly as unknown as { validate(bytes: Uint8Array): boolean };
  return wasm.validate(module(2, [0xfd, 0xe4, 0x01])) && wasm.validate(module(3, [0xfd, 0x85, 0x02]));
}

async function webgpuAdapter(): Promise<string> {
  const gpu = page.navigator.gpu;
  if (gpu === undefined) return "none (no navigator.gpu)";
  const adapter = await gpu.requestAdapter();
  if (adapter === null) return "none (requestAdapter gave null)";
  return adapterText(adapter.info);
}

async function environment(): Promise<PageEnvironment> {
  return {
    userAgent: page.navigator.userAgent,
    crossOriginIsolated: page.crossOriginIsolated === true,
    hardwareConcurrency: page.navigator.hardwareConcurrency,
    sharedArrayBuffer: typeof SharedArrayBuffer !== "undefined",
    relaxedSimd: validatesRelaxedSimd(),
    webgpuAdapter: await webgpuAdapter(),
  };
}

/** The GPU runners whose device the profile can reach: xlats' (the backend's), jax-js's (its getWebGPUDevice). */
async function gpuDeviceOf(name: string): Promise<unknown> {
  if (name === "xlats-webgpu") return (await gpuContext()).device;
  if (name === "jax-webgpu") return (await importBare<{ getWebGPUDevice(): unknown }>("@jax-js/jax")).getWebGPUDevice();
  throw new Error(`no profile for ${name}'s device`);
}

/** Where a GPU runner's run of `kind` goes in this page (harness/webgpu_profile.ts; driven by webgpu_profile.ts). */
async function profileWebGpu(request: { name: string; kind: string; reps: number; wgsl: boolean }): Promise<WebGpuProfile | string> {
  return profileRunner(request.name, request.kind, gpuDeviceOf, request.reps, request.wgsl);
}

page.xlatsBench = { runBench, environment, profileWebGpu };
