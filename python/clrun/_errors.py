"""clrun.Error and its subclasses, one per clrun_status."""
import ctypes
import functools

from . import _lib as L


# ---- errors -----------------------------------------------------------------------------------------


class Error(Exception):
    """A clrun call failed: .status (the clrun_status number), .name ("CLRUN_BUILD_FAILED") and
    .message (the library's text: what failed and what to do; a build failure's log included)."""

    status = -1

    def __init__(self, status, message):
        self.status = status
        self.name = L.status_str(status).decode()
        self.message = message
        super().__init__(f"{self.name}: {message}")


def _cls(name, code, doc, *more):
    return type(name, (Error,) + more, {"status": code, "__doc__": doc})


InvalidArgument = _cls("InvalidArgument", 1, "An argument is out of range or inconsistent (also a ValueError).", ValueError)
NoPlatform = _cls("NoPlatform", 2, "The ICD loader found no OpenCL platform.")
NoDevice = _cls("NoDevice", 3, "No device matches the selection.")
HostOutOfMemory = _cls("HostOutOfMemory", 4, "Out of host memory.")
DeviceOutOfMemory = _cls("DeviceOutOfMemory", 5, "Out of device memory.")
BuildFailed = _cls("BuildFailed", 6, "A kernel build failed; the message holds the build log.")
FileError = _cls("FileError", 7, "A file could not be read or written.")
NotFound = _cls("NotFound", 8, "A kernel or file was not found.")
ArgMismatch = _cls("ArgMismatch", 9, "Kernel arguments do not match the kernel's signature (also a TypeError).", TypeError)
CLError = _cls("CLError", 10, "An OpenCL call failed.")
Unsupported = _cls("Unsupported", 11, "The device cannot do this.")
FormatError = _cls("FormatError", 12, "Malformed input data.")
OutOfRange = type("OutOfRange", (InvalidArgument, OverflowError),
                  {"status": 1, "__doc__": "A value does not fit the type it would be converted to (an InvalidArgument, also an "
                                           "OverflowError, as NumPy 2 raises for Python integers out of a dtype's range)."})
_by_status = {c.status: c for c in (InvalidArgument, NoPlatform, NoDevice, HostOutOfMemory, DeviceOutOfMemory, BuildFailed, FileError,
                                     NotFound, ArgMismatch, CLError, Unsupported, FormatError)}


def _raise(st, ctx=None):
    msg = L.last_error(ctx).decode(errors="replace")
    if not msg:
        msg = L.status_text(st).decode()
    raise _by_status.get(st, Error)(st, msg)


def _check(st, ctx=None):
    if st:
        _raise(st, ctx)


def _as_clrun_errors(namespace, module):
    """Wrap every public function of a module of ops (namespace: its globals(), module: its __name__)
    so that Python's own exceptions for bad arguments (a None, a string for a number, a shape the op
    cannot index, a value ctypes cannot pass) are raised as clrun.InvalidArgument naming the op, the
    original chained as its cause."""
    def wrap(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Error:
                raise
            except (TypeError, ValueError, IndexError, OverflowError, KeyError, AttributeError, ctypes.ArgumentError) as e:
                raise InvalidArgument(1, f"{fn.__name__}: bad argument: {e}") from e
        return wrapped

    for name in [n for n, f in list(namespace.items()) if callable(f) and not n.startswith("_") and getattr(f, "__module__", "") == module]:
        namespace[name] = wrap(namespace[name])
