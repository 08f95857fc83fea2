"""HTTPServer over real sockets on 127.0.0.1: our HTTP client and raw sockets as clients."""
from __future__ import absolute_import, division, print_function

import gzip
import io
import json
import logging
import re
import socket

import pytest

from net_helpers import run, tls_files, unix_socket_path  # noqa: F401
from tinytornado import gen
from tinytornado._compat import native_str
from tinytornado.concurrent import Future
from tinytornado.httpclient import AsyncHTTPClient, HTTPRequest
from tinytornado.httpserver import HTTPServer
from tinytornado.httputil import (
    HTTPHeaders, HTTPMessageDelegate, HTTPServerConnectionDelegate, ResponseStartLine,
    responses,
)
from tinytornado.iostream import IOStream, StreamClosedError
from tinytornado.netutil import bind_sockets, bind_unix_socket


def respond(request, body, code=200, headers=None):
    """Write a whole response with a Content-Length."""
    all_headers = HTTPHeaders({'Content-Length': str(len(body))})
    for name, value in (headers or {}).items():
        all_headers[name] = value
    request.connection.write_headers(ResponseStartLine('HTTP/1.1', code, ''), all_headers)
    request.connection.write(body)
    request.connection.finish()


def describe(request):
    """The request as JSON, the response body of `echo`."""
    return json.dumps({
        'method': request.method, 'uri': request.uri, 'path': request.path,
        'query': request.query, 'version': request.version,
        'body': request.body.decode('latin-1'), 'remote_ip': request.remote_ip,
        'protocol': request.protocol, 'host': request.host,
        'arguments': dict((k, [v.decode('latin-1') for v in vs])
                          for k, vs in request.arguments.items()),
        'body_arguments': sorted(request.body_arguments),
        'files': dict((k, [f.filename for f in fs]) for k, fs in request.files.items()),
        'headers': sorted(request.headers.get_all()),
    }).encode('utf-8')


def echo(request):
    respond(request, describe(request))


class Delegates(HTTPServerConnectionDelegate):
    """Serves each request with a new ``delegate_class(request_connection)``."""

    def __init__(self, delegate_class):
        self.delegate_class = delegate_class

    def start_request(self, server_conn, request_conn):
        return self.delegate_class(request_conn)


class RequestDelegate(HTTPMessageDelegate):
    """A message delegate that keeps its request's connection, to answer on."""

    def __init__(self, connection):
        self.connection = connection


@pytest.fixture
def start_server(io_loop):
    """start_server(callback, **options) -> (server, port); servers close after the test."""
    servers = []

    def start(callback=echo, **options):
        sockets = bind_sockets(0, '127.0.0.1')
        server = HTTPServer(callback, **options)
        server.add_sockets(sockets)
        servers.append(server)
        return server, sockets[0].getsockname()[1]
    yield start
    for server in servers:
        server.stop()
        run(io_loop, server.close_all_connections)


@pytest.fixture
def client(io_loop):
    http_client = AsyncHTTPClient(force_instance=True)
    yield http_client
    http_client.close()


@gen.coroutine
def raw_exchange(port, data):
    """Send `data` (bytes, or a list of pieces written one by one) on a new connection;
    the bytes the server sends back until it closes."""
    stream = yield connect(port)
    if isinstance(data, bytes):
        data = [data]
    for piece in data:
        yield stream.write(piece)
    try:
        received = yield stream.read_until_close()
    finally:
        stream.close()
    raise gen.Return(received)


@gen.coroutine
def connect(port):
    stream = IOStream(socket.socket())
    yield stream.connect(('127.0.0.1', port))
    raise gen.Return(stream)


@gen.coroutine
def read_response(stream):
    """(status line, headers, body) of one response with a Content-Length or chunked."""
    head = yield stream.read_until(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    headers = HTTPHeaders()
    for line in lines[1:]:
        if line:
            headers.parse_line(line)
    if headers.get('Transfer-Encoding') == 'chunked':
        body = b''
        while True:
            size = int((yield stream.read_until(b'\r\n'))[:-2], 16)
            chunk = yield stream.read_bytes(size + 2)
            if not size:
                break
            body += chunk[:-2]
    else:
        body = yield stream.read_bytes(int(headers.get('Content-Length', '0')))
    raise gen.Return((lines[0], headers, body))


# -- the usual ------------------------------------------------------------------------------

def test_get_and_post_through_our_client(io_loop, start_server, client):
    _, port = start_server()

    @gen.coroutine
    def go():
        response = yield client.fetch('http://127.0.0.1:%d/a/b?x=1&y=%%C3%%A9' % port)
        got = json.loads(response.body.decode('utf-8'))
        assert (got['method'], got['uri'], got['path'], got['query']) == (
            'GET', '/a/b?x=1&y=%C3%A9', '/a/b', 'x=1&y=%C3%A9')
        assert got['arguments'] == {'x': ['1'], 'y': [u'\xc3\xa9']}
        assert got['remote_ip'] == '127.0.0.1' and got['protocol'] == 'http'
        assert got['host'] == '127.0.0.1:%d' % port and got['version'] == 'HTTP/1.1'
        response = yield client.fetch('http://127.0.0.1:%d/form?q=0' % port, method='POST',
                                      body='a=1&b=two&a=3')
        got = json.loads(response.body.decode('utf-8'))
        assert got['body'] == 'a=1&b=two&a=3'
        assert got['arguments'] == {'a': ['1', '3'], 'b': ['two'], 'q': ['0']}
        assert got['body_arguments'] == ['a', 'b']
    run(io_loop, go)


def test_multipart_files_reach_the_request(io_loop, start_server, client):
    _, port = start_server()
    body = (b'--xx\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\n'
            b'hello\r\n--xx\r\nContent-Disposition: form-data; name="n"\r\n\r\n7\r\n--xx--\r\n')

    @gen.coroutine
    def go():
        response = yield client.fetch(
            'http://127.0.0.1:%d/' % port, method='POST', body=body,
            headers={'Content-Type': 'multipart/form-data; boundary=xx'})
        got = json.loads(response.body.decode('utf-8'))
        assert got['files'] == {'f': ['a.txt']} and got['arguments'] == {'n': ['7']}
    run(io_loop, go)


def test_keep_alive_serves_requests_on_one_connection(io_loop, start_server, client):
    seen = []

    def callback(request):
        seen.append(request.connection.stream)
        echo(request)
    server, port = start_server(callback)

    @gen.coroutine
    def go():
        for i in range(5):
            response = yield client.fetch('http://127.0.0.1:%d/%d' % (port, i))
            assert response.code == 200
        stream = yield connect(port)
        # Pipelined: both requests sent at once, answered in order.
        yield stream.write(b'GET /p1 HTTP/1.1\r\n\r\nGET /p2 HTTP/1.1\r\n\r\n')
        first = yield read_response(stream)
        second = yield read_response(stream)
        assert json.loads(first[2].decode())['uri'] == '/p1'
        assert json.loads(second[2].decode())['uri'] == '/p2'
        stream.close()
    run(io_loop, go)
    assert len(set(seen[:5])) == 1 and seen[5] is seen[6] and seen[5] is not seen[0]


def test_a_request_callback_replaced_after_start_serves_new_connections(io_loop,
                                                                       start_server, client):
    # Whether request_callback is a delegate is asked again for a new callback. (A kept
    # alive connection has started its next request already: each fetch closes its own.)
    class Streaming(RequestDelegate):
        def data_received(self, chunk):
            self.chunk = chunk

        def finish(self):
            respond(self, b'streamed ' + self.chunk)
    server, port = start_server(echo)
    close = {'Connection': 'close'}

    @gen.coroutine
    def go():
        first = yield client.fetch('http://127.0.0.1:%d/one' % port, headers=close)
        assert json.loads(first.body.decode())['uri'] == '/one'
        server.request_callback = Delegates(Streaming)
        second = yield client.fetch('http://127.0.0.1:%d/two' % port, method='POST',
                                    body=b'abc', headers=close)
        server.request_callback = lambda request: respond(request, b'plain')
        third = yield client.fetch('http://127.0.0.1:%d/three' % port, headers=close)
        raise gen.Return((second, third))
    second, third = run(io_loop, go)
    assert second.body == b'streamed abc'
    assert third.body == b'plain'


def test_connection_close_and_http10(io_loop, start_server):
    _, port = start_server()

    @gen.coroutine
    def go():
        data = yield raw_exchange(port, b'GET / HTTP/1.1\r\nConnection: close\r\n\r\n')
        assert data.startswith(b'HTTP/1.1 200 ')
        data = yield raw_exchange(port, b'GET /ten HTTP/1.0\r\n\r\n')
        assert data.startswith(b'HTTP/1.1 200 ') and b'"HTTP/1.0"' in data
        # A 1.0 client that asks for keep-alive gets it, and is told so.
        stream = yield connect(port)
        for _ in range(2):
            yield stream.write(b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
            start_line, headers, _ = yield read_response(stream)
            assert headers['Connection'] == 'Keep-Alive'
        stream.close()
    run(io_loop, go)


def test_no_keep_alive_closes_after_each_response(io_loop, start_server):
    _, port = start_server(no_keep_alive=True)

    @gen.coroutine
    def go():
        data = yield raw_exchange(port, b'GET / HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n')
        assert data.count(b'HTTP/1.1 200') == 1 and b'Connection: close' in data
    run(io_loop, go)


def test_bare_lf_heads_are_read_as_5_1_reads_them(io_loop, start_server):
    _, port = start_server()

    @gen.coroutine
    def go():
        data = yield raw_exchange(port, b'\r\nGET /lf HTTP/1.0\nX-A: 1\n\n')
        assert data.startswith(b'HTTP/1.1 200 ') and b'/lf' in data
    run(io_loop, go)


# -- response framing -----------------------------------------------------------------------

def streaming(request):
    connection = request.connection
    connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'), HTTPHeaders(),
                             chunk=b'first,')
    connection.write(b'')
    connection.write(b'second')
    connection.finish()


def test_response_without_length_is_chunked_for_11_and_closes_for_10(io_loop, start_server,
                                                                     client):
    _, port = start_server(streaming)

    @gen.coroutine
    def go():
        response = yield client.fetch('http://127.0.0.1:%d/' % port)
        assert response.body == b'first,second'
        assert response.headers['Transfer-Encoding'] == 'chunked'
        data = yield raw_exchange(port, b'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
        assert data.endswith(b'\r\n\r\nfirst,second') and b'chunked' not in data
    run(io_loop, go)


def test_head_and_304_responses_have_no_body(io_loop, start_server):
    def callback(request):
        code = 304 if request.path == '/304' else 200
        request.connection.write_headers(ResponseStartLine('HTTP/1.1', code, ''),
                                         HTTPHeaders())
        request.connection.finish()
    _, port = start_server(callback)

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'HEAD / HTTP/1.1\r\n\r\nGET /304 HTTP/1.1\r\n\r\n')
        head = yield stream.read_until(b'\r\n\r\n')
        assert head.startswith(b'HTTP/1.1 200 OK\r\n') and b'chunked' not in head
        head = yield stream.read_until(b'\r\n\r\n')
        assert head.startswith(b'HTTP/1.1 304 Not Modified\r\n')
        stream.close()
    run(io_loop, go)


def test_writing_more_or_less_than_content_length_fails_and_closes(io_loop, start_server):
    errors = []

    def callback(request):
        request.connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                         HTTPHeaders({'Content-Length': '3'}))
        try:
            if request.path == '/more':
                request.connection.write(b'abcd')
            else:
                request.connection.write(b'ab')
                request.connection.finish()
        except Exception as e:
            errors.append(str(e))
    _, port = start_server(callback)

    @gen.coroutine
    def go():
        for path in (b'/more', b'/less'):
            data = yield raw_exchange(port, b'GET ' + path + b' HTTP/1.1\r\n\r\n')
            assert data.startswith(b'HTTP/1.1 200')
    run(io_loop, go)
    assert errors == ['Tried to write more data than Content-Length',
                      'Tried to write 1 bytes less than Content-Length']


@pytest.mark.parametrize('closes_it', [True, False])
def test_header_with_newline_is_refused(io_loop, start_server, closes_it):
    # Without the application closing the connection, the refusal closes it: nothing can
    # follow a refused head, and the client must not wait for it.
    errors = []

    def callback(request):
        try:
            respond(request, b'x', headers={'X-Bad': 'a\r\nSet-Cookie: evil=1'})
        except ValueError as e:
            errors.append(e)
            if closes_it:
                request.connection.close()
    _, port = start_server(callback)
    data = run(io_loop, lambda: raw_exchange(port, b'GET / HTTP/1.1\r\n\r\n'))
    assert data == b'' and len(errors) == 1


def test_header_text_and_bytes_go_out_as_latin1(io_loop, start_server):
    # On 2.7 a web handler's header names are unicode, and its values may be bytes beyond
    # ASCII (5.1 sent those as they were): mixing the two must not fail.
    def callback(request):
        respond(request, b'x', headers={u'X-Name': native_str(b'caf\xe9'),
                                        'X-Text': u'caf\xe9'})
    _, port = start_server(callback)
    request = b'GET / HTTP/1.1\r\nConnection: close\r\n\r\n'
    data = run(io_loop, lambda: raw_exchange(port, request))
    head = data.split(b'\r\n\r\n')[0].split(b'\r\n')
    assert b'X-Name: caf\xe9' in head and b'X-Text: caf\xe9' in head


# -- request bodies ---------------------------------------------------------------------------

def test_chunked_request_body(io_loop, start_server):
    _, port = start_server()

    @gen.coroutine
    def go():
        data = yield raw_exchange(port, [
            b'POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n'
            b'Content-Type: application/x-www-form-urlencoded\r\n\r\n',
            b'4\r\na=12\r\n', b'5;ext=1\r\n&b=34\r\n0\r\nX-Trailer: t\r\n\r\n'])
        body = json.loads(data.split(b'\r\n\r\n', 1)[1].decode())
        assert body['body'] == 'a=12&b=34' and body['arguments'] == {'a': ['12'], 'b': ['34']}
    run(io_loop, go)


def test_chunked_body_through_our_client(io_loop, start_server, client):
    _, port = start_server()

    @gen.coroutine
    def producer(write):
        for piece in (b'one ', b'two ', b'three'):
            yield write(piece)

    @gen.coroutine
    def go():
        response = yield client.fetch(HTTPRequest(
            'http://127.0.0.1:%d/' % port, method='POST', body_producer=producer))
        assert json.loads(response.body.decode())['body'] == 'one two three'
    run(io_loop, go)


def test_100_continue_is_sent_before_the_body_is_read(io_loop, start_server, client):
    _, port = start_server()

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'POST / HTTP/1.1\r\nContent-Length: 5\r\n'
                           b'Expect: 100-continue\r\n\r\n')
        interim = yield stream.read_until(b'\r\n\r\n')
        assert interim == b'HTTP/1.1 100 Continue\r\n\r\n'
        yield stream.write(b'hello')
        _, _, body = yield read_response(stream)
        assert json.loads(body.decode())['body'] == 'hello'
        stream.close()
        # Our client waits for the 100 Continue too.
        response = yield client.fetch(HTTPRequest(
            'http://127.0.0.1:%d/' % port, method='PUT', body=b'data',
            expect_100_continue=True))
        assert json.loads(response.body.decode())['body'] == 'data'
    run(io_loop, go)


def test_a_response_before_the_body_sends_no_continue_and_closes(io_loop, start_server):
    class RefuseAtHead(RequestDelegate):
        def headers_received(self, start_line, headers):
            self.connection.write_headers(ResponseStartLine('HTTP/1.1', 413, ''),
                                          HTTPHeaders({'Content-Length': '0'}))
            self.connection.finish()
    _, port = start_server(Delegates(RefuseAtHead))

    @gen.coroutine
    def go():
        data = yield raw_exchange(port, [
            b'POST / HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n',
            b'hello'])
        # An empty reason is the standard one, which Python 3.13 renamed (RFC 9110's).
        assert data.startswith(b'HTTP/1.1 413 ' + responses[413].encode('ascii') + b'\r\n')
        assert b'100 Continue' not in data  # and the connection closed: read to its end
    run(io_loop, go)


def test_gzip_request_body_is_decompressed(io_loop, start_server, client):
    _, port = start_server(decompress_request=True)
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode='wb') as f:
        f.write(b'x=1&y=2')

    @gen.coroutine
    def go():
        response = yield client.fetch(HTTPRequest(
            'http://127.0.0.1:%d/' % port, method='POST', body=out.getvalue(),
            headers={'Content-Encoding': 'gzip',
                     'Content-Type': 'application/x-www-form-urlencoded'}))
        got = json.loads(response.body.decode())
        assert got['body'] == 'x=1&y=2' and got['arguments'] == {'x': ['1'], 'y': ['2']}
        assert ['X-Consumed-Content-Encoding', 'gzip'] in got['headers']
        assert 'Content-Encoding' not in dict(got['headers'])
        data = yield raw_exchange(port, b'POST / HTTP/1.1\r\nContent-Encoding: gzip\r\n'
                                  b'Content-Length: 4\r\n\r\nnope')
        assert data.startswith(b'HTTP/1.1 400 ')
    run(io_loop, go)


def test_gzip_left_alone_without_decompress_request(io_loop, start_server, client):
    _, port = start_server()

    @gen.coroutine
    def go():
        response = yield client.fetch(HTTPRequest(
            'http://127.0.0.1:%d/' % port, method='POST', body=b'\x1f\x8b..',
            headers={'Content-Encoding': 'gzip'}))
        got = json.loads(response.body.decode())
        assert got['body'] == u'\x1f\x8b..' and ['Content-Encoding', 'gzip'] in got['headers']
    run(io_loop, go)


def test_data_received_comes_in_pieces_of_chunk_size_and_waits(io_loop, start_server):
    pieces = []

    class Collect(RequestDelegate):
        @gen.coroutine
        def data_received(self, chunk):
            pieces.append(chunk)
            yield gen.sleep(0.001)  # flow control: the next piece waits for this

        def finish(self):
            self.connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                          HTTPHeaders({'Content-Length': '0'}))
            self.connection.finish()
    _, port = start_server(Delegates(Collect), chunk_size=7)
    data = run(io_loop, lambda: raw_exchange(
        port, b'PUT / HTTP/1.1\r\nConnection: close\r\nContent-Length: 30\r\n\r\n' + b'z' * 30))
    assert data.startswith(b'HTTP/1.1 200')
    assert b''.join(pieces) == b'z' * 30 and max(len(p) for p in pieces) == 7


# -- xheaders ------------------------------------------------------------------------------

def test_xheaders_set_remote_ip_and_protocol(io_loop, start_server, client):
    _, port = start_server(xheaders=True, trusted_downstream=['10.0.0.9'])

    @gen.coroutine
    def fetch(headers):
        response = yield client.fetch('http://127.0.0.1:%d/' % port, headers=headers)
        got = json.loads(response.body.decode())
        raise gen.Return((got['remote_ip'], got['protocol']))

    @gen.coroutine
    def go():
        assert (yield fetch({'X-Real-Ip': '4.4.4.4'})) == ('4.4.4.4', 'http')
        assert (yield fetch({'X-Forwarded-For': '1.1.1.1, 2.2.2.2'})) == ('2.2.2.2', 'http')
        assert (yield fetch({'X-Forwarded-For': '1.1.1.1, 10.0.0.9'}))[0] == '1.1.1.1'
        assert (yield fetch({'X-Real-Ip': 'not an ip'}))[0] == '127.0.0.1'
        assert (yield fetch({'X-Scheme': 'https'})) == ('127.0.0.1', 'https')
        assert (yield fetch({'X-Forwarded-Proto': 'http, https'}))[1] == 'https'
        assert (yield fetch({'X-Forwarded-Proto': 'gopher'}))[1] == 'http'
        # The next request on the connection starts from the connection's own values.
        assert (yield fetch({})) == ('127.0.0.1', 'http')
    run(io_loop, go)


def test_without_xheaders_the_headers_are_ignored(io_loop, start_server, client):
    _, port = start_server()

    @gen.coroutine
    def go():
        response = yield client.fetch('http://127.0.0.1:%d/' % port,
                                      headers={'X-Real-Ip': '4.4.4.4', 'X-Scheme': 'https'})
        got = json.loads(response.body.decode())
        assert (got['remote_ip'], got['protocol']) == ('127.0.0.1', 'http')
    run(io_loop, go)


# -- limits and timeouts -------------------------------------------------------------------

def test_header_too_large_is_431(io_loop, start_server, client):
    _, port = start_server(max_header_size=1024)

    @gen.coroutine
    def go():
        response = yield client.fetch('http://127.0.0.1:%d/' % port,
                                      headers={'X-Filler': 'a' * 2000}, raise_error=False)
        assert response.code == 431
        response = yield client.fetch('http://127.0.0.1:%d/' % port,
                                      headers={'X-Filler': 'a' * 500})
        assert response.code == 200
    run(io_loop, go)


def test_body_too_large_is_400(io_loop, start_server, client):
    _, port = start_server(max_body_size=100)

    @gen.coroutine
    def go():
        response = yield client.fetch('http://127.0.0.1:%d/' % port, method='PUT',
                                      body=b'a' * 101, raise_error=False)
        assert response.code == 400
        response = yield client.fetch('http://127.0.0.1:%d/' % port, method='PUT',
                                      body=b'a' * 100)
        assert response.code == 200
        data = yield raw_exchange(port, b'PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n'
                                  b'40\r\n' + b'b' * 64 + b'\r\n40\r\n' + b'b' * 64 + b'\r\n')
        assert data.startswith(b'HTTP/1.1 400 ')
    run(io_loop, go)


def test_idle_connection_timeout_closes(io_loop, start_server):
    _, port = start_server(idle_connection_timeout=0.1)

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'GET / HTTP/1.1\r\n\r\n')
        yield read_response(stream)
        started = io_loop.time()
        data = yield stream.read_until_close()  # the server closes it, idle
        assert data == b'' and io_loop.time() - started < 20
        # A head trickling in slower than the timeout is cut off too.
        stream = yield connect(port)
        yield stream.write(b'GET / HTTP/1.1\r\n')
        data = yield stream.read_until_close()
        assert data == b''
    run(io_loop, go)


def test_idle_timeout_counts_from_the_last_request(io_loop, start_server):
    # The timeout made for the first request rings while the connection is still in use:
    # it must look at the deadline the later requests moved, not close the connection.
    server, port = start_server(idle_connection_timeout=0.5)

    @gen.coroutine
    def go():
        stream = yield connect(port)
        started = io_loop.time()
        served = 0
        while io_loop.time() - started < 1.5:  # three timeouts' worth, a request each 0.05
            yield stream.write(b'GET / HTTP/1.1\r\n\r\n')
            yield read_response(stream)
            served += 1
            yield gen.sleep(0.05)
        assert served >= 3 and not stream.closed()
        data = yield stream.read_until_close()  # idle now: the server closes it
        assert data == b''
    run(io_loop, go)


def test_body_timeout_closes(io_loop, start_server):
    closed = []

    def callback(request):
        raise AssertionError('a request cut off by its body timeout is not served')

    server, port = start_server(callback, body_timeout=0.1)
    original = server.start_request

    def start_request(server_conn, request_conn):
        delegate = original(server_conn, request_conn)
        delegate.on_connection_close = lambda: closed.append(True)
        return delegate
    server.start_request = start_request
    data = run(io_loop, lambda: raw_exchange(
        port, b'PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc'))
    assert data == b'' and closed == [True]


# -- hostile clients ---------------------------------------------------------------------

@pytest.mark.parametrize('request_bytes', [
    # Request smuggling: two framings, or lengths that disagree.
    b'POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd',
    b'POST / HTTP/1.1\r\nContent-Length: 3, 4\r\n\r\nabcd',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n',
    b'POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc',
    # Bad chunk sizes.
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;a\rb\r\nhello\r\n0\r\n\r\n',
    b'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' + b'1' * 30 + b'\r\n',
    # Malformed heads.
    b'asdf\r\n\r\n',
    b'GET / HTTP/2.0\r\n\r\n',
    b'GET  / HTTP/1.1\r\n\r\n',
    b'GET / HTTP/1.1\r\nno colon\r\n\r\n',
    b'GET / HTTP/1.1\r\nX: a\rb\r\n\r\n',
    b'GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n',
    b'GET / HTTP/1.1\r\n folded: first\r\n\r\n',
    b'GET /\x7f HTTP/1.1\r\n\r\n',
])
def test_hostile_requests_get_400_and_close(io_loop, start_server, request_bytes):
    served = []

    def callback(request):
        served.append(request)
        echo(request)
    _, port = start_server(callback)
    data = run(io_loop, lambda: raw_exchange(port, request_bytes))
    assert data.startswith(b'HTTP/1.1 400 Bad Request\r\n'), data
    assert served == []


def test_smuggled_request_is_never_served(io_loop, start_server):
    served = []

    def callback(request):
        served.append(request.path)
        echo(request)
    _, port = start_server(callback)
    smuggle = (b'POST /outer HTTP/1.1\r\nContent-Length: 44\r\nTransfer-Encoding: chunked\r\n'
               b'\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nX: y\r\n\r\n')
    data = run(io_loop, lambda: raw_exchange(port, smuggle))
    assert data.startswith(b'HTTP/1.1 400') and served == []


def test_byte_by_byte_client_is_served(io_loop, start_server):
    _, port = start_server()
    request = (b'POST /slow?x=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n'
               b'Connection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n')

    @gen.coroutine
    def go():
        stream = yield connect(port)
        for i in range(len(request)):
            yield stream.write(request[i:i + 1])
            if i % 7 == 0:
                yield gen.moment
        data = yield stream.read_until_close()
        stream.close()
        raise gen.Return(data)
    data = run(io_loop, go)
    got = json.loads(data.split(b'\r\n\r\n', 1)[1].decode())
    assert got['body'] == 'abcde' and got['uri'] == '/slow?x=1'


def test_client_leaving_mid_request_is_quietly_dropped(io_loop, start_server, caplog):
    told = Future()

    class Watch(RequestDelegate):
        def on_connection_close(self):
            told.set_result(None)
    server, port = start_server(Delegates(Watch))

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc')
        stream.close()
        yield told
        while server._connections:
            yield gen.sleep(0.01)
    with caplog.at_level(logging.INFO):
        run(io_loop, go)
    assert [record.getMessage() for record in caplog.records] == []


def test_application_error_is_logged_and_the_connection_closed(io_loop, start_server,
                                                                caplog):
    def callback(request):
        raise ValueError('boom')
    _, port = start_server(callback)
    with caplog.at_level(logging.ERROR):
        data = run(io_loop, lambda: raw_exchange(port, b'GET / HTTP/1.1\r\n\r\n'))
    assert data == b''
    assert any(record.exc_info and 'boom' in str(record.exc_info[1])
               for record in caplog.records)


def test_many_requests_from_the_server_loop_do_not_grow_the_stack(io_loop, start_server):
    _, port = start_server()
    count = 300

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'GET / HTTP/1.1\r\n\r\n' * count)
        for _ in range(count):
            start_line, _, _ = yield read_response(stream)
            assert start_line.startswith('HTTP/1.1 200')
        stream.close()
    run(io_loop, go)


def test_detach_hands_the_stream_over(io_loop, start_server):
    def callback(request):
        stream = request.connection.detach()
        stream.write(b'raw bytes\n')
        stream.close()
    _, port = start_server(callback)
    assert run(io_loop, lambda: raw_exchange(port, b'GET / HTTP/1.1\r\n\r\n')) == \
        b'raw bytes\n'


def test_callback_style_request_write_and_finish(io_loop, start_server, recwarn):
    def callback(request):
        request.write(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
        request.finish()
    _, port = start_server(callback)
    # 5.1's deprecated request.write goes to connection.write: the bytes as given, here
    # with no response head sent by the server first.
    data = run(io_loop, lambda: raw_exchange(port, b'GET / HTTP/1.1\r\nConnection: close'
                                             b'\r\n\r\n'))
    assert re.match(br'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', data), data


def test_closed_connection_write_fails_quietly(io_loop, start_server):
    results = []

    def callback(request):
        request.connection.close()
        results.append(request.connection.write_headers(
            ResponseStartLine('HTTP/1.1', 200, 'OK'), HTTPHeaders()))
    _, port = start_server(callback)
    assert run(io_loop, lambda: raw_exchange(port, b'GET / HTTP/1.1\r\n\r\n')) == b''
    with pytest.raises(StreamClosedError):
        results[0].result()


# -- Tornado 5.1's words and per-request settings ------------------------------------------

@pytest.mark.parametrize('request_bytes, logged', [
    (b'asdf\r\n\r\n', 'Malformed HTTP request line'),
    (b'GET / HTTP/1.0\r\nasdf\r\n\r\n', 'no colon in header line'),
    (b'POST / HTTP/1.1\r\nContent-Length: foo\r\n\r\nbar',
     'Only integer Content-Length is allowed'),
    (b'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
     'Multiple unequal Content-Lengths'),
])
def test_refusals_are_logged_in_5_1_words(io_loop, start_server, caplog, request_bytes,
                                          logged):
    _, port = start_server()
    with caplog.at_level(logging.INFO, logger='tornado.general'):
        data = run(io_loop, lambda: raw_exchange(port, request_bytes))
    assert data == b'HTTP/1.1 400 Bad Request\r\n\r\n'  # as 5.1 answers, byte for byte
    messages = [record.getMessage() for record in caplog.records]
    assert any(message.startswith('Malformed HTTP message from 127.0.0.1: ') and
               logged in message for message in messages), messages


class SizedRequest(RequestDelegate):
    """Counts body bytes; ?max=N raises the body limit and ?timeout=S sets the body
    timeout, for this request only (as 5.1's handlers do from prepare)."""

    size = 0

    def headers_received(self, start_line, headers):
        query = dict(pair.split('=') for pair in start_line.path.partition('?')[2].split('&')
                     if pair)
        if 'max' in query:
            self.connection.set_max_body_size(int(query['max']))
        if 'timeout' in query:
            self.connection.set_body_timeout(float(query['timeout']))

    def data_received(self, chunk):
        self.size += len(chunk)

    def finish(self):
        body = str(self.size).encode('ascii')
        self.connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                      HTTPHeaders({'Content-Length': str(len(body))}))
        self.connection.write(body)
        self.connection.finish()


def test_max_body_size_override_lasts_one_request(io_loop, start_server, caplog):
    _, port = start_server(Delegates(SizedRequest), max_body_size=4096)

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'PUT /?max=10240 HTTP/1.1\r\nContent-Length: 10240\r\n\r\n' +
                           b'a' * 10240)
        _, _, body = yield read_response(stream)
        assert body == b'10240'
        yield stream.write(b'PUT / HTTP/1.1\r\nContent-Length: 10240\r\n\r\n')
        data = yield stream.read_until_close()
        assert data == b'HTTP/1.1 400 Bad Request\r\n\r\n'
    with caplog.at_level(logging.INFO, logger='tornado.general'):
        run(io_loop, go)
    assert any('Content-Length too long' in r.getMessage() for r in caplog.records)


def test_body_timeout_set_per_request_is_logged(io_loop, start_server, caplog):
    _, port = start_server(Delegates(SizedRequest))
    with caplog.at_level(logging.INFO, logger='tornado.general'):
        data = run(io_loop, lambda: raw_exchange(
            port, b'PUT /?timeout=0.1 HTTP/1.0\r\nContent-Length: 42\r\n\r\n'))
    assert data == b''
    assert [r.getMessage() for r in caplog.records] == ['Timeout reading body from 127.0.0.1']


# -- sockets: listen, bind and start, Unix, TLS ------------------------------------------

def test_listen_and_bind_start(io_loop, client):
    servers = [HTTPServer(echo), HTTPServer(echo)]
    probe = bind_sockets(0, '127.0.0.1')[0]
    port = probe.getsockname()[1]
    probe.close()
    servers[0].listen(port, '127.0.0.1')
    servers[1].bind(0, '127.0.0.1')
    servers[1].start()
    bound_port = list(servers[1]._sockets.values())[0].getsockname()[1]

    @gen.coroutine
    def go():
        for p in (port, bound_port):
            response = yield client.fetch('http://127.0.0.1:%d/x' % p)
            assert json.loads(response.body.decode())['uri'] == '/x'
    try:
        run(io_loop, go)
    finally:
        for server in servers:
            server.stop()
            run(io_loop, server.close_all_connections)


def test_unix_socket(io_loop, unix_socket_path, caplog):
    server = HTTPServer(echo)
    server.add_socket(bind_unix_socket(unix_socket_path))

    @gen.coroutine
    def exchange(data):
        stream = IOStream(socket.socket(socket.AF_UNIX))
        yield stream.connect(unix_socket_path)
        yield stream.write(data)
        received = yield stream.read_until_close()
        stream.close()
        raise gen.Return(received)
    try:
        data = run(io_loop, lambda: exchange(b'GET /hello HTTP/1.0\r\n\r\n'))
        assert data.startswith(b'HTTP/1.1 200 OK\r\n')
        assert json.loads(data.split(b'\r\n\r\n', 1)[1].decode())['remote_ip'] == '0.0.0.0'
        with caplog.at_level(logging.INFO, logger='tornado.general'):
            data = run(io_loop, lambda: exchange(b'garbage\r\n\r\n'))
        assert data == b'HTTP/1.1 400 Bad Request\r\n\r\n'
        assert any(r.getMessage().startswith('Malformed HTTP message from')
                   for r in caplog.records)
    finally:
        server.stop()
        run(io_loop, server.close_all_connections)


def test_tls_server(io_loop, start_server):
    files = tls_files()
    _, port = start_server(ssl_options={'certfile': files.server_cert,
                                        'keyfile': files.server_key})
    http_client = AsyncHTTPClient(force_instance=True,
                                  defaults={'ca_certs': files.ca_cert})

    @gen.coroutine
    def go():
        for body in (None, b'A' * 5000):
            response = yield http_client.fetch(
                'https://localhost:%d/tls' % port, method='GET' if body is None else 'POST',
                body=body)
            got = json.loads(response.body.decode())
            assert got['protocol'] == 'https' and len(got['body']) == len(body or b'')
        # A plain-HTTP client is cut off, not left waiting.
        try:
            data = yield raw_exchange(port, b'GET / HTTP/1.1\r\n\r\n')
        except StreamClosedError:  # reset by the server
            data = b''
        assert not data.startswith(b'HTTP/1.1 200')
    try:
        run(io_loop, go)
    finally:
        http_client.close()


def test_legacy_callback_arguments_of_write(io_loop, start_server, recwarn):
    called = []

    def callback(request):
        connection = request.connection
        assert connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                        HTTPHeaders({'Content-Length': '2'}),
                                        callback=lambda: called.append('head')) is None
        connection.write(b'ok', callback=lambda: (called.append('body'), connection.finish()))
    _, port = start_server(callback)
    data = run(io_loop, lambda: raw_exchange(port, b'GET / HTTP/1.1\r\nConnection: close'
                                             b'\r\n\r\n'))
    assert data.endswith(b'\r\n\r\nok') and called == ['head', 'body']
    assert [str(w.message) for w in recwarn if w.category is DeprecationWarning] == [
        'callback argument is deprecated, use returned Future instead'] * 2


def test_response_from_headers_received_keeps_a_bodyless_request_alive(io_loop, start_server):
    told = []

    class AnswerAtHead(RequestDelegate):
        def headers_received(self, start_line, headers):
            self.connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                          HTTPHeaders({'Content-Length': '2'}), chunk=b'ok')
            self.connection.finish()

        def finish(self):
            told.append('finish')

        def on_connection_close(self):
            told.append('close')  # 5.1's word for "finished before the request was read"
    _, port = start_server(Delegates(AnswerAtHead))

    @gen.coroutine
    def go():
        stream = yield connect(port)
        for _ in range(2):
            yield stream.write(b'GET / HTTP/1.1\r\n\r\n')
            _, _, body = yield read_response(stream)
            assert body == b'ok'
        stream.close()
    run(io_loop, go)
    assert told == ['close', 'close']


def test_close_callback_runs_when_the_client_leaves_before_the_response(io_loop,
                                                                         start_server):
    closed = Future()

    def callback(request):  # never answers: a long poll
        request.connection.set_close_callback(lambda: closed.set_result('told'))
    server, port = start_server(callback)

    @gen.coroutine
    def go():
        stream = yield connect(port)
        yield stream.write(b'GET /poll HTTP/1.1\r\n\r\n')
        yield gen.sleep(0.05)
        stream.close()
        result = yield closed
        while server._connections:
            yield gen.sleep(0.01)
        raise gen.Return(result)
    assert run(io_loop, go) == 'told'


def test_protocol_argument_names_the_scheme(io_loop, start_server, client):
    _, port = start_server(protocol='https')

    @gen.coroutine
    def go():
        response = yield client.fetch('http://127.0.0.1:%d/' % port)
        raise gen.Return(json.loads(response.body.decode())['protocol'])
    assert run(io_loop, go) == 'https'
