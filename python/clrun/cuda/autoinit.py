"""As pycuda.autoinit: a context on the default device (``$CLRUN_DEVICE``, else the best one),
current for clrun.cuda from the import on; ``context`` and ``device`` name it."""
from . import driver as _drv

context = _drv.Context._autoinit()
device = context.get_device()
