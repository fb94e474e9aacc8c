"""Programs, kernels typed from their signatures, and events."""
import math
import os
import threading
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import _lib as L
from ._errors import InvalidArgument, ArgMismatch, _raise, _check
from ._dead import _kill, _is_dead
from ._buffer import Buffer


# ---- programs and kernels -----------------------------------------------------------------------------


class In:
    """A NumPy array a kernel reads: uploaded before the launch, not read back."""

    def __init__(self, arr):
        self.arr = np.ascontiguousarray(arr)


class Out:
    """A NumPy array a kernel writes: a buffer of its size, read back into it after the launch."""

    def __init__(self, arr):
        if not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
            raise InvalidArgument(1, "Out wants a C-contiguous NumPy array to write into")
        self.arr = arr


class InOut(Out):
    """A NumPy array a kernel reads and writes (what a bare array argument means)."""


class Local:
    """bytes of __local memory for a __local pointer argument."""

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)


_SCALAR = {"char": "i8", "uchar": "u8", "short": "i16", "ushort": "u16", "int": "i32", "uint": "u32", "long": "i64", "ulong": "u64",
           "float": "f32", "double": "f64", "half": "f16", "size_t": "u64", "bool": "i32"}
_INT_RANGE = {"i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1), "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1), "i32": (-2**31, 2**31 - 1),
              "u32": (0, 2**32 - 1), "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}
# the OpenCL C element type a NumPy dtype's data is, for pointer arguments
_CL_OF = {np.dtype(np.float32): "float", np.dtype(np.float16): "half", np.dtype(np.float64): "double", np.dtype(np.int8): "char",
          np.dtype(np.uint8): "uchar", np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort", np.dtype(np.int32): "int",
          np.dtype(np.uint32): "uint", np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong", np.dtype(np.bool_): "uchar"}
_CL_SIZE = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8, "float": 4, "double": 8, "half": 2}


def _pointee(ty):
    """(base type, bytes per element) of a pointer argument's type ("float4*" -> ("float", 16)); the
    size is None for structs and other types clrun cannot size on the host."""
    t = ty.replace("const", "").replace("volatile", "").replace("restrict", "").replace("*", "").strip()
    if t.startswith("unsigned "):
        t = "u" + t[9:].strip()
    t = {"unsigned": "uint", "signed char": "char"}.get(t, t)
    base, width = t.rstrip("0123456789"), t[len(t.rstrip("0123456789")):]
    if base not in _CL_SIZE:
        return t, None
    w = int(width) if width else 1
    if w not in (1, 2, 3, 4, 8, 16):
        return t, None
    return base, _CL_SIZE[base] * (4 if w == 3 else w)


def _ints(v, what):
    """A launch size (int or sequence of 1-3 ints) as a tuple of positive ints below 2^64."""
    seq = (v,) if isinstance(v, (int, np.integer)) else v
    try:
        t = tuple(seq)
    except TypeError:
        raise InvalidArgument(1, f"{what}: an int or a tuple of 1 to 3 ints, not {v!r}") from None
    if not 1 <= len(t) <= 3 or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in t):
        raise InvalidArgument(1, f"{what}: an int or a tuple of 1 to 3 ints, not {v!r}")
    if not all(1 <= int(x) < 2**64 for x in t):
        raise InvalidArgument(1, f"{what}: each size is at least 1 and below 2^64, not {tuple(int(x) for x in t)}")
    return tuple(int(x) for x in t)


class Event:
    """A launch's event: wait(), ms (device time, start to end)."""

    def __init__(self, h):
        self._h = h

    def wait(self):
        _check(L.event_wait(self._h))

    @property
    def ms(self):
        return L.event_ms(self._h)

    def __del__(self):
        if self._h:
            L.event_free(self._h)
            self._h = None


class Kernel:
    """One kernel of a program. Call it with one argument per kernel parameter: Buffers, NumPy arrays
    (bare: in and out; or In/Out/InOut), Local(bytes), scalars (typed from the signature), and
    global_size= (int or tuple: exact, no work-item past it runs), local_size= (default: a size that
    divides the global one), wait= (default True: finish and read arrays back), event= (True: return
    an Event with the launch's device time), check_size= (default True, below).

    Checked before anything runs, like the CLI (where the driver reports argument types): an array
    or Buffer's dtype must be the pointer's element type (float32 for float*, int32 for int*, ...;
    clrun.ArgMismatch otherwise); it must hold at least one element per work-item of the launch, or
    the kernel would read past its end (clrun.ArgMismatch; check_size=False for a kernel that reads
    fewer elements than it has work-items, e.g. filter taps); an integer scalar must fit its type
    (clrun.InvalidArgument, never wrapped) and be an integer; a float must not overflow its type.
    Sizes are ints from 1 to 2^64 - 1; the library checks them against the device (clrun_launch).
    Calls of one Kernel from several threads run one at a time (its arguments are its state)."""

    def __init__(self, prog, name):
        self.prog, self.name = prog, name
        h = c_void_p()
        _check(L.kernel_new(prog.handle, name.encode(), byref(h)), prog.ctx._h)
        self._h = h.value
        prog.ctx._adopt(self)
        self.nargs = L.kernel_nargs(self._h)
        self._geo = {}
        self._lock = threading.Lock()  # a kernel's arguments are its state: one call at a time
        self.args = []
        for i in range(self.nargs):
            info = L.ArgInfoC()
            if L.kernel_arg_info(self._h, i, byref(info)):
                self.args.append((None, "", ""))
            else:
                self.args.append((info.kind, info.type.decode(), info.name.decode()))
        # pointer arguments' element type and size, for the per-call checks (None: nothing to check)
        self._ptr = [_pointee(ty) if kind in (0, 1) and ty else None for kind, ty, _ in self.args]

    _rank = 0

    def _release(self):
        if _is_dead(self):
            return
        if getattr(self, "_h", None):
            L.kernel_free(self._h)
            self._h = None
        _kill(self, "the kernel's program or context is closed")

    def __del__(self):
        self._release()

    def free(self):
        """Free the kernel now (else with its program or context); any use after raises clrun.InvalidArgument."""
        self._release()

    close = free

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the kernel's context is closed")
        return self._h

    def _geometry(self, global_size, local_size):
        """ctypes arrays of the launch's global and local sizes (cached per shape) and its work-items."""
        try:
            key = (global_size, local_size)
            geo = self._geo.get(key)
        except TypeError:  # unhashable (a list): checked below, not cached
            key, geo = None, None
        if geo is None:
            gs = _ints(global_size, f"{self.name}: global_size")
            dims = len(gs)
            if local_size is None:  # the global size is exact (as PyCUDA's grid × block): a work-group size that divides it
                ls = [1] * dims
                cap = min(256, self.prog.ctx.device.max_work_group)
                ls[0] = next(d for d in range(min(cap, gs[0]), 0, -1) if gs[0] % d == 0)
            else:
                ls = _ints(local_size, f"{self.name}: local_size")
            if len(ls) != dims:
                raise InvalidArgument(1, f"{self.name}: global_size has {dims} dimensions, local_size {len(ls)}")
            geo = (dims, (c_size_t * dims)(*gs), (c_size_t * dims)(*ls), math.prod(gs))
            if key is not None:
                self._geo[key] = geo
        return geo

    def _check_array(self, i, dtype, nbytes, items, check_size):
        """An array or Buffer for pointer argument i: its dtype is the pointee's type, and it holds at
        least one element per work-item (unless check_size is False)."""
        ptr = self._ptr[i]
        if ptr is None:  # not a pointer, or no argument info: nothing to check against
            return
        base, psize = ptr
        _, ty, pname = self.args[i]
        want = _CL_OF.get(dtype)
        if psize is not None and want != base and not (np.dtype(dtype) == np.bool_ and base == "char"):
            raise ArgMismatch(9, f"{self.name}: argument {i} ({ty} {pname}) gets {np.dtype(dtype)} data; the kernel reads {base} "
                                 f"(give an array of that type, e.g. .astype)")
        if check_size and psize is not None and nbytes // psize < items:
            raise ArgMismatch(9, f"{self.name}: argument {i} ({ty} {pname}) holds {nbytes // psize} elements of {ty.rstrip('*').strip()}; "
                                 f"the launch has {items} work-items, which would read past its end (check_size=False for a kernel "
                                 f"that reads fewer elements than it has work-items)")

    def __call__(self, *args, global_size, local_size=None, wait=True, event=False, check_size=True):
        with self._lock:
            return self._call(args, global_size, local_size, wait, event, check_size)

    def _call(self, args, global_size, local_size, wait, event, check_size):
        ctx = self.prog.ctx
        kh = self.handle  # raises once the context is closed
        if len(args) != self.nargs:
            raise ArgMismatch(9, f"{self.name} takes {self.nargs} arguments, {len(args)} given")
        dims, g, loc, items = self._geometry(global_size, local_size)
        temps, backs = [], []  # device memory for the call's arrays (raw handles, freed at the end)
        try:
            cls_in, cls_out, ndarray = In, Out, np.ndarray
            for i, a in enumerate(args):
                kind = self.args[i][0]
                tp = type(a)
                if tp is cls_in or tp is cls_out:  # the seed's path first: In/Out wrappers
                    arr, h = a.arr, c_void_p()
                    self._check_array(i, arr.dtype, arr.nbytes, items, check_size)
                    if tp is cls_in and arr.nbytes:
                        st = L.buf_new_from(ctx._h, arr.ctypes.data, arr.nbytes, 0, byref(h))
                    else:
                        st = L.buf_new(ctx._h, max(arr.nbytes, 1), 0, byref(h))
                    if st:
                        _raise(st, ctx._h)
                    temps.append(h.value)
                    if tp is cls_out:
                        backs.append((h.value, arr))
                    st = L.arg_buf(kh, i, h.value)
                elif isinstance(a, Buffer):
                    self._check_array(i, a.dtype, a.nbytes, items, check_size)
                    st = L.arg_buf(kh, i, a.handle)
                elif a is None:
                    st = L.arg_buf(kh, i, None)
                elif isinstance(a, Local):
                    st = L.arg_local(kh, i, a.nbytes)
                elif kind == 3 and isinstance(a, np.ndarray):  # a by-value vector or struct from an array's bytes
                    st = self._scalar(i, self.args[i][1], self.args[i][2], a)
                elif isinstance(a, (In, Out, np.ndarray)):
                    arr = a.arr if isinstance(a, (In, Out)) else a
                    if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
                        raise InvalidArgument(1, f"argument {i} ({self.args[i][2]}): a bare array is read back into; give a C-contiguous "
                                                 "one, or In(...)")
                    self._check_array(i, arr.dtype, arr.nbytes, items, check_size)
                    h = c_void_p()
                    if (not isinstance(a, Out) or isinstance(a, InOut)) and arr.nbytes:  # made holding the array's bytes
                        st = L.buf_new_from(ctx._h, arr.ctypes.data, arr.nbytes, 0, byref(h))
                    else:
                        st = L.buf_new(ctx._h, max(arr.nbytes, 1), 0, byref(h))
                    _check(st, ctx._h)
                    temps.append(h.value)
                    if not isinstance(a, In):
                        backs.append((h.value, arr))
                    st = L.arg_buf(kh, i, h.value)
                else:
                    st = self._scalar(i, self.args[i][1], self.args[i][2], a)
                if st:
                    _raise(st, ctx._h)
            ev = None
            if event:
                e = c_void_p()
                _check(L.launch_ev(kh, dims, g, loc, byref(e)), ctx._h)
                ev = Event(e.value)
            else:
                _check(L.launch(kh, dims, g, loc), ctx._h)
            for h, arr in backs:  # blocking: the queue is in order, so the launch is done after
                if arr.nbytes:
                    _check(L.download(h, 0, arr.ctypes.data, arr.nbytes), ctx._h)
            if wait and not backs:
                ctx.finish()
            return ev
        finally:
            for h in temps:
                L.buf_free(h)

    def _scalar(self, i, ty, pname, v):
        base = ty.rstrip("*").strip()
        if base.startswith("const "):
            base = base[6:].strip()
        code = _SCALAR.get(base)
        if code is None:  # a vector or struct: its bytes, checked by the library against the device's size
            raw = np.ascontiguousarray(v)
            return L.arg_bytes(self._h, i, raw.ctypes.data, raw.nbytes)
        setter, conv = L.arg_setters[code]
        where = f"{self.name}: argument {i} ({ty} {pname})"
        if isinstance(v, (np.ndarray, list, tuple)) or v is None or isinstance(v, (str, bytes)):
            raise ArgMismatch(9, f"{where} is a {base}; {type(v).__name__} given")
        if code in _INT_RANGE:  # an integer of the parameter's range, never wrapped or truncated
            if isinstance(v, (float, np.floating)) and not float(v).is_integer():
                raise ArgMismatch(9, f"{where} is an integer; {v!r} is not")
            try:
                iv = int(v)
            except (TypeError, ValueError, OverflowError):
                raise ArgMismatch(9, f"{where} is an integer; {v!r} is not") from None
            lo, hi = _INT_RANGE[code]
            if not lo <= iv <= hi:
                raise InvalidArgument(1, f"{where}: {iv} is out of the range of {base} ({lo} to {hi})")
            return setter(self._h, i, iv)
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise ArgMismatch(9, f"{where} is a {base}; {v!r} is not a number") from None
        with np.errstate(over="ignore"):
            cast = np.float16(fv) if code == "f16" else np.float32(fv) if code == "f32" else fv
        if math.isfinite(fv) and not np.isfinite(cast):
            raise InvalidArgument(1, f"{where}: {fv!r} overflows {base}")
        if code == "f16":
            return setter(self._h, i, int(cast.view(np.uint16)))
        return setter(self._h, i, conv(fv))


class Program:
    """A built program; its kernels are attributes (prog.multiply_them) or prog.kernel(name)."""

    def __init__(self, ctx, source=None, path=None, options=None, name=None):
        if (source is None) == (path is None):
            raise InvalidArgument(1, "program: give source= or path=, one of them")
        self.ctx = ctx
        h = c_void_p()
        opts = options.encode() if options else None
        if path is not None:
            _check(L.prog_file(ctx.handle, os.fsencode(path), opts, byref(h)), ctx._h)
        else:
            _check(L.prog_source(ctx.handle, source.encode(), (name or "source").encode(), opts, byref(h)), ctx._h)
        self._h = h.value
        self._kernels = {}
        ctx._adopt(self)

    _rank = 1

    def _release(self):
        if _is_dead(self):
            return
        if getattr(self, "_h", None):
            for k in self._kernels.values():
                k._release()
            self._kernels.clear()
            L.prog_free(self._h)
            self._h = None
        _kill(self, "the program's context is closed")

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the program's context is closed")
        return self._h

    @property
    def from_cache(self):
        """Whether the binary came from the on-disk cache."""
        return bool(L.prog_from_cache(self.handle))

    def kernel(self, name):
        k = self._kernels.get(name)
        if k is None or _is_dead(k):
            k = self._kernels[name] = Kernel(self, name)
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.kernel(name)

    def free(self):
        """Free the program and its kernels now (else when collected or the context closes)."""
        self._release()

    close = free

    def __del__(self):
        self._release()
