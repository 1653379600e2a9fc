// The playground page: a program in the text area is verified as it is typed, run on the
// chosen backend and device count with the arguments in the fields, and its shardings
// drawn over their meshes. The logic is check.ts; this file only wires the page.

import type { Computation } from "../dist/src/browser.js";
import { ArgumentError, check, defaultArgument, diagnosticsOf, drawShardings, formatDiagnostic, parametersOf, run } from "./check.js";
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
const propagate = element<HTMLInputElement>("propagate");
const shardingsMessage = element<HTMLPreElement>("shardings-message");
const shardings = element<HTMLIFrameElement>("shardings");

let entry: Computation | undefined;
/** The text `entry` was verified from. */
let verifiedText: string | undefined;
let pending: ReturnType<typeof setTimeout> | undefined;

/** One field per parameter of the entry; a field keeps its text while its parameter keeps its name and type. */
function showArguments(next: Computation | undefined, given?: readonly string[]): void {
  const old = new Map([...args.querySelectorAll("input")].map((i) => [i.dataset["key"] ?? "", i.value]));
  args.replaceChildren();
  if (next === undefined) return;
  parametersOf(next).forEach((p, i) => {
    const key = `${p.name}: ${p.type}`;
    const label = document.createElement("label");
    label.textContent = `%${key}`;
    const input = document.createElement("input");
    input.dataset["key"] = key;
    input.value = given?.[i] ?? old.get(key) ?? defaultArgument(next, i);
    label.htmlFor = input.id = `arg${i}`;
    args.append(label, input);
  });
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
  results.dataset["state"] = "running";
  const started = performance.now();
  try {
    if (!Number.isInteger(count) || count < 1) throw new ArgumentError(`the device count must be a positive integer, got ${devices.value}`);
    const values = [...args.querySelectorAll("input")].map((i) => i.value);
    const perDevice = await run(entry, values, backend.value, count);
    const ms = (performance.now() - started).toFixed(0);
    results.textContent = [
      ...perDevice.flatMap((rs, d) => rs.map((r, k) => `device ${d}${rs.length > 1 ? ` result ${k}` : ""}: ${r}`)),
      "", `${backend.value}, ${count} device${count > 1 ? "s" : ""}, ${ms} ms`,
    ].join("\n");
    results.dataset["state"] = "done";
  } catch (e) {
    results.className = "errors";
    results.textContent = diagnosticsOf(e).map((d) => formatDiagnostic(d, source.value)).join("\n");
    results.dataset["state"] = "failed";
  }
}

function load(index: number): void {
  const ex = EXAMPLES[index]!;
  source.value = ex.text;
  devices.value = String(ex.devices);
  args.replaceChildren();
  verify(ex.args);
  results.textContent = "";
}

EXAMPLES.forEach((ex, i) => example.add(new Option(ex.name, String(i))));
example.addEventListener("change", () => load(Number(example.value)));
source.addEventListener("input", () => {
  clearTimeout(pending);
  pending = setTimeout(() => verify(), 250);
});
file.addEventListener("change", async () => {
  const chosen = file.files?.[0];
  if (chosen === undefined) return;
  source.value = await chosen.text();
  verify();
});
propagate.addEventListener("change", () => showShardings(entry !== undefined));
runButton.addEventListener("click", () => void runProgram());
load(0);
document.body.dataset["ready"] = "true";
