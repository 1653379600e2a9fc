// Optimizers in the style of optax: an optimizer is a pair of pure functions over
// pytrees, `init(params)` giving its state and `update(grads, state)` giving the
// updates and the new state; `applyUpdates(params, updates)` adds them. Everything is
// arrays, so a whole training step (loss, gradients, update) goes under one jit.

import { asArrayValue, type ArrayBase, type ArrayLike } from "./core.js";
import * as lax from "./lax.js";
import { treeMap } from "./tree.js";
import { FrontendError } from "./errors.js";

export interface Optimizer<S> {
  init(params: unknown): S;
  /** `params` is needed by the optimizers that decay weights (adamw), as optax's third argument. */
  update(grads: unknown, state: S, params?: unknown): [unknown, S];
}

const arr = (x: unknown): ArrayBase => asArrayValue(x as ArrayLike, undefined, "optimizer");
const zerosLike = (x: unknown): ArrayBase => lax.full(arr(x).shape, 0, arr(x).dtype);

/** params + updates, leaf by leaf. */
export function applyUpdates<T>(params: T, updates: unknown): T {
  return treeMap((p, u) => lax.add(arr(p), arr(u)), params, updates) as T;
}

/** optax.sgd: updates -lr·g, or with `momentum` the heavy-ball velocity (trace = momentum·trace + g; update -lr·trace). */
export function sgd(learningRate: number, options: { momentum?: number } = {}): Optimizer<{ trace: unknown }> {
  const momentum = options.momentum ?? 0;
  return {
    init: (params) => ({ trace: momentum === 0 ? null : treeMap(zerosLike, params) }),
    update: (grads, state) => {
      if (momentum === 0) return [treeMap((g) => lax.mul(arr(g), -learningRate), grads), state];
      const trace = treeMap((t, g) => lax.add(lax.mul(arr(t), momentum), arr(g)), state.trace, grads);
      return [treeMap((t) => lax.mul(arr(t), -learningRate), trace), { trace }];
    },
  };
}

/** optax's momentum: sgd with the heavy-ball velocity (`momentum` default 0.9). */
export const momentum = (learningRate: number, beta = 0.9): Optimizer<{ trace: unknown }> => sgd(learningRate, { momentum: beta });

export interface AdamOptions {
  readonly b1?: number;
  readonly b2?: number;
  readonly eps?: number;
}

export interface AdamState {
  readonly count: ArrayBase;
  readonly mu: unknown;
  readonly nu: unknown;
}

/**
 * optax.adamw: adam with decoupled weight decay (Loshchilov & Hutter 2019): update
 * -lr·(m̂/(√v̂ + eps) + weightDecay·param), so `update` needs the params (default
 * weightDecay 1e-4, optax's).
 */
export function adamw(learningRate: number, options: AdamOptions & { weightDecay?: number } = {}): Optimizer<AdamState> {
  const weightDecay = options.weightDecay ?? 1e-4;
  const inner = adam(learningRate, options);
  return {
    init: inner.init,
    update: (grads, state, params) => {
      if (params === undefined) throw new FrontendError("adamw: update needs the params (update(grads, state, params)) to decay them", "adamw", "params");
      const [updates, next] = inner.update(grads, state);
      return [treeMap((u, p) => lax.sub(arr(u), lax.mul(arr(p), learningRate * weightDecay)), updates, params), next];
    },
  };
}

/** optax.adam: bias-corrected first and second moment estimates (Kingma & Ba 2015); update -lr·m̂/(√v̂ + eps). */
export function adam(learningRate: number, options: AdamOptions = {}): Optimizer<AdamState> {
  const { b1 = 0.9, b2 = 0.999, eps = 1e-8 } = options;
  return {
    init: (params) => ({ count: lax.full([], 0, "int32"), mu: treeMap(zerosLike, params), nu: treeMap(zerosLike, params) }),
    update: (grads, state) => {
      const mu = treeMap((m, g) => lax.add(lax.mul(arr(m), b1), lax.mul(arr(g), 1 - b1)), state.mu, grads);
      const nu = treeMap((v, g) => lax.add(lax.mul(arr(v), b2), lax.mul(lax.mul(arr(g), arr(g)), 1 - b2)), state.nu, grads);
      const count = lax.add(state.count, 1);
      const t = lax.convertElementType(count, "float32");
      const correction1 = lax.sub(1, lax.pow(lax.full([], b1, "float32"), t));
      const correction2 = lax.sub(1, lax.pow(lax.full([], b2, "float32"), t));
      const updates = treeMap((m, v) => {
        const mHat = lax.div(arr(m), lax.broadcastTo(lax.convertElementType(correction1, arr(m).dtype), arr(m).shape));
        const vHat = lax.div(arr(v), lax.broadcastTo(lax.convertElementType(correction2, arr(v).dtype), arr(v).shape));
        return lax.mul(lax.div(mHat, lax.add(lax.sqrt(vHat), eps)), -learningRate);
      }, mu, nu);
      return [updates, { count, mu, nu }];
    },
  };
}
