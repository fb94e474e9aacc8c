#!/bin/sh
# wheel_check.sh SOURCE WORK PYTHON [WHEEL] — the wheel as a user gets it: WHEEL (the release's, from
# tools/release.sh: py3-none-manylinux), else built by pip from the source tree (meson-python; no
# build isolation, so Debian's python3-mesonpy serves), tagged for a platform (it holds native
# code), installed into a new virtual environment, and there: the package imports
# its own libclrun and computes on a device, the `clrun` console script runs the CLI, and mypy
# --strict accepts the examples against the installed type information (py.typed, __init__.pyi).
set -eu
src=$1
work=$2
py=$3 # the interpreter whose packages (pip, meson-python, NumPy) build and run it
given=${4:-}
rm -rf "$work"
mkdir -p "$work"
if [ -n "$given" ]; then
    case "$given" in
    *-py3-none-manylinux_*.whl) cp "$given" "$work/" ;;
    *) echo "the release wheel is not tagged py3-none-manylinux: $given" >&2; exit 1 ;;
    esac
elif ! "$py" -m pip wheel --no-build-isolation --no-deps -w "$work" "$src" > "$work/build.log" 2>&1; then
    tail -40 "$work/build.log"
    echo "pip could not build the wheel (log above; needs python3-pip and python3-mesonpy)" >&2
    exit 1
fi
whl=$(ls "$work"/clrun-*.whl)
echo "built $(basename "$whl")"
case "$whl" in
*-none-any.whl) echo "the wheel is tagged for any platform, but it carries libclrun and the CLI" >&2; exit 1 ;;
esac
"$py" -m venv --system-site-packages "$work/venv" # NumPy from the system: nothing is downloaded
"$work/venv/bin/pip" install --no-deps --no-index -q "$whl"
cd "$work" # away from the source tree: what is imported is what was installed
unset CLRUN_LIBRARY PYTHONPATH CLRUN_EXE
"$work/venv/bin/python" - "$work/venv" << 'PY'
import os, sys
import numpy as np
import clrun
from clrun import _lib
venv = os.path.realpath(sys.argv[1])
for what, path in (("the package", clrun.__file__), ("libclrun", _lib.path)):
    assert os.path.realpath(path).startswith(venv), f"{what} was loaded from {path}, not from the venv"
pkg = os.path.dirname(clrun.__file__)
for f in ("py.typed", "__init__.pyi", "cuda/driver.py", "cuda/compiler.py", "cuda/gpuarray.py", "cuda/tools.py", "nn/functional.py"):
    assert os.path.isfile(os.path.join(pkg, f)), f"the wheel lacks {f}"
import clrun.cuda.driver, clrun.cuda.compiler, clrun.cuda.cumath, clrun.cuda.curandom  # noqa: E401,F401 - PyCUDA's layout
with clrun.open() as ctx:
    a = ctx.asarray(np.arange(1000, dtype=np.float32))
    assert np.array_equal((a * a + 1.0).get(), np.arange(1000, dtype=np.float32) ** 2 + 1)
    name = ctx.device.name
print(f"installed clrun {clrun.__version__}: package, libclrun and type information from the venv; an Array op ran on {name}")
PY
"$work/venv/bin/clrun" --version
"$work/venv/bin/clrun" devices > "$work/devices.txt"
grep -q '^\*' "$work/devices.txt" || { cat "$work/devices.txt"; echo "the console script's clrun devices marked no default" >&2; exit 1; }
"$work/venv/bin/python" -m clrun --help > /dev/null
echo "the clrun console script and python -m clrun run the CLI"
command -v mypy > /dev/null || { echo "mypy not found (Debian: mypy)" >&2; exit 1; }
mypy --python-executable "$work/venv/bin/python" --config-file "$src/tests/python/mypy.ini" --no-incremental --cache-dir "$work/mypy" \
    "$src"/examples/python/*.py
