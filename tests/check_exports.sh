#!/bin/sh
# check_exports.sh LIB HEADER — the shared library's boundary: it exports exactly the functions the
# public header declares with CLRUN_API, none of the internal clrun__ symbols, nothing else; each
# with the version node of lib/clrun.map.
set -eu
lib=$1 header=$2
tmp=${TMPDIR:-/tmp}/clrun-exports.$$
trap 'rm -f "$tmp".*' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' > "$tmp.versioned"
sed 's/@.*//' "$tmp.versioned" | sort -u > "$tmp.exported"
# the name before the first '(' on each CLRUN_API line
grep '^CLRUN_API ' "$header" | sed 's/(.*//; s/.*[ *]//' | sort -u > "$tmp.declared"
rc=0
# every one in the version node of lib/clrun.map
if grep -v '@@CLRUN_[0-9.]*$' "$tmp.versioned" > "$tmp.unversioned"; then
    echo "exported without a CLRUN_ version node (lib/clrun.map) from $lib:"; cat "$tmp.unversioned"; rc=1
fi
if grep '^clrun__' "$tmp.exported" > "$tmp.internal"; then
    echo "internal symbols exported from $lib:"; cat "$tmp.internal"; rc=1
fi
comm -23 "$tmp.exported" "$tmp.declared" > "$tmp.extra"
if [ -s "$tmp.extra" ]; then echo "exported but not declared with CLRUN_API in $header:"; cat "$tmp.extra"; rc=1; fi
comm -13 "$tmp.exported" "$tmp.declared" > "$tmp.missing"
if [ -s "$tmp.missing" ]; then echo "declared with CLRUN_API but not exported:"; cat "$tmp.missing"; rc=1; fi
echo "$(wc -l < "$tmp.exported") symbols exported, $(wc -l < "$tmp.declared") declared"
exit $rc
