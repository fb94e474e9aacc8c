#!/bin/sh
# check_apidoc.sh DOXYFILE — the C API reference builds with no warning: every public symbol of
# include/clrun.h and include/clrun_mpi.h carries a /** ... */ comment (docs/Doxyfile.in).
set -u
command -v doxygen > /dev/null || { echo "doxygen not found (Debian: doxygen)" >&2; exit 1; }
doxygen "$1" || { echo "the API reference has warnings (above): document what they name" >&2; exit 1; }
echo "API reference built without warnings ($(doxygen --version))"
