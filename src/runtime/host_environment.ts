// Where xlats runs (Node or a browser), and how its Node-only adapters (worker_threads,
// os) are loaded. The adapters are imported by a URL computed at run time rather than by a
// literal specifier, so the module graph a bundler or a browser follows from the package's
// entries (src/index.ts, src/browser.ts) never reaches a `node:` import: the browser needs
// no shims, and a bundler has nothing to externalize.

/** Whether this is Node (worker_threads and os are then available). */
export function runningInNode(): boolean {
  return (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node !== undefined;
}

/** The process's environment variable `name` in Node; undefined where unset, and in a browser (which has no environment). */
export function environmentVariable(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
}

/** Whether this environment has module Web Workers (a browser; Node has none). */
export function hasWebWorkers(): boolean {
  return typeof (globalThis as { Worker?: unknown }).Worker === "function";
}

/** Imports the Node-only module `relative` to `base` (the caller's import.meta.url); call only where runningInNode(). */
export async function importNodeAdapter<T>(base: string, relative: string): Promise<T> {
  const url = new URL(relative, base).href;
  return (await import(/* @vite-ignore */ url)) as T;
}
