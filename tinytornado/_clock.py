"""A monotonic clock for Python 2.7 on Linux, called through ctypes as cheaply as it can be.

Python 3.3+ has `time.monotonic`; 2.7 has only the `monotonic` backport, which builds a
timespec and a ctypes pointer to it on every call. That takes about 2.7 us, a fifth of
all the time a timer costs the loop on 2.7 (`call_later` reads the clock once). Here each
thread keeps one timespec and a reference to it, made once: about 1.0 us a call. Where
the C speedups are built, _compat takes their clock instead (0.04 us a call): this one is
for 2.7 without a compiler.

The buffer is per thread because the two fields are read after the call: a thread switch
in between would let another thread overwrite them, and a second taken from one reading
and nanoseconds from the other can be off by almost a second. `PyDLL` keeps the GIL over
the call, which a vDSO function returning in nanoseconds does not need to release.
"""
from __future__ import absolute_import, division, print_function

import ctypes
import os
import sys
import threading

__all__ = ['linux_monotonic']

_CLOCK_MONOTONIC = 1  # Linux's clock id; other systems number their clocks differently
# glibc has clock_gettime since 2.17; older ones keep it in librt.
_LIBRARIES = (None, 'librt.so.1')


class _Timespec(ctypes.Structure):
    _fields_ = [('tv_sec', ctypes.c_long), ('tv_nsec', ctypes.c_long)]


class _ThreadBuffer(threading.local):
    """One timespec per thread, with the reference that clock_gettime fills it through."""

    def __init__(self):
        timespec = _Timespec()
        self.buffer = (timespec, ctypes.byref(timespec))


def _clock_gettime():
    for library in _LIBRARIES:
        try:
            return ctypes.PyDLL(library, use_errno=True).clock_gettime
        except (OSError, AttributeError):
            continue
    return None


def linux_monotonic():
    """A function returning CLOCK_MONOTONIC in float seconds, or None off Linux or when
    no C library here has clock_gettime."""
    clock_gettime = _clock_gettime() if sys.platform.startswith('linux') else None
    if clock_gettime is None:
        return None
    local = _ThreadBuffer()

    def monotonic():
        timespec, reference = local.buffer
        if clock_gettime(_CLOCK_MONOTONIC, reference):
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error))
        return timespec.tv_sec + timespec.tv_nsec * 1e-9
    return monotonic
