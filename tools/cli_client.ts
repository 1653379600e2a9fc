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
  // The reply's frame (tools/cli_server.ts, replyFrame): "CODE STDOUT_BYTES STDERR_BYTES\n", then the bytes.
  const frame = Buffer.concat(chunks);
  const newline = frame.indexOf(10);
  const header = newline < 0 ? null : /^(-?\d+) (\d+) (\d+)$/.exec(frame.subarray(0, newline).toString("utf8"));
  if (header === null || newline + 1 + Number(header[2]) + Number(header[3]) !== frame.length) {
    process.stderr.write(`cli_client: the xlats server at ${socket} closed the connection without an answer\n`);
    process.exitCode = 2;
    return;
  }
  const outEnd = newline + 1 + Number(header[2]);
  process.stdout.write(frame.subarray(newline + 1, outEnd));
  process.stderr.write(frame.subarray(outEnd));
  process.exitCode = Number(header[1]);
});
connection.end(JSON.stringify({ argv, cwd: process.cwd() }));
