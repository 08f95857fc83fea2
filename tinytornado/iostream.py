"""Non-blocking sockets and pipes with Tornado 5.1's API: `IOStream`, `SSLIOStream`,
`PipeIOStream`, all `BaseIOStream`s.

A stream owns one socket (for a PipeIOStream, a pipe's file descriptor dressed as one;
for a subclass written for Tornado 5.1, its `read_from_fd`/`write_to_fd` hooks dressed as
one).
Incoming bytes fill a read buffer, and at most one read is pending: a small object that
says when the buffer can satisfy it (`_ReadBytes`, `_ReadUntil`, ...). Writes go to the
socket at once when they can; what does not fit waits in a write buffer, and each
write's Future resolves once its last byte is sent.

Fast without losing bytes:
- A read the buffer can already satisfy returns a resolved Future, so the caller's
  coroutine goes on in the same pass. One it cannot satisfy reads the socket at once
  (inline) before it waits for the loop, unless the last read showed the socket drained.
- A read_bytes that one recv into the empty buffer satisfies whole (most messages) is
  given the bytes object recv returned: no copy, and no trip through the buffer.
- The socket is registered with the loop once, when the stream first has to wait, and
  stays registered for reading until it closes (with nothing to read, that is how a close
  by the peer is noticed); only WRITE interest is switched, when the kernel's send buffer
  fills and drains. A read costs no selector call. The exception is flow control, below.
- Bytes leave the read buffer only when a read is satisfied, so a cancelled read (a
  timeout, say) loses nothing: the next read gets them.

Flow control, as in Tornado 5.1: with no read pending, a stream reads at most a chunk
(`read_chunk_size`) ahead, then stops watching the socket, whose unread bytes fill the
kernel's buffers and so stop the sender, until a read needs more bytes or reads leave less
than a chunk buffered. Meanwhile a close by the peer waits to be seen, as bytes do.

Closing: `close()` fails the pending read with `StreamClosedError`, whose `real_error`
is the cause (also kept as `error`), except that `read_until_close` gets the buffered
bytes when the close was clean. A read the buffer can satisfy still succeeds after the
close. The peer closing or resetting the connection, a read that cannot be satisfied
within its `max_bytes`, and a pending read that needs more than `max_buffer_size` bytes
buffered all close the stream.

Legacy ``callback=`` (and ``streaming_callback=``) arguments are adapters over the same
Futures, in _iostream_legacy with the fd hooks of a subclass that gives no socket and
5.1's private `_StreamBuffer`: the methods here hand such calls over to it.
"""
from __future__ import absolute_import, division, print_function

import collections
import errno
import fcntl
import functools
import io
import os
import re
import socket
import ssl
import sys

import six

from tinytornado._bytebuffer import ByteBuffer
from tinytornado._compat import close_socket
from tinytornado.concurrent import (
    Future, future_set_exception_unless_cancelled, future_set_result_unless_cancelled,
)
from tinytornado.ioloop import IOLoop
from tinytornado.log import gen_log
from tinytornado.netutil import errno_from_exception, ssl_wrap_socket

__all__ = [
    'BaseIOStream', 'IOStream', 'SSLIOStream', 'PipeIOStream', 'StreamClosedError',
    'UnsatisfiableReadError', 'StreamBufferFullError',
]

_WOULDBLOCK = frozenset([errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR])
# The peer went away: expected, so not worth a warning in the log.
_CONNECTION_LOST = frozenset([errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE,
                              errno.ETIMEDOUT, errno.ENOTCONN])
_CONNECT_IN_PROGRESS = frozenset([errno.EINPROGRESS, errno.EWOULDBLOCK])

_DEFAULT_MAX_BUFFER_SIZE = 100 * 1024 * 1024
_DEFAULT_READ_CHUNK_SIZE = 64 * 1024
# The first reads are small, so ten thousand idle streams do not hold 64 KB each; a read
# that fills its room doubles the next one, up to read_chunk_size.
_FIRST_RECV_SIZE = 4096

# A stream's states. HANDSHAKING is an SSLIOStream's, between connected and OPEN.
CONNECTING, HANDSHAKING, OPEN, CLOSED = 'CONNECTING', 'HANDSHAKING', 'OPEN', 'CLOSED'

_READ, _WRITE = IOLoop.READ, IOLoop.WRITE
# An error or hang-up (a pipe's writer gone) is met as a read would meet it: a recv tells
# EOF or the error. epoll reports it alone for pipes, and ignoring it would spin the loop.
_READABLE = IOLoop.READ | IOLoop.ERROR
# What a stream whose reading is paused watches for reading: nothing, not even errors,
# which select() and `selectors` can only watch as readability. It meets them when a
# read resumes it, as Tornado 5.1's streams do on select().
_PAUSED = 0

# What _PendingRead.complete returns while the buffer cannot satisfy the read.
_NOT_YET = object()

# What a failed recv or send means.
_FAILED, _WOULD_BLOCK, _EOF = 'FAILED', 'WOULD_BLOCK', 'EOF'

# What `write` returns when all was sent at once (most writes): a resolved Future cannot
# change any more, so one serves them all, and a write that nobody waits for costs none.
_SENT = Future()
_SENT.set_result(None)


class StreamClosedError(IOError):
    """The stream is closed. `real_error` is why: None for a clean close by either side,
    else the exception (a socket error, an ssl.SSLError, StreamBufferFullError...)."""

    def __init__(self, real_error=None):
        message = 'Stream is closed'
        if real_error is not None:
            message += ': %s' % (real_error,)
        super(StreamClosedError, self).__init__(message)
        self.real_error = real_error


class UnsatisfiableReadError(Exception):
    """A read_until or read_until_regex found no match within its `max_bytes`."""


class StreamBufferFullError(Exception):
    """More than max_buffer_size unread, or max_write_buffer_size unsent, bytes."""


class BaseIOStream(object):
    """Future-returning reads and writes over `socket`, which a subclass sets before
    calling this __init__: a non-blocking socket, or an object with the socket methods
    used here (fileno, recv, recv_into, send, close), as PipeIOStream's.

    A subclass written for Tornado 5.1 sets no socket and implements `fileno`, `close_fd`,
    `write_to_fd` and `read_from_fd` instead, over a non-blocking file descriptor; the
    stream then calls those.

    Args:
        max_buffer_size: the most bytes a pending read may need buffered; more close the
            stream (100 MB). With no read pending it reads only a chunk ahead.
        read_chunk_size: the most bytes one recv asks for (64 KB).
        max_write_buffer_size: the most unsent bytes `write` accepts (unlimited).
    """
    # After a recv returns less than it had room for, the kernel had no more: a read
    # waits for the loop rather than try again and meet EWOULDBLOCK.
    _short_read_drains = True
    # The errnos that say the other end went away: the stream closes without a warning.
    _peer_gone_errnos = _CONNECTION_LOST

    def __init__(self, max_buffer_size=None, read_chunk_size=None, max_write_buffer_size=None):
        self.io_loop = IOLoop.current()
        self.max_buffer_size = max_buffer_size or _DEFAULT_MAX_BUFFER_SIZE
        self.read_chunk_size = min(read_chunk_size or _DEFAULT_READ_CHUNK_SIZE,
                                   max(1, self.max_buffer_size // 2))
        self.max_write_buffer_size = max_write_buffer_size
        self.error = None
        if getattr(self, 'socket', None) is None:
            _legacy.use_fd_hooks(self)
        self._fileno = self.socket.fileno()
        self._state = OPEN
        self._interest = 0  # the events registered with the loop; 0: not registered
        self._read_buffer = ByteBuffer(keep=2 * self.read_chunk_size)
        # Kept whole: a stream that writes large bodies would otherwise allocate (and
        # fault in) its buffer again for each.
        self._write_buffer = ByteBuffer()
        self._pending_read = None
        self._write_futures = collections.deque()  # (bytes_written when made, future)
        self._bytes_written = self._bytes_sent = 0
        self._recv_size = min(_FIRST_RECV_SIZE, self.read_chunk_size)
        self._socket_drained = False
        # True while reading is paused: a chunk read ahead waits, and nothing asks for more.
        self._reading_paused = False
        self._connect_future = None
        self._close_callback = None

    def __repr__(self):
        return '<%s fd=%d %s>' % (type(self).__name__, self._fileno, self._state)

    def fileno(self):
        return self._fileno

    # -- Tornado 5.1's fd hooks ----------------------------------------------------------
    # A subclass that gives no socket implements these, and its stream calls them through
    # _iostream_legacy's _FdHooks. Ours read and write their socket directly, not through
    # read_from_fd and write_to_fd, which on them serve code that calls them; every
    # stream's close() calls close_fd, as in 5.1.

    def close_fd(self):
        """Close the file underneath the stream: `close` calls it, nothing else should."""
        close_socket(self.socket)

    def write_to_fd(self, data):
        """Write what the file takes of `data` now; the number of bytes written."""
        return self.socket.send(data)

    def read_from_fd(self, buf):
        """Read into the writable buffer `buf`: the number of bytes read, 0 at EOF, or
        None when nothing can be read without blocking."""
        try:
            return self.socket.recv_into(buf)
        except (socket.error, IOError, OSError) as e:  # ssl.SSLError too
            outcome = self._error_outcome(e)
            if outcome is _FAILED:
                raise
            return None if outcome is _WOULD_BLOCK else 0

    # -- reading -----------------------------------------------------------------------

    def read_bytes(self, num_bytes, callback=None, streaming_callback=None, partial=False):
        """A Future of the next `num_bytes` bytes. With `partial`, of what is there (at
        least one byte, at most `num_bytes`) as soon as anything is.

        Legacy forms: with `callback`, returns None and calls ``callback(data)``; with
        `streaming_callback`, each chunk goes to it as it comes and the result is b''.
        """
        if not isinstance(num_bytes, six.integer_types) or num_bytes < 0:
            raise ValueError('num_bytes must be a non-negative integer: %r' % (num_bytes,))
        if callback is None and streaming_callback is None:
            return self._start_read(_ReadBytes(num_bytes, partial))
        return _legacy.read_with_callback(self, callback, streaming_callback, num_bytes,
                                          _ReadBytes(num_bytes, partial))

    def read_until(self, delimiter, callback=None, max_bytes=None):
        """A Future of the bytes up to and including `delimiter` (legacy form: with
        `callback`, returns None and calls ``callback(data)``).

        If no delimiter ends within `max_bytes` bytes, the stream is closed and the read
        fails with StreamClosedError (its real_error an UnsatisfiableReadError).
        """
        if not delimiter:
            raise ValueError('read_until needs a non-empty delimiter')
        if callback is None:
            return self._start_read(_ReadUntil(delimiter, max_bytes))
        return _legacy.read_with_callback(self, callback, None, None,
                                          _ReadUntil(delimiter, max_bytes))

    def read_until_regex(self, regex, callback=None, max_bytes=None):
        """A Future of the bytes up to and including the first match of `regex` (legacy
        form: with `callback`, returns None and calls ``callback(data)``).

        A match may start anywhere, so each arrival searches the whole buffer again:
        give `max_bytes` when the data may come in small pieces.
        """
        read = _ReadUntilRegex(re.compile(regex), max_bytes)
        if callback is None:
            return self._start_read(read)
        return _legacy.read_with_callback(self, callback, None, None, read)

    def read_until_close(self, callback=None, streaming_callback=None):
        """A Future of every byte until the peer closes the connection cleanly.

        Legacy forms: with `callback`, returns None and calls ``callback(data)``; with
        `streaming_callback`, each chunk goes to it as it comes and the result is b''.
        """
        if callback is None and streaming_callback is None:
            return self._start_read(_ReadUntilClose())
        return _legacy.read_with_callback(self, callback, streaming_callback, None,
                                          _ReadUntilClose())

    def read_into(self, buf, callback=None, partial=False):
        """Fill the writable buffer `buf` (a bytearray or memoryview); a Future of the
        number of bytes written into it: len(buf), or with `partial` at least one.
        Legacy form: with `callback`, returns None and calls ``callback(count)``.

        Once the stream's own buffer is empty, the socket reads straight into `buf`.
        """
        if callback is None:
            return self._start_read(_ReadInto(memoryview(buf), partial))
        return _legacy.read_with_callback(self, callback, None, None,
                                          _ReadInto(memoryview(buf), partial))

    def reading(self):
        """True while a read is pending."""
        return self._pending_read is not None

    def _start_read(self, read):
        if self._pending_read is not None:
            raise RuntimeError('Already reading: %r allows one pending read at a time' % self)
        future = read.future = Future()
        self._pending_read = read
        # Most reads find the buffer empty (the last one took it all): no need to look.
        if self._read_buffer.size >= read.min_bytes and self._satisfy_from_buffer():
            if self._reading_paused and self._read_buffer.size < self.read_chunk_size:
                self._resume_reading()
            return future
        if self._state is CLOSED:
            self._end_pending_read()
            return future
        future.set_canceller(self._cancel_read)
        if self._state is OPEN:
            if self._reading_paused:
                self._resume_reading()
            if not self._socket_drained:
                self._read_from_socket()
            if self._pending_read is read and not self._interest & _READ:
                self._update_interest()  # READ, once watched, stays so until the close
        return future

    def _satisfy_from_buffer(self):
        """Finish the pending read if the buffer can; True if it is no longer pending."""
        read = self._pending_read
        try:
            result = read.complete(self._read_buffer)
        except UnsatisfiableReadError as e:
            gen_log.info('Unsatisfiable read, closing %r: %s', self, e)
            self.close(exc_info=e)
            self._end_pending_read()  # close() does not, if the stream was closed already
            return True
        if result is _NOT_YET:
            return False
        self._pending_read = None
        # Not cancelled: cancelling a pending read's Future goes through _cancel_read,
        # which takes it off first.
        read.future.set_result(result)
        return True

    def _read_from_socket(self):
        """Read until the pending read is satisfied or the socket has no more for now;
        with no read pending, read one chunk (to see a close, or to read ahead).

        An empty buffer receives a bytes object: a pending read it satisfies whole is
        given that very object (most messages arrive whole and are read whole), else the
        buffer adopts it; no copy either way. A non-empty buffer receives into its room,
        and a read_into that reads directly into the caller's buffer. Closes the stream
        at EOF or on an error.
        """
        buffer = self._read_buffer
        while True:
            read = self._pending_read
            if buffer.size or (read is not None and read.reads_directly):
                if not self._read_into_view(read):
                    return
            else:
                # Inline, not in a helper: every message read comes this way.
                room = self._recv_size
                try:
                    chunk = self.socket.recv(room)
                except (socket.error, IOError, OSError) as e:  # ssl.SSLError too
                    self._recv_failed(e)
                    return
                if not chunk:
                    self.close()  # the peer closed its side: EOF
                    return
                size = len(chunk)
                if size < room:
                    self._socket_drained = self._short_read_drains
                else:
                    self._recv_size = min(2 * room, self.read_chunk_size)
                if read is not None and read.min_bytes <= size <= read.max_whole:
                    self._pending_read = None
                    read.future.set_result(chunk)  # not cancelled: see _satisfy_from_buffer
                    return
                buffer.adopt(chunk)
            if read is None:
                if buffer.size >= self.read_chunk_size:
                    self._pause_reading()
                return
            if self._satisfy_from_buffer():
                return
            if buffer.size > self.max_buffer_size:
                self._close_buffer_full()
                return
            if self._socket_drained:
                return

    def _read_into_view(self, read):
        """One recv into the room of the buffer, or straight into a read_into's; True if
        it brought bytes."""
        buffer = self._read_buffer
        direct = None
        if read is not None and read.reads_directly:
            direct = read.direct_view(buffer)
        view = buffer.room(self._recv_size) if direct is None else direct
        room = len(view)
        try:
            size = self.socket.recv_into(view)
        except (socket.error, IOError, OSError) as e:
            return self._recv_failed(e)
        if not size:
            self.close()  # EOF
            return False
        if direct is None:
            buffer.commit(size)
        else:
            read.filled += size
        if size < room:
            self._socket_drained = self._short_read_drains
        elif direct is None:
            self._recv_size = min(2 * self._recv_size, self.read_chunk_size)
        return True

    def _recv_failed(self, error):
        """A recv raised `error`: close the stream unless it would block; returns False."""
        outcome = self._error_outcome(error)
        if outcome is _WOULD_BLOCK:
            self._socket_drained = True
        elif outcome is _FAILED:
            self._close_on_error('Read', error)
        else:
            self.close()  # EOF
        return False

    def _error_outcome(self, error):
        """What a failed recv or send means: _FAILED, _WOULD_BLOCK or _EOF."""
        return _WOULD_BLOCK if errno_from_exception(error) in _WOULDBLOCK else _FAILED

    def _cancel_read(self):
        # The read's Future was cancelled: nothing was taken from the buffer, so the next
        # read sees every byte (read_into puts back what it had moved into its buffer).
        read, self._pending_read = self._pending_read, None
        read.unread(self._read_buffer)
        read.future.set_cancelled()
        return True

    def _end_pending_read(self):
        """The stream is closed: give the pending read what it accepts, or fail it."""
        read, self._pending_read = self._pending_read, None
        if read is None:
            return
        size = None if self.error is not None else read.at_close(self._read_buffer)
        if size is None:
            future_set_exception_unless_cancelled(read.future, self._closed_error())
        else:
            future_set_result_unless_cancelled(read.future, read.take(self._read_buffer, size))

    def _pause_reading(self):
        """Flow control, as in Tornado 5.1: a chunk read ahead with no read pending is
        enough. The rest stays in the kernel, whose buffers fill and stop the peer, until
        a read needs more (then `_resume_reading`)."""
        if not self._reading_paused:
            self._reading_paused = True
            self._update_interest()

    def _resume_reading(self):
        self._reading_paused = False
        self._update_interest()

    def _close_buffer_full(self):
        error = StreamBufferFullError('Reached maximum read buffer size (%d bytes)'
                                      % self.max_buffer_size)
        gen_log.warning('Closing %r: %s', self, error)
        self.close(exc_info=error)

    # -- writing -----------------------------------------------------------------------

    def write(self, data, callback=None):
        """Send `data`; a Future resolved once all of it has been sent (legacy form: with
        `callback`, returns None and calls ``callback()`` then).

        What the socket takes at once is sent at once, and then the Future is resolved
        already. Writes go out in order and need not wait for each other. A Future that
        fails because the stream closed is not logged if nobody waits for it.

        Raises:
            StreamClosedError: the stream is closed.
            StreamBufferFullError: the unsent bytes would pass max_write_buffer_size.
        """
        if callback is not None:
            return _legacy.write_with_callback(self, data, callback)
        if self._state is not OPEN or self._bytes_written != self._bytes_sent:
            return self._write_behind(data)
        size = len(data)
        if self.max_write_buffer_size is not None:
            self._check_write_room(size)
        if not size:
            return _SENT
        # Nothing waits: send from `data` itself, and copy only what the kernel refused.
        # The send is inline, not in a helper: most writes end here.
        self._bytes_written += size
        try:
            sent = self.socket.send(data)
        except (socket.error, IOError, OSError) as e:
            sent = self._send_failed(e)
            if sent is None:
                return self._write_future()
        self._bytes_sent += sent
        if sent == size:
            return _SENT
        self._write_buffer.append(memoryview(data)[sent:])
        self._update_interest()
        return self._write_future()

    def _write_behind(self, data):
        """`write` while the stream is not open or bytes wait: queue `data` behind them."""
        if self._state is CLOSED:
            raise self._closed_error()
        size = len(data)
        if self.max_write_buffer_size is not None:
            self._check_write_room(size)
        self._bytes_written += size
        self._write_buffer.append(data)
        return self._write_future()

    def _check_write_room(self, size):
        if self._bytes_written - self._bytes_sent + size > self.max_write_buffer_size:
            raise StreamBufferFullError('Reached maximum write buffer size')

    def _write_future(self):
        """What `write` returns: a Future resolved once the bytes written so far are sent."""
        if self._bytes_sent == self._bytes_written:
            return _SENT
        future = Future()
        if self._state is CLOSED:  # sending failed
            future.set_exception(self._closed_error())
            future.exception()
        else:
            self._write_futures.append((self._bytes_written, future))
        return future

    def writing(self):
        """True while written bytes wait to be sent."""
        return self._bytes_written != self._bytes_sent

    def _handle_write(self):
        buffer = self._write_buffer
        while self._bytes_sent < self._bytes_written:
            try:
                sent = self.socket.send(buffer.view())
            except (socket.error, IOError, OSError) as e:
                sent = self._send_failed(e)
            if not sent:
                if sent is None:
                    return  # closed
                break  # the kernel's buffer is full: wait for WRITE
            buffer.skip(sent)
            self._bytes_sent += sent
        futures = self._write_futures
        while futures and futures[0][0] <= self._bytes_sent:
            future_set_result_unless_cancelled(futures.popleft()[1], None)
        if self._bytes_sent < self._bytes_written or self._interest & _WRITE:
            self._update_interest()

    def _send_failed(self, error):
        """A send raised `error`: 0 if the socket would block, else None after closing."""
        if self._error_outcome(error) is _WOULD_BLOCK:
            return 0
        self._close_on_error('Write', error)
        return None

    # -- events from the loop ----------------------------------------------------------

    def _wanted_events(self):
        if self._state is CONNECTING:
            return _WRITE
        reading = _PAUSED if self._reading_paused else _READ
        return reading | _WRITE if self._bytes_written != self._bytes_sent else reading

    def _update_interest(self):
        """Tell the loop what the stream waits for now; registers it on first need, and
        unregisters it while it waits for nothing (reading paused, nothing to send)."""
        events = self._wanted_events()
        if events == self._interest:
            return
        if not events:
            self.io_loop.remove_handler(self._fileno)
        elif self._interest:
            self.io_loop.update_handler(self._fileno, events)
        else:
            # The socket object, not its number: IOLoop.close(all_fds=True) (every
            # AsyncTestCase's tearDown) closes it through it, so that the stream's own
            # close later cannot close the number again once another file has it.
            self.io_loop.add_handler(self.socket, self._handle_events, events)
        self._interest = events

    def _handle_events(self, fd, events):
        try:
            if self._state is not OPEN:
                self._handle_setup_events(events)
                return
            if events & _READABLE:
                self._socket_drained = False
                self._read_from_socket()
            if events & _WRITE and self._state is OPEN:
                self._handle_write()
        except Exception:
            gen_log.error('Uncaught exception in %r, closing it', self, exc_info=True)
            self.close(exc_info=True)

    def _handle_setup_events(self, events):
        """Events before the stream is OPEN (or after it closed, in the same pass): a
        subclass's connect or handshake. Here there are none to handle."""

    # -- closing -----------------------------------------------------------------------

    def set_close_callback(self, callback):
        """Call `callback()` (in a later loop pass) once the stream closes, whichever
        side closes it. Setting one also watches an idle stream, to notice the peer
        closing it."""
        self._close_callback = callback
        if callback is None:
            return
        if self._state is CLOSED:
            self._run_close_callback()
        elif self._state is OPEN:
            self._update_interest()

    def closed(self):
        return self._state is CLOSED

    def close(self, exc_info=False):
        """Close the stream and its socket; harmless if closed already.

        Args:
            exc_info: the cause of the close, kept as `error` and given to pending reads
                as StreamClosedError.real_error: an exception, a sys.exc_info() triple,
                or True for the exception being handled.
        """
        if self._state is CLOSED:
            return
        if exc_info:
            self.error = _exception_from(exc_info)
        self._state = CLOSED
        try:
            if self._interest:
                self._interest = 0
                self.io_loop.remove_handler(self._fileno)
            self.close_fd()
        except Exception as e:
            # The descriptor failed under the stream (EBADF: other code closed it): it is
            # closed all the same, and its readers and close callback must hear so (issue
            # 28: on 3.x socket.close() raising left the stream half-closed, its read
            # pending for ever).
            gen_log.warning('Error closing %r: %s', self, e)
            if self.error is None:
                self.error = e
        finally:
            self._signal_closed()

    def _signal_closed(self):
        self._end_pending_read()
        error = self._closed_error()
        future, self._connect_future = self._connect_future, None
        if future is not None:
            future_set_exception_unless_cancelled(future, error)
        while self._write_futures:
            future = self._write_futures.popleft()[1]
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: a write nobody waits for logs nothing
        self._run_close_callback()

    def _run_close_callback(self):
        callback, self._close_callback = self._close_callback, None
        if callback is not None:
            self.io_loop.add_callback(callback)

    def _closed_error(self):
        return StreamClosedError(real_error=self.error)

    def _close_on_error(self, operation, error):
        if errno_from_exception(error) not in self._peer_gone_errnos:
            gen_log.warning('%s error on %r: %s', operation, self, error)
        self.close(exc_info=error)

    # -- options -----------------------------------------------------------------------

    def set_nodelay(self, value):
        """Only TCP streams (IOStream) delay small writes; on the others this does nothing."""

class IOStream(BaseIOStream):
    """A connected (or connecting) TCP or Unix socket with Future-returning reads and
    writes, and `connect`.

    Args:
        socket: a stream socket; it is made non-blocking.
        max_buffer_size, read_chunk_size, max_write_buffer_size: see BaseIOStream.
    """

    def __init__(self, socket, *args, **kwargs):
        self.socket = socket
        self.socket.setblocking(False)
        super(IOStream, self).__init__(*args, **kwargs)

    # -- connecting --------------------------------------------------------------------

    def connect(self, address, callback=None, server_hostname=None):
        """Connect the socket to `address` (a resolved (host, port), or a Unix socket's
        path; a host name would make socket.connect block). A Future resolved with this
        stream once connected.

        Reads and writes started before then wait for the connection. A refused or
        failed connection fails the Future with StreamClosedError (its real_error the
        socket error). Cancelling the Future closes the stream.

        Legacy form: with `callback`, returns None and calls ``callback()`` once
        connected; a failed connection is logged instead (the close callback tells).
        """
        future = self._start_connect(address)
        return future if callback is None else _legacy.connect_with_callback(
            self, future, callback)

    def _start_connect(self, address):
        self._state = CONNECTING
        future = self._connect_future = Future()
        future.set_canceller(functools.partial(self._cancel_and_close, '_connect_future'))
        try:
            self.socket.connect(address)
        except socket.error as e:
            if errno_from_exception(e) not in _CONNECT_IN_PROGRESS:
                self.close(exc_info=e)
                return future
        self._update_interest()
        return future

    def _handle_connect(self):
        err = self.socket.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self.close(exc_info=socket.error(err, os.strerror(err)))
            return
        self._state = OPEN
        self._on_connect()

    def _on_connect(self):
        """The TCP connection is up: start what waited for it, then tell the caller
        (unless that closed the stream, which failed the Future)."""
        self._start_pending_io()
        future, self._connect_future = self._connect_future, None
        if future is not None:
            future_set_result_unless_cancelled(future, self)

    def _start_pending_io(self):
        if self.writing():
            self._handle_write()
        if self._pending_read is not None and self._state is OPEN:
            self._read_from_socket()
        if self._state is OPEN:
            self._update_interest()

    def _cancel_and_close(self, attribute):
        # Cancelling a connect (or a handshake) gives the connection up. The Future is
        # taken off first, so that close() does not try to fail it.
        future = getattr(self, attribute)
        setattr(self, attribute, None)
        future.set_cancelled()
        self.close()
        return True

    def _handle_setup_events(self, events):
        """Events before the stream is OPEN (or after it closed, in the same pass)."""
        if self._state is CONNECTING:
            self._handle_connect()

    # -- options and TLS ---------------------------------------------------------------

    def set_nodelay(self, value):
        """Send small writes at once (TCP_NODELAY) rather than gather them (Nagle)."""
        if self._state is CLOSED or self.socket.family not in (socket.AF_INET,
                                                                socket.AF_INET6):
            return
        try:
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if value else 0)
        except socket.error as e:
            if errno_from_exception(e) != errno.EINVAL:
                raise  # EINVAL: the connection is being reset

    def start_tls(self, server_side, ssl_options=None, server_hostname=None):
        """Switch this connected stream to TLS; a Future of the new SSLIOStream, resolved
        once the handshake is done (failing with its error, an ssl.SSLError say).

        This stream is done with and must not be used after. Call it with nothing
        pending or buffered: the bytes of the handshake must be the next on the wire.

        Args:
            ssl_options: an ssl.SSLContext or a dict (see netutil.ssl_options_to_context).
            server_hostname: the name to send (SNI) and check the certificate against.
        """
        if (self._state is not OPEN or self._pending_read is not None or
                self._read_buffer.size or self.writing()):
            raise ValueError('start_tls needs an open stream with nothing pending: %r' % self)
        close_callback, self._close_callback = self._close_callback, None
        sock = self._detach()
        try:
            sock = ssl_wrap_socket(sock, ssl_options, server_hostname=server_hostname,
                                   server_side=server_side, do_handshake_on_connect=False)
        except Exception:
            close_socket(sock)
            raise
        stream = SSLIOStream(sock, ssl_options=ssl_options,
                             max_buffer_size=self.max_buffer_size,
                             read_chunk_size=self.read_chunk_size,
                             max_write_buffer_size=self.max_write_buffer_size)
        stream.set_close_callback(close_callback)
        return stream.wait_for_handshake()

    def _detach(self):
        """Give up the socket without closing it; the stream is closed, silently."""
        if self._interest:
            self.io_loop.remove_handler(self._fileno)
            self._interest = 0
        self._state = CLOSED
        sock, self.socket = self.socket, None
        return sock


class SSLIOStream(IOStream):
    """An IOStream over TLS.

    Give it a socket wrapped already (`netutil.ssl_wrap_socket` with
    ``do_handshake_on_connect=False``: what TCPServer and `start_tls` do) or a plain one
    to `connect`, which wraps it with `ssl_options`. By default a client verifies the
    server's certificate and name (``ssl.create_default_context()``). Reads and writes
    wait for the handshake; see `wait_for_handshake`.
    """
    # One TLS read returns at most one record, whatever room it had: only
    # SSL_ERROR_WANT_READ says the socket is drained.
    _short_read_drains = False

    def __init__(self, socket, ssl_options=None, **kwargs):
        super(SSLIOStream, self).__init__(socket, **kwargs)
        self._ssl_options = ssl_options
        self._server_hostname = None
        self._handshake_future = None
        self._handshake_events = _WRITE
        if isinstance(socket, ssl.SSLSocket) and _is_connected(socket):
            self._state = HANDSHAKING
            self._update_interest()  # the first WRITE event starts the handshake

    def connect(self, address, callback=None, server_hostname=None):
        """Connect, then do the TLS handshake; a Future resolved with this stream after
        (legacy form: with `callback`, None, and ``callback()`` then).

        `server_hostname` (default: the address's host) is sent for SNI and checked
        against the certificate. A failed handshake fails the Future with its own
        error (an ssl.SSLError, say); a failed connection as IOStream.connect does.
        """
        self._server_hostname = server_hostname or address[0]
        future = self._start_connect(address)
        return future if callback is None else _legacy.connect_with_callback(
            self, future, callback)

    def wait_for_handshake(self, callback=None):
        """A Future resolved with this stream once the handshake is done, or failed with
        the handshake's error. Cancelling it closes the stream. Legacy form: with
        `callback`, returns None and calls ``callback()`` once the handshake is done."""
        if callback is not None:
            return _legacy.wait_for_handshake_with_callback(self, callback)
        if self._handshake_future is not None:
            raise RuntimeError('Already waiting for the handshake of %r' % self)
        future = self._handshake_future = Future()
        if self._state is OPEN:
            self._resolve_handshake_futures()
        elif self._state is CLOSED:
            self._fail_handshake_futures(self._closed_error())
        else:
            future.set_canceller(functools.partial(self._cancel_and_close,
                                                  '_handshake_future'))
        return future

    def _on_connect(self):
        if not isinstance(self.socket, ssl.SSLSocket):
            try:
                self.socket = ssl_wrap_socket(self.socket, self._ssl_options,
                                              server_hostname=self._server_hostname,
                                              do_handshake_on_connect=False)
            except Exception as e:
                self._handshake_failed(e)
                return
        self._state = HANDSHAKING
        self._do_handshake()

    def _handle_setup_events(self, events):
        if self._state is HANDSHAKING:
            self._do_handshake()
        else:
            super(SSLIOStream, self)._handle_setup_events(events)

    def _wanted_events(self):
        if self._state is HANDSHAKING:
            return self._handshake_events
        return super(SSLIOStream, self)._wanted_events()

    def _do_handshake(self):
        try:
            self.socket.do_handshake()
        except ssl.SSLError as e:
            code = e.args[0] if e.args else None
            if code in (ssl.SSL_ERROR_WANT_READ, ssl.SSL_ERROR_WANT_WRITE):
                self._handshake_events = _READ if code == ssl.SSL_ERROR_WANT_READ else _WRITE
                self._update_interest()
            else:
                self._handshake_failed(e)
            return
        except (ssl.CertificateError, socket.error, IOError, OSError) as e:
            # CertificateError: a name mismatch, checked after the handshake before 3.7.
            self._handshake_failed(e)
            return
        self._state = OPEN
        self._resolve_handshake_futures()
        self._start_pending_io()

    def _resolve_handshake_futures(self):
        for future in (self._connect_future, self._handshake_future):
            if future is not None:
                future_set_result_unless_cancelled(future, self)
        self._connect_future = self._handshake_future = None

    def _fail_handshake_futures(self, error):
        for future in (self._connect_future, self._handshake_future):
            if future is not None:
                future_set_exception_unless_cancelled(future, error)
        self._connect_future = self._handshake_future = None

    def _handshake_failed(self, error):
        # Whoever waits for the handshake gets its own error, which says what went
        # wrong (a certificate that does not verify...), not just "closed"; it is logged
        # only when nobody waits (a server's stream), else the waiter's report says it twice.
        nobody_waits = self._connect_future is None and self._handshake_future is None
        if nobody_waits and errno_from_exception(error) not in self._peer_gone_errnos:
            gen_log.warning('TLS handshake failed on %r: %s', self, error)
        self._fail_handshake_futures(error)
        self.close(exc_info=error)

    def _signal_closed(self):
        self._fail_handshake_futures(self._closed_error())
        super(SSLIOStream, self)._signal_closed()

    def _error_outcome(self, error):
        code = error.args[0] if isinstance(error, ssl.SSLError) and error.args else None
        if code in (ssl.SSL_ERROR_WANT_READ, ssl.SSL_ERROR_WANT_WRITE):
            return _WOULD_BLOCK  # a renegotiation, or no whole record yet
        if code in (ssl.SSL_ERROR_EOF, ssl.SSL_ERROR_ZERO_RETURN) or _is_ragged_eof(error):
            return _EOF
        return super(SSLIOStream, self)._error_outcome(error)


class PipeIOStream(BaseIOStream):
    """A stream over a pipe's file descriptor: one end of `os.pipe()`, or a subprocess's
    stdin or stdout. The stream owns `fd`, makes it non-blocking and closes it.

    A pipe goes one way, so read from a read end and write to a write end. When the
    writer closes, the reading stream meets EOF and closes, as a socket's does when its
    peer closes; when the reader goes away, the writing stream closes too (its pending
    writes fail with StreamClosedError), its `error` EPIPE or EBADF, as in Tornado 5.1.
    """
    # EBADF: a recv on a write end, after the poll reported an error there because the
    # reader went away.
    _peer_gone_errnos = _CONNECTION_LOST | frozenset([errno.EBADF])

    def __init__(self, fd, *args, **kwargs):
        self.fd = fd
        self.socket = _PipeFile(fd)
        super(PipeIOStream, self).__init__(*args, **kwargs)


class _PipeFile(object):
    """A pipe's file descriptor with the socket methods BaseIOStream calls."""

    def __init__(self, fd):
        self._fd = fd
        self._file = io.FileIO(fd, 'r+')  # for readinto, on 2.7 too; it closes `fd`
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)

    def fileno(self):
        return self._fd

    def recv(self, size):
        return os.read(self._fd, size)

    def recv_into(self, view):
        return _count_or_would_block(self._file.readinto(view))

    def send(self, data):
        return os.write(self._fd, data)

    def close(self):
        self._file.close()


def _count_or_would_block(size):
    """A readinto's count; its None (it would block) raised, as a socket's recv raises."""
    if size is None:
        raise IOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
    return size


# -- pending reads ---------------------------------------------------------------------

class _PendingRead(object):
    """One read waiting for the buffer to hold what it asks for."""
    __slots__ = ('future',)
    reads_directly = False  # whether direct_view may give somewhere else to read into
    min_bytes = 1  # a buffer holding fewer bytes cannot satisfy the read
    # An arrival into an empty buffer of min_bytes to max_whole bytes is the whole result
    # (of a read_bytes): the read gets that very bytes object. -1: no arrival is.
    max_whole = -1

    def complete(self, buffer):
        """The read's result, taken from `buffer`, or _NOT_YET if it is not there yet."""
        size = self.find(buffer)
        return _NOT_YET if size is None else self.take(buffer, size)

    def find(self, buffer):
        """How many bytes to take from the front of `buffer`, or None if not there yet."""
        raise NotImplementedError()

    def take(self, buffer, size):
        return buffer.consume(size)

    def at_close(self, buffer):
        """The size to take when the stream closes cleanly, or None to fail instead."""
        return None

    def direct_view(self, buffer):
        """Where the socket may read into instead of `buffer`, if anywhere."""
        return None

    def unread(self, buffer):
        """The read was cancelled: give `buffer` back anything taken from it."""


class _ReadBytes(_PendingRead):
    __slots__ = ('num_bytes', 'partial', 'min_bytes', 'max_whole')

    def __init__(self, num_bytes, partial):
        self.num_bytes = self.max_whole = num_bytes
        self.partial = partial
        self.min_bytes = min(num_bytes, 1) if partial else num_bytes

    def complete(self, buffer):
        # find() and take() in one call: the hot path of every read_bytes.
        available = buffer.size
        if available >= self.num_bytes:
            return buffer.consume(self.num_bytes)
        if self.partial and available:
            return buffer.consume(available)
        return _NOT_YET


class _ReadUntil(_PendingRead):
    __slots__ = ('delimiter', 'max_bytes', 'scanned')

    def __init__(self, delimiter, max_bytes):
        self.delimiter = delimiter
        self.max_bytes = max_bytes
        self.scanned = 0

    def find(self, buffer):
        index = buffer.find(self.delimiter, self.scanned)
        if index < 0:
            # The next search starts where a delimiter split across arrivals may begin,
            # so bytes trickling in are scanned about once each.
            self.scanned = max(0, buffer.size - len(self.delimiter) + 1)
            _check_max_bytes(self.max_bytes, buffer.size, self.delimiter)
            return None
        size = index + len(self.delimiter)
        _check_max_bytes(self.max_bytes, size, self.delimiter)
        return size


class _ReadUntilRegex(_PendingRead):
    __slots__ = ('regex', 'max_bytes')
    min_bytes = 0  # the regex may match the empty string

    def __init__(self, regex, max_bytes):
        self.regex = regex
        self.max_bytes = max_bytes

    def find(self, buffer):
        end = buffer.search(self.regex)
        if end < 0:
            _check_max_bytes(self.max_bytes, buffer.size, self.regex.pattern)
            return None
        _check_max_bytes(self.max_bytes, end, self.regex.pattern)
        return end


class _ReadUntilClose(_PendingRead):
    __slots__ = ()

    def find(self, buffer):
        return None

    def at_close(self, buffer):
        return buffer.size


class _ReadInto(_PendingRead):
    __slots__ = ('view', 'partial', 'filled')
    reads_directly = True
    min_bytes = 0  # an empty `view` is filled at once

    def __init__(self, view, partial):
        self.view = view
        self.partial = partial
        self.filled = 0

    def find(self, buffer):
        # Moves what the buffer has into the caller's at once; then the buffer is empty
        # and the socket reads straight into the rest (direct_view).
        if buffer.size:
            self.filled += buffer.copy_to(self.view[self.filled:])
        if self.filled == len(self.view) or (self.partial and self.filled):
            return 0
        return None

    def take(self, buffer, size):
        return self.filled

    def direct_view(self, buffer):
        return None if buffer.size else self.view[self.filled:]

    def unread(self, buffer):
        # While this read is pending every byte goes to its view, so `buffer` is empty
        # and appending restores the order.
        if self.filled:
            buffer.append(self.view[:self.filled])


def _check_max_bytes(max_bytes, size, delimiter):
    if max_bytes is not None and size > max_bytes:
        raise UnsatisfiableReadError('delimiter %r not found within %d bytes'
                                     % (delimiter, max_bytes))


def _exception_from(exc_info):
    if isinstance(exc_info, tuple):
        return exc_info[1]
    if isinstance(exc_info, BaseException):
        return exc_info
    return sys.exc_info()[1]


def _is_ragged_eof(error):
    # The peer closed without a TLS close_notify. ssl (suppress_ragged_eofs) takes that
    # as a plain EOF, but OpenSSL 3 reports it as a protocol error that Pythons before
    # 3.10 do not recognise; Python 3.10+ raises SSLEOFError, handled above.
    return 'unexpected eof while reading' in str(error)


def _is_connected(sock):
    try:
        sock.getpeername()
    except socket.error:
        return False
    return True


# -- Tornado 5.1's callback adapters, fd hooks and private buffer, re-exported ------------
# (tests/test_layering.py: only here, last). The methods above call the adapters through
# `_legacy` when given a callback= argument, or a subclass gives no socket.
from tinytornado import _iostream_legacy as _legacy  # noqa: E402
from tinytornado._iostream_legacy import _StreamBuffer  # noqa: E402
