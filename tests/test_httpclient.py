"""AsyncHTTPClient against two servers the tests start.

- `CannedServer` runs on the test's own loop and answers each request with the next step
  of a script (given bytes, then keep the connection, close it, reset it, trickle, or say
  nothing), so every failure can be produced exactly, and every socket is the loop's.
- `ThreadedHTTPServer` is the standard library's HTTP/1.1 server in a thread: real
  framings, keep-alive, redirects, compression.

Each bad-input row checks three things: a clear error, a loop that still serves the next
fetch, and no socket left open (counted with open_fds once the server has dropped its side).
"""
from __future__ import absolute_import, division, print_function

import collections
import datetime
import errno
import io
import json
import re
import socket
import ssl
import struct
import threading
import time
import zlib

import pytest
from six.moves import BaseHTTPServer, socketserver
from six.moves.urllib.parse import parse_qs, urlsplit

from net_helpers import TEST_HOSTNAME, open_fds, tls_files
from tinytornado import gen
from tinytornado._httprequest import split_url
from tinytornado.concurrent import CancelledError, TimeoutError
from tinytornado.httpclient import (
    AsyncHTTPClient, HTTPClientError, HTTPError, HTTPRequest, HTTPResponse,
    HTTPStreamClosedError, HTTPTimeoutError,
)
from tinytornado.httputil import HTTPHeaders, HTTPInputError, NoResponseError
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import StreamClosedError
from tinytornado.netutil import ssl_options_to_context
from tinytornado.simple_httpclient import SimpleAsyncHTTPClient
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import bind_unused_port

SHORT = 0.2  # the request, queue and connect timeouts of the timeout tests, in seconds


# --- the canned-bytes server ---------------------------------------------------------------

Request = collections.namedtuple('Request', 'server connection method path headers body')


class CannedServer(TCPServer):
    """Answers each request with the next step of `script`; the last step repeats.

    A step is called as ``step(stream, request)`` and may return a Future; the
    connection's next request is read once it resolves, unless the step closed it.
    """

    def __init__(self, script, ssl_options=None):
        super(CannedServer, self).__init__(ssl_options=ssl_options)
        self.script = collections.deque(script)
        self.streams = []  # every connection accepted, in order
        self.requests = []
        self.in_flight = self.peak = 0
        self.tasks = []
        sock, self.port = bind_unused_port()
        self.add_socket(sock)

    def url(self, path='/', scheme='http', host='127.0.0.1'):
        return '%s://%s:%d%s' % (scheme, host, self.port, path)

    @gen.coroutine
    def handle_stream(self, stream, address):
        self.streams.append(stream)
        while not stream.closed():
            try:
                request = yield read_request(self, stream, len(self.streams) - 1)
            except StreamClosedError:
                return
            self.requests.append(request)
            step = self.script.popleft() if len(self.script) > 1 else self.script[0]
            yield self._run(step, stream, request)

    @gen.coroutine
    def _run(self, step, stream, request):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        task = gen.maybe_future(step(stream, request))
        self.tasks.append(task)
        try:
            yield task
        except (StreamClosedError, CancelledError):
            pass
        finally:
            self.in_flight -= 1

    def close(self):
        """Stop listening and drop every connection (and the steps still running)."""
        self.stop()
        for task in self.tasks:
            task.cancel()
        for stream in self.streams:
            stream.close()


@gen.coroutine
def read_request(server, stream, connection):
    head = yield stream.read_until(b'\r\n\r\n', max_bytes=65536)
    lines = head.decode('latin-1').split('\r\n')
    method, path, _ = lines[0].split(' ')
    headers = HTTPHeaders.parse('\r\n'.join(lines[1:]))
    length = int(headers.get('Content-Length', '0'))
    body = (yield stream.read_bytes(length)) if length else b''
    raise gen.Return(Request(server, connection, method, path, headers, body))


def response_bytes(body=b'hello', code=200, headers=()):
    lines = ['HTTP/1.1 %d X' % code, 'Content-Length: %d' % len(body)] + list(headers)
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1') + body


def reply(data):
    """Send `data`; keep the connection for the next request."""
    return lambda stream, request: stream.write(data)


def reply_and_close(data):
    def step(stream, request):
        stream.write(data)
        stream.close()
    return step


def reply_and_reset(data):
    """Send `data`, then reset the connection (RST, not FIN)."""
    def step(stream, request):
        stream.write(data)
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        stream.close()
    return step


def close_without_reply(stream, request):
    stream.close()


def never_reply(stream, request):
    return stream.read_until_close()  # ends when the client gives up


def reply_later(delay, data):
    @gen.coroutine
    def step(stream, request):
        yield gen.sleep(delay)
        yield stream.write(data)
    return step


def reply_in_company(count, data):
    """Send `data` once `count` requests are in flight at this server (or after 0.5 s):
    so that requests the client may send together are seen together."""
    @gen.coroutine
    def step(stream, request):
        deadline = IOLoop.current().time() + 0.5
        while request.server.in_flight < count and IOLoop.current().time() < deadline:
            yield gen.sleep(0.002)
        yield stream.write(data)
    return step


def trickle(data, interval):
    @gen.coroutine
    def step(stream, request):
        for index in range(len(data)):
            yield stream.write(data[index:index + 1])
            yield gen.sleep(interval)
    return step


@pytest.fixture
def servers(io_loop):
    """Makes CannedServers (``servers(script)``) and closes them after the test."""
    made = []

    def make(script, **kwargs):
        made.append(CannedServer(script, **kwargs))
        return made[-1]
    yield make
    for server in made:
        server.close()
    io_loop.run_sync(settle)


@gen.coroutine
def settle():
    """A few loop passes: the coroutines of closed connections see the close and end."""
    for _ in range(3):
        yield gen.moment


@pytest.fixture
def clients(io_loop):
    """Makes clients (``clients(max_clients=2)``); after the test, closes them and waits
    for the threaded server to let go of their connections, so that the next test can
    count file descriptors."""
    made = []

    def make(**kwargs):
        made.append(AsyncHTTPClient(force_instance=True, **kwargs))
        return made[-1]
    yield make
    for client in made:
        client.close()
    for server in _threaded_servers:
        server.wait_until_idle()


@pytest.fixture
def client(clients):
    return clients()


@gen.coroutine
def wait_for(condition, timeout=5):
    """Wait, polling the loop, until `condition()` is true."""
    deadline = IOLoop.current().time() + timeout
    while not condition():
        assert IOLoop.current().time() < deadline, 'condition never became true'
        yield gen.sleep(0.002)


# --- the threaded standard-library server --------------------------------------------------

GZIP_BODY = b''.join(b'line %d of a compressible body\n' % i for i in range(2000))


class _Handler(BaseHTTPServer.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    disable_nagle_algorithm = True  # 2.7 writes the head line by line

    def log_message(self, *args):
        pass

    def do_GET(self):
        path, _, query = self.path.partition('?')
        parts = path.strip('/').split('/')
        self.query = dict((k, v[0]) for k, v in parse_qs(query).items())
        self.body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
        getattr(self, 'route_' + parts[0])(*parts[1:])

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def send(self, code, body, headers=(), length=True):
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        if length:
            self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def route_echo(self):
        echo = {'method': self.command, 'path': self.path, 'body': self.body.decode('latin-1'),
                'headers': dict((name.title(), value) for name, value in self.headers.items())}
        self.send(200, json.dumps(echo).encode('utf-8'), [('Content-Type', 'application/json')])

    def route_length(self, size):
        self.send(200, b'x' * int(size))

    def route_status(self, code):
        code = int(code)
        if code in (204, 304):
            self.send_response(code)
            self.end_headers()
        else:
            self.send(code, b'status body')

    def route_chunked(self):
        self.send(200, b'', [('Transfer-Encoding', 'chunked')], length=False)
        for piece in (b'hello', b', ', b'x' * 70000, b'world'):
            self.wfile.write(b'%x\r\n' % len(piece) + piece + b'\r\n')
        self.wfile.write(b'0\r\nX-Trailer: yes\r\n\r\n')

    def route_close(self):
        self.send(200, b'', [('Connection', 'close')], length=False)
        self.wfile.write(b'until the server closes')
        self.close_connection = True

    def route_compressed(self, encoding):
        wbits = {'gzip': 16 + zlib.MAX_WBITS, 'deflate': zlib.MAX_WBITS}[encoding]
        compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
        body = compressor.compress(GZIP_BODY) + compressor.flush()
        self.send(200, body, [('Content-Encoding', encoding)])

    def route_redirect(self, code):
        self.send(int(code), b'moved', [('Location', self.query['to'])])

    def route_chain(self, count):
        if int(count):
            self.send(302, b'', [('Location', '/chain/%d' % (int(count) - 1))])
        else:
            self.send(200, b'end of the chain')


class ThreadedHTTPServer(socketserver.ThreadingMixIn, BaseHTTPServer.HTTPServer):
    daemon_threads = True

    def __init__(self):
        BaseHTTPServer.HTTPServer.__init__(self, ('127.0.0.1', 0), _Handler)
        self.port = self.server_address[1]
        self.condition = threading.Condition()
        self.connections = 0  # accepted, in all
        self.open_connections = 0

    def verify_request(self, request, client_address):
        with self.condition:
            self.connections += 1
            self.open_connections += 1
        return True

    def shutdown_request(self, request):
        BaseHTTPServer.HTTPServer.shutdown_request(self, request)
        with self.condition:
            self.open_connections -= 1
            self.condition.notify_all()

    def wait_until_idle(self, timeout=5):
        deadline = time.time() + timeout
        with self.condition:
            while self.open_connections and time.time() < deadline:
                self.condition.wait(deadline - time.time())
            assert not self.open_connections, 'the threaded server kept a connection open'

    def url(self, path):
        return 'http://127.0.0.1:%d%s' % (self.port, path)


_threaded_servers = []


@pytest.fixture(scope='module')
def http_server():
    server = ThreadedHTTPServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05})
    thread.daemon = True
    thread.start()
    _threaded_servers.append(server)
    yield server
    _threaded_servers.remove(server)
    server.shutdown()
    server.server_close()
    thread.join()


# --- fetching and framings -----------------------------------------------------------------

FRAMINGS = [
    ('/length/5', 'GET', b'xxxxx'),
    ('/length/0', 'GET', b''),
    ('/length/300000', 'GET', b'x' * 300000),
    ('/chunked', 'GET', b'hello, ' + b'x' * 70000 + b'world'),
    ('/close', 'GET', b'until the server closes'),
    ('/length/5', 'HEAD', b''),
    ('/status/204', 'GET', b''),
    ('/compressed/gzip', 'GET', GZIP_BODY),
    ('/compressed/deflate', 'GET', GZIP_BODY),
]


@pytest.mark.parametrize('path, method, body', FRAMINGS,
                         ids=['%s %s' % (m, p) for p, m, b in FRAMINGS])
def test_every_framing_is_read_whole(client, http_server, path, method, body):
    response = yield client.fetch(http_server.url(path), method=method)
    assert (response.code, response.body) == (200 if path != '/status/204' else 204, body)
    assert response.effective_url == http_server.url(path)
    assert response.error is None


def test_content_length_of_a_head_response_is_not_held_against_max_body_size(client,
                                                                             http_server):
    response = yield client.fetch(http_server.url('/length/5000'), method='HEAD',
                                  max_body_size=1000)
    assert response.headers['Content-Length'] == '5000' and response.body == b''


def test_304_has_no_body_and_is_an_error(client, http_server):
    with pytest.raises(HTTPClientError) as info:
        yield client.fetch(http_server.url('/status/304'))
    assert info.value.code == 304
    assert info.value.response.body == b''


def test_decompress_response_false_keeps_the_encoded_body(client, http_server):
    response = yield client.fetch(http_server.url('/compressed/gzip'),
                                  decompress_response=False)
    assert response.headers['Content-Encoding'] == 'gzip'
    assert zlib.decompress(response.body, 16 + zlib.MAX_WBITS) == GZIP_BODY
    echo = yield client.fetch(http_server.url('/echo'), decompress_response=False)
    assert 'Accept-Encoding' not in json.loads(echo.body.decode('utf-8'))['headers']


def test_decoded_encoding_moves_to_x_consumed_content_encoding(client, http_server):
    response = yield client.fetch(http_server.url('/compressed/gzip'))
    assert 'Content-Encoding' not in response.headers
    assert response.headers['X-Consumed-Content-Encoding'] == 'gzip'


def test_request_headers_sent(client, http_server):
    response = yield client.fetch(http_server.url('/echo?q=1#fragment'), method='POST',
                                  body=u'caf\xe9', headers={'X-Custom': 'yes'},
                                  auth_username='user', auth_password='secret',
                                  if_modified_since=datetime.datetime(2020, 1, 2, 3, 4, 5))
    echo = json.loads(response.body.decode('utf-8'))
    headers = echo['headers']
    assert (echo['method'], echo['path'], echo['body']) == (
        'POST', '/echo?q=1', u'caf\xe9'.encode('utf-8').decode('latin-1'))
    assert headers['Host'] == '127.0.0.1:%d' % http_server.port
    assert headers['X-Custom'] == 'yes'
    assert headers['Authorization'] == 'Basic dXNlcjpzZWNyZXQ='
    assert headers['If-Modified-Since'] == 'Thu, 02 Jan 2020 03:04:05 GMT'
    assert headers['Content-Type'] == 'application/x-www-form-urlencoded'
    assert headers['Content-Length'] == '5'
    assert headers['Accept-Encoding'] == 'gzip, deflate'
    assert headers['User-Agent'].startswith('tinytornado/')


def test_client_defaults_and_url_credentials(clients, http_server):
    client = clients(defaults=dict(user_agent='crawler/1.0'))
    url = http_server.url('/echo').replace('http://', 'http://name:pw@')
    response = yield client.fetch(url)
    headers = json.loads(response.body.decode('utf-8'))['headers']
    assert headers['User-Agent'] == 'crawler/1.0'
    assert headers['Authorization'] == 'Basic bmFtZTpwdw=='
    assert headers['Host'] == '127.0.0.1:%d' % http_server.port


def test_basic_auth_credentials_are_nfc_normalized(client, http_server):
    # RFC 7617 2.1: 'jose' with a combining accent is sent as the precomposed 'jos\xe9'.
    response = yield client.fetch(http_server.url('/echo'), auth_username=u'jose\u0301',
                                  auth_password=u's\u0259cr\u0259t')
    headers = json.loads(response.body.decode('utf-8'))['headers']
    assert headers['Authorization'] == 'Basic am9zw6k6c8mZY3LJmXQ='


@pytest.mark.parametrize('encode', [False, True], ids=['text-url', 'utf8-bytes-url'])
def test_url_credentials_are_nfc_normalized(client, http_server, encode):
    url = http_server.url('/echo').replace('http://', u'http://jose\u0301:pw\xa3@')
    response = yield client.fetch(url.encode('utf-8') if encode else url)
    headers = json.loads(response.body.decode('utf-8'))['headers']
    assert headers['Authorization'] == 'Basic am9zw6k6cHfCow=='


def test_http_request_object_and_its_copy_of_headers(client, http_server):
    headers = {'X-A': '1'}
    request = HTTPRequest(http_server.url('/echo'), headers=headers, user_agent='ua')
    response = yield client.fetch(request)
    assert response.request is request
    assert headers == {'X-A': '1'}  # the caller's dict is not changed
    with pytest.raises(ValueError):
        client.fetch(request, method='POST')



LOCAL = 'http://127.0.0.1/'

RARE = dict(wire_recorder=object(), prepare_curl_callback=len, network_interface='127.0.0.1',
            proxy_host='p', proxy_port=3128, proxy_username='u', proxy_password='pw',
            proxy_auth_mode='basic', ca_certs='ca.pem', client_key='k.pem',
            client_cert='c.pem', body_producer=len, expect_100_continue=True)


def test_a_request_stores_only_the_rare_options_it_was_given():
    plain = HTTPRequest(LOCAL)
    # Each attribute is copied again by every fetch's RequestProxy; past 30, CPython 3.11+
    # also drops the compact layout of the instance dict.
    assert len(vars(plain)) <= 30
    assert not set(RARE) & set(vars(plain))
    assert [getattr(plain, name) for name in sorted(RARE)] == [
        False if name == 'expect_100_continue' else None for name in sorted(RARE)]
    given = HTTPRequest(LOCAL, **RARE)
    assert dict((name, getattr(given, name)) for name in RARE) == RARE
    assert HTTPRequest(LOCAL, proxy_port=3128).proxy_port == 3128
    assert HTTPRequest(LOCAL, proxy_port=3128).proxy_host is None


@pytest.mark.parametrize('url, kwargs, error', [
    ('ftp://example.com/', {}, ValueError),
    ('http:///no-host', {}, ValueError),
    ('/relative', {}, ValueError),
    (LOCAL, dict(method='POST'), ValueError),
    (LOCAL, dict(body=b'x'), ValueError),
    (LOCAL, dict(method='BREW'), KeyError),
    (LOCAL, dict(proxy_host='proxy'), NotImplementedError),
    (LOCAL, dict(auth_username='u', auth_mode='digest'), ValueError),
], ids=['scheme', 'no_host', 'relative', 'post_without_body', 'get_with_body',
        'unknown_method', 'proxy', 'digest_auth'])
def test_requests_that_cannot_be_sent(client, url, kwargs, error):
    with pytest.raises(error):
        yield client.fetch(url, **kwargs)
    response = yield client.fetch(url, raise_error=False, **kwargs)
    assert response.code == 599 and isinstance(response.error, error)


@pytest.mark.parametrize('url', [
    'http://127.0.0.1:8000/a/b.html', 'https://example.com', 'http://example.com?q=1#f',
    'http://example.com/p?a=?b#c#d', 'http://Example.COM:80/%7Ex/;p=1', 'http://h/?',
    'http://h/#', 'HTTP://example.com/', 'http://user:pw@example.com/', 'http://[::1]:80/',
    'http://example.com:/', 'http://example.com:99999/', 'http://exa mple.com/',
    ' http://example.com/', 'http://example.com/a\tb', 'http://example.com/\x7f',
    'http://example.com%zz/', 'http://ex\\ample.com/', 'ftp://example.com/', '/relative',
    'http:/one-slash', 'http://example.com/a"b<c>{d}|e^f`g',
])
def test_split_url_is_urlsplit(url):
    parts = split_url(url)
    assert (type(parts), parts) == (type(urlsplit(url)), urlsplit(url))


def test_nonstandard_methods_when_allowed(client, http_server):
    response = yield client.fetch(http_server.url('/echo'), method='PATCH', body=b'p')
    assert json.loads(response.body.decode('utf-8'))['method'] == 'PATCH'
    response = yield client.fetch(http_server.url('/echo'), method='DELETE', body=b'gone',
                                  allow_nonstandard_methods=True)
    assert json.loads(response.body.decode('utf-8'))['body'] == 'gone'


def test_streaming_and_header_callbacks(client, http_server):
    chunks, lines = [], []
    response = yield client.fetch(http_server.url('/chunked'),
                                  streaming_callback=chunks.append,
                                  header_callback=lines.append)
    assert b''.join(chunks) == b'hello, ' + b'x' * 70000 + b'world'
    assert response.body == b''
    assert re.match(r'HTTP/1\.1 200 OK\r\n$', lines[0])
    assert 'Transfer-Encoding: chunked\r\n' in lines
    assert lines[-1] == '\r\n'


def test_head_callback_gets_the_parsed_head_after_header_callback_and_before_the_body(
        client, http_server):
    trace = []

    def on_head(head):
        trace.append(('head', head.version, head.code, head.reason, head.headers))

    response = yield client.fetch(http_server.url('/compressed/gzip'), head_callback=on_head,
                                  header_callback=lambda line: trace.append('line'),
                                  streaming_callback=lambda chunk: trace.append('chunk'))
    head_at = trace.index(('head', 'HTTP/1.1', 200, 'OK', response.headers))
    assert trace[:head_at] == ['line'] * head_at and head_at > 2
    assert set(trace[head_at + 1:]) == set(['chunk'])
    # The head as the response has it: decoding announced, as in header_callback's lines.
    assert trace[head_at][4] is response.headers
    assert 'X-Consumed-Content-Encoding' in response.headers


def test_head_callback_sees_the_final_head_of_redirects_followed(client, http_server):
    codes = []
    response = yield client.fetch(http_server.url('/chain/3'),
                                  head_callback=lambda head: codes.append(head.code))
    assert (response.code, codes) == (200, [200])
    response = yield client.fetch(redirect_url(http_server, 301), follow_redirects=False,
                                  raise_error=False,
                                  head_callback=lambda head: codes.append(head.code))
    assert (response.code, codes) == (301, [200, 301])


def trace_connects(client, trace):
    """Note in `trace` each connection `client` opens, or fails to, as it happens."""
    connect = client.tcp_client.connect

    def traced(*args, **kwargs):
        future = connect(*args, **kwargs)
        future.add_done_callback(lambda future: trace.append(
            'connect failed' if future.exception() else 'connected'))
        return future
    client.tcp_client.connect = traced


def noted(trace, step):
    """`step`, noting the path of each request it answers in `trace` first."""
    def noting(stream, request):
        trace.append(request.path)
        return step(stream, request)
    return noting


def test_sent_callback_fires_as_each_request_is_written_on_an_open_connection(
        client, servers):
    trace = []
    trace_connects(client, trace)
    ok = noted(trace, reply(response_bytes()))
    server = servers([noted(trace, reply(response_bytes(b'', 302, ['Location: /b']))), ok])
    response = yield client.fetch(server.url('/a'), sent_callback=lambda: trace.append('sent'))
    assert response.effective_url == server.url('/b')
    yield client.fetch(server.url('/c'), sent_callback=lambda: trace.append('sent'))
    # A fresh connection, then the redirect's hop and the next fetch on it, pooled.
    assert trace == ['connected', 'sent', '/a', 'sent', '/b', 'sent', '/c']
    assert len(server.streams) == 1


def test_sent_callback_fires_again_for_a_retry_on_a_new_connection(client, servers):
    trace = []
    trace_connects(client, trace)
    ok = noted(trace, reply(response_bytes()))
    server = servers([ok, noted(trace, close_without_reply), ok])
    yield client.fetch(server.url('/'))
    del trace[:]
    yield client.fetch(server.url('/again'), sent_callback=lambda: trace.append('sent'))
    assert trace == ['sent', '/again', 'connected', 'sent', '/again']


def test_sent_callback_is_not_called_for_a_request_whose_connection_failed(client):
    trace = []
    trace_connects(client, trace)
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))  # bound, not listening: refused (see test_connection_refused)
    try:
        response = yield client.fetch('http://127.0.0.1:%d/' % sock.getsockname()[1],
                                      raise_error=False,
                                      sent_callback=lambda: trace.append('sent'))
    finally:
        sock.close()
    assert response.code == 599 and response.error.errno == errno.ECONNREFUSED
    assert trace == ['connect failed']


class Enough(Exception):
    pass


@pytest.mark.parametrize('callback', ['header_callback', 'head_callback',
                                      'streaming_callback', 'sent_callback'])
def test_a_callback_that_raises_ends_the_fetch_and_its_connection(client, servers, callback):
    def refuse(*data):
        raise Enough(data)  # a head's argument is unhashable: not taken for an errno
    server = servers([reply(response_bytes(b'x' * 10))])
    with pytest.raises(Enough):
        yield client.fetch(server.url(), **{callback: refuse})
    response = yield client.fetch(server.url(), raise_error=False, **{callback: refuse})
    assert response.code == 599 and isinstance(response.error, Enough)
    assert (yield client.fetch(server.url())).body == b'x' * 10
    assert [r.connection for r in server.requests] == [0, 1, 2]


def test_streaming_callback_gets_decoded_pieces(client, http_server):
    chunks = []
    yield client.fetch(http_server.url('/compressed/gzip'), streaming_callback=chunks.append)
    assert b''.join(chunks) == GZIP_BODY


# --- responses and errors ------------------------------------------------------------------

def test_non_2xx_raises_http_client_error_with_the_response(client, http_server):
    with pytest.raises(HTTPError) as info:
        yield client.fetch(http_server.url('/status/404'))
    error = info.value
    assert (error.code, error.message, str(error)) == (404, 'Not Found', 'HTTP 404: Not Found')
    assert error.response.code == 404 and error.response.body == b'status body'
    response = yield client.fetch(http_server.url('/status/500'), raise_error=False)
    assert response.code == 500 and isinstance(response.error, HTTPClientError)
    with pytest.raises(HTTPClientError):
        response.rethrow()


def test_response_attributes():
    request = HTTPRequest('http://example.com/')
    response = HTTPResponse(request, 200, buffer=io.BytesIO(b'body'), request_time=0.5)
    assert (response.body, response.error, response.effective_url, response.reason) == (
        b'body', None, 'http://example.com/', 'OK')
    response.rethrow()  # no error: nothing raised
    failed = HTTPResponse(request, 599, error=HTTPTimeoutError('Timeout during request'))
    assert failed.body is None and failed.buffer is None
    assert str(failed.error) == 'Timeout during request' and failed.error.code == 599
    missing = HTTPResponse(request, 404)
    error = missing.error
    assert (type(error), error.code, error.response) == (HTTPClientError, 404, missing)
    assert missing.error is error  # made once, when first asked for
    missing.error = None
    assert missing.error is None
    missing.rethrow()


def test_request_time_and_time_info(client, http_server):
    before = time.time()
    response = yield client.fetch(http_server.url('/length/1'))
    assert 0 < response.request_time < time.time() - before + 0.01
    assert response.time_info['queue'] >= 0
    assert before <= response.start_time <= time.time()  # wall-clock time


# --- keep-alive and the pool ---------------------------------------------------------------

def test_keep_alive_reuses_one_connection(client, http_server):
    before = http_server.connections
    for path in ('/length/3', '/chunked', '/compressed/gzip', '/status/204', '/echo'):
        yield client.fetch(http_server.url(path), method='GET')
    yield client.fetch(http_server.url('/length/5'), method='HEAD')
    assert http_server.connections - before == 1


def test_close_delimited_response_is_not_reused(client, http_server):
    before = http_server.connections
    for _ in range(2):
        yield client.fetch(http_server.url('/close'))
    assert http_server.connections - before == 2


def test_connection_close_and_http10_responses_are_not_reused(client, servers):
    server = servers([reply(response_bytes(headers=['Connection: close'])),
                      reply(b'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok'),
                      reply(response_bytes())])
    for _ in range(4):
        yield client.fetch(server.url())
    assert [request.connection for request in server.requests] == [0, 1, 2, 2]


def test_bytes_beyond_the_response_retire_the_connection(client, servers):
    server = servers([reply(response_bytes(b'ok') + b'junk'), reply(response_bytes(b'ok'))])
    for _ in range(3):
        response = yield client.fetch(server.url())
        assert response.body == b'ok'
    assert [request.connection for request in server.requests] == [0, 1, 1]


def test_an_idle_connection_the_server_closed_is_not_used(client, servers):
    server = servers([reply_and_close(response_bytes()), reply(response_bytes())])
    yield client.fetch(server.url())
    response = yield client.fetch(server.url(), method='POST', body=b'not retried')
    assert response.body == b'hello'
    assert [request.connection for request in server.requests] == [0, 1]


def test_stray_bytes_on_an_idle_connection_retire_it(client, servers):
    sent = []

    @gen.coroutine
    def reply_then_stray_bytes(stream, request):
        yield stream.write(response_bytes(b'first'))
        yield gen.sleep(0.01)  # the client has gone on: the connection is idle
        yield stream.write(b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray')
        sent.append(True)
    server = servers([reply_then_stray_bytes, reply(response_bytes(b'second'))])
    yield client.fetch(server.url())
    yield wait_for(lambda: sent)
    yield settle()
    response = yield client.fetch(server.url())
    assert response.body == b'second'
    assert [request.connection for request in server.requests] == [0, 1]


@pytest.mark.parametrize('stale', [close_without_reply, reply_and_reset(b'')],
                         ids=['closed', 'reset'])
def test_idempotent_request_on_a_stale_connection_is_retried_once(client, servers, stale):
    server = servers([reply(response_bytes(b'first')), stale, reply(response_bytes(b'again'))])
    yield client.fetch(server.url())
    response = yield client.fetch(server.url('/second'))
    assert response.body == b'again'
    assert [(r.connection, r.path) for r in server.requests] == [
        (0, '/'), (0, '/second'), (1, '/second')]


def test_post_on_a_stale_connection_is_not_retried(client, servers):
    server = servers([reply(response_bytes()), close_without_reply])
    yield client.fetch(server.url())
    with pytest.raises(NoResponseError, match='before the response began'):
        yield client.fetch(server.url(), method='POST', body=b'once only')
    assert len(server.requests) == 2


def test_a_fresh_connection_closed_before_the_response_is_not_retried(client, servers):
    server = servers([close_without_reply])
    with pytest.raises(NoResponseError):
        yield client.fetch(server.url())
    assert len(server.requests) == 1


def test_max_clients_bounds_the_requests_in_flight(clients, servers):
    client = clients(max_clients=3)
    server = servers([reply_in_company(3, response_bytes())])
    responses = yield [client.fetch(server.url('/%d' % i)) for i in range(9)]
    assert [r.code for r in responses] == [200] * 9
    assert server.peak == 3
    assert len(server.streams) == 3  # and their connections were reused


def test_max_host_clients_bounds_each_origin(clients, servers):
    client = clients(max_clients=5, max_host_clients=2)
    busy, other = [servers([reply_in_company(2, response_bytes())]) for _ in range(2)]
    yield [client.fetch(busy.url()) for _ in range(6)] + [
        client.fetch(other.url()) for _ in range(2)]
    assert (busy.peak, other.peak) == (2, 2)
    assert (len(busy.streams), len(other.streams)) == (2, 2)


def test_max_clients_bounds_the_requests_to_all_origins(clients, servers):
    client = clients(max_clients=2)
    in_flight = []  # one entry per request being answered, at any of the servers
    peaks = []

    @gen.coroutine
    def counted(stream, request):
        in_flight.append(request)
        peaks.append(len(in_flight))
        deadline = IOLoop.current().time() + 0.5
        while len(in_flight) < 2 and IOLoop.current().time() < deadline:
            yield gen.sleep(0.002)
        in_flight.remove(request)
        yield stream.write(response_bytes())
    origins = [servers([counted]) for _ in range(3)]
    yield [client.fetch(server.url()) for server in origins for _ in range(2)]
    assert max(peaks) == 2 and len(peaks) == 6


def test_origins_take_turns_for_free_slots(clients, servers):
    client = clients(max_clients=2)
    arrivals = []

    def logged(name, wait_for_other=False):
        @gen.coroutine
        def log_and_reply(stream, request):
            arrivals.append(name)
            if wait_for_other:
                yield wait_for(lambda: 'other' in arrivals)
            yield stream.write(response_bytes())
        return log_and_reply
    # The second busy request holds its slot until the other origin's request arrives.
    busy = servers([logged('busy'), logged('busy', wait_for_other=True), logged('busy')])
    other = servers([logged('other')])
    fetches = [client.fetch(busy.url()) for _ in range(6)]
    yield [client.fetch(other.url())] + fetches
    # The request to the other origin took the first free slot, before four requests
    # to the busy one that had waited longer.
    assert arrivals == ['busy', 'busy', 'other', 'busy', 'busy', 'busy', 'busy']


def test_max_clients_counts_idle_connections(clients, servers):
    client = clients(max_clients=1)
    first, second = servers([reply(response_bytes())]), servers([reply(response_bytes())])
    yield client.fetch(first.url())
    yield client.fetch(second.url())
    # The idle connection to `first` was closed to make room for the one to `second`.
    yield wait_for(first.streams[0].closed)
    assert not second.streams[0].closed()


def test_queue_time_does_not_count_against_request_timeout(clients, servers):
    # Tornado #1400: the second request waits 0.18 s for the slot, then takes 0.18 s of
    # its 0.3 s.
    client = clients(max_clients=1)
    server = servers([reply_later(0.9 * SHORT, response_bytes())])
    responses = yield [client.fetch(server.url(), request_timeout=1.5 * SHORT)
                       for _ in range(2)]
    assert [r.code for r in responses] == [200, 200]
    assert responses[1].time_info['queue'] >= 0.85 * SHORT
    assert responses[1].request_time < 1.5 * SHORT


def test_queue_timeout_bounds_the_wait_for_a_slot(clients, servers):
    client = clients(max_clients=1, queue_timeout=SHORT / 4)
    server = servers([reply_later(SHORT / 2, response_bytes())])
    first = client.fetch(server.url())
    with pytest.raises(HTTPTimeoutError, match='Timeout in request queue'):
        yield client.fetch(server.url(), request_timeout=10)
    assert (yield first).code == 200
    assert len(server.requests) == 1


def test_cancelling_a_queued_fetch_frees_its_place(clients, servers):
    client = clients(max_clients=1)
    server = servers([reply_later(0.02, response_bytes())])
    first = client.fetch(server.url('/first'))
    queued = client.fetch(server.url('/cancelled'))
    assert queued.cancel()
    third = yield client.fetch(server.url('/third'))
    assert third.code == 200 and (yield first).code == 200
    assert [r.path for r in server.requests] == ['/first', '/third']
    with pytest.raises(CancelledError):
        queued.result()


def test_cancelling_a_fetch_granted_its_slot_but_not_started_gives_the_slot_back(
        clients, servers):
    client = clients(max_clients=1)
    server = servers([reply(response_bytes())])
    first = client.fetch(server.url('/first'))
    queued = client.fetch(server.url('/cancelled'))
    # `first` gives its slot to `queued` as it ends, and `queued` starts a loop pass later:
    # cancelled in between, it must hand the slot on.
    first.add_done_callback(lambda _: queued.cancel())
    assert (yield first).code == 200
    assert (yield client.fetch(server.url('/third'))).code == 200
    assert [r.path for r in server.requests] == ['/first', '/third']
    assert queued.cancelled()


def test_a_queue_timeout_without_raise_error_is_a_599_response(clients, servers):
    client = clients(max_clients=1, queue_timeout=SHORT / 4)
    server = servers([reply_later(SHORT / 2, response_bytes())])
    first = client.fetch(server.url())
    response = yield client.fetch(server.url('/late'), raise_error=False)
    assert response.code == 599 and response.effective_url == server.url('/late')
    assert isinstance(response.error, HTTPTimeoutError)
    assert (yield first).code == 200


def test_cancelling_a_fetch_in_flight_closes_its_connection(client, servers):
    server = servers([never_reply, reply(response_bytes())])
    baseline = open_fds()
    with pytest.raises(TimeoutError):
        yield gen.with_timeout(datetime.timedelta(seconds=0.05), client.fetch(server.url()))
    server.close()
    assert open_fds() == baseline - 1  # the listening socket; the client's is closed too


# --- redirects -----------------------------------------------------------------------------

def redirect_url(server, code, to='/echo'):
    return server.url('/redirect/%d?to=%s' % (code, to))


@pytest.mark.parametrize('code, method, sent_method, body_kept', [
    (301, 'GET', 'GET', False), (302, 'GET', 'GET', False), (303, 'GET', 'GET', False),
    (301, 'POST', 'GET', False), (302, 'POST', 'GET', False), (303, 'POST', 'GET', False),
    (303, 'PUT', 'GET', False), (301, 'PUT', 'PUT', True), (303, 'HEAD', 'HEAD', False),
    (307, 'POST', 'POST', True), (308, 'POST', 'POST', True), (307, 'PUT', 'PUT', True),
])
def test_redirect_method_rules(client, http_server, code, method, sent_method, body_kept):
    body = b'payload' if method in ('POST', 'PUT') else None
    response = yield client.fetch(redirect_url(http_server, code), method=method, body=body)
    assert response.effective_url == http_server.url('/echo')
    assert response.request.url == redirect_url(http_server, code)
    if sent_method == 'HEAD':
        assert response.body == b''
        return
    echo = json.loads(response.body.decode('utf-8'))
    assert echo['method'] == sent_method
    assert echo['body'] == ('payload' if body_kept else '')
    assert ('Content-Type' in echo['headers']) == (sent_method == 'POST')


def test_max_redirects(client, http_server):
    response = yield client.fetch(http_server.url('/chain/3'), max_redirects=3)
    assert (response.body, response.effective_url) == (b'end of the chain',
                                                        http_server.url('/chain/0'))
    with pytest.raises(HTTPClientError) as info:
        yield client.fetch(http_server.url('/chain/3'), max_redirects=2)
    assert info.value.code == 302
    assert info.value.response.effective_url == http_server.url('/chain/1')


def test_follow_redirects_false_returns_the_redirect(client, http_server):
    url = redirect_url(http_server, 301, '/elsewhere')
    response = yield client.fetch(url, follow_redirects=False, raise_error=False)
    assert (response.code, response.headers['Location'], response.body) == (
        301, '/elsewhere', b'moved')
    assert response.effective_url == url


def test_redirect_to_another_host_drops_the_credentials(client, servers, http_server):
    server = servers([reply(response_bytes(
        code=302, headers=['Location: ' + http_server.url('/echo')]))])
    response = yield client.fetch(server.url(), auth_username='user', auth_password='pw')
    headers = json.loads(response.body.decode('utf-8'))['headers']
    assert 'Authorization' not in headers
    assert headers['Host'] == '127.0.0.1:%d' % http_server.port
    assert server.requests[0].headers['Authorization'].startswith('Basic ')


def test_queue_time_is_counted_per_hop_not_across_redirects(client, servers):
    # A slow first hop is request time, not time spent waiting for a slot.
    server = servers([reply_later(0.3, response_bytes(code=302, headers=['Location: /next'])),
                      reply(response_bytes())])
    response = yield client.fetch(server.url())
    assert response.code == 200 and response.effective_url == server.url('/next')
    assert response.time_info['queue'] < 0.1


# --- TLS -----------------------------------------------------------------------------------

@pytest.fixture
def tls_server(servers):
    files = tls_files()
    context = ssl_options_to_context({'certfile': files.server_cert,
                                      'keyfile': files.server_key}, server_side=True)
    server_names = []

    def on_server_name(ssl_socket, server_name, ssl_context):
        server_names.append(server_name)
    if hasattr(context, 'sni_callback'):
        context.sni_callback = on_server_name
    else:
        context.set_servername_callback(on_server_name)
    server = servers([reply(response_bytes(b'secret'))], ssl_options=context)
    server.server_names = server_names
    return server


def test_https_with_the_test_ca_sends_sni_and_keeps_alive(clients, tls_server):
    client = clients(hostname_mapping={TEST_HOSTNAME: '127.0.0.1'})
    url = tls_server.url(scheme='https', host=TEST_HOSTNAME)
    for _ in range(3):
        response = yield client.fetch(url, ca_certs=tls_files().ca_cert)
        assert response.body == b'secret'
    assert tls_server.server_names == [TEST_HOSTNAME]
    assert len(tls_server.streams) == 1


def test_https_certificate_checks(client, tls_server):
    url = tls_server.url(scheme='https', host='localhost')
    with pytest.raises(ssl.SSLError, match='CERTIFICATE_VERIFY_FAILED|certificate verify'):
        yield client.fetch(url, ca_certs=tls_files().other_ca_cert)
    response = yield client.fetch(url, validate_cert=False)
    assert response.body == b'secret'
    response = yield client.fetch(url, ssl_options={'ca_certs': tls_files().ca_cert})
    assert response.body == b'secret'
    # Each setting has its own connections: the unchecked one is not lent to the others.
    assert len(tls_server.streams) == 3


def test_handshake_that_never_ends_is_a_connect_timeout(client, servers):
    server = servers([never_reply])  # plain TCP: it never answers the ClientHello
    with pytest.raises(HTTPTimeoutError, match='Timeout while connecting'):
        yield client.fetch(server.url(scheme='https'), connect_timeout=SHORT / 4)


# --- the bad-input table: a clear error, the loop alive, no socket left ----------------------

CHUNKED = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
BOMB = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
BOMB = BOMB.compress(b'\0' * (10 * 1024 * 1024)) + BOMB.flush()

BAD_INPUT = {
    'garbage_status_line': (
        reply(b'garbage\r\n\r\n'), {}, HTTPInputError, 'malformed response head'),
    'header_line_over_the_limit': (
        reply(response_bytes(headers=['X-Big: ' + 'a' * 2000])), {'max_header_size': 1024},
        HTTPInputError, 'larger than max_header_size \\(1024 bytes\\)'),
    'too_many_headers': (
        reply(response_bytes(headers=['X-H%d: v' % i for i in range(101)])), {},
        HTTPInputError, 'more than max_header_lines \\(100\\)'),
    'bad_chunk_size': (
        reply(CHUNKED + b'zz\r\nhello\r\n0\r\n\r\n'), {}, HTTPInputError,
        'malformed response body'),
    'truncated_chunked_body': (
        reply_and_close(CHUNKED + b'5\r\nhel'), {}, HTTPInputError, 'incomplete chunked read'),
    'content_length_larger_than_the_body': (
        reply_and_close(b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort'), {},
        HTTPInputError, 'received 5 bytes, expected 10'),
    'conflicting_content_lengths': (
        reply(b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello'), {},
        HTTPInputError, 'Multiple unequal Content-Lengths'),
    'closed_mid_headers': (
        reply_and_close(b'HTTP/1.1 200 OK\r\nContent-Ty'), {}, HTTPInputError,
        'closed in the middle of the response head'),
    'closed_before_any_byte': (
        close_without_reply, {}, NoResponseError, 'before the response began'),
    'reset_mid_response': (
        reply_and_reset(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial'), {},
        socket.error, 'reset'),
    'trickle_past_request_timeout': (
        trickle(response_bytes(), SHORT / 8), {'request_timeout': SHORT}, HTTPTimeoutError,
        'Timeout during request'),
    'never_answers': (
        never_reply, {'request_timeout': SHORT}, HTTPTimeoutError, 'Timeout during request'),
    'gzip_that_is_not_gzip': (
        reply(response_bytes(b'plain text, not gzip', headers=['Content-Encoding: gzip'])),
        {}, HTTPInputError, 'not valid gzip data'),
    'decompression_bomb': (
        reply(response_bytes(BOMB, headers=['Content-Encoding: gzip'])),
        {'max_body_size': 100000}, HTTPInputError,
        'decoded body is larger than max_size \\(100000 bytes\\)'),
    'content_length_over_max_body_size': (
        reply(response_bytes(b'x' * 1001)), {'max_body_size': 1000}, HTTPInputError,
        'Content-Length too long: 1001 is larger than max_body_size \\(1000 bytes\\)'),
    'chunked_body_over_max_body_size': (
        reply(CHUNKED + b'3e9\r\n' + b'x' * 1001 + b'\r\n0\r\n\r\n'), {'max_body_size': 1000},
        HTTPInputError, 'body is larger than max_body_size \\(1000 bytes\\)'),
}
CLIENT_OPTIONS = ('max_header_size',)


@pytest.mark.parametrize('name', sorted(BAD_INPUT))
def test_bad_input(clients, servers, name):
    step, options, error, message = BAD_INPUT[name]
    client_options = dict((k, v) for k, v in options.items() if k in CLIENT_OPTIONS)
    fetch_options = dict((k, v) for k, v in options.items() if k not in CLIENT_OPTIONS)
    client = clients(**client_options)
    server = servers([step, reply(response_bytes(b'still serving'))])
    baseline = open_fds()
    with pytest.raises(error, match=message) as caught:
        yield client.fetch(server.url('/bad'), **fetch_options)
    if issubclass(error, HTTPInputError):  # and a 599 HTTPError, as Tornado 5.1's
        assert isinstance(caught.value, HTTPStreamClosedError) and caught.value.code == 599
    response = yield client.fetch(server.url('/good'))
    assert response.body == b'still serving'  # the loop and the client go on
    assert [r.connection for r in server.requests] == [0, 1]  # the bad one was not reused
    server.close()
    client.close()
    assert open_fds() == baseline - 1  # only the server's listening socket has gone


def test_bad_input_without_raise_error_is_a_599_response(client, servers):
    server = servers([reply(b'garbage\r\n\r\n')])
    response = yield client.fetch(server.url(), raise_error=False)
    assert response.code == 599 and isinstance(response.error, HTTPInputError)
    assert isinstance(response.error, HTTPError) and response.error.code == 599
    assert response.body is None
    with pytest.raises(HTTPInputError):
        response.rethrow()


def test_timeout_without_raise_error_is_a_599_response(client, servers):
    server = servers([never_reply])
    response = yield client.fetch(server.url(), request_timeout=SHORT / 4, raise_error=False)
    assert response.code == 599 and str(response.error) == 'Timeout during request'
    assert response.request_time >= SHORT / 4


def test_connection_refused(client):
    # Bound but not listening: a connection to it is refused, and no other process can
    # take the port meanwhile.
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    try:
        with pytest.raises(socket.error) as info:
            yield client.fetch('http://127.0.0.1:%d/' % sock.getsockname()[1])
        assert info.value.errno == errno.ECONNREFUSED
    finally:
        sock.close()


# --- the client object ---------------------------------------------------------------------

def test_one_client_per_loop(io_loop):
    client = AsyncHTTPClient()
    try:
        assert AsyncHTTPClient() is client
        assert AsyncHTTPClient(force_instance=True) is not client
    finally:
        client.close()
    replacement = AsyncHTTPClient()
    assert replacement is not client
    replacement.close()
    with pytest.raises(RuntimeError, match='closed'):
        client.fetch('http://127.0.0.1/')


class CustomClient(AsyncHTTPClient):
    pass


def test_configure_sets_the_arguments_of_new_clients(io_loop):
    saved = AsyncHTTPClient._save_configuration()
    try:
        AsyncHTTPClient.configure(CustomClient.__module__ + '.CustomClient', max_clients=3)
        client = AsyncHTTPClient(force_instance=True)
        assert type(client) is CustomClient and client.max_clients == 3
        client.close()
        AsyncHTTPClient.configure(None, defaults=dict(request_timeout=7))
        client = AsyncHTTPClient(force_instance=True, max_clients=4)
        assert type(client) is SimpleAsyncHTTPClient  # the default, as in Tornado 5.1
        assert (client.max_clients, client.defaults['request_timeout']) == (4, 7)
        client.close()
        with pytest.raises(ValueError):
            AsyncHTTPClient.configure(dict)
    finally:
        AsyncHTTPClient._restore_configuration(saved)
    assert AsyncHTTPClient.configured_class() is SimpleAsyncHTTPClient


def test_a_request_in_flight_when_the_client_closes_finishes(client, servers):
    server = servers([reply_later(0.02, response_bytes())])
    fetch = client.fetch(server.url())
    client.close()
    assert (yield fetch).body == b'hello'
    yield wait_for(server.streams[0].closed)  # its connection was not kept


def test_closing_the_client_closes_idle_connections(clients, servers):
    client = clients()
    server = servers([reply(response_bytes())])
    yield [client.fetch(server.url()) for _ in range(3)]
    client.close()
    yield wait_for(lambda: all(stream.closed() for stream in server.streams))
    assert len(server.streams) == 3
