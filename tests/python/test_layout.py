"""The ctypes mirrors of clrun.h's structs (python/clrun/_lib.py) have the sizes, member names,
order and offsets the C compiler gives them (tests/python/layout.c, built by meson), so a change
to the header cannot silently break Python."""
import ctypes
import json
import os
import subprocess

import pytest

from clrun import _lib as L

MIRRORS = {"clrun_device_info": L.DeviceInfoC, "clrun_arg_info": L.ArgInfoC, "clrun_profile_entry": L.ProfileEntryC,
           "clrun_gemm_desc": L.GemmDescC, "clrun_scaler": L.ScalerC, "clrun_grad": L.GradC, "clrun_qparams": L.QParamsC,
           "clrun_s8_epilogue": L.S8EpilogueC, "clrun_canny_params": L.CannyParamsC, "clrun_image": L.ImageC}


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
