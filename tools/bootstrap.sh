#!/bin/sh
# bootstrap.sh — install what clrun needs (Debian 12 / Ubuntu, as root), build it, and then:
#   tools/bootstrap.sh demo   run the main job on the default device (PoCL when there is no GPU)
#   tools/bootstrap.sh test   run the test suite in a release build and an address+undefined
#                             sanitizer build (less the examples; the fault sweep there only),
#                             then the library, CLI and Python suites again on Intel's OpenCL CPU
#                             runtime (tools/vendors.sh intel, from PyPI) and the library suite on
#                             Mesa's Rusticl (llvmpipe);
#                             the last line is "N passed, N failed[, N skipped]"
#   tools/bootstrap.sh build  install and build only
# Idempotent: packages already installed are not fetched again, existing build folders are reused.
set -eu
cd "$(dirname "$0")/.."

PACKAGES="ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev libcmocka-dev meson
ninja-build pkg-config libxxhash-dev libpng-dev libjpeg-dev libexif-dev libjansson-dev librandom123-dev libvkfft-dev zlib1g-dev dataset-fashion-mnist gcc libc6-dev oclgrind python3 openmpi-bin libopenmpi-dev
python3-numpy python3-pytest clang libclang-dev"

# the test command's own: clang 16 and libclc compile every kernel for AMD GPUs (tests/offline_check.py);
# abigail-tools compares the ABI with abi/libclrun.abi (tests/check_abi.sh); cmake builds a consumer
# of the installed package (tests/consumers/run.sh); clang-format checks the C sources' layout;
# python3-pyopencl hands PyOpenCL's objects to clrun and back (tests/python); python3-hypothesis drives the
# differential fuzzing of clrun.Array against NumPy (tests/python/test_fuzz.py)
TEST_PACKAGES="clang-16 libclc-15 abigail-tools cmake clang-format doxygen python3-pyopencl python3-pip python3-venv python3-mesonpy mypy python3-hypothesis"

install_deps() { # install_deps [more packages]
    missing=""
    for p in $PACKAGES "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "bootstrap: missing packages:$missing; run as root or install them first" >&2
        exit 1
    fi
    echo "bootstrap: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing
}

setup() { # setup DIR [meson options...]: the Debian packages only, never a downloaded fallback
    dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then return 0; fi
    meson setup --wrap-mode=nofallback "$dir" "$@"
}

build() { # build [meson options...]
    setup build --buildtype=release "$@"
    meson compile -C build
}

# Count results in meson's test logs: passed = OK + EXPECTEDFAIL; failed = FAIL, TIMEOUT, ERROR,
# UNEXPECTEDPASS; skipped = SKIP.
count() {
    cat "$@" | grep -o '"result": "[A-Z]*"' | sed 's/.*: "//; s/"//' | awk '
        /^(OK|EXPECTEDFAIL)$/ { p++ } /^(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)$/ { f++ } /^SKIP$/ { s++ }
        END { printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n" }'
}

cmd=${1:-demo}
case "$cmd" in
build)
    install_deps
    build
    ;;
demo)
    install_deps
    build
    ./build/examples/multiply
    ;;
test)
    # shellcheck disable=SC2086
    install_deps $TEST_PACKAGES
    # a second implementation beside PoCL, and Intel's offline GPU compiler (docs/VENDORS.md); a
    # failure to install either fails the run
    intel_icd=$(sh tools/vendors.sh intel)
    rusticl_icd=$(sh tools/vendors.sh rusticl)
    ocloc=$(sh tools/vendors.sh ocloc)
    vendors="-Dintel_icd=$intel_icd -Drusticl_icd=$rusticl_icd -Docloc=$ocloc"
    # debug information in the release build too (it changes no code): the ABI check reads its types
    # shellcheck disable=SC2086
    setup build --buildtype=release -Ddebug=true $vendors
    # shellcheck disable=SC2086
    meson configure build -Ddebug=true $vendors # a build folder made before gets them too
    meson compile -C build
    # float-cast-overflow is not part of -fsanitize=undefined: a double out of an integer's range
    # converted (range:u8:300) is undefined behaviour all the same. -O1, as AddressSanitizer's own
    # documentation advises: the tests' host references (Canny, GEMM, conversions) ran several
    # times slower at -O0, for no finding the sanitizers make only there
    # its tests take the release build's kernel caches (-Dtest_caches), filled by the release pass
    setup build-asan -Ddebug=true -Doptimization=1 -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=float-cast-overflow -Dc_link_args=-fsanitize=float-cast-overflow -Dtest_caches="$(pwd)/build"
    meson compile -C build-asan
    rc=0
    # sized for two cores (under 45 minutes in all): the fault sweep runs under the sanitizers, where
    # its leak checks count; the examples run in the release pass; Intel's runtime runs the library,
    # CLI and Python suites again, Rusticl the library's
    meson test -C build --print-errorlogs --num-processes 2 --no-suite faults || rc=1
    meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite examples || rc=1
    meson test -C build --setup intel --suite lib --suite cli --suite python --print-errorlogs --num-processes 2 || rc=1
    meson test -C build --setup rusticl --suite lib --print-errorlogs --num-processes 2 || rc=1
    count build/meson-logs/testlog.json build-asan/meson-logs/testlog.json build/meson-logs/testlog-intel.json \
        build/meson-logs/testlog-rusticl.json
    exit $rc
    ;;
*)
    echo "usage: tools/bootstrap.sh demo|test|build" >&2
    exit 2
    ;;
esac
