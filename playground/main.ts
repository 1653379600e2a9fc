// The playground page: a program in the text area is verified as it is typed, run on the
// chosen backend and device count with the arguments in the fields, and its shardings
// drawn over their meshes. The logic is check.ts; this file only wires the page.

import type { Computation } from "../dist/src/browser.js";
import {
  ArgumentError, check, defaultArgument, diagnosticsOf, drawShardings, formatDiagnostic, npyArgument, parametersOf, resultsNpz, run, type Argument,
} from "./check.js";
import { EXAMPLES } from "./examples.js";

function element<T extends HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`playground: no #${id} in the page`);
  return e as T;
}

const source = element<HTMLTextAreaElement>("source");
const example = element<HTMLSelectElement>("example");
const file = element<HTMLInputElement>("file");
const diagnostics = element<HTMLPreElement>("diagnostics");
const backend = element<HTMLSelectElement>("backend");
const devices = element<HTMLInputElement>("devices");
const runButton = element<HTMLButtonElement>("run");
const args = element<HTMLDivElement>("args");
const results = element<HTMLPreElement>("results");
const download = element<HTMLAnchorElement>("download");
const propagate = element<HTMLInputElement>("propagate");
const shardingsMessage = element<HTMLPreElement>("shardings-message");
const shardings = element<HTMLIFrameElement>("shardings");

let entry: Computation | undefined;
/** The text `entry` was verified from. */
let verifiedText: string | undefined;
let pending: ReturnType<typeof setTimeout> | undefined;

/** Arrays opened from .npy files, by argument field key (`name: type`): they stand in for the field's text. */
const npyArguments = new Map<string, Argument>();

/**
 * One row per parameter of the entry: a field for an MLIR literal, or a .npy file opened
 * in its place. A row keeps its text or file while its parameter keeps its name and type.
 */
function showArguments(next: Computation | undefined, given?: readonly string[]): void {
  const old = new Map([...args.querySelectorAll<HTMLInputElement>("input[data-key]")].map((i) => [i.dataset["key"] ?? "", i.value]));
  args.replaceChildren();
  if (next === undefined) return;
  const keys = new Set<string>();
  parametersOf(next).forEach((p, i) => {
    const key = `${p.name}: ${p.type}`;
    keys.add(key);
    if (given !== undefined) npyArguments.delete(key);
    const label = document.createElement("label");
    label.textContent = `%${key}`;
    const input = document.createElement("input");
    input.dataset["key"] = key;
    input.value = given?.[i] ?? old.get(key) ?? defaultArgument(next, i);
    label.htmlFor = input.id = `arg${i}`;
    const npy = document.createElement("input");
    npy.type = "file";
    npy.accept = ".npy";
    npy.id = `arg${i}-npy`;
    npy.title = `open a .npy file as %${p.name}`;
    const opened = npyArguments.get(key);
    const showOpened = (file: string | undefined): void => {
      input.disabled = file !== undefined;
      if (file !== undefined) input.value = `${file} (.npy)`;
    };
    showOpened(opened !== undefined && typeof opened !== "string" ? opened.file : undefined);
    npy.addEventListener("change", async () => {
      const chosen = npy.files?.[0];
      if (chosen === undefined) {
        npyArguments.delete(key);
        input.value = defaultArgument(next, i);
        showOpened(undefined);
        return;
      }
      try {
        npyArguments.set(key, npyArgument(chosen.name, new Uint8Array(await chosen.arrayBuffer())));
        showOpened(chosen.name);
      } catch (e) {
        results.className = "errors";
        results.textContent = diagnosticsOf(e).map((d) => formatDiagnostic(d, "")).join("\n");
      }
    });
    const row = document.createElement("div");
    row.className = "arg";
    row.append(input, npy);
    args.append(label, row);
  });
  for (const key of npyArguments.keys()) if (!keys.has(key)) npyArguments.delete(key);
}

function verify(given?: readonly string[]): void {
  clearTimeout(pending);
  const text = source.value;
  verifiedText = text;
  const checked = check(text);
  if (checked.ok) {
    entry = checked.module.entry;
    diagnostics.className = "ok";
    diagnostics.textContent = `verified: ${checked.format === "hlo" ? "HLO" : "StableHLO"} module @${checked.module.name}, entry @${entry.name}`;
  } else {
    entry = undefined;
    diagnostics.className = "errors";
    diagnostics.textContent = checked.diagnostics.map((d) => formatDiagnostic(d, text)).join("\n");
  }
  runButton.disabled = entry === undefined;
  showArguments(entry, given);
  showShardings(checked.ok);
}

function showShardings(verified: boolean): void {
  shardings.hidden = true;
  if (!verified) {
    shardingsMessage.textContent = "";
    return;
  }
  try {
    const drawn = drawShardings(source.value, propagate.checked);
    if (drawn.html !== undefined) {
      shardings.srcdoc = drawn.html;
      shardings.hidden = false;
      shardingsMessage.textContent = drawn.message;
    } else {
      shardingsMessage.textContent = drawn.message.startsWith("wrote") ? "No tensor of this program has a sharding." : drawn.message;
    }
  } catch (e) {
    shardingsMessage.textContent = diagnosticsOf(e).map((d) => formatDiagnostic(d, source.value)).join("\n");
  }
}

async function runProgram(): Promise<void> {
  // Run what the text area holds, even when its verification is still waiting for typing to pause.
  if (source.value !== verifiedText) verify();
  if (entry === undefined) return;
  const count = Number(devices.value);
  results.className = "";
  results.textContent = "running…";
  offerDownload(undefined);
  results.dataset["state"] = "running";
  const started = performance.now();
  try {
    if (!Number.isInteger(count) || count < 1) throw new ArgumentError(`the device count must be a positive integer, got ${devices.value}`);
    const values = [...args.querySelectorAll<HTMLInputElement>("input[data-key]")].map((i) => npyArguments.get(i.dataset["key"] ?? "") ?? i.value);
    const ran = await run(entry, values, backend.value, count);
    const ms = (performance.now() - started).toFixed(0);
    offerDownload(resultsNpz(ran));
    results.textContent = [
      ...ran.printed.flatMap((rs, d) => rs.map((r, k) => `device ${d}${rs.length > 1 ? ` result ${k}` : ""}: ${r}`)),
      "", `${backend.value}, ${count} device${count > 1 ? "s" : ""}, ${ms} ms`,
    ].join("\n");
    results.dataset["state"] = "done";
  } catch (e) {
    results.className = "errors";
    results.textContent = diagnosticsOf(e).map((d) => formatDiagnostic(d, source.value)).join("\n");
    results.dataset["state"] = "failed";
  }
}

/** The link that saves the last run's results as results.npz (hidden while there are none). */
function offerDownload(npz: Uint8Array | undefined): void {
  if (download.href !== "") URL.revokeObjectURL(download.href);
  download.hidden = npz === undefined;
  download.href = npz === undefined ? "" : URL.createObjectURL(new Blob([npz as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }));
}

function load(index: number): void {
  const ex = EXAMPLES[index]!;
  source.value = ex.text;
  devices.value = String(ex.devices);
  args.replaceChildren();
  verify(ex.args);
  results.textContent = "";
}

// Shown while the text is the user's own (typed, pasted or opened) rather than an example.
const ownProgram = new Option("(your own program)", "own");
ownProgram.disabled = true;
example.add(ownProgram);
EXAMPLES.forEach((ex, i) => example.add(new Option(ex.name, String(i))));
example.addEventListener("change", () => load(Number(example.value)));
source.addEventListener("input", () => {
  example.value = "own";
  clearTimeout(pending);
  pending = setTimeout(() => verify(), 250);
});
file.addEventListener("change", async () => {
  const chosen = file.files?.[0];
  if (chosen === undefined) return;
  source.value = await chosen.text();
  example.value = "own";
  verify();
});
propagate.addEventListener("change", () => showShardings(entry !== undefined));
runButton.addEventListener("click", () => void runProgram());
example.value = "0";
load(0);
document.body.dataset["ready"] = "true";
