#!/bin/bash
# usage: bash .exp/sweep.sh "P1 P2 ..." SHAPES
export CLRUN_CACHE_DIR=/tmp/c CLRUN_TEST_DEVICE=gpu
C=build-gpu/tools/clrun/clrun
out=/tmp/sweep.txt; : > $out
for P in $1; do
  CLRUN_GEMM_PARAMS=$P timeout 120 $C bench gemm -d gpu --shapes $2 --repeat 5 --json 2>&1 | grep '"clrun"\|rror' | sed "s/^/$P /" >> $out
done
timeout 120 $C bench gemm -d gpu --shapes $2 --repeat 5 --json 2>&1 | grep CLBlast | sed "s/^/clblast /" >> $out
python3 - <<'PY'
import json,collections
rows=collections.defaultdict(dict); shapes=[]
for l in open('/tmp/sweep.txt'):
    p,_,j=l.partition(' ')
    try: r=json.loads(j)
    except Exception: print(l.strip()); continue
    s="%dx%dx%d"%(r['m'],r['n'],r['k'])
    if s not in shapes: shapes.append(s)
    rows[p][s]=r['gflops']/1000
print("%-22s"%"params"+"".join("%16s"%s for s in shapes))
for p,d in rows.items(): print("%-22s"%p+"".join("%16.1f"%d.get(s,0) for s in shapes))
PY
