"""URL normalisation, joining and hashing for the crawler's seen set.

Two spellings of one resource must meet in the seen set, so every URL the crawler keeps is
normalised (RFC 3986 section 6.2.2 plus the scheme-based steps of 6.2.3): scheme and host
lower-cased, the default port dropped, percent-encoding normalised (unreserved characters
decoded, hex digits upper-cased, characters that may not appear raw encoded as UTF-8), dot
segments removed, an empty path made '/', the fragment dropped, international host names
turned to punycode and IPv6 literals kept bracketed in their canonical compressed form.

Invariant: every URL returned here is an ASCII native ``str`` on which `normalize_url` is the
identity. Only http and https URLs are accepted; anything else raises ``ValueError``.
"""
from __future__ import absolute_import, division, print_function

import hashlib
import re
import socket
import struct

import six
from six.moves.urllib.parse import quote

__all__ = ['DEFAULT_PORTS', 'normalize_url', 'urljoin', 'urljoin_all', 'is_http_url', 'url_host',
           'url_hash', 'remove_dot_segments']

DEFAULT_PORTS = {'http': '80', 'https': '443'}

# RFC 3986 appendix B, with the scheme restricted to valid scheme characters so that
# "not a scheme:..." stays a relative path, as browsers read it. Groups: scheme, authority,
# path, query; a group is None when its delimiter is absent, '' when present but empty.
_URI_RE = re.compile(
    r'\A(?:([A-Za-z][A-Za-z0-9+.\-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?\Z',
    re.S)

_UNRESERVED = frozenset('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~')
_SUB_DELIMS = "!$&'()*+,;="
_USERINFO_SAFE = "-._~" + _SUB_DELIMS + ":"
_PATH_SAFE = _USERINFO_SAFE + "@/"
_QUERY_SAFE = _PATH_SAFE + "?"

_PERCENT_RE = re.compile(r'%([0-9A-Fa-f]{2})?')
_HOST_RE = re.compile(r"\A[a-z0-9\-._~!$&'()*+,;=]+\Z")
_PORT_RE = re.compile(r'\A[0-9]*\Z')
# Whitespace a browser ignores: leading and trailing C0 controls and spaces, and any tab or
# newline inside (WHATWG URL standard), which HTML attributes often contain.
_C0_AND_SPACE = u''.join(six.unichr(codepoint) for codepoint in range(0x21))
_TAB_NEWLINE_RE = re.compile(u'[\t\n\r]')
_NON_ASCII_RE = re.compile(u'[^\x00-\x7f]')


def _unsafe_re(safe):
    """A regex finding a character that has to be percent-encoded in a component."""
    return re.compile('[^A-Za-z0-9%' + re.escape(safe) + ']')


# The hrefs urljoin_all may join by concatenation, one a line (re.M): a path, with no
# scheme and no authority, and a query, made only of characters that stay as they are in
# the normal form; the group leaves out the fragment and a '?' with nothing after it, which
# the normal form drops, and the whitespace around, which a browser ignores (the lines hold
# no newline). A path with a dot segment or an empty segment still matches: the caller
# looks for '/.' and '//', which is quicker than a regex that does. Any other line matches
# with the group empty. (Groups repeated as a whole, like '(?:/segment)*', cost the regex
# engine more than a page's other work on its links.)
_PLAIN_REFERENCES_RE = re.compile(
    r"^[\x00-\x09\x0b-\x20]*([A-Za-z0-9\-_~!$&'()*+,;=@/][A-Za-z0-9\-._~!$&'()*+,;=@/]*"
    r"(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?]+|))\??(?:#.*|[\x00-\x09\x0b-\x20]*)$|^.*$", re.M)

_MAX_CACHED_NETLOCS = 1024
_netlocs = {}
_MAX_CACHED_BASES = 1024
_split_bases = {}
_UNSAFE = {safe: _unsafe_re(safe) for safe in (_USERINFO_SAFE, _PATH_SAFE, _QUERY_SAFE)}


def normalize_url(url):
    """The normal form of the absolute http(s) URL `url` (text or native str).

    Raises:
        ValueError: `url` is relative, not http(s), or has an invalid host or port.
    """
    scheme, authority, path, query = _split(_clean(url))
    if scheme is None or authority is None:
        raise ValueError('not an absolute URL: %r' % (url,))
    return _recompose(scheme.lower(), authority, path, query)


def urljoin(base, reference):
    """Resolve `reference` (an href) against the normalised URL `base`; normalise the result.

    RFC 3986 section 5.2, with the browser readings of an href: surrounding whitespace and
    inner tabs and newlines ignored, backslashes read as slashes, and "http:path" on an
    http base read as a relative reference.

    Raises:
        ValueError: the result is not an http(s) URL (mailto:, javascript:, ...) or is invalid.
    """
    return _join(_split(base), reference)


def _join(base_parts, reference):
    """urljoin on the base's (scheme, authority, path, query)."""
    base_scheme, base_authority, base_path, base_query = base_parts
    scheme, authority, path, query = _split(_clean(reference))
    if scheme is not None:
        scheme = scheme.lower()
        if authority is not None or scheme != base_scheme:
            if authority is None:
                raise ValueError('not an absolute URL: %r' % (reference,))
            return _recompose(scheme, authority, path, query)
    if authority is not None:
        return _recompose(base_scheme, authority, path, query)
    if not path:
        path = base_path
        if query is None:
            query = base_query
    elif not path.startswith('/'):
        # RFC 3986 5.2.3: replace the base's last segment.
        path = (base_path or '/').rpartition('/')[0] + '/' + path
    return _recompose(base_scheme, base_authority, path, query)


def urljoin_all(base, references):
    """[urljoin(base, reference) for reference in references], with None for a reference
    that makes urljoin raise ValueError.

    Quicker than a call each: the base is looked at once, and one regex finds the plain
    paths among the references (most of a page's links), which are joined by concatenation.
    """
    base_parts, origin, directory = _split_base(base)
    if origin is None:
        return [_join_or_none(base_parts, reference) for reference in references]
    lines = '\n'.join(references)
    if lines.count('\n') >= len(references):  # some reference holds a newline: no plain one
        lines = '\n'.join([reference.replace('\n', ' ') for reference in references])
    urls = []
    # On 2.7 the lines are matched as UTF-8 bytes, so that what is joined is a native str.
    plains = _PLAIN_REFERENCES_RE.findall(six.ensure_str(lines))
    for reference, plain in zip(references, plains):
        if plain and '/.' not in plain and '//' not in plain:
            urls.append((origin if plain[0] == '/' else directory) + plain)
        else:
            urls.append(_join_or_none(base_parts, reference))
    return urls


def is_http_url(url):
    """True if `url` is an absolute http or https URL with a host."""
    scheme, authority, _, _ = _split(url)
    return (scheme is not None and scheme.lower() in DEFAULT_PORTS and
            bool(authority) and authority.rpartition('@')[2][:1] not in ('', ':'))


def url_host(url):
    """The host of the normalised URL `url`: no port, IPv6 literals kept in brackets."""
    hostport = _split(url)[1].rpartition('@')[2]
    return _split_host_port(hostport)[0]


def url_hash(url):
    """A 64-bit fingerprint of the normalised URL `url`, equal on every run and Python.

    Stands in for the URL in a memory-saving seen set. Built on SHA-1 (not ``hash()``, which
    is salted per process on 3.x): with 10**8 URLs the chance of any collision is about 3e-4.
    """
    digest = hashlib.sha1(six.ensure_binary(url, 'utf-8')).digest()
    return struct.unpack('>Q', digest[:8])[0]


def remove_dot_segments(path):
    """RFC 3986 5.2.4 on an absolute path: '/a/./b/../c' -> '/a/c'."""
    if '/.' not in path:
        return path  # every dot segment follows a slash
    segments = path.split('/')[1:]
    output = []
    for segment in segments:
        if segment == '..':
            if output:
                output.pop()
        elif segment != '.':
            output.append(segment)
    if segments[-1] in ('.', '..'):
        # '/a/b/..' names the directory '/a/', so the trailing slash stays.
        output.append('')
    return '/' + '/'.join(output)


def _split_base(base):
    """(scheme, authority, path, query) of `base`, then what plain absolute and relative
    paths extend: its origin, and its directory with the trailing slash (both None if `base`
    is not in normal form)."""
    split = _split_bases.get(base)
    if split is None:
        if len(_split_bases) >= _MAX_CACHED_BASES:
            _split_bases.clear()
        parts = _split(base)
        split = (parts, None, None)
        if _is_normal(base, parts):
            scheme, authority, path, _ = parts
            origin = scheme + '://' + authority
            split = (parts, origin, origin + path.rpartition('/')[0] + '/')
        _split_bases[base] = split
    return split


def _is_normal(url, parts):
    """normalize_url(url) == url, found quickly when the path and query of `url` (split into
    `parts`) are plain and its authority was met before."""
    scheme, authority, path, query = parts
    tail = path if query is None else path + '?' + query
    if (scheme in DEFAULT_PORTS and authority and tail[:1] == '/' and '#' not in url and
            _PLAIN_REFERENCES_RE.match(tail).group(1) == tail and
            '/.' not in tail and '//' not in tail):
        try:
            return _normalize_authority(authority, DEFAULT_PORTS[scheme]) == authority
        except ValueError:
            return False
    try:
        return normalize_url(url) == url
    except ValueError:
        return False


def _join_or_none(base_parts, reference):
    try:
        return _join(base_parts, reference)
    except ValueError:
        return None


def _clean(url):
    """`url` as text, without the whitespace a browser ignores, backslashes as slashes."""
    if isinstance(url, six.binary_type):
        url = url.decode('utf-8')
    url = url.strip(_C0_AND_SPACE)
    if _TAB_NEWLINE_RE.search(url):
        url = _TAB_NEWLINE_RE.sub(u'', url)
    if '\\' in url:
        # Only before the query: a backslash in a query or fragment is data.
        end = len(url.split('?', 1)[0].split('#', 1)[0])
        url = url[:end].replace('\\', '/') + url[end:]
    return url


def _split(url):
    """(scheme, authority, path, query) of `url`; absent parts are None."""
    return _URI_RE.match(url).group(1, 2, 3, 4)


def _recompose(scheme, authority, path, query):
    """The normalised URL from its parts; `scheme` is already lower-case."""
    if scheme not in DEFAULT_PORTS:
        raise ValueError('not an http or https URL: %r' % (scheme,))
    netloc = _normalize_authority(authority, DEFAULT_PORTS[scheme])
    # Percent-decoding first: '%2E%2E' is a dot segment once decoded (RFC 3986 6.2.2).
    path = remove_dot_segments(_normalize_component(path, _PATH_SAFE) or '/')
    if query:
        path += '?' + _normalize_component(query, _QUERY_SAFE)
    return six.ensure_str(scheme + '://' + netloc + path)


def _normalize_authority(authority, default_port):
    # A crawl meets few authorities many times over; IDNA and IPv6 work is done once each.
    key = (authority, default_port)
    netloc = _netlocs.get(key)
    if netloc is None:
        if len(_netlocs) >= _MAX_CACHED_NETLOCS:
            _netlocs.clear()
        netloc = _netlocs[key] = _parse_authority(authority, default_port)
    return netloc


def _parse_authority(authority, default_port):
    userinfo, at, hostport = authority.rpartition('@')
    host, port = _split_host_port(hostport)
    host = _normalize_host(host)
    if port is not None:
        if not _PORT_RE.match(port) or (port and int(port) > 65535):
            raise ValueError('invalid port: %r' % (port,))
        port = str(int(port)) if port else default_port
        if port != default_port:
            host += ':' + port
    if at:
        return _normalize_component(userinfo, _USERINFO_SAFE) + '@' + host
    return host


def _split_host_port(hostport):
    """(host, port or None); a bracketed IPv6 literal keeps its brackets."""
    if hostport.startswith('['):
        end = hostport.find(']') + 1
        if not end or hostport[end:end + 1] not in ('', ':'):
            raise ValueError('invalid IPv6 literal: %r' % (hostport,))
        host, rest = hostport[:end], hostport[end:]
    else:
        host, colon, port = hostport.partition(':')
        rest = colon + port
    return host, (rest[1:] if rest else None)


def _normalize_host(host):
    if host.startswith('['):
        return '[' + _normalize_ipv6(host[1:-1]) + ']'
    host = host.lower()
    if host.endswith('.'):
        # 'example.com.' is the fully qualified spelling of 'example.com'.
        host = host[:-1]
    if _NON_ASCII_RE.search(host):
        host = host.encode('idna').decode('ascii')  # UnicodeError is a ValueError
    if not _HOST_RE.match(host):
        raise ValueError('invalid host: %r' % (host,))
    return host


def _normalize_ipv6(address):
    try:
        packed = socket.inet_pton(socket.AF_INET6, six.ensure_str(address))
    except (socket.error, ValueError, UnicodeError):
        raise ValueError('invalid IPv6 address: %r' % (address,))
    return socket.inet_ntop(socket.AF_INET6, packed)


def _fix_escape(match):
    hexdigits = match.group(1)
    if hexdigits is None:
        return '%25'  # a lone '%' is data
    char = chr(int(hexdigits, 16))
    return char if char in _UNRESERVED else '%' + hexdigits.upper()


def _normalize_component(text, safe):
    """`text` with escapes normalised and every character outside `safe` UTF-8 encoded."""
    if '%' in text:
        text = _PERCENT_RE.sub(_fix_escape, text)
    if _UNSAFE[safe].search(text):
        # quote() on UTF-8 bytes behaves the same on 2.7 and 3.x; '~' is listed because
        # quote() only treats it as safe from 3.7 on.
        text = quote(text.encode('utf-8'), safe + '%~')
    return text
