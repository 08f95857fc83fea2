# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

import codecs
import random

import pytest

from tinytornado.crawler.links import (
    LinkParser, content_type_charset, decode_html, extract_links, is_html_content_type,
    unescape_attribute,
)

PAGE_URL = 'http://example.com/dir/page.html'

PAGE = u'''<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>t</title>
<link rel="stylesheet" href="/style.css">
<script>var s = '<a href="/in-script">'; if (a < b) {}</script>
<style>/* <a href="/in-style"> */</style>
</head><body>
<!-- <a href="/in-comment"> -->
<a href="relative.html">1</a>
<A HREF="/upper">2</A>
<a href=/unquoted/x/>3</a>
<a href='/single?a=1&amp;b=2'>4</a>
<a title="a > b" href="/after-quoted-gt">5</a>
<a href="/fragment#part">6</a>
<a href="#only-fragment">7</a>
<a href="mailto:x@example.com">8</a><a href="javascript:void(0)">9</a>
<a href="data:text/html,hi">10</a><a href="tel:+1555">11</a>
<a name="no-href">12</a>
<map><area shape="rect" href="/area"></map>
<iframe src="/iframe"></iframe><frameset><frame src="/frame"></frameset>
<a href="HTTP://Other.Example:80/x/../y">13</a>
<a href="relative.html">duplicate</a>
<a href="/first" href="/second">14</a>
<a href="  /spaces\t ">15</a>
<![CDATA[ <a href="/in-bogus-comment"> ]]>
<a href="&#47;decimal&#x2F;hex&sol;">16</a>
</body></html>
<a href="/after-html">17</a>'''

PAGE_LINKS = [
    'http://example.com/dir/relative.html',
    'http://example.com/upper',
    'http://example.com/unquoted/x/',
    'http://example.com/single?a=1&b=2',
    'http://example.com/after-quoted-gt',
    'http://example.com/fragment',
    'http://example.com/dir/page.html',
    'http://example.com/area',
    'http://other.example/y',
    'http://example.com/first',
    'http://example.com/spaces',
    'http://example.com/decimal/hex&sol;',
    'http://example.com/after-html',
]


def test_extract_links_takes_what_a_browser_follows_in_document_order():
    assert extract_links(PAGE, PAGE_URL) == PAGE_LINKS


def test_frames_are_links_only_when_asked_for():
    with_frames = extract_links(PAGE, PAGE_URL, frames=True)
    assert [link for link in with_frames if link not in PAGE_LINKS] == [
        'http://example.com/iframe', 'http://example.com/frame']


def feed_whole(parser, text):
    parser.feed(text)


def feed_by_character(parser, text):
    for character in text:
        parser.feed(character)


def feed_in_chunks(parser, text):
    for start in range(0, len(text), 7):
        parser.feed(text[start:start + 7])


@pytest.mark.parametrize('feed', [feed_whole, feed_by_character, feed_in_chunks])
def test_link_parser_gives_the_same_links_however_the_page_is_cut(feed):
    parser = LinkParser(PAGE_URL)
    feed(parser, PAGE)
    parser.close()
    assert parser.links() == PAGE_LINKS


def test_first_base_href_wins_and_applies_to_links_before_it():
    html = (u'<a href="before.html">x</a><base href="/base/dir/"><base href="/ignored/">'
            u'<a href="after.html">y</a><a href="#f">z</a>')
    assert extract_links(html, PAGE_URL) == [
        'http://example.com/base/dir/before.html', 'http://example.com/base/dir/after.html',
        'http://example.com/base/dir/']


@pytest.mark.parametrize('base', ['javascript:x', 'mailto:a@b', 'http://exa mple/'])
def test_a_base_href_that_is_no_http_url_is_ignored(base):
    html = u'<base href="%s"><a href="x.html">x</a>' % base
    assert extract_links(html, PAGE_URL) == ['http://example.com/dir/x.html']


@pytest.mark.parametrize('value, expected', [
    (u'/a?x=1&amp;y=2', u'/a?x=1&y=2'),
    (u'/a?x=1&y=2', u'/a?x=1&y=2'),
    (u'/a?x=1&region=us&copy=2&not=3', u'/a?x=1&region=us&copy=2&not=3'),
    (u'/a?&copy;&copy &copy=', u'/a?\u00a9\u00a9 &copy='),
    (u'&amp &lt;&gt;&quot;&apos;', u'& <>"\''),
    (u'&#65;&#x42;&#X43;&#68', u'ABCD'),
    (u'&#0;&#xD800;&#x110000;', u'\ufffd\ufffd\ufffd'),
    (u'&hellip;&hellip &nosuch;', u'\u2026&hellip &nosuch;'),
    (u'&', u'&'),
])
def test_attribute_values_are_unescaped_as_a_browser_does(value, expected):
    assert unescape_attribute(value) == expected


@pytest.mark.parametrize('html', [
    u'<a href="/x', u'<a href=', u'<a', u'<', u'</', u'</a', u'<!--', u'<!-- x', u'<!', u'<?',
    u'<![if !IE]><a href="/x"><![endif]>', u'<!DOCTYPE html [ <!ENTITY x "y"> ]>',
    u'<![CDATA[', u'<a href="/x"/ >', u'<br/ ><a/href=/x>', u'&#', u'&#x', u'&amp',
    u'<script>', u'<script></scr', u'<style><a href="/x">', u'<a b=">" c=\'>\' d=e>',
    u'\x00<a\x00 href="/\x00">', u'<<<>>></></ >',
])
def test_malformed_markup_never_raises(html):
    for page in (html, html + u'<a href="/tail">t</a>'):
        links = extract_links(page, PAGE_URL)
        assert all(link.startswith('http://') for link in links)


def test_random_markup_never_raises():
    pieces = [u'<', u'>', u'</', u'<!', u'<!--', u'-->', u'<?', u'"', u"'", u'=', u'&',
              u'&amp;', u'#', u'a', u'href', u'<a href=', u'<script>', u'</script>',
              u'<style>', u'<![CDATA[', u']]>', u' ', u'\n', u'/', u'x', u'\u00e9']
    rng = random.Random(3)
    for _ in range(300):
        html = u''.join(pieces[int(rng.random() * len(pieces))] for _ in range(60))
        extract_links(html, PAGE_URL)


def test_links_inside_raw_text_elements_are_not_links():
    html = (u'<SCRIPT type="x">"</scripts>"<a href="/trap"></SCRIPT ><a href="/real">'
            u'<style><a href="/trap"></style><a href="/other">')
    assert extract_links(html, PAGE_URL) == ['http://example.com/real',
                                             'http://example.com/other']


@pytest.mark.parametrize('feed', [feed_whole, feed_by_character, feed_in_chunks])
def test_a_quoted_value_hides_markup_and_an_unclosed_one_runs_to_the_end(feed):
    html = (u'<div title="<a href=\'/trap\'>" data-x=\'<a href="/trap">\'><p a=b"c>'
            u'<a href="/real"><img alt=\'x\'y=">"><a href="/cut>never closed')
    parser = LinkParser(PAGE_URL)
    feed(parser, html)
    parser.close()
    assert parser.links() == ['http://example.com/real']


def test_duplicates_are_dropped_after_normalisation():
    html = u''.join(u'<a href="%s">x</a>' % href for href in [
        '/p', '/p#a', '/./p', 'http://EXAMPLE.com:80/p', '/%70', '../p', '/q', '/p'])
    assert extract_links(html, PAGE_URL) == ['http://example.com/p', 'http://example.com/q']


# --- charsets -------------------------------------------------------------------------------

@pytest.mark.parametrize('body, content_type, expected_text, expected_encoding', [
    (codecs.BOM_UTF8 + b'caf\xc3\xa9', 'text/html; charset=latin-1', u'caf\u00e9', 'utf-8'),
    (codecs.BOM_UTF16_LE + u'hi'.encode('utf-16-le'), None, u'hi', 'utf-16-le'),
    (codecs.BOM_UTF16_BE + u'hi'.encode('utf-16-be'), None, u'hi', 'utf-16-be'),
    (b'caf\xe9', 'text/html; charset=ISO-8859-1', u'caf\u00e9', 'iso8859-1'),
    (b'caf\xe9', 'text/html; charset="latin1"', u'caf\u00e9', 'iso8859-1'),
    (b'caf\xe9', "text/html;charset='latin1'", u'caf\u00e9', 'iso8859-1'),
    (b'<meta charset="windows-1252">\x93q\x94', None,
     u'<meta charset="windows-1252">\u201cq\u201d', 'cp1252'),
    (b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">\xc1',
     'text/html', u'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">\u0430',
     'koi8-r'),
    (b'<!-- <meta charset="koi8-r"> --><meta charset=latin1>\xe9', None,
     u'<!-- <meta charset="koi8-r"> --><meta charset=latin1>\u00e9', 'iso8859-1'),
    (b'caf\xc3\xa9', None, u'caf\u00e9', 'utf-8'),
    (b'caf\xe9', None, u'caf\u00e9', 'cp1252'),
    (b'caf\xe9', 'text/html; charset=no-such-charset', u'caf\u00e9', 'cp1252'),
    (b'caf\xe9', 'text/html; charset=base64', u'caf\u00e9', 'cp1252'),
    (b'caf\xe9', 'text/html; charset=rot13', u'caf\u00e9', 'cp1252'),
    (b'caf\xe9', 'text/html; charset=undefined', u'caf\u00e9', 'cp1252'),
    (b'<meta charset="utf-16">caf\xc3\xa9', None, u'<meta charset="utf-16">caf\u00e9', 'utf-8'),
    (b'caf\xff', 'text/html; charset=utf-8', u'caf\ufffd', 'utf-8'),
    (b'', None, u'', 'utf-8'),
])
def test_decode_html_finds_the_charset_as_a_browser_does(body, content_type, expected_text,
                                                         expected_encoding):
    assert decode_html(body, content_type) == (expected_text, expected_encoding)


def test_a_meta_past_the_first_1024_bytes_is_not_read():
    body = b' ' * 1024 + b'<meta charset="latin1">caf\xc3\xa9'
    assert decode_html(body)[1] == 'utf-8'


def test_decode_html_fallback_is_configurable():
    assert decode_html(b'caf\xe9', fallback='latin-1') == (u'caf\u00e9', 'iso8859-1')


def test_decoded_page_yields_its_non_ascii_link():
    body = u'<a href="/caf\u00e9">x</a>'.encode('latin-1')
    text, _ = decode_html(body, 'text/html; charset=iso-8859-1')
    assert extract_links(text, PAGE_URL) == ['http://example.com/caf%C3%A9']


@pytest.mark.parametrize('content_type, expected', [
    ('text/html', True), ('Text/HTML; charset=utf-8', True), ('application/xhtml+xml', True),
    ('text/plain', False), ('application/pdf', False), ('', False), (None, False),
])
def test_is_html_content_type(content_type, expected):
    assert is_html_content_type(content_type) is expected


@pytest.mark.parametrize('content_type, expected', [
    ('text/html; charset=utf-8', 'utf-8'), ('text/html;CHARSET = "x-y" ; a=b', 'x-y'),
    ('text/html', None), (None, None),
])
def test_content_type_charset(content_type, expected):
    assert content_type_charset(content_type) == expected
