"""The bytes of the demo site's pages and files; `website` decides what links to what.

A page looks like a small real one (head with a stylesheet, a style and a script, a navigation
list, paragraphs with inline links, images, a footer) and is padded with text to a size drawn
from the site's ``page_size``. Everything is drawn from a Random seeded by the site's seed and
the path, so a resource is the same whatever order resources are rendered in. Functions take
the `site` (anything with ``seed``, ``page_size`` and ``variety``) and the path.
"""
from __future__ import absolute_import, division, print_function

import collections
import random

from ..urls import url_hash

__all__ = ['CHARSET_CASES', 'CharsetCase', 'NAVIGATION_LINKS', 'charset_case', 'page_body',
           'file_body', 'pick']

NAVIGATION_LINKS = 5  # a page's first links form its navigation list
_LINKS_PER_PARAGRAPH = 3
_NON_HTTP_HREFS = ('mailto:webmaster@example.invalid', 'javascript:void(0)',
                   'tel:+15555550100', 'ftp://offsite-0.invalid/pub/', 'data:text/html,hi')
_WORDS = ('lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '
          'incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud '
          'exercitation ullamco laboris nisi aliquip ex ea commodo consequat').split()

CharsetCase = collections.namedtuple('CharsetCase', [
    'name', 'content_type', 'declaration', 'codec', 'expected_encoding', 'text'])
# Pages whose charset is declared in odd ways: the Content-Type they are sent with, the
# <meta> they hold, the codec their bytes are in, the codec a correct reader reports, and
# non-ASCII text that shows which one was used.
CHARSET_CASES = (
    CharsetCase('latin1-header', 'text/html; charset=ISO-8859-1', None, 'latin-1',
                'iso8859-1', u'Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e'),
    CharsetCase('cp1252-meta', 'text/html',
                u'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
                'cp1252', 'cp1252', u'\u201cQuoted\u201d prices in \u20ac'),
    CharsetCase('utf8-bom', 'text/html', None, 'utf-8-sig', 'utf-8', u'Na\u00efve \u2713 text'),
    CharsetCase('unknown-label', 'text/html; charset=x-no-such-charset', None, 'utf-8',
                'utf-8', u'\u00dcber gr\u00fc\u00dfe'),
    CharsetCase('invalid-utf8', 'text/html; charset=utf-8', None, 'utf-8', 'utf-8',
                u'broken @@INVALID@@ bytes'),
    CharsetCase('undeclared-latin1', 'text/html', None, 'latin-1', 'cp1252',
                u'Se\u00f1or ni\u00f1o'),
)
_TEXT_RNG = random.Random(0)
_TEXT = [_WORDS[int(_TEXT_RNG.random() * len(_WORDS))] for _ in range(4096)]
_INVALID_MARK, _INVALID_BYTES = b'@@INVALID@@', b'\xff\xfe\xc3'


def charset_case(name):
    """The CharsetCase called `name`, or None."""
    for case in CHARSET_CASES:
        if case.name == name:
            return case
    return None


def pick(rng, items):
    """rng.choice(items), the same on 2.7 and 3.x (whose choice() differ)."""
    return items[int(rng.random() * len(items))]


_PAGE_HEAD = u'''<!DOCTYPE html>
<html lang="en">
<head>
%(meta)s
<title>%(title)s</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
%(extra_head)s</head>
<body class="page">
<header class="site-header"><div class="logo">Demo site</div>
<nav class="nav"><ul>
'''
_VARIETY_HEAD = u'''<link rel="stylesheet" href="/static/site.css">
<style>
/* <a href="/trap/style.html"> */
body { font-family: sans-serif; margin: 0 auto; max-width: 50em; }
.nav a { padding: 0 1em; }
</style>
<script>
var template = '<a href="/trap/script.html">' + (1 < 2 && 3 > 2);
</script>
'''
_VARIETY_FOOTER = u'''<!-- <a href="/trap/comment.html">old navigation</a> -->
<p class="contact"><a href="%s">mail</a> <a href="%s">menu</a> <a href="%s">call</a>
<a href="%s">archive</a> <a href="%s">inline</a> <a name="bottom">anchor</a></p>
''' % _NON_HTTP_HREFS


def _path_rng(site, path):
    """A Random for one path, independent of the order resources are rendered in."""
    return random.Random(url_hash(path) ^ site.seed)


def _sentence(rng, words=12):
    # A slice of one long text: one draw per sentence instead of one per word.
    start = int(rng.random() * (len(_TEXT) - words))
    return u' '.join(_TEXT[start:start + words])


def file_body(site, path):
    """A .pdf, .png or text file: magic bytes, noise and (with variety) a trap link."""
    rng = _path_rng(site, path)
    noise = bytearray(int(rng.random() * 256) for _ in range(512 + int(rng.random() * 2048)))
    trap = b''
    if site.variety:
        trap = b'\n(<a href="/trap/pdf.html">)\n'
    if path.endswith('.pdf'):
        return b'%PDF-1.4\n' + bytes(noise) + trap + b'\n%%EOF\n'
    if path.endswith('.png'):
        return b'\x89PNG\r\n\x1a\n' + bytes(noise)
    return (u'Notes. A text file is not HTML: <a href="/trap/text.html">not a link</a>\n'
            ).encode('ascii')


def page_body(site, path, links, base_href=None, case_name=None):
    """An HTML page holding `links`, (href, tag) pairs in document order.

    `case_name` names a CHARSET_CASES entry the page is declared and encoded by.
    """
    rng = _path_rng(site, path)
    case = charset_case(case_name)
    head = _PAGE_HEAD % {
        'meta': _charset_meta(case), 'title': u'Page %s' % path,
        'extra_head': ((u'<base href="%s">\n' % base_href if base_href else u'') +
                       (_VARIETY_HEAD if site.variety else u''))}
    parts = [head]
    parts.extend(u'<li class="nav-item">%s</li>\n' % _anchor(site, rng, href)
                 for href, _ in links[:NAVIGATION_LINKS])
    parts.append(u'</ul></nav></header>\n<main id="content">\n<article>\n<h1>%s</h1>\n'
                 % _sentence(rng, 4))
    if case:
        parts.append(u'<p class="charset">%s</p>\n' % case.text)
    body = links[NAVIGATION_LINKS:]
    for start in range(0, len(body), _LINKS_PER_PARAGRAPH):
        parts.append(_link_paragraph(site, rng, body[start:start + _LINKS_PER_PARAGRAPH]))
    footer = [u'</article>\n</main>\n<footer>\n',
              _VARIETY_FOOTER if site.variety else u'',
              u'<p>&copy; Demo &mdash; page %s</p>\n</footer>\n</body>\n</html>\n' % path]
    _pad(rng, parts, site.page_size, len(u''.join(footer)))
    text = u''.join(parts + footer)
    if case is None:
        return text.encode('utf-8')
    return text.encode(case.codec).replace(_INVALID_MARK, _INVALID_BYTES)


def _charset_meta(case):
    if case is None:
        return u'<meta charset="utf-8">'
    return case.declaration or u''


def _link_paragraph(site, rng, links):
    """A paragraph of text around `links`, or the iframe or image map a link stands in."""
    pieces = [u'<p>%s' % _sentence(rng, 8)]
    for href, tag in links:
        if tag == 'iframe':
            pieces.append(u'</p>\n<div class="embed"><iframe src="%s" title="embedded">'
                          u'</iframe></div>\n<p>' % href)
        elif tag == 'area':
            area = _attribute(site, rng, 'href', href)
            pieces.append(u'<map name="m%d"><area shape="rect" coords="0,0,10,10" %s alt="area">'
                          u'</map>' % (int(rng.random() * 1000), area))
        else:
            pieces.append(u'%s %s,' % (_anchor(site, rng, href), _sentence(rng, 4)))
    pieces.append(u'<em>%s</em>.</p>\n' % _sentence(rng, 2))
    if rng.random() < 0.5:
        pieces.append(u'<div class="block"><span class="meta">%s</span><img src="/img/icon.png" '
                      u'alt="" width="10" height="10"></div>\n' % _sentence(rng, 4))
    return u' '.join(pieces)


def _anchor(site, rng, href):
    return u'<a class="link" %s>%s</a>' % (_attribute(site, rng, 'href', href),
                                          _sentence(rng, 2))


def _attribute(site, rng, name, value):
    """name="value", or with single quotes or none, as a page author might write it."""
    draw = rng.random() if site.variety else 0.0
    if draw > 0.8 and not any(char in value for char in u' \t\n"\'=<>`'):
        return u'%s=%s' % (name, value)
    if draw > 0.6 and u"'" not in value:
        return u"%s='%s'" % (name, value)
    return u'%s="%s"' % (name, value)


def _pad(rng, parts, page_size, tail_length):
    """Insert paragraphs of text until the page reaches a size drawn from `page_size`."""
    low, high = page_size
    target = low + int(rng.random() * (high - low))
    length = sum(len(part) for part in parts) + tail_length
    while length < target:
        paragraph = u'<p>%s. <strong>%s</strong> %s.</p>\n' % (
            _sentence(rng, 14), _sentence(rng, 3), _sentence(rng, 10))
        parts.insert(1 + int(rng.random() * (len(parts) - 1)), paragraph)
        length += len(paragraph)
