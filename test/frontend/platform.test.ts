// The front end's backend choice (platform.ts), as JAX's: jit's `backend` option,
// config.update("jax_platforms", ...) and defaultBackend(). Native and wasm programs load
// on one device, so arrays pass between them as they are; the native backend's results
// equal the wasm backend's to f32 rounding and a float64 reference. The native cases
// skip where no C compiler is found.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  numpy as np, nn, jit, valueAndGrad, config, defaultBackend, FrontendError, type FrontendArray, type ConcreteArray,
} from "../../src/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";
import { defaultDevice } from "../../src/compiler/backend.js";
import { elementCount } from "../../src/types/shape.js";

type A = FrontendArray;

const nativeReason = BACKENDS.native.available();
const skipNative = nativeReason === true ? undefined : `no native toolchain: ${nativeReason}`;

/** Runs `body` with jax_platforms set to `list`, restoring the default afterwards. */
function withPlatforms<R>(list: string, body: () => R): R {
  config.update("jax_platforms", list);
  try {
    return body();
  } finally {
    config.update("jax_platforms", null);
  }
}

const throwsFrontend = (f: () => unknown, pattern: RegExp): void => assert.throws(f, (e: unknown) => e instanceof FrontendError && pattern.test(e.message));

test("the default platform is wasm; unknown, refused and malformed choices are FrontendErrors naming the available backends", () => {
  assert.equal(defaultBackend(), "wasm");
  assert.equal(config.jax_platforms, undefined);
  throwsFrontend(() => config.update("jax_platforms", "tpu"), /"tpu" is not a front-end backend.*front end's backends: wasm, native; available here: wasm/);
  throwsFrontend(() => config.update("jax_platforms", "webgpu,wasm"), /"webgpu" is not a front-end backend: its arrays live in GPU memory/);
  throwsFrontend(() => config.update("jax_platforms", "wasm,cuda"), /"cuda" is not a front-end backend/);
  throwsFrontend(() => config.update("jax_platforms", "interpreter"), /"interpreter" is not a front-end backend: it runs on host literals/);
  throwsFrontend(() => config.update("jax_platforms", " , "), /an empty list of platforms/);
  throwsFrontend(() => config.update("jax_platforms", 3 as never), /comma-separated string/);
  throwsFrontend(() => config.update("jax_enable_x64" as never, true as never), /unknown option "jax_enable_x64" \(the options: jax_platforms\)/);
  assert.equal(defaultBackend(), "wasm", "a refused update changes nothing");
  throwsFrontend(() => jit((x: A) => x, { backend: "gpu" as never }), /jit: "gpu" is not a front-end backend/);
  throwsFrontend(() => jit((x: A) => x, { backend: "wasm", inShardings: null } as never), /backend and shardings together/);
  withPlatforms("wasm", () => assert.equal(defaultBackend(), "wasm"));
});

test("without a C compiler, native is refused with the reason and a list falls through to wasm", () => {
  // A child process whose CC does not exist: the toolchain check fails as on a machine without gcc.
  const index = fileURLToPath(new URL("../../src/index.js", import.meta.url));
  const script = `
    const { config, defaultBackend, jit, numpy: np } = await import(${JSON.stringify(index)});
    const out = [];
    try { config.update("jax_platforms", "native"); out.push("accepted"); } catch (e) { out.push(e.constructor.name + ": " + e.message); }
    config.update("jax_platforms", "native,wasm");
    out.push(defaultBackend());
    try { jit((x) => x, { backend: "native" }); out.push("accepted"); } catch (e) { out.push(e.message); }
    out.push(JSON.stringify(jit((x) => np.add(x, 1))(np.array([1, 2])).tolist()));
    console.log(JSON.stringify(out));`;
  const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, CC: "/nonexistent/xlats-cc" }, encoding: "utf8" });
  const [refused, chosen, jitRefused, result] = JSON.parse(stdout.trim().split("\n").at(-1)!) as string[];
  assert.match(refused!, /^FrontendError: config\.update\("jax_platforms"\): none of "native" is available here \(native: .*; available: wasm\)$/);
  assert.equal(chosen, "wasm");
  assert.match(jitRefused!, /^jit: the native backend is not available here: .*\(available: wasm\)$/);
  assert.equal(result, "[2,3]");
});

test("jax_platforms picks the first available backend; jit and lower().compile() follow it, one cache entry per backend", { skip: skipNative }, () => {
  let traces = 0;
  const f = jit((x: A, w: A) => {
    traces++;
    return np.tanh(np.matmul(x, w));
  });
  const x = np.reshape(np.arange(12, { dtype: "float32" }), [3, 4]);
  const w = np.multiply(np.reshape(np.arange(8, { dtype: "float32" }), [4, 2]), 0.05);
  const expected = [0, 1, 2].map((i) => [0, 1].map((j) => Math.tanh([0, 1, 2, 3].reduce((s, k) => s + (4 * i + k) * 0.05 * (2 * k + j), 0))));
  const close = (got: A): void => (got.tolist() as number[][]).forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - expected[i]![j]!) < 1e-6, `${v} at ${i},${j}`)));

  close(f(x, w));
  withPlatforms("native,wasm", () => {
    assert.equal(defaultBackend(), "native");
    assert.equal(config.jax_platforms, "native,wasm");
    close(f(x, w));
    const compiled = f.lower(x, w).compile();
    assert.equal(compiled.backend, "native");
    assert.ok(compiled.executable.stats.native !== undefined, "a native program has a native module");
    close(compiled.call(x, w) as A);
  });
  assert.equal(traces, 3, "one trace per backend, and one for lower");
  close(f(x, w));
  assert.equal(traces, 3, "back on wasm, the wasm entry is reused");
  assert.equal(f.lower(x, w).compile().backend, "wasm");
  // jit's own backend wins over the platform.
  const g = jit((a: A) => np.exp(a), { backend: "native" });
  const lowered = g.lower(x);
  withPlatforms("wasm", () => assert.equal(lowered.compile().backend, "native"));
});

test("arrays pass between wasm and native programs and eager ops as they are (one device memory)", { skip: skipNative }, () => {
  const onNative = jit((a: A) => np.multiply(np.add(a, 1), 2), { backend: "native" });
  const onWasm = jit((a: A, b: A) => np.subtract(b, a), { backend: "wasm" });
  const x = np.array([1, 2, 3, 4], { dtype: "float32" }); // eager: made on the shared device
  const y = onNative(x) as ConcreteArray;
  const z = onWasm(x, y) as ConcreteArray;
  const sum = np.add(y, z) as ConcreteArray; // eager op on a native program's result
  assert.deepEqual(y.tolist(), [4, 6, 8, 10]);
  assert.deepEqual(z.tolist(), [3, 4, 5, 6]);
  assert.deepEqual(sum.tolist(), [7, 10, 13, 16]);
  const native = onNative.lower(x).compile();
  assert.equal(native.executable.device, defaultDevice(), "the native program loads on the device the arrays live on");
  assert.equal(y.buffer.device, (x as ConcreteArray).buffer.device);
  // Donation on native: the donated argument ends, the result is right.
  const step = jit((p: A, g: A) => np.subtract(p, np.multiply(g, 0.5)), { backend: "native", donateArgnums: 0 });
  const p = np.array([1, 2], { dtype: "float32" });
  assert.deepEqual(step(p, np.array([2, 2], { dtype: "float32" })).tolist(), [0, 1]);
  assert.throws(() => p.tolist());
  // A weight argument on native: packed on the first call, repacked for a new array.
  const dense = jit((a: A, w: A) => np.matmul(a, w), { backend: "native", weightArgnums: 1 });
  const a = np.reshape(np.arange(64, { dtype: "float32" }), [8, 8]);
  const eye = np.eye(8, 8, { dtype: "float32" });
  assert.deepEqual(dense(a, eye).tolist(), a.tolist());
  assert.deepEqual(dense(a, np.multiply(eye, 2)).tolist(), np.multiply(a, 2).tolist());
});

test("jit(valueAndGrad) of an MLP on native equals wasm to f32 rounding, and both a float64 reference", { skip: skipNative }, () => {
  const [batch, inputs, hidden, classes] = [16, 24, 32, 5];
  // Deterministic pseudo-random values in [-0.5, 0.5).
  let seed = 12345;
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  const values = (n: number): number[] => Array.from({ length: n }, next);
  const make = (shape: number[], dtype: "float32" | "float64", data: number[]): A => np.reshape(np.array(data, { dtype }), shape);
  const shapes = [[inputs, hidden], [hidden], [hidden, classes], [classes]];
  const paramData = shapes.map((s) => values(elementCount(s)));
  const xData = values(batch * inputs);
  const labels = Array.from({ length: batch }, (_, i) => (i * 7) % classes);
  const loss = ([w1, b1, w2, b2]: A[], xs: A, ys: A): A => {
    const h = nn.relu(np.add(np.matmul(xs, w1!), b1!));
    const logp = nn.logSoftmax(np.add(np.matmul(h, w2!), b2!));
    return np.multiply(np.sum(np.multiply(ys, logp)), -1 / batch);
  };
  const run = (backend: "wasm" | "native", dtype: "float32" | "float64"): number[][] => {
    const params = shapes.map((s, i) => make(s, dtype, paramData[i]!));
    const ys = nn.oneHot(np.array(labels), classes, { dtype });
    const [value, grads] = jit((p: A[], xs: A, y: A) => valueAndGrad(loss)(p, xs, y), { backend })(params, make([batch, inputs], dtype, xData), ys) as [A, A[]];
    return [[value.item() as number], ...grads.map((g) => (np.ravel(g).tolist() as number[]))];
  };
  const native = run("native", "float32");
  const wasm = run("wasm", "float32");
  const reference = run("wasm", "float64");
  const scale = reference.map((r) => Math.max(...r.map(Math.abs)));
  native.forEach((r, k) => r.forEach((v, i) => {
    assert.ok(Math.abs(v - wasm[k]![i]!) <= 1e-5 * scale[k]!, `native ${v} against wasm ${wasm[k]![i]} (output ${k}, ${i})`);
    assert.ok(Math.abs(v - reference[k]![i]!) <= 1e-5 * scale[k]!, `native ${v} against float64 ${reference[k]![i]} (output ${k}, ${i})`);
  }));
});
