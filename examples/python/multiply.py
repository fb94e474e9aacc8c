"""The seed's PyCUDA example, on any vendor's device: multiply two arrays of 400 floats in a kernel.

    python3 examples/python/multiply.py [DEVICE]
"""
import sys

import numpy as np

import clrun

SOURCE = """
__kernel void multiply_them(__global float *dest, __global const float *a, __global const float *b)
{
    const int i = get_global_id(0);
    dest[i] = a[i] * b[i];
}
"""

a = np.random.randn(400).astype(np.float32)
b = np.random.randn(400).astype(np.float32)
dest = np.zeros_like(a)
with clrun.open(sys.argv[1] if len(sys.argv) > 1 else None) as ctx:
    multiply_them = ctx.program(source=SOURCE).multiply_them
    multiply_them(clrun.Out(dest), clrun.In(a), clrun.In(b), global_size=400)
    print(f"on {ctx.device.name}: max |dest - a*b| = {np.abs(dest - a * b).max()}")
