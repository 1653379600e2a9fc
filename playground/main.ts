// The playground page: a program in the editor is verified as it is typed, run (in the run
// worker, which Stop or the deadline terminates) on the chosen backend and device count
// with the arguments in the fields, and its shardings drawn over their meshes. The logic
// is check.ts and runner.ts; this file only wires the page.

import type { Computation } from "../dist/src/browser.js";
import {
  ArgumentError, check, defaultArgument, diagnosticsOf, formatDiagnostic, fromBase64, npyLiteral, parametersOf,
  readSharedFragment, sharedFragment, toBase64, type Argument, type NpyFile, type Shared,
} from "./check.js";
import { createEditor } from "./editor.js";
import { EXAMPLES } from "./examples.js";
import { Runner } from "./runner.js";
import { drawShardings } from "./shardings.js";

function element<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`playground: no #${id} in the page`);
  return e as T;
}

const example = element<HTMLSelectElement>("example");
const file = element<HTMLInputElement>("file");
const diagnostics = element<HTMLPreElement>("diagnostics");
const backend = element<HTMLSelectElement>("backend");
// The webgpu backend is offered where the browser has WebGPU (its run worker asks navigator.gpu for the adapter).
if ((navigator as { gpu?: unknown }).gpu !== undefined) backend.add(new Option("webgpu (GPU, one device)", "webgpu"));
const devices = element<HTMLInputElement>("devices");
const deadline = element<HTMLInputElement>("deadline");
const runButton = element<HTMLButtonElement>("run");
const stopButton = element<HTMLButtonElement>("stop");
const shareButton = element<HTMLButtonElement>("share");
const link = element<HTMLInputElement>("link");
const args = element<HTMLDivElement>("args");
const results = element<HTMLPreElement>("results");
const download = element<HTMLAnchorElement>("download");
const propagate = element<HTMLInputElement>("propagate");
const shardingsMessage = element<HTMLPreElement>("shardings-message");
const shardings = element<HTMLIFrameElement>("shardings");

const runner = new Runner();
const source = createEditor(element<HTMLDivElement>("source"), () => {
  example.value = "own";
  clearTimeout(pending);
  pending = setTimeout(() => verify(), 250);
});
let entry: Computation | undefined;
/** The text `entry` was verified from. */
let verifiedText: string | undefined;
/** The text the results shown were run from: they are cleared when the program changes. */
let resultsText: string | undefined;
let pending: ReturnType<typeof setTimeout> | undefined;

/** Arrays opened from .npy files, by argument field key (`name: type`): they stand in for the field's text. */
const npyArguments = new Map<string, NpyFile>();

/**
 * One row per parameter of the entry: a field for an MLIR literal, or a .npy file opened
 * in its place. A row keeps its text or file while its parameter keeps its name and type.
 */
function showArguments(next: Computation | undefined, given?: Shared["args"]): void {
  const old = new Map(Array.from(args.querySelectorAll<HTMLInputElement>("input[data-key]"), (i) => [i.dataset["key"] ?? "", i.value]));
  args.replaceChildren();
  if (next === undefined) return;
  const keys = new Set<string>();
  parametersOf(next).forEach((p, i) => {
    const key = `${p.name}: ${p.type}`;
    keys.add(key);
    const shared = given?.[i];
    if (given !== undefined) npyArguments.delete(key);
    if (shared !== undefined && typeof shared !== "string") npyArguments.set(key, { file: shared.file, bytes: fromBase64(shared.npy) });
    const label = document.createElement("label");
    label.textContent = `%${key}`;
    const input = document.createElement("input");
    input.dataset["key"] = key;
    input.value = typeof shared === "string" ? shared : old.get(key) ?? defaultArgument(next, i);
    label.htmlFor = input.id = `arg${i}`;
    const npy = document.createElement("input");
    npy.type = "file";
    npy.accept = ".npy";
    npy.id = `arg${i}-npy`;
    npy.title = `open a .npy file as %${p.name}`;
    const showOpened = (file: string | undefined): void => {
      input.disabled = file !== undefined;
      if (file !== undefined) input.value = `${file} (.npy)`;
    };
    showOpened(npyArguments.get(key)?.file);
    npy.addEventListener("change", async () => {
      const chosen = npy.files?.[0];
      if (chosen === undefined) {
        npyArguments.delete(key);
        input.value = defaultArgument(next, i);
        showOpened(undefined);
        return;
      }
      try {
        const opened = { file: chosen.name, bytes: new Uint8Array(await chosen.arrayBuffer()) };
        npyLiteral(opened);
        npyArguments.set(key, opened);
        showOpened(chosen.name);
      } catch (e) {
        showResults(diagnosticsOf(e).map((d) => formatDiagnostic(d, "")).join("\n"), "failed");
      }
    });
    const row = document.createElement("div");
    row.className = "arg";
    row.append(input, npy);
    args.append(label, row);
  });
  for (const key of npyArguments.keys()) if (!keys.has(key)) npyArguments.delete(key);
}

/** The argument fields' values, a .npy file where one was opened in a field's place. */
function argumentValues(): Argument[] {
  return Array.from(args.querySelectorAll<HTMLInputElement>("input[data-key]"), (i) => npyArguments.get(i.dataset["key"] ?? "") ?? i.value);
}

function verify(given?: Shared["args"]): void {
  clearTimeout(pending);
  const text = source.text();
  verifiedText = text;
  if (text !== resultsText && !runner.running) clearResults();
  const checked = check(text);
  source.showDiagnostics(checked.ok ? [] : checked.diagnostics);
  if (checked.ok) {
    entry = checked.module.entry;
    diagnostics.className = "ok";
    diagnostics.textContent = `verified: ${checked.format === "hlo" ? "HLO" : "StableHLO"} module @${checked.module.name}, entry @${entry.name}`;
  } else {
    entry = undefined;
    diagnostics.className = "errors";
    diagnostics.textContent = checked.diagnostics.map((d) => formatDiagnostic(d, text)).join("\n");
  }
  runButton.disabled = entry === undefined || runner.running;
  showArguments(entry, given);
  showShardings(checked.ok);
}

/** The drawings asked for so far: one that finishes after a later one was asked for is dropped. */
let drawings = 0;

/**
 * Draws the shardings of the verified program, replacing the figures (or the message)
 * when the drawing is done: with propagation, the first drawing waits for the passes'
 * modules to load.
 */
function showShardings(verified: boolean): void {
  const drawing = ++drawings;
  const show = (html: string | undefined, message: string): void => {
    if (drawing !== drawings) return;
    if (html !== undefined) shardings.srcdoc = html;
    shardings.hidden = html === undefined;
    shardingsMessage.textContent = message;
  };
  if (!verified) return show(undefined, "");
  const text = source.text();
  drawShardings(text, propagate.checked).then(
    (drawn) => show(drawn.html, drawn.html !== undefined ? "" : drawn.errors !== "" ? drawn.errors : "No tensor of this program has a sharding."),
    (e: unknown) => show(undefined, diagnosticsOf(e).map((d) => formatDiagnostic(d, text)).join("\n")),
  );
}

/** The figures' frame as tall as its content, so that no figure is cut off (the frame is same-origin, script-less). */
function fitShardings(): void {
  const doc = shardings.contentDocument;
  if (doc === null || doc.documentElement === null) return;
  // The root element's own height, not its scrollHeight: that is at least the frame's, so the frame could grow but never shrink.
  shardings.style.height = `${Math.ceil(doc.documentElement.getBoundingClientRect().height) + 2}px`;
}

function showResults(text: string, state: "running" | "done" | "failed" | "stopped" | ""): void {
  results.className = state === "failed" ? "errors" : "";
  results.textContent = text;
  results.dataset["state"] = state;
}

function clearResults(): void {
  showResults("", "");
  offerDownload(undefined);
  resultsText = undefined;
}

async function runProgram(): Promise<void> {
  // Run what the editor holds, even when its verification is still waiting for typing to pause.
  if (source.text() !== verifiedText) verify();
  if (entry === undefined || runner.running) return;
  const text = source.text();
  const count = Number(devices.value);
  const seconds = Number(deadline.value);
  showResults("running…", "running");
  offerDownload(undefined);
  runButton.disabled = true;
  stopButton.disabled = false;
  const started = performance.now();
  try {
    if (!Number.isInteger(count) || count < 1) throw new ArgumentError(`the device count must be a positive integer, got ${devices.value}`);
    if (deadline.value === "" || !(seconds >= 0)) throw new ArgumentError(`the deadline must be a number of seconds (0: none), got ${deadline.value}`);
    const outcome = await runner.run({ text, args: argumentValues(), backend: backend.value, deviceCount: count }, seconds > 0 ? seconds * 1000 : undefined);
    const took = ((performance.now() - started) / 1000).toFixed(1);
    if (outcome.kind === "stopped") {
      showResults(outcome.by === "stop"
        ? `stopped after ${took} s (Stop): the run's worker was ended; the next run starts afresh`
        : `stopped: the run passed its deadline of ${seconds} s (Deadline on this page; 0 for none); the next run starts afresh`, "stopped");
    } else if (outcome.kind === "crashed") {
      showResults(`error: ${outcome.message}`, "failed");
    } else if (!outcome.reply.ok) {
      showResults(outcome.reply.diagnostics.map((d) => formatDiagnostic(d, text)).join("\n"), "failed");
    } else {
      offerDownload(outcome.reply.npz);
      const printed = outcome.reply.printed;
      showResults([
        ...printed.flatMap((rs, d) => rs.map((r, k) => `device ${d}${rs.length > 1 ? ` result ${k}` : ""}: ${r}`)),
        "", `${backend.value}, ${count} device${count > 1 ? "s" : ""}, ${took} s`,
      ].join("\n"), "done");
    }
  } catch (e) {
    showResults(diagnosticsOf(e).map((d) => formatDiagnostic(d, text)).join("\n"), "failed");
  }
  resultsText = text;
  runButton.disabled = entry === undefined;
  stopButton.disabled = true;
}

/** The link that saves the last run's results as results.npz (hidden while there are none). */
function offerDownload(npz: Uint8Array | undefined): void {
  if (download.href !== "") URL.revokeObjectURL(download.href);
  download.hidden = npz === undefined;
  download.href = npz === undefined ? "" : URL.createObjectURL(new Blob([npz as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }));
}

/** Puts a program, its arguments, device count, backend (and a link's propagation choice) on the page (an example's, or a link's). */
function show(shared: Shared): void {
  source.setText(shared.text);
  devices.value = String(shared.devices);
  backend.value = shared.backend;
  if (shared.propagated !== undefined) propagate.checked = shared.propagated;
  args.replaceChildren();
  verify(shared.args);
}

/** The page as a link: its fragment carries the program and arguments (a .npy argument's bytes too), devices, backend and the propagation choice. */
function share(): void {
  const shared: Shared = {
    text: source.text(),
    devices: Number(devices.value),
    backend: backend.value,
    propagated: propagate.checked,
    args: argumentValues().map((a) => (typeof a === "string" ? a : { file: a.file, npy: toBase64(a.bytes) })),
  };
  history.replaceState(null, "", `#${sharedFragment(shared)}`);
  link.value = location.href;
  link.hidden = false;
  link.select();
  // Copying needs the page's focus and the browser's leave: the link stays in its field either way.
  navigator.clipboard?.writeText(location.href).catch(() => {});
}

/** The program a link carries in its fragment, else the first example. */
function open(): void {
  const fallback = (): void => {
    example.value = "0";
    show({ ...EXAMPLES[0]!, backend: "wasm" });
  };
  let shared: Shared | undefined;
  try {
    shared = readSharedFragment(location.hash.slice(1));
  } catch (e) {
    fallback();
    showResults(diagnosticsOf(e).map((d) => formatDiagnostic(d, "")).join("\n"), "failed");
    return;
  }
  if (shared === undefined) return fallback();
  if (!Array.from(backend.options, (o) => o.value).includes(shared.backend)) {
    fallback();
    showResults(`error: the link's backend '${shared.backend}' is not one of this page's`, "failed");
    return;
  }
  example.value = "own";
  show(shared);
}

// Shown while the text is the user's own (typed, pasted, opened or from a link) rather than an example.
const ownProgram = new Option("(your own program)", "own");
ownProgram.disabled = true;
example.add(ownProgram);
EXAMPLES.forEach((ex, i) => example.add(new Option(ex.name, String(i))));
example.addEventListener("change", () => show({ ...EXAMPLES[Number(example.value)]!, backend: backend.value }));
file.addEventListener("change", async () => {
  const chosen = file.files?.[0];
  if (chosen === undefined) return;
  source.setText(await chosen.text());
  example.value = "own";
  verify();
});
propagate.addEventListener("change", () => showShardings(entry !== undefined));
shardings.addEventListener("load", fitShardings);
runButton.addEventListener("click", () => void runProgram());
stopButton.addEventListener("click", () => runner.stop());
shareButton.addEventListener("click", share);
open();
runner.prepare();
document.body.dataset["ready"] = "true";
