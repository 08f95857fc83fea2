"""Escaping and unescaping for HTML, JSON and URLs, and text/bytes conversions, as Tornado 5.1's.

Legacy code leans on these everywhere (``utf8``, ``to_unicode``, ``json_decode``,
``url_escape``...). Each gives the same answer on Python 2.7 and 3.x where Tornado 5.1's
did; where 5.1's two versions disagreed, tinytornado answers as 5.1 did on Python 3:

- ``url_unescape`` with an encoding replaces bytes that are not valid in it with U+FFFD
  (5.1 on 2.7 raised UnicodeDecodeError), and its input should be ASCII, as 5.1 asks.
- ``parse_qs_bytes`` splits fields on ``&`` only, as Python 3.6.13+ and 3.9.2+ do (2.7's
  parser also split on ``;``).
- ``xhtml_unescape`` and ``linkify`` read ``\\w``, ``\\s`` and word boundaries in Unicode
  (2.7's ``re`` read them in ASCII); an entity naming no character is left as it is.
"""
from __future__ import absolute_import, division, print_function

import json
import re

from six.moves import html_entities
from six.moves.urllib.parse import quote, quote_plus, unquote_to_bytes

from tinytornado._compat import (
    binary_type, native_str as latin1_native_str, string_types, text_type, unichr,
)

__all__ = [
    'utf8', 'to_unicode', 'native_str', 'to_basestring', 'recursive_unicode',
    'json_encode', 'json_decode', 'squeeze', 'url_escape', 'url_unescape', 'parse_qs_bytes',
    'xhtml_escape', 'xhtml_unescape', 'linkify',
]


# --- Text and bytes ----------------------------------------------------------------------

def _not_a_string(value):
    return TypeError('expected bytes, unicode or None, not %r' % type(value))


def utf8(value):
    """`value` as bytes: text is encoded as UTF-8; bytes and None come back as they are.

    Raises:
        TypeError: `value` is neither bytes, text nor None.
    """
    if value is None or isinstance(value, binary_type):
        return value
    if not isinstance(value, text_type):
        raise _not_a_string(value)
    return value.encode('utf-8')


def to_unicode(value):
    """`value` as text: bytes are decoded as UTF-8; text and None come back as they are.

    Raises:
        TypeError: `value` is neither bytes, text nor None.
        UnicodeDecodeError: bytes that are not UTF-8.
    """
    if value is None or isinstance(value, text_type):
        return value
    if not isinstance(value, binary_type):
        raise _not_a_string(value)
    return value.decode('utf-8')


# Tornado named it so to stay clear of 2.7's builtin unicode(); legacy code still uses it.
_unicode = to_unicode


def native_str(value):
    """`value` as the native ``str`` by UTF-8: bytes on 2.7, text on 3.x; None stays None."""
    if value is None or isinstance(value, str):
        return value
    # Only the other kind of string gets here: text on 2.7, bytes on 3.x.
    return utf8(value) if isinstance(value, text_type) else to_unicode(value)


def to_basestring(value):
    """`value` as a string type the standard library takes on this Python.

    Text stays text, and so do bytes on 2.7 (where they mix with text); on 3.x bytes are
    decoded as UTF-8. None stays None.
    """
    if value is None or isinstance(value, string_types):
        return value
    return to_unicode(value)


def recursive_unicode(obj):
    """`obj` with every bytes value inside dicts, lists and tuples decoded as UTF-8."""
    if isinstance(obj, dict):
        return dict((recursive_unicode(key), recursive_unicode(value))
                    for key, value in obj.items())
    if isinstance(obj, list):
        return [recursive_unicode(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(recursive_unicode(item) for item in obj)
    if isinstance(obj, binary_type):
        return to_unicode(obj)
    return obj


def squeeze(value):
    """`value` with every run of whitespace and control characters made one space, stripped."""
    return re.sub(r'[\x00-\x20]+', ' ', value).strip()


# --- JSON ------------------------------------------------------------------------------------

def json_encode(value):
    """`value` as JSON text, with ``</`` written ``<\\/``.

    The escape is valid JSON and keeps ``</script>`` inside a string from closing the
    ``<script>`` element the JSON is embedded in.
    """
    return json.dumps(value).replace('</', '<\\/')


def json_decode(value):
    """The Python value of JSON `value` (text, or bytes in UTF-8); its strings are text."""
    return json.loads(to_basestring(value))


# --- URLs ------------------------------------------------------------------------------------

def url_escape(value, plus=True):
    """`value` (text is taken as UTF-8) percent-encoded, as the native str.

    Args:
        plus: spaces become ``+`` (for query strings and forms) rather than ``%20`` (for
            paths); unlike urllib, this is the default. ``/`` is escaped with ``plus``
            only.
    """
    return (quote_plus if plus else quote)(utf8(value))


def url_unescape(value, encoding='utf-8', plus=True):
    """Percent-decode `value` (text or bytes, in ASCII).

    Args:
        encoding: what the decoded bytes are decoded with (invalid bytes become U+FFFD);
            None returns the bytes themselves.
        plus: ``+`` means a space (a literal plus is ``%2B``), as in query strings and
            forms; unlike urllib, this is the default.
    """
    raw = utf8(value)
    if plus:
        raw = raw.replace(b'+', b' ')
    raw = unquote_to_bytes(raw)
    return raw if encoding is None else raw.decode(encoding, 'replace')


def parse_qs_bytes(qs, keep_blank_values=False, strict_parsing=False):
    """A query string as ``{name: [value, ...]}``, as ``parse_qs`` makes, but its values bytes.

    Names are the native str (percent-escapes decoded as latin-1 on 3.x, as in Tornado
    5.1); values are the exact bytes that were escaped, whatever their encoding.

    Args:
        qs: the query, text (of latin-1 characters) or bytes; fields are split on ``&``.
        keep_blank_values: keep fields with an empty value (``a=`` or ``a``) as ``b''``.
        strict_parsing: a field without ``=`` (an empty one too) raises ValueError.
    """
    result = {}
    for name, value in _query_fields(_query_bytes(qs), keep_blank_values, strict_parsing):
        result.setdefault(latin1_native_str(name), []).append(value)
    return result


def _query_bytes(qs):
    return qs.encode('latin-1') if isinstance(qs, text_type) else qs


def _query_fields(qs, keep_blank_values, strict_parsing):
    """The (name, value) pairs of query bytes `qs`, both unescaped, in order."""
    for field in qs.split(b'&'):
        if not field and not strict_parsing:
            continue
        name, equals, value = field.partition(b'=')
        if not equals:
            if strict_parsing:
                raise ValueError('bad query field: %r' % (field,))
            if not keep_blank_values:
                continue
        if value or keep_blank_values:
            yield (unquote_to_bytes(name.replace(b'+', b' ')),
                   unquote_to_bytes(value.replace(b'+', b' ')))


# --- HTML ------------------------------------------------------------------------------------

_XHTML_ESCAPES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}
_XHTML_SPECIAL = re.compile('[&<>"\']')
# Named references (HTML 4's, without the ;-less forms HTML5 tolerates) and numeric ones.
_CHARACTER_REFERENCE = re.compile(r'&(#?)(\w+?);', re.UNICODE)
_NAMED_CHARACTERS = dict((name, unichr(code))
                         for name, code in html_entities.name2codepoint.items())


def xhtml_escape(value):
    """`value` with ``& < > " '`` escaped, valid in HTML or XML text and quoted attributes.

    The result is text, or bytes on 2.7 if `value` is bytes (bytes are UTF-8 on 3.x).
    """
    return _XHTML_SPECIAL.sub(lambda match: _XHTML_ESCAPES[match.group(0)],
                              to_basestring(value))


def xhtml_unescape(value):
    """`value` (text, or bytes in UTF-8) as text, its character references replaced.

    ``&name;`` (HTML 4's names), ``&#NNN;`` and ``&#xHHH;`` become their character; a
    reference that names none stays as it was.
    """
    return _CHARACTER_REFERENCE.sub(_character, to_unicode(value))


def _character(match):
    numeric, name = match.groups()
    if not numeric:
        return _NAMED_CHARACTERS.get(name, match.group(0))
    try:
        if name[:1] in 'xX':
            return unichr(int(name[1:], 16))
        return unichr(int(name))
    except (ValueError, OverflowError):  # not a number, or beyond Unicode
        return match.group(0)


# linkify's URLs, found in HTML-escaped text. A URL holds no space or parenthesis, and
# '&' only as the &amp; and &quot; that escaping made; parentheses come in balanced pairs
# (as in Wikipedia's links). It does not end in punctuation, so a sentence's final '.' or
# ',' stays outside. Every repetition ends at a definite character, so the regex stays
# linear where a greedier one (Gruber's) backtracks without end on 'w(aaa...' or 'a....'.
_URL_CHARACTER = r'(?:[^\s&()]|&amp;|&quot;)'
_URL_LAST_CHARACTER = r'''[^!"#$%&'()*+,.:;<=>?@\[\]^`{|}~\s]'''
_URL = re.compile(
    r'\b('
    r'(?:([\w-]+):(/{1,3})|www[.])'  # groups 2 and 3: the protocol and its slashes
    r'(?:%(char)s*%(last)s|\(%(char)s*\))+'
    r')' % {'char': _URL_CHARACTER, 'last': _URL_LAST_CHARACTER}, re.UNICODE)
_MAX_LINK_TEXT = 30  # characters shown of a shortened link, roughly


def linkify(text, shorten=False, extra_params='', require_protocol=False,
            permitted_protocols=('http', 'https')):
    """`text` HTML-escaped, with its URLs made links: ``<a href="...">...</a>``.

    Args:
        shorten: show a long URL as its host and the start of its path, then ``...``; the
            whole URL becomes the link's title.
        extra_params: text added inside each ``<a>`` tag (``'rel="nofollow"'``), or a
            function of the link's href that returns it.
        require_protocol: leave URLs without one (``www.example.com``) as text; otherwise
            they link to ``http://`` and the URL.
        permitted_protocols: the protocols linked; other URLs stay text. Never add
            ``javascript``.
    """
    if extra_params and not callable(extra_params):
        extra_params = ' ' + extra_params.strip()

    def make_link(match):
        url, protocol, slashes = match.group(1, 2, 3)
        if require_protocol and not protocol:
            return url
        if protocol and protocol not in permitted_protocols:
            return url
        href = url if protocol else 'http://' + url
        if callable(extra_params):
            params = ' ' + extra_params(href).strip()
        else:
            params = extra_params
        shown = url
        if shorten and len(url) > _MAX_LINK_TEXT:
            shown = _shortened(url, len(protocol) + 1 + len(slashes) if protocol else 0)
            if shown != url:  # the whole URL shows on mouse-over
                params += ' title="%s"' % href
        return u'<a href="%s"%s>%s</a>' % (href, params, shown)

    return _URL.sub(make_link, to_unicode(xhtml_escape(text)))


def _shortened(url, protocol_length):
    """The text shown for long `url`: its host, the start of its path and '...'; or `url`
    itself if that is no shorter."""
    host_and_path = url[protocol_length:].split('/')
    short = url
    if len(host_and_path) > 1:
        # The path's first segment, 8 characters at most, says little more once shortened.
        segment = re.split(r'[?.]', host_and_path[1][:8])[0]
        short = url[:protocol_length] + host_and_path[0] + '/' + segment
    if len(short) > _MAX_LINK_TEXT * 1.5:
        short = short[:_MAX_LINK_TEXT]
    if short == url:
        return url
    ampersand = short.rfind('&')
    if ampersand > _MAX_LINK_TEXT - 5:  # do not cut an &amp; in two
        short = short[:ampersand]
    short += '...'
    return short if len(short) < len(url) else url
