"""Tornado 5.1's httputil helpers: qs_to_qsl, format_timestamp, parse_cookie,
encode_username_password and the start-line parsers, with the inputs Tornado's own tests
and browsers give them."""
from __future__ import absolute_import, division, print_function

import datetime
import time

import pytest
from six.moves.urllib.parse import parse_qs

from tinytornado import httpclient
from tinytornado.httputil import (
    HTTPInputError, RequestStartLine, ResponseStartLine, encode_username_password,
    format_timestamp, parse_cookie, parse_request_start_line, parse_response_start_line,
    qs_to_qsl, responses,
)

# --- qs_to_qsl -------------------------------------------------------------------------------


def test_qs_to_qsl_gives_back_every_pair():
    pairs = list(qs_to_qsl(parse_qs('a=1&b=2&a=3')))
    assert sorted(pairs) == [('a', '1'), ('a', '3'), ('b', '2')]
    assert pairs.index(('a', '1')) < pairs.index(('a', '3'))


def test_qs_to_qsl_of_nothing():
    assert list(qs_to_qsl({})) == [] and list(qs_to_qsl({'a': []})) == []


# --- format_timestamp ------------------------------------------------------------------------

TIMESTAMP = 1359312200.503611
HTTP_DATE = 'Sun, 27 Jan 2013 18:43:20 GMT'


class UTCMinus4(datetime.tzinfo):
    def utcoffset(self, when):
        return datetime.timedelta(hours=-4)

    def dst(self, when):
        return datetime.timedelta(0)


@pytest.mark.parametrize('value', [
    TIMESTAMP,
    int(TIMESTAMP),
    time.gmtime(TIMESTAMP),
    tuple(time.gmtime(TIMESTAMP)),
    datetime.datetime(2013, 1, 27, 18, 43, 20, 503611),
    datetime.datetime(2013, 1, 27, 14, 43, 20, tzinfo=UTCMinus4()),
], ids=['float', 'int', 'struct_time', 'tuple', 'naive-utc-datetime', 'aware-datetime'])
def test_format_timestamp_takes_every_kind_of_time(value):
    assert format_timestamp(value) == HTTP_DATE


@pytest.mark.parametrize('value', ['2013-01-27', None, datetime.date(2013, 1, 27)])
def test_format_timestamp_refuses_other_types(value):
    with pytest.raises(TypeError) as caught:
        format_timestamp(value)
    assert 'unknown timestamp type' in str(caught.value)


def test_if_modified_since_is_formatted_by_format_timestamp():
    request = httpclient.HTTPRequest('http://example.com/',
                                     if_modified_since=time.gmtime(TIMESTAMP))
    assert request.headers['If-Modified-Since'] == HTTP_DATE


def test_responses_maps_codes_to_reasons():
    assert responses[404] == 'Not Found' and responses[200] == 'OK'


# --- parse_cookie ----------------------------------------------------------------------------

@pytest.mark.parametrize('header, expected', [
    ('chips=ahoy; vienna=finger', {'chips': 'ahoy', 'vienna': 'finger'}),
    # Every ';' separates, even inside quotes; '"' alone is a value with no name.
    ('keebler="E=mc2; L=\\"Loves\\"; fudge=\\012;"',
     {'keebler': '"E=mc2', 'L': '\\"Loves\\"', 'fudge': '\\012', '': '"'}),
    ('keebler=E=mc2', {'keebler': 'E=mc2'}),
    ('key:term=value:term', {'key:term': 'value:term'}),
    ('a=b; c=[; d=r; f=h', {'a': 'b', 'c': '[', 'd': 'r', 'f': 'h'}),
    ('a=b; Domain=example.com', {'a': 'b', 'Domain': 'example.com'}),
    ('a=b; h=i; a=c', {'a': 'c', 'h': 'i'}),
    ('abc=def; unnamed; django_language=en',
     {'abc': 'def', '': 'unnamed', 'django_language': 'en'}),
    ('a=b; "; c=d', {'a': 'b', '': '"', 'c': 'd'}),
    ('a b c=d e = f; gh=i', {'a b c': 'd e = f', 'gh': 'i'}),
    ('a   b,c<>@:/[]?{}=d  "  =e,f g', {'a   b,c<>@:/[]?{}': 'd  "  =e,f g'}),
    ('  =  b  ;  ;  =  ;   c  =  ;  ', {'': 'b', 'c': ''}),
    ('', {}),
])
def test_parse_cookie_as_browsers_send_them(header, expected):
    assert parse_cookie(header) == expected


@pytest.mark.parametrize('value, expected', [
    ('"plain"', 'plain'),
    ('"a\\"b"', 'a"b'),
    ('"a\\\\b"', 'a\\b'),
    ('"line\\012break"', 'line\nbreak'),
    ('"\\0123"', '\n3'),  # three octal digits at most
    ('"\\8"', '8'),  # not octal: the backslash just escapes the character
    ('"\\477"', '477'),  # octal escapes start with 0-3
    ('"unfinished', '"unfinished'),
    ('"', '"'),
    ('""', ''),
])
def test_parse_cookie_unquotes_quoted_values(value, expected):
    assert parse_cookie('n=' + value) == {'n': expected}


def test_parse_cookie_keeps_non_ascii_text():
    assert parse_cookie(u'saint=Andr\xe9 Bessette') == {u'saint': u'Andr\xe9 Bessette'}


# --- encode_username_password --------------------------------------------------------------

@pytest.mark.parametrize('username, password, expected', [
    (u'user', u'secret', b'user:secret'),
    (u'test', u'123\xa3', b'test:123\xc2\xa3'),
    # RFC 7617 2.1: text is NFC-normalized, so a combining accent becomes precomposed.
    (u'jose\u0301', u's\u0259cr\u0259t', b'jos\xc3\xa9:s\xc9\x99cr\xc9\x99t'),
    (u'', u'', b':'),
])
def test_encode_username_password_normalizes_text_to_utf8(username, password, expected):
    assert encode_username_password(username, password) == expected


def test_encode_username_password_takes_bytes_as_they_are():
    assert encode_username_password(b'jose\xcc\x81', b'\xff') == b'jose\xcc\x81:\xff'
    assert encode_username_password(b'jose\xcc\x81', u'jose\u0301') == (
        b'jose\xcc\x81:jos\xc3\xa9')


# --- start lines -----------------------------------------------------------------------------

def test_parse_request_start_line():
    parsed = parse_request_start_line('GET /foo?a=b HTTP/1.1')
    assert parsed == RequestStartLine('GET', '/foo?a=b', 'HTTP/1.1')
    assert (parsed.method, parsed.path, parsed.version) == ('GET', '/foo?a=b', 'HTTP/1.1')


@pytest.mark.parametrize('line, expected', [
    ('HTTP/1.1 200 OK', ('HTTP/1.1', 200, 'OK')),
    ('HTTP/1.0 404 Not Found', ('HTTP/1.0', 404, 'Not Found')),
    ('HTTP/1.1 301', ('HTTP/1.1', 301, '')),
    ('HTTP/1.1 500 Internal Server Error\r\n', ('HTTP/1.1', 500, 'Internal Server Error')),
    (b'HTTP/1.1 200 OK', ('HTTP/1.1', 200, 'OK')),
])
def test_parse_response_start_line(line, expected):
    parsed = parse_response_start_line(line)
    assert parsed == ResponseStartLine(*expected)
    assert (parsed.version, parsed.code, parsed.reason) == expected


BAD_REQUEST_LINES = [
    'GET /foo', 'GET /foo HTTP/1.1 extra', 'GET /a b HTTP/1.1', 'GET  /foo HTTP/1.1',
    'GET /foo HTTP/2.0', 'GET /foo HTTP/1.10', 'GET /foo http/1.1', '',
]
BAD_STATUS_LINES = [
    'HTTP/2 200 OK', 'HTTP/1.1 20 OK', 'HTTP/1.1 2000 OK', 'http/1.1 200 OK',
    'HTTP/1.1 200 O\x00K', 'HTTP/1.1 200 OK\r\nServer: x', 'HTTP/1.1 200 OK\n', '',
]


@pytest.mark.parametrize('parse, line', (
    [(parse_request_start_line, line) for line in BAD_REQUEST_LINES] +
    [(parse_response_start_line, line) for line in BAD_STATUS_LINES]))
def test_malformed_start_lines_are_refused_saying_so(parse, line):
    with pytest.raises(HTTPInputError) as caught:
        parse(line)
    assert str(caught.value).startswith('malformed HTTP ') and repr(line) in str(caught.value)
