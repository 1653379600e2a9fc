// `xlats` commands run for other processes by one long-lived process, for harnesses that
// start the command once per case: Shardy's lit tests (test/sdy/shardy_conformance.test.ts)
// start `xlats opt` 637 times and `xlats test` 52 times, and a fresh `xlats` spends most
// of its time loading its modules (opt about 150, test about 300: 0.4 and 1.5 CPU-s at
// load 10, against 0.1 for a bare Node). The harness starts tools/cli_client.ts instead,
// which loads nothing of xlats: it passes its arguments and working directory here over a
// Unix socket, and prints what the command printed and exits with its code, as
// `xlats COMMAND ARGS...` would. The commands run through the same runCli and the same
// file access (cli/node_io.ts) as the `xlats` command's; what they print is collected
// per request.
//
// The server is a worker thread (startCliServer), so a command that never returns cannot
// hang the caller's thread: close() terminates it. The CLI's own tests (test/cli/helpers.ts)
// run their commands the same way: their helper is synchronous, so it starts the server
// with startCliServerSync, which blocks until the worker listens.
//
// This module is also the worker's script: loaded in a worker with `workerData.role`
// set, it serves; imported anywhere else it only exports startCliServer.

import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { runCli } from "../src/cli/cli.js";
import type { ClientLender } from "../src/cli/io.js";
import { nodeFiles } from "../src/cli/node_io.js";
import { createClient, type Client } from "../src/runtime/client.js";
import { prepareDawnEnvironment } from "../src/compiler/webgpu/node_gpu.js";

const ROLE = "xlats-cli-server";

/** What a client sends: the command line (without `xlats`) and the directory its relative paths are taken from. */
export interface CliRequest {
  readonly argv: readonly string[];
  readonly cwd: string;
}

/** What the server answers: the exit code and what the command wrote to stdout and stderr. */
export interface CliReply {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliServer {
  /** Stops serving: terminates the worker (a command still running included) and removes the socket. */
  close(): Promise<void>;
}

/** Starts the server on the Unix socket `socket` (a path that must not exist yet); resolves once it accepts connections. */
export function startCliServer(socket: string): Promise<CliServer> {
  // A worker's process.env is a copy the Vulkan loader never reads: Dawn's variables are set here.
  prepareDawnEnvironment();
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE, socket } });
  return new Promise((resolve, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`cli_server: the server's worker exited (${code}) before it listened on ${socket}`)));
    worker.once("message", () => {
      worker.removeAllListeners("exit");
      resolve({
        close: async () => {
          await worker.terminate();
          rmSync(socket, { force: true });
        },
      });
    });
  });
}

/** How long startCliServerSync waits for the worker to listen: its start loads the CLI's dispatch only. */
const SYNC_START_MS = 60_000;

/**
 * startCliServer for a caller that cannot await (a synchronous test helper): returns once
 * the server listens on `socket`, waiting on a shared word the worker sets (1 listening, 2
 * failed); an Error when it does not listen within a minute. The worker is
 * unreferenced: it ends with the process, which it does not keep alive.
 */
export function startCliServerSync(socket: string): void {
  prepareDawnEnvironment();
  const ready = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE, socket, ready } });
  worker.unref();
  const waited = Atomics.wait(ready, 0, 0, SYNC_START_MS);
  if (waited === "timed-out") throw new Error(`cli_server: the server did not listen on ${socket} within ${SYNC_START_MS / 1000} s`);
  if (Atomics.load(ready, 0) !== 1) throw new Error(`cli_server: the server could not listen on ${socket}`);
}

/**
 * A reply as the clients read it: the line "CODE STDOUT_BYTES STDERR_BYTES", then the two
 * outputs' bytes (read by tools/cli_client.ts and the C client, tools/cli_client_c.ts).
 * Framed rather than JSON so that the C client needs no JSON parser.
 */
function replyFrame(reply: CliReply): Buffer {
  const out = Buffer.from(reply.stdout, "utf8");
  const err = Buffer.from(reply.stderr, "utf8");
  return Buffer.concat([Buffer.from(`${reply.code} ${out.length} ${err.length}\n`, "utf8"), out, err]);
}

/**
 * The device clients the server's commands share (CliIo.clients): `xlats test` on a
 * sharded case runs on 16 device workers, each of which loads the library as it starts
 * (about 1.7 CPU-s a case of Shardy's executable tests with a client a command). A client
 * is lent to one command at a time (two commands at once get two), and goes back to the
 * idle ones only when every case of its command passed: after a failure (a collective
 * that timed out, a device left mid-program) it is closed, and the next command starts on
 * fresh devices, as a command of its own would.
 */
export function clientLender(): ClientLender {
  const idle = new Map<string, Client[]>();
  const keys = new Map<Client, string>();
  return {
    async borrow(backend, deviceCount) {
      const key = `${backend}/${deviceCount}`;
      const client = idle.get(key)?.pop() ?? await createClient({ backend, deviceCount });
      keys.set(client, key);
      return client;
    },
    async release(client, reusable) {
      const key = keys.get(client);
      keys.delete(client);
      if (!reusable || key === undefined) return client.close();
      idle.set(key, [...(idle.get(key) ?? []), client]);
    },
  };
}

const clients = clientLender();

async function answer(request: CliRequest): Promise<CliReply> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(request.argv, {
    ...nodeFiles(request.cwd),
    clients,
    out: (line) => stdout.push(`${line}\n`),
    err: (line) => stderr.push(`${line}\n`),
  });
  return { code, stdout: stdout.join(""), stderr: stderr.join("") };
}

function serve(socket: string, ready: Int32Array | undefined): void {
  const signal = (state: number): void => {
    if (ready === undefined) return;
    Atomics.store(ready, 0, state);
    Atomics.notify(ready, 0);
  };
  // Half-open: a client ends its side once its request is sent, and waits for the answer.
  const server = createServer({ allowHalfOpen: true }, (connection) => {
    const chunks: Buffer[] = [];
    connection.on("data", (chunk: Buffer) => chunks.push(chunk));
    connection.on("error", () => connection.destroy());
    connection.on("end", () => {
      let reply: Promise<CliReply>;
      try {
        reply = answer(JSON.parse(Buffer.concat(chunks).toString("utf8")) as CliRequest);
      } catch (e) {
        reply = Promise.resolve({ code: 2, stdout: "", stderr: `cli_server: a request that is not JSON: ${(e as Error).message}\n` });
      }
      // A command that throws past runCli's own handling still answers (as a crash of `xlats` would exit non-zero).
      void reply
        .catch((e: unknown): CliReply => ({ code: 70, stdout: "", stderr: `cli_server: the command threw: ${(e as Error)?.stack ?? String(e)}\n` }))
        .then((r) => connection.end(replyFrame(r)));
    });
  });
  // An error before listening (the socket's path taken) ends the worker: startCliServer's
  // promise rejects with it, startCliServerSync's wait ends at once.
  server.once("error", (e) => {
    signal(2);
    throw e;
  });
  server.listen(socket, () => {
    parentPort!.postMessage("listening");
    signal(1);
  });
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  const data = workerData as { socket: string; ready?: Int32Array };
  serve(data.socket, data.ready);
}
