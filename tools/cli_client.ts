// `node dist/tools/cli_client.js SOCKET COMMAND ARGS...`: `xlats COMMAND ARGS...` run by the
// server listening on SOCKET (tools/cli_server.ts): prints what the command printed and
// exits with its code. It imports nothing of xlats, so it starts as fast as Node does.

import { connect } from "node:net";

const [socket, ...argv] = process.argv.slice(2);
if (socket === undefined || argv.length === 0) {
  process.stderr.write("usage: node cli_client.js SOCKET COMMAND ARGS...\n");
  process.exit(2);
}
const chunks: Buffer[] = [];
const connection = connect(socket);
connection.on("data", (chunk: Buffer) => chunks.push(chunk));
connection.on("error", (e) => {
  process.stderr.write(`cli_client: no answer from the xlats server at ${socket}: ${e.message}\n`);
  process.exitCode = 2;
});
connection.on("end", () => {
  let reply: { code: number; stdout: string; stderr: string };
  try {
    reply = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof reply;
  } catch {
    process.stderr.write(`cli_client: the xlats server at ${socket} closed the connection without an answer\n`);
    process.exitCode = 2;
    return;
  }
  process.stdout.write(reply.stdout);
  process.stderr.write(reply.stderr);
  process.exitCode = reply.code;
});
connection.end(JSON.stringify({ argv, cwd: process.cwd() }));
