"""Tornado 5.1's `tinytornado.http1connection` over real sockets on 127.0.0.1: the client
side's `HTTP1Connection` writing requests and reading responses into delegates, against
our HTTPServer and against raw peers; its server side, made by the same call."""
from __future__ import absolute_import, division, print_function

import gzip
import io
import logging
import socket

import pytest

from net_helpers import run
from tinytornado import gen, httpserver
from tinytornado.http1connection import (
    HTTP1Connection, HTTP1ConnectionParameters, HTTP1ServerConnection,
)
from tinytornado.httpserver import HTTPServer
from tinytornado.httputil import (
    HTTPHeaders, HTTPMessageDelegate, RequestStartLine, ResponseStartLine,
)
from tinytornado.iostream import IOStream
from tinytornado.locks import Event
from tinytornado.netutil import add_accept_handler, bind_sockets


class Recorder(HTTPMessageDelegate):
    """Keeps what a connection hands it; `done` is set by finish or on_connection_close."""

    def __init__(self, on_finish=None):
        self.heads = []
        self.chunks = []
        self.finished = self.closed = False
        self.done = Event()
        self.on_finish = on_finish

    def headers_received(self, start_line, headers):
        self.heads.append((start_line, headers))

    def data_received(self, chunk):
        self.chunks.append(chunk)

    def finish(self):
        self.finished = True
        if self.on_finish is not None:
            self.on_finish()
        self.done.set()

    def on_connection_close(self):
        self.closed = True
        self.done.set()

    @property
    def body(self):
        return b''.join(self.chunks)


@pytest.fixture
def stream_pair(io_loop):
    """connect() -> (client IOStream, the server's IOStream of it), over 127.0.0.1."""
    streams = []

    @gen.coroutine
    def connect():
        [listener] = bind_sockets(0, '127.0.0.1')
        accepted = Event()
        server_side = []

        def accept(connection, address):
            server_side.append(IOStream(connection))
            accepted.set()
        stop_accepting = add_accept_handler(listener, accept)
        client = IOStream(socket.socket())
        yield [client.connect(listener.getsockname()), accepted.wait()]
        stop_accepting()
        listener.close()
        streams.extend([client, server_side[0]])
        raise gen.Return((client, server_side[0]))
    yield connect
    for stream in streams:
        stream.close()


@pytest.fixture
def echo_server(io_loop):
    """The port of an HTTPServer answering each request with its method, path and body."""
    def echo(request):
        body = ('%s %s %s' % (request.method, request.path, request.headers.get(
            'Transfer-Encoding', '-'))).encode('ascii') + b' ' + request.body
        request.connection.write_headers(ResponseStartLine('HTTP/1.1', 201, 'Made'),
                                         HTTPHeaders({'Content-Length': str(len(body))}))
        request.connection.write(body)
        request.connection.finish()
    [sock] = bind_sockets(0, '127.0.0.1')
    server = HTTPServer(echo)
    server.add_sockets([sock])
    yield sock.getsockname()[1]
    server.stop()
    run(io_loop, server.close_all_connections)


def logged(caplog):
    return [record.getMessage() for record in caplog.records if record.name == 'tornado.general']


def test_the_server_side_names_are_httpservers():
    assert HTTP1ServerConnection is httpserver.HTTP1ServerConnection
    assert HTTP1ConnectionParameters is httpserver.HTTP1ConnectionParameters


@pytest.mark.parametrize('method, headers, pieces, framing', [
    ('GET', {}, [], '-'),
    ('POST', {'Content-Length': '9'}, [b'some', b' body'], '-'),
    ('PUT', {}, [b'some', b' body'], 'chunked'),  # no Content-Length: chunked, as in 5.1
], ids=['get', 'sized-post', 'chunked-put'])
def test_a_request_written_and_its_response_read(io_loop, echo_server, method, headers,
                                                 pieces, framing):
    @gen.coroutine
    def main():
        stream = IOStream(socket.socket())
        yield stream.connect(('127.0.0.1', echo_server))
        connection = HTTP1Connection(stream, True)
        all_headers = HTTPHeaders({'Host': '127.0.0.1'})
        all_headers.update(headers)
        yield connection.write_headers(RequestStartLine(method, '/echo', 'HTTP/1.1'),
                                       all_headers)
        for piece in pieces:
            yield connection.write(piece)
        connection.finish()
        recorder = Recorder()
        read_whole = yield connection.read_response(recorder)
        stream.close()
        raise gen.Return((read_whole, recorder))

    read_whole, recorder = run(io_loop, main)
    [(start_line, headers)] = recorder.heads
    assert read_whole is True and recorder.finished and not recorder.closed
    assert (start_line.version, start_line.code, start_line.reason) == ('HTTP/1.1', 201, 'Made')
    expected = ('%s /echo %s ' % (method, framing)).encode('ascii') + b''.join(pieces)
    assert recorder.body == expected and headers['Content-Length'] == str(len(expected))


def test_a_response_to_a_request_written_by_hand(io_loop, stream_pair):
    # 5.1's http1connection_test: an HTTP/1.0 response without a length ends at the close.
    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True)
        server.write(b'HTTP/1.0 200 Not Modified\r\n\r\nhello')
        server.close()
        recorder = Recorder()
        read_whole = yield connection.read_response(recorder)
        raise gen.Return((read_whole, recorder))

    read_whole, recorder = run(io_loop, main)
    assert read_whole is True and recorder.body == b'hello'
    assert [(line.code, line.reason) for line, _ in recorder.heads] == [(200, 'Not Modified')]


def test_informational_heads_reach_the_delegate_before_the_final_one(io_loop, stream_pair):
    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True)
        server.write(b'HTTP/1.1 100 Continue\r\n\r\n'
                     b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
        recorder = Recorder()
        read_whole = yield connection.read_response(recorder)
        raise gen.Return((read_whole, recorder))

    read_whole, recorder = run(io_loop, main)
    assert read_whole is True and recorder.body == b'ok'
    assert [line.code for line, _ in recorder.heads] == [100, 200]


@pytest.mark.parametrize('response, params, message', [
    (b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n', {},
     'Malformed HTTP message from None: Response with both Transfer-Encoding and '
     'Content-Length'),
    (b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world', {'max_body_size': 10},
     'Malformed HTTP message from None: Content-Length too long: 11'),
    (b'HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nhello', {},
     'Malformed HTTP message from None: connection closed in the middle of the response '
     'body'),
], ids=['both-framings', 'too-long', 'cut-short'])
def test_a_response_that_cannot_be_read_is_logged_and_closes(io_loop, stream_pair, caplog,
                                                             response, params, message):
    caplog.set_level(logging.INFO, logger='tornado.general')

    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True, HTTP1ConnectionParameters(**params))
        yield server.write(response)
        server.close()
        recorder = Recorder()
        read_whole = yield connection.read_response(recorder)
        raise gen.Return((read_whole, recorder, client.closed()))

    read_whole, recorder, closed = run(io_loop, main)
    assert read_whole is False and closed and not recorder.finished
    # on_connection_close only once headers_received was called, as in 5.1.
    assert recorder.closed == bool(recorder.heads)
    [logged_message] = logged(caplog)
    assert logged_message.startswith(message)


def test_decompress_decodes_the_body_as_5_1_did(io_loop, stream_pair):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode='wb') as compressed:
        compressed.write(b'hello ' * 100)
    body = buffer.getvalue()

    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True, HTTP1ConnectionParameters(decompress=True))
        server.write(b'HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n'
                     % len(body) + body)
        recorder = Recorder()
        yield connection.read_response(recorder)
        raise gen.Return(recorder)

    recorder = run(io_loop, main)
    [(_, headers)] = recorder.heads
    assert recorder.body == b'hello ' * 100
    assert 'Content-Encoding' not in headers
    assert headers['X-Consumed-Content-Encoding'] == 'gzip'


def test_detach_in_finish_hands_over_an_open_stream(io_loop, stream_pair):
    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        detached = []
        connection = HTTP1Connection(client, True)
        recorder = Recorder(on_finish=lambda: detached.append(connection.detach()))
        server.write(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
        read_whole = yield connection.read_response(recorder)
        # The stream is the delegate's now, open: the next bytes are its to read.
        yield server.write(b'more')
        more = yield detached[0].read_bytes(4)
        raise gen.Return((read_whole, detached[0] is client, connection.stream, more))

    assert run(io_loop, main) == (True, True, None, b'more')


def test_a_head_that_does_not_come_in_header_timeout_closes_quietly(io_loop, stream_pair,
                                                                    caplog):
    caplog.set_level(logging.INFO, logger='tornado.general')

    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True,
                                     HTTP1ConnectionParameters(header_timeout=0.05))
        recorder = Recorder()
        read_whole = yield connection.read_response(recorder)
        raise gen.Return((read_whole, client.closed(), recorder.heads))

    assert run(io_loop, main) == (False, True, [])
    assert logged(caplog) == []


@pytest.mark.parametrize('limit, response, message', [
    (lambda connection: connection.set_body_timeout(0.05),
     b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf', 'Timeout reading body from None'),
    (lambda connection: connection.set_max_body_size(4),
     b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n',
     'Malformed HTTP message from None: response body too large: more than max_body_size '
     '(4 bytes)'),
], ids=['body_timeout', 'max_body_size'])
def test_a_limit_set_for_one_response_closes_it_and_is_logged(io_loop, stream_pair, caplog,
                                                               limit, response, message):
    caplog.set_level(logging.INFO, logger='tornado.general')

    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True)
        limit(connection)
        server.write(response)
        recorder = Recorder()
        read_whole = yield connection.read_response(recorder)
        raise gen.Return((read_whole, client.closed(), recorder.closed))

    # on_connection_close: its head was read, its body was not.
    assert run(io_loop, main) == (False, True, True)
    assert logged(caplog) == [message]


def test_the_close_callback_runs_if_the_peer_leaves_first(io_loop, stream_pair):
    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(client, True)
        called = Event()
        connection.set_close_callback(called.set)
        server.close()
        yield called.wait()
        raise gen.Return(True)

    assert run(io_loop, main, timeout=5) is True


def test_the_server_side_reads_a_request_and_writes_its_response(io_loop, stream_pair):
    @gen.coroutine
    def main():
        client, server = yield stream_pair()
        connection = HTTP1Connection(server, False, context='the peer')
        recorder = Recorder()
        client.write(b'POST /form HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc')

        def respond():
            connection.write_headers(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                     HTTPHeaders({'Content-Length': '2'}))
            connection.write(b'ok')
            connection.finish()
        recorder.on_finish = respond
        reusable = yield connection.read_response(recorder)
        response = yield client.read_until(b'ok')
        raise gen.Return((connection, reusable, recorder, response))

    connection, reusable, recorder, response = run(io_loop, main)
    assert isinstance(connection, HTTP1Connection) and connection.context == 'the peer'
    assert reusable is True and recorder.body == b'abc'
    [(start_line, _)] = recorder.heads
    assert (start_line.method, start_line.path) == ('POST', '/form')
    assert response.startswith(b'HTTP/1.1 200 OK\r\n') and response.endswith(b'\r\n\r\nok')
