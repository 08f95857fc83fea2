"""Tornado 5.1's stream interfaces from before reads and writes returned Futures,
re-exported by iostream: ``callback=`` and ``streaming_callback=`` arguments, the fd hooks
of a subclass that gives no socket, and the private `_StreamBuffer`.

The callback adapters sit over the same Futures as new code's reads and writes: the
method returns None and the callback runs in a later loop pass once the Future succeeds.
One that fails is not called back, as in Tornado 5.1: the close callback tells. An
exception a callback raises is logged and closes the stream. A subclass written for
Tornado 5.1 sets no socket and implements `fileno`, `close_fd`, `write_to_fd` and
`read_from_fd`; `_FdHooks` dresses those as the socket the stream reads.

Only iostream imports this module, at its end: its methods call these functions when a
callback is given or a subclass gives no socket, and it re-exports `_StreamBuffer`.
"""
from __future__ import absolute_import, division, print_function

import collections
import functools
import socket
import warnings
import weakref

from tinytornado._bytebuffer import ByteBuffer
from tinytornado._compat import overrides
from tinytornado.concurrent import Future
from tinytornado.iostream import BaseIOStream, StreamClosedError, _count_or_would_block
from tinytornado.log import app_log, gen_log
from tinytornado.netutil import errno_from_exception

__all__ = ['_StreamBuffer']

# What a subclass that gives no socket implements instead, as in Tornado 5.1.
_FD_HOOKS = ('fileno', 'close_fd', 'write_to_fd', 'read_from_fd')


# -- callback= arguments: adapters over the Futures --------------------------------------

def read_with_callback(stream, callback, streaming_callback, num_bytes, read):
    """A read with Tornado 5.1's callbacks: `read` (a pending read of iostream's) started,
    or with `streaming_callback` `num_bytes` (None: all until the close) streamed to it;
    the Future of that read without `callback`, else None and `callback(result)` once it
    succeeds."""
    _warn_legacy('streaming_callback' if callback is None else 'callback', 2)
    was_closed = stream.closed()
    # Read at once, even from a socket seen drained, as Tornado 5.1 did: an error of
    # the socket (a descriptor closed under the stream) is raised to this caller. The
    # syscall it may waste is the legacy path's alone.
    stream._socket_drained = False
    if streaming_callback is None:
        future = stream._start_read(read)
    else:
        future = _StreamingRead(stream, num_bytes, streaming_callback).start()
    if callback is None:
        return future
    if future.done():
        _raise_inline_failure(future, was_closed, stream._peer_gone_errnos)
    future.add_done_callback(functools.partial(_schedule_callback, stream, callback, True))
    return None


def write_with_callback(stream, data, callback):
    """`write` with Tornado 5.1's callback: None, and ``callback()`` once all is sent."""
    _warn_legacy('callback', 2)
    stream.write(data).add_done_callback(
        functools.partial(_schedule_callback, stream, callback, False))
    return None


def connect_with_callback(stream, future, callback):
    """`connect`'s `future` with Tornado 5.1's callback: None, and ``callback()`` once
    connected; a failed connection is logged instead (the close callback tells)."""
    _warn_legacy('callback', 2)
    future.add_done_callback(functools.partial(_schedule_connect_callback, stream, callback))
    return None


def wait_for_handshake_with_callback(stream, callback):
    """`wait_for_handshake` with Tornado 5.1's callback: None, and ``callback()`` once the
    handshake is done."""
    _warn_legacy('callback', 2)
    stream.wait_for_handshake().add_done_callback(
        functools.partial(_schedule_callback, stream, callback, False))
    return None


def _schedule_connect_callback(stream, callback, future):
    if not future.cancelled() and future.exception() is not None:
        gen_log.warning('Connect error on %r: %s', stream, future.exception())
    _schedule_callback(stream, callback, False, future)


def _schedule_callback(stream, callback, with_result, future):
    """`future` is done: on success, run `callback` (given the result if `with_result`)
    in a later pass. A failure is not called back (the close callback tells)."""
    if future.cancelled() or future.exception() is not None:
        return
    if with_result:
        stream.io_loop.add_callback(_run_callback, stream, callback, future.result())
    else:
        stream.io_loop.add_callback(_run_callback, stream, callback)


def _run_callback(stream, callback, *args):
    """Run a legacy callback. An exception it raises is logged and closes the stream,
    whose `error` it becomes, as in Tornado 5.1."""
    try:
        return callback(*args)
    except Exception:
        app_log.error('Uncaught exception in callback %r, closing %r', callback, stream,
                      exc_info=True)
        stream.close(exc_info=True)


class _StreamingRead(object):
    """A legacy streaming_callback read: partial read_bytes one after another, each chunk
    handed to `streaming_callback` in a later pass; `future` gets b'' (what is left, as in
    Tornado 5.1) once `num_bytes` bytes have streamed, or for `num_bytes` None once the
    stream closes cleanly."""

    def __init__(self, stream, num_bytes, streaming_callback):
        self.stream = stream
        self.remaining = num_bytes
        self.streaming_callback = streaming_callback
        self.chunk = None  # the pending read_bytes
        self.future = Future()
        self.future.set_canceller(self._cancel)

    def start(self):
        """Read chunks until one has to wait; the Future of the whole read."""
        # A loop, not a recursion through the chunks' done callbacks: each chunk that
        # the buffer or an inline recv satisfies resolves within read_bytes.
        while self.remaining != 0:
            size = self.stream.max_buffer_size if self.remaining is None else self.remaining
            self.chunk = self.stream.read_bytes(size, partial=True)
            if not self.chunk.done():
                self.chunk.add_done_callback(self._on_chunk)
                return self.future
            if not self._take(self.chunk):
                return self.future
        self.future.set_result(b'')
        return self.future

    def _on_chunk(self, chunk):
        if self._take(chunk):
            self.start()

    def _take(self, chunk):
        """Pass one resolved chunk on; False once the read is over."""
        if self.future.done():
            return False  # cancelled
        error = chunk.exception()
        if error is None:
            data = chunk.result()
            self.stream.io_loop.add_callback(_run_callback, self.stream,
                                             self.streaming_callback, data)
            if self.remaining is not None:
                self.remaining -= len(data)
            return True
        if (self.remaining is None and isinstance(error, StreamClosedError) and
                error.real_error is None):
            self.future.set_result(b'')  # read_until_close: the clean close ends it
        else:
            self.future.set_exc_info(chunk.exc_info())
        return False

    def _cancel(self):
        # The chunk's read is cancelled too, so its bytes stay for the next read.
        self.future.set_cancelled()
        if not self.chunk.done():
            self.chunk.cancel()
        return True


def _warn_legacy(argument, depth):
    """Tornado 5.1's DeprecationWarning for a callback argument, pointed at the code that
    passed it: `depth` calls up from the caller of this function."""
    warnings.warn('the %s argument is deprecated: use the returned Future' % argument,
                  DeprecationWarning, stacklevel=2 + depth)


def _raise_inline_failure(future, was_closed, peer_gone_errnos):
    """A legacy read whose `future` failed at once raises, as Tornado 5.1's did, when the
    stream was closed before it, or when the read met a socket error other than the peer
    going away (`peer_gone_errnos`, which the close callback reports)."""
    error = future.exception()
    if error is None:
        return
    if was_closed:
        raise error
    real_error = getattr(error, 'real_error', None)
    if (isinstance(real_error, (socket.error, IOError, OSError)) and
            errno_from_exception(real_error) not in peer_gone_errnos):
        raise real_error


# -- the fd hooks of a subclass that gives no socket ---------------------------------------

def use_fd_hooks(stream):
    """Give `stream`, whose class sets no socket, its fd hooks as the socket it reads."""
    missing = [name for name in _FD_HOOKS
               if not overrides(type(stream), BaseIOStream, name)]
    if missing:
        raise NotImplementedError('%s gives no socket, so it must implement %s'
                                  % (type(stream).__name__, ', '.join(missing)))
    stream.socket = _FdHooks(stream)
    # A hook may keep bytes it has read (as TLS does), so a short read does not say
    # the file is drained: only None does, as Tornado 5.1 reads until it would block.
    stream._short_read_drains = False


class _FdHooks(object):
    """The socket methods BaseIOStream calls, over the fd hooks of a subclass written for
    Tornado 5.1 (which closes with its close_fd, not through this)."""

    def __init__(self, stream):
        # A proxy: the stream holds this, and a cycle would keep its buffers until the
        # collector runs.
        self._stream = weakref.proxy(stream)

    def fileno(self):
        return self._stream.fileno()

    def close(self):
        """What IOLoop.close(all_fds=True) calls: the subclass's close_fd."""
        self._stream.close_fd()

    def recv(self, size):
        buf = bytearray(size)
        return memoryview(buf)[:self.recv_into(buf)].tobytes()

    def recv_into(self, view):
        return _count_or_would_block(self._stream.read_from_fd(view))

    def send(self, data):
        return self._stream.write_to_fd(data)


# -- Tornado 5.1's private buffer, for the code that imports it ---------------------------

class _StreamBuffer(object):
    """Tornado 5.1's private FIFO of bytes (its write buffer): `append` at the back, `peek`
    and `advance` at the front, ``len()``. Our streams use a ByteBuffer instead; this is
    for legacy code (and Tornado's own tests) that imports it.

    As in 5.1, a piece larger than `_large_buf_threshold` bytes is kept by reference, not
    copied, so it must not change while buffered; smaller pieces are gathered into
    segments of about that size. `_buffers` holds the segments, each a ByteBuffer.
    """
    _large_buf_threshold = 2048

    def __init__(self):
        self._buffers = collections.deque()
        self._size = 0
        self._last_is_large = False  # only the last segment may take more pieces

    def __len__(self):
        return self._size

    def append(self, data):
        """Add `data` (bytes, bytearray or memoryview) at the end."""
        size = len(data)
        if not size:
            return
        buffers = self._buffers
        if size > self._large_buf_threshold:
            segment = ByteBuffer()
            segment.adopt(memoryview(data))
            buffers.append(segment)
            self._last_is_large = True
        else:
            if (not buffers or self._last_is_large or
                    buffers[-1].size >= self._large_buf_threshold):
                buffers.append(ByteBuffer())
                self._last_is_large = False
            buffers[-1].append(data)
        self._size += size

    def peek(self, size):
        """A memoryview of at most `size` (> 0) bytes from the front: fewer if the first
        segment holds fewer, none if the buffer is empty. Valid until the next call."""
        if size <= 0:
            raise ValueError('peek needs a positive size: %r' % (size,))
        if not self._buffers:
            return memoryview(b'')
        return self._buffers[0].view()[:size]

    def advance(self, size):
        """Drop `size` bytes from the front: at least one, at most len(self)."""
        if not 0 < size <= self._size:
            raise ValueError('cannot advance %r bytes in a buffer of %d' % (size, self._size))
        self._size -= size
        buffers = self._buffers
        while size:
            first = buffers[0]
            step = min(size, first.size)
            first.skip(step)
            size -= step
            if not first.size:
                buffers.popleft()
