"""The demo site's server (crawler/demo/server.py) as a client sees it on the wire: the bytes
it sends for a resource, HEAD, keep-alive, delays, what it counts, and close() with answers
still waiting for their delay.
"""
from __future__ import absolute_import, division, print_function

from tinytornado import gen
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.tcpclient import TCPClient

from crawler_sites import Pages

HEAD_OF_A = (b'HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nX-Extra: yes\r\n'
             b'Content-Length: 5\r\n')


@gen.coroutine
def exchange(origin, data):
    """Send `data` on one new connection to `origin`; all the server sends until it
    closes the connection."""
    host, port = origin[len('http://'):].split(':')
    stream = yield TCPClient().connect(host, int(port))
    try:
        yield stream.write(data)
        answer = yield stream.read_until_close()
    finally:
        stream.close()
    raise gen.Return(answer)


def test_a_resource_is_sent_framed_by_the_server_and_a_head_without_its_body(serve):
    # The resource's own framing headers are not sent: the server frames the response.
    server, origin = serve(Pages({'/a': {'body': 'hello', 'headers': [
        ('Content-Length', '999'), ('Connection', 'close'), ('X-Extra', 'yes')]}}))
    answer = yield exchange(origin, b'GET /a HTTP/1.1\r\nHost: x\r\n\r\n'
                                    b'HEAD /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    assert answer == (HEAD_OF_A + b'\r\nhello' +
                      HEAD_OF_A + b'Connection: close\r\n\r\n')
    assert server.requests == ['/a', '/a']  # both on the one connection, kept alive


def test_without_keep_alive_each_response_closes_its_connection(serve):
    server, origin = serve(Pages({'/a': {'body': 'hello', 'headers': [('X-Extra', 'yes')]}}),
                           keep_alive=False)
    answer = yield exchange(origin, b'GET /a HTTP/1.1\r\nHost: x\r\n\r\n'
                                    b'GET /a HTTP/1.1\r\nHost: x\r\n\r\n')
    assert answer == HEAD_OF_A + b'Connection: close\r\n\r\nhello'
    assert server.requests == ['/a']


def test_a_malformed_request_is_refused_and_not_counted(serve):
    server, origin = serve(Pages({'/': 'home'}))
    answer = yield exchange(origin, b'NOT A REQUEST\r\n\r\n')
    assert answer.startswith(b'HTTP/1.1 400 ')
    assert server.requests == []


def test_slow_resources_come_after_their_delay_and_overlap(io_loop, serve):
    server, origin = serve(Pages({'/slow': {'body': 'slow', 'delay': 0.3}, '/fast': 'fast'}))
    client = AsyncHTTPClient(force_instance=True)
    finished = []

    @gen.coroutine
    def fetch(path):
        response = yield client.fetch(origin + path)
        finished.append((path, response.body, io_loop.time()))
    start = io_loop.time()
    slow = [fetch('/slow'), fetch('/slow')]
    while len(server.requests) < 2:
        yield gen.sleep(0.01)
    yield fetch('/fast')
    yield slow
    client.close()
    assert [(path, body) for path, body, _ in finished] == [
        ('/fast', b'fast'), ('/slow', b'slow'), ('/slow', b'slow')]
    assert min(at for path, _, at in finished if path == '/slow') - start >= 0.3
    # Both slow answers were waiting when the fast one came.
    assert (server.peak_active, server.active) == (3, 0)


def test_close_drops_answers_waiting_for_their_delay(io_loop, serve):
    # The leak check after the test asserts too that no delay's timer is left on the loop.
    server, origin = serve(Pages({'/slow': {'body': 'slow', 'delay': 60}}))
    answer = exchange(origin, b'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n')
    while server.active < 1:
        yield gen.sleep(0.01)
    start = io_loop.time()
    yield gen.with_timeout(start + 10, server.close())
    assert (yield gen.with_timeout(start + 10, answer)) == b''
    assert (server.requests, server.active) == (['/slow'], 0)
