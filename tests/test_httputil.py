from __future__ import absolute_import, division, print_function

import collections
import copy
import gc
import random
import re
import weakref
import zlib

import pytest
from six.moves import range

from tinytornado._compat import native_str
from tinytornado.httputil import (
    NEED_DATA, PAUSED, BodyData, ConnectionClosed, ContentDecoder, EndOfMessage,
    HTTP1ClientProtocol, HTTPHeaders, HTTPInputError, HTTPOutputError, InformationalResponse,
    NoResponseError, ResponseHead, url_concat,
)

HOST = {'Host': 'example.com'}
SECOND_RESPONSE = b'HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnot'
SECOND_EVENTS = [
    ('ResponseHead', 'HTTP/1.1', 404, 'Not Found', [('Content-Length', '3')]),
    ('BodyData', b'not'),
    ('EndOfMessage', []),
]


# --- helpers -------------------------------------------------------------------------------

def whole(data):
    return [data]


def bytewise(data):
    return [data[i:i + 1] for i in range(len(data))]


FEEDS = [whole, bytewise]


def sent_protocol(method='GET', headers=HOST, **limits):
    protocol = HTTP1ClientProtocol(**limits)
    protocol.send_request(method, '/', headers)
    return protocol


def drain(protocol):
    """Events available now, up to NEED_DATA, PAUSED or ConnectionClosed."""
    events = []
    for _ in range(10000):  # a parser that never settles fails here instead of spinning
        event = protocol.next_event()
        if event is NEED_DATA or event is PAUSED:
            return events
        events.append(event)
        if isinstance(event, ConnectionClosed):
            return events
    pytest.fail('next_event never settled')


def describe(event):
    """An event as a plain tuple, headers as their (name, value) pairs in order."""
    if isinstance(event, (ResponseHead, InformationalResponse)):
        pairs = list(event.headers.get_all())
        texts = [event.version, event.reason] + [text for pair in pairs for text in pair]
        assert set(map(type, texts)) == {str}  # native strings on 2.7 and 3.x alike
        return (type(event).__name__, event.version, event.code, event.reason, pairs)
    if isinstance(event, EndOfMessage):
        return ('EndOfMessage', list(event.trailers.get_all()))
    if isinstance(event, BodyData):
        assert type(event.data) is bytes  # also when the body came in many reads
        return ('BodyData', event.data)
    return (type(event).__name__,)


def read(protocol, data, feed, eof=False):
    """Feed `data` in the pieces `feed` cuts (then EOF if asked); body pieces joined."""
    events = []
    for piece in feed(data) + ([b''] if eof else []):
        protocol.receive_data(piece)
        events.extend(drain(protocol))
    return join_body(events)


def join_body(events):
    """Events described, consecutive body pieces joined into one."""
    return join_described(map(describe, events))


def join_described(described):
    joined = []
    for event in described:
        if event[0] == 'BodyData' and joined and joined[-1][0] == 'BodyData':
            joined[-1] = ('BodyData', joined[-1][1] + event[1])
        else:
            joined.append(event)
    return joined


def compress(data, wbits):
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


# --- HTTPHeaders ---------------------------------------------------------------------------

def test_headers_are_case_insensitive_and_normalized():
    headers = HTTPHeaders()
    headers['content-TYPE'] = 'text/html'
    headers['x-forwarded-for'] = '1.2.3.4'
    assert headers['Content-Type'] == 'text/html'
    assert headers.get('CONTENT-TYPE') == 'text/html'
    assert 'content-type' in headers
    assert 'Content-Length' not in headers
    assert headers.get('Content-Length', 'none') == 'none'
    assert list(headers) == ['Content-Type', 'X-Forwarded-For']
    del headers['CONTENT-type']
    assert list(headers) == ['X-Forwarded-For']
    with pytest.raises(KeyError):
        headers['Content-Type']


def test_headers_keep_every_value_in_order():
    headers = HTTPHeaders()
    headers.add('Set-Cookie', 'a=1')
    headers.add('X-Other', 'x')
    headers.add('set-cookie', 'b=2')
    assert headers.get_list('SET-COOKIE') == ['a=1', 'b=2']
    assert headers['Set-Cookie'] == 'a=1,b=2'
    assert headers.get_list('Missing') == []
    assert list(headers.get_all()) == [
        ('Set-Cookie', 'a=1'), ('Set-Cookie', 'b=2'), ('X-Other', 'x')]
    assert len(headers) == 2
    assert sorted(headers.items()) == [('Set-Cookie', 'a=1,b=2'), ('X-Other', 'x')]


def test_setitem_replaces_all_values_in_place():
    headers = HTTPHeaders()
    headers.add('A', '1')
    headers.add('B', '2')
    headers.add('A', '3')
    headers['a'] = '4'
    assert list(headers.get_all()) == [('A', '4'), ('B', '2')]


def test_a_deleted_name_comes_back_last_and_a_copy_is_independent():
    headers = HTTPHeaders([('A', '1'), ('B', '2'), ('C', '3')])
    del headers['a']
    headers.add('A', '4')
    assert list(headers) == ['B', 'C', 'A']
    copy = headers.copy()
    copy.add('B', '5')
    del copy['C']
    assert list(headers.get_all()) == [('B', '2'), ('C', '3'), ('A', '4')]
    assert list(copy.get_all()) == [('B', '2'), ('B', '5'), ('A', '4')]
    headers.clear()
    assert list(headers) == [] and len(headers) == 0


def test_insertion_order_survives_many_names():
    names = ['Header-%d' % i for i in range(50, 0, -1)]
    headers = HTTPHeaders()
    for name in names:
        headers[name] = 'v'
    assert list(headers) == names


def test_parse_header_block():
    text = ('Content-Type: text/html\r\n'
            'Set-Cookie: a=1\r\n'
            'X-Folded: first\r\n'
            '   second part\r\n'
            'set-cookie:b=2\n'
            '\r\n')
    headers = HTTPHeaders.parse(text)
    assert list(headers.get_all()) == [
        ('Content-Type', 'text/html'), ('Set-Cookie', 'a=1'), ('Set-Cookie', 'b=2'),
        ('X-Folded', 'first second part')]


@pytest.mark.parametrize('text, message', [
    (' leading: whitespace\r\n', 'first header line'),
    ('no colon here\r\n', 'no colon'),
], ids=['continuation_first', 'no_colon'])
def test_parse_rejects_bad_lines(text, message):
    with pytest.raises(HTTPInputError, match=message):
        HTTPHeaders.parse(text)


def test_constructors_and_copies_keep_multiple_values():
    original = HTTPHeaders()
    original.add('Accept', 'a')
    original.add('Accept', 'b')
    for duplicate in (HTTPHeaders(original), original.copy(), copy.copy(original)):
        assert duplicate.get_list('Accept') == ['a', 'b']
        duplicate.add('Accept', 'c')
        assert original.get_list('Accept') == ['a', 'b']
    assert HTTPHeaders({'host': 'h'}, x_y='z')['Host'] == 'h'
    assert HTTPHeaders(**{'x-y': 'z'})['X-Y'] == 'z'
    assert HTTPHeaders([('a', '1'), ('b', '2')]) == {'A': '1', 'B': '2'}


def test_str_and_repr():
    headers = HTTPHeaders()
    headers.add('A', '1')
    headers.add('A', '2')
    assert str(headers) == 'A: 1\nA: 2\n'
    assert repr(headers) == "HTTPHeaders([('A', '1'), ('A', '2')])"


# --- request bytes -------------------------------------------------------------------------

def test_get_request_bytes():
    headers = HTTPHeaders(HOST)
    headers.add('accept', 'text/html')
    headers.add('Accept', '*/*')
    protocol = HTTP1ClientProtocol()
    assert protocol.send_request('GET', '/a/b?c=d', headers) == (
        b'GET /a/b?c=d HTTP/1.1\r\n'
        b'Host: example.com\r\n'
        b'Accept: text/html\r\n'
        b'Accept: */*\r\n'
        b'\r\n')


@pytest.mark.parametrize('body, length', [(b'name=value', b'10'), (b'', b'0')],
                         ids=['body', 'empty_body'])
def test_post_request_gets_content_length(body, length):
    protocol = HTTP1ClientProtocol()
    assert protocol.send_request(u'POST', u'/submit', HOST, body) == (
        b'POST /submit HTTP/1.1\r\nHost: example.com\r\nContent-Length: ' + length +
        b'\r\n\r\n' + body)


def with_added(headers, name, value):
    headers = HTTPHeaders(headers)
    headers.add(name, value)
    return headers


@pytest.mark.parametrize('method, target, headers, body', [
    ('GET', '/', {}, None),
    ('GET', '/', {'Host': 'h', 'X-Evil': 'x\r\nInjected: 1'}, None),
    ('GET', '/', {'Host': u'\u2603.example'}, None),
    ('GET', '/a b', HOST, None),
    ('POST', '/', {'Host': 'h', 'Transfer-Encoding': 'chunked'}, b'x'),
    ('POST', '/', {'Host': 'h', 'Content-Length': '10'}, b'short'),
    ('GET', '/', {'Host': 'h', 'Upgrade': 'websocket', 'Connection': 'Upgrade'}, None),
    ('CONNECT', 'example.com:443', HOST, None),
    ('GET', '/', with_added(HOST, 'host', 'second.example'), None),
    ('GET', '/', {'Host': 'h', 'X': 'trailing space '}, None),
    ('GET', '/', {'Host': 'h', 'Bad Name': 'v'}, None),
    ('G(T', '/', HOST, None),
    ('POST', '/', {'Host': 'h', 'Content-Length': '5, 6'}, b'hello'),
], ids=['no_host', 'header_injection', 'not_latin1', 'space_in_target',
        'transfer_encoding', 'body_shorter_than_length', 'upgrade', 'connect', 'two_hosts',
        'value_with_outer_whitespace', 'name_not_a_token', 'method_not_a_token',
        'conflicting_content_lengths'])
def test_invalid_requests_raise_value_error(method, target, headers, body):
    with pytest.raises(ValueError):
        HTTP1ClientProtocol().send_request(method, target, headers, body)


def test_every_request_checks_its_fields_however_often_they_were_sent():
    # The fields found valid are remembered; a bytearray value, which can change, is not.
    value = bytearray(b'ok')
    headers = with_added(with_added(HOST, 'X-Value', value), 'X-Same', 'same')
    for _ in range(2):
        assert HTTP1ClientProtocol().send_request('GET', '/', headers) == (
            b'GET / HTTP/1.1\r\nHost: example.com\r\nX-Value: ok\r\nX-Same: same\r\n\r\n')
    value[:] = b'ok\r\nInjected: 1'
    bad = with_added(HOST, 'X-Bad', 'trailing space ')
    for _ in range(2):
        for headers in (headers, bad):
            with pytest.raises(ValueError):
                HTTP1ClientProtocol().send_request('GET', '/', headers)


@pytest.mark.parametrize('headers, pieces, sent', [
    (HOST, [b'ab', b'', b'c' * 17],
     b'POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n'
     b'2\r\nab\r\n11\r\n' + b'c' * 17 + b'\r\n0\r\n\r\n'),
    (dict(HOST, **{'Content-Length': '3'}), [b'ab', b'', b'c'],
     b'POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\nabc'),
], ids=['chunked', 'content_length'])
def test_a_streamed_body_is_framed_by_its_content_length_or_chunked(headers, pieces, sent):
    protocol = HTTP1ClientProtocol()
    data = protocol.send_request_head('POST', '/', headers)
    data += b''.join(protocol.send_body_data(piece) for piece in pieces)
    assert data + protocol.end_body() == sent
    with pytest.raises(RuntimeError):  # the request is whole
        protocol.send_body_data(b'more')
    assert read(protocol, SECOND_RESPONSE, whole) == SECOND_EVENTS
    assert protocol.reusable


@pytest.mark.parametrize('pieces, error', [
    ([b'abcd'], 'more data than Content-Length'),
    ([b'a', b'b'], '1 bytes less than Content-Length'),
], ids=['too_long', 'too_short'])
def test_a_streamed_body_must_match_its_content_length(pieces, error):
    protocol = HTTP1ClientProtocol()
    protocol.send_request_head('POST', '/', dict(HOST, **{'Content-Length': '3'}))
    with pytest.raises(HTTPOutputError, match=error):
        for piece in pieces:
            protocol.send_body_data(piece)
        protocol.end_body()


def test_a_response_that_begins_before_the_streamed_body_ends_retires_the_connection():
    protocol = HTTP1ClientProtocol()
    protocol.send_request_head('POST', '/', HOST)
    assert read(protocol, SECOND_RESPONSE, whole) == SECOND_EVENTS
    protocol.end_body()
    assert not protocol.reusable


def test_a_body_is_streamed_only_after_a_streamed_head():
    protocol = sent_protocol('POST')
    with pytest.raises(RuntimeError):
        protocol.send_body_data(b'x')
    with pytest.raises(RuntimeError):
        protocol.end_body()


@pytest.mark.parametrize('headers', [
    {'Host': 'h', 'Transfer-Encoding': 'chunked'}, {'Host': 'h', 'Content-Length': 'x'}, {},
], ids=['transfer_encoding_given', 'bad_content_length', 'no_host'])
def test_a_streamed_head_is_checked_as_a_whole_request_is(headers):
    protocol = HTTP1ClientProtocol()
    with pytest.raises(ValueError):
        protocol.send_request_head('POST', '/', headers)
    with pytest.raises(RuntimeError):  # nothing was started
        protocol.send_body_data(b'x')


def test_second_request_needs_a_finished_cycle():
    protocol = sent_protocol()
    with pytest.raises(ValueError):
        protocol.send_request('GET', '/', HOST)
    with pytest.raises(RuntimeError):
        protocol.start_next_cycle()


# --- response framing ------------------------------------------------------------------------

FRAMINGS = {
    'content_length': (
        'GET', b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/html\r\n\r\nhello',
        [('ResponseHead', 'HTTP/1.1', 200, 'OK',
          [('Content-Length', '5'), ('Content-Type', 'text/html')]),
         ('BodyData', b'hello'), ('EndOfMessage', [])]),
    'chunked_with_trailers': (
        'GET', b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
               b'5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Checksum: abc\r\n\r\n',
        [('ResponseHead', 'HTTP/1.1', 200, 'OK', [('Transfer-Encoding', 'chunked')]),
         ('BodyData', b'hello, world'), ('EndOfMessage', [('X-Checksum', 'abc')])]),
    'head': (
        'HEAD', b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n',
        [('ResponseHead', 'HTTP/1.1', 200, 'OK', [('Content-Length', '10')]),
         ('EndOfMessage', [])]),
    'no_content_204': (
        'GET', b'HTTP/1.1 204 No Content\r\n\r\n',
        [('ResponseHead', 'HTTP/1.1', 204, 'No Content', []), ('EndOfMessage', [])]),
    'not_modified_304': (
        'GET', b'HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n',
        [('ResponseHead', 'HTTP/1.1', 304, 'Not Modified', [('Content-Length', '99')]),
         ('EndOfMessage', [])]),
    'informational_1xx': (
        'GET', b'HTTP/1.1 100 Continue\r\n\r\n'
               b'HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n'
               b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
        [('InformationalResponse', 'HTTP/1.1', 100, 'Continue', []),
         ('InformationalResponse', 'HTTP/1.1', 103, 'Early Hints', [('Link', '</s.css>')]),
         ('ResponseHead', 'HTTP/1.1', 200, 'OK', [('Content-Length', '2')]),
         ('BodyData', b'ok'), ('EndOfMessage', [])]),
}


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('name', sorted(FRAMINGS))
def test_keep_alive_framings(name, feed):
    method, response, expected = FRAMINGS[name]
    protocol = sent_protocol(method)
    assert read(protocol, response, feed) == expected
    assert protocol.next_event() is PAUSED
    assert protocol.reusable


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('name', sorted(FRAMINGS))
def test_pipelined_second_response_waits_for_next_cycle(name, feed):
    method, response, expected = FRAMINGS[name]
    protocol = sent_protocol(method)
    assert read(protocol, response + SECOND_RESPONSE, feed) == expected
    assert protocol.next_event() is PAUSED
    protocol.start_next_cycle()
    protocol.send_request('GET', '/second', HOST)
    assert join_body(drain(protocol)) == SECOND_EVENTS
    assert protocol.reusable


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('version', [b'1.0', b'1.1'])
def test_close_delimited_body_ends_at_eof(version, feed):
    response = b'HTTP/' + version + b' 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close'
    protocol = sent_protocol()
    assert read(protocol, response, feed, eof=True) == [
        ('ResponseHead', 'HTTP/' + version.decode('ascii'), 200, 'OK',
         [('Content-Type', 'text/plain')]),
        ('BodyData', b'until close'), ('EndOfMessage', [])]
    assert not protocol.reusable


@pytest.mark.parametrize('request_headers, response, reusable', [
    (HOST, b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', True),
    (HOST, b'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n', True),
    (HOST, b'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', False),
    (HOST, b'HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n', False),
    ({'Host': 'h', 'Connection': 'close'}, b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
     False),
    (HOST, b'HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n', False),
    (HOST, b'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n', False),
], ids=['http11_default', 'http11_keep_alive', 'http11_close', 'http11_close_capitalized',
        'request_close', 'http10_default', 'http10_keep_alive'])
def test_keep_alive_decision(request_headers, response, reusable):
    protocol = sent_protocol(headers=request_headers)
    assert read(protocol, response, whole)[-1] == ('EndOfMessage', [])
    assert protocol.reusable is reusable
    if not reusable:
        with pytest.raises(RuntimeError):
            protocol.start_next_cycle()


@pytest.mark.parametrize('extra', [b'', b'H', b'junk after the body'])
def test_bytes_beyond_the_response_are_reported(extra):
    protocol = sent_protocol()
    assert read(protocol, SECOND_RESPONSE + extra, whole) == SECOND_EVENTS
    assert protocol.reusable
    assert protocol.has_extra_data is bool(extra)


def test_three_responses_on_one_connection():
    protocol = HTTP1ClientProtocol()
    for path in ('/1', '/2', '/3'):
        protocol.send_request('GET', path, HOST)
        assert read(protocol, SECOND_RESPONSE, bytewise) == SECOND_EVENTS
        protocol.start_next_cycle()


@pytest.mark.parametrize('extra', [0, 1], ids=['at_limit', 'one_over'])
@pytest.mark.parametrize('feed', FEEDS)
def test_max_header_size_is_exact_whole_or_bytewise(feed, extra):
    # 17 (status line) + 19 (Content-Length: 0) + 9 + padding + 2 (blank line) = 200 bytes.
    head = (b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: ' + b'p' * (153 + extra) +
            b'\r\n\r\n')
    assert len(head) == 200 + extra
    protocol = sent_protocol(max_header_size=200)
    if extra:
        with pytest.raises(HTTPInputError, match='larger than max_header_size'):
            read(protocol, head, feed)
    else:
        assert read(protocol, head, feed)[-1] == ('EndOfMessage', [])


def in_reads(data):
    """`data` in the 64 KiB pieces a fetch reads."""
    return [data[i:i + 65536] for i in range(0, len(data), 65536)]


@pytest.mark.parametrize('extra', [0, 1, 1000], ids=['at_limit', 'one_over', 'far_over'])
@pytest.mark.parametrize('feed', FEEDS + [in_reads])
def test_max_header_size_bounds_a_chunk_size_line_however_it_is_split(feed, extra):
    # The line, CRLF included, is max_header_size bytes (+ extra): longer than a 64 KiB
    # read, so that those reads end inside it, as bytewise feeding does.
    limit = 65536 + 100
    line = b'5;pad=' + b'p' * (limit - 8 + extra) + b'\r\n'
    assert len(line) == limit + extra
    response = (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' + line +
                b'hello\r\n0\r\n\r\n')
    protocol = sent_protocol(max_header_size=limit)
    if extra:
        with pytest.raises(HTTPInputError, match='chunk size line of .* is larger than '
                                                 'max_header_size'):
            read(protocol, response, feed)
    else:
        assert read(protocol, response, feed)[1:] == [('BodyData', b'hello'),
                                                      ('EndOfMessage', [])]


# --- end of file and the cycle ---------------------------------------------------------------

def test_eof_while_idle_is_connection_closed():
    protocol = HTTP1ClientProtocol()
    assert protocol.next_event() is NEED_DATA
    protocol.receive_data(b'')
    assert isinstance(protocol.next_event(), ConnectionClosed)
    assert isinstance(protocol.next_event(), ConnectionClosed)
    assert not protocol.reusable


def test_eof_before_any_response_byte_is_no_response_error():
    protocol = sent_protocol()
    assert protocol.next_event() is NEED_DATA
    protocol.receive_data(b'')
    with pytest.raises(NoResponseError, match='before the response began') as first:
        protocol.next_event()
    with pytest.raises(NoResponseError) as again:
        protocol.next_event()
    assert again.value is first.value


def fail(protocol):
    """The error next_event raises, as text: no exception object stays in this frame."""
    try:
        protocol.next_event()
    except HTTPInputError as e:
        return '%s: %s' % (e.__class__.__name__, e)
    pytest.fail('next_event did not raise')


def test_a_failed_protocol_is_freed_once_its_error_is_dropped():
    # The error's traceback holds the parser's frames: if the parser held the error in
    # turn, the two (and the frames of its caller, a fetch) would wait for the collector.
    protocol = sent_protocol()
    assert read(protocol, b'HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\ncut', whole)[1:] == [
        ('BodyData', b'cut')]
    protocol.receive_data(b'')
    gc.collect()
    gc.disable()
    try:
        assert fail(protocol) == ('HTTPInputError: connection closed in the middle of the '
                                  'response body (received 3 bytes, expected 9)')
        # Dropped, the error comes again as one of its class and message.
        assert fail(protocol) == fail(protocol)
        freed = weakref.ref(protocol)
        del protocol
        assert freed() is None
    finally:
        gc.enable()


def test_eof_after_informational_response_is_not_no_response_error():
    protocol = sent_protocol()
    with pytest.raises(HTTPInputError, match='middle of the response head') as info:
        read(protocol, b'HTTP/1.1 100 Continue\r\n\r\n', whole, eof=True)
    assert not isinstance(info.value, NoResponseError)


def test_data_from_the_server_before_any_request():
    protocol = HTTP1ClientProtocol()
    with pytest.raises(HTTPInputError, match='no request was outstanding'):
        read(protocol, SECOND_RESPONSE, whole)


def test_data_after_eof_is_a_caller_error():
    protocol = sent_protocol()
    protocol.receive_data(b'')
    with pytest.raises(RuntimeError):
        protocol.receive_data(b'HTTP/1.1')


# --- bad input: every row ends in HTTPInputError, whole or byte by byte --------------------------

CHUNKED_HEAD = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'
BAD_RESPONSES = {
    'garbage_status_line': ({}, b'garbage\r\n\r\n', 'illegal status line'),
    'header_line_over_limit': (
        {'max_header_size': 1024},
        b'HTTP/1.1 200 OK\r\nX-Big: ' + b'a' * 2000 + b'\r\nContent-Length: 0\r\n\r\n',
        'response head .*larger than max_header_size \\(1024 bytes\\)'),
    'too_many_headers': (
        {'max_header_lines': 10},
        b'HTTP/1.1 200 OK\r\n' + b''.join(b'X-H%d: v\r\n' % i for i in range(11)) + b'\r\n',
        'response head has 11 header lines, more than max_header_lines \\(10\\)'),
    'too_many_trailers': (
        {'max_header_lines': 10},
        CHUNKED_HEAD + b'0\r\n' + b''.join(b'X-T%d: v\r\n' % i for i in range(11)) + b'\r\n',
        'trailers has 11 header lines'),
    'bad_chunk_size': ({}, CHUNKED_HEAD + b'zz\r\nhello\r\n0\r\n\r\n', 'illegal chunk header'),
    'chunk_size_too_long': ({}, CHUNKED_HEAD + b'1' * 30 + b'\r\n', 'illegal chunk header'),
    'truncated_chunked_body': ({}, CHUNKED_HEAD + b'5\r\nhel', 'incomplete chunked read'),
    'content_length_larger_than_body': (
        {}, b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort',
        'received 5 bytes, expected 10'),
    'conflicting_content_lengths': (
        {}, b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
        'Multiple unequal Content-Lengths'),
    'content_length_and_chunked': (
        {}, b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n'
            b'2\r\nok\r\n0\r\n\r\n', 'both Transfer-Encoding and Content-Length'),
    'bad_content_length': (
        {}, b'HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n', 'Content-Length'),
    'eof_mid_headers': (
        {}, b'HTTP/1.1 200 OK\r\nContent-Ty', 'closed in the middle of the response head'),
    'unsupported_transfer_encoding': (
        {}, b'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n', 'Transfer-Encoding'),
    'space_in_header_name': (
        {}, b'HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n', 'illegal header line'),
    'nul_in_header_value': (
        {}, b'HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n', 'illegal header line'),
    'status_code_below_100': ({}, b'HTTP/1.1 099 Low\r\n\r\n', 'status code 099'),
    'switching_protocols_unasked': (
        {}, b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n', '101 response'),
    'fold_before_any_field': (
        {}, b'HTTP/1.1 200 OK\r\n  folded\r\nContent-Length: 0\r\n\r\n', 'continuation'),
    'chunk_not_followed_by_crlf': (
        {}, CHUNKED_HEAD + b'2\r\nokX\r\n0\r\n\r\n', 'not CRLF'),
}


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('name', sorted(BAD_RESPONSES))
def test_bad_response(name, feed):
    limits, response, message = BAD_RESPONSES[name]
    protocol = sent_protocol(**limits)
    with pytest.raises(HTTPInputError, match=message) as first:
        read(protocol, response, feed, eof=True)
    assert not isinstance(first.value, NoResponseError)
    with pytest.raises(HTTPInputError) as again:  # the response stays failed
        protocol.next_event()
    assert again.value is first.value
    assert not protocol.reusable


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('head, fields', [
    (b'Content-Length: 5\r\ncontent-length: 5, 5', [('Content-Length', '5')]),
    (b'Transfer-Encoding: Chunked', [('Transfer-Encoding', 'chunked')]),
    (b'X:a \t b\t \r\nY:  ', [('X', 'a \t b'), ('Y', '')]),
    (b'X: a \r\n  b\r\n\tc', [('X', 'a  b c')]),
    (b'X: caf\xe9\x01\x7f', [('X', 'caf\xe9\x01\x7f')]),
], ids=['repeated_length', 'chunked_in_capitals', 'whitespace', 'obs_fold', 'octets'])
def test_field_forms_come_out_as_h11_gave_them(head, fields, feed):
    # One length said twice is one length; a fold becomes one space after what it ends;
    # controls other than CR, LF, VT, FF and NUL pass, as real cookies carry them.
    chunked = b'Chunked' in head
    body = b'0\r\n\r\n' if chunked else b'hello' if b'Length' in head else b''
    response = b'HTTP/1.1 200 OK\r\n' + head + b'\r\n\r\n' + body
    events = read(sent_protocol(), response, feed, eof=not chunked and b'Length' not in head)
    assert events[0][4] == fields


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('response, message', [
    (b'\x16\x03\x01\x02\x00\x01', 'illegal status line: it starts with'),
    (b'HTTP/1.1 200 OK\nContent-Length: 0\n\n', 'bare LF'),
    (CHUNKED_HEAD + b'0\r\n\n', 'bare LF'),
], ids=['tls_reply', 'head_ended_by_bare_lf', 'trailers_ended_by_bare_lf'])
def test_a_response_that_cannot_end_fails_before_eof(response, message, feed):
    # Else the fetch would wait for bytes that will never make it valid, until its timeout.
    with pytest.raises(HTTPInputError, match=message):
        read(sent_protocol(), response, feed)


# --- Content-Encoding ------------------------------------------------------------------------

ORIGINAL = b''.join(b'line %d of a compressible body\n' % i for i in range(500))
ENCODED = {
    'gzip': ('gzip', compress(ORIGINAL, 16 + zlib.MAX_WBITS)),
    'x_gzip': (' X-GZIP ', compress(ORIGINAL, 16 + zlib.MAX_WBITS)),
    'deflate_zlib': ('deflate', compress(ORIGINAL, zlib.MAX_WBITS)),
    'deflate_raw': ('deflate', compress(ORIGINAL, -zlib.MAX_WBITS)),
}


def decode(decoder, pieces):
    return b''.join(decoder.decompress(piece) for piece in pieces)


@pytest.mark.parametrize('feed', FEEDS)
@pytest.mark.parametrize('name', sorted(ENCODED))
def test_content_decoder_round_trip(name, feed):
    encoding, encoded = ENCODED[name]
    assert decode(ContentDecoder(encoding, len(ORIGINAL)), feed(encoded)) == ORIGINAL


@pytest.mark.parametrize('name', sorted(ENCODED))
def test_content_decoder_cap_is_exact(name):
    encoding, encoded = ENCODED[name]
    with pytest.raises(HTTPInputError, match='larger than max_size'):
        decode(ContentDecoder(encoding, len(ORIGINAL) - 1), [encoded])


def test_gzip_that_is_not_gzip():
    decoder = ContentDecoder('gzip', 1024)
    with pytest.raises(HTTPInputError, match=re.escape('Content-Encoding gzip: the body is not '
                                                       'valid gzip data')):
        decode(decoder, bytewise(b'<html>this is not gzip</html>'))


class MeasuredDecompressor(object):
    """Wraps a zlib decompressor and records the size of everything it inflates."""

    def __init__(self, decompressor, inflated_sizes):
        self._decompressor = decompressor
        self._inflated_sizes = inflated_sizes

    def decompress(self, data, max_length=0):
        inflated = self._decompressor.decompress(data, max_length)
        self._inflated_sizes.append(len(inflated))
        return inflated


@pytest.mark.parametrize('piece_size', [1024, 10 * 1024 * 1024])
def test_decompression_bomb_stops_at_the_cap(monkeypatch, piece_size):
    bomb = compress(b'\0' * (10 * 1024 * 1024), 16 + zlib.MAX_WBITS)
    assert len(bomb) < 20 * 1024
    inflated_sizes = []
    real_decompressobj = zlib.decompressobj
    monkeypatch.setattr(zlib, 'decompressobj', lambda wbits: MeasuredDecompressor(
        real_decompressobj(wbits), inflated_sizes))
    decoder = ContentDecoder('gzip', 1024 * 1024)
    with pytest.raises(HTTPInputError, match=r'larger than max_size \(1048576 bytes\)'):
        for start in range(0, len(bomb), piece_size):
            decoder.decompress(bomb[start:start + piece_size])
    # The bomb is caught without ever holding more than the cap and one byte in memory.
    assert sum(inflated_sizes) == 1024 * 1024 + 1


def test_unsupported_encoding():
    with pytest.raises(ValueError):
        ContentDecoder('br', 1024)


# --- url_concat ------------------------------------------------------------------------------

@pytest.mark.parametrize('url, args, expected', [
    ('http://e.com/p', {'a': 'b'}, 'http://e.com/p?a=b'),
    ('http://e.com/p?x=1', [('a', 'b'), ('a', 'c')], 'http://e.com/p?x=1&a=b&a=c'),
    ('http://e.com/p?x=&y=2#frag', (('a', 'b c'),), 'http://e.com/p?x=&y=2&a=b+c#frag'),
    ('http://e.com/p?x=1', None, 'http://e.com/p?x=1'),
])
def test_url_concat(url, args, expected):
    assert url_concat(url, args) == expected


def test_url_concat_rejects_other_types():
    with pytest.raises(TypeError):
        url_concat('http://e.com/', 'a=b')


# --- Differential: the same verdicts as h11 on generated responses --------------------------
# h11 is the library this parser replaced; it stays a test dependency as the reference.

try:
    import h11
except ImportError:  # the `test` extra is not installed
    h11 = None
needs_h11 = pytest.mark.skipif(h11 is None, reason='h11 (from the test extra) is not installed')
H11_VERSION = tuple(int(part) for part in h11.__version__.split('.')[:2]) if h11 else None

REJECTED = 'rejected'
# Where we reject what h11 accepts, on purpose. A generated case with one of these tags is
# expected to fail whatever h11 says.
STRICTER_THAN_H11 = {
    # RFC 9112 2.2 lets a recipient take a bare LF as a line end, or not. h11 0.11 did not,
    # 0.12+ does; we keep to CRLF, the same on every Python, as a smaller attack surface.
    'bare_lf': b'HTTP/1.1 200 OK\r\nContent-Length: 2\nX: y\r\n\r\nok',
    # The version's major digit says which framing the message uses: "HTTP/2.0" in a head
    # read by an HTTP/1.1 parser is not HTTP/1.x. h11 takes any digit.
    'http_major_version': b'HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok',
    # RFC 9112 6.3: both framings at once is a sign of response smuggling, to be treated as
    # an error; h11 lets chunked win.
    'length_and_chunked': (b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'
                           b'Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'),
    # RFC 9112 7.1.1 allows tokens and quoted strings there; a lone CR inside an extension
    # is how other parsers were smuggled through. h11 takes any byte but LF.
    'chunk_ext_control': CHUNKED_HEAD + b'2;a\rb\r\nok\r\n0\r\n\r\n',
    # RFC 9110 15: status codes run from 100 to 599. h11 0.11 agreed; 0.16 takes up to 999.
    'status_code_over_599': b'HTTP/1.1 600 Beyond\r\nContent-Length: 2\r\n\r\nok',
}
# h11 0.11 (the last for 2.7) predates these checks, which 0.16 makes and we follow:
# CRLF after chunk data, whitespace after a chunk size, at most 20 Content-Length digits.
H11_0_16_RULES = frozenset(['chunk_footer', 'chunk_size_whitespace', 'long_content_length'])


def h11_outcome(method, data):
    """h11's verdict on `data` as the response to `method`: REJECTED, or the events (body
    joined), whether the connection could carry another request, whether bytes were left."""
    connection = h11.Connection(h11.CLIENT, max_incomplete_event_size=65536)
    connection.send(h11.Request(method=method, target='/', headers=[('Host', 'example.com')]))
    connection.send(h11.EndOfMessage())
    connection.receive_data(data)
    events = []
    try:
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(b'')
            elif isinstance(event, h11.EndOfMessage):
                events.append(('EndOfMessage', h11_pairs(event.headers)))
                trailing, closed = connection.trailing_data
                reusable = connection.our_state is connection.their_state is h11.DONE
                return join_described(events), reusable and not closed, bool(trailing)
            elif isinstance(event, h11.Data):
                events.append(('BodyData', bytes(event.data)))
            else:
                kind = ('ResponseHead' if isinstance(event, h11.Response)
                        else 'InformationalResponse')
                events.append((kind, 'HTTP/' + native_str(event.http_version),
                               event.status_code, native_str(event.reason),
                               h11_pairs(event.headers)))
    except h11.RemoteProtocolError:
        return REJECTED


def expected_outcome(method, data, tags):
    """h11's outcome, but REJECTED where we are stricter on purpose."""
    expected = h11_outcome(method, data)
    if tags & set(STRICTER_THAN_H11) or expected != REJECTED and any(
            event[0] == 'ResponseHead' and
            set(name for name, _ in event[4]) >= {'Content-Length', 'Transfer-Encoding'}
            for event in expected[0]):  # (both framings can also come from a spliced cut)
        return REJECTED
    return expected


def h11_pairs(pairs):
    """h11's (name, value) pairs as HTTPHeaders gives them: names normalized, grouped."""
    headers = HTTPHeaders()
    for name, value in pairs:
        headers.add(native_str(name), native_str(value))
    return list(headers.get_all())


def our_outcome(method, pieces):
    """Our verdict, in h11_outcome's form, on the response fed in `pieces`, then EOF."""
    protocol = sent_protocol(method)
    events = []
    try:
        for piece in pieces:
            protocol.receive_data(piece)
            events.extend(drain(protocol))
        if not events or events[-1].__class__ is not EndOfMessage:
            protocol.receive_data(b'')
            events.extend(drain(protocol))
    except HTTPInputError:
        return REJECTED
    assert events[-1].__class__ is EndOfMessage  # never NEED_DATA after EOF
    return join_body(events), protocol.reusable, protocol.has_extra_data


def random_split(rng, data):
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 4))) if data else []
    return [data[start:end] for start, end in zip([0] + cuts, cuts + [len(data)])]


class ResponseMaker(object):
    """Generates responses, valid or broken in random ways, each with the tags of the
    deliberate differences (and newer h11 rules) that apply to it."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def pick(self, usual, unusual, rate):
        """`usual` mostly; else one of the (bytes, tag or None) pairs in `unusual`."""
        if self.rng.random() >= rate:
            return usual
        value, tag = self.rng.choice(unusual)
        if tag is not None:
            self.tags.add(tag)
        return value

    def case(self):
        """(method, response bytes, tags)."""
        self.tags = set()
        rng = self.rng
        method = rng.choice(['GET', 'GET', 'GET', 'HEAD'])
        code = self.status_code()
        # Framing damage after the head counts only where the body is read.
        self.reads_body = method != 'HEAD' and code[:1] != b'1' and code not in (b'204', b'304')
        body = bytes(bytearray(rng.randrange(256) for _ in range(rng.randrange(40))))
        fields, body = self.framing(body)
        fields += rng.sample(OTHER_FIELDS, rng.randrange(len(OTHER_FIELDS)))
        rng.shuffle(fields)
        data = (self.pick(b'', INTERIM_HEADS, 0.15) + self.status_line(code) +
                b''.join(self.field_line(name, value) for name, value in fields) + b'\r\n' +
                body)
        if rng.random() < 0.1:
            data = data[:rng.randrange(len(data))]
        if rng.random() < 0.15:
            data += rng.choice([SECOND_RESPONSE, b'junk', b'\r\n'])
        return method, data, self.tags

    def status_code(self):
        usual = self.rng.choice([b'200', b'200', b'404', b'301', b'204', b'304'])
        return self.pick(usual, [(b'099', None), (b'000', None), (b'999', 'status_code_over_599'),
                                 (b'600', 'status_code_over_599'), (b'1000', None),
                                 (b'20', None), (b'2x0', None), (b'150', None), (b'101', None)],
                         0.06)

    def status_line(self, code):
        version = self.pick(b'HTTP/1.1', [
            (b'HTTP/1.0', None), (b'HTTP/1.2', None), (b'HTTP/2.0', 'http_major_version'),
            (b'HTTP/0.9', 'http_major_version'), (b'http/1.1', None), (b'HTTP/1', None),
            (b'HTTP/1.1 ', None), (b'', None)], 0.1)
        reason = self.pick(b' OK', [
            (b'', None), (b' ', None), (b'  OK', None), (b' caf\xe9', None), (b' a\tb', None),
            (b' x\x00y', None), (b' x\ry', None), (b' x\x0by', None), (b' x\x7f\x01y', None),
            (b' OK ', None), (b'\tOK', None), (b' x\ny', 'bare_lf')], 0.1)
        return version + b' ' + code + reason + b'\r\n'

    def field_line(self, name, value):
        name = self.pick(name, [(b'Bad Name', None), (name + b' ', None), (b'', None),
                                (b'X\x00', None), (b'\xc4', None), (b'x(y)', None),
                                (b' ' + name, None)], 0.02)
        separator = self.rng.choice([b': ', b': ', b':', b':  ', b':\t'])
        value = self.pick(value, [
            (value + b'\x00', None), (value + b'\x01', None), (b'\x7f' + value, None),
            (value + b'\x0b', None), (value + b'\x0c', None), (value + b'\xff', None),
            (b'', None), (value + b'\ry', None), (value + b'\ny', 'bare_lf'),
            (value + b' \t', None), (b'a \t b', None)], 0.03)
        end = self.pick(b'\r\n', [(b'\n', 'bare_lf'), (b'\r\n  folded\r\n', None),
                                  (b' \r\n\tfolded more \r\n', None), (b'\r\r\n', None)], 0.02)
        return name + separator + value + end

    def framing(self, body):
        """The framing fields and the body as sent."""
        rng = self.rng
        kind = rng.choice(['length', 'length', 'chunked', 'chunked', 'close'])
        if kind == 'close':
            return [], body
        if kind == 'length':
            fields = [(b'Content-Length', self.content_length(len(body)))]
        else:
            coding = self.pick(b'chunked', [(b'Chunked', None), (b'CHUNKED', None),
                                            (b'gzip', None), (b'gzip, chunked', None),
                                            (b'chunked, chunked', None)], 0.1)
            fields = [(b'Transfer-Encoding', coding)]
            fields += self.pick([], [([(b'Transfer-Encoding', b'chunked')], None),
                                     ([(b'Content-Length', b'5')], 'length_and_chunked')], 0.12)
            body = self.chunked(body)
        fields += self.pick([], [([(b'Connection', value)], None) for value in (
            b'close', b'keep-alive', b'Close', b'close, foo', b'closed', b'x\x1cclose')], 0.25)
        return fields, body

    def content_length(self, size):
        text = str(size).encode('ascii')
        return self.pick(text, [
            (str(size + 1).encode('ascii'), None), (str(max(0, size - 1)).encode('ascii'), None),
            (text + b', ' + text, None), (text + b',' + text + b'0', None), (b'+' + text, None),
            (b'-1', None), (b'0x' + text, None), (b'', None), (b'0' + text, None),
            (b'0' * 20 + text, 'long_content_length'), (b'0' * 20 + text, 'long_content_length'),
            (b'abc', None)], 0.2)

    def chunked(self, body):
        rng = self.rng
        cuts = sorted([rng.randint(0, len(body)), rng.randint(0, len(body))])
        pieces = [piece for piece in (body[:cuts[0]], body[cuts[0]:cuts[1]], body[cuts[1]:])
                  if piece]
        encoded = b''.join(self.chunk_line(len(piece)) + piece +
                           self.body_pick(b'\r\n', [(b'XX', 'chunk_footer'),
                                                    (b'\n', 'chunk_footer')], 0.04)
                           for piece in pieces)
        return encoded + self.chunk_line(0) + self.body_pick(b'\r\n', [
            (b'X-T: v\r\n\r\n', None), (b'X-T: v\r\n  folded\r\n\r\n', None),
            (b'Bad Name: v\r\n\r\n', None), (b'Content-Length: abc\r\n\r\n', None),
            (b'Transfer-Encoding: gzip\r\n\r\n', None), (b'X-T: v\n\r\n', 'bare_lf'),
            (b'\n', 'bare_lf'), (b' X: v\r\n\r\n', None)], 0.2)

    def chunk_line(self, size):
        text = self.rng.choice(['%x', '%X', '%03x']) % size
        text = self.body_pick(text.encode('ascii'), [
            (text.encode('ascii') + b';a=b', None), (text.encode('ascii') + b';a="x y"', None),
            (text.encode('ascii') + b' ', 'chunk_size_whitespace'),
            (text.encode('ascii') + b';a\x01', 'chunk_ext_control'),
            (text.encode('ascii') + b';a\rb', 'chunk_ext_control'),
            (text.encode('ascii') + b';\x00', 'chunk_ext_control'), (b'zz', None),
            (b'-1', None), (b'0x' + text.encode('ascii'), None), (b' 1', None),
            (b'0' * 20 + text.encode('ascii'), None),
            (('%x' % (size + 1)).encode('ascii'), 'chunk_footer')], 0.1)
        return text + b'\r\n'

    def body_pick(self, usual, unusual, rate):
        # A tag counts only if the parsers read the body; else the damage is never seen.
        tags = set(self.tags)
        value = self.pick(usual, unusual, rate)
        if not self.reads_body:
            self.tags = tags
        return value


INTERIM_HEADS = [(b'HTTP/1.1 100 Continue\r\n\r\n', None),
                 (b'HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n', None),
                 (b'HTTP/1.1 101 Switching Protocols\r\n\r\n', None)]
OTHER_FIELDS = [(b'Server', b'nginx/1.18.0'), (b'Date', b'Tue, 14 May 2024 12:00:00 GMT'),
                (b'Content-Type', b'text/html; charset=utf-8'), (b'ETag', b'"66434d-1800"'),
                (b'Set-Cookie', b'a=1; Path=/'), (b'set-cookie', b'b=2'), (b'x-custom', b'v'),
                (b'Accept-Ranges', b'bytes'), (b'Vary', b'Accept-Encoding')]


@needs_h11
def test_same_verdicts_as_h11_on_generated_responses():
    maker = ResponseMaker(seed=8)
    verdicts = collections.Counter()
    for _ in range(1000):
        method, data, tags = maker.case()
        if tags & H11_0_16_RULES and H11_VERSION < (0, 16):
            continue
        expected = expected_outcome(method, data, tags)
        for feed in (whole, bytewise, lambda data: random_split(maker.rng, data)):
            assert our_outcome(method, feed(data)) == expected, (method, data, tags)
        verdicts[expected == REJECTED] += 1
        verdicts.update(tags)
    # The generator keeps a balance, and makes every deliberate difference several times.
    assert verdicts[True] > 300 and verdicts[False] > 300, verdicts
    assert all(verdicts[tag] >= 5 for tag in STRICTER_THAN_H11), verdicts


@needs_h11
@pytest.mark.parametrize('name', sorted(STRICTER_THAN_H11))
def test_stricter_than_h11(name):
    data = STRICTER_THAN_H11[name]
    assert our_outcome('GET', whole(data)) == REJECTED
    if H11_VERSION >= (0, 16) or name not in ('bare_lf', 'status_code_over_599'):
        assert h11_outcome('GET', data) != REJECTED


REQUEST_VARIANTS = {
    'method': ['GET', 'POST', 'PURGE', 'G T', '', 'GET\r', 'G\xe9T'],
    'target': ['/', '/a?b=c&d', '/a b', '', '/\x7f', '/caf\xe9', '/\x01'],
    'name': ['X-Name', 'X Name', '', 'X:', 'X\x00', 'X\xe9', "!#$%&'*+-.^_`|~"],
    'value': ['v', ' v', 'v\t', 'a  \tb', 'a\x01b', 'a\x00b', 'a\rb', 'a\nb', '', '\xe9',
              'a\x0bb', 'a\x7f'],
    'hosts': [['h'], [], ['h', 'h']],
    'length': [None, '5', '5, 5', '5,6', 'abc', '', '0' * 15 + '5', '0' * 25 + '5', '4'],
}


@needs_h11
def test_same_request_checks_as_h11():
    """Every variant of one part of a valid request is refused by both, or by neither."""
    for part, variants in sorted(REQUEST_VARIANTS.items()):
        for variant in variants:
            request = {'method': 'POST', 'target': '/', 'name': 'X-Name', 'value': 'v',
                       'hosts': ['h'], 'length': '5'}
            request[part] = variant
            fields = [('Host', host) for host in request['hosts']] + [
                (request['name'], request['value'])]
            if request['length'] is not None:
                fields.append(('Content-Length', request['length']))
            if H11_VERSION < (0, 16) and (part == 'method' or variant == '0' * 25 + '5'):
                continue  # 0.11 checks neither methods nor the count of digits
            assert (our_request_verdict(request['method'], request['target'], fields) ==
                    h11_request_verdict(request['method'], request['target'], fields)), (
                part, variant)


def our_request_verdict(method, target, fields):
    headers = HTTPHeaders()
    for name, value in fields:
        headers.add(name, value)
    try:
        HTTP1ClientProtocol().send_request(method, target, headers, b'hello')
    except ValueError:
        return REJECTED
    return 'sent'


def h11_request_verdict(method, target, fields):
    if 'Content-Length' not in [name for name, _ in fields]:
        fields = fields + [('Content-Length', '5')]  # as send_request adds it
    connection = h11.Connection(h11.CLIENT)
    wire = dict((text, text.encode('latin-1') if isinstance(text, type(u'')) else text)
                for text in [method, target] + [text for field in fields for text in field])
    try:
        connection.send(h11.Request(method=wire[method], target=wire[target],
                                    headers=[(wire[name], wire[value]) for name, value in fields]))
        connection.send(h11.Data(data=b'hello'))
        connection.send(h11.EndOfMessage())
    except h11.LocalProtocolError:
        return REJECTED
    return 'sent'
