"""@stream_request_body as Tornado 5.1 has it: prepare() before the body, the body handed
to data_received piece by piece with flow control, per-request limits set in prepare(), an
early answer closing the connection, and a client leaving mid-upload."""
from __future__ import absolute_import, division, print_function

import gzip
import io
import logging

import pytest

from tinytornado import gen
from tinytornado.escape import json_decode
from tinytornado.locks import Event
from tinytornado.log import app_log, gen_log
from tinytornado.tcpclient import TCPClient
from tinytornado.testing import AsyncHTTPTestCase, ExpectLog, gen_test
from tinytornado.web import Application, HTTPError, RequestHandler, stream_request_body

BODY = b'abcdefghijklmnopqrstuvwxyz' * 4  # 104 bytes


@stream_request_body
class RecordingHandler(RequestHandler):
    """Records its steps; data_received and prepare are coroutines that yield to the loop,
    so a step that began before the last one ended would show up as an overlap."""
    release_prepare = None

    def initialize(self):
        self.steps = []
        self.pieces = []
        self.busy = False

    @gen.coroutine
    def prepare(self):
        self.steps.append('prepare')
        if self.get_argument('max', None):
            self.request.connection.set_max_body_size(int(self.get_argument('max')))
        if self.get_argument('wait', None):
            yield RecordingHandler.release_prepare.wait()
        yield gen.moment

    @gen.coroutine
    def data_received(self, chunk):
        assert not self.busy, 'data_received called before the last one resolved'
        self.busy = True
        self.steps.append('data')
        self.pieces.append(chunk)
        yield gen.moment
        yield gen.moment
        self.busy = False

    def post(self):
        self.steps.append('post')
        self.write({'steps': self.steps, 'sizes': [len(p) for p in self.pieces],
                    'body': b''.join(self.pieces).decode('ascii')})

    put = post


@stream_request_body
class RefusingHandler(RequestHandler):
    def prepare(self):
        raise HTTPError(401)


@stream_request_body
class LeftHandler(RequestHandler):
    closed = None
    verb_called = False

    def data_received(self, chunk):
        pass

    def post(self):
        LeftHandler.verb_called = True

    def on_connection_close(self):
        super(LeftHandler, self).on_connection_close()
        LeftHandler.closed.set()


@stream_request_body
class NoDataReceivedHandler(RequestHandler):
    def post(self):
        self.write('never')


class PlainHandler(RequestHandler):
    def post(self):
        self.write(self.request.body)


class StreamingTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([('/record', RecordingHandler), ('/refuse', RefusingHandler),
                            ('/left', LeftHandler), ('/nodata', NoDataReceivedHandler),
                            ('/plain', PlainHandler)])

    def get_httpserver_options(self):
        return dict(chunk_size=10, decompress_request=True, max_body_size=64)

    def setUp(self):
        RecordingHandler.release_prepare = Event()
        LeftHandler.closed = Event()
        LeftHandler.verb_called = False
        super(StreamingTest, self).setUp()

    def _recorded(self, response):
        response.rethrow()
        return json_decode(response.body)

    def test_the_body_comes_in_pieces_after_prepare(self):
        result = self._recorded(self.fetch('/record?max=1000', method='POST', body=BODY))
        self.assertEqual(result['body'], BODY.decode('ascii'))
        self.assertEqual(result['sizes'], [10] * 10 + [4])  # chunk_size at most
        self.assertEqual(result['steps'], ['prepare'] + ['data'] * 11 + ['post'])

    def test_chunked_pieces_keep_their_boundaries(self):
        @gen.coroutine
        def producer(write):
            for piece in (b'abc', b'defghijklmnop', b'q'):
                yield write(piece)
        result = self._recorded(self.fetch('/record', method='POST', body_producer=producer))
        self.assertEqual(result['sizes'], [3, 10, 3, 1])
        self.assertEqual(result['body'], 'abcdefghijklmnopq')

    def test_a_compressed_body_is_decoded_before_data_received(self):
        buffer = io.BytesIO()
        with gzip.GzipFile(mode='wb', fileobj=buffer) as f:
            f.write(BODY)
        result = self._recorded(self.fetch('/record?max=1000', method='POST',
                                           body=buffer.getvalue(),
                                           headers={'Content-Encoding': 'gzip'}))
        self.assertEqual(result['body'], BODY.decode('ascii'))
        self.assertTrue(all(size <= 10 for size in result['sizes']), result['sizes'])

    @gen_test
    def test_no_body_is_read_before_prepare_is_done(self):
        stream = yield TCPClient().connect('127.0.0.1', self.get_http_port())
        yield stream.write(b'PUT /record?wait=1 HTTP/1.1\r\nContent-Length: 26\r\n\r\n' +
                           BODY[:26])
        yield gen.sleep(0.05)
        # prepare() still waits: the body is in the socket, no data_received has run.
        RecordingHandler.release_prepare.set()
        head = yield stream.read_until(b'\r\n\r\n')
        self.assertTrue(head.startswith(b'HTTP/1.1 200'))
        stream.close()

    def test_set_max_body_size_in_prepare(self):
        # The server's limit is 64 bytes; this request's prepare() lets 1000 through.
        result = self._recorded(self.fetch('/record?max=1000', method='PUT', body=BODY))
        self.assertEqual(len(result['body']), len(BODY))

    @gen_test
    def test_the_limit_is_back_for_the_next_request(self):
        stream = yield TCPClient().connect('127.0.0.1', self.get_http_port())
        yield stream.write(b'PUT /record?max=1000 HTTP/1.1\r\nContent-Length: 104\r\n\r\n' +
                           BODY)
        head = yield stream.read_until(b'\r\n\r\n')
        length = int(head.split(b'Content-Length: ')[1].split(b'\r\n')[0])
        body = yield stream.read_bytes(length)
        self.assertEqual(len(json_decode(body)['body']), len(BODY))
        level = gen_log.level
        gen_log.setLevel(logging.INFO)  # the refusal is logged as info
        try:
            with ExpectLog(gen_log, '.*Content-Length too long'):
                yield stream.write(b'PUT /record HTTP/1.1\r\nContent-Length: 104\r\n\r\n')
                data = yield stream.read_until_close()
        finally:
            gen_log.setLevel(level)
        self.assertEqual(data, b'HTTP/1.1 400 Bad Request\r\n\r\n')

    def test_a_body_over_the_limit_is_answered_not_reset(self):
        # The server refuses it after the head and a little of the body: the rest,
        # unread, would make closing reset the connection and lose the 400.
        level = gen_log.level
        gen_log.setLevel(logging.INFO)
        try:
            for _ in range(3):
                with ExpectLog(gen_log, '.*Content-Length too long'):
                    response = self.fetch('/record', method='PUT', body=b'a' * 300000)
                self.assertEqual(response.code, 400)
        finally:
            gen_log.setLevel(level)

    @gen_test
    def test_an_answer_before_the_body_closes_the_connection(self):
        for body in (b'', b'4\r\nasdf\r\n'):
            stream = yield TCPClient().connect('127.0.0.1', self.get_http_port())
            yield stream.write(b'POST /refuse HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' +
                               body)
            data = yield stream.read_until_close()  # the server does not wait for the body
            self.assertTrue(data.startswith(b'HTTP/1.1 401'), data)

    @gen_test
    def test_a_client_leaving_mid_upload(self):
        stream = yield TCPClient().connect('127.0.0.1', self.get_http_port())
        yield stream.write(b'POST /left HTTP/1.1\r\nContent-Length: 50\r\n\r\nabc')
        yield gen.sleep(0.02)
        stream.close()
        yield LeftHandler.closed.wait()
        yield gen.sleep(0.02)
        self.assertFalse(LeftHandler.verb_called)

    def test_data_received_must_be_defined(self):
        with ExpectLog(app_log, 'Uncaught exception'):
            response = self.fetch('/nodata', method='POST', body=b'x')
        self.assertEqual(response.code, 599)

    def test_other_handlers_still_get_the_body_whole(self):
        response = self.fetch('/plain', method='POST', body=BODY[:60])
        self.assertEqual(response.body, BODY[:60])


def test_only_handler_classes_can_stream():
    with pytest.raises(TypeError):
        stream_request_body(object)
    with pytest.raises(TypeError):
        stream_request_body(lambda self: None)
