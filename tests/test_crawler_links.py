# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

import codecs
import random

import pytest

from tinytornado.crawler.links import (
    LinkParser, content_type_charset, decode_html, extract_links, is_html_content_type,
    unescape_attribute,
)
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.urls import urljoin

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


def links_fed(feed, html):
    """The links a LinkParser finds in `html` handed to it by `feed`."""
    parser = LinkParser(PAGE_URL)
    feed(parser, html)
    parser.close()
    return parser.links()


@pytest.mark.parametrize('feed', [feed_whole, feed_by_character, feed_in_chunks])
def test_link_parser_gives_the_same_links_however_the_page_is_cut(feed):
    assert links_fed(feed, PAGE) == PAGE_LINKS


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
def test_a_self_closing_raw_text_element_still_opens_raw_text(feed):
    # HTML5 ignores '/>' on script and style: their text runs to the end tag.
    html = (u'<script src="/lib.js" /><a href="/in-script"></script><a href="/after">'
            u'<style/><a href="/in-style"></style><a href="/last">')
    assert links_fed(feed, html) == ['http://example.com/after', 'http://example.com/last']


@pytest.mark.parametrize('feed', [feed_whole, feed_by_character, feed_in_chunks])
def test_a_quoted_value_hides_markup_and_an_unclosed_one_runs_to_the_end(feed):
    html = (u'<div title="<a href=\'/trap\'>" data-x=\'<a href="/trap">\'><p a=b"c>'
            u'<a href="/real"><img alt=\'x\'y=">"><a href="/cut>never closed')
    assert links_fed(feed, html) == ['http://example.com/real']


def test_duplicates_are_dropped_after_normalisation():
    html = u''.join(u'<a href="%s">x</a>' % href for href in [
        '/p', '/p#a', '/./p', 'http://EXAMPLE.com:80/p', '/%70', '../p', '/q', '/p'])
    assert extract_links(html, PAGE_URL) == ['http://example.com/p', 'http://example.com/q']


# --- the fast path against the exact one ------------------------------------------------------

class ReferenceParser(LinkParser):
    """LinkParser without its shortcuts, as the reference they must agree with: every '<'
    goes to the method that parses what follows it (the scan regex and its plain link tags
    are left out), and each href is joined on its own with urljoin."""

    def _skip_to_markup(self, rawdata, i):
        start = rawdata.find('<', i)
        return start if start >= 0 else len(rawdata)

    def links(self):
        base_url = self.page_url
        if self.base_href is not None:
            base_url = join_or_none(self.page_url, self.base_href) or self.page_url
        links = []
        for href in self.hrefs:
            link = join_or_none(base_url, href)
            if link is not None and link not in links:
                links.append(link)
        return links


def join_or_none(base, href):
    try:
        return urljoin(base, href)
    except ValueError:
        return None


MESSY_HREFS = [
    u'/a', u'b/c.html', u'../d', u'./e', u'#frag', u'?q=1', u'http://Other.Example:80/x',
    u'//cdn.example/y', u'mailto:x@y', u'javascript:void(0)', u'/p?a=1&amp;b=2', u'&#47;dec',
    u' \n /spaces\t', u'/caf\u00e9', u'/a%2fb', u'', u'HTTP://EXAMPLE.com/', u'/x#y', u'/s/../t',
    u'/q?&copy=1&region=2', u'/r>s', u"/t'u", u'/v"w', u'/w x', u'/y=z', u'<a href=/trap>',
    u'/amp&amp', u'\\back\\slash', u'/e?', u'g;x?y#s', u'/', u'/d/', u'/end"', u"/end'",
]
MESSY_NAMES = [u'href', u'HREF', u'hReF', u'src', u'SRC', u'title', u'class', u'data-x',
               u'x"y', u'=x', u"x'", u'hrefx', u'h', u'<a', u'/']
MESSY_TAGS = [u'a', u'A', u'area', u'AREA', u'base', u'BASE', u'p', u'div', u'abbr', u'img',
              u'br', u'iframe', u'frame', u'FRAME', u'a\x00', u'script', u'style', u'title',
              u'textarea']
MESSY_SPACE = [u' ', u'  ', u'\n', u'\t', u'\r\n', u'\f']
MESSY_TEXT = [u'text', u' ', u'\n', u'&amp;', u'&copy', u'a < b', u'<3', u'< a', u'>', u'"',
              u"'", u'\u00e9t\u00e9', u'&lt;a href=/trap&gt;']
MESSY_MARKUP = [
    u'<!-- <a href="/in-comment"> -->', u'<!---->', u'<!-->', u'<!--->', u'<!-- - -- -->',
    u'<!DOCTYPE html>', u'<![CDATA[ <a href="/cdata"> ]]>', u'<?php echo "<a href=/pi>" ?>',
    u'</a>', u'</p x="y>">', u'</ a>', u'</>', u'<!>', u'<!x>',
    u'<script>var s = "<a href=/trap>"; if (a < b) {}</script>',
    u'<SCRIPT type="x">"</scripts>"<a href="/trap"></SCRIPT >',
    u'<style>/* <a href="/trap"> */</style>', u'<title><a href=/t></title>',
    u'<textarea><a href=/ta></textarea>',
]


def pick(rng, items):
    return items[int(rng.random() * len(items))]


def messy_value(rng):
    href = pick(rng, MESSY_HREFS)
    draw = rng.random()
    if draw < 0.45:
        return u'"%s"' % href.replace(u'"', u'')
    if draw < 0.7:
        return u"'%s'" % href.replace(u"'", u'')
    if draw < 0.9:
        return u''.join(href.split()) or u'x'
    return pick(rng, [u'', u'"unclosed', u"'x>y'", u'"a > b"'])


def messy_start_tag(rng):
    parts = [u'<', pick(rng, MESSY_TAGS)]
    for _ in range(int(rng.random() * 4)):
        parts.append(pick(rng, MESSY_SPACE) if rng.random() < 0.9 else pick(rng, [u'/', u'']))
        name, draw = pick(rng, MESSY_NAMES), rng.random()
        if draw < 0.2:
            parts.append(name)
        elif draw < 0.3:
            parts.append(u'%s%s=%s%s' % (name, pick(rng, MESSY_SPACE), pick(rng, MESSY_SPACE),
                                         messy_value(rng)))
        else:
            parts.append(u'%s=%s' % (name, messy_value(rng)))
    parts.append(pick(rng, [u'>', u'>', u'>', u'/>', u' >', u' / >', u'\n>']))
    return u''.join(parts)


def messy_page(rng):
    """Tags spelled every way the tokenizer reads, text, comments, raw text, declarations,
    <base>; a third of the pages are cut off anywhere."""
    pieces = []
    for _ in range(40):
        draw = rng.random()
        if draw < 0.45:
            pieces.append(messy_start_tag(rng))
        elif draw < 0.75:
            pieces.append(pick(rng, MESSY_TEXT))
        else:
            pieces.append(pick(rng, MESSY_MARKUP))
    page = u''.join(pieces)
    if rng.random() < 0.3:
        page = page[:int(rng.random() * len(page))]
    return page


def parse_in_pieces(parser, html, cuts):
    for start, end in zip([0] + cuts, cuts + [len(html)]):
        parser.feed(html[start:end])
    parser.close()
    return parser.links()


def test_messy_pages_give_the_links_of_the_exact_parser_whole_and_in_pieces():
    rng = random.Random(11)
    links_found = 0
    for _ in range(1500):
        html, frames = messy_page(rng), rng.random() < 0.3
        cuts = sorted(int(rng.random() * len(html)) for _ in range(int(rng.random() * 6)))
        expected = parse_in_pieces(ReferenceParser(PAGE_URL, frames), html, [])
        assert extract_links(html, PAGE_URL, frames) == expected, html
        # Where a piece ends can change what the exact parser makes of raw text elements, so
        # pieces are compared with the reference fed the same pieces.
        assert (parse_in_pieces(LinkParser(PAGE_URL, frames), html, cuts) ==
                parse_in_pieces(ReferenceParser(PAGE_URL, frames), html, cuts)), (html, cuts)
        links_found += len(expected)
    assert links_found > 1000  # the pages do hold links


def test_a_demo_site_page_fed_in_random_pieces_gives_the_links_of_the_exact_parser():
    site = Site(seed=3, pages=20, origin='http://127.0.0.1:8000')
    rng = random.Random(5)
    links_found = 0
    for path in site.paths():
        resource = site.resource(path)
        if resource.status != 200 or not resource.body.startswith(b'<!DOCTYPE'):
            continue
        html = decode_html(resource.body)[0]
        url = 'http://127.0.0.1:8000' + path
        cuts = sorted(int(rng.random() * len(html)) for _ in range(20))
        expected = parse_in_pieces(ReferenceParser(url), html, [])
        assert extract_links(html, url) == expected
        assert parse_in_pieces(LinkParser(url), html, cuts) == expected
        links_found += len(expected)
    assert links_found > 200


HTML5_SPACE = u'\t\n\f\r '


def html5_start_tag_end(text):
    """Where the start tag at the head of `text` ends (after its '>'), read state by state as
    the HTML5 tokenizer reads it; None if the text ends inside the tag."""
    state = 'tag name'
    for index in range(2, len(text)):
        char = text[index]
        if state in (u'"', u"'"):  # inside a value in these quotes
            if char == state:
                state = 'after quoted value'
        elif char == u'>':
            return index + 1
        elif state == 'before value':
            state = char if char in u'"\'' else state if char in HTML5_SPACE else 'bare value'
        elif state == 'bare value':
            if char in HTML5_SPACE:
                state = 'before name'
        elif char == u'/':
            state = 'before name'  # the self-closing state goes back to it for all but '>'
        elif state == 'tag name':
            if char in HTML5_SPACE:
                state = 'before name'
        elif char in HTML5_SPACE:
            state = 'after name' if state in ('name', 'after name') else 'before name'
        elif char == u'=' and state in ('name', 'after name'):
            state = 'before value'
        else:
            state = 'name'  # a new attribute, whose name may start with '=' or a quote
    return None


def test_a_start_tag_ends_where_the_html5_tokenizer_ends_it():
    rng = random.Random(17)
    soup = [u' ', u'\n', u'/', u'=', u'=', u'"', u"'", u'x', u'ab', u'href', u'>']
    for _ in range(3000):
        tag = u'<%s%s>' % (pick(rng, [u'p', u'DIV', u'pp', u'img']),
                           u''.join(pick(rng, soup) for _ in range(int(rng.random() * 12))))
        html = tag + u'<a href=/after>'
        end = html5_start_tag_end(html)
        expected = ['http://example.com/after'] if end is not None and end <= len(tag) else []
        cuts = sorted(int(rng.random() * len(html)) for _ in range(3))
        assert extract_links(html, PAGE_URL) == expected, html
        assert parse_in_pieces(LinkParser(PAGE_URL), html, cuts) == expected, (html, cuts)


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
