"""Every difference between Python 2.7 and 3.x that tinytornado cares about.

No other module tests the interpreter version: they import the name they need from here.
"""
from __future__ import absolute_import, division, print_function

import array
import atexit
import platform
import sys
import traceback

import six

__all__ = [
    'PY2', 'PY3', 'GC_CYCLE_FINALIZERS', 'ENDED_FRAMES_KEEP_CALLER', 'monotonic',
    'selectors', 'futures', 'get_ident', 'reraise', 'raise_exc_info', 'throw_exc_info',
    'with_traceback', 'clear_frame', 'exc_clear', 'format_exc_info', 'collections_abc',
    'binary_type', 'text_type', 'string_types', 'unichr', 'stdlib_socket', 'close_socket',
    'UINT64_TYPECODE', 'native_str', 'latin1_bytes', 'POSSESSIVE_REGEX',
    'is_finalizing', 'overrides', 'positional_index',
]

PY2 = six.PY2
PY3 = six.PY3

binary_type = six.binary_type
text_type = six.text_type
string_types = six.string_types
unichr = six.unichr

# PEP 442 (3.4): objects with __del__ inside reference cycles are collected. On 2.7 they
# are not, so code that wants a finalizer must keep it out of every cycle.
GC_CYCLE_FINALIZERS = sys.version_info >= (3, 4)

# From 3.12 the frame of a generator that has ended, if a traceback still holds it, keeps
# as its caller (``f_back``) the frame that last resumed it, and that frame its own
# callers, each with its locals as they were when it returned; before, an ended
# generator's frame has no caller. CPython's issue gh-100964, fixed in 3.13's later
# releases (not in 3.12's): where it is fixed, the clean-up this flag asks for is merely
# not needed.
ENDED_FRAMES_KEEP_CALLER = sys.version_info >= (3, 12)

# Possessive quantifiers ('*+') and atomic groups in `re`: CPython 3.11 added them, and
# 3.11.5 fixed wrong matches in them (python/cpython#106052, #100061); PyPy's still
# let '++' match nothing.
POSSESSIVE_REGEX = (platform.python_implementation() == 'CPython' and
                    sys.version_info >= (3, 11, 5))

if PY2:
    import collections as collections_abc  # noqa: F401  (2.7 keeps the ABCs here)
    from tinytornado._clock import linux_monotonic
    from tinytornado._extension import speedups
    # The C clock where built (0.04 us a reading), else ctypes' (1 us), else the backport.
    monotonic = getattr(speedups, 'monotonic', None) or linux_monotonic()
    if monotonic is None:
        from monotonic import monotonic  # noqa: F401  (the backport, for other systems)
    import selectors2 as selectors  # noqa: F401
    import concurrent.futures as futures  # noqa: F401  (the `futures` backport)
    from thread import get_ident  # noqa: F401
else:
    import collections.abc as collections_abc  # noqa: F401
    from time import monotonic  # noqa: F401
    import selectors  # noqa: F401
    import concurrent.futures as futures  # noqa: F401
    # 3.7+ loads the submodules on first use; Tornado 5.1 had them loaded at import, and
    # legacy code names futures.thread.ThreadPoolExecutor.
    import concurrent.futures.thread  # noqa: F401
    from threading import get_ident  # noqa: F401

reraise = six.reraise


def overrides(cls, base, name):
    """Whether class `cls` has its own method `name` in place of `base`'s (compared as
    functions: 2.7 wraps each read of a method from a class in a new unbound method)."""
    return (six.get_unbound_function(getattr(cls, name)) is not
            six.get_unbound_function(getattr(base, name)))


def positional_index(fn, name):
    """Where `fn` takes `name` positionally; None for a keyword, or a signature not seen."""
    code = getattr(fn, '__code__', None)
    if code is None:
        return None
    names = code.co_varnames[:code.co_argcount]
    return names.index(name) if name in names else None

# 2.7's epoll.poll() truncates its timeout to whole milliseconds, so a wait of 0.7 ms
# returns at once and the loop spins until the deadline; 3.x rounds up.
EPOLL_TRUNCATES_TIMEOUT = PY2
# A signal during a poll raises EINTR on 2.7; 3.5+ retries by itself (PEP 475).
POLL_RAISES_EINTR = PY2


def _uint64_typecode():
    # 'Q' exists from 3.3; on 2.7 'L' is 64 bits wide where a C long is (not on Windows).
    for typecode in ('Q', 'L'):
        try:
            if array.array(typecode).itemsize == 8:
                return typecode
        except ValueError:
            pass
    return None


# The array.array typecode of an unsigned 64-bit integer, or None if there is none.
UINT64_TYPECODE = _uint64_typecode()


def raise_exc_info(exc_info):
    """Re-raise `exc_info` (a sys.exc_info() triple) keeping its original traceback."""
    try:
        six.reraise(*exc_info)
    finally:
        # Break the frame -> exc_info -> traceback -> frame cycle.
        exc_info = None


if PY2:
    def throw_exc_info(generator, exc_info):
        """Throw `exc_info` into `generator` with its traceback; returns the next yield."""
        return generator.throw(*exc_info)
else:
    def throw_exc_info(generator, exc_info):
        """Throw `exc_info` into `generator` with its traceback; returns the next yield."""
        # 3.12 deprecates the three-argument throw(); on 3.x the traceback rides on the
        # exception itself.
        value = exc_info[1]
        if value.__traceback__ is not exc_info[2]:
            value = value.with_traceback(exc_info[2])
        try:
            return generator.throw(value)
        finally:
            # A generator that catches it and ends keeps this frame as its caller from
            # 3.12 (see ENDED_FRAMES_KEEP_CALLER), while the exception's traceback holds
            # the generator's frame: naming the exception here would make a cycle.
            exc_info = value = None


def clear_frame(frame):
    """Drop the locals of `frame`, which has ended (one still running is left as it is).

    Needed only where ENDED_FRAMES_KEEP_CALLER (3.12+), and called only there: 2.7
    frames have no clear().
    """
    try:
        frame.clear()
    except RuntimeError:
        pass


if PY2:
    def with_traceback(exc_info, tb):
        """`exc_info` with the traceback `tb` in place of its own."""
        return exc_info[0], exc_info[1], tb
else:
    def with_traceback(exc_info, tb):
        """`exc_info` with the traceback `tb` in place of its own (on the exception too)."""
        exc_info[1].__traceback__ = tb
        return exc_info[0], exc_info[1], tb


if PY2:
    # 2.7 shows the exception last handled in a frame (sys.exc_info()) to whatever that
    # frame calls after its except clause, until the frame returns.
    exc_clear = sys.exc_clear
else:
    def exc_clear():
        """Nothing to do: 3.x forgets a handled exception at the end of its except clause."""


def format_exc_info(exc_info):
    """The text of a traceback, as the interpreter would print it."""
    return ''.join(traceback.format_exception(*exc_info))


if PY2:
    def stdlib_socket(sock):
        """`sock` as a socket.socket: 2.7's socketpair() gives bare _socket.socket objects,
        which ssl cannot wrap."""
        import socket
        if isinstance(sock, socket.socket):
            return sock
        return socket.socket(_sock=sock)
else:
    def stdlib_socket(sock):
        """`sock` as a socket.socket (it always is one on Python 3)."""
        return sock


if PY2:
    def close_socket(sock):
        """Close `sock`'s file descriptor now. On 2.7 socket.close() (an SSLSocket's too)
        only drops its reference to the underlying _socket.socket, which stays open
        while anything else refers to it."""
        underlying = getattr(sock, '_sock', None)
        sock.close()
        if underlying is not None:
            underlying.close()
else:
    def close_socket(sock):
        """Close `sock`'s file descriptor now."""
        sock.close()


# HTTP/1.x heads are latin-1 on the wire and the native str in the API.
if PY2:
    def native_str(value):
        """`value` (bytes, bytearray or text) as the native str, by latin-1: bytes on 2.7."""
        return value.encode('latin-1') if isinstance(value, text_type) else bytes(value)

    def latin1_bytes(text):
        """A native str as the wire's bytes (it already is on 2.7)."""
        return text
else:
    def native_str(value):
        """`value` (bytes, bytearray or text) as the native str, by latin-1: text on 3.x."""
        return value if isinstance(value, str) else value.decode('latin-1')

    def latin1_bytes(text):
        """A native str as the wire's bytes; UnicodeEncodeError beyond latin-1."""
        return text.encode('latin-1')


if PY2:
    _shutting_down = []
    atexit.register(_shutting_down.append, True)

    def is_finalizing():
        """Whether the interpreter is shutting down: 2.7 has no sys.is_finalizing, so
        whether the atexit handlers have reached the one registered here."""
        return bool(_shutting_down)
else:
    from sys import is_finalizing  # noqa: F401
