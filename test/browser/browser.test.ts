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
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { build, createLogger } from "vite";
import { readNpz } from "../../src/index.js";
import { startStaticServer, type StaticServer } from "../../tools/static_server.js";
import type { Ink, ModuleRun, ParseFailure, StableHloRun } from "./page.js";
import { filesOf, tsBlock } from "../support/docs.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
/** Launch flags for a container: no sandbox, no GPU, no network chatter or updates. */
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
/** The same with WebGPU on (SwiftShader's Vulkan where there is no GPU), for the playground's webgpu backend. */
const WEBGPU_ARGS = [...CHROMIUM_ARGS.filter((a) => a !== "--disable-gpu"), "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--ignore-gpu-blocklist"];
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
  /** What Vite warned of while building the playground (printed as well). */
  const buildWarnings: string[] = [];
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
    const logger = createLogger("warn");
    const warn = logger.warn.bind(logger);
    logger.warn = (message, options) => {
      buildWarnings.push(message);
      warn(message, options);
    };
    await build({
      configFile: join(root, "playground/vite.config.js"), configLoader: "native", logLevel: "warn", customLogger: logger,
      build: { outDir: playgroundDir, emptyOutDir: true },
    });
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
    /** Replaces the program text in the editor as a user pasting it would. */
    const setSource = async (text: string): Promise<void> => pg.fill("#source .cm-content", text);
    /** Pastes the program and waits until the page says it verified (`verified` in its message). */
    const paste = async (text: string, verified: string): Promise<void> => {
      await setSource(text);
      await pg.waitForFunction(`document.getElementById('diagnostics').textContent.includes(${JSON.stringify(verified)})`, undefined, { timeout: 10_000 });
    };
    const numbers = (line: string): number[] => [...line.matchAll(/-?\d+\.\d+e[+-]\d+/g)].map((m) => Number(m[0]));
    const runAndWait = async (): Promise<string> => {
      await pg.click("#run");
      await pg.waitForFunction("['done', 'failed', 'stopped'].includes(document.getElementById('results').dataset.state)", undefined, { timeout: 30_000 });
      return pg.textContent("#results").then((t) => t ?? "");
    };

    before(async () => {
      pg = await context.newPage();
      pg.on("console", (m) => { if (m.type() === "error") problems.push(`playground console: ${m.text()}`); });
      await pg.goto(`${server.url}playground/`);
      await pg.waitForFunction("document.body.dataset.ready === 'true'", undefined, { timeout: 30_000 });
    });

    test("the build makes every dynamic import a chunk of its own; the page's first load leaves out the Shardy passes", () => {
      // An import() of a module that is also imported statically stays in its importer's chunk (and Vite warns).
      assert.deepEqual(buildWarnings.filter((w) => w.includes("INEFFECTIVE_DYNAMIC_IMPORT")), []);
      // The page's entry and the chunks it preloads: none holds the propagation pipeline's registration, which a chunk loaded on demand does.
      const html = readFileSync(join(playgroundDir, "index.html"), "utf8");
      const firstLoad = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
      assert.ok(firstLoad.some((f) => /\/index-/.test(f)), html);
      const pipeline = "import passes, user-priority propagation and the export passes";
      for (const file of firstLoad) assert.ok(!readFileSync(join(playgroundDir, file), "utf8").includes(pipeline), `${file} holds the Shardy pipeline`);
      // The workers' bundles hold every pass (the package's entry): a chunk of the page's must.
      const assets = readdirSync(join(playgroundDir, "assets")).filter((f) => f.endsWith(".js") && !f.includes("worker"));
      assert.ok(assets.some((f) => readFileSync(join(playgroundDir, "assets", f), "utf8").includes(pipeline)), "no chunk holds the Shardy pipeline");
    });

    test("a pasted program is verified, run on four Web Worker devices (wasm), and its results drawn", async () => {
      await paste(ALL_REDUCE, "module @paste");
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

    test("the editor numbers its lines and colours StableHLO and HLO", async () => {
      await paste(`// a comment\n${ALL_REDUCE}`, "module @paste");
      // 16 lines: the comment, the program's 14 and the empty last one.
      const numbers = await pg.locator("#source .cm-lineNumbers .cm-gutterElement").allTextContents();
      assert.deepEqual(numbers.filter((n) => n !== "").map(Number).slice(-16), Array.from({ length: 16 }, (_, i) => i + 1));
      const tokens = async (tag: string): Promise<string[]> => pg.locator(`#source .cm-content .tok-${tag}`).allTextContents();
      const keywords = await tokens("keyword");
      for (const k of ["module", "func.func", "stablehlo.replica_id", "stablehlo.add", "\"stablehlo.all_reduce\"", "stablehlo.return", "return"]) {
        assert.ok(keywords.includes(k), `${k} is not a keyword: ${keywords.join(" ")}`);
      }
      const types = await tokens("typeName");
      for (const t of ["tensor<3xf32>", "tensor<ui32>", "tensor<1x4xi64>", "i32"]) assert.ok(types.includes(t), `${t} is not a type: ${types.join(" ")}`);
      const values = await tokens("variableName");
      for (const v of ["%arg0", "%id", "%0", "%s"]) assert.ok(values.includes(v), `${v} is not a value: ${values.join(" ")}`);
      assert.deepEqual(await tokens("comment"), ["// a comment"]);
      assert.ok((await tokens("labelName")).includes("@main"));
      assert.ok((await tokens("propertyName")).includes("replica_groups"));
      assert.ok((await tokens("propertyName")).includes("mhlo.num_replicas"));
      // HLO: the shape, the opcode and the instruction's name.
      await paste("HloModule h\n\nENTRY main {\n  x = f32[2,3]{1,0} parameter(0)\n  ROOT y = f32[2,3]{1,0} add(x, x)\n}\n", "HLO module @h");
      assert.deepEqual(await tokens("typeName"), ["f32[2,3]{1,0}", "f32[2,3]{1,0}"]);
      assert.deepEqual(await tokens("keyword"), ["HloModule", "ENTRY", "parameter", "ROOT", "add"]);
      assert.deepEqual(await tokens("variableName"), ["x", "y"]);
    });

    test("an error is shown at its line and column with a caret, and Run is disabled", async () => {
      await setSource(ALL_REDUCE.replace("stablehlo.convert %id", "stablehlo.convert %idd"));
      await pg.waitForFunction("document.getElementById('diagnostics').className === 'errors'", undefined, { timeout: 10_000 });
      const lines = ((await pg.textContent("#diagnostics")) ?? "").split("\n");
      // `%idd` is used on line 4 at column 28 and never defined.
      assert.match(lines[0]!, /^input:4:28: error: .*%idd/);
      assert.equal(lines[1], "    %f = stablehlo.convert %idd : (tensor<ui32>) -> tensor<f32>");
      assert.equal(lines[2], `${" ".repeat(27)}^`);
      assert.equal(await pg.isDisabled("#run"), true);
      // In the editor: the use of %idd marked as an error where it is, and line 4 marked in the gutter.
      await pg.waitForSelector("#source .cm-lintRange-error", { timeout: 10_000 });
      assert.deepEqual(await pg.locator("#source .cm-lintRange-error").allTextContents(), ["%idd"]);
      const marked = await pg.locator("#source .cm-line").nth(3).locator(".cm-lintRange-error").count();
      assert.equal(marked, 1, "the mark is not on line 4");
      assert.equal(await pg.locator("#source .cm-gutter-lint .cm-lint-marker-error").count(), 1);
      // Fixed, the diagnostic goes.
      await setSource(ALL_REDUCE);
      await pg.waitForFunction("document.getElementById('diagnostics').className === 'ok'", undefined, { timeout: 10_000 });
      assert.equal(await pg.locator("#source .cm-lintRange-error").count(), 0);
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

    // x == 0 stays 0 under x·x: with the default argument 0 the loop never ends; with 3 it never starts.
    const FOREVER = `module @forever {
  func.func public @main(%arg0: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.while(%x = %arg0) : tensor<i32>
      cond {
        %zero = stablehlo.constant dense<0> : tensor<i32>
        %c = stablehlo.compare EQ, %x, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %sq = stablehlo.multiply %x, %x : tensor<i32>
        stablehlo.return %sq : tensor<i32>
      }
    return %0 : tensor<i32>
  }
}
`;
    const state = async (): Promise<string | undefined> => pg.evaluate<string | undefined>("document.getElementById('results').dataset.state");

    test("a while that never ends on the wasm backend is stopped by Stop, and the next run works", async () => {
      await paste(FOREVER, "module @forever");
      await pg.fill("#devices", "2");
      await pg.fill("#deadline", "0");
      await pg.selectOption("#backend", "wasm");
      assert.equal(await pg.isDisabled("#stop"), true, "Stop is enabled with no run");
      await pg.click("#run");
      // Still running well after a run of this size would have finished.
      await pg.waitForTimeout(3000);
      assert.equal(await state(), "running", await pg.textContent("#results") ?? "");
      assert.equal(await pg.isDisabled("#run"), true);
      assert.equal(await pg.isDisabled("#stop"), false);
      const deviceWorkers = (): number => pg.workers().filter((w) => w.url().includes("web_device_worker")).length;
      assert.equal(deviceWorkers(), 2);
      await pg.click("#stop");
      assert.equal(await state(), "stopped");
      // The looping devices end with the run worker that started them.
      for (let waited = 0; deviceWorkers() > 0; waited += 100) {
        assert.ok(waited < 10_000, `${deviceWorkers()} device workers still running 10 s after Stop`);
        await pg.waitForTimeout(100);
      }
      assert.match((await pg.textContent("#results")) ?? "", /^stopped after \d+\.\d s \(Stop\)/);
      assert.equal(await pg.isDisabled("#stop"), true);
      // The same program, with an argument that ends the loop at once: 3 ≠ 0, so 3 on both devices.
      await pg.fill("#arg0", "dense<3> : tensor<i32>");
      const text = await runAndWait();
      assert.deepEqual(text.split("\n").filter((l) => l.startsWith("device ")), ["device 0: dense<3> : tensor<i32>", "device 1: dense<3> : tensor<i32>"], text);
    });

    test("the deadline stops a run that does not finish, and the next run works", async () => {
      await paste(FOREVER, "module @forever");
      await pg.fill("#arg0", "dense<0> : tensor<i32>");
      await pg.fill("#devices", "1");
      await pg.fill("#deadline", "1.5");
      const started = Date.now();
      assert.equal(await runAndWait(), "stopped: the run passed its deadline of 1.5 s (Deadline on this page; 0 for none); the next run starts afresh");
      assert.ok(Date.now() - started >= 1400, `stopped after ${Date.now() - started} ms`);
      // A fresh worker (and its devices and compiled program) serves the next run: given more time, as on a loaded machine it may take more than 1.5 s.
      // 10¹⁰ s is past what setTimeout can wait (2³¹ - 1 ms): no deadline, not one passed at once.
      await pg.fill("#deadline", "1e10");
      await pg.fill("#arg0", "dense<7> : tensor<i32>");
      assert.equal((await runAndWait()).split("\n")[0], "device 0: dense<7> : tensor<i32>");
      await pg.fill("#deadline", "-1");
      assert.equal(await runAndWait(), "error: the deadline must be a number of seconds (0: none), got -1");
      await pg.fill("#deadline", "30");
    });

    test("a 90,000-element result is printed summarised as numpy prints it, and cleared when the program changes", async () => {
      const iota = "func.func @main() -> tensor<300x300xi32> {\n  %0 = stablehlo.iota dim = 0 : tensor<90000xi32>\n" +
        "  %1 = stablehlo.reshape %0 : (tensor<90000xi32>) -> tensor<300x300xi32>\n  return %1 : tensor<300x300xi32>\n}\n";
      await setSource(iota);
      await pg.waitForFunction("document.getElementById('diagnostics').className === 'ok'", undefined, { timeout: 10_000 });
      const text = await runAndWait();
      // numpy 2.x: repr(np.arange(90000, dtype=np.int32).reshape(300, 300)).
      const numpy = `array([[    0,     1,     2, ...,   297,   298,   299],
       [  300,   301,   302, ...,   597,   598,   599],
       [  600,   601,   602, ...,   897,   898,   899],
       ...,
       [89100, 89101, 89102, ..., 89397, 89398, 89399],
       [89400, 89401, 89402, ..., 89697, 89698, 89699],
       [89700, 89701, 89702, ..., 89997, 89998, 89999]],
      shape=(300, 300), dtype=int32)`;
      assert.ok(text.startsWith(`device 0: tensor<300x300xi32>, 90000 elements, summarised (save as .npz for every value):\n${numpy}\n`), text);
      assert.equal(await pg.isHidden("#download"), false);
      await setSource(`${iota}// changed\n`);
      await pg.waitForFunction("document.getElementById('results').textContent === ''", undefined, { timeout: 10_000 });
      assert.equal(await pg.isHidden("#download"), true);
    });

    test("the shardings after propagation: every figure shown whole in a sandboxed frame, no CLI message", async () => {
      await pg.selectOption("#example", { label: "Shardy: a 2×2 mesh, a matmul sharded over it" });
      await pg.waitForFunction("!document.getElementById('shardings').hidden", undefined, { timeout: 10_000 });
      assert.equal(await pg.getAttribute("#shardings", "sandbox"), "allow-same-origin");
      if (!(await pg.isChecked("#propagate"))) await pg.check("#propagate");
      await pg.waitForFunction("(document.getElementById('shardings').srcdoc.match(/<figure/g) ?? []).length >= 3", undefined, { timeout: 30_000 });
      assert.equal((await pg.textContent("#shardings-message")) ?? "", "");
      // The frame fits its content: the last figure's bottom is inside it and the frame does not scroll.
      await pg.waitForFunction(`(() => {
        const frame = document.getElementById("shardings");
        const doc = frame.contentDocument;
        const figures = [...doc.querySelectorAll("figure")];
        return figures.length >= 3 && doc.documentElement.scrollHeight <= frame.clientHeight &&
          figures.every((f) => f.getBoundingClientRect().bottom <= frame.clientHeight);
      })()`, undefined, { timeout: 10_000 });
      // Back to the two figures before propagation: the frame shrinks to fit them.
      const frameHeight = async (): Promise<number> => (await pg.locator("#shardings").boundingBox())!.height;
      const propagated = await frameHeight();
      await pg.uncheck("#propagate");
      await pg.waitForFunction("(document.getElementById('shardings').srcdoc.match(/<figure/g) ?? []).length === 2", undefined, { timeout: 30_000 });
      for (let waited = 0; (await frameHeight()) >= propagated; waited += 100) {
        assert.ok(waited < 10_000, `the frame stays ${await frameHeight()} px high with two figures, as with four`);
        await pg.waitForTimeout(100);
      }
    });

    test("a program, its arguments and the propagation choice shared as a link open as they were", async () => {
      await paste(ALL_REDUCE, "module @paste");
      await pg.fill("#arg0", "dense<[0.5, 1.5, -2.0]> : tensor<3xf32>");
      await pg.fill("#devices", "4");
      await pg.selectOption("#backend", "interpreter");
      await pg.check("#propagate");
      await pg.click("#share");
      const url = await pg.inputValue("#link");
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/playground\/#program=[A-Za-z0-9_-]+$/);
      const opened = await context.newPage();
      try {
        await opened.goto(url);
        await opened.waitForFunction("document.body.dataset.ready === 'true'", undefined, { timeout: 30_000 });
        assert.equal((await opened.locator("#source .cm-line").allTextContents()).join("\n"), ALL_REDUCE);
        assert.equal(await opened.inputValue("#arg0"), "dense<[0.5, 1.5, -2.0]> : tensor<3xf32>");
        assert.equal(await opened.inputValue("#devices"), "4");
        assert.equal(await opened.inputValue("#backend"), "interpreter");
        assert.equal(await opened.isChecked("#propagate"), true);
        await opened.click("#run");
        await opened.waitForFunction("document.getElementById('results').dataset.state === 'done'", undefined, { timeout: 30_000 });
        // 4x + 6 for x = 0.5, 1.5, -2: 8, 12, -2 on every device.
        const lines = ((await opened.textContent("#results")) ?? "").split("\n").filter((l) => l.startsWith("device "));
        assert.equal(lines.length, 4);
        for (const line of lines) assert.deepEqual(numbers(line), [8, 12, -2], line);
        // A link cut short says so, and the page still opens (on the first example).
        await opened.goto(url.slice(0, -12).replace("#program=", "#program=!"));
        await opened.reload();
        await opened.waitForFunction("document.body.dataset.ready === 'true'", undefined, { timeout: 30_000 });
        assert.match((await opened.textContent("#results")) ?? "", /^error: the link's program could not be read/);
        assert.match((await opened.textContent("#diagnostics")) ?? "", /^verified: StableHLO module @jit_f/);
        // A link whose .npy argument is not base64 says so.
        const badNpy = Buffer.from(JSON.stringify({ text: ALL_REDUCE, args: [{ file: "x.npy", npy: "!!" }], devices: 1, backend: "wasm" })).toString("base64url");
        await opened.goto(url.replace(/#program=.*/, `#program=${badNpy}`));
        await opened.reload();
        await opened.waitForFunction("document.body.dataset.ready === 'true'", undefined, { timeout: 30_000 });
        assert.equal((await opened.textContent("#results")) ?? "", "error: the link's program could not be read: the bytes of x.npy are not base64");
      } finally {
        await opened.close();
      }
    });

    test("on a browser with WebGPU, the README's sumsq.mlir runs in the playground on the webgpu backend", async () => {
      // A browser of its own: the others run with the GPU off, as most visitors' pages do.
      const gpuProfile = mkdtempSync(join(tmpdir(), "xlats-chromium-webgpu-"));
      const gpuContext = await chromium.launchPersistentContext(gpuProfile, { executablePath: chromiumPath!, args: WEBGPU_ARGS, headless: true });
      try {
        const gp = await gpuContext.newPage();
        gp.on("console", (m) => { if (m.type() === "error") problems.push(`webgpu playground console: ${m.text()}`); });
        await gp.goto(`${server.url}playground/`);
        await gp.waitForFunction("document.body.dataset.ready === 'true'", undefined, { timeout: 30_000 });
        await gp.fill("#source .cm-content", filesOf("README.md")["sumsq.mlir"]!);
        // Verified: its parameter's field is shown (the example the page opened with had others).
        await gp.waitForFunction("document.querySelector('label[for=arg0]')?.textContent === '%x: tensor<2x3xf32>'", undefined, { timeout: 10_000 });
        await gp.fill("#arg0", "dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>");
        await gp.fill("#devices", "1");
        // Offered only where the page sees navigator.gpu: a missing option fails here.
        await gp.selectOption("#backend", "webgpu", { timeout: 5_000 });
        await gp.click("#run");
        await gp.waitForFunction("['done', 'failed', 'stopped'].includes(document.getElementById('results').dataset.state)", undefined, { timeout: 60_000 });
        const text = (await gp.textContent("#results")) ?? "";
        // Σ_j x²: 1 + 4 + 9 and 16 + 25 + 36.
        assert.deepEqual(numbers(text.split("\n")[0]!), [14, 77], `${text}\n${problems.join("\n")}`);
        assert.match(text, /webgpu, 1 device,/);
      } finally {
        await gpuContext.close();
        rmSync(gpuProfile, { recursive: true, force: true });
      }
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
