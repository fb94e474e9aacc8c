"""CUDA kernel text on any OpenCL device, with PyCUDA's module layout: replace ``pycuda`` with
``clrun.cuda`` in an import and the rest of the code stays as it is.

    import clrun.cuda.autoinit                  # a context on the default device
    import clrun.cuda.driver as drv             # In, Out, InOut, mem_alloc, memcpy_*, Function, ...
    from clrun.cuda.compiler import SourceModule
    from clrun.cuda import gpuarray             # to_gpu, empty, zeros, .get()

The CUDA source is translated to OpenCL C 1.2 by libclrun (clrun_cuda_translate, on libclang's
parse) and built for the device like any program; constructs that cannot be translated are refused
with their file, line and name.
"""
