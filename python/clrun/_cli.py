"""The `clrun` command of the wheel: runs the CLI built with it (clrun/_bin/clrun-cli), with the
package's libclrun (clrun/_lib) on the loader's path. In a source tree it runs $CLRUN_EXE, else
the build tree's tools/clrun/clrun."""
import glob
import os
import sys


def _exe():
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.environ.get("CLRUN_EXE") or "", os.path.join(here, "_bin", "clrun-cli")]
    root = os.path.dirname(os.path.dirname(here))
    cands += sorted(glob.glob(os.path.join(root, "build*", "tools", "clrun", "clrun")))
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c, os.path.join(here, "_lib")
    return None, None


def main():
    exe, lib = _exe()
    if exe is None:
        sys.stderr.write("clrun: the command is not in this installation (pip install builds it into clrun/_bin/clrun-cli; "
                         "in a source tree set CLRUN_EXE)\n")
        return 127
    env = dict(os.environ)
    if os.path.isdir(lib):
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    os.execve(exe, [exe] + sys.argv[1:], env)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
