#!/usr/bin/env bash
# A rehearsal of bench/device/gpu_check.sh here, as the lent GPU machine would run it, as
# closely as this machine allows: a fresh clone of the current branch in /tmp with .gpu/
# copied in (as the device tool's `carry` does), an empty environment (env -i) whose PATH
# has the tools the script uses but no node (the carried one must serve), no network
# (unshare -n, where permitted), the Vulkan loader from .gpu/, and SwiftShader's driver
# (Chromium's software Vulkan) standing in for NVIDIA's. SwiftShader's figures show only
# that everything runs and is checked. Commit first: the clone takes the branch's commits.
#
#   bash bench/device/rehearse.sh [gpu_check.sh's arguments, e.g. --quick]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -f .gpu/bundle.tar.xz ] || { echo "rehearse.sh: no .gpu/: run bash bench/device/pack.sh first" >&2; exit 1; }
CLONE=/tmp/xlats-gpu-rehearsal
OUT=${OUT:-/tmp/gpuout}
BIN=/tmp/xlats-gpu-rehearsal-bin
rm -rf "$CLONE" "$OUT" "$BIN" && mkdir -p "$OUT" "$BIN"
git clone -q --branch "$(git rev-parse --abbrev-ref HEAD)" "$PWD" "$CLONE"
cp -r .gpu "$CLONE/.gpu"
for tool in bash sh env tar xz dpkg dpkg-deb ldconfig grep sed cut du ls find head tail tee timeout mkdir rm cat \
  dirname basename tr sort python3 date sleep readlink; do
  path=$(command -v "$tool" || true)
  [ -n "$path" ] && ln -s "$(readlink -f "$path")" "$BIN/$tool"
done
# What the device tool sends: the tracked files and the carried folder.
TRACKED=$(cd "$CLONE" && git ls-files -z | du --files0-from=- -cb | tail -1 | cut -f1)
CARRIED=$(du -sb "$CLONE/.gpu" | cut -f1)
echo "rehearse.sh: sends $((TRACKED / 1024 / 1024)) MiB of tracked files + $((CARRIED / 1024 / 1024)) MiB of .gpu = $(((TRACKED + CARRIED) / 1024 / 1024)) MiB (the tool's limit: 64)"
NET=("$(command -v unshare)" -n)
unshare -n true 2>/dev/null || { NET=(); echo "rehearse.sh: unshare -n not permitted: the network stays"; }
START=$(date +%s)
set +e
env -i PATH="$BIN:/usr/sbin:/sbin" OUT="$OUT" GPU_CHECK_LOADER=carried \
  VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json "${NET[@]}" \
  bash -c 'cd "$1" && shift && command -v node && echo "rehearse.sh: a node is on the PATH" >&2; bash bench/device/gpu_check.sh "$@"' _ "$CLONE" "$@"
RC=$?
echo "rehearse.sh: gpu_check.sh exited $RC after $(($(date +%s) - START)) s; its files: $(ls "$OUT" | tr '\n' ' ')"
exit $RC
