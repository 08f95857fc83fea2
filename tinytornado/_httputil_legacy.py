"""Tornado 5.1's HTTP helpers that the client's protocol never uses, re-exported by
httputil: `url_concat`, `qs_to_qsl`, `parse_cookie`, the start-line parsers
`parse_request_start_line` and `parse_response_start_line`, the form parsers
`parse_body_arguments` and `parse_multipart_form_data`, and the server side's data object
`HTTPServerRequest` with the interfaces a server's parts implement (`HTTPMessageDelegate`,
`HTTPConnection`, `HTTPServerConnectionDelegate`).

They are here so that code and tests written against ``tornado.httputil`` run (and
httpserver serves its requests as HTTPServerRequest). Nothing in the core imports this
module; httputil re-exports its names at its end.
"""
from __future__ import absolute_import, division, print_function

import collections
import re
import ssl
import time
import warnings

from six import ensure_str
from six.moves import http_cookies
from six.moves.urllib.parse import (
    parse_qsl, unquote_to_bytes, urlencode, urlsplit, urlunsplit,
)

from tinytornado._compat import latin1_bytes, native_str
from tinytornado._http1parser import split_head
from tinytornado._objectdict import ObjectDict
from tinytornado.httputil import HTTPHeaders, HTTPInputError
from tinytornado.log import gen_log

__all__ = [
    'url_concat', 'qs_to_qsl', 'parse_cookie', 'RequestStartLine', 'parse_request_start_line',
    'ResponseStartLine', 'parse_response_start_line', 'HTTPFile', 'parse_body_arguments',
    'parse_multipart_form_data', 'split_host_and_port', 'HTTPServerRequest',
    'HTTPServerConnectionDelegate', 'HTTPMessageDelegate', 'HTTPConnection',
]


# --- URLs ------------------------------------------------------------------------------------

def url_concat(url, args):
    """`url` with `args` (a dict, a list or tuple of pairs, or None) added to its query.

    >>> url_concat('http://example.com/foo?a=b', dict(c='d'))
    'http://example.com/foo?a=b&c=d'
    """
    if args is None:
        return url
    if isinstance(args, dict):
        args = args.items()
    elif not isinstance(args, (list, tuple)):
        raise TypeError("'args' should be a dict, list or tuple, not %s" % (type(args),))
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query.extend(args)
    return urlunsplit(parts._replace(query=urlencode(query)))


def qs_to_qsl(qs):
    """Yield the (name, value) pairs of a ``parse_qs`` result, a name's values in order."""
    for name, values in qs.items():
        for value in values:
            yield name, value


# --- Cookies -----------------------------------------------------------------------------------

# In a quoted cookie value, a backslash escapes an octal byte (\012) or any one character.
_COOKIE_ESCAPE = re.compile(r'\\(?:([0-3][0-7][0-7])|(.))')


def parse_cookie(cookie):
    """A Cookie header's value as a dict of name -> value, parsed as browsers do.

    Every ';' ends a pair, even inside quotes; a pair without '=' is a value with the
    empty name; a name given twice keeps its last value. A value in double quotes loses
    them, and its backslash escapes are undone.
    """
    cookies = {}
    for pair in cookie.split(';'):
        name, equals, value = pair.partition('=')
        if not equals:
            name, value = '', name
        name, value = name.strip(), value.strip()
        if name or value:
            cookies[name] = _unquote_cookie(value)
    return cookies


def _unquote_cookie(value):
    if len(value) < 2 or value[0] != '"' or value[-1] != '"':
        return value
    return _COOKIE_ESCAPE.sub(_unescape, value[1:-1])


def _unescape(match):
    octal, character = match.groups()
    return character if octal is None else chr(int(octal, 8))


# --- Start lines -------------------------------------------------------------------------------

# A request line: "GET /index.html HTTP/1.1" (Tornado 5.1's fields).
RequestStartLine = collections.namedtuple('RequestStartLine', ['method', 'path', 'version'])
# A status line: "HTTP/1.1 200 OK", the code an int.
ResponseStartLine = collections.namedtuple('ResponseStartLine', ['version', 'code', 'reason'])

_HTTP1_VERSION = re.compile(r'HTTP/1\.[0-9]\Z')


def parse_request_start_line(line):
    """A request line ('GET /foo HTTP/1.1', native str) as a RequestStartLine.

    Raises:
        HTTPInputError: not three fields separated by single spaces, or a version other
            than HTTP/1.x.
    """
    fields = line.split(' ')
    if len(fields) != 3 or not all(fields):
        raise HTTPInputError('malformed HTTP request line: %r' % (line,))
    method, path, version = fields
    if not _HTTP1_VERSION.match(version):
        raise HTTPInputError('malformed HTTP version in request line: %r' % (line,))
    return RequestStartLine(method, path, version)


def parse_response_start_line(line):
    """A status line ('HTTP/1.1 200 OK', native str or bytes) as a ResponseStartLine.

    The line is checked as the client checks the responses it reads; a CRLF after it is
    allowed.

    Raises:
        HTTPInputError: the line is not an HTTP/1.x status line with a three-digit code.
    """
    text = native_str(line)
    if text.endswith('\r\n'):
        text = text[:-2]
    try:
        minor, code, reason, more_lines = split_head(text)
    except ValueError as exc:
        raise HTTPInputError('malformed HTTP response start line: %s' % (exc,))
    if more_lines:
        raise HTTPInputError('malformed HTTP response start line: more than one line in %r'
                             % (line,))
    return ResponseStartLine('HTTP/1.' + minor, code, reason)


# --- Form bodies -------------------------------------------------------------------------------

class HTTPFile(ObjectDict):
    """A file uploaded in a multipart/form-data body: ``filename``, ``body`` (bytes) and
    ``content_type``, read as attributes or as keys."""


def parse_body_arguments(content_type, body, arguments, files, headers=None):
    """Add the fields of a form body to `arguments` and its uploaded files to `files`.

    Args:
        content_type: the Content-Type (native str). Bodies of
            application/x-www-form-urlencoded and multipart/form-data are parsed; any
            other is left alone.
        body: bytes.
        arguments: a dict of name -> list of values (bytes), extended in place.
        files: a dict of name -> list of `HTTPFile`, extended in place.
        headers: the request's headers, if there are any: a body with a Content-Encoding
            is not parsed.

    Names are native strings. A body that cannot be parsed is a warning on gen_log, as in
    Tornado 5.1: the fields it holds are simply absent.
    """
    if headers and 'Content-Encoding' in headers:
        gen_log.warning('Unsupported Content-Encoding: %s', headers['Content-Encoding'])
        return
    if content_type.startswith('application/x-www-form-urlencoded'):
        try:
            # Bytes beyond ASCII should have been percent-encoded; a body that is not even
            # UTF-8 is refused, as Tornado 5.1 refused it on Python 3.
            body.decode('utf-8')
        except UnicodeDecodeError as e:
            gen_log.warning('Invalid x-www-form-urlencoded body: %s', e)
            return
        for name, values in _parse_qs_bytes(native_str(body)).items():
            arguments.setdefault(name, []).extend(values)
    elif content_type.startswith('multipart/form-data'):
        try:
            boundary = _parse_header(content_type)[1].get('boundary')
            if not boundary:
                raise ValueError('multipart boundary not found')
            parse_multipart_form_data(latin1_bytes(boundary), body, arguments, files)
        except ValueError as e:
            gen_log.warning('Invalid multipart/form-data: %s', e)


def parse_multipart_form_data(boundary, data, arguments, files):
    """Add the fields of a multipart/form-data body to `arguments` and its files to `files`.

    Args:
        boundary: the Content-Type's boundary parameter (bytes), in quotes or not.
        data: the body (bytes).
        arguments, files: dicts extended in place, as `parse_body_arguments` takes them.

    Field names, file names and content types are native strings, read as UTF-8 (what
    browsers send); an RFC 5987 ``filename*=UTF-8''...`` is text (on 2.7 too) and wins over
    ``filename``. Values and file bodies are bytes. A body without its final boundary, or a
    malformed part, is a warning on gen_log and is skipped, as in Tornado 5.1.

    Raises:
        ValueError: the boundary is empty.
    """
    if len(boundary) >= 2 and boundary.startswith(b'"') and boundary.endswith(b'"'):
        boundary = boundary[1:-1]
    if not boundary:
        raise ValueError('empty multipart boundary')
    delimiter = b'--' + boundary
    end = data.rfind(delimiter + b'--')
    if end == -1:
        gen_log.warning('Invalid multipart/form-data: no final boundary')
        return
    # What comes before the first delimiter is a preamble, which RFC 2046 says to ignore.
    for part in data[:end].split(delimiter + b'\r\n')[1:]:
        if part:
            _parse_part(part, arguments, files)


def _parse_part(part, arguments, files):
    """Add one part of a multipart body (the bytes between two delimiters) to `arguments` or
    `files`, or say on gen_log why it cannot be."""
    head_end = part.find(b'\r\n\r\n')
    if head_end == -1:
        gen_log.warning('multipart/form-data missing headers')
        return
    try:
        headers = HTTPHeaders.parse(ensure_str(part[:head_end].decode('utf-8')))
        disposition, params = _parse_header(headers.get('Content-Disposition', ''))
    except (ValueError, HTTPInputError) as e:  # not UTF-8, a malformed line or parameter
        gen_log.warning('Invalid multipart/form-data: %s', e)
        return
    if disposition.lower() != 'form-data':
        gen_log.warning("Invalid multipart/form-data: a part's Content-Disposition is %r, not "
                        "form-data", disposition)
    elif not part.endswith(b'\r\n'):
        gen_log.warning('Invalid multipart/form-data: no CRLF before a boundary')
    elif not params.get('name'):
        gen_log.warning('multipart/form-data value missing name')
    elif params.get('filename'):
        files.setdefault(params['name'], []).append(HTTPFile(
            filename=params['filename'], body=part[head_end + 4:-2],
            content_type=headers.get('Content-Type', 'application/unknown')))
    else:
        arguments.setdefault(params['name'], []).append(part[head_end + 4:-2])


# One ';'-separated piece of a header value: a ';' in a quoted string does not end it. Each
# character has one way to match, so a quote left open costs one pass, not a backtrack.
_HEADER_PIECE = re.compile(r'(?:[^";]+|"(?:[^"\\]|\\.)*"|")*', re.DOTALL)
_QUOTED_PAIR = re.compile(r'\\([\\"])')


def _parse_header(line):
    """('form-data', {'name': 'a'}) for 'form-data; name="a"': a value of the Content-Type
    kind, as its first piece and a dict of its parameters (Tornado 5.1's private helper).

    Parameter names are lower-cased; a quoted value loses its quotes and the backslash of
    each \\\\ and \\" in it (other backslashes stay: browsers send Windows paths as they
    are). An RFC 5987 value (``name*=UTF-8''%C3%A1``) is decoded to text and replaces the
    plain value of its name. Pieces without '=' are ignored.

    Raises:
        ValueError: an RFC 5987 value that is malformed, not in its charset, or in a
            charset Python does not know.
    """
    pieces, start = [], 0
    while start <= len(line):
        piece = _HEADER_PIECE.match(line, start).group()
        pieces.append(piece)
        start += len(piece) + 1  # past the ';'
    params, extended = {}, {}
    for piece in pieces[1:]:
        name, equals, value = piece.partition('=')
        if not equals:
            continue
        name, value = name.strip().lower(), _unquote(value.strip())
        if name.endswith('*'):
            extended[name[:-1]] = _decode_extended(value)
        else:
            params[name] = value
    params.update(extended)
    return pieces[0].strip(), params


def _unquote(value):
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return _QUOTED_PAIR.sub(r'\1', value[1:-1])
    return value


def _decode_extended(value):
    """The text of an RFC 5987 value: "UTF-8''%C3%A1b.txt" -> u'\\xe1b.txt'."""
    charset, quote, rest = value.partition("'")
    _language, second_quote, encoded = rest.partition("'")
    if not (quote and second_quote):
        raise ValueError('malformed RFC 5987 parameter value %r' % (value,))
    try:
        return unquote_to_bytes(encoded).decode(charset)
    except LookupError:
        raise ValueError('unknown charset %r in RFC 5987 parameter value' % (charset,))


def _parse_qs_bytes(query):
    """name -> list of values of a query string or form body (native str, latin-1): names
    are native strings, values bytes, blank values kept.

    Not urllib's parse_qs: on 3.x it would need encoding='latin-1' (to give back the bytes
    sent), which 2.7's lacks, and whether ';' separates too depends on the patch release;
    here only '&' does, everywhere.
    """
    arguments = {}
    for field in query.split('&'):
        if field:
            name, _, value = field.partition('=')
            arguments.setdefault(native_str(_form_unquote(name)), []).append(_form_unquote(value))
    return arguments


def _form_unquote(text):
    return unquote_to_bytes(latin1_bytes(text.replace('+', ' ')))


# --- The server side: a request's data and the interfaces of a server's parts ---------------

_HOST_AND_PORT = re.compile(r'(.+):([0-9]+)\Z', re.DOTALL)


def split_host_and_port(netloc):
    """('example.com', 8080) for 'example.com:8080'; the port is None when there is none."""
    match = _HOST_AND_PORT.match(netloc)
    if match is None:
        return netloc, None
    return match.group(1), int(match.group(2))


class HTTPServerRequest(object):
    """One HTTP request as a server received it: Tornado 5.1's data object.

    httpserver makes it for a request callback; tests and legacy code make their own.
    `uri` is required; the rest is optional. `start_line`, a RequestStartLine, gives method, uri
    and version at once.

    Attributes (native strings unless said otherwise):
        method, uri, version ('HTTP/1.0' by default), path, query: the request line's.
        headers: an HTTPHeaders (or the mapping given).
        body: bytes.
        remote_ip, protocol: from ``connection.context`` when it has them, else None and
            'http'.
        host: the `host` given, else the Host header, else '127.0.0.1'; host_name is it
            lower-cased without its port.
        arguments: name -> list of values (bytes): the query's, and the body's once
            `parse_body` has run. query_arguments and body_arguments hold each alone.
        files: name -> list of `HTTPFile`.
        connection: the request's `HTTPConnection`, or None; server_connection: opaque.
    """

    def __init__(self, method=None, uri=None, version='HTTP/1.0', headers=None, body=None,
                 host=None, files=None, connection=None, start_line=None,
                 server_connection=None):
        if start_line is not None:
            method, uri, version = start_line
        if uri is None:
            raise TypeError('HTTPServerRequest needs a uri')
        self.method, self.uri, self.version = method, uri, version
        self.headers = HTTPHeaders() if headers is None else headers
        self.body = b'' if body is None else body
        context = getattr(connection, 'context', None)
        self.remote_ip = getattr(context, 'remote_ip', None)
        self.protocol = getattr(context, 'protocol', 'http')
        self.host = host or self.headers.get('Host') or '127.0.0.1'
        self.host_name = split_host_and_port(self.host.lower())[0]
        self.files = {} if files is None else files
        self.connection, self.server_connection = connection, server_connection
        self._start_time = time.time()  # wall-clock, as 5.1's request_time() reports
        self._finish_time = None
        self._cookies = None
        self.path, _, self.query = uri.partition('?')
        if self.query:
            self.arguments = _parse_qs_bytes(self.query)
            self.query_arguments = dict((name, list(values))
                                        for name, values in self.arguments.items())
        else:  # most requests: nothing to parse
            self.arguments, self.query_arguments = {}, {}
        self.body_arguments = {}

    @property
    def cookies(self):
        """The Cookie header as a ``SimpleCookie`` (name -> Morsel), made on first use."""
        if self._cookies is None:
            self._cookies = http_cookies.SimpleCookie()
            if 'Cookie' in self.headers:
                for name, value in parse_cookie(self.headers['Cookie']).items():
                    self._add_cookie(name, value)
        return self._cookies

    def _add_cookie(self, name, value):
        try:
            self._cookies[name] = value
        except http_cookies.CookieError as e:
            # SimpleCookie refuses names that browsers send (parse_cookie does not): as in
            # 5.1, such a cookie is left out rather than failing the request.
            gen_log.debug('Cookie %r left out: %s', name, e)

    def full_url(self):
        """The URL the request was for: protocol, host and uri."""
        return self.protocol + '://' + self.host + self.uri

    def request_time(self):
        """Seconds since the request was made, or until `finish` if it was called."""
        end = time.time() if self._finish_time is None else self._finish_time
        return end - self._start_time

    def supports_http_1_1(self):
        """Deprecated, as in Tornado 5.1: ``request.version == 'HTTP/1.1'``."""
        warnings.warn('supports_http_1_1() is deprecated, use request.version instead',
                      DeprecationWarning, stacklevel=2)
        return self.version == 'HTTP/1.1'

    def write(self, chunk, callback=None):
        """Deprecated, as in Tornado 5.1: ``request.connection.write(chunk, callback)``."""
        warnings.warn('req.write deprecated, use req.connection.write and write_headers '
                      'instead', DeprecationWarning, stacklevel=2)
        return self.connection.write(chunk, callback=callback)

    def finish(self):
        """Deprecated, as in Tornado 5.1: ``request.connection.finish()``, and the time
        `request_time` stops at."""
        warnings.warn('req.finish deprecated, use req.connection.finish instead',
                      DeprecationWarning, stacklevel=2)
        self.connection.finish()
        self._finish_time = time.time()

    def get_ssl_certificate(self, binary_form=False):
        """The client's TLS certificate (``getpeercert()`` of the connection's socket), or
        None when there is none."""
        try:
            return self.connection.stream.socket.getpeercert(binary_form=binary_form)
        except ssl.SSLError:
            return None

    def parse_body(self):
        """Parse the body's form fields into body_arguments, arguments and files (once
        the body has been read whole; the server and web.Application call it)."""
        parse_body_arguments(self.headers.get('Content-Type', ''), self.body,
                             self.body_arguments, self.files, self.headers)
        for name, values in self.body_arguments.items():
            self.arguments.setdefault(name, []).extend(values)

    _parse_body = parse_body  # Tornado 5.1's name, which legacy code calls

    def __repr__(self):
        # Not the headers: they may hold credentials, and reprs end up in logs.
        return '%s(%s)' % (type(self).__name__, ', '.join(
            '%s=%r' % (name, getattr(self, name)) for name in self._REPR_FIELDS))

    _REPR_FIELDS = ('protocol', 'host', 'method', 'uri', 'version', 'remote_ip')


class HTTPServerConnectionDelegate(object):
    """What an HTTP server hands each connection's requests to (Tornado 5.1's interface)."""

    def start_request(self, server_conn, request_conn):
        """A request begins on `request_conn` (an HTTPConnection) of the long-lived
        `server_conn`: return the HTTPMessageDelegate that will receive it."""
        raise NotImplementedError()

    def on_close(self, server_conn):
        """`server_conn`, seen earlier by start_request, has closed."""


class HTTPMessageDelegate(object):
    """Receives one HTTP request or response as it is read (Tornado 5.1's interface).

    Every method does nothing unless overridden. After headers_received, either `finish`
    or `on_connection_close` is called, never both.
    """

    def headers_received(self, start_line, headers):
        """The head was read: a RequestStartLine or ResponseStartLine, and the HTTPHeaders.
        May return a Future: the body is not read before it is done."""

    def data_received(self, chunk):
        """A piece of the body (bytes). May return a Future, for flow control."""

    def finish(self):
        """The whole message has been received."""

    def on_connection_close(self):
        """The connection closed before the message was whole."""


class HTTPConnection(object):
    """What a server gives an application to write its response with (Tornado 5.1's
    interface); every method must be implemented."""

    def write_headers(self, start_line, headers, chunk=None, callback=None):
        """Write the head (the start line's version is ignored) and, optionally, the first
        `chunk` of the body. Returns a Future unless `callback` (deprecated) is given."""
        raise NotImplementedError()

    def write(self, chunk, callback=None):
        """Write a piece of the body. Returns a Future unless `callback` (deprecated) is
        given."""
        raise NotImplementedError()

    def finish(self):
        """The body has been written whole."""
        raise NotImplementedError()
