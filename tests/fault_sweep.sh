#!/bin/sh
# fault_sweep.sh SHIM SCENARIO CLRUN DATA — fault injection over every OpenCL call (tests/faultcl.c).
#
# Each job below runs once to count its OpenCL calls (M), then M more times with call N failing, for
# N = 1..M. Every run must end in success or in a clean failure: the documented exit status with a
# message that names the failure (fault_scenario: 10; clrun: 1 runtime, 3 no device, 4 build
# failure), no crash, no sanitizer or LeakSanitizer report (in a sanitizer build their reports
# make the exit status 1 with a report on stderr, which fails the check); a run that succeeds writes
# what a run without injection writes, byte for byte; and no output file is left behind by a failed
# run of a command, whole or partial (the library scenario writes its two files
# as steps of their own: there, no temporary file may be left). Jobs: the library scenario (tests/fault_scenario.c)
# and the clrun commands op canny (on one device and on every device of the platform, where a
# device that fails gives its images to the others), op gemm, op sparsify, op gemm --meta and run.
set -u
shim=$1 scenario=$2 clrun=$3 data=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_PRELOAD="$shim"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
unset CLRUN_DEVICE
bad=0 runs=0

# prepare inputs for the commands (without injection)
LD_PRELOAD= "$clrun" run "$data/kernels/cli.cl" -k axpb -g 64 "out:f32:64@$work/x.npy" range:f32:64 f32:0.5 f32:1 u32:64 >/dev/null ||
    { echo "fault_sweep: cannot make inputs"; exit 1; }
LD_PRELOAD= "$clrun" run "$data/kernels/cli.cl" -k axpb -g 64 "out:f32:8x8@$work/sq.npy" range:f32:64 f32:0.25 f32:2 u32:64 >/dev/null
LD_PRELOAD= "$clrun" op sparsify "$work/sq.npy" -o "$work/pv.npy" 2>/dev/null

# check NAME OUTPUTS... -- COMMAND...: one job, swept
check() {
    name=$1
    shift
    outs=""
    while [ "$1" != "--" ]; do outs="$outs $1"; shift; done
    shift
    rm -f $outs
    FAULTCL_COUNT="$work/count" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc != 0 ]; then
        echo "fault_sweep: $name fails without injection (exit $rc):"; cat "$work/err"; bad=$((bad + 1)); return
    fi
    m=$(cat "$work/count")
    i=0
    for o in $outs; do cp "$o" "$work/ref$i"; i=$((i + 1)); done
    fails=0
    n=1
    while [ $n -le "$m" ]; do
        rm -f $outs
        FAULTCL_FAIL=$n "$@" >"$work/out" 2>"$work/err"
        rc=$?
        runs=$((runs + 1))
        why=""
        case "$name:$rc" in
        scenario:0 | scenario:10 | clrun*:0 | clrun*:1 | clrun*:3 | clrun*:4) ;;
        *) why="exit status $rc" ;;
        esac
        if [ -z "$why" ] && [ $rc = 0 ]; then # recovered or unaffected: the same outputs as without injection
            i=0
            for o in $outs; do cmp -s "$o" "$work/ref$i" || why="exit 0 but $(basename "$o") differs"; i=$((i + 1)); done
        fi
        if [ -z "$why" ] && [ $rc != 0 ]; then
            fails=$((fails + 1))
            grep -q "^faultcl: failed call $n" "$work/err" || why="no call failed"
            [ "$(grep -v '^faultcl:' "$work/err" | grep -c .)" -gt 0 ] || why="no message"
            case $name in clrun*) for o in $outs; do [ -e "$o" ] && why="$o left behind"; done ;; esac
        fi
        if grep -q "Sanitizer\|runtime error:" "$work/err"; then why="sanitizer report"; fi
        if ls -A "$work" | grep -q '\.tmp$'; then why="a temporary file left behind"; rm -f "$work"/.*.tmp; fi
        if [ -n "$why" ]; then
            bad=$((bad + 1))
            echo "FAIL $name, call $n of $m: $why"
            sed 's/^/    /' "$work/err" | head -30
        fi
        n=$((n + 1))
    done
    echo "$name: $m calls, each failed in turn: $fails clean failures, $((m - fails)) runs recovered or unaffected"
}

check scenario "$work/sum.npy" "$work/edges.png" -- "$scenario" "$data/canny/noise-odd.png" "$work"
check clrun-canny "$work/edges.png" -- "$clrun" op canny "$data/canny/noise-odd.png" -o "$work/edges.png"
mkdir -p "$work/gd"
# the weights given (CLRUN_GROUP_WEIGHTS, one per device listed): the calibration's GEMMs would only
# lengthen the sweep
ndev=$("$clrun" devices --json | grep -o '"index"' | wc -l)
CLRUN_GROUP_WEIGHTS=$(seq "$ndev" | sed 's/.*/1/' | paste -sd, -)
export CLRUN_GROUP_WEIGHTS
check clrun-canny-devices "$work/gd/noise-odd.png" "$work/gd/three-by-one.png" -- "$clrun" op canny "$data/canny/noise-odd.png" \
    "$data/canny/three-by-one.png" -o "$work/gd" --devices all -q
unset CLRUN_GROUP_WEIGHTS
check clrun-gemm "$work/prod.npy" -- "$clrun" op gemm "$work/sq.npy" "$work/sq.npy" -o "$work/prod.npy"
check clrun-sparsify "$work/sv.npy" "$work/sv.meta.npy" "$work/sp.npy" -- "$clrun" op sparsify "$work/sq.npy" -o "$work/sv.npy" \
    --pruned "$work/sp.npy"
check clrun-gemm-sparse "$work/sc.npy" -- "$clrun" op gemm "$work/pv.npy" "$work/sq.npy" --meta "$work/pv.meta.npy" -o "$work/sc.npy"
check clrun-run "$work/y.npy" -- "$clrun" run "$data/kernels/cli.cl" -k axpb -g 64 "out:f32:64@$work/y.npy" "$work/x.npy" f32:2 f32:1 u32:64

echo "$runs runs with one call failing, $bad problems"
[ $bad = 0 ]
