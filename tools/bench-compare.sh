#!/bin/bash
# bench-compare.sh NEW_CLI OLD_CLI [ROUNDS] [-- BENCH ARGS...] — `clrun bench` of two builds alternated
# (new, old, new, old, ...) in one run, so that a change's speed is judged against the noise between
# runs of one build. Each CLI runs with its own library (LD_LIBRARY_PATH: the folder of libclrun.so.0
# beside the CLI or two folders up, as a build tree has it). Prints, per benchmark, the geometric
# mean of new/old over clrun's rows (medians of the rounds) and the median run-to-run deviation.
#   tools/bench-compare.sh build/tools/clrun/clrun old/build/tools/clrun/clrun 5 -- -d gpu --repeat 7
# The benchmarks: BENCHES (default "vector canny mixed gemm"), each with the extra arguments given.
set -u
new=$1 old=$2 rounds=${3:-3}
shift 2; [ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
work=$(mktemp -d)
libdir() { d=$(dirname "$1"); for c in "$d" "$d/../.."; do [ -e "$c/libclrun.so.0" ] && { (cd "$c" && pwd); return; }; done; echo "$d"; }
for r in $(seq 1 "$rounds"); do
  for v in new old; do
    cli=$([ $v = new ] && echo "$new" || echo "$old")
    for b in ${BENCHES:-vector canny mixed gemm}; do
      LD_LIBRARY_PATH=$(libdir "$cli")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$cli" bench "$b" --json "$@" >> "$work/$v-$r.jsonl" 2>> "$work/err"
    done
  done
done
python3 - "$work" "$rounds" << 'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(path):
    d = {}
    for line in open(path):
        r = json.loads(line)
        d[tuple(str(r.get(k)) for k in ("op", "impl", "size", "m", "n", "k", "width"))] = r.get("median_ms")
    return d
runs = {v: [load(f"{work}/{v}-{i}.jsonl") for i in range(1, rounds + 1)] for v in ("new", "old")}
ratios, spread = {}, []
for key in runs["new"][0]:
    vals = {v: [run.get(key) for run in runs[v]] for v in runs}
    if "clrun" not in key[1] or any(not isinstance(x, (int, float)) or x <= 0 for v in vals for x in vals[v]):
        continue
    n, o = statistics.median(vals["new"]), statistics.median(vals["old"])
    ratios.setdefault(key[0], []).append(n / o)
    spread.append(statistics.median(abs(x - o) / o for x in vals["old"]))
for op, rs in ratios.items():
    print(f"{op:10s} rows {len(rs):3d}  new/old {statistics.geometric_mean(rs):.3f}  ({min(rs):.3f} .. {max(rs):.3f})")
if spread:
    print(f"median run-to-run deviation within the old build: {statistics.median(spread):.3f}")
PY
rm -rf "$work"
