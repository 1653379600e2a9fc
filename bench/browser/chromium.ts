// Headless Chromium through playwright-core (bench/'s dependency, loaded at run time, so
// the root build and CI never need it), for the browser bench (run.ts) and the WebGPU
// profile (webgpu_profile.ts).

/** Launch flags as the lead verified them (no network chatter, no sandbox in CI containers). */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
/**
 * No GPU for the wasm runners; WebGPU for the GPU runners: on the machine's GPU, or on
 * SwiftShader (Chromium's software Vulkan driver) where there is none.
 */
export const NO_GPU_ARGS = ["--disable-gpu"];
export const WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--enable-features=Vulkan", "--ignore-gpu-blocklist"];

// The little of playwright-core used.
export interface PwPage {
  goto(url: string, options?: { timeout: number }): Promise<unknown>;
  exposeFunction(name: string, fn: (...args: never[]) => unknown): Promise<void>;
  waitForFunction(fn: string, arg?: unknown, options?: { timeout: number }): Promise<unknown>;
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  on(event: "console", fn: (m: { type(): string; text(): string }) => void): void;
  on(event: "pageerror", fn: (e: Error) => void): void;
  close(): Promise<void>;
}
export interface PwContext { newPage(): Promise<PwPage>; close(): Promise<void> }
export interface PwBrowser { newContext(): Promise<PwContext>; close(): Promise<void> }
export interface PwBrowserType {
  launch(options: { executablePath: string; args: string[]; headless?: boolean }): Promise<PwBrowser>;
}

export async function loadChromium(): Promise<PwBrowserType | string> {
  const entry = new URL("../../../bench/node_modules/playwright-core/index.mjs", import.meta.url);
  try {
    const pw = (await import(entry.href)) as { chromium: PwBrowserType };
    return pw.chromium;
  } catch (e) {
    return `playwright-core not installed (npm ci --prefix bench): ${String((e as Error).message).split("\n")[0]}`;
  }
}
