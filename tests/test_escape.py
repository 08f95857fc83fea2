# -*- coding: utf-8 -*-
"""tinytornado.escape: Tornado 5.1's conversions and escapes, with the edge cases legacy code
and Tornado's own tests rely on (types in and out, invalid input, pathological URLs)."""
from __future__ import absolute_import, division, print_function

import collections
import json

import pytest

from tinytornado import escape
from tinytornado._compat import PY2
from tinytornado.escape import (
    json_decode, json_encode, linkify, native_str, parse_qs_bytes, recursive_unicode, squeeze,
    to_basestring, to_unicode, url_escape, url_unescape, utf8, xhtml_escape, xhtml_unescape,
)

CAFE_TEXT = u'caf\u00e9'
CAFE_UTF8 = b'caf\xc3\xa9'


# --- utf8, to_unicode, native_str, to_basestring -----------------------------------------

def test_utf8_encodes_text_and_passes_bytes_and_none_through():
    assert utf8(CAFE_TEXT) == CAFE_UTF8
    latin1 = b'caf\xe9'
    assert utf8(latin1) is latin1
    assert utf8(None) is None


def test_to_unicode_decodes_bytes_and_passes_text_and_none_through():
    assert to_unicode(CAFE_UTF8) == CAFE_TEXT
    assert to_unicode(CAFE_TEXT) is CAFE_TEXT
    assert to_unicode(None) is None
    assert escape._unicode is to_unicode  # the old name legacy code imports


def test_to_unicode_refuses_bytes_that_are_not_utf8():
    with pytest.raises(UnicodeDecodeError):
        to_unicode(b'caf\xe9')


@pytest.mark.parametrize('convert', [utf8, to_unicode, native_str, to_basestring])
@pytest.mark.parametrize('value', [42, bytearray(b'x'), [u'x'], 1.5])
def test_conversions_refuse_what_is_not_a_string(convert, value):
    with pytest.raises(TypeError) as caught:
        convert(value)
    assert type(value).__name__ in str(caught.value)


@pytest.mark.parametrize('value', [CAFE_TEXT, CAFE_UTF8])
def test_native_str_gives_the_native_str_by_utf8(value):
    result = native_str(value)
    assert type(result) is str
    assert result == (CAFE_UTF8 if PY2 else CAFE_TEXT)
    assert native_str(None) is None


def test_to_basestring_decodes_bytes_only_where_they_do_not_mix_with_text():
    assert to_basestring(CAFE_TEXT) is CAFE_TEXT
    assert to_basestring(None) is None
    if PY2:
        assert to_basestring(CAFE_UTF8) is CAFE_UTF8
    else:
        assert to_basestring(CAFE_UTF8) == CAFE_TEXT


def test_recursive_unicode_decodes_bytes_inside_containers_only():
    Pair = collections.namedtuple('Pair', 'left right')
    data = {b'k': [b'a', (b'b', 1, None), {b'n': Pair(b'l', b'r')}], u'\u00e9': 2.5}
    assert recursive_unicode(data) == {
        u'k': [u'a', (u'b', 1, None), {u'n': (u'l', u'r')}], u'\u00e9': 2.5}
    decoded = recursive_unicode(data)[u'k']
    assert [type(decoded[1]), type(decoded[2][u'n'])] == [tuple, tuple]
    assert recursive_unicode(CAFE_UTF8) == CAFE_TEXT
    assert recursive_unicode(7) == 7


def test_squeeze_makes_runs_of_whitespace_and_control_characters_one_space():
    assert squeeze(u'  a \t\r\n b\x00\x01c   d  ') == u'a b c d'
    assert squeeze(u'single') == u'single'
    assert squeeze(u' \n ') == u''


# --- JSON ----------------------------------------------------------------------------------

def test_json_encode_escapes_closing_tags_and_stays_valid_json():
    value = {u'html': u'</script><script>alert(1)</script>', u'n': [1, 2.5, None, True]}
    encoded = json_encode(value)
    assert '</' not in encoded
    assert '<\\/script>' in encoded
    assert json.loads(encoded) == value
    assert json_decode(encoded) == value


def test_json_encode_writes_non_ascii_as_escapes():
    assert json_encode(u'\u00e9\u4e2d') == '"\\u00e9\\u4e2d"'


def test_json_encode_refuses_what_json_cannot_hold():
    with pytest.raises(TypeError):
        json_encode(object())


@pytest.mark.parametrize('value', [b'{"a": "caf\xc3\xa9"}', u'{"a": "caf\u00e9"}'])
def test_json_decode_takes_utf8_bytes_or_text_and_gives_text(value):
    decoded = json_decode(value)
    assert decoded == {u'a': CAFE_TEXT}
    assert [type(key) for key in decoded] == [type(u'')]


def test_json_decode_refuses_what_is_not_json():
    with pytest.raises(ValueError):
        json_decode(b'{"a": ')


# --- URLs ----------------------------------------------------------------------------------

@pytest.mark.parametrize('value, plus, expected', [
    (u'a b+c', True, 'a+b%2Bc'),
    (u'a b+c', False, 'a%20b%2Bc'),
    (u'/path/x?y=z&w#f%', True, '%2Fpath%2Fx%3Fy%3Dz%26w%23f%25'),
    (u'/path/x?y', False, '/path/x%3Fy'),  # a path keeps its slashes
    (CAFE_TEXT, True, 'caf%C3%A9'),  # text is taken as UTF-8
    (CAFE_UTF8, True, 'caf%C3%A9'),
    (b'caf\xe9', True, 'caf%E9'),  # bytes are escaped as they are
    (u'', True, ''),
])
def test_url_escape(value, plus, expected):
    escaped = url_escape(value, plus=plus)
    assert (escaped, type(escaped)) == (expected, str)


@pytest.mark.parametrize('value, plus, expected', [
    ('a+b%2Bc%20d', True, u'a b+c d'),
    ('a+b%2Bc%20d', False, u'a+b+c d'),
    ('caf%C3%A9', True, CAFE_TEXT),
    ('%2Fx%3F%3D%26', True, u'/x?=&'),
    ('100%', True, u'100%'),  # a lone % is kept, as urllib keeps it
    ('%zz', True, u'%zz'),
])
def test_url_unescape_to_text(value, plus, expected):
    assert url_unescape(value, plus=plus) == expected
    assert url_unescape(utf8(value), plus=plus) == expected


def test_url_unescape_decodes_with_the_encoding_given():
    assert url_unescape('caf%C3%A9', encoding='latin-1') == u'caf\u00c3\u00a9'
    assert url_unescape('caf%E9', encoding='latin-1') == CAFE_TEXT


def test_url_unescape_replaces_what_the_encoding_cannot_decode():
    assert url_unescape('caf%E9') == u'caf\ufffd'


@pytest.mark.parametrize('plus, expected', [(True, b'a b+caf\xe9'), (False, b'a+b+caf\xe9')])
def test_url_unescape_without_an_encoding_gives_the_bytes(plus, expected):
    assert url_unescape('a+b%2Bcaf%E9', encoding=None, plus=plus) == expected
    assert url_unescape(b'a+b%2Bcaf%E9', encoding=None, plus=plus) == expected


@pytest.mark.parametrize('plus', [True, False])
@pytest.mark.parametrize('value', [
    u'plain', u'a b+c', u'100% & more', u'/a/b?c=d#e', u'\u00e9\u4e2d\U0001f600', u'~-._*'])
def test_url_escape_and_unescape_round_trip(value, plus):
    assert url_unescape(url_escape(value, plus=plus), plus=plus) == value
    assert url_unescape(url_escape(value, plus=plus), encoding=None, plus=plus) == utf8(value)


def test_parse_qs_bytes_gives_native_names_and_the_exact_bytes_of_values():
    parsed = parse_qs_bytes('a=1&b=caf%C3%A9&a=x+y%20z&c=%E9%FF&d=%2B')
    assert parsed == {'a': [b'1', b'x y z'], 'b': [CAFE_UTF8], 'c': [b'\xe9\xff'],
                      'd': [b'+']}
    assert set(type(name) for name in parsed) == set([str])


def test_parse_qs_bytes_decodes_names_as_latin1():
    parsed = parse_qs_bytes(b'caf%E9=1')
    assert parsed == {(b'caf\xe9' if PY2 else u'caf\u00e9'): [b'1']}


@pytest.mark.parametrize('qs', [b'a=1&b=2', u'a=1&b=2'])
def test_parse_qs_bytes_takes_bytes_or_text(qs):
    assert parse_qs_bytes(qs) == {'a': [b'1'], 'b': [b'2']}


def test_parse_qs_bytes_splits_on_ampersands_only():
    assert parse_qs_bytes('a=1;b=2&c=3') == {'a': [b'1;b=2'], 'c': [b'3']}


def test_parse_qs_bytes_drops_blank_values_unless_asked():
    qs = 'a=&b&&c=1&=2'
    assert parse_qs_bytes(qs) == {'c': [b'1'], '': [b'2']}
    assert parse_qs_bytes(qs, keep_blank_values=True) == {
        'a': [b''], 'b': [b''], 'c': [b'1'], '': [b'2']}


@pytest.mark.parametrize('qs', ['a=1&b', 'a=1&&c=2'])
def test_parse_qs_bytes_strict_parsing_refuses_a_field_without_equals(qs):
    with pytest.raises(ValueError) as caught:
        parse_qs_bytes(qs, strict_parsing=True)
    assert 'bad query field' in str(caught.value)
    assert parse_qs_bytes('a=1&b=', strict_parsing=True) == {'a': [b'1']}


# --- HTML ----------------------------------------------------------------------------------

def test_xhtml_escape_escapes_the_five_special_characters():
    assert xhtml_escape(u'<a href="x" title=\'y\'>&amp;</a>') == (
        u'&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;')
    assert xhtml_escape(u'caf\u00e9 plain') == u'caf\u00e9 plain'


def test_xhtml_escape_keeps_the_string_type_where_the_python_mixes_them():
    assert type(xhtml_escape(u'<x>')) is type(u'')
    escaped = xhtml_escape(b'<caf\xc3\xa9>')
    assert escaped == (b'&lt;caf\xc3\xa9&gt;' if PY2 else u'&lt;caf\u00e9&gt;')
    assert type(escaped) is str


@pytest.mark.parametrize('escaped, expected', [
    (u'&lt;&gt;&amp;&quot;&#39;', u'<>&"\''),
    (u'&eacute;&copy;&nbsp;&euro;', u'\u00e9\u00a9\u00a0\u20ac'),
    (u'a&#32;b&#x20;c&#X20;d', u'a b c d'),
    (u'&#xabc;&#128512;', u'\u0abc\U0001f600'),
    (u'&amp;amp;', u'&amp;'),  # one level of escaping at a time
    (u'&nosuchname; &apos; &AMP;', u'&nosuchname; &apos; &AMP;'),  # not HTML 4 names
    (u'&#xyz; &#; &#x; &#12a;', u'&#xyz; &#; &#x; &#12a;'),  # not numbers
    (u'&#1114112; &#99999999999999999999;', u'&#1114112; &#99999999999999999999;'),
    (u'&lt &amp no semicolon', u'&lt &amp no semicolon'),
    (b'&lt;caf\xc3\xa9&gt;', u'<caf\u00e9>'),  # bytes are UTF-8
])
def test_xhtml_unescape(escaped, expected):
    unescaped = xhtml_unescape(escaped)
    assert (unescaped, type(unescaped)) == (expected, type(u''))


@pytest.mark.parametrize('text', [u'<p class="x">Tom & Jerry\'s</p>', u'&amp; &#39;', u''])
def test_xhtml_escape_and_unescape_round_trip(text):
    assert xhtml_unescape(xhtml_escape(text)) == text


def link(href, text=None, params=''):
    return u'<a href="%s"%s>%s</a>' % (href, params, href if text is None else text)


@pytest.mark.parametrize('text, expected', [
    (u'see http://example.com/a.', u'see %s.' % link(u'http://example.com/a')),
    (u'https://example.com/x/, and', link(u'https://example.com/x/') + u', and'),
    (u'Go to www.example.org/x, now',
     u'Go to %s, now' % link(u'http://www.example.org/x', u'www.example.org/x')),
    (u'(see http://en.wikipedia.org/wiki/Foo_(bar))',
     u'(see %s)' % link(u'http://en.wikipedia.org/wiki/Foo_(bar)')),
    (u'http://x.com/?a=1&b=2!', link(u'http://x.com/?a=1&amp;b=2') + u'!'),
    (u'<b>http://a.com</b>', u'&lt;b&gt;%s&lt;/b&gt;' % link(u'http://a.com')),
    (u'http://user:pw@host.com:8080/p', link(u'http://user:pw@host.com:8080/p')),
    (u'go http://\u4f8b\u3048.jp/\u30d1\u30b9 now', u'go %s now' % link(
        u'http://\u4f8b\u3048.jp/\u30d1\u30b9')),
    (b'bytes http://a.com', u'bytes ' + link(u'http://a.com')),
    (u'no links, not even javascript:alert(1) or a@b.com',
     u'no links, not even javascript:alert(1) or a@b.com'),
    (u'ftp://files.example.com/f and file:///etc/passwd',
     u'ftp://files.example.com/f and file:///etc/passwd'),
])
def test_linkify_default(text, expected):
    assert linkify(text) == expected


def test_linkify_keeps_a_url_clear_of_trailing_punctuation_and_unbalanced_parentheses():
    # Inputs on which Gruber's regex backtracks without end; here they return at once.
    assert linkify(u'http://example.com/w(' + u'a' * 60) == (
        link(u'http://example.com/w') + u'(' + u'a' * 60)
    assert linkify(u'http://example.com/many' + u'.' * 60) == (
        link(u'http://example.com/many') + u'.' * 60)
    assert linkify(u'http://example.com/' + u'(' * 40 + u'a)') == (
        link(u'http://example.com/') + u'(' * 40 + u'a)')


def test_linkify_permitted_protocols():
    text = u'ftp://files.example.com/f and file:///etc/passwd and http://a.com'
    assert linkify(text, permitted_protocols=['ftp', 'file']) == u'%s and %s and %s' % (
        link(u'ftp://files.example.com/f'), link(u'file:///etc/passwd'), u'http://a.com')
    assert linkify(u'rdar:/1234', permitted_protocols=set(['rdar'])) == link(u'rdar:/1234')


def test_linkify_require_protocol_leaves_bare_hosts_as_text():
    text = u'www.example.com and http://example.com'
    assert linkify(text, require_protocol=True) == (
        u'www.example.com and ' + link(u'http://example.com'))


def test_linkify_extra_params_text_is_stripped_and_put_in_each_tag():
    assert linkify(u'www.a.com', extra_params=u'  rel="nofollow"  ') == link(
        u'http://www.a.com', u'www.a.com', u' rel="nofollow"')


def test_linkify_extra_params_function_sees_each_href():
    seen = []

    def params(href):
        seen.append(href)
        return u' class="internal" ' if u'//mine.com' in href else u'rel="nofollow"'

    assert linkify(u'http://mine.com/x and www.other.com', extra_params=params) == (
        u'%s and %s' % (link(u'http://mine.com/x', params=u' class="internal"'),
                        link(u'http://www.other.com', u'www.other.com', u' rel="nofollow"')))
    assert seen == [u'http://mine.com/x', u'http://www.other.com']


LONG_URL = u'http://example.com/some/very/long/path/indeed.html'


@pytest.mark.parametrize('url, shown', [
    # The host and up to 8 characters of the path's first segment, cut at '?' or '.'.
    (LONG_URL, u'http://example.com/some...'),
    (u'http://example.com/abcdefghijkl/m', u'http://example.com/abcdefgh...'),
    (u'http://example.com/ab.cd?x=1/and/more', u'http://example.com/ab...'),
    (u'www.example.com/index.html?page=1234567', u'www.example.com/index...'),
    # A host too long is cut at 30 characters.
    (u'http://' + u'a' * 50 + u'.com/x', u'http://' + u'a' * 23 + u'...'),
    # ... but never inside an &amp;.
    (u'http://' + u'a' * 20 + u'&' + u'b' * 30, u'http://' + u'a' * 20 + u'...'),
])
def test_linkify_shorten_shows_the_start_and_titles_the_whole(url, shown):
    href = url if url.startswith(u'http') else u'http://' + url
    href = href.replace(u'&', u'&amp;')
    assert linkify(url, shorten=True) == link(href, shown, u' title="%s"' % href)


@pytest.mark.parametrize('url', [
    u'http://example.com/short',  # 30 characters or fewer
    u'http://exampleexample.com/abcd/x',  # cut and '...' would be no shorter
    u'http://abcdefghijklmnopqrstuvw.com',  # no path, not too long
])
def test_linkify_shorten_leaves_a_url_whole_when_it_would_not_gain(url):
    assert linkify(url, shorten=True) == link(url)


def test_linkify_shorten_with_extra_params_puts_the_title_after_them():
    assert linkify(LONG_URL, shorten=True, extra_params=u'rel="x"') == link(
        LONG_URL, u'http://example.com/some...', u' rel="x" title="%s"' % LONG_URL)

