from __future__ import absolute_import, division, print_function

import copy
import re
import zlib

import pytest

from tinytornado.httputil import (
    NEED_DATA, PAUSED, BodyData, ConnectionClosed, ContentDecoder, EndOfMessage,
    HTTP1ClientProtocol, HTTPHeaders, HTTPInputError, InformationalResponse,
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
    joined = []
    for event in map(describe, events):
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


@pytest.mark.parametrize('method, target, headers, body', [
    ('GET', '/', {}, None),
    ('GET', '/', {'Host': 'h', 'X-Evil': 'x\r\nInjected: 1'}, None),
    ('GET', '/', {'Host': u'\u2603.example'}, None),
    ('GET', '/a b', HOST, None),
    ('POST', '/', {'Host': 'h', 'Transfer-Encoding': 'chunked'}, b'x'),
    ('POST', '/', {'Host': 'h', 'Content-Length': '10'}, b'short'),
    ('GET', '/', {'Host': 'h', 'Upgrade': 'websocket', 'Connection': 'Upgrade'}, None),
    ('CONNECT', 'example.com:443', HOST, None),
], ids=['no_host', 'header_injection', 'not_latin1', 'space_in_target',
        'transfer_encoding', 'body_shorter_than_length', 'upgrade', 'connect'])
def test_invalid_requests_raise_value_error(method, target, headers, body):
    with pytest.raises(ValueError):
        HTTP1ClientProtocol().send_request(method, target, headers, body)


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
        'conflicting Content-Length'),
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
