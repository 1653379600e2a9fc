#!/usr/bin/env bash
# Packs what a lent GPU machine needs to run the Node GPU bench (bench/webgpu_node.ts) into
# ONE ignored folder, .gpu/, for the device tool's `carry`: that machine has no Node, no npm
# and no network. Run here, in the repository root, after `npm run build` and with bench's
# peers installed (npm ci --prefix bench):
#
#   bash bench/device/pack.sh
#
# .gpu/bundle.tar.xz holds, under the repository's own paths (gpu_check.sh unpacks it over
# the repo's copy there): this machine's Node binary (node/bin/node), the built dist/src and
# dist/bench (.js only), the webgpu package with its linux-x64 dawn.node alone, and of
# bench/node_modules only the files the three GPU peers load in Node. Beside it apt's .debs
# of the Vulkan loader (libvulkan1; that machine may have none) and libglvnd0. Prints the
# sizes; fails if the folder is over 60 MiB (the device tool carries 64 MiB in all, the
# repo's files included). dawn.node (webgpu 0.6.2) needs glibc 2.34 and GCC 12's libstdc++
# (GLIBCXX_3.4.30) there; without them gpu_check.sh's probe says Dawn could not be loaded.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
OUTDIR=.gpu
LIMIT_MIB=60

# .gpu/ must never reach git (.gitignore names it; an older checkout gets it in its exclude file).
if ! git check-ignore -q "$OUTDIR/"; then
  echo "/$OUTDIR/" >> "$(git rev-parse --git-path info/exclude)"
fi
for f in dist/bench/webgpu_node.js bench/node_modules/onnxruntime-web/package.json node_modules/webgpu/dist/linux-x64/dawn.node; do
  [ -e "$f" ] || { echo "pack.sh: $f is missing: run npm run build and npm ci --prefix bench first" >&2; exit 1; }
done
NODE_BIN=${NODE_BIN:-$(command -v node)}
case "$("$NODE_BIN" -p 'process.platform + "-" + process.arch + " " + process.versions.node.split(".")[0]')" in
  "linux-x64 "2[0-9]) ;;
  *) echo "pack.sh: $NODE_BIN is not Node >= 20 for linux-x64 (the GPU machine's)" >&2; exit 1 ;;
esac

rm -rf "$OUTDIR" && mkdir -p "$OUTDIR"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
# Copies the files named on stdin (NUL-separated, relative paths) into the stage, paths kept.
stage() { tar --null -T - -cf - | tar -xf - -C "$STAGE"; }
mkdir -p "$STAGE/node/bin"
cp "$(readlink -f "$NODE_BIN")" "$STAGE/node/bin/node"

# xlats as built: the library and the bench, JavaScript only (no .d.ts, no source maps).
find dist/src dist/bench -name '*.js' -print0 | stage

# Dawn's binding: its index.js (no dependencies at run time) and the linux-x64 build only.
mkdir -p "$STAGE/node_modules/webgpu/dist/linux-x64"
cp node_modules/webgpu/package.json node_modules/webgpu/index.js node_modules/webgpu/LICENSE.md "$STAGE/node_modules/webgpu/"
cp node_modules/webgpu/dist/linux-x64/dawn.node "$STAGE/node_modules/webgpu/dist/linux-x64/"

# The GPU peers' files, as Node loads them (read off `strace -f -e trace=openat` of each
# peer's child run, `node dist/bench/webgpu_node.js --child NAME:1 --workloads 4 --quick`):
# onnxruntime-web's WebGPU build and its wasm, and nothing else of its 136 MiB; tfjs-core
# and its webgpu backend as their one-file node builds; jax-js' ES module build (its dist,
# JavaScript only: its chunks import each other).
BM=bench/node_modules
{
  printf '%s\0' \
    "$BM/onnxruntime-web/package.json" \
    "$BM/onnxruntime-web/dist/ort.webgpu.bundle.min.mjs" \
    "$BM/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.mjs" \
    "$BM/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm" \
    "$BM/@tensorflow/tfjs-core/package.json" \
    "$BM/@tensorflow/tfjs-core/dist/tf-core.node.js" \
    "$BM/@tensorflow/tfjs-backend-webgpu/package.json" \
    "$BM/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.node.js" \
    "$BM/@jax-js/jax/package.json"
  find "$BM/@jax-js/jax/dist" -name '*.js' -print0
} | stage

# The Vulkan loader, for a machine without one (the device README's recipe: apt's
# libvulkan1), and libglvnd0, whose libGLdispatch NVIDIA's Vulkan driver (libGLX_nvidia) loads.
LISTS=$(mktemp -d)
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$LISTS"
# shellcheck disable=SC2086
(apt-get $o update -qq >/dev/null && cd "$OUTDIR" && apt-get $o download -qq libvulkan1 libglvnd0) \
  || { echo "pack.sh: could not download libvulkan1 and libglvnd0 (apt-get needs the network here)" >&2; exit 1; }
rm -rf "$LISTS"

(cd "$STAGE" && tar -cf - node dist node_modules bench | xz -T0 -6 > "$OLDPWD/$OUTDIR/bundle.tar.xz")
{
  echo "packed $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench || echo ' (uncommitted changes in src/ or bench/)')"
  echo "node $("$NODE_BIN" --version) ($(readlink -f "$NODE_BIN")); webgpu $("$NODE_BIN" -p 'require("./node_modules/webgpu/package.json").version')"
  echo "unpacked: $(du -sh "$STAGE" | cut -f1)"
  (cd "$OUTDIR" && ls -l)
} > "$OUTDIR/MANIFEST.txt"
cat "$OUTDIR/MANIFEST.txt"
SIZE=$(du -sb "$OUTDIR" | cut -f1)
echo "pack.sh: $OUTDIR is $((SIZE / 1024 / 1024)) MiB ($SIZE bytes); carry it with: run command \"bash bench/device/gpu_check.sh\", carry [\"$OUTDIR\"]"
[ "$SIZE" -le $((LIMIT_MIB * 1024 * 1024)) ] || { echo "pack.sh: over ${LIMIT_MIB} MiB" >&2; exit 1; }
