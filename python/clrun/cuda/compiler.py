"""As pycuda.compiler: SourceModule."""
import ctypes
import os
import re

from .. import _lib as L
from .._core import _check
from . import driver as _drv


def translate(source, name="kernel.cu", options=None):
    """The OpenCL C libclrun builds from CUDA source (clrun_cuda_translate_options): the -D and -U of
    options (OpenCL build options, a string) hold while the CUDA is parsed."""
    out = ctypes.c_char_p()
    st = L.cuda_translate_options(source.encode(), name.encode(), options.encode() if options else None, ctypes.byref(out))
    try:
        if st:
            _check(st, None)
        return out.value.decode()
    finally:
        if out:
            L.string_free(out)


def _norm(name):
    """A C++ name as written (`reduce<float,256>`, `k< int >`) in one spelling: spaces only between words."""
    name = re.sub(r"\s+", " ", name.strip())
    return re.sub(r" ?([^\w ]) ?", r"\1", name)


def _extra_arguments(cl):
    """{kernel: [(name, what)]}: the variables a kernel takes after its own arguments, from the
    comment the translation writes ahead of the code."""
    extra = {}
    for line in cl.splitlines():
        if line.startswith("// clrun: template kernel ") and line.endswith(": no instantiation asked for"):
            extra.setdefault("__templates__", set()).add(line[len("// clrun: template kernel "):].partition(":")[0])
            continue
        if line.startswith("// clrun: kernel ") and " is " in line and " takes after " not in line:
            cuda_name, _, rest = line[len("// clrun: kernel "):].rpartition(" is ")
            extra.setdefault("__renamed__", {})[_norm(cuda_name)] = rest.split()[0]
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


# nvcc's options that only steer NVIDIA's code generation: meaningless for an OpenCL build
_NVCC_ONLY = re.compile(r"^(-arch|--gpu-architecture|-code|--gpu-code|-gencode|--generate-code|-lineinfo|--generate-line-info|-G|"
                        r"--device-debug|-O\d?|-Xptxas|--ptxas-options|-Xcompiler|--compiler-options|-rdc|--relocatable-device-code|"
                        r"-std|--std|--expt-relaxed-constexpr|--expt-extended-lambda|-m64|--machine|-w|--disable-warnings|-keep|"
                        r"--keep|-maxrregcount|--maxrregcount|-ftz|-prec-div|-prec-sqrt|-fmad|--restrict|-restrict)(=.*)?$")


def cl_options(options):
    """PyCUDA's options (nvcc's, a list or a string) as OpenCL build options: -D/-U/-I and OpenCL's
    own -cl-* kept, --use_fast_math as -cl-fast-relaxed-math, nvcc's code-generation flags dropped;
    anything else is passed on (the OpenCL build refuses what it does not know)."""
    if options is None:
        return None
    words = list(options) if isinstance(options, (list, tuple)) else str(options).split()
    out, i = [], 0
    while i < len(words):
        w = str(words[i])
        if w in ("-use_fast_math", "--use_fast_math"):
            out.append("-cl-fast-relaxed-math")
        elif w in ("-Xptxas", "--ptxas-options", "-Xcompiler", "--compiler-options", "-maxrregcount", "--maxrregcount",
                   "-arch", "-code", "-gencode", "--machine"):
            i += 1  # the flag and its value
        elif not _NVCC_ONLY.match(w):
            out.append(w)
        i += 1
    return " ".join(_quote(w) for w in out) or None


def _quote(word):
    """A word of the options as libclrun splits them: quoted where it holds spaces or quotes."""
    if not re.search(r'[\s"\\]', word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _without_includes(options):
    """The options less their -I directories (the translation pastes the headers in; the OpenCL C
    it gives needs none), for the device's compiler."""
    if not options:
        return options
    words = re.findall(r'(?:"(?:\\.|[^"\\])*"|[^\s"])+', options)
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w == "-I":
            skip = True
        elif not w.startswith("-I"):
            out.append(w)
    return " ".join(out) or None


class SourceModule:
    """CUDA source built for the current context's device. options: nvcc's or OpenCL's build options
    (cl_options: -D/-U also hold for the parse of the CUDA);
    no_extern_c is accepted for PyCUDA's sake (OpenCL C has no name mangling, so the names are the
    source's either way); keep=True keeps the translated OpenCL C as ``.cl_source``.
    The source's own headers (``#include "helpers.cuh"``) are pasted in where included: searched
    beside ``name`` (the current directory for a bare name), then in the options' -I directories and
    include_dirs, in order; ``#include <x.cuh>`` in those directories only.
    name_expressions (CuPy's RawModule): the template kernels to instantiate, as C++ names them
    (``"reduce<float, 256>"``); get_function takes those names, and the mangled ones. The source's own
    explicit instantiations (``template __global__ void k<int>(int *);``) are kernels too."""

    def __init__(self, source, nvcc=None, options=None, keep=False, no_extern_c=False, arch=None, code=None,
                 cache_dir=None, include_dirs=(), name="kernel.cu", name_expressions=()):
        self.ctx = _drv.Context._current()
        opts = cl_options(options)
        if isinstance(name_expressions, str):
            name_expressions = (name_expressions,)
        for e in name_expressions:  # instantiated as the source's own explicit instantiations are
            if not isinstance(e, str) or not re.fullmatch(r"[\w:]+\s*<[^;{}]*>", e.strip()):
                raise ValueError(f"name_expressions: {e!r} is not a template kernel's name with its arguments, as `k<float, 4>`")
            source += ("" if source.endswith("\n") else "\n") + f"template __global__ decltype({e.strip()}) {e.strip()};\n"
        if isinstance(include_dirs, (str, os.PathLike)):
            include_dirs = (include_dirs,)
        dirs = " ".join(_quote("-I" + os.fspath(d)) for d in include_dirs)
        cl = translate(source, name, " ".join(o for o in (opts, dirs) if o) or None)
        opts = _without_includes(opts)
        self.cl_source = cl if keep else None
        self._extra = _extra_arguments(cl)
        dev = self.ctx._clrun.device
        if dev.type == "gpu" and "NVIDIA" in dev.platform_vendor:  # warp intrinsics as inline PTX (as clrun_prog_cuda does)
            opts = (opts + " " if opts else "") + "-DCLRUN_NV_PTX=1"
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
        renamed = self._extra.get("__renamed__", {})
        if _norm(name) in renamed:  # a template kernel's copy (`k<float, 4>` or its mangled name), or a renamed kernel
            cl_name = renamed[_norm(name)]
            return _drv.Function(self, self._prog.kernel(cl_name), self._extra.get(cl_name, self._extra.get(name, [])))
        if name in self._extra.get("__templates__", ()):
            raise _drv.LogicError(f"get_function: {name!r} is a template kernel: name an instantiation of it in SourceModule(..., "
                                  f"name_expressions=[\"{name}<...>\"]) and get that name")
        if "<" in name:
            raise _drv.LogicError(f"get_function: {name!r} was not instantiated: name it in SourceModule(..., name_expressions=[...]) "
                                  "or instantiate it in the source (template __global__ void k<float>(float *);)")
        m = re.match(r"_Z(\d+)", name)
        if m:
            n = int(m.group(1))
            name = name[m.end():m.end() + n]
        cl_name = renamed.get(name, name)
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
