"""Tornado 5.1's callback= and streaming_callback= arguments of the streams, which legacy
code passes: each returns None, calls back in a later loop pass, and is an adapter over
the Future the call makes without them."""
from __future__ import absolute_import, division, print_function

import errno
import fcntl
import gc
import io
import logging
import os
import socket
import warnings
import weakref

import pytest

from net_helpers import run, stream_pair, tls_server_and_client  # noqa: F401
from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.iostream import (
    BaseIOStream, IOStream, PipeIOStream, SSLIOStream, StreamClosedError,
)
from tinytornado.log import app_log, gen_log
from tinytornado.netutil import bind_sockets
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import ExpectLog

# Each test here passes callbacks on purpose; one checks the warnings they give.
pytestmark = pytest.mark.filterwarnings('ignore::DeprecationWarning')


def recorder(trace, name):
    """A callback that appends ``(name, *args)`` to `trace`, and a Future of its args."""
    called = Future()

    def callback(*args):
        trace.append((name,) + args)
        called.set_result(args)
    return callback, called


def watch_close(stream, trace):
    """Append ``('closed',)`` to `trace` when `stream` closes; a Future of that."""
    callback, closed = recorder(trace, 'closed')
    stream.set_close_callback(callback)
    return closed


LEGACY_READS = {
    'read_bytes': lambda stream, callback: stream.read_bytes(6, callback),
    'read_until': lambda stream, callback: stream.read_until(b'\n', callback),
    'read_until_regex': lambda stream, callback: stream.read_until_regex(b'o\\s', callback),
    'read_until_close': lambda stream, callback: stream.read_until_close(callback),
}


@pytest.mark.parametrize('read_name', sorted(LEGACY_READS))
def test_a_read_with_a_callback_returns_none_and_calls_back_in_a_later_pass(
        io_loop, stream_pair, read_name):
    writer, reader = stream_pair
    trace = []
    callback, called = recorder(trace, 'callback')

    @gen.coroutine
    def main():
        yield writer.write(b'hello\n')
        writer.close()
        # The bytes are there: the read is satisfied inside the call, the callback later.
        trace.append(('returned', LEGACY_READS[read_name](reader, callback)))
        trace.append('after the call')
        yield called

    run(io_loop, main)
    assert trace == [('returned', None), 'after the call', ('callback', b'hello\n')]


def test_read_into_with_a_callback_gets_the_count(io_loop, stream_pair):
    writer, reader = stream_pair
    trace = []
    callback, called = recorder(trace, 'callback')
    buf = bytearray(5)

    @gen.coroutine
    def main():
        assert reader.read_into(buf, callback, partial=True) is None
        yield writer.write(b'abc')
        yield called

    run(io_loop, main)
    assert trace == [('callback', 3)] and buf[:3] == b'abc'


def test_write_callbacks_run_once_their_bytes_are_sent(io_loop, stream_pair):
    writer, reader = stream_pair
    trace = []
    large = b'x' * (4 * 1024 * 1024)  # more than the socket buffers take at once

    def on_sent(name):
        trace.append((name, writer.writing()))

    @gen.coroutine
    def main():
        callback, empty_sent = recorder(trace, 'empty')
        assert writer.write(b'', callback) is None
        assert writer.write(large, lambda: on_sent('large')) is None
        trace.append('after the calls')
        received = yield reader.read_bytes(len(large))
        yield empty_sent
        yield gen.moment
        raise gen.Return(received)

    assert run(io_loop, main) == large
    assert trace == ['after the calls', ('empty',), ('large', False)]


def test_connect_with_a_callback_calls_it_with_no_arguments(io_loop):
    listener = bind_sockets(0, '127.0.0.1')[0]
    stream = IOStream(socket.socket())
    trace = []
    callback, connected = recorder(trace, 'connected')

    @gen.coroutine
    def main():
        trace.append(('returned', stream.connect(listener.getsockname(), callback)))
        yield connected
        yield stream.write(b'ping')

    run(io_loop, main)
    assert trace == [('returned', None), ('connected',)]
    listener.setblocking(True)
    server, _ = listener.accept()
    assert server.recv(4) == b'ping'
    for sock in (server, listener):
        sock.close()
    stream.close()


def test_a_refused_connect_is_logged_not_called_back_and_closes(io_loop):
    # A socket that is bound but not listening refuses connections, and stays bound.
    bound = socket.socket()
    bound.bind(('127.0.0.1', 0))
    stream = IOStream(socket.socket())
    trace = []
    closed = watch_close(stream, trace)

    @gen.coroutine
    def main():
        with ExpectLog(gen_log, 'Connect error'):
            stream.connect(bound.getsockname(), lambda: trace.append('connected'))
            yield closed
        yield gen.moment

    run(io_loop, main)
    assert trace == [('closed',)]
    assert getattr(stream.error, 'errno', None) == errno.ECONNREFUSED
    bound.close()


def test_an_exception_in_a_callback_is_logged_and_closes_the_stream(io_loop, stream_pair):
    writer, reader = stream_pair
    trace = []
    closed = watch_close(reader, trace)

    def failing(data):
        trace.append(('callback', data))
        raise ZeroDivisionError('the callback failed')

    @gen.coroutine
    def main():
        # Tornado 5.1's tests expect one of these two messages.
        with ExpectLog(app_log, '(Uncaught exception|Exception in callback)'):
            reader.read_bytes(1, failing)
            yield writer.write(b'1')
            yield closed

    run(io_loop, main)
    assert trace == [('callback', b'1'), ('closed',)]
    assert isinstance(reader.error, ZeroDivisionError) and reader.closed()


def test_read_callbacks_run_before_the_close_callback(io_loop, stream_pair):
    writer, reader = stream_pair
    trace = []
    closed = watch_close(reader, trace)

    def first(data):
        trace.append(('first', data))
        reader.read_bytes(1, lambda data: trace.append(('second', data)))
        writer.close()

    @gen.coroutine
    def main():
        yield writer.write(b'12')
        reader.read_bytes(1, first)
        yield closed

    run(io_loop, main)
    assert trace == [('first', b'1'), ('second', b'2'), ('closed',)]


def test_a_read_that_fails_is_not_called_back_and_logs_nothing(io_loop, stream_pair,
                                                               app_log_records):
    writer, reader = stream_pair
    trace = []
    closed = watch_close(reader, trace)

    @gen.coroutine
    def main():
        reader.read_until(b'\n', lambda data: trace.append(('read', data)))
        yield writer.write(b'no newline')
        writer.close()
        yield closed
        yield gen.moment

    run(io_loop, main)
    gc.collect()  # an unretrieved failure would be logged as its Future is collected
    assert trace == [('closed',)]
    assert app_log_records == []


def test_a_read_with_a_callback_on_a_closed_stream_raises(io_loop, stream_pair):
    _, reader = stream_pair
    reader.close()
    with pytest.raises(StreamClosedError):
        reader.read_bytes(1, lambda data: None)
    assert not reader.reading()


def test_read_until_close_on_a_closed_stream_calls_back_with_what_is_left(io_loop,
                                                                          stream_pair):
    writer, reader = stream_pair
    trace = []
    callback, called = recorder(trace, 'rest')

    @gen.coroutine
    def main():
        yield writer.write(b'abc')
        first = yield reader.read_bytes(1)
        reader.close()
        reader.read_until_close(callback)
        yield called
        raise gen.Return(first)

    assert run(io_loop, main) == b'a'
    assert trace == [('rest', b'bc')]


def test_an_unsatisfiable_read_with_a_callback_closes_without_raising(io_loop, stream_pair,
                                                                     caplog):
    caplog.set_level(logging.INFO, logger=gen_log.name)
    writer, reader = stream_pair
    trace = []
    closed = watch_close(reader, trace)

    @gen.coroutine
    def main():
        yield writer.write(b'123456')
        with ExpectLog(gen_log, 'Unsatisfiable read'):
            # Found in the buffer inside the call, yet reported as a later one would be.
            result = reader.read_until(b'def', lambda data: trace.append('read'),
                                       max_bytes=5)
        yield closed
        raise gen.Return(result)

    assert run(io_loop, main) is None
    assert trace == [('closed',)]


class _FailingSocket(object):
    """A socket whose recv fails with `error`: what BaseIOStream needs of one, no more."""

    def __init__(self, sock, error):
        self.sock = sock
        self.error = error
        self.fileno = sock.fileno
        self.send = sock.send
        self.close = sock.close

    def recv(self, size):
        raise self.error

    recv_into = recv


class _StreamOver(BaseIOStream):
    def __init__(self, sock):
        self.socket = sock
        super(_StreamOver, self).__init__()


@pytest.mark.parametrize('number, raised', [(errno.EIO, True), (errno.ECONNRESET, False)],
                         ids=['EIO', 'ECONNRESET'])
def test_a_socket_error_met_inside_a_read_with_a_callback_is_raised(io_loop, number,
                                                                    raised):
    # As in Tornado 5.1, unless the peer went away: the close callback reports that.
    left, right = socket.socketpair()
    error = socket.error(number, 'failed')
    stream = _StreamOver(_FailingSocket(left, error))
    if raised:
        with ExpectLog(gen_log, 'Read error'):
            with pytest.raises(socket.error) as info:
                stream.read_bytes(1, lambda data: None)
        assert info.value is error
    else:
        assert stream.read_bytes(1, lambda data: None) is None
    assert stream.closed() and stream.error is error
    right.close()


# -- streaming callbacks ---------------------------------------------------------------

def chunk_recorder(trace):
    """A streaming callback that appends ``('chunk', data)`` to `trace`, and a list whose
    last Future it resolves (append a new one before awaiting the next chunk)."""
    arrived = [Future()]

    def on_chunk(data):
        trace.append(('chunk', data))
        arrived[-1].set_result(None)
    return on_chunk, arrived


def test_streaming_read_bytes_hands_chunks_on_and_leaves_the_rest(io_loop, stream_pair):
    writer, reader = stream_pair
    trace = []
    on_chunk, arrived = chunk_recorder(trace)
    final, done = recorder(trace, 'final')

    @gen.coroutine
    def main():
        assert reader.read_bytes(6, callback=final, streaming_callback=on_chunk) is None
        yield writer.write(b'1234')
        yield arrived[-1]
        arrived.append(Future())
        yield writer.write(b'5678')
        yield done
        rest = yield reader.read_bytes(2)
        raise gen.Return(rest)

    assert run(io_loop, main) == b'78'
    assert trace == [('chunk', b'1234'), ('chunk', b'56'), ('final', b'')]


@pytest.mark.parametrize('form', ['callback', 'future'])
def test_streaming_read_until_close_ends_with_an_empty_result(io_loop, stream_pair, form):
    writer, reader = stream_pair
    trace = []
    on_chunk, arrived = chunk_recorder(trace)

    @gen.coroutine
    def main():
        if form == 'callback':
            final, ending = recorder(trace, 'final')
            assert reader.read_until_close(final, streaming_callback=on_chunk) is None
        else:
            ending = reader.read_until_close(streaming_callback=on_chunk)
        for data in (b'1234', b'5678'):
            yield writer.write(data)
            yield arrived[-1]
            arrived.append(Future())
        writer.close()
        result = yield ending
        if form == 'future':
            trace.append(('final', result))

    run(io_loop, main)
    assert trace == [('chunk', b'1234'), ('chunk', b'5678'), ('final', b'')]


def test_streaming_starts_with_the_bytes_already_buffered(io_loop, stream_pair):
    writer, reader = stream_pair
    trace = []
    final, done = recorder(trace, 'final')

    @gen.coroutine
    def main():
        yield writer.write(b'abcd\r\nefgh')
        line = yield reader.read_until(b'\r\n')
        trace.append(('line', line))
        reader.read_until_close(final, streaming_callback=lambda data: trace.append(
            ('chunk', data)))
        writer.close()
        yield done

    run(io_loop, main)
    assert trace == [('line', b'abcd\r\n'), ('chunk', b'efgh'), ('final', b'')]


def test_streaming_zero_bytes_ends_at_once(io_loop, stream_pair):
    _, reader = stream_pair
    chunks = []
    future = reader.read_bytes(0, streaming_callback=chunks.append)
    assert future.result() == b'' and chunks == [] and not reader.reading()


def test_a_streaming_read_bytes_cut_short_by_the_close_fails(io_loop, stream_pair):
    writer, reader = stream_pair
    chunks = []

    @gen.coroutine
    def main():
        reading = reader.read_bytes(10, streaming_callback=chunks.append)
        yield writer.write(b'1234')
        writer.close()
        with pytest.raises(StreamClosedError):
            yield reading
        yield gen.moment

    run(io_loop, main)
    assert chunks == [b'1234']


def test_cancelling_a_streaming_read_keeps_the_unread_bytes(io_loop, stream_pair):
    writer, reader = stream_pair
    chunks = []
    first = Future()

    def on_chunk(data):
        chunks.append(data)
        first.set_result(None)

    @gen.coroutine
    def main():
        reading = reader.read_until_close(streaming_callback=on_chunk)
        yield writer.write(b'abc')
        yield first
        assert reading.cancel() and reading.cancelled() and not reader.reading()
        yield writer.write(b'def')
        rest = yield reader.read_bytes(3)
        raise gen.Return(rest)

    assert run(io_loop, main) == b'def'
    assert chunks == [b'abc']


# -- warnings, names, TLS --------------------------------------------------------------

def test_callback_arguments_warn_at_the_caller_and_futures_do_not(io_loop, stream_pair):
    writer, reader = stream_pair
    listener = bind_sockets(0, '127.0.0.1')[0]
    connecting = IOStream(socket.socket())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        writer.write(b'ab')
        reader.read_bytes(1)
        reader.read_until_close()
        connecting.connect(listener.getsockname())
        modern = list(caught)
        writer.write(b'cd', lambda: None)
        writer.read_bytes(1, lambda data: None)
        connecting_too = IOStream(socket.socket())
        connecting_too.connect(listener.getsockname(), lambda: None)
        connecting_too.read_until_close(streaming_callback=lambda data: None)
    legacy = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert modern == [] and len(legacy) == 4
    assert set(w.filename for w in legacy) == set([__file__.replace('.pyc', '.py')])
    for closing in (connecting, connecting_too, listener):
        closing.close()


def test_the_stream_classes_are_base_iostreams():
    assert issubclass(IOStream, BaseIOStream) and issubclass(SSLIOStream, IOStream)
    assert issubclass(PipeIOStream, BaseIOStream) and not issubclass(PipeIOStream, IOStream)


def test_tls_connect_and_wait_for_handshake_with_callbacks(io_loop):
    trace = []
    server_callback, server_done = recorder(trace, 'server handshake')
    client_callback, client_done = recorder(trace, 'client connected')

    class Server(TCPServer):
        def handle_stream(self, stream, address):
            self.stream = stream
            trace.append(('wait_for_handshake', stream.wait_for_handshake(server_callback)))

    server, address, client = tls_server_and_client(Server)

    @gen.coroutine
    def main():
        returned = client.connect(address, client_callback, server_hostname='localhost')
        trace.append(('connect', returned))
        yield [server_done, client_done]

    run(io_loop, main)
    assert trace[:2] == [('connect', None), ('wait_for_handshake', None)]
    assert sorted(trace[2:]) == [('client connected',), ('server handshake',)]
    assert client.socket.version().startswith('TLS')
    server.stream.close()
    client.close()
    server.stop()


# -- subclasses written for Tornado 5.1: no socket, four fd hooks ------------------------

class FdStream(BaseIOStream):
    """A stream as Tornado 5.1 documents subclassing BaseIOStream (its PipeIOStream is one):
    no socket, but fileno, close_fd, write_to_fd and read_from_fd over a file descriptor,
    here a dup of one end of a socketpair. `read_error` or `write_error`, once set, is
    what that hook raises; `closes` counts the close_fd calls."""

    def __init__(self, sock, **kwargs):
        self.fd = os.dup(sock.fileno())
        self._file = io.FileIO(self.fd, 'r+')
        flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        fcntl.fcntl(self.fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self.read_error = self.write_error = None
        self.closes = 0
        super(FdStream, self).__init__(**kwargs)

    def fileno(self):
        return self.fd

    def close_fd(self):
        self.closes += 1
        self._file.close()

    def write_to_fd(self, data):
        if self.write_error is not None:
            raise self.write_error
        return os.write(self.fd, data)

    def read_from_fd(self, buf):
        if self.read_error is not None:
            raise self.read_error
        return self._file.readinto(buf)  # None when it would block, as the hook says


@pytest.fixture
def fd_stream_pair(io_loop):
    """An FdStream and an IOStream joined by a socketpair; closed after the test."""
    left, right = socket.socketpair()
    streams = FdStream(left), IOStream(right)
    left.close()  # the FdStream has its own descriptor
    yield streams
    for stream in streams:
        stream.close()


def test_a_51_subclass_reads_writes_and_sees_the_close(io_loop, fd_stream_pair):
    stream, peer = fd_stream_pair
    trace = []

    @gen.coroutine
    def main():
        closed = watch_close(stream, trace)
        yield stream.write(b'ping\n')
        trace.append(('peer got', (yield peer.read_until(b'\n'))))
        yield peer.write(b'line\nabcdefgh')
        trace.append(('line', (yield stream.read_until(b'\n'))))
        trace.append(('partial', (yield stream.read_bytes(100, partial=True))))
        yield peer.write(b'12345')
        trace.append(('bytes', (yield stream.read_bytes(3))))
        peer.close()
        trace.append(('rest', (yield stream.read_until_close())))
        yield closed

    run(io_loop, main)
    assert trace == [('peer got', b'ping\n'), ('line', b'line\n'), ('partial', b'abcdefgh'),
                     ('bytes', b'123'), ('rest', b'45'), ('closed',)]
    stream.close()
    assert stream.closes == 1 and stream.error is None


def test_a_51_subclass_moves_more_than_the_kernel_buffers_at_once(io_loop, fd_stream_pair):
    # write_to_fd takes part of it, the rest waits for the loop; reads go through the
    # stream's buffer and straight into read_into's.
    stream, peer = fd_stream_pair
    data = os.urandom(1 << 20)
    buf = bytearray(len(data))

    @gen.coroutine
    def main():
        written = stream.write(data)
        assert not written.done()
        received = yield peer.read_bytes(len(data))
        yield written
        # Read first: with no read pending, the stream reads only a chunk ahead.
        filled = stream.read_into(buf)
        yield peer.write(data)
        count = yield filled
        raise gen.Return((received, count))

    assert run(io_loop, main) == (data, len(data))
    assert buf == data


def test_a_51_subclass_closes_its_fd_once(io_loop, fd_stream_pair):
    stream, _ = fd_stream_pair
    pending = stream.read_bytes(1)
    stream.close()
    stream.close()
    assert stream.closes == 1 and stream.closed()
    assert isinstance(pending.exception(), StreamClosedError)


def read_fails(io_loop, stream, peer):
    """The StreamClosedError that a read on `stream` fails with once `peer` sends a byte."""

    @gen.coroutine
    def main():
        yield peer.write(b'x')
        with pytest.raises(StreamClosedError) as info:
            yield stream.read_bytes(1)
        raise gen.Return(info.value)

    return run(io_loop, main)


@pytest.mark.parametrize('number, logged', [(errno.EIO, True), (errno.ECONNRESET, False)],
                         ids=['EIO', 'ECONNRESET'])
def test_a_51_subclass_read_error_closes_the_stream_as_51_reports_it(
        io_loop, fd_stream_pair, caplog, number, logged):
    # A warning, unless the peer went away; the read fails with the hook's error as the
    # StreamClosedError's real_error, which is also the stream's error.
    stream, peer = fd_stream_pair
    error = stream.read_error = socket.error(number, 'failed')

    with caplog.at_level(logging.WARNING, logger=gen_log.name):
        closed_error = read_fails(io_loop, stream, peer)
    assert closed_error.real_error is error and stream.error is error
    assert stream.closed() and stream.closes == 1
    warnings = [r.getMessage() for r in caplog.records if r.name == gen_log.name]
    assert [w.startswith('Read error') for w in warnings] == ([True] if logged else [])


def test_a_51_subclass_write_error_fails_the_write_as_51_reports_it(io_loop, fd_stream_pair):
    stream, _ = fd_stream_pair
    error = stream.write_error = socket.error(errno.EIO, 'failed')

    @gen.coroutine
    def main():
        with ExpectLog(gen_log, 'Write error'):
            with pytest.raises(StreamClosedError) as info:
                yield stream.write(b'lost')
        raise gen.Return(info.value)

    assert run(io_loop, main).real_error is error
    assert stream.error is error and stream.closed() and stream.closes == 1


def test_a_51_read_from_fd_may_close_the_stream_and_return_none(io_loop, fd_stream_pair):
    # As 5.1's own PipeIOStream does when the poll reports a write end's reader gone.
    stream, peer = fd_stream_pair
    error = socket.error(errno.EBADF, 'bad file descriptor')

    def read_from_fd(buf):
        stream.close(exc_info=error)
        return None
    stream.read_from_fd = read_from_fd

    assert read_fails(io_loop, stream, peer).real_error is error
    assert stream.closes == 1


def test_a_51_read_from_fd_that_keeps_bytes_is_read_until_it_would_block(io_loop):
    left, right = socket.socketpair()

    class Kept(FdStream):
        """Takes all the descriptor has and hands it out three bytes a call."""
        kept = b''

        def read_from_fd(self, buf):
            if not self.kept:
                self.kept = self._file.read(1 << 16)
                if self.kept is None:  # nothing to read without blocking
                    self.kept = b''
                    return None
                if not self.kept:
                    return 0
            size = min(3, len(self.kept))
            buf[:size] = self.kept[:size]
            self.kept = self.kept[size:]
            return size

    stream = Kept(left)
    left.close()
    right.sendall(b'hello\nworld\n')

    @gen.coroutine
    def main():
        line = yield stream.read_until(b'world\n')
        raise gen.Return(line)

    assert run(io_loop, main, timeout=5) == b'hello\nworld\n'
    stream.close()
    right.close()


def test_a_closed_51_subclass_is_freed_without_the_collector(io_loop):
    # Its buffers would otherwise wait for the collector's next full pass.
    left, right = socket.socketpair()
    stream = FdStream(left)
    stream.close()
    freed = weakref.ref(stream)
    gc.disable()
    try:
        del stream
        assert freed() is None
    finally:
        gc.enable()
    left.close()
    right.close()


def test_a_subclass_with_no_socket_and_no_hooks_is_refused(io_loop):
    class Incomplete(BaseIOStream):
        def fileno(self):
            return 0

    with pytest.raises(NotImplementedError) as info:
        Incomplete()
    assert 'close_fd, write_to_fd, read_from_fd' in str(info.value)


def test_our_streams_have_the_51_hooks(io_loop, stream_pair):
    # read_from_fd's None (nothing yet), count and 0 (EOF), as 5.1's streams give them.
    reader_fd, writer_fd = os.pipe()
    pipe = PipeIOStream(reader_fd)
    writer, reader = stream_pair
    buf = bytearray(8)
    for stream, write in ((pipe, lambda data: os.write(writer_fd, data)),
                          (reader, writer.write_to_fd)):
        assert stream.read_from_fd(buf) is None
        assert write(b'abc') == 3
        assert stream.read_from_fd(buf) == 3 and buf[:3] == b'abc'
    os.close(writer_fd)
    writer.close()
    assert pipe.read_from_fd(buf) == 0 and reader.read_from_fd(buf) == 0
    pipe.close()


def test_close_calls_close_fd_as_in_51(io_loop):
    trace = []

    class Traced(IOStream):
        def close_fd(self):
            trace.append(self.socket.fileno())
            super(Traced, self).close_fd()

    left, right = socket.socketpair()
    stream = Traced(left)
    fd = left.fileno()
    stream.close()
    stream.close()
    assert trace == [fd] and left.fileno() == -1
    right.close()
