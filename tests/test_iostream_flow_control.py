"""Flow control, as in Tornado 5.1: with no read pending a stream reads at most a chunk
ahead, then stops reading (the kernel's buffers fill and stop the sender) until a read
needs more. Run on every kind of loop, SelectIOLoop too, over sockets and pipes."""
from __future__ import absolute_import, division, print_function

import os
import socket

import pytest

from loops import LOOP_KINDS, loop_class_for
from net_helpers import run
from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.iostream import IOStream, PipeIOStream
from tinytornado.platform.select import SelectIOLoop

CHUNK = 4096
MEGABYTE = 1024 * 1024


@pytest.fixture(params=LOOP_KINDS + ['select'])
def io_loop_class(request):
    return SelectIOLoop if request.param == 'select' else loop_class_for(request.param)


def socket_streams(**reader_options):
    left, right = socket.socketpair()
    return IOStream(left), IOStream(right, **reader_options)


def pipe_streams(**reader_options):
    read_fd, write_fd = os.pipe()
    return PipeIOStream(write_fd), PipeIOStream(read_fd, **reader_options)


@pytest.fixture(params=[socket_streams, pipe_streams], ids=['socket', 'pipe'])
def make_streams(request):
    """Makes (writer, reader) with the reader's options; closes them after the test."""
    made = []

    def make(**reader_options):
        made.extend(request.param(**reader_options))
        return made[-2:]

    yield make
    for stream in made:
        stream.close()


@gen.coroutine
def idle_passes(count=20):
    """Let the loop run `count` passes in which nothing reads."""
    for _ in range(count):
        yield gen.moment


def test_a_paused_stream_meets_the_close_once_its_bytes_are_read(io_loop, make_streams):
    writer, reader = make_streams(read_chunk_size=CHUNK)
    closed = Future()
    reader.set_close_callback(lambda: closed.set_result('closed'))
    payload = os.urandom(CHUNK)

    @gen.coroutine
    def main():
        yield writer.write(payload)
        writer.close()
        yield idle_passes()
        # A chunk read ahead and none asked for: reading paused, the close unseen.
        assert not closed.done() and not reader.closed()
        data = yield reader.read_bytes(CHUNK)  # from the buffer, which it empties
        outcome = yield closed
        raise gen.Return((data, outcome))

    assert run(io_loop, main) == (payload, 'closed')


def test_a_slow_reader_gets_everything_while_the_writer_waits(io_loop, make_streams):
    writer, reader = make_streams(max_buffer_size=8 * CHUNK, read_chunk_size=CHUNK)
    reader.set_close_callback(lambda: None)  # which watches the idle stream too
    payload = os.urandom(2 * MEGABYTE)  # more than the kernel holds for a pipe or socket

    @gen.coroutine
    def main():
        sending = writer.write(payload)
        pieces = []
        while sum(len(piece) for piece in pieces) < len(payload):
            yield idle_passes(3)
            assert not reader.closed()
            pieces.append((yield reader.read_bytes(3 * CHUNK, partial=True)))
            if len(pieces) == 5:
                assert not sending.done()  # the reader holds the writer back
        yield sending
        raise gen.Return(b''.join(pieces))

    assert run(io_loop, main) == payload


def test_a_stream_paused_for_reading_still_sends(io_loop):
    # Each side sends more than the kernel holds, reads a chunk ahead and pauses, then
    # reads: its write goes on only if a stream paused for reading still sends.
    left, right = socket.socketpair()
    one, other = IOStream(left, read_chunk_size=CHUNK), IOStream(right, read_chunk_size=CHUNK)
    outgoing = [os.urandom(MEGABYTE), os.urandom(MEGABYTE)]

    @gen.coroutine
    def exchange(stream, data):
        stream.set_close_callback(lambda: None)
        sending = stream.write(data)
        yield idle_passes(5)
        received = yield stream.read_bytes(MEGABYTE)
        yield sending
        raise gen.Return(received)

    @gen.coroutine
    def main():
        results = yield [exchange(one, outgoing[0]), exchange(other, outgoing[1])]
        raise gen.Return(results)

    assert run(io_loop, main) == outgoing[::-1]
    one.close()
    other.close()
