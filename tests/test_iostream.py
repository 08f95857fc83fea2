from __future__ import absolute_import, division, print_function

import errno
import hashlib
import os
import socket
import ssl
import struct

import pytest

from net_helpers import (  # noqa: F401  (stream_pair: a fixture)
    TEST_HOSTNAME, open_fds, run, stream_pair, tls_files, tls_server_and_client,
)
from tinytornado import gen
from tinytornado._bytebuffer import ByteBuffer
from tinytornado.concurrent import CancelledError, Future
from tinytornado.iostream import (
    IOStream, PipeIOStream, SSLIOStream, StreamBufferFullError, StreamClosedError,
    UnsatisfiableReadError, _ReadUntil,
)
from tinytornado.netutil import bind_sockets, ssl_options_to_context

MESSAGES = [b'alpha\r\n', b'\r\n', b'beta gamma\r\n', b'\x00\xff' * 2600 + b'\r\n',
            b'omega\r\n']
PAYLOAD = b''.join(MESSAGES)
PARTIAL_LIMIT = 1000


# -- every read mode, with data arriving whole, byte by byte and coalesced -------------

@gen.coroutine
def read_into_buffer(stream, size, partial=False):
    buf = bytearray(size)
    filled = yield stream.read_into(buf, partial=partial)
    raise gen.Return(bytes(buf[:filled]))


# Each reads one message: given the stream and the message it should return.
EXACT_READS = {
    'read_bytes': lambda stream, message: stream.read_bytes(len(message)),
    'read_until': lambda stream, message: stream.read_until(b'\r\n'),
    'read_until_regex': lambda stream, message: stream.read_until_regex(b'\r?\n'),
    'read_into': lambda stream, message: read_into_buffer(stream, len(message)),
}

# Each reads whatever is there, at most PARTIAL_LIMIT bytes, or everything until the close.
PIECEWISE_READS = {
    'read_bytes_partial': lambda stream: stream.read_bytes(PARTIAL_LIMIT, partial=True),
    'read_into_partial': lambda stream: read_into_buffer(stream, PARTIAL_LIMIT, True),
    'read_until_close': lambda stream: stream.read_until_close(),
}


def read_messages(name):
    @gen.coroutine
    def read(stream):
        chunks = []
        for message in MESSAGES:
            chunks.append((yield EXACT_READS[name](stream, message)))
        raise gen.Return(chunks)
    return read


def read_pieces(name):
    @gen.coroutine
    def read(stream):
        chunks = []
        received = 0
        while received < len(PAYLOAD):
            chunks.append((yield PIECEWISE_READS[name](stream)))
            received += len(chunks[-1])
        raise gen.Return(chunks)
    return read


@gen.coroutine
def send_whole(writer):
    yield writer.write(PAYLOAD)


@gen.coroutine
def send_bytewise(writer):
    for index in range(len(PAYLOAD)):
        yield writer.write(PAYLOAD[index:index + 1])
        # Two passes: the reader's handler runs before the next byte is sent.
        yield gen.moment
        yield gen.moment


@gen.coroutine
def feed_then_read(writer, reader, send, read):
    """Reads start first, then the writer sends and closes."""
    reading = read(reader)
    yield send(writer)
    writer.close()
    chunks = yield reading
    raise gen.Return(chunks)


@gen.coroutine
def feed_coalesced_then_read(writer, reader, read):
    """Everything arrives (and the close) before the first read."""
    closed = Future()
    reader.set_close_callback(lambda: closed.set_result(None))
    yield writer.write(PAYLOAD)
    writer.close()
    yield closed
    chunks = yield read(reader)
    raise gen.Return(chunks)


def arrive(io_loop, stream_pair, arrival, read):
    writer, reader = stream_pair
    if arrival == 'coalesced':
        return run(io_loop, lambda: feed_coalesced_then_read(writer, reader, read))
    send = send_whole if arrival == 'whole' else send_bytewise
    return run(io_loop, lambda: feed_then_read(writer, reader, send, read))


ARRIVALS = ['whole', 'bytewise', 'coalesced']


@pytest.mark.parametrize('arrival', ARRIVALS)
@pytest.mark.parametrize('read_name', sorted(EXACT_READS))
def test_exact_reads_return_each_message(io_loop, stream_pair, arrival, read_name):
    assert arrive(io_loop, stream_pair, arrival, read_messages(read_name)) == MESSAGES


@pytest.mark.parametrize('arrival', ARRIVALS)
@pytest.mark.parametrize('read_name', sorted(PIECEWISE_READS))
def test_piecewise_reads_return_the_payload_in_order(io_loop, stream_pair, arrival,
                                                     read_name):
    chunks = arrive(io_loop, stream_pair, arrival, read_pieces(read_name))
    assert b''.join(chunks) == PAYLOAD
    if read_name != 'read_until_close':
        assert all(0 < len(chunk) <= PARTIAL_LIMIT for chunk in chunks)


def test_a_read_the_buffer_can_satisfy_is_resolved_at_once(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        yield writer.write(b'abcdef')
        first = yield reader.read_bytes(2)
        # The rest came with the first recv: these need no loop pass.
        second = reader.read_bytes(2)
        third = reader.read_until(b'f') if second.done() else None
        raise gen.Return([first, second.done() and second.result(),
                          third is not None and third.done() and third.result()])

    assert run(io_loop, main) == [b'ab', b'cd', b'ef']


def test_a_second_pending_read_is_an_error(io_loop, stream_pair):
    _, reader = stream_pair
    pending = reader.read_bytes(1)
    with pytest.raises(RuntimeError):
        reader.read_until(b'x')
    assert reader.reading() and not pending.done()
    reader.close()
    assert isinstance(pending.exception(), StreamClosedError)  # the first one goes on


def test_zero_byte_read_and_write(io_loop, stream_pair):
    writer, reader = stream_pair
    assert writer.write(b'').done()
    assert reader.read_bytes(0).result() == b''


@pytest.mark.parametrize('closed', [False, True], ids=['open', 'closed'])
def test_reads_that_need_no_bytes_are_resolved_at_once(io_loop, stream_pair, closed):
    _, reader = stream_pair
    if closed:
        reader.close()
    results = []
    for start in (lambda: reader.read_bytes(0), lambda: reader.read_bytes(0, partial=True),
                  lambda: reader.read_until_regex(b'x*'),
                  lambda: reader.read_into(bytearray(0))):
        future = start()
        results.append(future.done() and future.result())
    assert results == [b'', b'', b'', 0]


def test_a_write_sent_at_once_is_resolved_whatever_is_done_with_an_earlier_one(io_loop,
                                                                              stream_pair):
    writer, reader = stream_pair
    first = writer.write(b'one ')
    assert not first.cancel() and first.result() is None
    called = []
    first.add_done_callback(called.append)
    assert called == [first]
    second = writer.write(b'two')
    assert second.done() and not second.cancelled() and second.result() is None
    assert io_loop.run_sync(lambda: reader.read_bytes(7)) == b'one two'


# -- a read that one recv satisfies takes the received bytes -----------------------------

@pytest.mark.parametrize('partial', [False, True], ids=['exact', 'partial'])
def test_messages_that_arrive_whole_are_read_without_a_copy(io_loop, stream_pair, partial):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        received = []
        for index in range(50):
            message = b'message %03d|' % index * (index % 7 + 1)
            pending = reader.read_bytes(len(message) + 10 * partial, partial=partial)
            yield writer.write(message)
            received.append((yield pending) == message)
        raise gen.Return(received)

    assert run(io_loop, main) == [True] * 50
    # Each arrival was handed to its read as it came: nothing went through the buffer.
    assert reader._read_buffer.bytes_moved == 0 and reader._read_buffer.size == 0


def test_an_arrival_larger_than_the_pending_read_keeps_the_rest_in_order(io_loop,
                                                                         stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        pending = reader.read_bytes(4)
        yield writer.write(b'0123456789')
        first = yield pending
        # The rest is buffered: these reads are resolved without waiting.
        second, third = reader.read_bytes(2), reader.read_bytes(4, partial=True)
        raise gen.Return([first, second.done() and second.result(),
                          third.done() and third.result()])

    assert run(io_loop, main) == [b'0123', b'45', b'6789']


def test_an_arrival_smaller_than_the_pending_read_waits_for_the_rest(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        pending = reader.read_bytes(8)
        yield writer.write(b'abc')
        yield gen.moment
        yield gen.moment
        waited = not pending.done()
        yield writer.write(b'defgh')
        data = yield pending
        raise gen.Return((waited, data))

    assert run(io_loop, main) == (True, b'abcdefgh')


def test_bytes_before_a_peer_close_are_read_before_the_close_is_reported(io_loop,
                                                                         stream_pair):
    writer, reader = stream_pair
    trace = []

    @gen.coroutine
    def main():
        reader.set_close_callback(lambda: trace.append('close callback'))
        pending = reader.read_bytes(4)
        yield writer.write(b'0123456789')
        writer.close()
        trace.append((yield pending))
        # The close is pending behind the buffered bytes; these reads still succeed.
        trace.append((yield reader.read_bytes(3)))
        trace.append((yield reader.read_bytes(3, partial=True)))
        try:
            yield reader.read_bytes(1)
        except StreamClosedError as e:
            trace.append(('closed', e.real_error))
        yield gen.moment
        raise gen.Return(trace)

    assert run(io_loop, main) == [b'0123', b'456', b'789', ('closed', None),
                                  'close callback']
    assert reader.closed()


# -- closes at every point -------------------------------------------------------------

def test_local_close_fails_the_pending_read_with_the_cause(io_loop, stream_pair):
    _, reader = stream_pair
    pending = reader.read_until(b'\n')
    cause = ValueError('the application gave up')
    reader.close(exc_info=cause)
    error = pending.exception()
    assert isinstance(error, StreamClosedError)
    assert error.real_error is cause and reader.error is cause
    assert reader.closed() and not reader.reading()


def test_close_in_an_except_block_records_the_exception(io_loop, stream_pair):
    _, reader = stream_pair
    pending = reader.read_bytes(4)
    try:
        raise KeyError('lost')
    except KeyError:
        reader.close(exc_info=True)
    assert isinstance(pending.exception().real_error, KeyError)


def test_peer_close_mid_read_fails_it_but_keeps_the_bytes(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        pending = reader.read_bytes(10)
        yield writer.write(b'12345')
        writer.close()
        with pytest.raises(StreamClosedError) as info:
            yield pending
        assert info.value.real_error is None  # a clean EOF
        # What did arrive is still there to read.
        rest = yield reader.read_bytes(5)
        raise gen.Return(rest)

    assert run(io_loop, main) == b'12345'


def test_half_close_ends_read_until_close_with_the_data(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        reading = reader.read_until_close()
        yield writer.write(b'last words')
        writer.socket.shutdown(socket.SHUT_WR)
        data = yield reading
        raise gen.Return(data)

    assert run(io_loop, main) == b'last words'


def test_read_until_close_on_a_closed_stream_returns_what_is_left(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        yield writer.write(b'tail')
        writer.close()
        first = yield reader.read_bytes(1)
        rest = yield reader.read_until_close()
        raise gen.Return((first, rest, reader.closed()))

    assert run(io_loop, main) == (b't', b'ail', True)


def test_read_on_a_closed_empty_stream_fails(io_loop, stream_pair):
    _, reader = stream_pair
    reader.close()
    for future in (reader.read_bytes(1), reader.read_until(b'x'), reader.read_into(bytearray(4))):
        assert isinstance(future.exception(), StreamClosedError)
    assert reader.read_until_close().result() == b''


def tcp_pair(io_loop):
    """Two connected TCP sockets over loopback (the listener stays open until done)."""
    listener = bind_sockets(0, '127.0.0.1')[0]
    client = socket.create_connection(listener.getsockname())
    server, _ = _accept_blocking(listener)
    listener.close()
    return client, server


def _accept_blocking(listener):
    listener.setblocking(True)
    return listener.accept()


def test_peer_reset_fails_the_read_with_the_socket_error(io_loop):
    client, server = tcp_pair(io_loop)
    stream = IOStream(server)
    # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))

    @gen.coroutine
    def main():
        pending = stream.read_until_close()
        client.close()
        with pytest.raises(StreamClosedError) as info:
            yield pending
        raise gen.Return(info.value.real_error)

    real_error = run(io_loop, main)
    assert getattr(real_error, 'errno', None) == errno.ECONNRESET
    assert stream.closed()


def test_more_than_max_buffer_size_closes_with_buffer_full(io_loop):
    left, right = socket.socketpair()
    writer, reader = IOStream(left), IOStream(right, max_buffer_size=10000)

    @gen.coroutine
    def main():
        pending = reader.read_until(b'never')
        writer.write(b'z' * 50000)
        with pytest.raises(StreamClosedError) as info:
            yield pending
        raise gen.Return(info.value.real_error)

    assert isinstance(run(io_loop, main), StreamBufferFullError)
    assert reader.closed()
    writer.close()


def test_idle_read_ahead_stops_at_a_chunk_and_the_writer_waits(io_loop):
    # Flow control, as in Tornado 5.1: more than max_buffer_size sent to a stream that
    # reads slowly does not close it; it reads as its reads need, and the sender waits.
    left, right = socket.socketpair()
    writer, reader = IOStream(left), IOStream(right, max_buffer_size=64 * 1024)
    payload = os.urandom(4 * MEGABYTE)  # more than the socket pair's kernel buffers hold
    closed = []
    reader.set_close_callback(lambda: closed.append(True))  # which watches it idle, too

    @gen.coroutine
    def main():
        sending = writer.write(payload)
        pieces = [(yield reader.read_bytes(1000))]
        for _ in range(20):
            yield gen.moment  # passes in which nothing reads
        assert (reader.closed(), closed, sending.done()) == (False, [], False)
        while sum(len(piece) for piece in pieces) < len(payload):
            pieces.append((yield reader.read_bytes(50000, partial=True)))
        yield sending
        raise gen.Return(b''.join(pieces))

    assert run(io_loop, main) == payload
    writer.close()
    reader.close()


@pytest.mark.parametrize('read', [
    lambda stream: stream.read_until(b'\n', max_bytes=8),
    lambda stream: stream.read_until_regex(b'[\n]', max_bytes=8),
])
def test_no_delimiter_within_max_bytes_is_unsatisfiable(io_loop, stream_pair, read):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        pending = read(reader)
        yield writer.write(b'0123456789\n')
        with pytest.raises(StreamClosedError) as info:
            yield pending
        raise gen.Return(info.value.real_error)

    assert isinstance(run(io_loop, main), UnsatisfiableReadError)
    assert reader.closed()


def test_a_delimiter_just_within_max_bytes_is_found(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        yield writer.write(b'0123456\n')
        line = yield reader.read_until(b'\n', max_bytes=8)
        raise gen.Return(line)

    assert run(io_loop, main) == b'0123456\n'


def test_close_fails_pending_writes_quietly_and_later_writes_raise(io_loop, stream_pair):
    writer, reader = stream_pair
    pending = writer.write(b'w' * (8 * 1024 * 1024))  # more than the socket takes
    assert not pending.done() and writer.writing()
    reader.close()
    writer.close()
    assert isinstance(pending.exception(), StreamClosedError)
    with pytest.raises(StreamClosedError):
        writer.write(b'more')


def test_write_to_a_closed_peer_closes_the_stream(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        reader.close()
        with pytest.raises(StreamClosedError):
            for _ in range(100):
                yield writer.write(b'x' * 65536)
        raise gen.Return(writer.error)

    error = run(io_loop, main)
    assert getattr(error, 'errno', None) in (errno.EPIPE, errno.ECONNRESET)


def test_close_callback_runs_once_when_the_peer_closes_an_idle_stream(io_loop, stream_pair):
    writer, reader = stream_pair
    calls = []
    done = Future()

    def on_close():
        calls.append(reader.closed())
        done.set_result(None)

    reader.set_close_callback(on_close)

    @gen.coroutine
    def main():
        writer.close()
        yield done
        reader.close()
        yield gen.moment

    run(io_loop, main)
    assert calls == [True]


def test_close_callback_set_after_the_close_still_runs(io_loop, stream_pair):
    _, reader = stream_pair
    reader.close()
    done = Future()
    reader.set_close_callback(lambda: done.set_result('ran'))
    assert run(io_loop, lambda: done) == 'ran'


def test_connect_refused_fails_with_the_socket_error(io_loop):
    # A socket that is bound but not listening refuses connections, and stays bound.
    bound = socket.socket()
    bound.bind(('127.0.0.1', 0))
    stream = IOStream(socket.socket())

    @gen.coroutine
    def main():
        with pytest.raises(StreamClosedError) as info:
            yield stream.connect(bound.getsockname())
        raise gen.Return(info.value.real_error)

    assert getattr(run(io_loop, main), 'errno', None) == errno.ECONNREFUSED
    assert stream.closed()
    bound.close()


def test_reads_and_writes_started_while_connecting_wait_for_it(io_loop):
    listener = bind_sockets(0, '127.0.0.1')[0]
    stream = IOStream(socket.socket())

    @gen.coroutine
    def main():
        connecting = stream.connect(listener.getsockname())
        written = stream.write(b'ping')
        reading = stream.read_bytes(4)
        yield connecting
        server, _ = _accept_blocking(listener)
        server.sendall(server.recv(4).upper())
        result = yield [written, reading]
        server.close()
        raise gen.Return(result[1])

    assert run(io_loop, main) == b'PING'
    stream.close()
    listener.close()


def test_closing_while_connecting_fails_the_connect(io_loop):
    listener = bind_sockets(0, '127.0.0.1')[0]
    stream = IOStream(socket.socket())
    connecting = stream.connect(listener.getsockname())
    stream.close()
    assert isinstance(connecting.exception(), StreamClosedError)
    listener.close()


def socket_streams():
    left, right = socket.socketpair()
    return IOStream(left), IOStream(right)


def pipe_streams():
    """(writer, reader) over os.pipe()."""
    read_fd, write_fd = os.pipe()
    return PipeIOStream(write_fd), PipeIOStream(read_fd)


@pytest.mark.parametrize('make_pair', [socket_streams, pipe_streams],
                         ids=['socketpair', 'pipe'])
def test_no_file_descriptors_leak(io_loop, make_pair):
    before = open_fds()

    @gen.coroutine
    def main():
        for _ in range(50):
            writer, reader = make_pair()
            reading = reader.read_until_close()
            yield writer.write(b'data')
            writer.close()
            assert (yield reading) == b'data'
            reader.close()

    run(io_loop, main)
    assert open_fds() == before
    assert io_loop.pending_work()[1] == []


# -- cancelling reads loses no bytes ---------------------------------------------------

def test_a_cancelled_read_leaves_its_bytes_for_the_next(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        pending = reader.read_until(b'\n')
        yield writer.write(b'no newline yet')
        yield gen.moment
        assert pending.cancel() and pending.cancelled() and not reader.reading()
        yield writer.write(b', now\n')
        line = yield reader.read_until(b'\n')
        raise gen.Return(line)

    assert run(io_loop, main) == b'no newline yet, now\n'


def test_a_cancelled_read_into_gives_back_what_it_had(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        pending = reader.read_into(bytearray(100))
        yield writer.write(b'partial')
        yield gen.moment
        pending.cancel()
        with pytest.raises(CancelledError):
            yield pending
        yield writer.write(b' and more')
        data = yield reader.read_bytes(16)
        raise gen.Return(data)

    assert run(io_loop, main) == b'partial and more'


def test_a_read_times_out_and_the_stream_goes_on(io_loop, stream_pair):
    writer, reader = stream_pair

    @gen.coroutine
    def main():
        with pytest.raises(gen.TimeoutError):
            yield gen.with_timeout(io_loop.time() + 0.01, reader.read_bytes(3))
        yield writer.write(b'abc')
        data = yield reader.read_bytes(3)
        raise gen.Return(data)

    assert run(io_loop, main) == b'abc'


# -- large transfers and linear cost ---------------------------------------------------

def test_twenty_megabytes_both_ways_at_once(io_loop, stream_pair):
    left, right = stream_pair
    size = 20 * 1024 * 1024
    outgoing = os.urandom(size)
    incoming = os.urandom(size)

    @gen.coroutine
    def read_in_chunks(stream):
        digest = hashlib.sha256()
        received = 0
        while received < size:
            chunk = yield stream.read_bytes(min(65536 + 7, size - received))
            received += len(chunk)
            digest.update(chunk)
        raise gen.Return(digest.hexdigest())

    @gen.coroutine
    def main():
        results = yield [left.write(outgoing), right.write(incoming),
                         right.read_bytes(size), read_in_chunks(left)]
        raise gen.Return(results[2:])

    whole, digest = run(io_loop, main)
    assert whole == outgoing
    assert digest == hashlib.sha256(incoming).hexdigest()


def _drain_in_messages(io_loop, size, message_size):
    """Buffer `size` bytes in a stream, then read them `message_size` at a time;
    returns the bytes the read buffer moved."""
    left, right = socket.socketpair()
    # An idle stream reads ahead until it holds a chunk: make that more than `size`.
    writer, reader = IOStream(left), IOStream(right, max_buffer_size=4 * size,
                                              read_chunk_size=2 * size)
    payload = os.urandom(size)
    closed = Future()
    reader.set_close_callback(lambda: closed.set_result(None))

    @gen.coroutine
    def main():
        yield writer.write(payload)
        writer.close()
        yield closed  # all of it is buffered now
        pieces = []
        for _ in range(size // message_size):
            pieces.append((yield reader.read_bytes(message_size)))
        assert b''.join(pieces) == payload

    run(io_loop, main)
    return reader._read_buffer.bytes_moved


def _stream_in_chunks(io_loop, size, chunk_size):
    """Send `size` bytes in one write and read them `chunk_size` at a time; returns the
    bytes both buffers moved."""
    left, right = socket.socketpair()
    writer, reader = IOStream(left), IOStream(right)
    payload = os.urandom(size)

    @gen.coroutine
    def main():
        sending = writer.write(payload)
        digest = hashlib.sha256()
        for _ in range(size // chunk_size):
            digest.update((yield reader.read_bytes(chunk_size)))
        yield sending
        assert digest.digest() == hashlib.sha256(payload).digest()

    run(io_loop, main)
    moved = reader._read_buffer.bytes_moved + writer._write_buffer.bytes_moved
    writer.close()
    reader.close()
    return moved


MEGABYTE = 1024 * 1024


@pytest.mark.parametrize('transfer, unit', [(_drain_in_messages, 128),
                                            (_stream_in_chunks, 4096)],
                         ids=['small-messages-from-a-large-buffer', 'body-in-4k-chunks'])
def test_buffer_work_grows_linearly(io_loop, transfer, unit):
    small = transfer(io_loop, MEGABYTE, unit)
    large = transfer(io_loop, 8 * MEGABYTE, unit)
    # Each byte is copied a few times at most; quadratic behaviour would give ~64x.
    assert small <= 6 * MEGABYTE
    assert large <= 6 * 8 * MEGABYTE
    assert large <= 10 * small


def _scan_line_arriving_bytewise(size):
    """Feed read_until a `size`-byte line one byte at a time; the bytes the buffer moved."""
    buffer = ByteBuffer()
    read = _ReadUntil(b'\r\n', None)
    line = b'x' * (size - 2) + b'\r\n'
    for index in range(size):
        buffer.append(line[index:index + 1])
        found = read.find(buffer)
        assert (found is None) == (index < size - 1)
    assert found == size
    return buffer.bytes_moved


def test_read_until_scans_bytes_arriving_one_by_one_about_once():
    small = _scan_line_arriving_bytewise(10000)
    large = _scan_line_arriving_bytewise(80000)
    assert large <= 6 * 80000
    assert large <= 10 * small


def test_an_adopted_chunk_read_whole_is_returned_without_a_copy():
    buffer = ByteBuffer()
    chunk = os.urandom(64)
    buffer.adopt(chunk)
    assert buffer.find(chunk[60:]) == 60
    assert buffer.consume(64) is chunk
    assert buffer.size == 0


@pytest.mark.parametrize('write_more', ['append', 'room'])
def test_an_adopted_chunk_keeps_its_order_when_more_arrives(write_more):
    buffer = ByteBuffer()
    buffer.adopt(b'0123456789')
    assert buffer.consume(3) == b'012'
    if write_more == 'append':
        buffer.append(b'abc')
    else:
        view = buffer.room(3)
        view[:3] = b'abc'
        del view
        buffer.commit(3)
    buffer.append(b'')
    assert buffer.size == 10
    assert buffer.consume(10) == b'3456789abc'
    assert buffer.size == 0


def test_an_emptied_buffer_frees_storage_beyond_keep():
    buffer = ByteBuffer(keep=1024)
    buffer.append(b'x' * 1000)
    buffer.consume(1000)
    assert len(buffer.room(1)) == 1000  # within keep: kept for the next bytes
    buffer.append(b'y' * 5000)
    assert buffer.consume(5000) == b'y' * 5000
    assert len(buffer.room(1)) < 5000  # the 5000-byte storage went


def test_a_buffer_without_keep_holds_its_storage():
    buffer = ByteBuffer()
    buffer.append(b'y' * 5000)
    buffer.consume(5000)
    assert len(buffer.room(1)) >= 5000


# -- TLS -------------------------------------------------------------------------------

def server_context(files, **options):
    options.update(certfile=files.server_cert, keyfile=files.server_key)
    return ssl_options_to_context(options, server_side=True)


@gen.coroutine
def start_tls_both(left, right, server_options, client_options, server_hostname):
    """Switch a connected pair to TLS; (server, client) streams or their errors."""
    handshakes = [left.start_tls(True, ssl_options=server_options),
                  right.start_tls(False, ssl_options=client_options,
                                  server_hostname=server_hostname)]
    outcomes = []
    for handshake in handshakes:
        try:
            outcomes.append((yield handshake))
        except Exception as e:
            outcomes.append(e)
    raise gen.Return(outcomes)


def test_start_tls_both_ways_with_sni_and_a_large_transfer(io_loop, stream_pair):
    files = tls_files()
    server_names = []
    context = server_context(files)
    context.set_servername_callback(
        lambda ssl_socket, name, ctx: server_names.append(name))
    left, right = stream_pair
    payload = os.urandom(3 * MEGABYTE)

    @gen.coroutine
    def main():
        server, client = yield start_tls_both(left, right, context,
                                              {'ca_certs': files.ca_cert}, TEST_HOSTNAME)
        assert isinstance(server, SSLIOStream) and isinstance(client, SSLIOStream)
        assert left.closed() and right.closed()  # replaced, not to be used
        results = yield [client.write(b'hello server\n'), server.read_until(b'\n'),
                         server.write(payload), client.read_bytes(len(payload))]
        server.close()
        rest = yield client.read_until_close()
        raise gen.Return((results[1], results[3] == payload, rest))

    assert run(io_loop, main) == (b'hello server\n', True, b'')
    assert server_names == [TEST_HOSTNAME]


def test_tls_client_certificates_when_the_server_requires_them(io_loop, stream_pair):
    files = tls_files()
    left, right = stream_pair
    context = server_context(files, cert_reqs=ssl.CERT_REQUIRED, ca_certs=files.ca_cert)

    @gen.coroutine
    def main():
        server, client = yield start_tls_both(
            left, right, context,
            {'ca_certs': files.ca_cert, 'certfile': files.client_cert,
             'keyfile': files.client_key}, 'localhost')
        subject = dict(server.socket.getpeercert()['subject'][0])
        server.close()
        client.close()
        raise gen.Return(subject)

    assert run(io_loop, main) == {'commonName': 'tinytornado client'}


@pytest.mark.parametrize('client_options, server_hostname, expected', [
    ({'ca_certs': 'other_ca_cert'}, 'localhost', 'certificate verify failed'),
    (None, 'localhost', 'certificate verify failed'),  # the system's CAs, by default
    ({'ca_certs': 'ca_cert'}, 'wrong.test', 'wrong.test'),
], ids=['untrusted-ca', 'default-verification', 'wrong-hostname'])
def test_a_failed_handshake_raises_its_ssl_error(io_loop, stream_pair, client_options,
                                                 server_hostname, expected):
    files = tls_files()
    if client_options is not None:
        client_options = {'ca_certs': getattr(files, client_options['ca_certs'])}
    left, right = stream_pair

    @gen.coroutine
    def main():
        outcomes = yield start_tls_both(left, right, server_context(files), client_options,
                                        server_hostname)
        raise gen.Return(outcomes)

    server_outcome, client_outcome = run(io_loop, main)
    assert isinstance(client_outcome, (ssl.SSLError, ssl.CertificateError))
    assert expected in str(client_outcome)
    # The server sees the client's alert, or (when the name is checked after the
    # handshake, before Python 3.7) a finished handshake and then the close.
    assert isinstance(server_outcome, (ssl.SSLError, StreamClosedError, socket.error,
                                       SSLIOStream))


def test_start_tls_needs_an_idle_stream(io_loop, stream_pair):
    left, _ = stream_pair
    pending = left.read_bytes(1)
    with pytest.raises(ValueError):
        left.start_tls(False, server_hostname='localhost')
    assert not left.closed() and not pending.done()
    pending.cancel()



def test_ssl_iostream_connect_queues_writes_until_the_handshake(io_loop):
    from tinytornado.tcpserver import TCPServer

    class Upper(TCPServer):
        @gen.coroutine
        def handle_stream(self, stream, address):
            line = yield stream.read_until(b'\n')
            yield stream.write(line.upper())
            stream.close()

    server, address, stream = tls_server_and_client(Upper)

    @gen.coroutine
    def main():
        connecting = stream.connect(address, server_hostname='localhost')
        written = stream.write(b'queued before the handshake\n')
        assert not written.done()
        connected = yield connecting
        assert connected is stream and stream.socket.version().startswith('TLS')
        yield written
        reply = yield stream.read_until_close()
        raise gen.Return(reply)

    assert run(io_loop, main) == b'QUEUED BEFORE THE HANDSHAKE\n'
    server.stop()


def test_peer_closing_during_the_handshake_fails_it(io_loop, stream_pair):
    files = tls_files()
    left, right = stream_pair

    @gen.coroutine
    def main():
        handshake = right.start_tls(False, ssl_options={'ca_certs': files.ca_cert},
                                    server_hostname='localhost')
        left.close()
        with pytest.raises((ssl.SSLError, StreamClosedError, socket.error)):
            yield handshake

    run(io_loop, main)


# -- options and the selector ----------------------------------------------------------

def test_set_nodelay_on_tcp_and_harmless_elsewhere(io_loop, stream_pair):
    client, server = tcp_pair(io_loop)
    stream = IOStream(client)
    stream.set_nodelay(True)
    assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    stream.set_nodelay(False)
    assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
    stream_pair[0].set_nodelay(True)  # a Unix socket has no Nagle to turn off
    stream.close()
    server.close()


def test_max_write_buffer_size(io_loop):
    left, right = socket.socketpair()
    writer = IOStream(left, max_write_buffer_size=1000)
    writer.write(b'a' * 1000)
    with pytest.raises(StreamBufferFullError):
        writer.write(b'b' * 1001)
    assert not writer.closed()
    writer.close()
    right.close()


class CountingLoop(object):
    """Counts a loop's add_handler/update_handler/remove_handler calls."""

    def __init__(self, io_loop):
        self.calls = []
        for name in ('add_handler', 'update_handler', 'remove_handler'):
            setattr(io_loop, name, self._counted(name, getattr(io_loop, name)))

    def _counted(self, name, method):
        def counted(*args):
            self.calls.append(name)
            return method(*args)
        return counted


def test_reads_and_writes_do_not_touch_the_selector(io_loop, stream_pair):
    counting = CountingLoop(io_loop)
    left, right = stream_pair

    @gen.coroutine
    def main():
        for index in range(200):
            message = b'message %d\n' % index
            left.write(message)
            echoed = yield right.read_until(b'\n')
            yield right.write(echoed)
            assert (yield left.read_bytes(len(message))) == message

    run(io_loop, main)
    # Each stream is registered once, when it first has to wait for data, and that is all.
    assert counting.calls == ['add_handler', 'add_handler']
