#!/usr/bin/env bash
# Mesa's lavapipe, a software Vulkan driver (LLVM), as the WebGPU tests' second adapter
# beside SwiftShader: Debian bookworm's Mesa 22 lacks what Dawn needs of it, so this takes
# bookworm-backports' mesa-vulkan-drivers (Mesa 25), downloads it with a private apt state
# (nothing is installed or configured system-wide) and keeps only the driver, in
# .cache/lavapipe/ with an ICD file naming it (VK_ICD_FILENAMES). Its shader compiler is
# Mesa's NIR, which folds float algebra on run-time values as Mesa's GPU drivers (AMD's and
# Intel's on Linux) do, and its workgroup memory keeps what the last workgroup left: the
# WebGPU kernels are tested against both (tools/run_tests.ts, docs/backends.md "Testing a
# backend"). Needs apt-get and dpkg-deb (Debian), the driver's libraries (libLLVM-15:
# libllvm15, present with Chromium's), and deb.debian.org. Idempotent; prints the ICD file.
#   bash tools/install_lavapipe.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest="$PWD/.cache/lavapipe"
icd="$dest/lvp_icd.json"
if [ -f "$icd" ]; then echo "$icd"; exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
echo "deb http://deb.debian.org/debian bookworm-backports main" > "$work/sources.list"
apt_options=(
  -o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Debug::NoLocking=1"
)
# As root, apt downloads as its _apt user, which may not write here.
if [ "$(id -u)" -eq 0 ]; then apt_options+=(-o "APT::Sandbox::User=root"); fi
apt-get "${apt_options[@]}" -qq update
(cd "$work" && apt-get "${apt_options[@]}" -qq download mesa-vulkan-drivers/bookworm-backports)
dpkg-deb -x "$work"/mesa-vulkan-drivers_*.deb "$work/root"
driver="$(find "$work/root" -name libvulkan_lvp.so | head -n 1)"
if [ -z "$driver" ]; then echo "install_lavapipe: the package holds no libvulkan_lvp.so" >&2; exit 1; fi
missing="$(ldd "$driver" | grep 'not found' || true)"
if [ -n "$missing" ]; then echo "install_lavapipe: the driver's libraries are missing:" >&2; echo "$missing" >&2; exit 1; fi
mkdir -p "$dest"
cp "$driver" "$dest/libvulkan_lvp.so"
printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "1.3.0"}}\n' "$dest/libvulkan_lvp.so" > "$icd"
echo "$icd"
