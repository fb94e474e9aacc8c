#!/bin/sh
# run.sh SOURCE BUILD — build and run tests/consumers/consumer.c the three ways another project
# takes clrun, each in a fresh folder outside both trees:
#   1. Meson + pkg-config against BUILD installed into a staging prefix (meson install --destdir)
#   2. CMake find_package(clrun) against the same prefix (clrun::clrun)
#   3. Meson with clrun as a subproject through a wrap (libraries only, static)
set -eu
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
here=$src/tests/consumers
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clrun-consumers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
step() { echo "== $*"; }

step "install $build into $tmp/stage"
meson install -C "$build" --destdir "$tmp/stage" --no-rebuild --quiet
pc=$(dirname "$(find "$tmp/stage" -name clrun.pc | head -1)")
libdir=$(dirname "$pc")
prefix=$(pkg-config --variable=prefix "$pc/clrun.pc")
test -f "$pc/clrun.pc" && test -f "$libdir/cmake/clrun/clrunConfig.cmake" && test -f "$tmp/stage$prefix/share/doc/clrun/LICENSE"
if [ -f "$libdir/libclrun_mpi.a" ]; then test -f "$pc/clrun-mpi.pc"; fi

step "1. Meson + pkg-config"
PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$tmp/stage meson setup --wrap-mode=nofallback "$tmp/pc" "$here/meson" > "$tmp/pc.log" 2>&1 ||
    { cat "$tmp/pc.log"; exit 1; }
meson compile -C "$tmp/pc" > /dev/null
LD_LIBRARY_PATH=$libdir "$tmp/pc/consumer"

step "2. CMake find_package"
cmake -S "$here/cmake" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/stage$prefix" > "$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; exit 1; }
cmake --build "$tmp/cm" > /dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/consumer"

step "2b. CMake: MPI is an optional component"
# a consumer without MPI (CMake told not to find one) configures when it asks for clrun alone or
# for mpi as optional, and is refused in words when it requires mpi
cmake -S "$here/cmake-mpi" -B "$tmp/cm-nompi" -DCMAKE_PREFIX_PATH="$tmp/stage$prefix" -DCMAKE_DISABLE_FIND_PACKAGE_MPI=TRUE \
    -DWANT_MPI=OFF > "$tmp/cm-nompi.log" 2>&1 || { cat "$tmp/cm-nompi.log"; exit 1; }
if cmake -S "$here/cmake-mpi" -B "$tmp/cm-req" -DCMAKE_PREFIX_PATH="$tmp/stage$prefix" -DCMAKE_DISABLE_FIND_PACKAGE_MPI=TRUE \
    -DREQUIRE_MPI=ON > "$tmp/cm-req.log" 2>&1; then
    cat "$tmp/cm-req.log"; echo "REQUIRED COMPONENTS mpi configured without an MPI"; exit 1
fi
grep -q "mpi" "$tmp/cm-req.log" || { cat "$tmp/cm-req.log"; exit 1; }
if [ -f "$libdir/libclrun_mpi.a" ]; then # and with MPI, the component gives clrun::mpi
    cmake -S "$here/cmake-mpi" -B "$tmp/cm-mpi" -DCMAKE_PREFIX_PATH="$tmp/stage$prefix" -DREQUIRE_MPI=ON -DWANT_MPI=ON \
        > "$tmp/cm-mpi.log" 2>&1 || { cat "$tmp/cm-mpi.log"; exit 1; }
fi
! grep -q "libpng16" "$pc/clrun.pc" || { echo "clrun.pc names libpng's paths"; exit 1; }
case "$(PKG_CONFIG_PATH=$pc pkg-config --cflags clrun)" in *libpng*) echo "pkg-config --cflags clrun leaks libpng's include path"; exit 1 ;; esac

step "3. Meson subproject through a wrap"
mkdir -p "$tmp/sub/subprojects"
cp "$here/meson/meson.build" "$tmp/sub/"
cp "$here/consumer.c" "$tmp/"
ln -s "$src" "$tmp/sub/subprojects/clrun"
# a wrap as a project would ship it; the folder is already there, so nothing is fetched
cat > "$tmp/sub/subprojects/clrun.wrap" << 'WRAP'
[wrap-file]
directory = clrun
source_url = https://example.invalid/clrun-0.1.0.tar.xz
source_filename = clrun-0.1.0.tar.xz
source_hash = 0000000000000000000000000000000000000000000000000000000000000000

[provide]
dependency_names = clrun, clrun-mpi
WRAP
meson setup "$tmp/sub/build" "$tmp/sub" > "$tmp/sub.log" 2>&1 || { cat "$tmp/sub.log"; exit 1; }
if grep -q "clrun_dep" "$tmp/sub.log"; then echo "the subproject was found through its variable, not the dependency override"; exit 1; fi
meson compile -C "$tmp/sub/build" > /dev/null
# libraries only: no CLI, no tests built, nothing to install
if [ -e "$tmp/sub/build/subprojects/clrun/tools/clrun/clrun" ] || [ -e "$tmp/sub/build/subprojects/clrun/tests" ]; then
    echo "the subproject built more than its libraries"; exit 1
fi
if meson introspect --installed "$tmp/sub/build" | grep -q clrun; then echo "the subproject installs files"; exit 1; fi
"$tmp/sub/build/consumer"
echo "consumers: all three built and ran"
