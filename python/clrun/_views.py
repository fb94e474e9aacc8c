"""clrun.Array's shapes and indexing: views at any strides (transpose, slices with steps, newaxis),
and NumPy's advanced indexing (integer arrays, boolean masks) as gathers and scatters on the device.

Basic indexing (ints, slices with any step, Ellipsis, None) and transpose, swapaxes, squeeze,
expand_dims give views of the same memory; reshape gives a view of a contiguous Array and a copy of a
strided one (as NumPy's). Advanced indices give a new Array (get) or write through (set); their
positions are checked against the shape on the host (index Arrays and boolean masks are read back
for that), and where one position is written twice which value wins is unspecified (NumPy: the last).
"""
import math
import operator

import numpy as np

from ._core import InvalidArgument, Unsupported
from . import _array as A
from . import _nd as N


def _is_int(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _advanced(k):
    return isinstance(k, (list, np.ndarray, A.Array)) or isinstance(k, (bool, np.bool_))


def _expand(key, ndim):
    """key as a tuple with Ellipsis replaced by full slices."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, (np.ndarray, A.Array)) and k.dtype == np.bool_:
            used += max(k.ndim, 1) if k.ndim else 0
        elif isinstance(k, list) and k and all(isinstance(x, (bool, np.bool_)) for x in np.ravel(np.array(k, dtype=object))):
            used += np.ndim(k)
        else:
            used += 1
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    out = []
    for k in key:
        if k is Ellipsis:
            out += [slice(None)] * (ndim - used)
        else:
            out.append(k)
    if not any(k is Ellipsis for k in key):
        out += [slice(None)] * (ndim - used)
    return out


def _host_index(k):
    """An advanced index as a host ndarray of integers or bools."""
    if isinstance(k, A.Array):
        return k.get()
    if isinstance(k, (bool, np.bool_)):
        return np.array(k)
    arr = np.asarray(k)
    if arr.dtype == object or arr.dtype.kind not in "biu":
        if arr.size == 0:
            return arr.astype(np.intp)
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return arr


class _Views:
    """Shapes and indexing (mixed into clrun.Array)."""

    @property
    def strides(self):
        """Bytes between neighbours along each dimension, as ndarray.strides."""
        return tuple(s * self.itemsize for s in N.strides(self))

    @property
    def is_contiguous(self):
        """Whether the elements lie in C order without gaps (the library's ops take such Arrays)."""
        return self.__dict__.get("_st") is None

    @property
    def T(self):
        return self.transpose()

    def transpose(self, *axes):
        """A view with the dimensions permuted (reversed when no axes are given)."""
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        axes = tuple(N.normalize_axis_index(operator.index(a), self.ndim) for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        st = N.strides(self)
        return self._strided(tuple(self.shape[a] for a in axes), tuple(st[a] for a in axes), 0)

    def swapaxes(self, a1, a2):
        p = list(range(self.ndim))
        a1, a2 = (N.normalize_axis_index(operator.index(a), self.ndim) for a in (a1, a2))
        p[a1], p[a2] = p[a2], p[a1]
        return self.transpose(p)

    def squeeze(self, axis=None):
        if axis is None:
            keep = [d for d in range(self.ndim) if self.shape[d] != 1]
        else:
            ax = N.norm_axes(axis, self.ndim)
            if any(self.shape[d] != 1 for d in ax):
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
            keep = [d for d in range(self.ndim) if d not in ax]
        st = N.strides(self)
        return self._strided(tuple(self.shape[d] for d in keep), tuple(st[d] for d in keep), 0)

    def expand_dims(self, axis):
        ax = axis if isinstance(axis, (tuple, list)) else (axis,)
        nd = self.ndim + len(ax)
        ax = N.norm_axes(tuple(ax), nd)
        shape, st, src = [], [], iter(zip(self.shape, N.strides(self)))
        for d in range(nd):
            s, t = (1, 0) if d in ax else next(src)
            shape.append(s)
            st.append(t)
        return self._strided(tuple(shape), tuple(st), 0)

    def reshape(self, *shape, order="C"):
        """The same elements under another shape (one dimension may be -1): a view of a contiguous
        Array, a contiguous copy of a strided one (as NumPy's reshape when no view can be made)."""
        if order != "C":
            raise Unsupported(11, "reshape: order='C' only")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = [operator.index(s) for s in shape]
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if any(s < -1 for s in shape):
            raise ValueError(f"negative dimensions not allowed in {tuple(shape)}")
        if -1 in shape:
            rest = math.prod(s for s in shape if s != -1)
            if rest == 0 or self.size % rest:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
            shape[shape.index(-1)] = self.size // rest
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
        src = N.contiguous(self)
        return src._view(tuple(shape), 0)

    def ravel(self):
        return self.reshape(-1)

    def flatten(self):
        return N.contiguous(self, copy=True).reshape(-1)

    # indexing -----------------------------------------------------------------------------------------

    def _basic(self, key):
        """(view, advanced entries [(result dim, host index)]) for an expanded key: the view applies every
        basic entry; each advanced entry keeps its dimension in the view, to be gathered."""
        shape, st, off = [], [], 0
        src_st = N.strides(self)
        adv = []
        d = 0
        for k in key:
            if k is None:
                shape.append(1)
                st.append(0)
            elif _is_int(k):
                n = self.shape[d]
                i = int(k)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                off += (i + n if i < 0 else i) * src_st[d]
                d += 1
            elif isinstance(k, slice):
                start, stop, step = k.indices(self.shape[d])
                n = len(range(start, stop, step))
                off += start * src_st[d] if n else 0
                shape.append(n)
                st.append(src_st[d] * step)
                d += 1
            elif _advanced(k):
                h = _host_index(k)
                if h.dtype == np.bool_:
                    if h.ndim == 0:
                        raise Unsupported(11, "a scalar boolean index (a[True]) is not supported")
                    if h.shape != self.shape[d:d + h.ndim]:
                        raise IndexError(f"boolean index did not match indexed array along dimension {d}; dimension is "
                                         f"{self.shape[d]} but corresponding boolean dimension is {h.shape[0]}")
                    idx = np.nonzero(h)
                    for j, ix in enumerate(idx):
                        adv.append((len(shape), ix, d + j))
                        shape.append(self.shape[d + j])
                        st.append(src_st[d + j])
                    d += h.ndim
                else:
                    n = self.shape[d]
                    if h.size and (h.min() < -n or h.max() >= n):
                        bad = int(h[(h < -n) | (h >= n)].flat[0])
                        raise IndexError(f"index {bad} is out of bounds for axis {d} with size {n}")
                    adv.append((len(shape), np.where(h < 0, h + n, h).astype(np.int64), d))
                    shape.append(n)
                    st.append(src_st[d])
                    d += 1
            else:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean "
                                 f"arrays are valid indices, not {type(k).__name__}")
        return self._strided(tuple(shape), tuple(st), off), adv

    def __getitem__(self, key):
        if _device_mask(self, key):
            return _mask_select(self, key)
        view, adv = self._basic(_expand(key, self.ndim))
        if not adv:
            return view
        return _gather(view, adv)

    def __setitem__(self, key, value):
        if _device_mask(self, key):
            _mask_assign(self, key, value)
            return
        view, adv = self._basic(_expand(key, self.ndim))
        if not adv:
            N.assign(view, value, "assignment")
            return
        _scatter(view, adv, value)


def _device_mask(a, key):
    """Whether key is a bool Array of a's shape on a's context: selected on the device (a scan of the
    mask gives each selected element its place), nothing read back but the count."""
    return isinstance(key, A.Array) and key.dtype == np.bool_ and key.shape == a.shape and key.ctx is a.ctx and a.ndim > 0


def _mask_places(mask):
    """(the exclusive running count of the mask as int64, the number of True)."""
    from ._axes import scan
    flags = mask.reshape(-1).astype(np.int64)
    places = scan(flags, "sum", 0, None, exclusive=True)
    n = mask.size
    count = int(places[n - 1].item()) + int(flags[n - 1].item()) if n else 0
    return flags, places, count


_SELECT = """__kernel void __NAME__(ulong n, __global const uchar *m, __global const long *pos, __global const T *x, __global T *out,
                               uint gather)
{
    const ulong i = get_global_id(0);
    if (i >= n || !m[i]) return;
    if (gather) out[pos[i]] = x[i];
    else ((__global T *)x)[i] = out[pos[i]];
}
"""


def _mask_run(a, mask, places, other, gather):
    ctx = a.ctx
    t = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}[a.itemsize]  # elements moved as bits
    src = f"#define T {t}\n" + _SELECT
    c = N.program(ctx, src, "clrun_mask")
    mh, mo = mask._mem()
    ph, _ = places._mem()
    xh, _ = a._mem()
    oh, _ = other._mem()
    if mo:
        mask = mask.copy()
        mh, _ = mask._mem()
    N.run(ctx, c, a.size, [("u64", a.size), ("buf", mh), ("buf", ph), ("buf", xh), ("buf", oh), ("u32", 1 if gather else 0)])


def _mask_select(a, mask):
    """a[mask] for a bool Array mask of a's shape: the selected elements in C order, on the device."""
    src = N.contiguous(a)
    if src._off or src._base is not None:
        src = src.copy()
    _, places, count = _mask_places(mask)
    out = A.Array(a.ctx, (count,), a.dtype, bf16=a.bf16)
    if count:
        _mask_run(src, N.contiguous(mask), places, out, gather=True)
    return out


def _mask_assign(a, mask, value):
    """a[mask] = value with NumPy's rule: value broadcasts to the (count,) selected elements, so it is a
    scalar, one value, or a 1-D run of one value per True element in C order."""
    if isinstance(value, (int, float, complex, bool, np.generic)):
        from ._ufuncs import where
        N.assign(a, where(mask, value, a))
        return
    if not isinstance(value, A.Array):
        value = np.asarray(value)
    if value.ndim > 1:
        raise ValueError("NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, input has "
                         f"{value.ndim} dimensions")
    if value.ndim == 0 or value.size == 1:
        from ._ufuncs import where
        one = value.reshape(()) if isinstance(value, A.Array) else value.reshape(())[()]
        N.assign(a, where(mask, one, a))
        return
    _, places, count = _mask_places(mask)
    if value.size != count:
        raise ValueError(f"NumPy boolean array indexing assignment cannot assign {value.size} input values to the {count} output "
                         "values where the mask is true")
    if not isinstance(value, A.Array):
        value = a.ctx.asarray(value)
    target = a if a.is_contiguous and not a._off and a._base is None else a.copy()
    vals = value.astype(a.dtype) if value.dtype != a.dtype else N.contiguous(value)
    if vals._off or vals._base is not None:
        vals = vals.copy()
    if count:
        _mask_run(target, N.contiguous(mask), places, vals, gather=False)
    if target is not a:
        N.assign(a, target)


def _plan(view, adv):
    """The element offsets the advanced entries pick (an int64 array of the broadcast index shape)
    and the result's shape: advanced dimensions in place when they are adjacent, first otherwise
    (NumPy's rule)."""
    try:
        idx = np.broadcast_arrays(*[ix for _, ix, _ in adv])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(ix.shape) for _, ix, _ in adv)) from None
    st = N.strides(view)
    offs = sum(ix.astype(np.int64) * st[pos] for (pos, _, _), ix in zip(adv, idx))
    offs = np.ascontiguousarray(np.asarray(offs, np.int64).reshape(-1))
    dims = [pos for pos, _, _ in adv]
    rest = [d for d in range(view.ndim) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    at = dims[0] if adjacent else 0
    bshape = idx[0].shape
    before = [d for d in rest if d < at] if adjacent else []
    after = [d for d in rest if d not in before]
    shape = tuple(view.shape[d] for d in before) + bshape + tuple(view.shape[d] for d in after)
    walk = ([(view.shape[d], st[d], False) for d in before] + [(len(offs), 0, True)]
            + [(view.shape[d], st[d], False) for d in after])
    return offs, shape, walk


def _indirect_source(dt, from_dt, walk, scatter):
    """out[i] (contiguous over the walk's dimensions) = src at strided positions, one dimension by an
    offset table (gather); or the reverse (scatter, the value broadcast)."""
    nd = len(walk)
    ps = ["ulong n", f"__global {N._storage(dt)} *z", "long zo", f"__global const {N._storage(from_dt)} *a", "long ao",
          "__global const long *offs"]
    ps += [f"long n{d}, long zs{d}, long as{d}" for d in range(nd)]
    body = ["ulong r = get_global_id(0);", "if (r >= n) return;", "long pz = zo, pa = ao;"]
    for d in reversed(range(nd)):
        c = f"(long)(r % (ulong)n{d})" if d else "(long)r"
        ind = walk[d][2]
        body.append(f"{{ const long c = {c};" + (f" r /= (ulong)n{d};" if d else "")
                    + (f" pz += offs[c]; pa += c * as{d};" if ind and scatter else f" pa += offs[c]; pz += c * zs{d};" if ind
                       else f" pz += c * zs{d}; pa += c * as{d};") + " }")
    ct = N.ctype(from_dt)
    body.append(f"const {ct} x = ({ct}){N.load(from_dt, 'a', 'pa')};")
    body.append(N.store(dt, "z", "pz", "x", from_dt) + ";")
    fp64 = "double" in (N.cl(dt), N.cl(from_dt))
    return (("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if fp64 else "")
            + f"__kernel void __NAME__({', '.join(ps)})\n{{\n    " + "\n    ".join(body) + "\n}\n")


def _launch_indirect(ctx, z, a, offs, walk, zst, ast, scatter):
    n = math.prod(s for s, _, _ in walk)
    if not n:
        return
    N.need_fp64(ctx, [z.dtype, a.dtype], "indexing")
    c = N.program(ctx, _indirect_source(z.dtype, a.dtype, walk, scatter), "clrun_gather" if not scatter else "clrun_scatter")
    table = ctx.asarray(offs)
    zh, zo = z._raw()
    ah, ao = a._raw()
    th, _ = table._raw()
    args = [("u64", n), ("buf", zh), ("i64", zo // z.itemsize), ("buf", ah), ("i64", ao // a.itemsize), ("buf", th)]
    for d, (s, _, _) in enumerate(walk):
        args += [("i64", s), ("i64", zst[d]), ("i64", ast[d])]
    N.run(ctx, c, n, args)


def _gather(view, adv):
    offs, shape, walk = _plan(view, adv)
    out = A.Array(view.ctx, shape, view.dtype, bf16=view.bf16)
    zst = N.cstrides([s for s, _, _ in walk])
    ast = [t for _, t, _ in walk]
    _launch_indirect(view.ctx, out, view, offs, walk, zst, ast, scatter=False)
    return out


def _scatter(view, adv, value):
    offs, shape, walk = _plan(view, adv)
    ctx = view.ctx
    if not isinstance(value, A.Array):
        if isinstance(value, np.ndarray) and value.ndim:
            value = ctx.asarray(np.asarray(value, order="C"))
        else:
            v = value.item() if isinstance(value, (np.ndarray, np.generic)) else value
            tmp = A.Array(ctx, (), view.dtype, bf16=view.bf16)
            N.assign(tmp, v)
            value = tmp
    if value.ctx is not ctx:
        raise InvalidArgument(1, "assignment: the Arrays are on different contexts")
    if N.broadcast_shapes(value.shape, shape) != shape:
        raise ValueError(f"shape mismatch: value array of shape {value.shape} could not be broadcast to indexing result of shape {shape}")
    if view._root() is value._root():
        value = N.contiguous(value, copy=True)
    wshape = [s for s, _, _ in walk]
    if value.size == 1:
        ast = [0] * len(walk)
    else:
        if value.shape != shape or not value.is_contiguous:
            value = N.contiguous(N.broadcast_to(value, shape), copy=True)
        ast = N.cstrides(wshape)
    zst = [t for _, t, _ in walk]
    _launch_indirect(ctx, view, value, offs, walk, zst, ast, scatter=True)
