export CLRUN_CACHE_DIR=/tmp/c CLRUN_TEST_DEVICE=gpu
C=build-gpu/tools/clrun/clrun
out=/tmp/sweep.txt; : > $out
S=$2
for V in $1; do
  P=${V%%/*}; W=${V#*/}
  env $W CLRUN_GEMM_PARAMS=$P timeout 120 $C bench gemm -d gpu --shapes $S --repeat 5 --json 2>&1 | grep '"clrun"\|rror' | sed "s|^|$V |" >> $out
done
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
print("%-30s"%"params"+"".join("%15s"%s for s in shapes))
for p,d in rows.items(): print("%-30s"%p+"".join("%15.1f"%d.get(s,0) for s in shapes))
PY
