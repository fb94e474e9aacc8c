#!/bin/sh
# vendors.sh — install the other OpenCL implementations clrun is tested on (docs/VENDORS.md), outside
# the tree and without registering them system-wide (each test setup has its own vendors folder):
#   tools/vendors.sh intel [PREFIX]    Intel's OpenCL CPU runtime from PyPI (intel-opencl-rt) into the
#                                      venv PREFIX/intel (default PREFIX /opt/clrun-vendors)
#   tools/vendors.sh rusticl [PREFIX]  Mesa's Rusticl (Debian's mesa-opencl-icd, unpacked into
#                                      PREFIX/rusticl; its libraries installed as packages, as root)
#   tools/vendors.sh ocloc [PREFIX]    Intel's offline compiler for its GPUs (Debian's intel-opencl-icd,
#                                      unpacked into PREFIX/ocloc, its ICD file not registered; IGC's
#                                      libraries installed as packages, as root)
# Each prints the path to give meson: -Dintel_icd=PATH, -Drusticl_icd=PATH or -Docloc=PATH.
# Idempotent: what is there already is not fetched again.
set -eu
export DEBIAN_FRONTEND=noninteractive
what=${1:-}

# apt-get, with the package lists fetched first when they are missing or stale (a fresh machine)
with_lists() { "$@" >&2 || { apt-get update -q >&2 && "$@" >&2; }; }
# the Debian packages named, installed where they are not yet
need() {
    missing=""
    for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"; done
    # shellcheck disable=SC2086
    if [ -n "$missing" ]; then with_lists apt-get install -y -q --no-install-recommends $missing; fi
}
# unpack PACKAGE's .deb into DIR (downloaded, never installed)
unpack() {
    tmp=$(mktemp -d)
    (cd "$tmp" && with_lists apt-get download "$1")
    mkdir -p "$2"
    dpkg-deb -x "$tmp"/"$1"_*.deb "$2"
    rm -rf "$tmp"
}
prefix=${2:-/opt/clrun-vendors}
case "$what" in
intel)
    lib="$prefix/intel/lib/libintelocl.so"
    if [ ! -f "$lib" ]; then
        python=/usr/bin/python3
        [ -x "$python" ] || python=python3
        mkdir -p "$prefix"
        if ! "$python" -m venv "$prefix/intel" >&2 2>/dev/null; then
            # Debian's interpreter needs python3-venv for ensurepip
            if [ "$(id -u)" = 0 ]; then with_lists apt-get install -y -q --no-install-recommends python3-venv; fi
            rm -rf "$prefix/intel"
            "$python" -m venv "$prefix/intel" >&2
        fi
        "$prefix/intel/bin/pip" install -q --disable-pip-version-check intel-opencl-rt intel-cmplr-lib-rt >&2
    fi
    [ -f "$lib" ] || { echo "vendors.sh: $lib is missing after installing intel-opencl-rt" >&2; exit 1; }
    echo "$lib"
    ;;
rusticl)
    lib="$prefix/rusticl/usr/lib/x86_64-linux-gnu/libRusticlOpenCL.so.1"
    need libllvmspirvlib15 libclc-15 libclang-cpp15 libllvm15 libsensors5 libdrm-amdgpu1 libdrm-nouveau2 libdrm-radeon1 libelf1 libexpat1 libzstd1
    [ -f "$lib" ] || unpack mesa-opencl-icd "$prefix/rusticl"
    [ -f "$lib" ] || { echo "vendors.sh: $lib is missing after unpacking mesa-opencl-icd" >&2; exit 1; }
    echo "$lib"
    ;;
ocloc)
    bin="$prefix/ocloc/usr/bin/ocloc"
    need libigc1 libigdfcl1 libigdgmm12
    [ -x "$bin" ] || unpack intel-opencl-icd "$prefix/ocloc"
    [ -x "$bin" ] || { echo "vendors.sh: $bin is missing after unpacking intel-opencl-icd" >&2; exit 1; }
    echo "$bin"
    ;;
*)
    echo "usage: tools/vendors.sh intel|rusticl|ocloc [PREFIX]" >&2
    exit 2
    ;;
esac
