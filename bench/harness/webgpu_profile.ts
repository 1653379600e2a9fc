// Where a GPU runner's run goes, the same way for every library and in Node (Dawn) or a
// page (Chromium): the runner's device is instrumented by wrapping its methods (and
// those of the encoders and passes it makes), one run is recorded (the WebGPU calls it
// makes, each dispatch with its pipeline, bind groups and workgroup counts, when each
// submit came), and then each recorded dispatch is replayed alone, several times in one
// pass, timed to the queue's onSubmittedWorkDone. Used by bench/webgpu_profile.ts (Node)
// and bench/browser/webgpu_profile.ts (page.ts's profileWebGpu).
//
// A replay writes what the dispatch wrote when recorded (its outputs, or the library's
// temporaries) from the same inputs, so it does the same work; it runs with nothing
// else queued, so the sum of the replays is the GPU's time for the run's kernels, and
// what a run takes beyond that is its JavaScript, its submits and its waiting.

import { createRunner } from "./measure.js";
import { planWorkloads } from "./plan.js";
import type { TimingPolicy } from "./runner.js";
import { median, timeRuns } from "./runner.js";
import { checkResult } from "../workloads/reference.js";
import { describe, firstWeight, inputShapes, makeInputs } from "../workloads/specs.js";

type Method = (...args: unknown[]) => unknown;
type Instance = Record<string, Method>;

/** One dispatch as recorded: what to bind and how many workgroups (or the indirect buffer). */
interface RecordedDispatch {
  readonly pipeline: unknown;
  readonly groups: readonly { readonly index: number; readonly group: unknown; readonly offsets: readonly number[] }[];
  readonly workgroups: readonly number[] | undefined;
  readonly indirect: readonly [unknown, number] | undefined;
}

/** A device's calls by name, the dispatches and submit times of what is recorded, and each pipeline's WGSL. */
class Recorder {
  readonly counts: Record<string, number> = {};
  readonly dispatches: RecordedDispatch[] = [];
  readonly submitTimes: number[] = [];
  /** The run's waits on the device: method, when called and when its promise settled. */
  readonly waits: { readonly what: string; readonly called: number; settled: number }[] = [];
  /** Pipelines in the order they were made, with their label and WGSL. */
  readonly pipelines = new Map<unknown, { readonly index: number; readonly label: string; readonly wgsl: string }>();
  private readonly moduleCode = new Map<unknown, string>();
  recording = false;

  constructor(readonly device: Instance & { readonly queue: Instance }) {
    this.wrap(device, ["createBuffer", "createBindGroup", "createShaderModule", "createComputePipeline", "createComputePipelineAsync", "createCommandEncoder", "pushErrorScope", "popErrorScope"], (name, args, result) => {
      if (name === "popErrorScope") this.waitOn(name, result);
      const descriptor = args[0] as { code?: string; label?: string; compute?: { module?: unknown } } | undefined;
      if (name === "createShaderModule") this.moduleCode.set(result, descriptor?.code ?? "");
      else if (name === "createComputePipeline" || name === "createComputePipelineAsync") {
        const code = this.moduleCode.get(descriptor?.compute?.module) ?? "";
        const add = (p: unknown): void => { this.pipelines.set(p, { index: this.pipelines.size, label: descriptor?.label ?? "", wgsl: code }); };
        if (result instanceof Promise) void result.then(add, () => {});
        else add(result);
      } else if (name === "createCommandEncoder") this.wrapEncoder(result as Instance);
    });
    this.wrap(device.queue, ["submit", "writeBuffer", "onSubmittedWorkDone"], (name, _args, result, called) => {
      if (name === "submit" && this.recording) this.submitTimes.push(called);
      if (name === "onSubmittedWorkDone") this.waitOn(name, result);
    });
  }

  private waitOn(what: string, result: unknown): void {
    if (!this.recording || !(result instanceof Promise)) return;
    const wait = { what, called: performance.now(), settled: NaN };
    this.waits.push(wait);
    void result.finally(() => { wait.settled = performance.now(); }).catch(() => {});
  }

  /** Replaces each named method of `target` by one that counts the call (while recording) and passes its result on. */
  private wrap(target: Instance, names: readonly string[], after?: (name: string, args: unknown[], result: unknown, called: number) => void): void {
    for (const name of names) {
      const f = target[name];
      if (typeof f !== "function") continue;
      const recorder = this;
      target[name] = function (this: unknown, ...args: unknown[]) {
        if (recorder.recording) recorder.counts[name] = (recorder.counts[name] ?? 0) + 1;
        const called = performance.now();
        const result = f.apply(this, args);
        after?.(name, args, result, called);
        return result;
      };
    }
  }

  private wrapEncoder(encoder: Instance): void {
    this.wrap(encoder, ["beginComputePass", "copyBufferToBuffer", "clearBuffer"], (name, _args, pass) => {
      if (name === "beginComputePass") this.wrapPass(pass as Instance);
    });
  }

  /** What the pass binds now, snapshotted at each dispatch. */
  private wrapPass(pass: Instance): void {
    let pipeline: unknown;
    const groups = new Map<number, { index: number; group: unknown; offsets: number[] }>();
    this.wrap(pass, ["setPipeline", "setBindGroup", "dispatchWorkgroups", "dispatchWorkgroupsIndirect"], (name, args) => {
      if (name === "setPipeline") pipeline = args[0];
      else if (name === "setBindGroup") {
        const [index, group, offsets, start, length] = args as [number, unknown, ArrayLike<number> | undefined, number | undefined, number | undefined];
        const all = Array.from(offsets ?? []);
        groups.set(index, { index, group, offsets: start === undefined ? all : all.slice(start, start + (length ?? all.length - start)) });
      } else if (this.recording) {
        const bound = [...groups.values()].map((g) => ({ ...g, offsets: [...g.offsets] }));
        this.dispatches.push(name === "dispatchWorkgroups"
          ? { pipeline, groups: bound, workgroups: [1, 1, 1].map((d, i) => (args[i] as number | undefined) ?? d), indirect: undefined }
          : { pipeline, groups: bound, workgroups: undefined, indirect: [args[0], args[1] as number] });
      }
    });
  }
}

/** A kernel's dispatches in one run, and the milliseconds one of them takes alone. */
export interface KernelTime {
  /** Its pipeline's label (xlats: program/instruction), or `pipeline N` (in the order the library made them). */
  readonly kernel: string;
  readonly dispatches: number;
  readonly workgroups: string;
  /** Wall milliseconds a dispatch alone: the mean over its dispatches of the median of REPLAY_ROUNDS replays (`reps` of it in one pass, to onSubmittedWorkDone). */
  readonly msEach: number;
  /** The same in the process's CPU milliseconds, where the caller can read them (Node: SwiftShader's threads are the process's). */
  readonly cpuMsEach?: number;
  /** Its WGSL's `@compute` line (the workgroup size). */
  readonly wgslHead: string;
  readonly wgslChars: number;
}

export interface WebGpuProfile {
  readonly runner: string;
  readonly workload: string;
  /** Wall milliseconds a run (the harness's run(): to the GPU's end), median of the timed runs. */
  readonly runMs: number;
  readonly runs: number;
  /** Of one recorded run: milliseconds from its start to its first and last submit call, and to its end. */
  readonly firstSubmitMs: number;
  readonly lastSubmitMs: number;
  readonly recordedRunMs: number;
  /** WebGPU calls of one run, by method. */
  readonly calls: Record<string, number>;
  /** Its waits on the device (popErrorScope, onSubmittedWorkDone), in milliseconds from its start: when called, when settled. */
  readonly waits: readonly string[];
  readonly kernels: readonly KernelTime[];
  /** Σ kernels' msEach × dispatches: the GPU's time for one run's kernels, replayed alone. */
  readonly kernelSumMs: number;
  readonly kernelSumCpuMs?: number;
  /** Process CPU milliseconds a whole run (where the caller can read them). */
  readonly runCpuMs?: number;
  /**
   * Wall milliseconds of the run's dispatches replayed together, median of REPLAY_ROUNDS: in
   * one compute pass and one submit (as xlats encodes a run), and each in a pass and submit
   * of its own, submitted back to back (as jax-js does), each waited on at the end.
   */
  readonly replayOnePassMs: number;
  readonly replayPassEachMs: number;
  /** Wall milliseconds of an empty submit waited on with onSubmittedWorkDone (the round trip alone). */
  readonly emptySubmitMs: number;
  /** Each pipeline's WGSL by kernel name (with --wgsl). */
  readonly wgsl?: Record<string, string>;
}

export interface ProfileTarget {
  readonly runner: string;
  readonly workload: string;
  /** One run, as the bench times it. */
  run(): Promise<unknown>;
}

const REPLAY_ROUNDS = 3;

/**
 * Instruments `device` now (call it before the runner's setup, so that its pipelines'
 * WGSL is seen); `profile` then records one run of the target, replays its dispatches
 * and times whole runs.
 */
export function instrumentDevice(device: unknown, cpuMs?: () => number): { profile(target: ProfileTarget, policy: TimingPolicy, reps: number, withWgsl: boolean): Promise<WebGpuProfile> } {
  const recorder = new Recorder(device as Instance & { readonly queue: Instance });
  const dev = device as { readonly queue: { onSubmittedWorkDone(): Promise<void>; submit(b: unknown[]): void }; createCommandEncoder(): { beginComputePass(): Instance; finish(): unknown } };
  const queue = dev.queue;
  const encodeOne = (encode: (pass: Instance) => void): unknown => {
    const encoder = dev.createCommandEncoder();
    const pass = encoder.beginComputePass();
    encode(pass);
    pass["end"]!();
    return encoder.finish();
  };
  /** Submits the command buffers `passes` encode, one submit each, back to back, and waits for the last. */
  const timeSubmits = async (passes: readonly ((pass: Instance) => void)[]): Promise<{ wall: number; cpu: number }> => {
    const buffers = passes.map(encodeOne);
    const [t0, c0] = [performance.now(), cpuMs?.() ?? NaN];
    for (const b of buffers) queue.submit([b]);
    await queue.onSubmittedWorkDone();
    return { wall: performance.now() - t0, cpu: (cpuMs?.() ?? NaN) - c0 };
  };
  const timeSubmit = (encode: (pass: Instance) => void): Promise<{ wall: number; cpu: number }> => timeSubmits([encode]);
  const bind = (pass: Instance, d: RecordedDispatch): void => {
    pass["setPipeline"]!(d.pipeline);
    for (const g of d.groups) pass["setBindGroup"]!(g.index, g.group, g.offsets);
  };
  const dispatch = (pass: Instance, d: RecordedDispatch): void => {
    if (d.indirect !== undefined) pass["dispatchWorkgroupsIndirect"]!(d.indirect[0], d.indirect[1]);
    else pass["dispatchWorkgroups"]!(...d.workgroups!);
  };
  return {
    async profile(target, policy, reps, withWgsl): Promise<WebGpuProfile> {
      const c0 = cpuMs?.() ?? NaN;
      const times = await timeRuns(() => target.run(), policy);
      const runCpuMs = ((cpuMs?.() ?? NaN) - c0) / (times.length + policy.warmup);
      recorder.recording = true;
      const t0 = performance.now();
      await target.run();
      const recordedRunMs = performance.now() - t0;
      recorder.recording = false;
      const { dispatches, submitTimes, counts } = recorder;
      // Replays, alone: the same dispatch `reps` times in one pass, REPLAY_ROUNDS times.
      const byPipeline = new Map<unknown, { dispatches: number; workgroups: Set<string>; each: number[]; cpuEach: number[] }>();
      for (const d of dispatches) {
        const each: { wall: number; cpu: number }[] = [];
        for (let r = 0; r < REPLAY_ROUNDS; r++) {
          each.push(await timeSubmit((pass) => {
            bind(pass, d);
            for (let i = 0; i < reps; i++) dispatch(pass, d);
          }));
        }
        const entry = byPipeline.get(d.pipeline) ?? { dispatches: 0, workgroups: new Set<string>(), each: [], cpuEach: [] };
        entry.dispatches++;
        entry.workgroups.add(d.workgroups?.join("x") ?? "indirect");
        entry.each.push(median(each.map((e) => e.wall)) / reps);
        entry.cpuEach.push(median(each.map((e) => e.cpu)) / reps);
        byPipeline.set(d.pipeline, entry);
      }
      const [onePass, passEach]: number[][] = [[], []];
      for (let r = 0; r < REPLAY_ROUNDS; r++) {
        onePass.push((await timeSubmit((pass) => { for (const d of dispatches) { bind(pass, d); dispatch(pass, d); } })).wall);
        passEach.push((await timeSubmits(dispatches.map((d) => (pass: Instance) => { bind(pass, d); dispatch(pass, d); }))).wall);
      }
      const empty: number[] = [];
      for (let r = 0; r < 5; r++) empty.push((await timeSubmit(() => {})).wall);
      const wgsl: Record<string, string> = {};
      const kernels = [...byPipeline].map(([pipeline, e]): KernelTime => {
        const made = recorder.pipelines.get(pipeline);
        const name = made === undefined ? "pipeline ?" : made.label !== "" ? made.label : `pipeline ${made.index}`;
        const code = made?.wgsl ?? "";
        if (withWgsl) wgsl[name] = code;
        const mean = (xs: readonly number[]): number => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
        return {
          kernel: name, dispatches: e.dispatches, workgroups: [...e.workgroups].join(" "),
          msEach: mean(e.each), ...(cpuMs !== undefined ? { cpuMsEach: mean(e.cpuEach) } : {}),
          wgslHead: wgslHead(code), wgslChars: code.length,
        };
      });
      const start = submitTimes.length > 0 ? t0 : NaN;
      return {
        runner: target.runner, workload: target.workload, runMs: +(median(times) * 1000).toFixed(1), runs: times.length,
        firstSubmitMs: +((submitTimes[0] ?? NaN) - start).toFixed(2), lastSubmitMs: +((submitTimes[submitTimes.length - 1] ?? NaN) - start).toFixed(2),
        recordedRunMs: +recordedRunMs.toFixed(1), calls: { ...counts },
        waits: recorder.waits.map((w) => `${w.what} ${(w.called - t0).toFixed(1)} → ${(w.settled - t0).toFixed(1)}`),
        kernels, kernelSumMs: +kernels.reduce((s, k) => s + k.msEach * k.dispatches, 0).toFixed(1),
        ...(cpuMs !== undefined ? { kernelSumCpuMs: +kernels.reduce((s, k) => s + k.cpuMsEach! * k.dispatches, 0).toFixed(1), runCpuMs: +runCpuMs.toFixed(1) } : {}),
        replayOnePassMs: +median(onePass).toFixed(1), replayPassEachMs: +median(passEach).toFixed(1), emptySubmitMs: +median(empty).toFixed(2), ...(withWgsl ? { wgsl } : {}),
      };
    },
  };
}

/** The line of a kernel's WGSL that names its entry point and workgroup size. */
function wgslHead(code: string): string {
  return (code.split("\n").map((l) => l.trim()).find((l) => l.startsWith("@compute")) ?? "").slice(0, 120);
}

/** Each kernel's WGSL under a line naming it (a profile taken with its WGSL). */
export function wgslText(p: WebGpuProfile): string {
  return Object.entries(p.wgsl ?? {}).map(([k, code]) => `// ==== ${k}\n${code}`).join("\n\n");
}

/** The profile as a few lines of text: the run, then a line a kernel, costliest first. */
export function profileText(p: WebGpuProfile): string {
  const calls = Object.entries(p.calls).map(([k, v]) => `${k} ${v}`).join(", ");
  const lines = [
    `${p.runner} ${p.workload}: ${p.runMs} ms a run (median of ${p.runs}); recorded run ${p.recordedRunMs} ms, first submit at ${p.firstSubmitMs} ms, last at ${p.lastSubmitMs} ms; ` +
      `kernels alone ${p.kernelSumMs} ms; replayed in one pass ${p.replayOnePassMs} ms, a pass and submit each ${p.replayPassEachMs} ms; an empty submit's round trip ${p.emptySubmitMs} ms` +
      (p.runCpuMs !== undefined ? `; CPU ms a run ${p.runCpuMs}, kernels alone ${p.kernelSumCpuMs}` : ""),
    `  calls a run: ${calls}`,
    `  waits: ${p.waits.join(", ")}`,
  ];
  for (const k of [...p.kernels].sort((a, b) => b.msEach * b.dispatches - a.msEach * a.dispatches)) {
    const cpu = k.cpuMsEach === undefined ? "" : ` (CPU ${k.cpuMsEach.toFixed(2)})`;
    lines.push(`  ${(k.msEach * k.dispatches).toFixed(2).padStart(8)} ms  ${k.dispatches}× ${k.msEach.toFixed(2)} ms${cpu}  [${k.workgroups}]  ${k.kernel}  ${k.wgslHead} (${k.wgslChars} chars)`);
  }
  return lines.join("\n");
}

/**
 * Sets up `name` (a GPU runner: xlats-webgpu or a peer) on the bench's `kind` workload
 * at its full size, checks its result, and profiles it; `deviceOf` gives the runner's
 * GPU device once its init has run. Returns why it could not, where it could not.
 */
export async function profileRunner(
  name: string, kind: string, deviceOf: (runner: string) => Promise<unknown>, reps: number, withWgsl: boolean, cpuMs?: () => number,
): Promise<WebGpuProfile | string> {
  const planned = planWorkloads(false).find((p) => p.kind === kind);
  if (planned === undefined) return `no workload ${kind}`;
  const runner = await createRunner({ name, threads: 1 });
  if (typeof runner === "string") return runner;
  const why = await runner.init();
  if (why !== undefined) return why;
  const instrumented = instrumentDevice(await deviceOf(name), cpuMs);
  const w = planned.full;
  const inputs = makeInputs(w);
  const prepared = await runner.setup(w, inputs, inputShapes(w), firstWeight(w));
  if (typeof prepared === "string") return prepared;
  try {
    const bad = checkResult(w, inputs, await prepared.result());
    if (bad !== undefined) return `wrong result: ${bad}`;
    return await instrumented.profile({ runner: name, workload: describe(w), run: async () => prepared.run() }, PROFILE_POLICY, reps, withWgsl);
  } finally {
    await prepared.dispose?.();
    await runner.close?.();
  }
}

/** Whole runs timed before the recorded one (after one run not timed). */
const PROFILE_POLICY: TimingPolicy = { warmup: 1, minRuns: 5, maxRuns: 9, budgetS: 3 };
