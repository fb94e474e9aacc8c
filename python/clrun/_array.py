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
from ._dtypes import _CL, _CMP, _FLOATS, _VEC, _dt_name, _shape
from ._operands import _same, _scalar_of
from ._pool import _pool
from ._gen import _cast, _convert_kernel, _ew_kernel, _vec
from ._reduce import _reduce, dot, matmul


# ---- Array ------------------------------------------------------------------------------------------


class Array(Buffer):
    """A device array: shape, dtype, C-contiguous; made by ctx.asarray(ndarray), ctx.empty, ctx.zeros,
    ctx.full, and returned by the ops when their inputs are Arrays. .get() (or np.asarray) brings it
    to the host; nothing else does. bf16 data is an Array of uint16 bit patterns with .bf16 True
    (from .astype("bfloat16") or ctx.asarray(u16, bf16=True)).

    Operators: + - * / (Arrays of one shape and dtype, or an Array and a scalar), in place too,
    unary -, comparisons (to bool Arrays), @ (the GEMM: float32, float16 and bfloat16 to float32,
    int8 to int32; 2-D or batches of 3-D). Reductions: sum, max, min, argmax, dot, norm (NumPy
    scalars on the host). Basic slicing of contiguous ranges gives views of the same memory.
    Broadcasting, mixed dtypes and strided views are refused (clrun.Unsupported), never computed on
    the host."""

    __array_priority__ = 1000
    __array_ufunc__ = None  # ndarray (op) Array comes to Array's reflected operator, which refuses it in words

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
        self._base, self._off, self._sub = _base, _off, None
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
        self.bf16, self._base, self._off, self._sub, self._wrapped = False, None, 0, None, True
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
        """(the cl handle of the memory, byte offset of element 0)."""
        if self._base is not None:
            return self._base.handle, self._off
        if not self._h:
            raise InvalidArgument(1, "the array is freed")
        return self._h, 0

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

    def __repr__(self):
        return f"<clrun.Array {self.shape} {_dt_name(self.dtype, self.bf16)} on {self.ctx.device.name!r}>"

    def _like(self, shape=None, dtype=None, bf16=None):
        if shape is None and dtype is None and bf16 is None:  # the operators' path: nothing to check again
            a = Array.__new__(Array)
            a.ctx, a.dtype, a.shape, a.size, a.nbytes, a.bf16 = self.ctx, self.dtype, self.shape, self.size, self.nbytes, self.bf16
            a._base, a._off, a._sub, a._cap = None, 0, None, max(self.nbytes, 1)
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

    # transfers -------------------------------------------------------------------------------------

    def get(self, stream=None, out=None):
        """The contents as a NumPy array. With stream=, the copy is queued on that stream and the call
        returns at once: the array is valid after stream.synchronize() (or an event recorded after)."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        elif not isinstance(out, np.ndarray) or not out.flags.c_contiguous or out.nbytes != self.nbytes or out.dtype != self.dtype:
            raise InvalidArgument(1, f"get: out must be a C-contiguous {self.dtype} array of {self.nbytes} bytes")
        if not self.nbytes:
            return out
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
        a = np.ascontiguousarray(arr, dtype=self.dtype)
        if a.shape != self.shape:
            raise InvalidArgument(1, f"set: an array of shape {a.shape} into an Array of shape {self.shape}")
        if not a.nbytes:
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
        """A new Array with the same contents (copied on the device)."""
        out = self._like()
        if self.nbytes:
            h, off = self._mem()
            oh, ooff = out._mem()
            _check(L.buf_copy(oh, ooff, h, off, self.nbytes), self.ctx._h)
        return out

    def fill(self, value):
        """Set every element to value (on the device)."""
        v = _scalar_of(value, self.dtype, "fill")
        if self.nbytes:
            h, off = self._mem()
            _check(L.buf_fill(h, v.ctypes.data, v.itemsize, off, self.nbytes), self.ctx._h)
        return self

    # shape -----------------------------------------------------------------------------------------

    def reshape(self, *shape):
        """The same memory under another shape (one dimension may be -1)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = [int(s) for s in shape]
        if shape.count(-1) > 1:
            raise InvalidArgument(1, "reshape: at most one dimension is -1")
        if -1 in shape:
            rest = math.prod(s for s in shape if s != -1)
            if rest == 0 or self.size % rest:
                raise InvalidArgument(1, f"reshape: {self.size} elements cannot take shape {tuple(shape)}")
            shape[shape.index(-1)] = self.size // rest
        if math.prod(shape) != self.size:
            raise InvalidArgument(1, f"reshape: {self.size} elements cannot take shape {tuple(shape)}")
        return self._view(tuple(shape), 0)

    def ravel(self):
        return self.reshape(-1)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis or k is None for k in key):
            raise Unsupported(11, "Array indexing takes ints and slices (no Ellipsis or newaxis)")
        if len(key) > self.ndim:
            raise IndexError(f"too many indices for an Array of {self.ndim} dimensions")
        dims = list(self.shape)
        inner = [math.prod(dims[i + 1:]) for i in range(len(dims))]
        off, i = 0, 0
        while i < len(key) and isinstance(key[i], (int, np.integer)) and not isinstance(key[i], bool):
            k, n = int(key[i]), dims[i]
            if k < 0:
                k += n
            if not 0 <= k < n:
                raise IndexError(f"index {int(key[i])} is out of bounds for axis {i} of size {n}")
            off += k * inner[i]
            i += 1
        shape = dims[i:]
        if i < len(key):
            k = key[i]
            if not isinstance(k, slice):
                raise Unsupported(11, f"Array indexing takes ints and slices, not {type(k).__name__} (no fancy or boolean indexing)")
            start, stop, step = k.indices(dims[i])
            if step != 1 or any(not (isinstance(kk, slice) and kk == slice(None)) for kk in key[i + 1:]):
                raise Unsupported(11, "an Array view is a contiguous range: slices with step 1, then only ':' (a strided view would "
                                      "need a copy; .get() and slice on the host)")
            off += start * inner[i]
            shape = [max(0, stop - start)] + dims[i + 1:]
        return self._view(tuple(shape), off * self.itemsize)

    def __setitem__(self, key, value):
        v = self[key]
        if isinstance(value, Array):
            if value.shape != v.shape or value.dtype != v.dtype:
                raise Unsupported(11, f"assigning an Array of {value.shape} {value.dtype} to a view of {v.shape} {v.dtype}: "
                                      "shapes and dtypes must match (no broadcasting or casting)")
            if v.nbytes:
                h, off = value._mem()
                oh, ooff = v._mem()
                _check(L.buf_copy(oh, ooff, h, off, v.nbytes), self.ctx._h)
        elif isinstance(value, np.ndarray):
            v.set(value)
        else:
            v.fill(value)

    # conversion ------------------------------------------------------------------------------------

    def astype(self, dtype):
        """A new Array of another dtype, converted on the device: float32 <-> float16 and
        float32 <-> bfloat16 ("bfloat16" or "bf16") with the library's cast kernels (round to nearest
        even); float to integer rounds toward zero and saturates at the type's range (NumPy leaves
        out-of-range values undefined); integer to integer wraps as NumPy does; bool is 0 or 1."""
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
        _convert_kernel(self.dtype, dt)(self, out)
        return out

    # arithmetic ------------------------------------------------------------------------------------

    def _binary(self, other, op, reflected=False, inplace=False):
        if isinstance(other, np.ndarray) and other.ndim > 0:
            raise InvalidArgument(1, f"{op}: an Array with a NumPy array: move it to the device first (ctx.asarray(x)); clrun never "
                                     "computes on the host")
        if self.bf16 or (isinstance(other, Array) and other.bf16):
            raise Unsupported(11, f"{op} on bfloat16 Arrays: the library has no bf16 arithmetic; .astype(np.float32) first")
        if type(other) is Array and other.ctx is self.ctx and other.shape == self.shape and other.dtype == self.dtype \
                and self.dtype in _FLOATS and op in _VEC and not self.bf16 and not other.bf16:  # the common case, checked once
            a, b = (other, self) if reflected else (self, other)
            out = self if inplace else self._like()
            _vec(op, out, a, b)
            return out
        if isinstance(other, Array):
            _same(self, other, op)
            a, b = (other, self) if reflected else (self, other)
            out = self if inplace else (self._like(dtype=np.bool_) if op in _CMP else self._like())
            if op in _CMP:
                _ew_kernel(op, self.dtype, "array")(a, b, out)
            elif self.dtype in _FLOATS:
                _vec(op, out, a, b)
            else:
                if op == "div":
                    raise Unsupported(11, f"/ on {self.dtype} Arrays: true division gives float64 in NumPy, which clrun does not do "
                                          "on integers; .astype(np.float32) first")
                _ew_kernel(op, self.dtype, "array")(a, b, out)
            return out
        s = _scalar_of(other, self.dtype, op)
        out = self if inplace else (self._like(dtype=np.bool_) if op in _CMP else self._like())
        if op == "div" and self.dtype.kind in "iub":
            raise Unsupported(11, f"/ on {self.dtype} Arrays: true division gives float64 in NumPy, which clrun does not do on "
                                  "integers; .astype(np.float32) first")
        if op == "mul" and self.dtype == np.float32 and not reflected:  # alpha·a through the library's op, one rounding
            _vec("scale", out, self, alpha=float(s))
            return out
        _ew_kernel(op, self.dtype, "rscalar" if reflected else "scalar")(self, s, out)
        return out

    # the arithmetic and comparison operators come from one table (_OPERATORS, below the class)

    __hash__ = Buffer.__hash__

    def __neg__(self):
        if self.bf16 or self.dtype == np.bool_:
            raise Unsupported(11, f"unary - on {_dt_name(self.dtype, self.bf16)} Arrays")
        out = self._like()
        _ew_kernel("neg", self.dtype, "unary")(self, out)
        return out

    def __pos__(self):
        return self

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    # reductions ------------------------------------------------------------------------------------

    def sum(self):
        """The sum of the elements as NumPy's sum gives it (its type too: int64/uint64 for integers
        and bools); float32/float16 compensated in the library (error about 5e-7 of the sum of
        magnitudes), float64 accumulated in double."""
        return _reduce(self, "sum")

    def prod(self):
        """The product of the elements (NumPy's type: int64/uint64 for integers, wrapping as NumPy's)."""
        return _reduce(self, "prod")

    def max(self):
        """The largest element (NaN if any is NaN); an empty Array is refused."""
        return _reduce(self, "max")

    def min(self):
        """The smallest element (NaN if any is NaN); an empty Array is refused."""
        return _reduce(self, "min")

    def argmax(self):
        """The flat index of the first largest element (of the first NaN if any), as np.int64."""
        return _reduce(self, "argmax")

    def argmin(self):
        """The flat index of the first smallest element (of the first NaN if any), as np.int64."""
        return _reduce(self, "argmin")

    def mean(self):
        """The mean (float64 for integers and bools, the dtype for floats); NaN with a warning when empty."""
        return _reduce(self, "mean")

    def any(self):
        return _reduce(self, "any")

    def all(self):
        return _reduce(self, "all")

    def dot(self, other):
        """NumPy's dot: the inner product of 1-D Arrays, the matrix product of 2-D ones (see clrun.dot)."""
        return dot(self, other)

    def norm(self):
        """The Euclidean norm of the elements (np.linalg.norm: the dtype for floats, float64 for integers);
        float16 squares are summed in float32, so a norm NumPy's float16 sum overflows to inf is finite here."""
        return _reduce(self, "norm2")

    def canny(self, low, high, l2=False, aperture=3, blur=0, blur_sigma=0.0):
        """Canny edges of this uint8 image (H×W or H×W×3, R, G, B) as a new uint8 Array, equal byte for
        byte to cv2.Canny (clrun_canny)."""
        from ._ops import canny
        return canny(self.ctx, self, low, high, l2=l2, aperture=aperture, blur=blur, blur_sigma=blur_sigma)




# Array's operators, one row each: the op (_binary's) and its methods, plain, reflected and in place
# (None: Python has none for it)
_OPERATORS = (("add", "__add__", "__radd__", "__iadd__"), ("sub", "__sub__", "__rsub__", "__isub__"),
              ("mul", "__mul__", "__rmul__", "__imul__"), ("div", "__truediv__", "__rtruediv__", "__itruediv__"),
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
