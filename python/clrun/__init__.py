"""clrun: OpenCL compute on any vendor's device, from Python and NumPy.

    import clrun, numpy as np
    with clrun.open("gpu") as ctx:                       # or "cpu", an index, a name; None: the best
        prog = ctx.program(source=KERNEL)
        prog.multiply_them(clrun.Out(dest), clrun.In(a), clrun.In(b), global_size=400)
        c = clrun.gemm(ctx, a2, b2)                       # the kernel library on NumPy arrays
        x, y = ctx.asarray(a2), ctx.asarray(b2)           # device arrays: results stay on the device
        z = (x @ y + 1.0).sum()

A thin layer over libclrun (ctypes): every failure raises a clrun.Error subclass carrying the status
and the library's message.
"""
from ._core import (ArgMismatch, Buffer, BuildFailed, CLError, Context, DeviceInfo, DeviceOutOfMemory, Error, Event, FileError,  # noqa: F401
                    FormatError, HostOutOfMemory, In, InOut, InvalidArgument, Kernel, Local, NoDevice, NoPlatform, NotFound, Out, OutOfRange, Program,
                    Unsupported, devices, open, select, version)
from ._lowp import calibrate, dequantize, gemm_s8, gemm_sp, quantize, sp24_compress, sp24_decompress, sp24_prune  # noqa: F401
from ._ops import (add, argmax, axpy, canny, cast, div, dot, fma, gemm, imread, imwrite, max, min, mul, norm2, scale, sub,  # noqa: F401
                   sum, tensor_cores, tensor_kernel)
from ._array import Array, ElementwiseKernel, ReductionKernel, Stream, elementwise, matmul, reduction  # noqa: F401
from ._numpy import (FUNCS as _FUNCS, concatenate, empty_like, full_like, ones_like, stack,  # noqa: F401
                     zeros_like)
from ._dlpack import from_dlpack  # noqa: F401
from ._random import Random  # noqa: F401
from . import fft  # noqa: F401
from . import nn  # noqa: F401
from .amp import GradScaler  # noqa: F401
from .group import CannyPipeline, Group  # noqa: F401

globals().update(_FUNCS)  # clrun.sqrt, clrun.where, clrun.clip, clrun.maximum, … (clrun.Array's element-wise functions)
__version__ = version()
