"""Links out of an HTML page, and the page's text out of its bytes.

`extract_links` runs the standard library's HTML tokenizer (comments, ``<script>`` and
``<style>`` bodies and quoted '>' are handled as a browser would, which no regex over the
page can do) without the work it does for every piece of a page. One regex match skips the
text and every tag that holds no link, read by the HTML5 tokenizer's rules, and takes the
href of the ``<a>`` or ``<area>`` after them when its attributes are spelled plainly; only
the rest (comments, raw text elements, ``<base>``, frames, odd spellings, tags cut off by
the end of a piece) goes through the tokenizer's methods. The hrefs are then joined to the
page's URL together (`urls.urljoin_all`). On the demo site's pages that is 13 times as fast
as a plain HTMLParser subclass (3.11). Attribute values are unescaped as a browser does in
an attribute (``&region=1`` stays as it is), identically on 2.7 and 3.x.

`decode_html` finds the charset as a browser does: a byte order mark, then the Content-Type
header, then a ``<meta>`` in the first 1024 bytes, then UTF-8 if the bytes are valid UTF-8
and windows-1252 otherwise. It never raises: unknown labels are skipped and bytes the chosen
charset cannot decode become U+FFFD.
"""
from __future__ import absolute_import, division, print_function

import codecs
import collections
import re

import six
from six.moves.html_entities import name2codepoint
from six.moves.html_parser import HTMLParser

from tinytornado._compat import POSSESSIVE_REGEX

from .urls import urljoin, urljoin_all

__all__ = ['extract_links', 'extract_links_as_written', 'WrittenLink', 'LinkParser',
           'decode_html', 'unescape_attribute', 'is_html_content_type',
           'content_type_charset']

# An href of a page meant as an http(s) link, as written: the normalised `url` fetched for
# it (None if none), the `problem` that makes it malformed (None if none), and where it is in its page (line and column
# from 1; None if its text is not in the page as it is, escaped).
WrittenLink = collections.namedtuple('WrittenLink', 'href url problem line column')

_WHITESPACE = '\t\n\f\r '
_ASCII_LETTERS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
# A start tag's whole name: backtracking into it would read the rest of it as an attribute,
# and could end a tag that the input cuts off inside a quoted value ('<div =="><a href=x>'
# as a <di> whose attribute v is '="', then a link).
_TAG_NAME = '[a-zA-Z][^\t\n\r\f />\x00]*(?![^\t\n\r\f />\x00])'
# What follows a start tag's name up to its '>', read as the HTML5 tokenizer does: a quote
# opens a value only right after '=', and an unclosed quote runs to the end of the input,
# where the '>' the caller asks for cannot match. Each piece stops only where the next must
# start, so a cut-off tag fails in one pass instead of backtracking through every split.
_TAG_BODY = (
    '(?:[%(ws)s/]+|[^%(ws)s/>][^%(ws)s/>=]*(?:[%(ws)s]*=[%(ws)s]*'
    '(?:"[^"]*(?:"|\\Z)|\'[^\']*(?:\'|\\Z)|[^%(ws)s>"\'][^%(ws)s>]*)?)?)*' % {'ws': _WHITESPACE})
# A whole start tag; the lookahead and back reference make its body atomic.
_START_TAG_RE = re.compile('<(%s)(?=(%s))\\2>' % (_TAG_NAME, _TAG_BODY))
_ATTRIBUTE_NAME = '[^%(ws)s/>][^%(ws)s/>=]*' % {'ws': _WHITESPACE}


def _value_pattern(group):
    """An attribute's optional '= value'; `group` opens each value's group: '(' captures."""
    return ('(?:[%(ws)s]*=[%(ws)s]*(?:"%(g)s[^"]*)"|\'%(g)s[^\']*)\'|%(g)s[^%(ws)s>]*)))?'
            % {'ws': _WHITESPACE, 'g': group})


def _ascii_case_insensitive(name):
    """`name` as a pattern matching it in any ASCII case ('[hH][rR]...'); re.I would also
    fold non-ASCII letters and slow the scan of text."""
    return ''.join('[%s%s]' % (char, char.upper()) for char in name)


# One attribute inside a start tag, HTML5-style: groups name, "value", 'value', value.
_ATTRIBUTE_RE = re.compile('[%s/]*(%s)%s' % (_WHITESPACE, _ATTRIBUTE_NAME, _value_pattern('(')))

_LINK_ATTRIBUTES = {'a': 'href', 'area': 'href', 'base': 'href'}
_FRAME_ATTRIBUTES = dict(_LINK_ATTRIBUTES, frame='src', iframe='src')


def _attribute_value_regex(wanted):
    """A regex for the first attribute named `wanted` in a tag: the attributes before it
    (group 1, made atomic by the lookahead), then groups "value", 'value', value."""
    name = _ascii_case_insensitive(wanted) + '(?![^%s/>=])' % _WHITESPACE
    other = '[%s/]*(?!%s)%s%s' % (_WHITESPACE, name, _ATTRIBUTE_NAME, _value_pattern('(?:'))
    return re.compile('(?=((?:%s)*))\\1[%s/]*%s%s' % (
        other, _WHITESPACE, name, _value_pattern('(')))


_ATTRIBUTE_VALUE_RES = dict((wanted, _attribute_value_regex(wanted))
                            for wanted in set(_FRAME_ATTRIBUTES.values()))

_CHARACTER_REFERENCE_RE = re.compile(
    '&(?:#([0-9]+);?|#[xX]([0-9a-fA-F]+);?|([A-Za-z][A-Za-z0-9]*)(;?))')
_ENTITIES = dict(name2codepoint, apos=39)
# The references a browser decodes without their ';' (HTML 4's Latin-1 set and the markup
# four); any other name needs the ';'.
_LEGACY_ENTITIES = frozenset(
    [name for name, codepoint in name2codepoint.items() if 160 <= codepoint <= 255] +
    ['amp', 'lt', 'gt', 'quot'])


def extract_links(html, url, frames=False):
    """The http(s) links of the page `html` (text) fetched from the normalised URL `url`.

    Returns normalised URLs without fragments, each once, in document order. Links are
    resolved against the first ``<base href>`` if there is one; hrefs that are not http(s)
    (mailto:, javascript:, data:, ...) or are invalid are left out. With `frames`, the
    ``src`` of ``<frame>`` and ``<iframe>`` count as links too.
    """
    parser = LinkParser(url, frames)
    parser.feed(html)
    parser.close()
    return parser.links()


def extract_links_as_written(html, url, frames=False):
    """(`extract_links`'s list, the page's http(s) hrefs as `WrittenLink`s in document
    order, malformed ones included)."""
    parser = LinkParser(url, frames)
    parser.feed(html)
    parser.close()
    return parser.links(), parser.written(html)


def unescape_attribute(value):
    """Decode character references in an attribute value as a browser does."""
    if '&' not in value:
        return value
    return _CHARACTER_REFERENCE_RE.sub(_decode_reference, value)


def is_html_content_type(content_type):
    """True if a Content-Type header value (or None) announces HTML worth parsing."""
    media_type = (content_type or '').split(';', 1)[0].strip().lower()
    return media_type in ('text/html', 'application/xhtml+xml')


def content_type_charset(content_type):
    """The charset parameter of a Content-Type header value, or None."""
    match = _CHARSET_PARAMETER_RE.search(content_type or '')
    return match.group(1) if match else None


def decode_html(body, content_type=None, fallback='cp1252'):
    """Decode the bytes of an HTML page; returns ``(text, encoding)``.

    `encoding` is the Python codec name used ('utf-8', 'cp1252', 'iso8859-1', ...).
    `fallback` is used when nothing is declared and `body` is not valid UTF-8.
    """
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(encoding, 'replace'), encoding
    encoding = (_text_codec(content_type_charset(content_type), ascii_compatible=False) or
                _text_codec(_meta_charset(body), ascii_compatible=True))
    if encoding is None:
        try:
            return body.decode('utf-8'), 'utf-8'
        except UnicodeDecodeError:
            encoding = codecs.lookup(fallback).name
    return body.decode(encoding, 'replace'), encoding


class LinkParser(HTMLParser):
    """The links of a page fed in pieces: ``feed(text)`` as often as needed, ``close()``,
    then ``links()``; `extract_links` does all three."""

    def __init__(self, url, frames=False):
        HTMLParser.__init__(self)
        # Text is never looked at, so 3.x need not unescape it (2.7 has no such option).
        self.convert_charrefs = False
        self.page_url = url
        self.link_attributes = _FRAME_ATTRIBUTES if frames else _LINK_ATTRIBUTES
        # Elements whose content the tokenizer must switch mode for: the base class has to
        # see their start tags. 3.13.6+ adds RCDATA elements (title, textarea) to the list.
        self.mode_elements = frozenset(self.CDATA_CONTENT_ELEMENTS +
                                       getattr(self, 'RCDATA_CONTENT_ELEMENTS', ()))
        self.base_href = None
        self.hrefs = []
        self._scanner = _scan_regex(self.link_attributes, self.mode_elements).finditer

    def goahead(self, end):
        # The base class cuts text at every '<' and '&' to hand it to handle_data; only
        # a few tags matter here, so the scan regex skips the text and every other tag,
        # and takes plainly spelled links on the way.
        rawdata = self.rawdata
        i, n = 0, len(rawdata)
        while i < n:
            if self.cdata_elem is None:
                start = self._skip_to_markup(rawdata, i)
                if start == n:
                    i = n
                    break
            else:
                match = self.interesting.search(rawdata, i)  # the raw text's end tag
                start = match.start() if match else -1
                if start < 0:
                    if end:
                        i = n
                    break
            after = rawdata[start + 1:start + 2]
            if after in _ASCII_LETTERS:
                i = self.parse_starttag(start)
            elif after == '/':
                i = self.parse_endtag(start)
            elif after == '!':
                i = self.parse_html_declaration(start)
            elif after == '?':
                i = self.parse_pi(start)
            else:
                i = start + 1 if after else -1  # a '<' that starts no markup is text
            if i < 0:
                if not end:
                    i = start
                    break
                # A tag or comment cut off by the end of the document is dropped (HTML5).
                i = n
        self.rawdata = rawdata[i:]

    def _skip_to_markup(self, rawdata, i):
        """Skip text and markup from `i`, taking the hrefs of plainly spelled ``<a>`` and
        ``<area>`` tags on the way; the position of the next construct to parse."""
        hrefs = self.hrefs
        # Every match ends where the next begins (the pattern matches, if only the empty
        # string, anywhere), so the iteration stops at the first match without a link tag.
        for match in self._scanner(rawdata, i):
            group = match.lastindex
            if group < _FIRST_VALUE_GROUP:
                break
            if group != _NO_HREF_GROUP:
                value = match.group(group)
                hrefs.append(unescape_attribute(value) if '&' in value else value)
        return match.end()

    def parse_starttag(self, i):
        rawdata = self.rawdata
        match = _START_TAG_RE.match(rawdata, i)
        if match is None:
            return -1  # only the end of the input stops a tag before its '>'
        tag = match.group(1).lower()
        if tag in self.mode_elements:
            return HTMLParser.parse_starttag(self, i)
        end = match.end()
        attribute = self.link_attributes.get(tag)
        if attribute is not None:
            self._add_link(tag, _attribute_value(rawdata, match.end(1), end, attribute))
        return end

    def handle_starttag(self, tag, attrs):
        # Reached only for mode elements (an iframe is one on 3.13.6+).
        attribute = self.link_attributes.get(tag)
        if attribute is not None:
            text = self.get_starttag_text()
            self._add_link(tag, _attribute_value(text, len(tag) + 1, len(text), attribute))

    def handle_startendtag(self, tag, attrs):
        # Reached only for mode elements spelled self-closing. HTML5 ignores the '/' on
        # an element that is not void: '<script src=x />' still opens raw text, so links
        # in the script's text are not links. The stdlib takes it as XHTML would.
        self.handle_starttag(tag, attrs)
        if tag in self.CDATA_CONTENT_ELEMENTS:
            self.set_cdata_mode(tag)
        else:  # An RCDATA element (title, textarea), which 3.13.6+ switches mode for.
            self.set_cdata_mode(tag, escapable=True)

    def parse_endtag(self, i):
        if self.cdata_elem is not None:
            return HTMLParser.parse_endtag(self, i)
        # Outside raw text an end tag only has to be skipped; it ends at the next '>'.
        end = self.rawdata.find('>', i + 2)
        return end + 1 if end >= 0 else -1

    def parse_html_declaration(self, i):
        # HTML5 ends every '<!' construct but a comment at the next '>'; the stdlib's SGML
        # declaration and marked-section parsing raises on malformed input.
        if self.rawdata.startswith('<!--', i):
            return self.parse_comment(i)
        end = self.rawdata.find('>', i + 2)
        return end + 1 if end >= 0 else -1

    def error(self, message):
        # 2.7 only: keep going past malformed markup, as a browser does.
        pass

    def links(self):
        """The normalised links found so far, each once, in document order."""
        base_url = _resolve(self.page_url, self.base_href) or self.page_url
        links = []
        seen = set([None])  # None stands for an href that is no http(s) URL
        for link in urljoin_all(base_url, self.hrefs):
            if link not in seen:
                seen.add(link)
                links.append(link)
        return links

    def written(self, html):
        """The hrefs found so far that are meant as http(s) links (relative, or with that
        scheme), as WrittenLinks, malformed ones included; `html` is the page fed, where
        each is looked for after the previous one (its first occurrence there)."""
        base_url = _resolve(self.page_url, self.base_href) or self.page_url
        found, cursor = [], 0
        for href in self.hrefs:
            problem = _href_problem(base_url, six.ensure_str(href))  # 2.7: its message's
            url = _resolve(base_url, href)  # '/%zz' is fetched as '/%25zz'
            if problem is None and url is None:
                continue  # mailto:, javascript:...: not the crawl's
            where = html.find(href, cursor)
            href = six.ensure_str(href)
            if where < 0:
                found.append(WrittenLink(href, url, problem, None, None))
                continue
            cursor = where + len(href)
            line_start = html.rfind('\n', 0, where) + 1
            found.append(WrittenLink(href, url, problem, html.count('\n', 0, where) + 1,
                                     where - line_start + 1))
        return found

    def _add_link(self, tag, value):
        if value is None:
            return
        if tag != 'base':
            self.hrefs.append(value)
        elif self.base_href is None:
            self.base_href = value


def _scan_pattern(template, **pieces):
    """`template` with `pieces` and these filled in: %(ws)s, HTML's whitespace, and %(p)s,
    which makes the quantifier before it possessive where Python can.

    The scan regex never needs to backtrack: each of its pieces stops only where the next
    must start. So it matches the same with possessive quantifiers, which spare 3.11's
    engine the state it keeps in case it has to (about 40% of its time on a page).
    """
    return template % dict(pieces, ws=_WHITESPACE, p='+' if POSSESSIVE_REGEX else '')


# The attributes of a start tag in the spelling most pages use, which the HTML5 tokenizer
# reads just as it looks: each after whitespace, a name without quotes or '=', and '=' and a
# value (quoted, or bare without quotes) right after it; then the end, '>' or '/>'. Tags
# spelled otherwise take the exact grammar (_TAG_BODY), which is slower.
_PLAIN_NAME_AND_VALUE = _scan_pattern(
    '[^%(ws)s/>"\'=]+%(p)s(?:=(?:"[^"]*%(p)s"|\'[^\']*%(p)s\'|[^%(ws)s>"\']+%(p)s))?%(p)s')
_PLAIN_ATTRIBUTE = _scan_pattern('[%(ws)s]+%(p)s%(name_and_value)s',
                                 name_and_value=_PLAIN_NAME_AND_VALUE)
_PLAIN_TAG_END = _scan_pattern('[%(ws)s/]*%(p)s>')
# A plain <a> or <area>: the attributes before the first href, then that href's value
# (in the groups "value", 'value', value, or an empty one for an href without a value) and
# the attributes after it; or, in the last group, no href at all.
_PLAIN_LINK_TAG = _scan_pattern(
    '<(?:[aA]|[aA][rR][eE][aA])(?:[%(ws)s]+%(p)s(?!%(href)s[%(ws)s/>=])%(name_and_value)s)*%(p)s'
    '(?:[%(ws)s]+%(p)s%(href)s'
    '(?:=(?:"([^"]*%(p)s)"|\'([^\']*%(p)s)\'|([^%(ws)s>"\']+%(p)s))|())'
    '(?:%(attribute)s)*%(p)s|())%(end)s',
    href=_ascii_case_insensitive('href'), name_and_value=_PLAIN_NAME_AND_VALUE,
    attribute=_PLAIN_ATTRIBUTE, end=_PLAIN_TAG_END)
# The groups of a scan match (see _scan_regex): 1 is always empty, 2 may hold a tag body,
# 3 to 6 an href's value, 7 the sign of a link tag without an href.
_FIRST_VALUE_GROUP = 3
_NO_HREF_GROUP = 7

_scan_regexes = {}


def _scan_regex(link_attributes, mode_elements):
    """A regex matching the text and markup before the next construct `goahead` must see,
    then, if that is a plainly spelled <a> or <area>, the tag too, with its href in a group.

    It skips text, end tags, '<!' declarations that are no comment, a '<' that starts no
    markup, and whole start tags other than the link and mode elements; what stops it
    (those tags unless plain, comments, '<?', anything cut off by the end of the input) is
    parsed by the methods above. Its first group is empty, so that `lastindex` is never
    None: the highest group that took part tells what the match holds.
    """
    key = (frozenset(link_attributes), mode_elements)
    regex = _scan_regexes.get(key)
    if regex is None:
        names = '|'.join(_ascii_case_insensitive(name) for name in sorted(key[0] | key[1]))
        # Text is taken with the markup before it, so most tags cost one repetition; a
        # start tag without quotes ends at its first '>' and skips the attribute grammar.
        # A tag spelled in no plain way takes the exact grammar, made atomic.
        body = ('(?>(%s))>' if POSSESSIVE_REGEX else '(?=(%s))\\2>') % _TAG_BODY
        regex = _scan_regexes[key] = re.compile(_scan_pattern(
            '()[^<]*%(p)s(?:<(?:/[^>]*%(p)s>|(?!(?:%(names)s)(?:[%(ws)s/>\x00]|\\Z))%(name)s'
            '(?:[^>"\']*%(p)s>|(?:%(attribute)s)*%(p)s%(end)s|%(body)s)'
            '|!(?!--)[^>]*%(p)s>|(?=[^a-zA-Z/!?]))[^<]*%(p)s)*%(p)s(?:%(link)s)?',
            names=names, name=_TAG_NAME, attribute=_PLAIN_ATTRIBUTE, end=_PLAIN_TAG_END,
            body=body, link=_PLAIN_LINK_TAG))
    return regex


def _attribute_value(tag_text, start, end, wanted):
    """The unescaped value of attribute `wanted` in a start tag's text, or None."""
    # The first of duplicated attributes wins, as in a browser.
    match = _ATTRIBUTE_VALUE_RES[wanted].match(tag_text, start, end)
    if match is None:
        return None
    return unescape_attribute(_value(*match.group(2, 3, 4)))


def _iter_attributes(tag_text, start, end):
    """(lower-case name, raw value) of each attribute in tag_text[start:end]."""
    while start < end:
        match = _ATTRIBUTE_RE.match(tag_text, start, end)
        if match is None:
            return
        yield match.group(1).lower(), _value(*match.group(2, 3, 4))
        start = match.end()


def _value(double, single, bare):
    """An attribute's raw value from the three value groups; '' if it has none."""
    return double if double is not None else single if single is not None else bare or ''


def _decode_reference(match):
    decimal, hexadecimal, name, semicolon = match.groups()
    if name is None:
        return _character(int(decimal) if decimal is not None else int(hexadecimal, 16))
    if name in _ENTITIES and (semicolon or name in _LEGACY_ENTITIES):
        if semicolon or match.string[match.end():match.end() + 1] != '=':
            return six.unichr(_ENTITIES[name])
    return match.group()


def _character(codepoint):
    if codepoint == 0 or 0xD800 <= codepoint <= 0xDFFF or codepoint > 0x10FFFF:
        return u'\ufffd'
    return six.unichr(codepoint)


_OTHER_SCHEME_RE = re.compile(r'[%s]*[a-zA-Z][a-zA-Z0-9+.-]*:' % _WHITESPACE)
_BAD_PERCENT_RE = re.compile('%(?![0-9a-fA-F]{2})')


def _href_problem(base_url, href):
    """Why `href` is no URL though meant as an http(s) one, or None."""
    scheme = _OTHER_SCHEME_RE.match(href)
    if scheme and scheme.group().strip().lower() not in ('http:', 'https:'):
        return None  # mailto:, javascript:...: not the crawl's
    if _BAD_PERCENT_RE.search(href):  # fetched as %25, which is not what was meant
        return "a '%' not followed by two hex digits"
    try:
        urljoin(base_url, href)
    except ValueError as e:
        return str(e)
    return None


def _resolve(base_url, href):
    """`href` resolved against `base_url` and normalised, or None if it is no http(s) URL."""
    if href is None:
        return None
    try:
        return urljoin(base_url, href)
    except ValueError:
        return None


# Byte order marks, longest first. A BOM overrides every declaration.
_BOMS = ((codecs.BOM_UTF8, 'utf-8'), (codecs.BOM_UTF16_LE, 'utf-16-le'),
         (codecs.BOM_UTF16_BE, 'utf-16-be'))
_CHARSET_PARAMETER_RE = re.compile('charset[%s]*=[%s]*["\']?([^%s"\';]+)' %
                                   (_WHITESPACE, _WHITESPACE, _WHITESPACE), re.I)
_META_PRESCAN_BYTES = 1024
_COMMENT_RE = re.compile('<!--.*?-->', re.S)
# ASCII case-insensitive without re.I, which would keep the search from skipping to each '<'.
_META_RE = re.compile('<%s[%s/][^>]*' % (_ascii_case_insensitive('meta'), _WHITESPACE))
_ASCII_PROBE = b'<meta charset="x">'


def _meta_charset(body):
    """The charset a ``<meta>`` in the first bytes of `body` declares, or None."""
    head = _COMMENT_RE.sub('', body[:_META_PRESCAN_BYTES].decode('latin-1'))
    for match in _META_RE.finditer(head):
        attributes = _attributes(match.group(), len('<meta'))
        if 'charset' in attributes:
            return attributes['charset']
        if attributes.get('http-equiv', '').strip().lower() == 'content-type':
            charset = content_type_charset(attributes.get('content'))
            if charset:
                return charset
    return None


def _attributes(tag_text, start):
    """{name: unescaped value} of a start tag's text; the first of duplicates wins."""
    attributes = {}
    for name, value in _iter_attributes(tag_text, start, len(tag_text)):
        attributes.setdefault(name, unescape_attribute(value))
    return attributes


def _text_codec(label, ascii_compatible):
    """The Python codec name for a charset label, or None if it names no usable charset."""
    if not label:
        return None
    try:
        info = codecs.lookup(label.strip())
    except (LookupError, ValueError, TypeError):
        return None  # unknown, or not even a name (embedded NUL, non-ASCII on 2.7)
    # Bytes-to-bytes codecs (base64, zlib, ...) are no charset, but 2.7 decodes with them.
    if not getattr(info, '_is_text_encoding', True):
        return None
    try:
        decoded = _ASCII_PROBE.decode(info.name)
    except UnicodeError:
        return None  # the 'undefined' codec
    if not isinstance(decoded, six.text_type):
        return None  # 2.7's string_escape
    if ascii_compatible and decoded != _ASCII_PROBE.decode('ascii'):
        return None  # a <meta> that says UTF-16 was read as ASCII, so it is wrong
    return info.name
