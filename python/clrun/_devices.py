"""The dtypes' codes, devices (clrun.devices(), DeviceInfo) and the selection string."""
import dataclasses
from ctypes import byref, c_char_p, c_uint

import numpy as np

from . import _lib as L
from ._errors import InvalidArgument, _check


# ---- types ------------------------------------------------------------------------------------------

# clrun_dtype numbers
F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL = range(13)
_np_to_code = {np.dtype(np.float32): F32, np.dtype(np.float16): F16, np.dtype(np.float64): F64, np.dtype(np.int8): I8,
               np.dtype(np.int16): I16, np.dtype(np.int32): I32, np.dtype(np.int64): I64, np.dtype(np.uint8): U8,
               np.dtype(np.uint16): U16, np.dtype(np.uint32): U32, np.dtype(np.uint64): U64, np.dtype(np.bool_): BOOL}

_DEVICE_TYPES = {1: "gpu", 2: "accelerator", 3: "cpu", 4: "other"}


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """One device (clrun_device_info)."""
    index: int
    platform_index: int
    device_index: int
    type: str
    platform_name: str
    platform_version: str
    platform_vendor: str
    name: str
    vendor: str
    version: str
    driver_version: str
    c_version: str
    global_mem: int
    max_alloc: int
    local_mem: int
    compute_units: int
    max_work_group: int
    max_work_item: tuple
    preferred_multiple: int
    mem_base_align: int
    fp64: bool
    fp16: bool
    subgroups: bool
    host_unified: bool
    fp32_denorms: bool

    @property
    def spec(self):
        """The selection string that names this device: "PLATFORM:DEVICE"."""
        return f"{self.platform_index}:{self.device_index}"


def _info(c):
    s = lambda b: b.decode(errors="replace")  # noqa: E731
    return DeviceInfo(c.index, c.platform_index, c.device_index, _DEVICE_TYPES.get(c.type, "other"), s(c.platform_name),
                      s(c.platform_version), s(c.platform_vendor), s(c.name), s(c.vendor), s(c.version), s(c.driver_version),
                      s(c.c_version).strip(), c.global_mem, c.max_alloc, c.local_mem, c.compute_units, c.max_work_group,
                      tuple(c.max_work_item), c.preferred_multiple, c.mem_base_align, bool(c.fp64), bool(c.fp16), bool(c.subgroups),
                      bool(c.host_unified), bool(c.fp32_denorms))


def _spec(spec):
    """A selection string as bytes for the library (None stays None); an int is an index."""
    if spec is None or spec == "":
        return None
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return str(int(spec)).encode()
    if not isinstance(spec, str):
        raise InvalidArgument(1, f"a device selection is a string (\"gpu\", \"0:1\", a name) or an index, not {spec!r}")
    return spec.encode()


def version():
    """libclrun's version string."""
    return L.version().decode()


def devices():
    """Every OpenCL device the ICD loader finds, in platform order (a list of DeviceInfo)."""
    n = c_uint()
    _check(L.device_count(byref(n)))
    out = []
    for i in range(n.value):
        c = L.DeviceInfoC()
        _check(L.device_get(i, byref(c)))
        out.append(_info(c))
    return out


def select(spec=None):
    """The device a selection string names (None: $CLRUN_DEVICE, else the best) and why it was chosen."""
    idx, why = c_uint(), c_char_p()
    _check(L.device_select(_spec(spec), byref(idx), byref(why)))
    return devices()[idx.value], (why.value or b"").decode()
