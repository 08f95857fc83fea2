"""Request bodies that a fetch streams (HTTPRequest's `body_producer`) or holds back for
the server's 100 Continue (`expect_100_continue`), as in Tornado 5.1.

`RecordingServer` runs on the test's loop, keeps every byte each connection sent it (so
that the tests see the framing as it went over the wire) and answers each request as its
`answer` says: by default with the body it read, decoded from its framing.
"""
from __future__ import absolute_import, division, print_function

import pytest

from test_httpclient import (  # noqa: F401 (fixtures)
    CannedServer, client, clients, close_without_reply, reply, response_bytes, servers,
    settle,
)
from tinytornado import gen
from tinytornado._compat import PY2
from tinytornado.httpclient import HTTPClientError, HTTPRequest
from tinytornado.httputil import HTTPHeaders, HTTPOutputError, NoResponseError
from tinytornado.iostream import StreamClosedError
from tinytornado.locks import Event

if not PY2:
    from httpclient_body_cases_py3 import native_producer
else:
    native_producer = None


class RecordingServer(CannedServer):
    """Keeps what each connection sent (`received`, one bytes per connection) and calls
    ``answer(server, stream, index, head)`` for each request head read on connection
    `index`; the default answer reads the body and sends it back."""

    def __init__(self, answer=None):
        super(RecordingServer, self).__init__([])
        self.answer = answer or echo
        self.received = []

    @gen.coroutine
    def handle_stream(self, stream, address):
        self.streams.append(stream)
        self.received.append(b'')
        index = len(self.received) - 1
        try:
            while True:
                head = yield self.read(index, stream.read_until(b'\r\n\r\n'))
                yield gen.maybe_future(self.answer(self, stream, index, head))
        except StreamClosedError:
            pass

    @gen.coroutine
    def read(self, index, reading):
        data = yield reading
        self.received[index] += data
        raise gen.Return(data)

    @gen.coroutine
    def read_body(self, stream, index, head):
        """The body of the request whose head is `head`, decoded from its framing."""
        headers = headers_of(head)
        if 'Content-Length' in headers:
            body = yield self.read(index, stream.read_bytes(
                int(headers['Content-Length'])))
            raise gen.Return(body)
        assert headers['Transfer-Encoding'] == 'chunked'
        pieces = []
        while True:
            size = int((yield self.read(index, stream.read_until(b'\r\n'))), 16)
            chunk = yield self.read(index, stream.read_bytes(size + 2))
            if not size:
                raise gen.Return(b''.join(pieces))
            pieces.append(chunk[:-2])


@gen.coroutine
def echo(server, stream, index, head):
    body = yield server.read_body(stream, index, head)
    yield stream.write(response_bytes(body))


def answer_at_once(server, stream, index, head):
    """Answers without reading the body (which stays unread on the connection)."""
    return stream.write(response_bytes(b'early'))


@pytest.fixture
def recording_servers(io_loop):
    made = []

    def make(answer=None):
        made.append(RecordingServer(answer))
        return made[-1]
    yield make
    for server in made:
        server.close()
    io_loop.run_sync(settle)


def request_body(data):
    """What follows the head in `data`, the bytes of one request."""
    return data.partition(b'\r\n\r\n')[2]


def headers_of(data):
    """The headers of the request head at the start of `data`."""
    return HTTPHeaders.parse(data.partition(b'\r\n\r\n')[0].decode('latin-1').split('\r\n', 1)[1])


# --- producers: a plain function, a coroutine, a native coroutine ----------------------------

def plain_producer(write):
    write(b'1234')
    write(b'5678')


@gen.coroutine
def coroutine_producer(write):
    yield write(b'1234')
    yield gen.moment
    yield write(b'5678')


PRODUCERS = [plain_producer, coroutine_producer] + (
    [native_producer] if native_producer is not None else [])
PRODUCER_IDS = ['plain', 'coroutine'] + (['native'] if native_producer is not None else [])


@pytest.mark.parametrize('producer', PRODUCERS, ids=PRODUCER_IDS)
@pytest.mark.parametrize('method', ['POST', 'PUT', 'PATCH'])
def test_a_body_without_content_length_is_sent_chunked(client, recording_servers, producer,
                                                       method):
    server = recording_servers()
    response = yield client.fetch(server.url(), method=method, body_producer=producer)
    assert response.body == b'12345678'
    [data] = server.received
    assert headers_of(data)['Transfer-Encoding'] == 'chunked'
    assert 'Content-Length' not in headers_of(data)
    assert request_body(data) == b'4\r\n1234\r\n4\r\n5678\r\n0\r\n\r\n'


@pytest.mark.parametrize('producer', PRODUCERS, ids=PRODUCER_IDS)
def test_a_body_with_content_length_is_sent_as_is(client, recording_servers, producer):
    server = recording_servers()
    response = yield client.fetch(server.url(), method='POST', body_producer=producer,
                                  headers={'Content-Length': '8'})
    assert response.body == b'12345678'
    [data] = server.received
    assert 'Transfer-Encoding' not in headers_of(data)
    assert request_body(data) == b'12345678'


def test_an_empty_write_does_not_end_a_chunked_body(client, recording_servers):
    def producer(write):
        write(b'')
        write(b'ab')
    server = recording_servers()
    response = yield client.fetch(server.url(), method='POST', body_producer=producer)
    assert response.body == b'ab'
    assert request_body(server.received[0]) == b'2\r\nab\r\n0\r\n\r\n'


def test_write_returns_a_future_resolved_once_the_chunk_is_sent(client, recording_servers):
    writes = []

    @gen.coroutine
    def producer(write):
        writes.append(write(b'x' * 100))
        yield writes[0]
    server = recording_servers()
    yield client.fetch(server.url(), method='POST', body_producer=producer)
    assert writes[0].done() and writes[0].result() is None


@pytest.mark.parametrize('body, error', [
    (b'123456789', 'more data than Content-Length'),
    (b'1234567', '1 bytes less than Content-Length'),
], ids=['too_long', 'too_short'])
def test_a_body_that_does_not_match_its_content_length_fails_the_fetch(
        client, recording_servers, body, error):
    server = recording_servers()
    with pytest.raises(HTTPOutputError, match=error):
        yield client.fetch(server.url(), method='POST', body_producer=lambda write: write(body),
                           headers={'Content-Length': '8'})
    # The connection is closed, not kept for another request.
    response = yield client.fetch(server.url(), method='POST', body=b'next')
    assert response.body == b'next'
    assert len(server.received) == 2


class ProducerError(Exception):
    pass


@gen.coroutine
def failing_producer(write):
    yield write(b'part')
    raise ProducerError('cannot go on')


def raising_producer(write):
    raise ProducerError('cannot start')


@pytest.mark.parametrize('producer', [failing_producer, raising_producer],
                         ids=['after_a_write', 'at_once'])
def test_a_producer_that_fails_fails_the_fetch_with_its_error(client, recording_servers,
                                                              producer):
    server = recording_servers()
    with pytest.raises(ProducerError):
        yield client.fetch(server.url(), method='POST', body_producer=producer)
    response = yield client.fetch(server.url(), raise_error=False, method='POST',
                                  body_producer=producer)
    assert response.code == 599 and isinstance(response.error, ProducerError)
    assert len(server.received) == 2  # each connection was dropped with its failure


def test_the_connection_is_kept_for_the_next_request(client, recording_servers):
    server = recording_servers()
    for _ in range(2):
        response = yield client.fetch(server.url(), method='POST',
                                      body_producer=coroutine_producer)
        assert response.body == b'12345678'
    yield client.fetch(server.url(), method='POST', body=b'plain')
    assert len(server.received) == 1


def test_a_response_before_the_body_is_whole_retires_the_connection(client,
                                                                     recording_servers):
    finish = Event()

    @gen.coroutine
    def producer(write):
        yield write(b'1234')
        yield finish.wait()
        yield write(b'5678')
    server = recording_servers(answer_at_once)
    response = yield client.fetch(server.url(), method='POST', body_producer=producer,
                                  headers={'Content-Length': '8'})
    assert response.body == b'early'
    finish.set()
    server.answer = echo
    response = yield client.fetch(server.url(), method='POST', body=b'next')
    assert response.body == b'next'
    assert len(server.received) == 2


@pytest.mark.parametrize('kwargs', [
    dict(method='POST', body=b'x', body_producer=plain_producer),
    dict(method='GET', body_producer=plain_producer),
], ids=['body_and_body_producer', 'get'])
def test_requests_with_a_producer_that_cannot_be_sent(client, recording_servers, kwargs):
    server = recording_servers()
    with pytest.raises(ValueError):
        yield client.fetch(server.url(), **kwargs)
    assert server.received == []


@pytest.mark.parametrize('kwargs', [
    dict(body_producer=plain_producer),
    dict(body=b'12345678', expect_100_continue=True),
], ids=['body_producer', 'expect_100_continue'])
def test_a_wire_recorder_cannot_record_a_body_sent_apart_from_its_head(
        client, recording_servers, kwargs):
    server = recording_servers()
    with pytest.raises(ValueError, match='wire_recorder'):
        yield client.fetch(server.url(), method='POST', wire_recorder=object(), **kwargs)
    assert server.received == []


def counting(calls):
    def producer(write):
        calls.append(True)
        write(b'12345678')
    return producer


def test_a_request_with_a_producer_is_not_retried_on_a_stale_connection(client, servers):
    server = servers([reply(response_bytes()), close_without_reply])
    yield client.fetch(server.url())
    calls = []
    with pytest.raises(NoResponseError):
        yield client.fetch(server.url(), method='PUT', body_producer=counting(calls),
                           headers={'Content-Length': '8'})
    assert len(calls) == 1 and len(server.requests) == 2


@pytest.mark.parametrize('code, methods, bodies, calls', [
    (303, ['POST', 'GET'], [b'12345678', b''], 1),
    (307, ['POST', 'POST'], [b'12345678', b'12345678'], 2),
], ids=['303_drops_the_body', '307_produces_it_again'])
def test_redirects_of_a_request_with_a_producer(client, servers, code, methods, bodies, calls):
    server = servers([reply(response_bytes(b'', code, ['Location: /to'])),
                      reply(response_bytes())])
    produced = []
    request = HTTPRequest(server.url('/from'), method='POST', body_producer=counting(produced),
                          headers={'Content-Length': '8'})
    yield client.fetch(request)
    assert [(r.method, r.body) for r in server.requests] == list(zip(methods, bodies))
    assert len(produced) == calls


# --- expect_100_continue ---------------------------------------------------------------------

CONTINUE = b'HTTP/1.1 100 Continue\r\n\r\n'


def continue_then_echo(trace):
    """An answer that sends 100 Continue, then echoes the body (of a Content-Length); it
    traces 'head', 'body before 100' if any of the body came before it, '100 Continue'."""
    @gen.coroutine
    def answer(server, stream, index, head):
        trace.append('head')
        # Client and server run on this loop: what the client wrote with the head has
        # arrived by now (a loopback write lands at once), and a read started finds it.
        first = stream.read_bytes(1, partial=True)
        if first.done():
            trace.append('body before 100')
        yield stream.write(CONTINUE)
        trace.append('100 Continue')
        length = int(headers_of(head)['Content-Length'])
        body = yield server.read(index, first)
        body += yield server.read(index, stream.read_bytes(length - 1))
        yield stream.write(response_bytes(body))
    return answer


def tracing_producer(trace):
    def producer(write):
        trace.append('produce')
        write(b'12345678')
    return producer


@pytest.mark.parametrize('body_kwargs, produced', [
    (dict(body=b'12345678'), []),
    (dict(body_producer='tracing', headers={'Content-Length': '8'}), ['produce']),
], ids=['body', 'body_producer'])
def test_the_body_waits_for_100_continue(client, recording_servers, body_kwargs, produced):
    trace = []
    if body_kwargs.get('body_producer') == 'tracing':
        body_kwargs = dict(body_kwargs, body_producer=tracing_producer(trace))
    server = recording_servers(continue_then_echo(trace))
    response = yield client.fetch(server.url(), method='POST', expect_100_continue=True,
                                  **body_kwargs)
    assert response.code == 200 and response.body == b'12345678'
    assert trace == ['head', '100 Continue'] + produced
    [data] = server.received
    headers = headers_of(data)
    assert headers['Expect'] == '100-continue' and headers['Content-Length'] == '8'
    assert request_body(data) == b'12345678'
    # The body was whole before the response began: the connection is kept.
    server.answer = echo
    response = yield client.fetch(server.url(), method='POST', body=b'next')
    assert response.body == b'next' and len(server.received) == 1


def refuse_and_keep_reading(closed):
    """An answer that sends a 403 at once, then keeps what else comes until the client
    closes the connection (`closed` is set then)."""
    @gen.coroutine
    def answer(server, stream, index, head):
        yield stream.write(response_bytes(b'no', 403))
        yield server.read(index, stream.read_until_close())
        closed.set()
    return answer


def never_called(write):
    raise AssertionError('the body was produced after a final response')


@pytest.mark.parametrize('body_kwargs', [
    dict(body=b'12345678'),
    dict(body_producer=never_called),
], ids=['body', 'body_producer'])
def test_a_final_response_instead_of_100_continue_is_the_result(client, recording_servers,
                                                                 body_kwargs):
    closed = Event()
    server = recording_servers(refuse_and_keep_reading(closed))
    with pytest.raises(HTTPClientError) as caught:
        yield client.fetch(server.url(), method='POST', expect_100_continue=True,
                           **body_kwargs)
    assert caught.value.code == 403 and caught.value.response.body == b'no'
    # The body is never sent, and the connection, where the server may still wait for
    # it, is closed rather than kept.
    yield closed.wait()
    assert request_body(server.received[0]) == b''
    response = yield client.fetch(server.url(), method='POST', raise_error=False,
                                  expect_100_continue=True, **body_kwargs)
    assert response.code == 403 and response.body == b'no'
    assert len(server.received) == 2


@pytest.mark.parametrize('code, expectations, body', [
    (303, [True, False], b'no body'),
    (307, [True, True], b'12345678'),
], ids=['303_drops_the_expectation', '307_keeps_it'])
def test_redirects_of_a_request_that_expects_100_continue(client, recording_servers, code,
                                                          expectations, body):
    def answer(server, stream, index, head):
        if index == 0:  # at once, without the body
            return stream.write(response_bytes(b'', code, ['Location: /to']))
        if 'Expect' in headers_of(head):
            return continue_then_echo([])(server, stream, index, head)
        return stream.write(response_bytes(b'no body'))
    server = recording_servers(answer)
    response = yield client.fetch(server.url('/from'), method='POST', body=b'12345678',
                                  expect_100_continue=True)
    assert response.body == body
    # The first connection, its body unsent, was not kept for the second request.
    assert ['Expect' in headers_of(data) for data in server.received] == expectations


def test_a_request_without_a_body_does_not_expect_100_continue(client, recording_servers):
    server = recording_servers(lambda server, stream, index, head: stream.write(
        response_bytes(b'plain')))
    response = yield client.fetch(server.url(), expect_100_continue=True)
    assert response.body == b'plain'
    assert 'Expect' not in headers_of(server.received[0])
