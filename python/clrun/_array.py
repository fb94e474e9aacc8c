"""Device arrays (clrun.Array): memory, views, copies, operators and the reductions' methods.

An Array is device memory with a shape and a dtype, C-contiguous; its operations queue kernels of
the library (clrun_vec, the reductions, clrun_cast, clrun_gemm, clrun_canny) or kernels generated
here, and nothing moves to the host until .get() (or NumPy reading it). What the library cannot do
on the device is refused with a clrun.Error that says what is missing, never done on the host.
"""
import math
import weakref
from ctypes import byref, c_void_p

import numpy as np

from . import _lib as L
from ._core import BF16, F16, F32, Buffer, InvalidArgument, Unsupported, _check, _is_dead, _kill, _nbytes
from ._dtypes import _CL, _FLOATS, _VEC, _shape
from ._pool import _pool
from ._gen import _cast, _convert_kernel, _vec
from ._reduce import _reduce, dot, matmul
from ._views import _Views
from ._axes import _Axes
from ._sort import _Sorts
from ._numpy import _Numpy
from . import _nd as N
from . import _ufuncs as U


# ---- Array ------------------------------------------------------------------------------------------


class Array(_Views, _Axes, _Sorts, _Numpy, Buffer):
    """A device array: shape, dtype and strides (views of one allocation); made by ctx.asarray(ndarray), ctx.empty, ctx.zeros,
    ctx.full, and returned by the ops when their inputs are Arrays. .get() (or np.asarray) brings it
    to the host; nothing else does. bf16 data is an Array of uint16 bit patterns with .bf16 True
    (from .astype("bfloat16") or ctx.asarray(u16, bf16=True)).

    Operators: + - * / // % ** & | ^ << >> and comparisons (to bool Arrays), unary - + ~ abs, in
    place too, with NumPy's broadcasting and NumPy 2's promotion (NEP 50); @ (the GEMM: float32,
    float16 and bfloat16 to float32, int8 to int32; 2-D or batches of 3-D). Reductions with axis=
    and keepdims= (sum, prod, mean, var, std, max, min, argmax, argmin, any, all). Basic indexing
    gives views at any strides; integer-array and boolean-mask indexing gathers and scatters. NumPy's
    functions on Arrays (np.sqrt(a), np.sum(a), np.where) run on the device (__array_ufunc__,
    __array_function__). The library's ops (GEMM, Canny, casts, the whole-array reductions) take
    contiguous memory: strided views are copied first. Nothing is computed on the host."""

    __array_priority__ = 1000

    def __init__(self, ctx, shape, dtype=np.float32, bf16=False, _base=None, _off=0):
        self.ctx = ctx
        self.dtype = np.dtype(dtype)
        self.shape = _shape(shape)
        self.size = math.prod(self.shape)
        self.nbytes = _nbytes(self.shape, self.dtype)
        self.bf16 = bool(bf16)
        if self.bf16 and self.dtype != np.uint16:
            raise InvalidArgument(1, "a bfloat16 Array holds uint16 bit patterns")
        if self.dtype not in _CL:
            raise Unsupported(11, f"clrun.Array has no dtype {self.dtype} (it has {', '.join(sorted({str(d) for d in _CL}))})")
        self._base, self._off, self._sub, self._st = _base, _off, None, None
        if _base is None:
            self._cap = max(self.nbytes, 1)
            self._h = _pool(ctx).take(self._cap)
            ctx._adopt(self)
        else:
            self._h = None

    _rank = 2

    # memory ----------------------------------------------------------------------------------------

    @classmethod
    def from_int_ptr(cls, ctx, mem, shape, dtype=np.float32, offset=0):
        """An Array over a cl_mem another library owns (as Buffer.from_int_ptr; clrun_buf_wrap)."""
        self = Buffer.from_int_ptr.__func__(cls, ctx, mem, shape, dtype, offset)
        self.bf16, self._base, self._off, self._sub, self._wrapped, self._st = False, None, 0, None, True, None
        if self.dtype not in _CL:
            self._release()
            raise Unsupported(11, f"clrun.Array has no dtype {self.dtype}")
        return self

    def _release(self):
        """Free (or pool) the memory, and the sub-buffer of a view; the Array and every view of its
        memory become dead (any use raises clrun.InvalidArgument), so no view writes into memory
        the pool has handed to another Array."""
        if _is_dead(self):
            return
        if getattr(self, "_sub", None):
            L.buf_free(self._sub)
            self._sub = None
        views = self.__dict__.get("_views")
        if views:
            for v in list(views):
                v._release()
        if getattr(self, "_wrapped", False):
            Buffer._release(self)
        elif getattr(self, "_base", 0) is None and self._h:
            h, self._h = self._h, None
            if self.ctx._h:
                _pool(self.ctx).give(h, self._cap)
            else:
                L.buf_free(h)
        _kill(self, "the array is freed" if self.__dict__.get("_base") is None else "the array this view shares memory with is freed")

    def _mem(self):
        """(the cl handle of the memory, byte offset of element 0) of a contiguous Array."""
        if self._st is not None:
            raise Unsupported(11, f"a strided view ({self.shape}, strides {self.strides}) where contiguous memory is needed: "
                                  ".copy() it first (Array's own methods do)")
        return self._raw()

    def _raw(self):
        """(the cl handle of the root memory, byte offset of element 0), at any strides."""
        if self._base is not None:
            return self._base.handle, self._off
        if not self._h:
            raise InvalidArgument(1, "the array is freed")
        return self._h, 0

    def _root(self):
        return self._base if self._base is not None else self

    @property
    def base(self):
        """The Array whose memory this view shares (None for an Array that owns its memory)."""
        return self._base

    @property
    def handle(self):
        """The clrun_buf of the Array's elements; a view's is a sub-buffer, which OpenCL allows only
        at offsets that are multiples of the device's mem_base_align."""
        if self._base is None:
            if not self._h:
                raise InvalidArgument(1, "the array is freed")
            return self._h
        if self._st is not None:
            raise Unsupported(11, "a strided view has no clrun_buf of its own: .copy() it first")
        if self._sub is None:
            align = self.ctx.device.mem_base_align or 1
            if self._off % align:
                raise InvalidArgument(1, f"this view starts {self._off} bytes into its array, not a multiple of the device's "
                                         f"mem_base_align ({align} bytes), so OpenCL cannot give it a buffer of its own: pass "
                                         "it to the library's ops and generated kernels (which take offsets), or .copy() it")
            h = c_void_p()
            _check(L.buf_sub(self._base.handle, self._off, max(self.nbytes, 1), byref(h)), self.ctx._h)
            self._sub = h.value
            self.ctx._adopt(self)
        return self._sub

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def _like(self, shape=None, dtype=None, bf16=None):
        if shape is None and dtype is None and bf16 is None:  # the operators' path: nothing to check again
            a = Array.__new__(Array)
            a.ctx, a.dtype, a.shape, a.size, a.nbytes, a.bf16 = self.ctx, self.dtype, self.shape, self.size, self.nbytes, self.bf16
            a._base, a._off, a._sub, a._cap, a._st = None, 0, None, max(self.nbytes, 1), None
            ctx = self.ctx
            a._h = (ctx.__dict__.get("_pool") or _pool(ctx)).take(a._cap)
            ctx._children.add(a)
            return a
        return Array(self.ctx, self.shape if shape is None else shape, self.dtype if dtype is None else dtype,
                     self.bf16 if bf16 is None else bf16)

    def _view(self, shape, byte_off):
        root = self._base if self._base is not None else self
        v = Array(self.ctx, shape, self.dtype, self.bf16, _base=root, _off=self._off + byte_off)
        views = root.__dict__.get("_views")
        if views is None:
            views = root._views = weakref.WeakSet()
        views.add(v)
        return v

    def _strided(self, shape, st, elem_off):
        """A view of shape at element strides st, elem_off elements past this Array's first."""
        v = self._view(shape, elem_off * self.itemsize)
        if not N.contiguous_strides(v.shape, st):
            v._st = tuple(st)
        return v

    # transfers -------------------------------------------------------------------------------------

    def get(self, stream=None, out=None):
        """The contents as a NumPy array. With stream=, the copy is queued on that stream and the call
        returns at once: the array is valid after stream.synchronize() (or an event recorded after).
        A NumPy array in the first place is out, as PyCUDA's GPUArray.get(ary) takes it."""
        if isinstance(stream, np.ndarray) and out is None:
            stream, out = None, stream
        if out is None:
            out = np.empty(self.shape, self.dtype)
        elif not isinstance(out, np.ndarray) or not out.flags.c_contiguous or out.nbytes != self.nbytes or out.dtype != self.dtype:
            raise InvalidArgument(1, f"get: out must be a C-contiguous {self.dtype} array of {self.nbytes} bytes")
        if not self.nbytes:
            return out
        if self._st is not None:
            if stream is None:
                return N.contiguous(self).get(out=out)
            with stream:  # the gathering copy on the stream, ahead of its download
                c = N.contiguous(self)
            return c.get(stream=stream, out=out)
        h, off = self._mem()
        if stream is None:
            _check(L.download(h, off, out.ctypes.data, self.nbytes), self.ctx._h)
        else:
            stream._async(lambda ev: L.download_async(h, off, out.ctypes.data, self.nbytes, ev), out)
        return out

    download = get
    numpy = get

    def set(self, arr, stream=None):
        """Copy a host array of the same shape (and dtype) into this Array (queued on stream= without waiting)."""
        a = np.asarray(arr, dtype=self.dtype, order="C")
        if a.shape != self.shape:
            raise InvalidArgument(1, f"set: an array of shape {a.shape} into an Array of shape {self.shape}")
        if not a.nbytes:
            return self
        if self._st is not None:
            tmp = Array(self.ctx, self.shape, self.dtype, bf16=self.bf16)
            if stream is None:
                N.assign(self, tmp.set(a))
            else:
                with stream:  # upload and scatter both queued on the stream, in order
                    tmp.set(a, stream=stream)
                    N.assign(self, tmp)
            return self
        h, off = self._mem()
        if stream is None:
            _check(L.upload(h, off, a.ctypes.data, a.nbytes), self.ctx._h)
        else:
            stream._async(lambda ev: L.upload_async(h, off, a.ctypes.data, a.nbytes, ev), a)
        return self

    upload = set

    def __array__(self, dtype=None, copy=None):
        a = self.get()
        return a if dtype is None else a.astype(dtype, copy=False)

    def item(self):
        if self.size != 1:
            raise InvalidArgument(1, f"item: an Array of one element, not {self.size}")
        return self.get().reshape(()).item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError("only integer Arrays are indices")
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of an Array of more than one element is ambiguous (NumPy's rule)")
        return bool(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d Array")
        return self.shape[0]

    def __iter__(self):
        raise Unsupported(11, "iterating over an Array would move it to the host element by element: .get() it first")

    def copy(self):
        """A new C-contiguous Array with the same contents (copied on the device)."""
        if self._st is not None:
            return N.contiguous(self, copy=True)
        out = self._like()
        if self.nbytes:
            h, off = self._mem()
            oh, ooff = out._mem()
            _check(L.buf_copy(oh, ooff, h, off, self.nbytes), self.ctx._h)
        return out

    def fill(self, value):
        """Set every element to value (on the device), converted as ndarray.fill converts it."""
        N.assign(self, value, "fill")
        return self

    # conversion ------------------------------------------------------------------------------------

    def astype(self, dtype):
        """A new Array of another dtype, converted on the device: float32 <-> float16 and
        float32 <-> bfloat16 ("bfloat16" or "bf16") with the library's cast kernels (round to nearest
        even); float to integer rounds toward zero and saturates at the type's range (NumPy leaves
        out-of-range values undefined); integer to integer wraps as NumPy does; bool is 0 or 1."""
        if self._st is not None:
            return N.contiguous(self).astype(dtype)
        to_bf16 = isinstance(dtype, str) and dtype in ("bfloat16", "bf16")
        dt = np.dtype(np.uint16) if to_bf16 else np.dtype(dtype)
        if to_bf16 == self.bf16 and dt == self.dtype:
            return self.copy()
        if self.bf16 or to_bf16:
            src = self
            if self.bf16 and not to_bf16 and dt != np.float32:
                return self.astype(np.float32).astype(dt)
            if to_bf16 and self.dtype != np.float32:
                src = self.astype(np.float32)
            out = Array(self.ctx, self.shape, dt, bf16=to_bf16)
            _cast(src, out, BF16 if src.bf16 else F32, BF16 if to_bf16 else F32)
            return out
        out = Array(self.ctx, self.shape, dt)
        if {self.dtype, dt} == set(_FLOATS):
            _cast(self, out, F32 if self.dtype == np.float32 else F16, F32 if dt == np.float32 else F16)
            return out
        if dt not in _CL:
            raise Unsupported(11, f"astype: clrun.Array has no dtype {dt}")
        if dt.kind == "c" or self.dtype.kind == "c":  # complex to real keeps the real part, as NumPy's cast
            return N.walk(self.ctx, out, "x0", self.dtype, [(self, self.dtype, None)], stem="clrun_astype")
        _convert_kernel(self.dtype, dt)(self, out)
        return out

    # complex parts ---------------------------------------------------------------------------------

    @property
    def real(self):
        """The real part: a writable view of a complex Array (as NumPy's), the Array itself otherwise."""
        return self._part(0) if self.dtype.kind == "c" else self

    @real.setter
    def real(self, value):
        N.assign(self.real, value, "real")

    @property
    def imag(self):
        """The imaginary part: a writable view of a complex Array, zeros (a new Array) otherwise."""
        if self.dtype.kind == "c":
            return self._part(1)
        return Array(self.ctx, self.shape, self.dtype, bf16=self.bf16).fill(0)

    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        N.assign(self.imag, value, "imag")

    def _part(self, k):
        rdt = np.dtype(np.float32 if self.dtype == np.complex64 else np.float64)
        root = self._root()
        v = Array(self.ctx, self.shape, rdt, _base=root, _off=self._off + k * rdt.itemsize)
        st = tuple(2 * s for s in N.strides(self))
        if not N.contiguous_strides(self.shape, st):
            v._st = st
        views = root.__dict__.get("_views")
        if views is None:
            views = root._views = weakref.WeakSet()
        views.add(v)
        return v

    def conj(self):
        """The complex conjugate (np.conjugate); a copy of a real Array."""
        return U.apply("conjugate", self)

    conjugate = conj

    # arithmetic ------------------------------------------------------------------------------------

    def _binary(self, other, op, reflected=False, inplace=False):
        if type(other) is Array and other.ctx is self.ctx and other.shape == self.shape and other.dtype == self.dtype \
                and self.dtype in _FLOATS and op in _VEC and not self.bf16 and not other.bf16 \
                and self._st is None and other._st is None and (not inplace or other._root() is not self._root()
                                                                or other._off == self._off):  # the common case, checked once
            a, b = (other, self) if reflected else (self, other)
            out = self if inplace else self._like()
            _vec(op, out, a, b)
            return out
        if op == "mul" and self.dtype == np.float32 and not reflected and self._st is None and not self.bf16 \
                and type(other) in (float, int):  # alpha·a: the library's op, one rounding
            out = self if inplace else self._like()
            _vec("scale", out, self, alpha=float(np.float32(other)))
            return out
        a, b = (other, self) if reflected else (self, other)
        return U.apply(op, a, b, out=self if inplace else None)

    # the arithmetic and comparison operators come from one table (_OPERATORS, below the class)

    __hash__ = Buffer.__hash__

    def __neg__(self):
        return U.apply("neg", self)

    def __pos__(self):
        return U.apply("pos", self)

    def __abs__(self):
        return U.apply("abs", self)

    def __invert__(self):
        return U.apply("invert", self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    # reductions (sum, prod, mean, var, std, max, min, argmax, argmin, any, all: _axes) -------------

    def dot(self, other):
        """NumPy's dot: the inner product of 1-D Arrays, the matrix product of 2-D ones (see clrun.dot)."""
        return dot(self, other)

    def norm(self):
        """The Euclidean norm of the elements (np.linalg.norm: the dtype for floats, float64 for integers);
        float16 squares are summed in float32, so a norm NumPy's float16 sum overflows to inf is finite here."""
        return _reduce(N.contiguous(self), "norm2")

    def canny(self, low, high, l2=False, aperture=3, blur=0, blur_sigma=0.0):
        """Canny edges of this uint8 image (H×W or H×W×3, R, G, B) as a new uint8 Array, equal byte for
        byte to cv2.Canny (clrun_canny)."""
        from ._ops import canny
        return canny(self.ctx, N.contiguous(self), low, high, l2=l2, aperture=aperture, blur=blur, blur_sigma=blur_sigma)




# Array's operators, one row each: the op (_binary's) and its methods, plain, reflected and in place
# (None: Python has none for it)
_OPERATORS = (("add", "__add__", "__radd__", "__iadd__"), ("sub", "__sub__", "__rsub__", "__isub__"),
              ("mul", "__mul__", "__rmul__", "__imul__"), ("div", "__truediv__", "__rtruediv__", "__itruediv__"),
              ("floordiv", "__floordiv__", "__rfloordiv__", "__ifloordiv__"), ("mod", "__mod__", "__rmod__", "__imod__"),
              ("pow", "__pow__", "__rpow__", "__ipow__"), ("and", "__and__", "__rand__", "__iand__"),
              ("or", "__or__", "__ror__", "__ior__"), ("xor", "__xor__", "__rxor__", "__ixor__"),
              ("lshift", "__lshift__", "__rlshift__", "__ilshift__"), ("rshift", "__rshift__", "__rrshift__", "__irshift__"),
              ("lt", "__lt__", None, None), ("le", "__le__", None, None), ("gt", "__gt__", None, None), ("ge", "__ge__", None, None),
              ("eq", "__eq__", None, None), ("ne", "__ne__", None, None))


def _operator(op, name, reflected=False, inplace=False):
    def method(self, o):
        return self._binary(o, op, reflected=reflected, inplace=inplace)

    method.__name__ = method.__qualname__ = name
    return method


for _op, _plain, _reflected, _inplace in _OPERATORS:
    setattr(Array, _plain, _operator(_op, _plain))
    if _reflected:
        setattr(Array, _reflected, _operator(_op, _reflected, reflected=True))
    if _inplace:
        setattr(Array, _inplace, _operator(_op, _inplace, inplace=True))

# the names the package exports from here (clrun/__init__.py)
from ._gen import ElementwiseKernel, ReductionKernel, elementwise, reduction  # noqa: E402,F401
from ._stream import Stream  # noqa: E402,F401
