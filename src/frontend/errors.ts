// The front end's errors: a misuse of the numpy/jax API (a wrong argument, an array
// read inside a traced function, a tracer that escaped its transformation).

import { XlaError } from "../types/errors.js";

/** A front-end call's arguments break one of its rules; `op` names the function, `argument` the argument. */
export class FrontendError extends XlaError {
  override name = "FrontendError";
  constructor(message: string, readonly op?: string, readonly argument?: string) {
    super(message);
  }
}

/**
 * A traced value was asked for its contents (`item()`, `tolist()`, a JS `if` on it)
 * inside `jit`, `grad` or `vmap`, where only its shape and dtype are known (JAX's
 * ConcretizationTypeError).
 */
export class ConcretizationError extends FrontendError {
  override name = "ConcretizationError";
}
