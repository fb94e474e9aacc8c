export CLRUN_CACHE_DIR=/tmp/c CLRUN_TEST_DEVICE=gpu CLRUN_DEVICE=gpu
C=build-gpu/tools/clrun/clrun
build-gpu/tests/test_canny 2>&1 | tail -1
python3 tools/canny_golden.py compare $C tests/data/canny | tail -1
python3 tools/canny_golden.py compare $C /tmp/f4k.png | tail -1
$C bench canny -d gpu --repeat 15
