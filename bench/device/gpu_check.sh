#!/usr/bin/env bash
# Issue 23's GPU measurement in one command, for a lent GPU machine (the device tool's `run`,
# which copies the repo's tracked files there and the ignored folder .gpu/ that
# bench/device/pack.sh made here):
#
#   run  command: "bash bench/device/gpu_check.sh"   carry: [".gpu"]   timeout_s: 480
#
# That machine is bare at each start, has no Node and reaches no network. This script
# unpacks .gpu/ (Node, the built dist/, Dawn's binding, the GPU peers' files), sets up
# Vulkan (apt's loader from .gpu/ where the machine has none; NVIDIA's driver file where
# the loader finds no driver), prints nvidia-smi and the Dawn adapter, then runs the Node
# GPU bench (bench/webgpu_node.ts: the 4096 matmul and the decoder first, each workload
# with a timeout, the whole within a budget) and ends with one line that starts
# "GPU_CHECK:". It goes on past what fails (no driver, a software adapter, a peer that
# cannot run) and says so. Files in $OUT: gpu_check.log (everything printed),
# webgpu_node.md (the tables), webgpu_node.json (every cell, the adapter, the targets).
#
# Arguments go to the bench (--quick, --only gpt2,matmul, --rounds 2, --runners ...).
# GPU_CHECK_SECONDS (default 420) is the whole script's time; GPU_CHECK_CELL_TIMEOUT
# (default 60) one workload's on one runner; GPU_CHECK_LOADER=carried uses .gpu/'s Vulkan
# loader even where the machine has one (the rehearsal, bench/device/rehearse.sh).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_check.log") 2>&1
TEE=$!
TOTAL_S=${GPU_CHECK_SECONDS:-420}
CELL_S=${GPU_CHECK_CELL_TIMEOUT:-60}
START=$SECONDS
NOTES=()
say() { echo "[gpu_check $((SECONDS - START)) s] $*"; }
note() { NOTES+=("$1"); say "NOTE: $1"; }
finish() {
  local status=$1 detail=$2
  local joined="" n
  for n in "${NOTES[@]}"; do joined+="${joined:+; }$n"; done
  [ -n "$joined" ] && joined=" Notes: $joined."
  echo "GPU_CHECK: $status after $((SECONDS - START)) s. $detail$joined"
  # tee has the last line on the way: let it write it before the script ends.
  exec >&- 2>&-
  wait "$TEE" 2>/dev/null
  exit "$([ "$status" = FAIL ] && echo 1 || echo 0)"
}

# 1. The bundle, unpacked over the repo's copy (dist/, node_modules/, bench/node_modules/, node/).
[ -f .gpu/bundle.tar.xz ] || finish FAIL "no .gpu/bundle.tar.xz: run bash bench/device/pack.sh here and carry [\".gpu\"]."
say "unpacking .gpu/bundle.tar.xz ($(du -h .gpu/bundle.tar.xz | cut -f1))"
if command -v xz >/dev/null; then
  tar -xJf .gpu/bundle.tar.xz -C "$ROOT" || finish FAIL "tar could not unpack .gpu/bundle.tar.xz."
else
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.tar.xz "$ROOT" \
    || finish FAIL "no xz, and python3 could not unpack .gpu/bundle.tar.xz."
fi
cat .gpu/MANIFEST.txt 2>/dev/null | head -3

# 2. Node: the machine's where it has Node 20 or newer, else the one carried.
NODE=$ROOT/node/bin/node
if command -v node >/dev/null && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
  NODE=$(command -v node)
fi
"$NODE" --version >/dev/null 2>&1 || finish FAIL "no Node runs here ($NODE)."
say "node: $NODE $("$NODE" --version)"

# 3. Vulkan: the loader, then a driver for it.
if [ "${GPU_CHECK_LOADER:-}" = carried ] || ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  LOADER=/tmp/xlats-vulkan
  rm -rf "$LOADER" && mkdir -p "$LOADER"
  for deb in .gpu/*.deb; do
    [ -f "$deb" ] && { dpkg -x "$deb" "$LOADER" || note "dpkg could not unpack $deb"; }
  done
  LIBDIR=$(dirname "$(find "$LOADER" -name 'libvulkan.so.1*' | head -1)" 2>/dev/null)
  if [ -n "$LIBDIR" ] && [ "$LIBDIR" != . ]; then
    export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    say "Vulkan loader: carried ($(basename "$(ls .gpu/libvulkan1_*.deb 2>/dev/null | head -1)"), in $LIBDIR)"
  else
    note "no Vulkan loader here and none unpacked from .gpu/: Dawn will find no adapter"
  fi
else
  say "Vulkan loader: the machine's ($(ldconfig -p | grep -m1 'libvulkan\.so\.1' | sed 's/.*=> //'))"
fi
NVIDIA_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
ICDS=$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json /usr/local/share/vulkan/icd.d/*.json 2>/dev/null | tr '\n' ' ')
DRIVERS=${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-$ICDS}}
say "Vulkan drivers: ${DRIVERS:-none in the folders the loader reads}"
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ -f "$NVIDIA_ICD" ] && ! grep -qil nvidia $ICDS /dev/null 2>/dev/null; then
  export VK_DRIVER_FILES=$NVIDIA_ICD
  say "VK_DRIVER_FILES=$NVIDIA_ICD (NVIDIA's driver file, outside the loader's folders)"
fi

# 4. The GPU as the system and as Dawn see it.
if command -v nvidia-smi >/dev/null; then
  timeout 30 nvidia-smi || note "nvidia-smi failed"
  timeout 30 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
else
  note "no nvidia-smi on this machine"
fi
probe() { timeout 150 "$NODE" dist/bench/webgpu_node.js --probe 2>&1 | grep '^@@gpu-probe ' | sed 's/^@@gpu-probe //'; }
field() { "$NODE" -e 'const p = JSON.parse(process.argv[1] || "{}"); const v = p[process.argv[2]]; console.log(v === undefined ? "" : String(v))' "$1" "$2"; }
PROBE=$(probe)
if [ "$(field "$PROBE" hasAdapter)" != true ] || [ "$(field "$PROBE" software)" = true ]; then
  if [ -f "$NVIDIA_ICD" ] && [ "${VK_DRIVER_FILES:-}" != "$NVIDIA_ICD" ]; then
    FOUND=$(field "$PROBE" adapter)
    say "Dawn found ${FOUND:-no adapter (the probe gave no answer)}: trying VK_DRIVER_FILES=$NVIDIA_ICD"
    export VK_DRIVER_FILES=$NVIDIA_ICD
    PROBE=$(probe)
  fi
fi
ADAPTER=$(field "$PROBE" adapter)
say "Dawn adapter: ${ADAPTER:-none (the probe gave no answer)}"
PEAK=$(field "$PROBE" peakGflops | cut -d. -f1)
if [ -n "$PEAK" ]; then say "f32 FMA peak: $PEAK GFLOP/s"; else say "f32 FMA peak: not measured $(field "$PROBE" peakUnavailable)"; fi
if [ "$(field "$PROBE" hasAdapter)" != true ]; then
  note "Dawn has no WebGPU adapter (${ADAPTER:-no answer}): every cell below is n/a"
elif [ "$(field "$PROBE" software)" = true ]; then
  note "Dawn sees only a software (CPU) adapter, $ADAPTER: the figures below are not a GPU's"
fi

# 5. The bench, within what is left of the script's time (45 s kept for the end).
BUDGET=$((TOTAL_S - (SECONDS - START) - 45))
[ "$BUDGET" -ge 60 ] || BUDGET=60
say "bench: budget $BUDGET s, $CELL_S s a workload; arguments: ${*:-none}"
timeout --kill-after=10 $((BUDGET + 30)) "$NODE" dist/bench/webgpu_node.js --budget "$BUDGET" --timeout "$CELL_S" \
  --json "$OUT/webgpu_node.json" "$@" | tee "$OUT/webgpu_node.md"
BENCH_RC=${PIPESTATUS[0]}
SUMMARY=$(grep '^webgpu_node summary:' "$OUT/webgpu_node.md" | sed 's/^webgpu_node summary: //')
case $BENCH_RC in
  0) ;;
  1) note "a result check failed (see BENCHMARK RESULT CHECK FAILED above)" ;;
  124|137) note "the bench ran past its budget and was stopped" ;;
  *) note "the bench exited with $BENCH_RC" ;;
esac
command -v nvidia-smi >/dev/null && timeout 30 nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader

if [ -z "$SUMMARY" ]; then finish FAIL "the bench printed no summary (exit $BENCH_RC)."; fi
if [ "$(field "$PROBE" hasAdapter)" = true ] && [ "$(field "$PROBE" software)" != true ] && [ "$BENCH_RC" = 0 ]; then
  finish OK "$SUMMARY"
fi
finish DEGRADED "$SUMMARY"
