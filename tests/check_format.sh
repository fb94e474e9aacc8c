#!/bin/sh
# check_format.sh SOURCE — every C file of the tree (cl/ and subprojects/ aside) is as clang-format
# writes it with the repository's .clang-format. Fix with:
#   clang-format -i $(git ls-files '*.c' '*.h' | grep -v '^cl/\|^subprojects/')
set -u
cd "$1"
cf=$(command -v clang-format || command -v clang-format-14 || command -v clang-format-16) || {
    echo "clang-format not found (Debian: clang-format)" >&2; exit 1; }
files=$(find include lib tools tests examples python -name '*.[ch]' 2>/dev/null | sort)
bad=0
for f in $files; do
    if ! "$cf" --dry-run -Werror "$f" > /dev/null 2>&1; then echo "not formatted: $f"; bad=$((bad + 1)); fi
done
echo "$(echo "$files" | wc -w) files checked, $bad not formatted ($("$cf" --version))"
[ "$bad" -eq 0 ]
