"""The ctypes mirrors of clrun.h's structs (python/clrun/_lib.py) have the sizes, member names,
order and offsets the C compiler gives them (tests/python/layout.c, built by meson), so a change
to the header cannot silently break Python."""
import ctypes
import json
import os
import re
import subprocess

import pytest

from clrun import _lib as L

MIRRORS = L.STRUCTS


@pytest.fixture(scope="module")
def layout():
    exe = os.environ.get("CLRUN_LAYOUT_EXE")
    if not exe:
        pytest.skip("CLRUN_LAYOUT_EXE is not set (meson test sets it to the built tests/python/layout)")
    return json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)


def test_every_struct_is_mirrored(layout):
    assert set(layout) == set(MIRRORS)


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_mirror_matches_the_header(layout, name):
    c, py = layout[name], MIRRORS[name]
    assert ctypes.sizeof(py) == c["size"], f"{name}: ctypes size {ctypes.sizeof(py)}, C size {c['size']}"
    names = [f[0] for f in py._fields_]
    assert names == list(c["fields"]), f"{name}: ctypes members {names}, C members {list(c['fields'])}"
    for field, off in c["fields"].items():
        assert getattr(py, field).offset == off, f"{name}.{field}: ctypes offset {getattr(py, field).offset}, C offset {off}"


def test_every_function_has_its_prototype_from_the_header():
    """The prototypes come from clrun.h at build time (tools/gen_ctypes.py): every CLRUN_API function
    of the header is there, with as many arguments as the header gives it, and nothing else."""
    src = os.path.join(os.path.dirname(__file__), "..", "..", "include", "clrun.h")
    text = re.sub(r"/\*.*?\*/", " ", open(src, encoding="utf-8").read(), flags=re.S)
    declared = {}
    for m in re.finditer(r"^CLRUN_API\s+[^;(]*?\b(clrun_\w+)\s*\(([^;]*?)\)\s*;", text, re.M | re.S):
        args = " ".join(m.group(2).split())
        declared[m.group(1)] = 0 if args in ("", "void") else args.count(",") + 1
    assert declared and set(L.FUNCTIONS) == set(declared)
    for name, n in declared.items():
        fn = getattr(L.lib, name)
        assert len(fn.argtypes) == n, f"{name}: {len(fn.argtypes)} ctypes arguments, {n} in clrun.h"
