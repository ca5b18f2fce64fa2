#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, as one short script for a lent device machine (the
# `device` tool runs it in the repository root; what lands in $OUT comes back):
#   bash tests/device/doctor_deep.sh
# It builds cudaenv (release preset) unless build/release/src/cudaenv is there, then records:
# the whole doctor with --deep (text -v and JSON), the smoke query child's raw answer for the
# libcuda the loader picks, and nvidia-smi's own view to compare against. Read-only: it installs
# nothing and changes nothing on the machine.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-/tmp/cudaenv-device}"
mkdir -p "$OUT"
exe=build/release/src/cudaenv
if [ ! -x "$exe" ]; then
  { cmake --preset release && cmake --build --preset release --target cudaenv -- -j"$(nproc)"; } \
    > "$OUT/build.log" 2>&1 || { echo "build failed: see $OUT/build.log"; tail -20 "$OUT/build.log"; exit 1; }
fi
start=$(date +%s%N)
"$exe" doctor --deep -v > "$OUT/doctor-deep.txt" 2>&1
echo "doctor --deep -v: exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee "$OUT/summary.txt"
"$exe" doctor --deep --json > "$OUT/doctor-deep.json" 2> "$OUT/doctor-deep.json.err"
echo "doctor --deep --json: exit $?" | tee -a "$OUT/summary.txt"
lib=$(/sbin/ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
if [ -n "$lib" ]; then
  "$exe" __doctor-query smoke "$lib" > "$OUT/smoke-query.txt" 2>&1
  echo "smoke query ($lib): exit $?" | tee -a "$OUT/summary.txt"
fi
command -v nvidia-smi > /dev/null && nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1
cat "$OUT/doctor-deep.txt"
