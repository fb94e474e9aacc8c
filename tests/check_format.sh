#!/bin/sh
# check_format.sh SOURCE — every C file of the tree is as clang-format writes it with the
# repository's .clang-format. OpenCL C (the .cl files, and the headers they include by base name) and
# subprojects/ are not C and stay as written. Fix with: sh tests/check_format.sh SOURCE --fix
set -u
cd "$1"
cf=$(command -v clang-format || command -v clang-format-14 || command -v clang-format-16) || {
    echo "clang-format not found (Debian: clang-format)" >&2; exit 1; }
# the kernel headers: every name a .cl file includes
kernel_headers=$(grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' --include='*.cl' --include='*.h' lib/ops 2>/dev/null |
    sed 's/.*"\(.*\)"/\1/' | sort -u)
files=$(find include lib tools tests examples python -name '*.[ch]' 2>/dev/null | sort | while read -r f; do
    case "$f" in lib/ops/*.h) echo "$kernel_headers" | grep -qx "$(basename "$f")" && continue ;; esac
    echo "$f"
done)
if [ "${2:-}" = --fix ]; then
    # shellcheck disable=SC2086
    "$cf" -i $files
fi
bad=0
for f in $files; do
    if ! "$cf" --dry-run -Werror "$f" > /dev/null 2>&1; then echo "not formatted: $f"; bad=$((bad + 1)); fi
done
echo "$(echo "$files" | wc -w) files checked, $bad not formatted ($("$cf" --version))"
[ "$bad" -eq 0 ]
