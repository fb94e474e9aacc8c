#!/bin/sh
# check_abi.sh BASELINE LIB — libclrun's ABI against the baseline kept in abi/ (abidw's
# output for the last release). A function or variable removed, or changed (its signature, or a
# public type it reaches: a struct member added, moved or retyped, an enum value renumbered, except
# the counts that abi/libclrun.abignore names) fails;
# the members of opaque handles' structs (defined outside include/) are not ABI; added
# functions are printed and pass. After a deliberate change, refresh the baseline with
#   abidw --headers-dir include --no-corpus-path --no-comp-dir-path --no-show-locs LIB > abi/libclrun.abi
# and, for an incompatible one, raise the soname (the major version in meson.build).
set -u
base=$1 lib=$2
if ! command -v abidiff > /dev/null; then echo "abidiff not found: install abigail-tools" >&2; exit 1; fi
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
    echo "$lib has no debug information, so its types cannot be compared (build with -Ddebug=true)" >&2; exit 1
fi
# the public headers say which types are the ABI: an opaque handle's struct (clrun_ctx, clrun_buf …)
# is defined in lib/internal.h, and its members may change freely (--hd2 filters those changes)
hdrs=$(cd "$(dirname "$base")/../include" && pwd)
# abi/libclrun.abignore lists the changes that are compatible by design (a count enumerator growing)
out=$(abidiff --no-default-suppression --suppressions "$(dirname "$base")/libclrun.abignore" --hd2 "$hdrs" "$base" "$lib")
rc=$?
echo "$out"
if [ $((rc & 3)) -ne 0 ]; then echo "abidiff could not compare (exit $rc)" >&2; exit 1; fi
# "Functions changes summary: R Removed, C Changed (...), A Added functions" and the same for variables
bad=$(echo "$out" | sed -n 's/^\(Functions\|Variables\) changes summary: \([0-9]*\) Removed, \([0-9]*\) Changed.*/\2 \3/p' |
    awk '{ s += $1 + $2 } END { print s + 0 }')
if [ $((rc & 8)) -ne 0 ] || [ "$bad" -ne 0 ]; then
    echo "the ABI of $lib changed against $base: removed or changed functions, variables or types (above)"; exit 1
fi
echo "ABI compatible with $base"
