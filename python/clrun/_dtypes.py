"""The dtypes of clrun.Array: their OpenCL C names, NumPy types, argument setters, and the ops' codes."""
import numpy as np

from ._core import _dims

# OpenCL C names of the dtypes an Array may have (bool is stored as one byte, 0 or 1)
_CL = {np.dtype(np.float32): "float", np.dtype(np.float16): "half", np.dtype(np.float64): "double", np.dtype(np.int8): "char",
       np.dtype(np.uint8): "uchar", np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort", np.dtype(np.int32): "int",
       np.dtype(np.uint32): "uint", np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong", np.dtype(np.bool_): "uchar",
       np.dtype(np.complex64): "float2", np.dtype(np.complex128): "double2"}
_NP = {"float": np.float32, "half": np.float16, "double": np.float64, "char": np.int8, "uchar": np.uint8, "short": np.int16,
       "ushort": np.uint16, "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "bool": np.bool_,
       "signed char": np.int8, "unsigned char": np.uint8, "unsigned short": np.uint16, "unsigned int": np.uint32,
       "unsigned long": np.uint64, "unsigned": np.uint32, "size_t": np.uint64}
_SETTER = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
           np.dtype(np.int16): "i16", np.dtype(np.uint16): "u16", np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32",
           np.dtype(np.int64): "i64", np.dtype(np.uint64): "u64", np.dtype(np.bool_): "u8", np.dtype(np.float16): "f16",
           np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128"}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))
_VEC = {"mul": 0, "add": 1, "sub": 2, "div": 3, "axpy": 4, "scale": 5, "fma": 6}


def _dt_name(dt, bf16=False):
    return "bfloat16" if bf16 else str(np.dtype(dt))


def _shape(shape):
    return _dims(shape)


_CMP = ("lt", "le", "gt", "ge", "eq", "ne")
_F32 = np.dtype(np.float32)
