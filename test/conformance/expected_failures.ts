// Conformance cases expected to fail, with the reason. The harness fails on any other
// failing case, and on a listed case that passes (remove it then). Keep these lists
// short and every reason precise; docs/conformance.md repeats them.

/** Cases that fail on every backend: they fail to parse or import, or fail on the interpreter (the specification). */
export const EXPECTED_FAILURES: Readonly<Record<string, string>> = {
};

/**
 * Cases that fail on one compiled backend only (the suite runs there with its constants
 * passed as arguments, so the backend's own kernels compute them), by backend.
 */
export const BACKEND_EXPECTED_FAILURES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  wasm: {},
  native: {},
  webgpu: {},
};

/** Why `name` is expected to fail on `backend`, or undefined when it is expected to pass. */
export function expectedFailure(backend: string, name: string): string | undefined {
  return EXPECTED_FAILURES[name] ?? BACKEND_EXPECTED_FAILURES[backend]?.[name];
}
