"""As pycuda.elementwise: ElementwiseKernel, its operation in CUDA C (translated like SourceModule)."""
import numpy as np

from . import driver as _drv
from .compiler import SourceModule


class ElementwiseKernel:
    """operation runs for each i below the size of the first array argument, e.g.
    ElementwiseKernel("float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]", "axpy")."""

    def __init__(self, arguments, operation, name="kernel", keep=False, options=None, preamble="", loop_prep="",
                 after_loop=""):
        self.arguments = [a.strip() for a in arguments.split(",") if a.strip()]
        self._pointer = ["*" in a for a in self.arguments]
        if not any(self._pointer):
            raise _drv.LogicError(f"ElementwiseKernel {name}: no pointer argument to take the size from")
        src = (f"{preamble}\n__global__ void {name}({', '.join(self.arguments)}, unsigned clrun_n)\n{{\n"
               f"    {loop_prep};\n"
               f"    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < clrun_n; i += blockDim.x * gridDim.x) {{\n"
               f"        {operation};\n    }}\n    {after_loop};\n}}\n")
        self._module = SourceModule(src, options=options, keep=keep, name=f"{name}.cu")
        self._f = self._module.get_function(name)

    def __call__(self, *args, range=None, slice=None, stream=None, **kw):  # noqa: A002 - PyCUDA's names
        if len(args) != len(self.arguments):
            raise _drv.LogicError(f"ElementwiseKernel: {len(self.arguments)} arguments, {len(args)} given")
        first = next(a for a, p in zip(args, self._pointer) if p)
        n = int(first.size) if hasattr(first, "size") else int(first.nbytes)
        if range is not None:
            n = len(range)
        block = 256
        grid = max(1, min((n + block - 1) // block, 4096))
        self._f(*args, np.uint32(n), block=(block, 1, 1), grid=(grid, 1), stream=stream)
