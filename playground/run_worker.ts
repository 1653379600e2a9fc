// The run worker: the page posts a RunRequest and gets a RunReply back. Runs happen here
// rather than on the page so that a program that never ends (a `while` whose condition
// stays true) can be stopped: the page terminates this worker, and with it the client's
// device workers it started, and starts a fresh one for the next run.

import { runRequest, type RunReply, type RunRequest } from "./run.js";

/** The part of a dedicated worker's global scope used here (the playground compiles against the DOM's declarations). */
const scope = globalThis as unknown as {
  addEventListener(type: "message", listener: (event: MessageEvent<RunRequest>) => void): void;
  postMessage(reply: RunReply, transfer: Transferable[]): void;
};

scope.addEventListener("message", (event) => {
  void runRequest(event.data).then((reply) => scope.postMessage(reply, reply.ok ? [reply.npz.buffer] : []));
});
