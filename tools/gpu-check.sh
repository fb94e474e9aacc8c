#!/bin/bash
# gpu-check.sh — on a machine with a GPU: the library tests on that GPU, the CLI, and the transfer
# and launch benchmarks, in one go. From the repository root, after a release build in BUILD:
#   . .gpu/env.sh && bash tools/gpu-check.sh build-gpu        (the NVIDIA machine)
# The run-time libraries a build needs there include libexif (EXIF orientation of images): gather
# them with GPU_EXTRA_PACKAGES="libexif12" when the machine lacks it.
set -u
B=${1:-build-gpu}
export CLRUN_CACHE_DIR=${CLRUN_CACHE_DIR:-/tmp/clrun-gpu-cache}
export CLRUN_TEST_DEVICE=${CLRUN_TEST_DEVICE:-gpu}
export CLRUN_TEST_SEED=${CLRUN_TEST_SEED:-$(date +%s)}
rm -rf "$CLRUN_CACHE_DIR"
fails=0
step() { echo "=== $*"; "$@"; rc=$?; [ $rc = 0 ] || { echo "!!! exit $rc: $*"; fails=$((fails + 1)); }; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
step "$B/tools/clrun/clrun" devices
step "$B/tools/clrun/clrun" info -d gpu
for pass in cold warm; do
  echo "--- $pass"
  /usr/bin/time -f "whole process: %e s" "$B/tools/clrun/clrun" demo -d gpu
done
for t in status buffer program kernel cache vector reduce; do
  for pass in cold warm; do step "$B/tests/test_$t"; done
done
step "$B/examples/multiply" examples/multiply.cl
step "$B/tools/clrun/clrun" bench launch -d gpu --repeat 9
step "$B/tools/clrun/clrun" bench transfer -d gpu --repeat 5
step "$B/tools/clrun/clrun" bench vector -d gpu --repeat 9
echo "gpu-check: $fails failing step(s)"
