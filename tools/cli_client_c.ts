// The client of tools/cli_server.ts as a C program, for harnesses that start it once per
// case: Shardy's lit tests start a client about 700 times, the CLI tests a few hundred.
// tools/cli_client.ts is a bare Node, about 0.13-0.16 CPU-s a start on this project's
// machines (Node's own start: V8, its built-in modules); this program's start is a
// process's exec, about a millisecond. It speaks the same protocol (the request as JSON,
// the reply framed as cli_server.ts's replyFrame writes it) and answers the same way:
// what the command printed, its exit code, and the Node client's message and code 2 when
// the server does not answer. Built with the C compiler the native backend uses ($CC, else
// cc); where there is none, or it fails, cliClientCommand gives the Node client, which
// behaves the same, only slower to start.

import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The Node client, built beside this module (dist/tools/cli_client.js). */
const NODE_CLIENT = join(dirname(fileURLToPath(import.meta.url)), "cli_client.js");

const SOURCE = String.raw`
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A growing byte buffer: the request, then the reply. */
struct bytes { char *data; size_t length, capacity; };

static void append(struct bytes *b, const char *data, size_t n) {
  if (b->length + n > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < b->length + n) capacity *= 2;
    b->data = realloc(b->data, capacity);
    if (b->data == NULL) { fputs("cli_client: out of memory\n", stderr); exit(2); }
    b->capacity = capacity;
  }
  memcpy(b->data + b->length, data, n);
  b->length += n;
}

/* A JSON string: quotes and backslashes escaped, control characters as \u00XX, other bytes as they are (UTF-8). */
static void append_json(struct bytes *b, const char *s) {
  append(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') { char e[2] = { '\\', (char)*p }; append(b, e, 2); }
    else if (*p < 0x20) { char e[8]; snprintf(e, sizeof e, "\\u%04x", *p); append(b, e, 6); }
    else append(b, (const char *)p, 1);
  }
  append(b, "\"", 1);
}

static int write_all(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0) { if (errno == EINTR) continue; return -1; }
    data += w;
    n -= (size_t)w;
  }
  return 0;
}

static int no_answer(const char *socket_path, const char *why) {
  fprintf(stderr, "cli_client: no answer from the xlats server at %s: %s\n", socket_path, why);
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 3) { fputs("usage: cli_client SOCKET COMMAND ARGS...\n", stderr); return 2; }
  const char *socket_path = argv[1];
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) { perror("cli_client: getcwd"); return 2; }
  struct bytes request = { 0 };
  append(&request, "{\"argv\":[", 9);
  for (int i = 2; i < argc; i++) {
    if (i > 2) append(&request, ",", 1);
    append_json(&request, argv[i]);
  }
  append(&request, "],\"cwd\":", 8);
  append_json(&request, cwd);
  append(&request, "}", 1);

  struct sockaddr_un address = { .sun_family = AF_UNIX };
  if (strlen(socket_path) >= sizeof address.sun_path) return no_answer(socket_path, "the socket's path is too long");
  strcpy(address.sun_path, socket_path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) return no_answer(socket_path, strerror(errno));
  /* Half-open, as the server expects: the request ends with this side's end. */
  if (write_all(fd, request.data, request.length) != 0 || shutdown(fd, SHUT_WR) != 0) return no_answer(socket_path, strerror(errno));

  struct bytes reply = { 0 };
  char chunk[65536];
  for (;;) {
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0) { if (errno == EINTR) continue; return no_answer(socket_path, strerror(errno)); }
    if (r == 0) break;
    append(&reply, chunk, (size_t)r);
  }
  close(fd);
  /* The frame: "CODE STDOUT_BYTES STDERR_BYTES\n", then the two outputs' bytes. */
  char *newline = reply.length > 0 ? memchr(reply.data, '\n', reply.length) : NULL;
  long code;
  unsigned long long out_bytes, err_bytes;
  if (newline == NULL) {
    fprintf(stderr, "cli_client: the xlats server at %s closed the connection without an answer\n", socket_path);
    return 2;
  }
  *newline = '\0';
  size_t header = (size_t)(newline - reply.data) + 1;
  if (sscanf(reply.data, "%ld %llu %llu", &code, &out_bytes, &err_bytes) != 3 || header + out_bytes + err_bytes != reply.length) {
    fprintf(stderr, "cli_client: the xlats server at %s closed the connection without an answer\n", socket_path);
    return 2;
  }
  if (write_all(1, reply.data + header, out_bytes) != 0 || write_all(2, reply.data + header + out_bytes, err_bytes) != 0) return 2;
  return (int)(code & 0xff);
}
`;

/**
 * The command line that runs the client against the server at `socket` (its arguments
 * follow): the C client, built in `dir` (a folder of the caller's, which it removes), or
 * the Node client where no C compiler builds it.
 */
export function cliClientCommand(dir: string, socket: string): string[] {
  const binary = buildCClient(dir);
  return binary === undefined ? [process.execPath, NODE_CLIENT, socket] : [binary, socket];
}

/** Builds the C client in `dir`; its path, or undefined where the compiler is missing or fails. */
export function buildCClient(dir: string): string | undefined {
  const source = join(dir, "cli_client.c");
  const binary = join(dir, "cli_client");
  writeFileSync(source, SOURCE);
  const cc = process.env["CC"]?.trim() || "cc";
  const r = spawnSync(cc, ["-O1", "-o", binary, source], { encoding: "utf8" });
  return r.status === 0 && existsSync(binary) ? binary : undefined;
}
