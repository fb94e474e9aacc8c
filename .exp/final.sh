export CLRUN_CACHE_DIR=/tmp/c CLRUN_TEST_DEVICE=gpu
C=build-gpu/tools/clrun/clrun
build-gpu/tests/test_canny 2>&1 | tail -3; build-gpu/tests/test_gemm 2>&1 | grep -v "RUN\|OK \]" | tail -6
$C demo -d gpu
$C tune gemm -d gpu --quick --dry-run 2>&1 | grep "best\|clblast\|cpu-kernel"
$C bench gemm -d gpu --repeat 7 --shapes 1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,4095x4097x1000,4096x4096x1000,127x8191x64,128x8192x64,8191x127x4096,8192x128x4096
export CLRUN_DEVICE=gpu
for a in "" "--low 30 --high 90 --l2" "--low 10 --high 250"; do python3 tools/canny_golden.py compare $C tests/data/canny $a 2>&1 | tail -1; done
python3 tools/canny_golden.py frame 3840 2160 /tmp/f4k.png 1 && python3 tools/canny_golden.py compare $C /tmp/f4k.png | tail -1
$C bench canny -d gpu --repeat 9
