"""As pycuda.compiler: SourceModule."""
import ctypes
import re

from .. import _lib as L
from .._core import _check
from . import driver as _drv


def translate(source, name="kernel.cu"):
    """The OpenCL C libclrun builds from CUDA source (clrun_cuda_translate)."""
    out = ctypes.c_char_p()
    st = L.cuda_translate(source.encode(), name.encode(), ctypes.byref(out))
    try:
        if st:
            _check(st, None)
        return out.value.decode()
    finally:
        if out:
            L.string_free(out)


def _extra_arguments(cl):
    """{kernel: [(name, what)]}: the variables a kernel takes after its own arguments, from the
    comment the translation writes ahead of the code."""
    extra = {}
    for line in cl.splitlines():
        if line.startswith("// clrun: kernel ") and " is clrun_" in line:
            cuda_name, _, rest = line[len("// clrun: kernel "):].partition(" is ")
            extra.setdefault("__renamed__", {})[cuda_name] = rest.split()[0]
            continue
        if not line.startswith("// clrun: kernel "):
            continue
        head, _, rest = line[len("// clrun: kernel "):].partition(" takes after its own arguments:")
        items = []
        for part in rest.split(")"):
            part = part.strip()
            if part:
                name, _, what = part.partition(" (")
                items.append((name, what))
        extra[head] = items
    return extra


class SourceModule:
    """CUDA source built for the current context's device. options: OpenCL build options;
    no_extern_c is accepted for PyCUDA's sake (OpenCL C has no name mangling, so the names are the
    source's either way); keep=True keeps the translated OpenCL C as ``.cl_source``."""

    def __init__(self, source, nvcc=None, options=None, keep=False, no_extern_c=False, arch=None, code=None,
                 cache_dir=None, include_dirs=(), name="kernel.cu"):
        self.ctx = _drv.Context._current()
        cl = translate(source, name)
        self.cl_source = cl if keep else None
        self._extra = _extra_arguments(cl)
        opts = " ".join(options) if isinstance(options, (list, tuple)) else options
        self._prog = self.ctx._clrun.program(source=cl, options=opts, name=name)
        self._globals = {}

    def _global_for(self, name, what):
        g = self._globals.get(name)
        if g is None:
            nbytes = int(what.rsplit(",", 1)[1].split()[0]) if "," in what else 0
            g = self._globals[name] = _drv.DeviceAllocation(nbytes)
            g.array.fill(0) if hasattr(g.array, "fill") else None
        return g

    def get_function(self, name):
        """The kernel by name; a C++-mangled name (no_extern_c=True: "_Z13multiply_themPfS_S_") is
        taken by its identifier, OpenCL C having no mangling."""
        m = re.match(r"_Z(\d+)", name)
        if m:
            n = int(m.group(1))
            name = name[m.end():m.end() + n]
        cl_name = self._extra.get("__renamed__", {}).get(name, name)
        return _drv.Function(self, self._prog.kernel(cl_name), self._extra.get(name, []))

    def get_global(self, name):
        """(DeviceAllocation, bytes) of a __constant__ variable: fill it with memcpy_htod before
        launching the kernels that read it."""
        for items in self._extra.values():
            for n, what in items:
                if n == name and what.startswith("__constant__"):
                    g = self._global_for(name, what)
                    return g, g.nbytes
        raise _drv.LogicError(f"get_global: {name!r} is no __constant__ variable read by a kernel of this module")
