#!/bin/sh
# run.sh SOURCE WORK — the recipes of docs/DEVELOPING.md followed on a copy of the source tree:
# "add an op" (tests/recipes/twice: a folder, one line of lib/ops/ops.def, one declaration in
# include/clrun.h) and "add a GEMM backend" (tests/recipes/naive: a folder, one line of
# lib/ops/gemm/backends.def). The copy is built (the library, the command, the op's test and the
# Oclgrind families), and each new part is reached the ways a user reaches it: its test, `clrun op`
# and its --verbs, the Oclgrind families, Python's prototypes from the header, `--backend naive`
# against NumPy. Nothing else is touched: the recipe is the whole change.
set -eu
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
tree="$work/src"
mkdir -p "$tree"
# the tracked files (a clean clone's tree), else everything but build folders
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
    (cd "$src" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -xf - -C "$tree"
else
    (cd "$src" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$tree"
fi
r="$src/tests/recipes"
# add an op
cp -r "$r/twice" "$tree/lib/ops/twice"
echo 'CLRUN_OP(twice, "2 * x, the recipe'"'"'s example op")' >> "$tree/lib/ops/ops.def"
sed -i 's|^#endif /\* CLRUN_H \*/|/** y = 2x for n floats (the recipe'"'"'s example op). */\nCLRUN_API clrun_status clrun_twice(clrun_ctx *ctx, clrun_buf *x, clrun_buf *y, size_t n);\n\n&|' \
    "$tree/include/clrun.h"
grep -q clrun_twice "$tree/include/clrun.h" || { echo "run.sh: include/clrun.h has no '#endif /* CLRUN_H */' line" >&2; exit 1; }
# add a GEMM backend
cp -r "$r/naive" "$tree/lib/ops/gemm/naive"
echo 'CLRUN_GEMM_BACKEND(naive, naive)' >> "$tree/lib/ops/gemm/backends.def"

b="$work/build"
meson setup --wrap-mode=nofallback "$b" "$tree" -Dclblast=disabled -Dmpi=disabled > "$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; exit 1; }
meson compile -C "$b" tools/clrun/clrun:executable tests/test_twice tests/oclgrind_ops clrun_protos > "$work/compile.log" 2>&1 ||
    { tail -40 "$work/compile.log"; exit 1; }
export CLRUN_CACHE_DIR="$work/cache"
"$b/tests/test_twice"
"$b/tools/clrun/clrun" op --verbs | grep -qx twice || { echo "clrun op --verbs does not name twice" >&2; exit 1; }
"$b/tools/clrun/clrun" op --help | grep -q "twice .*2 \* x" || { echo "clrun op --help does not list twice" >&2; exit 1; }
"$b/tests/oclgrind_ops" --list | grep -qx twice || { echo "oclgrind_ops --list does not name twice" >&2; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3
cd "$work"
"$py" - "$b" "$tree/python" << 'PY'
import os, subprocess, sys
import numpy as np
b, pkg = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
x = rng.standard_normal(1001).astype(np.float32)
np.save("x.npy", x)
subprocess.run([os.path.join(b, "tools", "clrun", "clrun"), "op", "twice", "x.npy", "-o", "y.npy"], check=True)
assert np.array_equal(np.load("y.npy"), 2 * x), "clrun op twice"
A = rng.standard_normal((37, 53)).astype(np.float32)
B = rng.standard_normal((53, 29)).astype(np.float32)
np.save("a.npy", A), np.save("b.npy", B)
subprocess.run([os.path.join(b, "tools", "clrun", "clrun"), "op", "gemm", "a.npy", "b.npy", "-o", "c.npy", "--backend", "naive"], check=True)
C = np.load("c.npy")
ref = A.astype(np.float64) @ B.astype(np.float64)
assert np.abs(C - ref).max() <= 1e-4 * np.abs(A).max() * np.abs(B).max() * 53, "gemm --backend naive"
# Python: the new function's prototype came from the header with the build
os.environ["CLRUN_LIBRARY"] = os.path.join(b, "libclrun.so.0")
sys.path.insert(0, pkg)
from clrun import _lib as L
assert "clrun_twice" in L.FUNCTIONS and len(L.lib.clrun_twice.argtypes) == 4
assert L.gemm_backend_name(100) == b"naive"
print("recipes: the op 'twice' and the GEMM backend 'naive' built, registered and ran")
PY
