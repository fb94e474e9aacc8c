#!/bin/sh
# mpi_check.sh CLRUN DATA [MLP [CNN]] — clrun under `mpirun -np 2` (libclrun_mpi): op gemm (plain,
# transposed, scaled with beta, batched) and op canny over the ranks give the bytes one process
# gives; the MLP example's data-parallel run over the ranks gives the one-device loss curve, and the
# CNN example's gives it bit for bit; a missing file, a bad image among good ones and a rank without
# a device end the job with the message and a non-zero status, never a hang (every mpirun runs under
# a time limit). Exit 77 (skipped) when mpirun is missing.
set -u
clrun=$1 data=$2 mlp=${3:-} cnn=${4:-}
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found (openmpi-bin): the MPI tests are skipped"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
mpi() { timeout 180 mpirun -np 2 "$clrun" "$@"; }
ok() { checks=$((checks + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); checks=$((checks + 1)); }

# inputs: a*i + b for element i, in the shapes each check needs
mk() { "$clrun" run "$data/kernels/cli.cl" -k axpb -g "$2" "out:f32:$3@$work/$1.npy" "range:f32:$2" "f32:$4" "f32:$5" "u32:$2" >/dev/null ||
    { echo "mpi_check: cannot make $1"; exit 1; }; }
mk a 38700 300x129 0.00037 -1
mk at 38700 129x300 -0.00041 2
mk b 9030 129x70 0.0011 -3
mk bt 9030 70x129 0.0007 -1
mk c0 21000 300x70 0.01 0.5
mk a3 1300 2x5x130 0.003 -2
mk b3 2340 2x130x9 -0.002 1

gemm_same() { # NAME ARGS...: mpirun -np 2 against one process on device 0
    name=$1; shift
    "$clrun" op gemm "$@" -o "$work/one-$name.npy" -d 0 >/dev/null || { bad "gemm $name: one process failed"; return; }
    mpi op gemm "$@" -o "$work/two-$name.npy" >"$work/out" 2>&1 || { bad "gemm $name: mpirun failed: $(cat "$work/out")"; return; }
    cmp -s "$work/one-$name.npy" "$work/two-$name.npy" && ok || bad "gemm $name: 2 ranks differ from one process"
}
gemm_same plain "$work/a.npy" "$work/b.npy"
gemm_same ta "$work/at.npy" "$work/b.npy" --ta
gemm_same tb "$work/a.npy" "$work/bt.npy" --tb --alpha 0.5
gemm_same beta "$work/a.npy" "$work/b.npy" --beta -2 -c "$work/c0.npy"
gemm_same batch "$work/a3.npy" "$work/b3.npy"

# canny: six images over the ranks, each output the one-process bytes
set -- "$data/canny/shapes.png" "$data/canny/noise-odd.png" "$data/canny/spiral.png" "$data/canny/text.png" "$data/canny/color.png" \
    "$data/canny/gradient.png"
"$clrun" op canny "$@" -o "$work/c1" -q -d 0 || bad "canny: one process failed"
mpi op canny "$@" -o "$work/c2" -q >"$work/out" 2>&1 || bad "canny: mpirun failed: $(cat "$work/out")"
grep -q "6 images on 2 ranks: 6 written, 0 failed" "$work/out" && ok || bad "canny: no summary line from rank 0: $(cat "$work/out")"
for f in "$work"/c1/*.png; do cmp -s "$f" "$work/c2/$(basename "$f")" && ok || bad "canny: $(basename "$f") differs"; done

# failures end the job, with the message and the status
mpi op gemm "$work/missing.npy" "$work/b.npy" -o "$work/x.npy" >"$work/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "missing.npy" "$work/out" && ok || bad "gemm with a missing file: exit $rc: $(cat "$work/out")"
mpi op canny "$data/canny/shapes.png" "$work/missing.png" "$data/canny/text.png" -o "$work/c3" -q >"$work/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "missing.png" "$work/out" && grep -q "2 written, 1 failed" "$work/out" && [ -f "$work/c3/text.png" ] && ok ||
    bad "canny with a missing file: exit $rc: $(cat "$work/out")"
# ranks started with different commands, or different file lists, are refused at once by every rank
# (one collective before any work), never left waiting on each other until the watchdog
for other in "op gemm $work/a.npy $work/b.npy -o $work/g.npy" "op canny $data/canny/shapes.png -o $work/c5b -q"; do
    timeout 60 mpirun -np 2 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$0" op canny "$1" "$2" -o "$3" -q; else exec "$0" $4; fi' \
        "$clrun" "$data/canny/shapes.png" "$data/canny/text.png" "$work/c5" "$other" >"$work/out" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "rank 0 of 2 was started with a command that differs" "$work/out" &&
        grep -q "rank 1 of 2 was started with a command that differs" "$work/out" && ok ||
        bad "ranks with different commands ($other): exit $rc: $(cat "$work/out")"
done
mpi op canny "$data/canny/shapes.png" -o "$work/c4" -q -d nosuchdevice >"$work/out" 2>&1
rc=$?
[ $rc = 3 ] && grep -q "nosuchdevice" "$work/out" && ok || bad "canny with no device: exit $rc: $(cat "$work/out")"
mpi op mul "$work/a.npy" "$work/a.npy" -o "$work/x.npy" >"$work/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "split over the ranks" "$work/out" && ok || bad "mul under mpirun: exit $rc: $(cat "$work/out")"

if [ -n "$mlp" ]; then
    timeout 300 mpirun -np 2 "$mlp" 120 --mpi >"$work/out" 2>&1
    rc=$?
    [ $rc = 0 ] && grep -q "differ by at most 0 " "$work/out" && ok || bad "mlp --mpi: exit $rc: $(tail -5 "$work/out")"
fi

if [ -n "$cnn" ]; then
    timeout 300 mpirun -np 2 "$cnn" --mpi --width 4 --batch 64 --micro 32 --steps 6 --train 384 --test 64 >"$work/out" 2>&1
    rc=$?
    [ $rc = 0 ] && grep -q "loss curves on 1 device and 2 ranks: equal bit for bit" "$work/out" && ok ||
        bad "cnn --mpi: exit $rc: $(tail -5 "$work/out")"
fi

echo "mpi_check: $checks checks, $fails failed"
[ $fails = 0 ]
