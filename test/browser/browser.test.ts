// xlats in a real browser: Debian's Chromium, headless, driven by playwright-core. A
// static server on 127.0.0.1 (cross-origin isolated, as SharedArrayBuffer needs) serves
// dist/ as ES modules with no bundler, the test page (page.html, page.ts) and the
// playground as Vite builds it. The page runs the documentation's examples (the builder, the
// compiler, four devices in an all-reduce on Web Workers), a StableHLO program parsed,
// interpreted and compiled, and a parse error; the playground is driven as a user would
// (paste, run on four devices, read the results, a screenshot measured, an error with its
// caret, a sharded program drawn). Every value is compared with one known independently.
//
// Chromium: $CHROMIUM, else `chromium` on the PATH, else /usr/bin/chromium (.ci/run
// installs Debian's package). Missing, the test fails, unless XLATS_SKIP_BROWSER_TEST=1
// says to skip it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { build } from "vite";
import { readNpz } from "../../src/index.js";
import { startStaticServer, type StaticServer } from "../../tools/static_server.js";
import type { Ink, ModuleRun, ParseFailure, StableHloRun } from "./page.js";
import { tsBlock } from "../support/docs.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
/** Launch flags for a container: no sandbox, no GPU, no network chatter or updates. */
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const SKIP = process.env["XLATS_SKIP_BROWSER_TEST"] === "1";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findChromium(): string | undefined {
  const given = process.env["CHROMIUM"];
  if (given !== undefined && given !== "") return executable(given) ? given : undefined;
  const onPath = (process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "").map((d) => join(d, "chromium")).find(executable);
  return onPath ?? (executable("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);
}

const chromiumPath = findChromium();

/** page.ts's checks, as the page installs them. */
interface PageChecks {
  runModule(code: string): Promise<ModuleRun>;
  stableHlo(): Promise<StableHloRun>;
  parseFailure(): ParseFailure | undefined;
  inkOf(pngBase64: string): Promise<Ink>;
  crossOriginIsolated(): boolean;
}

if (chromiumPath === undefined && !SKIP) {
  test("browser: Chromium is installed", () => {
    assert.fail("no Chromium: install Debian's package (apt-get install -y chromium; .ci/run does) or set CHROMIUM=/path/to/chromium; " +
      "XLATS_SKIP_BROWSER_TEST=1 skips the browser test knowingly");
  });
}

describe("browser (headless Chromium)", { skip: chromiumPath === undefined ? "XLATS_SKIP_BROWSER_TEST=1 and no Chromium" : false }, () => {
  let server: StaticServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let playgroundDir: string;
  const problems: string[] = [];

  /** Calls one of page.ts's checks in the test page. */
  async function call<K extends keyof PageChecks>(name: K, ...args: Parameters<PageChecks[K]>): Promise<Awaited<ReturnType<PageChecks[K]>>> {
    return page.evaluate(([n, a]) => {
      const checks = (globalThis as unknown as { xlatsTest: Record<string, (...x: unknown[]) => unknown> }).xlatsTest;
      return checks[n]!(...a);
    }, [name, args as unknown[]] as const) as Promise<Awaited<ReturnType<PageChecks[K]>>>;
  }

  before(async () => {
    playgroundDir = mkdtempSync(join(tmpdir(), "xlats-playground-"));
    await build({ configFile: join(root, "playground/vite.config.js"), configLoader: "native", logLevel: "warn", build: { outDir: playgroundDir, emptyOutDir: true } });
    server = await startStaticServer({
      mounts: { "/dist/": join(root, "dist"), "/page/": join(root, "test/browser"), "/playground/": playgroundDir },
      index: "/page/page.html",
    });
    profile = mkdtempSync(join(tmpdir(), "xlats-chromium-"));
    context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath!, args: CHROMIUM_ARGS, headless: true });
    context.on("weberror", (e) => problems.push(`page error: ${e.error().message}`));
    page = await context.newPage();
    page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
    await page.goto(server.url);
    await page.waitForFunction("globalThis.xlatsTest !== undefined", undefined, { timeout: 30_000 });
  });

  after(async () => {
    await context?.close().catch(() => {});
    await server?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
    if (playgroundDir !== undefined) rmSync(playgroundDir, { recursive: true, force: true });
  });

  /** Runs the documentation's ts block containing `marker` in the page; returns what it printed. */
  const readmeBlock = async (marker: string): Promise<string[]> => {
    const block = tsBlock(marker);
    const run = await call("runModule", block.code.replace(/from "xlats"/g, `from "${server.url}dist/src/browser.js"`));
    assert.equal(run.error, undefined, `${block.file}:${block.line} (${marker}) failed in the browser: ${run.error}\n${problems.join("\n")}`);
    return [...run.lines];
  };

  test("the page is cross-origin isolated (SharedArrayBuffer for the devices)", async () => {
    assert.equal(await call("crossOriginIsolated"), true);
  });

  test("README: the builder example prints the sum of the relu layer", async () => {
    // x·w = [[1,2,3,6],[4,5,6,15]]; + bias → [[1,2,-7,6],[4,5,-4,15]]; relu and sum → 9 + 24
    assert.deepEqual(await readmeBlock("relu_layer"), ["f32[] 33"]);
  });

  test("docs: the compile example runs compiled to WebAssembly", async () => {
    // softmax([1,2,3]) = e^(x-3)/Σ: 0.0900, 0.2447, 0.6652; a constant row gives thirds.
    assert.deepEqual(await readmeBlock("await compile(softmax)"), ["0.0900 0.2447 0.6652 0.3333 0.3333 0.3333", "1 kernel(s), 0 interpreted"]);
  });

  test("docs: the four-device all-reduce runs on Web Workers (createClient's default)", async () => {
    // device d holds [d, 10d, 100d]: the sums over d = 0..3 are 6, 60, 600 on every device.
    assert.deepEqual(await readmeBlock("crossReplicaSum"), [0, 1, 2, 3].map((d) => `device ${d}: f32[3] {6, 60, 600}`));
  });

  test("StableHLO text parsed, interpreted and compiled", async () => {
    const r = await call("stableHlo");
    // Σ_j (x+1)² for rows [0,1,2] and [3,4,5]: 1+4+9 = 14 and 16+25+36 = 77.
    assert.deepEqual(r.interpreted, [14, 77]);
    assert.deepEqual(r.compiled, [14, 77]);
    assert.ok(r.kernels >= 1, `compiled to ${r.kernels} kernels`);
  });

  test("a misspelled op is a ParseError at its line and column", async () => {
    const f = await call("parseFailure");
    assert.ok(f !== undefined, "the bad program parsed");
    assert.equal(f.name, "ParseError");
    // MLIR places an op at its first result: `%1` on line 3, column 3.
    assert.deepEqual([f.line, f.column], [3, 3]);
    assert.match(f.message, /stablehlo\.mulitply/);
  });

  describe("the playground, built by Vite", () => {
    // The all-reduce of x + replica id: Σ_{d=0..3} (x + d) = 4x + 6.
    const ALL_REDUCE = `module @paste attributes {mhlo.num_replicas = 4 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %x = stablehlo.add %arg0, %b : tensor<3xf32>
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %c: tensor<f32>):
      %s = stablehlo.add %a, %c : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
`;
    let pg: Page;
    const numbers = (line: string): number[] => [...line.matchAll(/-?\d+\.\d+e[+-]\d+/g)].map((m) => Number(m[0]));
    const runAndWait = async (): Promise<string> => {
      await pg.click("#run");
      await pg.waitForFunction("['done', 'failed'].includes(document.getElementById('results').dataset.state)", undefined, { timeout: 30_000 });
      return pg.textContent("#results").then((t) => t ?? "");
    };

    before(async () => {
      pg = await context.newPage();
      pg.on("console", (m) => { if (m.type() === "error") problems.push(`playground console: ${m.text()}`); });
      await pg.goto(`${server.url}playground/`);
      await pg.waitForFunction("document.body.dataset.ready === 'true'", undefined, { timeout: 30_000 });
    });

    test("a pasted program is verified, run on four Web Worker devices (wasm), and its results drawn", async () => {
      await pg.fill("#source", ALL_REDUCE);
      await pg.waitForFunction("document.getElementById('diagnostics').textContent.includes('module @paste')", undefined, { timeout: 10_000 });
      await pg.fill("#arg0", "dense<[1.0, 2.0, 3.0]> : tensor<3xf32>");
      await pg.fill("#devices", "4");
      await pg.selectOption("#backend", "wasm");
      const text = await runAndWait();
      const lines = text.split("\n").filter((l) => l.startsWith("device "));
      assert.equal(lines.length, 4, `${text}\n${problems.join("\n")}`);
      lines.forEach((line, d) => {
        assert.ok(line.startsWith(`device ${d}: `), line);
        assert.deepEqual(numbers(line), [10, 14, 18], line);
      });
      assert.match(text, /wasm, 4 devices/);

      // The result as drawn: its region holds text, and the page as a whole is not blank.
      const region = await call("inkOf", (await pg.locator("#results").screenshot()).toString("base64"));
      assert.ok(region.width > 200 && region.height > 40, `results region ${region.width}×${region.height}`);
      assert.ok(region.inkPixels > 500, `results region has ${region.inkPixels} dark pixels on ${region.background}`);
      const whole = await call("inkOf", (await pg.screenshot({ fullPage: true })).toString("base64"));
      assert.ok(whole.inkPixels > whole.width * whole.height * 0.01, `page has ${whole.inkPixels} of ${whole.width * whole.height} pixels drawn`);
    });

    test("an error is shown at its line and column with a caret, and Run is disabled", async () => {
      await pg.fill("#source", ALL_REDUCE.replace("stablehlo.convert %id", "stablehlo.convert %idd"));
      await pg.waitForFunction("document.getElementById('diagnostics').className === 'errors'", undefined, { timeout: 10_000 });
      const lines = ((await pg.textContent("#diagnostics")) ?? "").split("\n");
      // `%idd` is used on line 4 at column 28 and never defined.
      assert.match(lines[0]!, /^input:4:28: error: .*%idd/);
      assert.equal(lines[1], "    %f = stablehlo.convert %idd : (tensor<ui32>) -> tensor<f32>");
      assert.equal(lines[2], `${" ".repeat(27)}^`);
      assert.equal(await pg.isDisabled("#run"), true);
    });

    test("a sharded program's shardings are drawn over its mesh, and it runs on the interpreter", async () => {
      await pg.selectOption("#example", { label: "Shardy: a 2×2 mesh, a matmul sharded over it" });
      await pg.waitForFunction("!document.getElementById('shardings').hidden", undefined, { timeout: 10_000 });
      const figure = pg.frameLocator("#shardings");
      assert.ok(await figure.locator("svg").count() >= 2, "one figure per sharded argument");
      assert.match((await figure.locator("body").textContent()) ?? "", /#sdy\.sharding<@mesh, \[\{"data"\}, \{\}\]>/);
      await pg.selectOption("#backend", "interpreter");
      const text = await runAndWait();
      // ones(8×4) · 2s(4×4): every element Σ_k 1·2 over 4 terms = 8.
      const line = text.split("\n").find((l) => l.startsWith("device 0: "));
      assert.ok(line !== undefined, text);
      assert.match(line, /^device 0: dense<8\.000000e\+00> : tensor<8x4xf32>$/);

      // After propagation the dot's result has a sharding too: [{"data"}, {"model"}], a third figure.
      await pg.check("#propagate");
      await pg.waitForFunction("(document.getElementById('shardings').srcdoc.match(/<svg/g) ?? []).length >= 3", undefined, { timeout: 30_000 });
      assert.match((await figure.locator("body").textContent()) ?? "", /#sdy\.sharding<@mesh, \[\{"data"\}, \{"model"\}\]>/);
    });

    test("an HLO file opened from disk is verified as HLO and runs", async () => {
      const hlo = "HloModule opened\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] multiply(x, x)\n}\n";
      await pg.setInputFiles("#file", { name: "opened.hlo", mimeType: "text/plain", buffer: Buffer.from(hlo) });
      await pg.waitForFunction("document.getElementById('diagnostics').textContent.includes('HLO module @opened')", undefined, { timeout: 10_000 });
      await pg.fill("#devices", "1");
      await pg.fill("#arg0", "dense<[3.0, -4.0, 5.0]> : tensor<3xf32>");
      assert.equal(await runAndWait(), "error: argument 0 (%x) is tensor<3xf32>, but the parameter is tensor<2xf32>");
      await pg.fill("#arg0", "dense<[3.0, -4.0]> : tensor<2xf32>");
      const line = (await runAndWait()).split("\n")[0]!;
      assert.deepEqual(numbers(line), [9, 16], line);
    });

    test("a JAX-exported model (hex weights) opened from disk runs on a .npy input and its results save as .npz", async () => {
      // tools/fixtures/jax_mlp.py: log_softmax and argmax of an MLP, with XLA's outputs beside it.
      const fixtures = join(root, "test/fixtures/jax_mlp");
      const want = readNpz(new Uint8Array(readFileSync(join(fixtures, "expected.npz"))));
      await pg.setInputFiles("#file", join(fixtures, "model.mlir"));
      await pg.waitForFunction("document.getElementById('diagnostics').textContent.includes('StableHLO module @jit_model')", undefined, { timeout: 10_000 });
      await pg.setInputFiles("#arg0-npy", join(fixtures, "x.npy"));
      await pg.waitForFunction("document.getElementById('arg0').disabled", undefined, { timeout: 10_000 });
      await pg.fill("#devices", "1");
      await pg.selectOption("#backend", "wasm");
      const text = await runAndWait();
      assert.match(text, /^device 0 result 0: dense<.*> : tensor<8x10xf32>$/m, text);
      const labels = text.split("\n").find((l) => l.startsWith("device 0 result 1: "));
      assert.equal(labels, `device 0 result 1: dense<[${(want.get("arr_1")!.toNested() as number[]).join(", ")}]> : tensor<8xi32>`);

      const [saved] = await Promise.all([pg.waitForEvent("download"), pg.click("#download")]);
      assert.equal(saved.suggestedFilename(), "results.npz");
      const got = readNpz(new Uint8Array(readFileSync(await saved.path())));
      assert.deepEqual([...got.keys()], ["arr_0", "arr_1"]);
      assert.deepEqual(got.get("arr_1")!.toNested(), want.get("arr_1")!.toNested());
      const g = (got.get("arr_0")!.toNested() as number[][]).flat();
      const w = (want.get("arr_0")!.toNested() as number[][]).flat();
      g.forEach((v, i) => assert.ok(Math.abs(v - w[i]!) <= 1e-5 * Math.max(1, Math.abs(w[i]!)), `log_softmax[${i}]: ${v} vs XLA ${w[i]}`));
    });
  });

  test("no page reported an error", () => {
    assert.deepEqual(problems, []);
  });
});
