// The on-disk cache of built native modules. A cached module is loaded with dlopen, so
// whatever sits in the cache runs as the user: the cache is trusted only when nobody
// else can write to it, and an entry only when its bytes are the ones that were built.
//
//   - The directory must belong to this user and not be writable by group or others
//     (checked once per process, when the toolchain is found; else the native backend
//     is unavailable, saying why).
//   - An entry is `<key>-<sha256 of its bytes>.node` for the glue (a Node-API module), or
//     `.so` for a program's module, which the glue loads (key: the hash of what the entry
//     is built from, toolchain.ts); `.o` entries, object files that earlier versions
//     linked, are never loaded and age out. It is written atomically: the
//     compiler writes a temporary, which is fsynced, then renamed to its final name.
//     Before loading, the file must be a regular file of this user's, not writable by
//     others, whose bytes hash to the digest in its name; one that is not (truncated
//     by a crash or a full disk, or planted) is deleted and rebuilt, never loaded.
//   - The cache is capped ($XLATS_NATIVE_CACHE_MAX_MB, default 512 MiB): after each
//     build the least recently used entries (a hit touches its entry's mtime) are
//     evicted until the rest fit, sparing those this process uses.
//   - Temporaries (`<key>.<pid>-<random>.c`, `.o`, `.tmp`) of builds that were killed are
//     removed once they are older than ten minutes and their process is gone.

import { CompileError } from "../../types/errors.js";
import type { NodeBuiltins } from "./node.js";

/** The cache's default cap in MiB: a module is 50 KB to a few MB, so this holds hundreds of programs. */
export const DEFAULT_NATIVE_CACHE_MAX_MB = 512;

/** A build's temporary older than this, whose process is gone, was left by a killed build. */
const STALE_TEMPORARY_MS = 10 * 60_000;

const ENTRY = /^([0-9a-f]{32})-([0-9a-f]{64})\.(node|so|o)$/;
const TEMPORARY = /^[0-9a-f]{32}\.(\d+)-[0-9a-f]{8}\.(c|o|tmp)$/;
/** Entries named by the key alone, written before entries carried their digest: never loaded, evicted first as the oldest. */
const UNCHECKED_ENTRY = /^[0-9a-f]{32}\.node$/;

/** Entries this process built, found or loaded: eviction spares them (a device worker may be about to load one). */
const inUse = new Set<string>();

/** The cap in bytes: $XLATS_NATIVE_CACHE_MAX_MB (MiB, fractions allowed), else the default; a CompileError for a bad value. */
export function cacheMaxBytes(env: NodeJS.ProcessEnv): number {
  const text = env["XLATS_NATIVE_CACHE_MAX_MB"]?.trim();
  if (text === undefined || text === "") return DEFAULT_NATIVE_CACHE_MAX_MB * 2 ** 20;
  const mb = Number(text);
  if (!Number.isFinite(mb) || mb <= 0) throw new CompileError(`XLATS_NATIVE_CACHE_MAX_MB must be a positive number of MiB, got '${text}'`);
  return Math.ceil(mb * 2 ** 20);
}

/** Why a file or directory may not be trusted with code that runs as this user, or undefined when it may. */
function distrust(node: NodeBuiltins, stats: { uid: number; mode: number }, what: string): string | undefined {
  const uid = node.process.getuid?.();
  // Windows has no POSIX owners or mode bits: its ACLs are the user profile's.
  if (uid === undefined) return undefined;
  if (stats.uid !== uid) return `${what} belongs to user ${stats.uid}, not to this user (${uid})`;
  if ((stats.mode & 0o022) !== 0) return `${what} is writable by other users (mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")})`;
  return undefined;
}

/** Creates the cache directory (private) when absent; a CompileError when another user owns it or others may write to it. */
export function checkCacheDir(node: NodeBuiltins, dir: string): void {
  const { fs } = node;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stats = fs.statSync(dir);
  if (!stats.isDirectory()) throw new CompileError(`the native module cache ${dir} is not a directory`);
  const reason = distrust(node, stats, `the native module cache ${dir}`);
  if (reason !== undefined) {
    throw new CompileError(`${reason}: a module planted there would run as this user, so it is not used; ` +
      `make it yours alone (chown, chmod 700) or set XLATS_NATIVE_CACHE to a private directory`);
  }
}

function sha256(node: NodeBuiltins, bytes: Uint8Array): string {
  return node.crypto.createHash("sha256").update(bytes).digest("hex");
}

/** Why the entry at `path` may not be loaded (not this user's, writable by others, not its digest), or undefined when it may. */
export function entryProblem(node: NodeBuiltins, path: string): string | undefined {
  const { fs } = node;
  const match = ENTRY.exec(node.path.basename(path));
  if (match === null) return `${path} is not a cache entry's name`;
  let stats;
  try {
    stats = fs.lstatSync(path);
  } catch {
    return `${path} is missing`;
  }
  if (!stats.isFile()) return `${path} is not a regular file`;
  const reason = distrust(node, stats, path);
  if (reason !== undefined) return reason;
  if (sha256(node, fs.readFileSync(path)) !== match[2]) return `${path} does not hold the bytes that were built (truncated or altered)`;
  return undefined;
}

function remove(node: NodeBuiltins, path: string): void {
  try {
    node.fs.rmSync(path, { force: true });
  } catch {
    // Another process removed it, or (Windows) has it loaded: the next sweep tries again.
  }
}

/**
 * The cache directory's entry names by key, as this process last listed them. Listing
 * a directory costs about 3 us an entry (35 ms of CPU for the 13,000 entries of a cache
 * that many test runs filled), too much to pay on every lookup: a lookup reads this
 * listing, and lists the directory again only on a miss (another process may have built
 * the entry since).
 */
const listings = new Map<string, Map<string, string[]>>();

function list(dir: string, names: readonly string[]): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const name of names) {
    const key = ENTRY.exec(name)?.[1];
    if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), name]);
  }
  listings.set(dir, byKey);
  return byKey;
}

function listing(node: NodeBuiltins, dir: string, fresh: boolean): Map<string, string[]> {
  const known = listings.get(dir);
  if (known !== undefined && !fresh) return known;
  let names: string[];
  try {
    names = node.fs.readdirSync(dir);
  } catch {
    names = [];
  }
  return list(dir, names);
}

/** The first sound entry of `key` in `byKey` (its mtime touched: recently used); unsound ones are removed. */
function soundEntry(node: NodeBuiltins, dir: string, byKey: Map<string, string[]>, key: string): string | undefined {
  const names = byKey.get(key) ?? [];
  for (const name of names) {
    const path = node.path.join(dir, name);
    if (entryProblem(node, path) !== undefined) {
      remove(node, path);
      continue;
    }
    try {
      const now = new Date();
      node.fs.utimesSync(path, now, now);
    } catch {
      // Only the eviction order suffers.
    }
    inUse.add(path);
    return path;
  }
  byKey.delete(key);
  return undefined;
}

/** A sound entry for `key`, or undefined; unsound ones are removed. A miss in this process's listing lists the directory again. */
export function findEntry(node: NodeBuiltins, dir: string, key: string): string | undefined {
  return soundEntry(node, dir, listing(node, dir, false), key) ?? soundEntry(node, dir, listing(node, dir, true), key);
}

/** Moves a finished build's output `tmp` into the cache as the entry of `key`: fsync, then rename. Returns its path. */
export function storeEntry(node: NodeBuiltins, dir: string, key: string, tmp: string, extension: "node" | "so"): string {
  const { fs } = node;
  fs.chmodSync(tmp, 0o700);
  const fd = fs.openSync(tmp, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const name = `${key}-${sha256(node, fs.readFileSync(tmp))}.${extension}`;
  const path = node.path.join(dir, name);
  fs.renameSync(tmp, path);
  inUse.add(path);
  const byKey = listings.get(dir);
  byKey?.set(key, [name, ...(byKey.get(key) ?? [])]);
  return path;
}

/** Marks a loaded module's entry as in use (spared by eviction). */
export function markInUse(path: string): void {
  inUse.add(path);
}

function processGone(node: NodeBuiltins, pid: number): boolean {
  try {
    node.process.kill(pid, 0);
    return false;
  } catch (e) {
    // EPERM: it exists, as another user's.
    return (e as { code?: string }).code === "ESRCH";
  }
}

/**
 * A sweep stats every entry: 0.2 s of CPU for the 13,000 entries of a cache that many
 * test runs filled, more than a build's compiler runs take. So a process sweeps at its
 * first build, and then only when the bytes it stored since its last sweep would take
 * the cache past its cap, or when that sweep is SWEEP_EVERY_MS old (others' builds).
 */
const SWEEP_EVERY_MS = 60_000;

/** Per cache directory: the bytes of its entries at this process's last sweep, plus what it stored since; and when that sweep ran. */
const sweeps = new Map<string, { bytes: number; at: number }>();

/** After a build stored the entry at `path`: sweeps the cache when one is due (see SWEEP_EVERY_MS). */
export function sweepIfDue(node: NodeBuiltins, dir: string, maxBytes: number, path: string): void {
  const last = sweeps.get(dir);
  if (last !== undefined) {
    last.bytes += node.fs.statSync(path).size;
    if (last.bytes <= maxBytes && Date.now() - last.at < SWEEP_EVERY_MS) return;
  }
  sweepCache(node, dir, maxBytes);
}

/**
 * Removes killed builds' temporaries, then evicts the least recently used entries
 * (unchecked old-format ones first) until the cache fits `maxBytes`.
 */
export function sweepCache(node: NodeBuiltins, dir: string, maxBytes: number): void {
  const { fs, path } = node;
  const now = Date.now();
  // The entries it removes leave this process's listing with them.
  listings.delete(dir);
  const entries: { path: string; bytes: number; used: number }[] = [];
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    let stats;
    try {
      stats = fs.lstatSync(file);
    } catch {
      continue;
    }
    const temporary = TEMPORARY.exec(name);
    if (temporary !== null) {
      if (now - stats.mtimeMs > STALE_TEMPORARY_MS && processGone(node, Number(temporary[1]))) remove(node, file);
    } else if (UNCHECKED_ENTRY.test(name)) {
      // An older xlats running now may still load it: not removed at once, but before any checked entry.
      entries.push({ path: file, bytes: stats.size, used: -Infinity });
    } else if (ENTRY.test(name)) {
      entries.push({ path: file, bytes: stats.size, used: stats.mtimeMs });
    }
  }
  let total = entries.reduce((n, e) => n + e.bytes, 0);
  entries.sort((a, b) => a.used - b.used);
  for (const e of entries) {
    if (total <= maxBytes) break;
    if (inUse.has(e.path)) continue;
    remove(node, e.path);
    total -= e.bytes;
  }
  sweeps.set(dir, { bytes: total, at: now });
}
