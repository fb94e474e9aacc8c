"""As pycuda.cumath: element-wise math on GPUArrays (clrun Arrays), through NumPy's functions, which
clrun Arrays run on their device."""
import numpy as np


def _unary(name, np_name=None):
    fn = getattr(np, np_name or name)

    def f(array, stream=None, out=None):
        if stream is not None:
            with stream:
                return fn(array) if out is None else fn(array, out=out)
        return fn(array) if out is None else fn(array, out=out)
    f.__name__ = name
    f.__doc__ = f"{name}(array, stream=None, out=None): numpy.{np_name or name} on the device"
    return f


fabs = _unary("fabs", "abs")
ceil, floor = _unary("ceil"), _unary("floor")
exp, log, log10 = _unary("exp"), _unary("log"), _unary("log10")
sqrt = _unary("sqrt")
sin, cos, tan = _unary("sin"), _unary("cos"), _unary("tan")
asin, acos, atan = _unary("asin", "arcsin"), _unary("acos", "arccos"), _unary("atan", "arctan")
sinh, cosh, tanh = _unary("sinh"), _unary("cosh"), _unary("tanh")
