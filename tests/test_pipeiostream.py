"""PipeIOStream: the stream's reads and writes over the two ends of os.pipe(), and over a
subprocess's standard output."""
from __future__ import absolute_import, division, print_function

import errno
import os
import subprocess
import sys

import pytest

from net_helpers import run
from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.iostream import PipeIOStream, StreamClosedError
from tinytornado.log import gen_log
from tinytornado.testing import ExpectLog


@pytest.fixture
def pipe_pair(io_loop):
    """(reading stream, writing stream) over a new pipe; closed after the test."""
    read_fd, write_fd = os.pipe()
    streams = PipeIOStream(read_fd), PipeIOStream(write_fd)
    yield streams
    for stream in streams:
        stream.close()


def test_reads_of_every_kind_then_eof(io_loop, pipe_pair):
    reader, writer = pipe_pair

    @gen.coroutine
    def main():
        writer.write(b'hel')
        writer.write(b'lo world\nand')
        results = [(yield reader.read_until(b' '))]
        results.append((yield reader.read_bytes(3)))
        results.append((yield reader.read_until_regex(b'd\\n')))
        buf = bytearray(2)
        count = yield reader.read_into(buf)
        results.append(bytes(buf[:count]))
        writer.close()
        results.append((yield reader.read_until_close()))
        raise gen.Return(results)

    assert run(io_loop, main) == [b'hello ', b'wor', b'ld\n', b'an', b'd']
    assert reader.closed() and reader.error is None


def test_a_write_larger_than_the_pipe_waits_for_the_reader(io_loop, pipe_pair):
    reader, writer = pipe_pair
    data = b'1' * (1024 * 1024)  # a pipe holds 64 KB

    @gen.coroutine
    def main():
        writing = writer.write(data)
        assert not writing.done() and writer.writing()
        received = yield reader.read_bytes(len(data))
        yield writing
        raise gen.Return(received)

    assert run(io_loop, main) == data


def test_an_idle_reader_sees_the_writer_close(io_loop, pipe_pair):
    reader, writer = pipe_pair
    trace = []
    closed = Future()
    reader.set_close_callback(lambda: closed.set_result(None))

    @gen.coroutine
    def main():
        yield writer.write(b'last words')
        writer.close()
        yield closed
        trace.append((yield reader.read_bytes(4)))  # what came before the close stays
        trace.append((yield reader.read_until_close()))

    run(io_loop, main)
    assert trace == [b'last', b' words']


@pytest.mark.parametrize('writing', [True, False], ids=['writing', 'idle'])
def test_the_writer_closes_when_the_reader_goes_away(io_loop, pipe_pair, writing):
    # The poll reports an error on the write end, and a write there fails with EPIPE,
    # a read with EBADF. Either closes the stream, without a warning: the other end went
    # away.
    reader, writer = pipe_pair
    closed = Future()
    writer.set_close_callback(lambda: closed.set_result(None))

    @gen.coroutine
    def main():
        pending = writer.write(b'x' * (1024 * 1024)) if writing else None  # the pipe fills
        reader.close()
        yield closed
        if pending is not None:
            with pytest.raises(StreamClosedError):
                yield pending
        with pytest.raises(StreamClosedError):
            writer.write(b'more')

    with ExpectLog(gen_log, '.*', required=False) as logged:
        run(io_loop, main)
    assert not logged.matched
    assert writer.closed()
    # EPIPE from a write, or EBADF from the read that an error event leads to first.
    assert writer.error.errno in (errno.EPIPE, errno.EBADF)


def test_reading_a_subprocess_output(io_loop):
    read_fd, write_fd = os.pipe()
    child = subprocess.Popen(
        [sys.executable, '-c', 'import sys; sys.stdout.write("line one\\nline two\\n")'],
        stdout=write_fd)
    os.close(write_fd)  # the child's copy stays open until it exits
    stream = PipeIOStream(read_fd)

    @gen.coroutine
    def main():
        first = yield stream.read_until(b'\n')
        rest = yield stream.read_until_close()
        raise gen.Return([first, rest])

    assert run(io_loop, main) == [b'line one\n', b'line two\n']
    assert child.wait() == 0
