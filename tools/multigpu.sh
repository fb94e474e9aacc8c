#!/bin/sh
# multigpu.sh [BUILD] [GROUP] — the multi-device figures on a machine with several GPUs (the
# two-GPU H200 machine; on one GPU it is a dry run): every measurement of one device against the
# group, in one run, for docs/BENCHMARKS.md and docs/SCALING.md.
#   GEMM 8192³ and 16384³, f32 and f16 (tensor cores): resident and from host arrays
#   the streaming Canny batch, 200 frames 4K, PNG and JPEG (OpenCV's peers when python3 has cv2)
#   the data-parallel MLP: step time and the loss curve's difference against one device
#   host<->device bandwidth with every device copying at once
# BUILD defaults to build, GROUP to gpu (every GPU).
set -u
build=${1:-build} group=${2:-gpu}
clrun=$build/tools/clrun/clrun mlp=$build/examples/mlp/mlp
[ -x "$clrun" ] || { echo "multigpu: no $clrun (build first)"; exit 1; }
"$clrun" devices
echo "== GEMM: device 0 alone against the group (resident and from host arrays), f32 and f16"
"$clrun" bench gemm --devices "$group" --shapes 8192x8192x8192,16384x16384x16384 --repeat 5
echo "== the streaming Canny batch, 200 4K frames: one device, then the group"
"$clrun" bench pipeline --frames 200
"$clrun" bench pipeline --frames 200 --devices "$group"
echo "== the data-parallel MLP: one device, then the group (the curves compared)"
/usr/bin/time -f "mlp 300 steps, one device: %e s" "$mlp" 300 | tail -1
/usr/bin/time -f "mlp 300 steps on one device, then 300 on the group: %e s" "$mlp" 300 --devices "$group" | tail -2
echo "== host<->device bandwidth, one device, then every device at once"
"$clrun" bench transfer --devices "$group" --repeat 5
