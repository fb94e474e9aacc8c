"""Device arrays (clrun.Array), the kernel generators (elementwise, reduction) and streams.

An Array is device memory with a shape and a dtype, C-contiguous; its operations queue kernels of
the library (clrun_vec, the reductions, clrun_cast, clrun_gemm, clrun_canny) or kernels generated
here, and nothing moves to the host until .get() (or NumPy reading it). What the library cannot do
on the device is refused with a clrun.Error that says what is missing, never done on the host.
"""
import math
import threading
import warnings
import weakref
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import _lib as L
from ._core import (BF16, F16, F32, ArgMismatch, Buffer, Error, Event, InvalidArgument, OutOfRange, Unsupported, _check, _dims, _is_dead,
                    _kill, _nbytes, _raise)

# OpenCL C names of the dtypes an Array may have (bool is stored as one byte, 0 or 1)
_CL = {np.dtype(np.float32): "float", np.dtype(np.float16): "half", np.dtype(np.float64): "double", np.dtype(np.int8): "char",
       np.dtype(np.uint8): "uchar", np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort", np.dtype(np.int32): "int",
       np.dtype(np.uint32): "uint", np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong", np.dtype(np.bool_): "uchar"}
_NP = {"float": np.float32, "half": np.float16, "double": np.float64, "char": np.int8, "uchar": np.uint8, "short": np.int16,
       "ushort": np.uint16, "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "bool": np.bool_,
       "signed char": np.int8, "unsigned char": np.uint8, "unsigned short": np.uint16, "unsigned int": np.uint32,
       "unsigned long": np.uint64, "unsigned": np.uint32, "size_t": np.uint64}
_SETTER = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
           np.dtype(np.int16): "i16", np.dtype(np.uint16): "u16", np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32",
           np.dtype(np.int64): "i64", np.dtype(np.uint64): "u64", np.dtype(np.bool_): "u8", np.dtype(np.float16): "f16"}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))
_VEC = {"mul": 0, "add": 1, "sub": 2, "div": 3, "axpy": 4, "scale": 5, "fma": 6}


def _dt_name(dt, bf16=False):
    return "bfloat16" if bf16 else str(np.dtype(dt))


def _shape(shape):
    return _dims(shape)


# ---- the memory pool --------------------------------------------------------------------------------


class _Pool:
    """Device memory of Arrays that were collected, kept per size for the next Array of that size
    (allocation on some drivers costs more than a small kernel). Only while the context has no
    Stream: with one queue, whatever runs next on the memory is queued after what used it. A Stream
    made empties the pool, and while one lives, memory is given back to the driver instead (which
    frees it once the commands using it finish). Bounded: a quarter of the device's memory; freed
    when the context closes."""
    _rank = 2.5  # after the Arrays (which return their memory here as the context closes)

    def __init__(self, ctx):
        self.ctx = ctx
        self.lock = threading.Lock()
        self.free = {}  # nbytes -> [handle]
        self.held = 0
        self.cap = ctx.device.global_mem // 4
        ctx._adopt(self)

    def take(self, nbytes):
        with self.lock:
            lst = self.free.get(nbytes)
            if lst:
                self.held -= nbytes
                return lst.pop()
        h = c_void_p()
        ch = self.ctx.handle  # raises once the context is closed
        st = L.buf_new(ch, nbytes, 0, byref(h))
        if st == 5 and self.held:  # out of device memory: give the pool back and try once more
            self.release_all()
            st = L.buf_new(ch, nbytes, 0, byref(h))
        _check(st, self.ctx._h)
        return h.value

    def give(self, h, nbytes):
        if not self.ctx._h:
            return
        if self.held + nbytes > self.cap or self.ctx.__dict__.get("_streams"):
            L.buf_free(h)
            return
        with self.lock:
            self.free.setdefault(nbytes, []).append(h)
            self.held += nbytes

    def release_all(self):
        with self.lock:
            for lst in self.free.values():
                for h in lst:
                    L.buf_free(h)
            self.free.clear()
            self.held = 0

    def _release(self):
        self.release_all()


def _pool(ctx):
    p = ctx.__dict__.get("_pool")
    if p is None:
        p = ctx._pool = _Pool(ctx)
    return p


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

    def __add__(self, o):
        return self._binary(o, "add")

    def __radd__(self, o):
        return self._binary(o, "add", reflected=True)

    def __iadd__(self, o):
        return self._binary(o, "add", inplace=True)

    def __sub__(self, o):
        return self._binary(o, "sub")

    def __rsub__(self, o):
        return self._binary(o, "sub", reflected=True)

    def __isub__(self, o):
        return self._binary(o, "sub", inplace=True)

    def __mul__(self, o):
        return self._binary(o, "mul")

    def __rmul__(self, o):
        return self._binary(o, "mul", reflected=True)

    def __imul__(self, o):
        return self._binary(o, "mul", inplace=True)

    def __truediv__(self, o):
        return self._binary(o, "div")

    def __rtruediv__(self, o):
        return self._binary(o, "div", reflected=True)

    def __itruediv__(self, o):
        return self._binary(o, "div", inplace=True)

    def __lt__(self, o):
        return self._binary(o, "lt")

    def __le__(self, o):
        return self._binary(o, "le")

    def __gt__(self, o):
        return self._binary(o, "gt")

    def __ge__(self, o):
        return self._binary(o, "ge")

    def __eq__(self, o):
        return self._binary(o, "eq")

    def __ne__(self, o):
        return self._binary(o, "ne")

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


_CMP = ("lt", "le", "gt", "ge", "eq", "ne")


def _same(a, b, op):
    if a.ctx is not b.ctx:
        raise InvalidArgument(1, f"{op}: the Arrays are on different contexts")
    if a.shape != b.shape:
        raise Unsupported(11, f"{op}: shapes {a.shape} and {b.shape}: clrun.Array has no broadcasting (give operands of one shape)")
    if a.dtype != b.dtype:
        raise Unsupported(11, f"{op}: dtypes {a.dtype} and {b.dtype}: clrun.Array does not mix dtypes (astype one of them first)")


def _scalar_of(v, dt, op):
    """A Python or NumPy scalar as a NumPy scalar of dt, refused when it does not fit (NumPy would
    change the result's type, which clrun does not)."""
    if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0:
        v = v.item()
    if isinstance(v, bool) or dt == np.bool_:
        if dt != np.bool_ or not isinstance(v, (bool, int)):
            raise Unsupported(11, f"{op}: a {type(v).__name__} with a {dt} Array")
        return np.array(bool(v), np.bool_)
    if isinstance(v, int):
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:  # NumPy 2 (NEP 50) raises OverflowError here too
                raise OutOfRange(1, f"{op}: Python integer {v} out of bounds for {dt}")
        elif dt.kind == "f":
            return _float_scalar(float(v), dt)
        return np.array(v, dt)
    if isinstance(v, float):
        if dt.kind != "f":
            raise Unsupported(11, f"{op}: a float with an {dt} Array would give float64 in NumPy; clrun does not mix types "
                                  "(.astype(np.float32) first)")
        return _float_scalar(v, dt)
    raise InvalidArgument(1, f"{op}: an Array or a number, not {type(v).__name__}")


_F32 = np.dtype(np.float32)


def _float_scalar(v, dt):
    """A Python float in the Array's float dtype (NEP 50: the Array's type wins); a finite value that
    overflows it warns as NumPy does (RuntimeWarning: overflow encountered in cast), never silently."""
    with np.errstate(over="ignore"):
        r = np.array(v, dt)
    if math.isfinite(v) and not np.isfinite(r):
        warnings.warn(f"overflow encountered in cast ({v!r} to {dt} is {float(r)})", RuntimeWarning, stacklevel=4)
    return r


def _vec(op, out, a, b=None, c=None, alpha=1.0):
    ctx = out.ctx
    t = F32 if out.dtype == _F32 else F16
    oh, oo = out._mem()
    ah, ao = a._mem()
    bh, bo = b._mem() if b is not None else (None, 0)
    ch, co = c._mem() if c is not None else (None, 0)
    isz = out.dtype.itemsize
    st = L.vec(ctx._h, _VEC[op], t, out.size, alpha, oh, oo // isz, ah, ao // isz, bh, bo // isz, ch, co // isz)
    if st:
        _raise(st, ctx._h)


def _cast(src, out, fr, to):
    h, o = src._mem()
    oh, oo = out._mem()
    _check(L.cast(src.ctx.handle, h, o // src.itemsize, fr, oh, oo // out.itemsize, to, src.size), src.ctx._h)


# ---- generated kernels ------------------------------------------------------------------------------

_LOCK = threading.Lock()


def _parse_arguments(arguments):
    """[(name, np dtype, is_pointer, cl type)] of an argument string such as "float *x, const int n"."""
    if isinstance(arguments, (list, tuple)):
        arguments = ", ".join(arguments)
    out = []
    for part in (p.strip() for p in str(arguments).split(",")):
        if not part:
            raise InvalidArgument(1, f"arguments: an empty argument in {arguments!r}")
        ptr = "*" in part
        words = part.replace("*", " ").split()
        words = [w for w in words if w not in ("const", "__global", "global", "restrict", "__restrict", "volatile")]
        if len(words) < 2 or not words[-1].isidentifier() or words[-1].endswith("__"):
            raise InvalidArgument(1, f"arguments: {part!r} is not TYPE NAME or TYPE *NAME (names may not end in __)")
        name, ty = words[-1], " ".join(words[:-1])
        if ty not in _NP:
            raise InvalidArgument(1, f"arguments: {part!r}: the type {ty!r} is not one of {', '.join(sorted(_NP))}")
        dt = np.dtype(_NP[ty])
        out.append((name, dt, ptr, _CL.get(dt, ty) if ty != "bool" else "uchar"))
    names = [a[0] for a in out]
    if len(set(names)) != len(names):
        raise InvalidArgument(1, f"arguments: a name given twice in {arguments!r}")
    return out


def _params(args):
    ps, setup = [], []
    for name, dt, ptr, cl in args:
        if ptr:
            if cl == "half":  # no arithmetic on half pointers without cl_khr_fp16: offset as ushort
                ps.append(f"__global ushort *{name}__b, ulong {name}__o")
                setup.append(f"__global half *{name} = (__global half *)({name}__b + {name}__o);")
            else:
                ps.append(f"__global {cl} *{name}__b, ulong {name}__o")
                setup.append(f"__global {cl} *{name} = {name}__b + {name}__o;")
        elif cl == "half":
            ps.append(f"float {name}")  # a half scalar is passed as float (exact)
        else:
            ps.append(f"{cl} {name}")
    return ", ".join(ps), "\n    ".join(setup)


def _fp64_pragma(args, extra=""):
    return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if any(a[3] == "double" for a in args) or "double" in extra else ""


class _Compiled:
    """One generated program on one context: its kernels' handles and a lock for their arguments."""

    _rank = 1

    def __init__(self, ctx, source, name, options, kernels):
        self.ctx = ctx
        h = c_void_p()
        _check(L.prog_source(ctx.handle, source.encode(), name.encode(), options.encode() if options else None, byref(h)), ctx._h)
        self._h = h.value
        self.k = []
        self.lock = threading.Lock()
        try:
            for kn in kernels:
                kh = c_void_p()
                _check(L.kernel_new(self._h, kn.encode(), byref(kh)), ctx._h)
                self.k.append(kh.value)
        except Error:
            self._release()
            raise
        ctx._adopt(self)

    def _release(self):
        for kh in self.k:
            L.kernel_free(kh)
        self.k = []
        if self._h:
            L.prog_free(self._h)
            self._h = None


class _Generated:
    """What the two generators share: the source, and its program per context (built through the
    library's binary cache, so a second process loads it instead of compiling)."""

    def __init__(self, name, options):
        if not str(name).isidentifier():
            raise InvalidArgument(1, f"name: {name!r} is not an OpenCL C identifier")
        self.name, self.options = str(name), options

    def _compiled(self, ctx):
        cache = ctx.__dict__.get("_generated")
        if cache is None:
            cache = ctx._generated = {}
        c = cache.get(id(self))
        if c is None or not c._h:
            with _LOCK:
                c = cache.get(id(self))
                if c is None or not c._h:
                    c = cache[id(self)] = _Compiled(ctx, self._source(ctx), self.name, self.options, self._kernel_names())
                    c.owner = self  # keeps id(self) from being reused while the entry lives
        return c

    def _bind(self, kh, args, values, start=0):
        """Set the user arguments from index start; returns (next index, n from the first Array, ctx)."""
        i, n, ctx = start, None, None
        for (name, dt, ptr, cl), v in zip(args, values):
            if ptr:
                if not isinstance(v, Array):
                    raise ArgMismatch(9, f"{self.name}: argument {name} is a {cl} pointer: give a clrun.Array, not {type(v).__name__}")
                if v.dtype != dt:
                    raise ArgMismatch(9, f"{self.name}: argument {name} is {cl} *: a {dt} Array, not {v.dtype}")
                h, off = v._mem()
                st = L.arg_buf(kh, i, h) or L.arg_setters["u64"][0](kh, i + 1, off // v.itemsize)
                i += 2
                if n is None:
                    n, ctx = v.size, v.ctx
            else:
                if isinstance(v, (Array, np.ndarray)) and np.ndim(v) > 0:
                    raise ArgMismatch(9, f"{self.name}: argument {name} is a {cl} scalar, not an array")
                sv = _scalar_value(v, dt, f"{self.name}: argument {name}")
                st = (L.arg_setters["f32"][0](kh, i, float(sv)) if cl == "half" else L.arg_setters[_SETTER[dt]][0](kh, i, sv))
                i += 1
            if st:
                _raise(st, ctx._h if ctx else None)
        return i, n, ctx


def _scalar_value(v, dt, where):
    try:
        if dt.kind == "f":
            return float(v)
        if dt == np.bool_:
            return int(bool(v))
        iv = int(v)
        if isinstance(v, float) and not v.is_integer():
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ArgMismatch(9, f"{where} is {dt}; {v!r} is not") from None
    info = np.iinfo(dt)
    if not info.min <= iv <= info.max:
        raise InvalidArgument(1, f"{where}: {iv} is out of the range of {dt}")
    return iv


def _wg(ctx):
    w = min(256, ctx.device.max_work_group)
    return 1 << (w.bit_length() - 1)


class ElementwiseKernel(_Generated):
    """An element-wise kernel generated from an argument string and a per-element statement, as
    PyOpenCL's ElementwiseKernel and CuPy's: clrun.elementwise("float *z, const float *x, float a",
    "z[i] = a * x[i]"). The statement runs for i from 0 to n - 1, n the size of the first Array
    argument (or size=); pointer arguments take Arrays (views included: their offsets are passed),
    scalars take numbers, checked against their type. float16 data is declared half * and read and
    written with vload_half / vstore_half (devices without cl_khr_fp16 have no half arithmetic);
    preamble= adds helper functions. Built once per context through the binary cache."""

    def __init__(self, arguments, operation, name="elementwise", preamble="", options=None):
        super().__init__(name, options)
        self.args = _parse_arguments(arguments)
        if not any(a[2] for a in self.args):
            raise InvalidArgument(1, "elementwise: the arguments need at least one pointer (an Array)")
        self.operation, self.preamble = str(operation), str(preamble)

    def _kernel_names(self):
        return [self.name]

    def _source(self, ctx):
        params, setup = _params(self.args)
        return (f"{_fp64_pragma(self.args, self.operation)}{self.preamble}\n"
                f"__kernel void {self.name}({params}, ulong n__)\n{{\n    const ulong i = get_global_id(0);\n"
                f"    if (i >= n__) return;\n    {setup}\n    {self.operation};\n}}\n")

    def __call__(self, *args, size=None, stream=None):
        if len(args) != len(self.args):
            raise ArgMismatch(9, f"{self.name} takes {len(self.args)} arguments, {len(args)} given")
        ctx = next(a.ctx for a in args if isinstance(a, Array)) if any(isinstance(a, Array) for a in args) else None
        if ctx is None:
            raise ArgMismatch(9, f"{self.name}: no Array among the arguments")
        n = _extent(self.name, self.args, args, size, ctx)
        c = self._compiled(ctx)
        with c.lock:
            kh = c.k[0]
            i, _, _ = self._bind(kh, self.args, args)
            _check(L.arg_setters["u64"][0](kh, i, n), ctx._h)
            if n:
                _launch(ctx, kh, n, stream)


def _extent(name, params, args, size, ctx):
    """The n a generated kernel runs over (i from 0 to n - 1): size= (a positive int below 2^63), else
    the first Array argument's size; every Array argument (views by their own extent) must hold at
    least n elements, since the statement reads and writes element i of each: a shorter one would
    be read or written past its end. All Arrays on ctx."""
    arrays = [a for a in args if isinstance(a, Array)]
    for a in arrays:
        if a.ctx is not ctx:
            raise InvalidArgument(1, f"{name}: Arrays of different contexts")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise InvalidArgument(1, f"{name}: size= is a positive integer, not {size!r}")
        n = int(size)
        if not 1 <= n < 1 << 63:
            raise InvalidArgument(1, f"{name}: size= is a positive integer below 2^63, not {n}")
    else:
        n = arrays[0].size if arrays else 0
    for (pname, _, ptr, _), a in zip(params, args):
        if ptr and isinstance(a, Array) and a.size < n:
            raise InvalidArgument(1, f"{name}: argument {pname} holds {a.size} elements; the kernel runs over {n} "
                                     f"({'size=' if size is not None else 'the first Array'}), and would go past its end")
    return n


def _launch(ctx, kh, n, stream, groups=None):
    wg = _wg(ctx)
    g = (c_size_t * 1)(groups * wg if groups else -(-n // wg) * wg)
    lo = (c_size_t * 1)(wg)
    if stream is None:
        _check(L.launch(kh, 1, g, lo), ctx._h)
    else:
        with stream:
            _check(L.launch(kh, 1, g, lo), ctx._h)


class ReductionKernel(_Generated):
    """A reduction generated as PyOpenCL's ReductionKernel: clrun.reduction(np.float32, "0", "a + b",
    "x[i] * y[i]", "const float *x, const float *y") gives the dot product. map_expr is evaluated for
    each i in 0 .. n - 1 (n: the first Array argument's size, or size=) and folded with reduce_expr
    (over a and b) from neutral, in a fixed order for a given device (deterministic). Returns a 0-d
    Array of dtype_out on the device (.get(), float(), or use it in later kernels)."""

    def __init__(self, dtype_out, neutral, reduce_expr, map_expr, arguments, name="reduce", preamble="", options=None):
        super().__init__(name, options)
        self.out = np.dtype(dtype_out)
        if self.out not in _CL or self.out in (np.dtype(np.float16), np.dtype(np.bool_)):
            raise Unsupported(11, f"reduction: dtype_out {self.out}: a type the device computes in (float32, float64, integers)")
        self.cl = _CL[self.out]
        self.args = _parse_arguments(arguments)
        self.neutral, self.reduce_expr, self.map_expr, self.preamble = str(neutral), str(reduce_expr), str(map_expr), str(preamble)

    def _kernel_names(self):
        return [self.name + "_part", self.name + "_final"]

    def _source(self, ctx):
        params, setup = _params(self.args)
        o, wg = self.cl, _wg(ctx)
        tree = (f"    __local {o} sh__[{wg}];\n    const uint lid__ = get_local_id(0);\n    sh__[lid__] = acc__;\n"
                f"    barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"    for (uint s__ = {wg // 2}; s__ > 0; s__ >>= 1) {{\n"
                f"        if (lid__ < s__) sh__[lid__] = REDUCE__(sh__[lid__], sh__[lid__ + s__]);\n"
                f"        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n")
        return (f"{_fp64_pragma(self.args, o + self.map_expr)}{self.preamble}\n"
                f"#define REDUCE__(a, b) (({o})({self.reduce_expr}))\n"
                f"__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\n"
                f"void {self.name}_part({params + ', ' if params else ''}ulong n__, __global {o} *part__)\n{{\n"
                f"    {setup}\n    {o} acc__ = ({o})({self.neutral});\n"
                f"    for (ulong i = get_global_id(0); i < n__; i += get_global_size(0)) {{\n"
                f"        const {o} b__ = ({o})({self.map_expr});\n        acc__ = REDUCE__(acc__, b__);\n    }}\n"
                f"{tree}    if (lid__ == 0) part__[get_group_id(0)] = sh__[0];\n}}\n"
                f"__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\n"
                f"void {self.name}_final(__global const {o} *part__, uint m__, __global {o} *out__, ulong off__)\n{{\n"
                f"    {o} acc__ = ({o})({self.neutral});\n"
                f"    for (uint j = get_local_id(0); j < m__; j += {wg}) acc__ = REDUCE__(acc__, part__[j]);\n"
                f"{tree}    if (lid__ == 0) out__[off__] = sh__[0];\n}}\n")

    def __call__(self, *args, size=None, stream=None, out=None):
        if len(args) != len(self.args):
            raise ArgMismatch(9, f"{self.name} takes {len(self.args)} arguments, {len(args)} given")
        arrays = [a for a in args if isinstance(a, Array)]
        ctx = arrays[0].ctx if arrays else (out.ctx if isinstance(out, Array) else None)
        if ctx is None:
            raise ArgMismatch(9, f"{self.name}: no Array among the arguments (give out= to name the context)")
        if any(a.ctx is not ctx for a in arrays):
            raise InvalidArgument(1, f"{self.name}: Arrays of different contexts")
        if out is None:
            out = Array(ctx, (), self.out)
        elif not isinstance(out, Array) or out.dtype != self.out or out.size != 1:
            raise InvalidArgument(1, f"{self.name}: out is a one-element {self.out} Array")
        if not arrays and size is None:
            raise ArgMismatch(9, f"{self.name}: no Array among the arguments: give size=")
        n = _extent(self.name, self.args, args, size, ctx)
        c = self._compiled(ctx)
        wg = _wg(ctx)
        with c.lock:
            kp, kf = c.k
            i, _, _ = self._bind(kp, self.args, args)
            groups = max(1, min(-(-n // wg), 256))
            part = Array(ctx, (groups,), self.out)
            ph, po = part._mem()
            oh, oo = out._mem()
            st = (L.arg_setters["u64"][0](kp, i, n) or L.arg_buf(kp, i + 1, ph) or L.arg_buf(kf, 0, ph)
                  or L.arg_setters["u32"][0](kf, 1, groups) or L.arg_buf(kf, 2, oh) or L.arg_setters["u64"][0](kf, 3, oo // out.itemsize))
            if st:
                _raise(st, ctx._h)
            _launch(ctx, kp, n, stream, groups=groups)
            _launch(ctx, kf, wg, stream, groups=1)
        return out


def elementwise(arguments, operation, name="elementwise", preamble="", options=None):
    """An element-wise kernel generator (see ElementwiseKernel)."""
    return ElementwiseKernel(arguments, operation, name=name, preamble=preamble, options=options)


def reduction(dtype_out, neutral, reduce_expr, map_expr, arguments, name="reduce", preamble="", options=None):
    """A reduction kernel generator (see ReductionKernel)."""
    return ReductionKernel(dtype_out, neutral, reduce_expr, map_expr, arguments, name=name, preamble=preamble, options=options)


# the kernels behind the operators, generated once per (op, dtype, form)
_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_BUILT = {}


def _load(cl, p):
    """Element i of pointer p (half through vload_half: no half arithmetic without cl_khr_fp16)."""
    return f"vload_half(i, {p})" if cl == "half" else f"{p}[i]"


def _store(cl, p, value):
    if cl == "half":
        return f"vstore_half_rte({value}, i, {p})"
    return f"{p}[i] = ({cl})({value})"


def _ew_kernel(op, dt, form):
    key = (op, dt, form)
    k = _BUILT.get(key)
    if k is None and dt == np.bool_:  # bool Arrays (stored as 0/1 bytes): + is or, * is and, as NumPy's
        if op not in ("add", "mul") + _CMP or form == "unary":
            raise Unsupported(11, f"{op} on bool Arrays: NumPy has no boolean {op} either (use ^ or astype)")
        a = "(x[i] != 0)"
        b = "(y[i] != 0)" if form == "array" else "(s != 0)"
        args = "bool *x, " + ("bool *y, " if form == "array" else "uchar s, ") + "bool *z"
        expr = {"add": f"{a} | {b}", "mul": f"{a} & {b}"}.get(op) or (f"{b} {_OPS[op]} {a}" if form == "rscalar" else f"{a} {_OPS[op]} {b}")
        k = _BUILT[key] = ElementwiseKernel(args, f"z[i] = ({expr}) ? 1 : 0", name=f"clrun_{op}_{form}_bool")
    if k is None:
        cl = _CL[dt]
        ct = "float" if cl == "half" else cl  # half computes in float
        x, y = _load(cl, "x"), _load(cl, "y")
        if form == "unary":
            args = f"{cl} *x, {cl} *z"
            body = _store(cl, "z", f"-({ct}){x}")
        else:
            sym = _OPS[op]
            if form == "array":
                args, a, b = f"{cl} *x, {cl} *y, ", f"({ct}){x}", f"({ct}){y}"
            else:
                args, a, b = f"{cl} *x, {cl} s, ", f"({ct}){x}", "s"
                if form == "rscalar":
                    a, b = b, a
            if op in _CMP:
                args += "bool *z"
                body = f"z[i] = ({a} {sym} {b}) ? 1 : 0"
            else:
                args += f"{cl} *z"
                body = _store(cl, "z", f"{a} {sym} {b}")
        # f32 division correctly rounded, as NumPy's (OpenCL allows 2.5 ulp without the option)
        opts = "-cl-fp32-correctly-rounded-divide-sqrt" if op == "div" else None
        k = _BUILT[key] = ElementwiseKernel(args, body, name=f"clrun_{op}_{form}_{cl}", options=opts)
    return k


def _convert_kernel(fr, to):
    key = ("convert", fr, to)
    k = _BUILT.get(key)
    if k is None:
        cf, ct = _CL[fr], _CL[to]
        x = _load(cf, "x")
        if to == np.bool_:
            body = f"z[i] = ({x} != 0) ? 1 : 0"
        elif ct == "half":
            body = f"vstore_half_rte(({'double' if cf == 'double' else 'float'})({x}), i, z)"
        elif to.kind in "iu" and fr.kind == "f":
            body = f"z[i] = convert_{ct}_sat_rtz({x})"
        else:
            body = f"z[i] = ({ct})({x})"
        src_ty = "bool" if fr == np.bool_ else cf
        dst_ty = "bool" if to == np.bool_ else ct
        inner = ElementwiseKernel(f"{src_ty} *x, {dst_ty} *z", body, name=f"clrun_convert_{cf}_{ct}{'_b' if to == np.bool_ else ''}")
        k = _BUILT[key] = inner
    return k


# ---- reductions on Arrays ---------------------------------------------------------------------------
#
# Every reduction of every dtype an Array holds gives NumPy's value and NumPy's type (NumPy 2 on
# Linux): sum and prod of integers and bools in 64 bits (int64, or uint64 for unsigned types),
# wrapping as NumPy's do; max/min/argmax/argmin propagate NaN (the first NaN's index); mean of
# integers in float64; any/all as truth values (NaN is true); dot of integers in their own type
# (wrapping, as NumPy's); norm of integers in float64. float32/float16 sum, max, min, argmax, dot
# and norm run the library's reductions (compensated: error about 5e-7 of the sum of magnitudes);
# the rest run kernels generated here: float sums and products accumulate in double where the
# device has fp64 (float where it has not), work-item partials then a tree. bfloat16 is refused.

_I64, _U64 = np.dtype(np.int64), np.dtype(np.uint64)
_F64 = np.dtype(np.float64)
_NAN_MAX = "(isnan(a) ? a : isnan(b) ? b : (a >= b ? a : b))"
_NAN_MIN = "(isnan(a) ? a : isnan(b) ? b : (a <= b ? a : b))"


def _fp64(ctx):
    return bool(ctx.device.fp64)


def _red_kernel(key, make):
    k = _BUILT.get(key)
    if k is None:
        k = _BUILT[key] = make()
    return k


def _src_ty(dt):
    """The declared element type of an Array argument of a generated kernel (bool Arrays are declared
    bool and read as uchar)."""
    return "bool" if dt == np.bool_ else _CL[dt]


def _acc_float(x):
    """The accumulator of a float reduction: double where the device has it, else float."""
    return "double" if _fp64(x.ctx) else "float"


def _run_red(x, key, out_dt, neutral, red, mp, extra_args="", extra=()):
    cl = _src_ty(x.dtype)
    args = f"const {cl} *x" + (", " + extra_args if extra_args else "")
    k = _red_kernel(key, lambda: ReductionKernel(out_dt, neutral, red, mp, args, name="clrun_" + "_".join(str(p) for p in key[1:])
                                                 .replace(" ", "_").replace("-", "m")))
    return k(x, *extra).get()[()]


def _load_x(dt):
    return "vload_half(i, x)" if dt == np.float16 else "x[i]"


def _int_sum(x, what):
    """sum or prod of an integer or bool Array in 64 bits, wrapping (NumPy's int64/uint64 result)."""
    signed = x.dtype.kind == "i" or x.dtype == np.bool_
    mp = "(ulong)(long)x[i]" if signed else "(ulong)x[i]"
    r = _run_red(x, ("int", what, _src_ty(x.dtype)), _U64, "0" if what == "sum" else "1", "a + b" if what == "sum" else "a * b", mp)
    return np.uint64(r).view(np.int64) if signed else np.uint64(r)


def _float_sum(x, what):
    acc = _acc_float(x)
    out = _F64 if acc == "double" else _F32
    v = _run_red(x, ("flt", what, _CL[x.dtype], acc), out, "0" if what in ("sum", "sumsq") else "1",
                 "a * b" if what == "prod" else "a + b",
                 f"(({acc}){_load_x(x.dtype)}) * (({acc}){_load_x(x.dtype)})" if what == "sumsq" else f"({acc}){_load_x(x.dtype)}")
    return float(v)


def _extreme(x, what):
    """max or min with NumPy's NaN rule, as the Array's dtype (the caller refuses empty Arrays)."""
    dt = x.dtype
    if dt in _FLOATS:
        from ._ops import _red
        return dt.type(_red(x.ctx, what, x))
    if dt == np.bool_:
        r = _run_red(x, ("bool", what), np.dtype(np.uint8), "0" if what == "max" else "1", "a | b" if what == "max" else "a & b",
                     "(uchar)(x[i] != 0)")
        return np.bool_(r)
    if dt == _F64:
        return np.float64(_run_red(x, ("f64", what), _F64, "-INFINITY" if what == "max" else "INFINITY",
                                   _NAN_MAX if what == "max" else _NAN_MIN, "x[i]"))
    info = np.iinfo(dt)
    cl = _CL[dt]
    lim = {("long", "max"): "LONG_MIN", ("long", "min"): "LONG_MAX", ("ulong", "max"): "0", ("ulong", "min"): "ULONG_MAX"}
    neutral = lim.get((cl, what), str(info.min if what == "max" else info.max))
    return dt.type(_run_red(x, ("ext", what, cl), dt, neutral, f"{what}(a, b)", "x[i]"))


def _arg(x, what):
    """argmax/argmin: the first index of the extreme (of the first NaN where there is one)."""
    dt = x.dtype
    if what == "argmax" and dt in _FLOATS:
        from ._ops import _red
        return np.int64(_red(x.ctx, "argmax", x))
    m = _extreme(x, "max" if what == "argmax" else "min")
    cl = _src_ty(dt)
    if dt == np.bool_:
        ty, val, match = "uchar", int(bool(m)), "((uchar)(x[i] != 0) == m)"
    elif dt.kind == "f":
        ty = "float" if dt == np.float16 else cl
        val = float(m)
        xi = _load_x(dt)
        match = f"(({ty}){xi} == m || (isnan(m) && isnan(({ty}){xi})))"
    else:
        ty, val, match = cl, int(m), "(x[i] == m)"
    r = _run_red(x, ("arg", cl), _U64, "ULONG_MAX", "min(a, b)", f"({match} ? (ulong)i : ULONG_MAX)", f"{ty} m", (val,))
    return np.int64(r)


def _truth(x, what):
    if x.size == 0:
        return np.bool_(what == "all")
    xi = f"({_load_x(x.dtype)} != 0)" if x.dtype == np.float16 else "(x[i] != 0)"
    r = _run_red(x, ("truth", what, _src_ty(x.dtype)), np.dtype(np.uint8), "0" if what == "any" else "1",
                 "a | b" if what == "any" else "a & b", f"(uchar){xi}")
    return np.bool_(r)


def _empty(x, what):
    raise InvalidArgument(1, f"{what} of an empty Array: the operation has no identity (NumPy raises ValueError too)")


def _reduce(x, what, y=None):
    if x.bf16:
        raise Unsupported(11, f"{what} of a bfloat16 Array: .astype(np.float32) first")
    dt, n = x.dtype, x.size
    if what in ("max", "min", "argmax", "argmin") and n == 0:
        _empty(x, what)
    if what in ("max", "min"):
        return _extreme(x, what)
    if what in ("argmax", "argmin"):
        return _arg(x, what)
    if what in ("any", "all"):
        return _truth(x, what)
    if what == "sum":
        if n == 0:
            return (_I64 if dt.kind in "ib" else _U64 if dt.kind == "u" else dt).type(0)
        if dt in _FLOATS:
            from ._ops import _red
            return dt.type(_red(x.ctx, "sum", x))
        return dt.type(_float_sum(x, "sum")) if dt == _F64 else _int_sum(x, "sum")
    if what == "prod":
        if n == 0:
            return (_I64 if dt.kind in "ib" else _U64 if dt.kind == "u" else dt).type(1)
        if dt.kind == "f":
            with np.errstate(over="ignore"):
                return dt.type(_float_sum(x, "prod"))
        return _int_sum(x, "prod")
    if what == "mean":
        out = dt if dt.kind == "f" else _F64
        if n == 0:
            import warnings
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
            return out.type(np.nan)
        if dt.kind == "f":
            if dt in _FLOATS:
                from ._ops import _red
                s = _red(x.ctx, "sum", x)  # in double: a float16 sum past 65504 still has its mean
            else:
                s = _float_sum(x, "sum")
        elif dt.itemsize <= 4 or not _fp64(x.ctx):
            s = float(int(_int_sum(x, "sum")))  # exact in 64 bits for 8- to 32-bit values
        else:
            s = float(_run_red(x, ("mean", _CL[dt]), _F64, "0", "a + b", "(double)x[i]"))
        with np.errstate(over="ignore", invalid="ignore"):
            return out.type(s / n)
    if what == "norm2":
        if dt in _FLOATS:
            from ._ops import _red
            return dt.type(_red(x.ctx, "norm2", x))
        if n == 0:
            return (dt if dt == _F64 else _F64).type(0.0)
        if dt.kind != "f":
            x = x.astype(np.float64) if _fp64(x.ctx) else x.astype(np.float32)
        return np.float64(math.sqrt(_float_sum(x, "sumsq")))
    raise InvalidArgument(1, f"no reduction {what!r}")


def dot(a, b):
    """NumPy's dot on Arrays: 1-D · 1-D the inner product (in the dtype, integers wrapping as
    NumPy's); 2-D · 2-D, 2-D · 1-D and 1-D · 2-D the matrix product (through @); a 0-d operand
    scales the other."""
    if not isinstance(a, Array) or not isinstance(b, Array):
        raise InvalidArgument(1, "dot: two clrun.Arrays")
    if a.ctx is not b.ctx:
        raise InvalidArgument(1, "dot: the Arrays are on different contexts")
    if a.dtype != b.dtype or a.bf16 != b.bf16:
        raise Unsupported(11, f"dot: {_dt_name(a.dtype, a.bf16)} with {_dt_name(b.dtype, b.bf16)}: one dtype (astype one of them)")
    if a.ndim == 0 or b.ndim == 0:
        return a * b.item() if b.ndim == 0 else b * a.item()
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise InvalidArgument(1, f"dot: shapes {a.shape} and {b.shape} are not aligned")
        return _dot1(a, b)
    if a.ndim > 2 or b.ndim > 2:
        raise Unsupported(11, f"dot of {a.ndim}-D and {b.ndim}-D Arrays: 1-D and 2-D operands only")
    if a.shape[-1] != b.shape[0]:
        raise InvalidArgument(1, f"dot: shapes {a.shape} and {b.shape} are not aligned")
    if a.ndim == 1:
        return matmul(a.reshape(1, a.shape[0]), b).reshape(b.shape[1])
    if b.ndim == 1:
        return matmul(a, b.reshape(b.shape[0], 1)).reshape(a.shape[0])
    return matmul(a, b)


def _dot1(x, y):
    dt = x.dtype
    if x.bf16:
        raise Unsupported(11, "dot of bfloat16 Arrays: .astype(np.float32) first")
    if x.size == 0:
        return np.bool_(False) if dt == np.bool_ else dt.type(0)
    if dt in _FLOATS:
        from ._ops import _red
        return dt.type(_red(x.ctx, "dot", x, y))
    cl = _src_ty(dt)
    key = ("dot", cl)
    if dt == _F64:
        k = _red_kernel(key, lambda: ReductionKernel(_F64, "0", "a + b", "x[i] * y[i]", "const double *x, const double *y",
                                                     name="clrun_dot_double"))
        return np.float64(k(x, y).get()[()])
    if dt == np.bool_:
        k = _red_kernel(key, lambda: ReductionKernel(np.uint8, "0", "a | b", "(uchar)(x[i] != 0 && y[i] != 0)",
                                                     "const bool *x, const bool *y", name="clrun_dot_bool"))
        return np.bool_(k(x, y).get()[()])
    k = _red_kernel(key, lambda: ReductionKernel(_U64, "0", "a + b", "(ulong)x[i] * (ulong)y[i]", f"const {cl} *x, const {cl} *y",
                                                 name=f"clrun_dot_{cl}"))
    return np.uint64(k(x, y).get()[()]).astype(dt)  # NumPy's integer dot wraps in the dtype; modular sums agree


# ---- matmul -----------------------------------------------------------------------------------------


def matmul(a, b):
    """a @ b on Arrays through the library's GEMM: float32 -> float32; float16 or bfloat16 ->
    float32 (exact products, f32 sums); int8 -> int32 (exact). 2-D @ 2-D, or 3-D @ 3-D batches of
    equal count."""
    if not isinstance(a, Array) or not isinstance(b, Array):
        raise InvalidArgument(1, "@: both operands are clrun.Arrays (move host arrays with ctx.asarray first)")
    if a.ctx is not b.ctx:
        raise InvalidArgument(1, "@: the Arrays are on different contexts")
    if a.dtype != b.dtype or a.bf16 != b.bf16:
        raise Unsupported(11, f"@: {_dt_name(a.dtype, a.bf16)} @ {_dt_name(b.dtype, b.bf16)}: one input dtype (astype one of them)")
    if a.ndim not in (2, 3) or b.ndim != a.ndim:
        raise Unsupported(11, f"@: shapes {a.shape} and {b.shape}: 2-D @ 2-D or 3-D @ 3-D (no broadcasting or vectors)")
    if a.ndim == 3 and a.shape[0] != b.shape[0]:
        raise Unsupported(11, f"@: batches of {a.shape[0]} and {b.shape[0]}: equal counts (no broadcasting)")
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgument(1, f"@: {a.shape} @ {b.shape}: the inner dimensions differ")
    from ._ops import _gemm_arrays
    return _gemm_arrays(a, b)


# ---- streams ----------------------------------------------------------------------------------------


class Stream:
    """A queue of the context (clrun_queue_new): with stream: makes it the queue the context's calls
    enqueue to (the ops, transfers, generated kernels), and restores the previous one after. Work
    on different streams may overlap; order between them comes from events (record, wait_event).
    get(stream=s) and set(..., stream=s) return at once; the host arrays they use are kept until
    synchronize()."""

    _rank = 1.5  # freed after the kernels and before the buffers, when the context closes

    def __init__(self, ctx):
        self.ctx = ctx
        h = c_void_p()
        _check(L.queue_new(ctx.handle, byref(h)), ctx._h)
        self._h = h.value
        self._tls = threading.local()  # per thread: the queues to go back to (the current queue is per thread)
        self._keep = []
        self._lock = threading.Lock()
        ctx._adopt(self)
        ctx._streams = ctx.__dict__.get("_streams", 0) + 1  # no pooled memory while streams live (see _Pool)
        _pool(ctx).release_all()

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the stream is closed")
        return self._h

    @property
    def int_ptr(self):
        """The cl_command_queue as an int (pyopencl.CommandQueue.from_int_ptr)."""
        return L.queue_cl(self.handle)

    def __enter__(self):
        """Make the stream this thread's current queue on the context (other threads keep theirs)."""
        ch = self.ctx.handle
        prev = L.queue_current(ch)
        _check(L.queue_use(ch, self.handle), self.ctx._h)
        stack = self._tls.__dict__.setdefault("prev", [])
        stack.append(prev)
        return self

    def __exit__(self, *exc):
        stack = self._tls.__dict__.get("prev")
        prev = stack.pop() if stack else None
        if self.__dict__.get("_h") and self.ctx._h:
            L.queue_use(self.ctx._h, prev)

    def _async(self, enqueue, keep):
        e = c_void_p()
        with self:
            _check(enqueue(byref(e)), self.ctx._h)
        with self._lock:
            self._keep.append(keep)
        return Event(e.value)

    def record(self):
        """An Event that completes when everything queued on the stream so far has."""
        e = c_void_p()
        _check(L.queue_marker(self.handle, byref(e)), self.ctx._h)
        return Event(e.value)

    def wait_event(self, event):
        """Commands queued on the stream from now on start after event completes."""
        arr = (c_void_p * 1)(event._h)
        _check(L.queue_wait(self.handle, arr, 1), self.ctx._h)

    def synchronize(self):
        """Wait for everything queued on the stream; the host arrays of its transfers are released."""
        _check(L.queue_finish(self.handle), self.ctx._h)
        with self._lock:
            self._keep.clear()

    def close(self):
        self._release()

    def _release(self):
        if _is_dead(self):
            return
        if self._h:
            # clrun_close frees its streams: after it (a context collected with its stream in one
            # cycle, whose weak child list the collector cleared first) the handle is gone already
            if self.ctx.__dict__.get("_h"):
                L.queue_free(self._h)  # waits for the stream's commands; threads that had it current go back to the context's own
            self._h = None
            self._keep.clear()
            self.ctx._streams -= 1
        _kill(self, "the stream is closed")

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass
