"""A stream whose descriptor fails under it (closed by other code: EBADF) still closes all
the way: its pending read ends, its close callback runs, and later reads fail as on any
closed stream (issue 28, item 4). Before, on 3.x, socket.close() raising EBADF stopped
close() halfway.

Each test closes the stream's descriptor with os.close() and touches the stream before
anything else can open a descriptor, as Tornado's test_inline_read_error does.
"""
from __future__ import absolute_import, division, print_function

import errno
import os
import socket
import warnings

import pytest

from net_helpers import stream_pair  # noqa: F401  (a fixture)
from tinytornado.iostream import StreamClosedError
from tinytornado.util import errno_from_exception


def _close_descriptor_under(stream):
    os.close(stream.fileno())


def _read_meets_it(stream):
    return stream.read_bytes(1)


def _write_meets_it(stream):
    stream.write(b'x')


def _close_meets_it(stream):
    stream.close()


MEETING = {'a read': _read_meets_it, 'a write': _write_meets_it, 'close()': _close_meets_it}


@pytest.mark.parametrize('meets_it', sorted(MEETING))
@pytest.mark.parametrize('reading', [False, True], ids=['no read pending', 'a read pending'])
def test_a_stream_whose_descriptor_failed_closes_all_the_way(io_loop, stream_pair, meets_it,
                                                             reading):
    stream = stream_pair[0]
    if reading and meets_it == 'a read':
        pytest.skip('one read at a time')
    closed = []
    stream.set_close_callback(lambda: closed.append(True))
    reads = [stream.read_bytes(1)] if reading else []
    _close_descriptor_under(stream)
    returned = MEETING[meets_it](stream)
    if returned is not None:
        reads.append(returned)
    assert stream.closed()
    io_loop.run_sync(lambda: None)  # a pass: the close callback runs
    assert closed == [True]
    for read in reads:
        assert isinstance(read.exception(), StreamClosedError)
    if meets_it != 'close()':
        # Why it closed: the descriptor's error.
        assert errno_from_exception(stream.error) == errno.EBADF
    later = stream.read_bytes(1)
    assert isinstance(later.exception(), StreamClosedError)  # not "Already reading"


def _assert_a_legacy_read_raises_ebadf(stream):
    """The descriptor closed under `stream`, a read with a callback raises its EBADF, and
    the stream is closed."""
    _close_descriptor_under(stream)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        with pytest.raises(socket.error) as raised:
            stream.read_bytes(1, lambda data: None)
    assert errno_from_exception(raised.value) == errno.EBADF
    assert stream.closed()


def test_a_legacy_read_raises_the_descriptor_error_inline(io_loop, stream_pair):
    # Tornado 5.1's test_inline_read_error: an error on a read started with a callback is
    # raised to its caller, not only logged; and the stream is closed all the same.
    stream = stream_pair[0]
    _assert_a_legacy_read_raises_ebadf(stream)


def test_a_legacy_read_after_reads_raises_the_descriptor_error_inline(io_loop, stream_pair):
    # As in Tornado's test, where the stream has read before: the read, and the recv it
    # saw the socket drained with, came first.
    stream, peer = stream_pair
    first = stream.read_bytes(1)
    peer.write(b'a')
    assert io_loop.run_sync(lambda: first, timeout=5) == b'a'
    _assert_a_legacy_read_raises_ebadf(stream)


def test_a_loop_closed_with_all_fds_leaves_the_stream_no_number_to_close_twice():
    # AsyncTestCase's tearDown closes its loop with all_fds=True, streams still open (a
    # test that failed midway). The stream's number may then go to a new socket: the
    # stream, closed later (or collected), must not close that socket's descriptor.
    from tinytornado.ioloop import IOLoop
    from tinytornado.iostream import IOStream
    from tinytornado.netutil import bind_sockets
    [listener] = bind_sockets(0, '127.0.0.1')
    loop = IOLoop()
    loop.make_current()
    client = socket.socket()
    try:
        client.connect(listener.getsockname())
        connection, _ = listener.accept()
        stream = IOStream(connection)
        number = stream.fileno()
        stream.read_bytes(1)  # pending: the stream is watched by the loop
        loop.close(all_fds=True)
    finally:
        IOLoop.clear_current()
    newcomers = []  # new sockets, until one has the stream's old number
    try:
        while number not in [sock.fileno() for sock in newcomers] and len(newcomers) < 20:
            newcomers.append(socket.socket())
        assert newcomers[-1].fileno() == number
        stream.close()
        for sock in newcomers:
            os.fstat(sock.fileno())  # EBADF had the stream closed one
    finally:
        for sock in newcomers:
            sock.close()
        client.close()
        listener.close()
