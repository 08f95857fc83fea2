"""What a failed fetch leaves behind: nothing of the body it had read.

The exception that ends a failed fetch holds, through its traceback, the frames that read
the response, and so the `Exchange` with the body read so far. These tests fail fetches
of a large body with the cycle collector off, then add up the bytes objects that anything
the collector tracks still refers to: with the collector off, what sits in a reference
cycle is still tracked, so a body kept there shows as megabytes per fetch, on every
interpreter (tracemalloc and the resident set would not: 2.7 has no tracemalloc, and
malloc keeps freed memory, so the resident set shows only what a test allocates anew).
"""
from __future__ import absolute_import, division, print_function

import gc

import pytest

from tinytornado import gen
from tinytornado.httpclient import AsyncHTTPClient, HTTPClientError
from tinytornado.httputil import HTTPInputError
from tinytornado.iostream import StreamClosedError
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import bind_unused_port

BODY_SENT = 4 * 1024 * 1024  # what the server sends of each body before the fetch fails
FETCHES = 5
PIECE = 65536


class BrokenBodyServer(TCPServer):
    """Answers every request with `head`, then BODY_SENT bytes of body, then closes.

    The body goes out a piece at a time: a connection the client resets keeps its error,
    which holds the stream and what it still had to send, until the collector runs; that
    must not be more than a piece.
    """

    def __init__(self, head):
        super(BrokenBodyServer, self).__init__()
        self.head = head
        sock, self.port = bind_unused_port()
        self.add_socket(sock)

    @gen.coroutine
    def handle_stream(self, stream, address):
        try:
            yield stream.read_until(b'\r\n\r\n')
            yield stream.write(self.head)
            for _ in range(BODY_SENT // PIECE):
                yield stream.write(b'x' * PIECE)
        except StreamClosedError:
            pass  # the client gave up first: the body was over its max_body_size
        stream.close()


# (head, max_body_size, what the fetch fails with): a body the server cuts short, and a
# close-delimited body the client refuses once it is over max_body_size.
FAILURES = {
    'cut short': (b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n' % (2 * BODY_SENT),
                  None, 'connection closed in the middle of the response body'),
    'over max_body_size': (b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n', BODY_SENT // 2,
                           'larger than max_body_size'),
}


@gen.coroutine
def fail_fetches(client, url, count, raise_error):
    """Fetch `url` `count` times; the errors, as text (no exception object stays)."""
    errors = []
    for _ in range(count):
        try:
            response = yield client.fetch(url, raise_error=raise_error)
        except (HTTPInputError, HTTPClientError) as e:
            errors.append(str(e))
        else:
            errors.append(str(response.error))
            response = None
    raise gen.Return(errors)


def held_bytes():
    """The total size of the bytes objects that objects the collector tracks refer to."""
    sizes = {}
    for container in gc.get_objects():
        for item in gc.get_referents(container):
            if type(item) is bytes:
                sizes[id(item)] = len(item)
    return sum(sizes.values())


@pytest.mark.parametrize('raise_error', [True, False], ids=['raise_error', 'response'])
@pytest.mark.parametrize('failure', sorted(FAILURES))
def test_failed_fetches_free_their_body_without_the_garbage_collector(io_loop, failure,
                                                                      raise_error):
    head, max_body_size, message = FAILURES[failure]
    server = BrokenBodyServer(head)
    client = AsyncHTTPClient(force_instance=True, max_body_size=max_body_size)
    url = 'http://127.0.0.1:%d/' % server.port
    try:
        # The first fetch warms up what stays anyway (imports, the loop's structures).
        io_loop.run_sync(lambda: fail_fetches(client, url, 1, raise_error))
        gc.collect()
        gc.disable()
        try:
            before = held_bytes()
            errors = io_loop.run_sync(lambda: fail_fetches(client, url, FETCHES, raise_error))
            kept = held_bytes() - before
        finally:
            gc.enable()
    finally:
        client.close()
        server.stop()
    assert len(errors) == FETCHES and all(message in error for error in errors), errors
    # Each body kept would be at least BODY_SENT // 2 (what max_body_size lets in).
    assert kept < BODY_SENT // 2, '%d bytes kept after %d failed fetches' % (kept, FETCHES)
