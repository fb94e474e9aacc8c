"""Closed and freed objects: every use after close or free raises clrun.InvalidArgument."""

from ._errors import InvalidArgument


# ---- closed and freed objects ------------------------------------------------------------------------


class _Dead:
    """What a closed or freed object becomes (_kill): every public attribute, method and property
    raises clrun.InvalidArgument naming what happened, but close()/free() (which do nothing again)
    and closed/freed. Live objects pay nothing for it: their class is swapped at release."""

    _ALLOWED = frozenset(("close", "free", "closed", "freed"))

    def __getattribute__(self, name):
        if name[:1] != "_" and name not in _Dead._ALLOWED:
            raise InvalidArgument(1, f"{object.__getattribute__(self, '_dead_msg')}: .{name} is not available")
        return object.__getattribute__(self, name)

    def __repr__(self):
        return f"<clrun.{type(self).__mro__[2].__name__} ({object.__getattribute__(self, '_dead_msg')})>"

    def __bool__(self):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    def __len__(self):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    def __iter__(self):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    def __hash__(self):
        return object.__hash__(self)

    def __eq__(self, other):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    closed = freed = True


_DEAD = {}


def _kill(obj, msg):
    """Turn obj into its class's dead form (see _Dead); idempotent."""
    cls = type(obj)
    if issubclass(cls, _Dead):
        return
    dead = _DEAD.get(cls)
    if dead is None:
        dead = _DEAD[cls] = type(cls.__name__, (_Dead, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
    obj._dead_msg = msg
    obj.__class__ = dead


def _is_dead(obj):
    return isinstance(obj, _Dead)
