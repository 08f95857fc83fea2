"""HTTPRequest's wire_recorder: the bytes a fetch wrote and read, per hop, as they passed.

The canned-bytes server of test_httpclient.py sends exact bytes; the recorder must see
them unchanged (chunked framing and gzip left as sent), and see the request as the server
read it, with the moments in order: request_sent, response_data..., response_ended.
"""
from __future__ import absolute_import, division, print_function

import gzip
import io

from test_httpclient import (  # noqa: F401 (fixtures)
    client, clients, close_without_reply, reply, reply_and_close, response_bytes, servers,
)
from tinytornado.httpclient import HTTPRequest
from tinytornado.httputil import HTTPHeaders


class Recorder(object):
    """Appends each call to `trace`: ('sent', url, ip, data), ('data', data), 'ended'."""

    def __init__(self):
        self.trace = []

    def request_sent(self, url, address, data):
        self.trace.append(('sent', url, address[0], data))

    def response_data(self, data):
        self.trace.append(('data', data))

    def response_ended(self):
        self.trace.append('ended')

    def hops(self):
        """[(url, request bytes, response bytes, ended)] in order."""
        hops = []
        for event in self.trace:
            if event == 'ended':
                hops[-1][3] = True
            elif event[0] == 'sent':
                hops.append([event[1], event[3], b'', False])
            else:
                hops[-1][2] += event[1]
        return [tuple(hop) for hop in hops]


def gzip_bytes(data):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode='wb', mtime=0) as out:
        out.write(data)
    return buffer.getvalue()


CHUNKED_GZIP = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n'
                b'\r\n' + b''.join(b'%x\r\n%s\r\n' % (len(piece), piece)
                                   for piece in (gzip_bytes(b'hello ' * 50)[:20],
                                                 gzip_bytes(b'hello ' * 50)[20:])) +
                b'0\r\n\r\n')
REDIRECT = response_bytes(b'moved', 302, ['Location: /b'])


def assert_request_as_read(data, request):
    """`data` is the request the server read as `request`."""
    head, _, body = data.partition(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    assert lines[0] == '%s %s HTTP/1.1' % (request.method, request.path)
    assert HTTPHeaders.parse('\r\n'.join(lines[1:])) == request.headers
    assert body == request.body


def test_the_recorder_sees_each_hop_as_it_went_over_the_wire(client, servers):
    server = servers([reply(REDIRECT), reply(CHUNKED_GZIP)])
    recorder = Recorder()
    response = yield client.fetch(HTTPRequest(server.url('/a'), wire_recorder=recorder))
    assert response.body == b'hello ' * 50  # decoded for the response, not for the recorder
    hops = recorder.hops()
    assert [(url, answer, ended) for url, _, answer, ended in hops] == [
        (server.url('/a'), REDIRECT, True), (server.url('/b'), CHUNKED_GZIP, True)]
    for (_, sent, _, _), request in zip(hops, server.requests):
        assert_request_as_read(sent, request)
    assert set(event[2] for event in recorder.trace if event[0] == 'sent') == {'127.0.0.1'}


def test_a_request_body_is_recorded_with_its_head(client, servers):
    server = servers([reply(response_bytes())])
    recorder = Recorder()
    yield client.fetch(server.url('/post'), method='POST', body=b'a=1&b=2',
                       wire_recorder=recorder)
    [(_, sent, _, ended)] = recorder.hops()
    assert sent.endswith(b'\r\n\r\na=1&b=2') and ended
    assert_request_as_read(sent, server.requests[0])


def test_a_response_cut_short_is_recorded_as_far_as_it_came_and_never_ended(client, servers):
    cut = response_bytes(b'0123456789')[:-4]
    server = servers([reply_and_close(cut)])
    recorder = Recorder()
    response = yield client.fetch(server.url('/'), raise_error=False, wire_recorder=recorder)
    assert response.code == 599
    assert [(answer, ended) for _, _, answer, ended in recorder.hops()] == [(cut, False)]


def test_a_retry_on_a_new_connection_is_a_second_request_sent(client, servers):
    ok = reply(response_bytes())
    server = servers([ok, close_without_reply, ok])
    yield client.fetch(server.url('/'))  # leaves a pooled connection the server then drops
    recorder = Recorder()
    yield client.fetch(server.url('/again'), wire_recorder=recorder)
    assert [(answer, ended) for _, _, answer, ended in recorder.hops()] == [
        (b'', False), (response_bytes(), True)]
