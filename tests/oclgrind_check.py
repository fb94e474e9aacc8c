#!/usr/bin/env python3
"""oclgrind_check.py OCLGRIND OCLGRIND_OPS ACCOUNTED — the library's kernels under Oclgrind's checkers.

Runs every kernel family of tests/oclgrind_ops.c (the op folders' oclgrind.c) (both shapes of Canny and of the reductions) under
Oclgrind twice: built as the library builds them, with the data-race checker; and with
-cl-opt-disable, with the data-race and uninitialised-value checkers (Oclgrind 21.10's
uninitialised-value checker stops at LLVM's `freeze` instruction, which optimised builds contain).
Each family runs in a process of its own: in 21.10 that checker also reports the lanes of fma's
vector arguments in clrun_gemm_cpu as uninitialised, but only after other programs ran in the same
process.

Every report is reduced to a key, "KIND: KERNEL: FILE:LINE[, FILE:LINE]" (the kind is the report's
first line without its address; the places are every "At line" of the report), and every key must
be listed in ACCOUNTED, with the reason it is there; a listed key that no run reports any more
fails too, so the list stays true. Exit status 0 when both hold, 1 otherwise, 77 (skipped) without
Oclgrind."""
import os
import re
import subprocess
import sys

PASSES = [("optimised, races", [], "--data-races"), ("-cl-opt-disable, races and uninitialised values", ["-cl-opt-disable"],
                                                       "--data-races --uninitialized")]
AT_LINE = re.compile(r"^\s*At line (\d+) \(column \d+\) of (\S+?):?$")
KERNEL = re.compile(r"^\s*Kernel: (\S+)")


def reports(text):
    """The keys of the reports in Oclgrind's output, with how many times each was reported."""
    keys, cur = {}, None

    def close():
        if cur:
            places = ", ".join(sorted(set(cur["at"]))) or "(no line)"
            key = "%s: %s: %s" % (cur["kind"], cur["kernel"] or "(no kernel)", places)
            keys[key] = keys.get(key, 0) + 1

    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            if line.startswith("oclgrind_ops") or line.startswith("Oclgrind: ") and "errors generated" in line:
                continue
            close()
            kind = re.sub(r"\s*(at|to|from)?\s*(global|local|private|constant)? ?memory address 0x[0-9a-f]+", "", line).strip()
            kind = re.sub(r"\s+address 0x[0-9a-f]+", "", kind)
            cur = {"kind": kind, "kernel": None, "at": []}
            continue
        if cur is None:
            continue
        m = KERNEL.match(line)
        if m and not cur["kernel"]:
            cur["kernel"] = m.group(1)
        m = AT_LINE.match(line)
        if m:
            cur["at"].append("%s:%s" % (os.path.basename(m.group(2)), m.group(1)))
    close()
    return keys


def accounted(path):
    keys = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line and not line.startswith("#") and not line[0].isspace():
                keys[line] = n
    return keys


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    oclgrind, ops, listed_path = sys.argv[1:]
    if not os.path.exists(oclgrind):
        print("oclgrind_check: %s not found" % oclgrind)
        return 77
    listed = accounted(listed_path)
    seen, failed = {}, False
    # the families the op folders register (lib/ops/NAME/oclgrind.c)
    families = subprocess.run([ops, "--list"], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
    for name, build, checks in PASSES:
        for fam in families:
            env = dict(os.environ, CLRUN_NO_CACHE="1", OCLGRIND_BUILD_OPTIONS=" ".join(build))
            env.pop("CLRUN_DEVICE", None)
            cmd = [oclgrind] + checks.split() + ["--max-errors", "1000000", ops, fam]
            r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
            keys = reports(r.stdout)
            fatal = [k for k in keys if "FATAL" in k or "Unsupported instruction" in k]
            status = "ok" if r.returncode == 0 and not fatal else "FAILED (exit %d)" % r.returncode
            print("%-48s %-11s %5d reports, %d kinds  %s" % (name, fam, sum(keys.values()), len(keys), status))
            if r.returncode != 0 or fatal:
                failed = True
                print("\n".join("    " + l for l in r.stdout.splitlines()[-20:]))
            for k, c in keys.items():
                seen.setdefault(k, set()).add("%s/%s" % (fam, "noopt" if build else "opt"))
    unlisted = sorted(k for k in seen if k not in listed)
    stale = sorted(k for k in listed if k not in seen)
    print("\n%d kinds of report, %d of them accounted for in %s" % (len(seen), len(seen) - len(unlisted), os.path.basename(listed_path)))
    for k in unlisted:
        print("NOT ACCOUNTED FOR: %s   (in %s)" % (k, ", ".join(sorted(seen[k]))))
    for k in stale:
        print("STALE (listed at line %d, no longer reported): %s" % (listed[k], k))
    return 1 if failed or unlisted or stale else 0


if __name__ == "__main__":
    sys.exit(main())
